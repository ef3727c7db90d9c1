//! Who may write a conversation, and what a killed agy-pack left of one.
//!
//! agy-pack claims each conversation before it writes a byte of it: an
//! exclusive `flock(2)` on `conversations/.<id>.agy-pack.lock`, held until
//! the conversation is in place or its temporaries are gone. The kernel
//! drops the lock when its process dies, however it dies (SIGKILL, the OOM
//! killer), so a claim that can be taken proves that no live agy-pack is
//! writing that conversation. A pid written into a file name could not prove
//! that: pids are reused, and another pid namespace or host sharing the
//! store has pids of its own. (The lock file does hold `writing PID` or
//! `clearing PID`, but only to tell a run that finds the lock taken whether
//! to fail or wait a moment.)
//!
//! Because only the claim's holder may use them, the temporaries of a
//! conversation have fixed names, one set per id:
//!
//! | name | what it is |
//! | --- | --- |
//! | `conversations/.<id>.db.agy-pack.tmp` | the database being built (and any SQLite sidecar of it) |
//! | `conversations/.<id>.meta.agy-pack.tmp` | the ACP `<id>.meta` sidecar being built |
//! | `brain/.<id>.agy-pack.tmp` | the brain directory being built |
//! | `conversations/.<id>.index.agy-pack.tmp` | the conversation's index row (its `index` record, or `refresh`), for the index once the database is in place |
//! | `conversations/.<id>.meta.agy-pack.gone` | says the new conversation has no `<id>.meta`, so an old one goes |
//! | `conversations/.<id>.db.agy-pack.ready` | the database, complete and synced: the point of no return |
//! | `brain/.<id>.agy-pack.old` | the replaced brain directory, removed last |
//!
//! Whoever takes a claim first deals with what a dead holder left under it.
//! Before the `.ready` rename nothing of the destination was touched, so the
//! temporaries are simply removed (the old conversation stays). From it on,
//! every new file is complete and synced, so the replacement is finished:
//! [`install`] is the same code the live run uses, and each of its steps can
//! be repeated after a kill at any point. Its last step writes the index row
//! (in the index's own transaction); an `.index` temporary whose database
//! is gone from its temporary names is such a step still to do.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::store::lock::try_flock;
use crate::store::root;
use crate::store::sqlite::sidecar;

/// The file names of one conversation: its destination under the root and
/// the temporaries its claim covers.
#[derive(Clone, Debug)]
pub(super) struct Names {
    /// The data root, whose index the conversation's row goes to.
    pub root: PathBuf,
    pub id: String,
    pub db: PathBuf,
    pub meta: PathBuf,
    pub brain: PathBuf,
    pub lock: PathBuf,
    pub db_tmp: PathBuf,
    pub db_ready: PathBuf,
    pub meta_tmp: PathBuf,
    pub meta_gone: PathBuf,
    pub index_tmp: PathBuf,
    pub brain_tmp: PathBuf,
    pub brain_old: PathBuf,
}

/// Every ending a name under a claim can have after `.agy-pack.`, with the
/// directory it is in and what comes between the id and `.agy-pack.`.
const TEMP_NAMES: &[(Dir, &str, &str)] = &[
    (Dir::Conversations, "", "lock"),
    (Dir::Conversations, ".db", "tmp"),
    (Dir::Conversations, ".db", "tmp-journal"),
    (Dir::Conversations, ".db", "tmp-wal"),
    (Dir::Conversations, ".db", "tmp-shm"),
    (Dir::Conversations, ".db", "ready"),
    (Dir::Conversations, ".meta", "tmp"),
    (Dir::Conversations, ".meta", "gone"),
    (Dir::Conversations, ".index", "tmp"),
    (Dir::Brain, "", "tmp"),
    (Dir::Brain, "", "old"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dir {
    Conversations,
    Brain,
}

impl Dir {
    pub fn name(self) -> &'static str {
        match self {
            Dir::Conversations => "conversations",
            Dir::Brain => "brain",
        }
    }
}

impl Names {
    /// The names of conversation `id`: its destination under `root`, its
    /// temporaries under `work` (the same root, or a private directory for
    /// `--dry-run`).
    pub fn new(root: &Path, work: &Path, id: &str) -> Names {
        let temp = |dir: Dir, infix: &str, ending: &str| {
            work.join(dir.name())
                .join(format!(".{id}{infix}.agy-pack.{ending}"))
        };
        Names {
            root: root.to_path_buf(),
            id: id.to_string(),
            db: root.join("conversations").join(format!("{id}.db")),
            meta: root.join("conversations").join(format!("{id}.meta")),
            brain: root.join("brain").join(id),
            lock: temp(Dir::Conversations, "", "lock"),
            db_tmp: temp(Dir::Conversations, ".db", "tmp"),
            db_ready: temp(Dir::Conversations, ".db", "ready"),
            meta_tmp: temp(Dir::Conversations, ".meta", "tmp"),
            meta_gone: temp(Dir::Conversations, ".meta", "gone"),
            index_tmp: temp(Dir::Conversations, ".index", "tmp"),
            brain_tmp: temp(Dir::Brain, "", "tmp"),
            brain_old: temp(Dir::Brain, "", "old"),
        }
    }

    /// Where the conversation's index row waits for the conversation to be
    /// in place.
    pub fn index_stash(&self) -> super::index::Stash<'_> {
        super::index::Stash {
            path: &self.index_tmp,
            root: &self.root,
            id: &self.id,
            db: &self.db,
        }
    }

    /// Removes the temporaries of a conversation that has not reached its
    /// `.ready` rename: `true` when there were any. Every one is tried; the
    /// first failure is returned.
    pub fn remove_temporaries(&self) -> Result<bool> {
        let mut outcomes = Vec::new();
        // The index row first: without the database beside it, it would
        // be read as a finished conversation's row still to write.
        for file in [
            &self.index_tmp,
            &self.db_tmp,
            &self.meta_tmp,
            &self.meta_gone,
        ] {
            outcomes.push(remove_file(file));
        }
        for suffix in ["-journal", "-wal", "-shm"] {
            outcomes.push(remove_file(&sidecar(&self.db_tmp, suffix)));
        }
        for dir in [&self.brain_tmp, &self.brain_old] {
            outcomes.push(remove_dir(dir));
        }
        let mut found = false;
        for outcome in outcomes {
            found |= outcome?;
        }
        Ok(found)
    }
}

/// The conversation id whose claim covers the entry `name` of `dir`, if it
/// is one of the names in [`TEMP_NAMES`].
pub(super) fn temp_owner(dir: Dir, name: &str) -> Option<&str> {
    let rest = name.strip_prefix('.')?;
    let (head, ending) = rest.rsplit_once(".agy-pack.")?;
    TEMP_NAMES
        .iter()
        .filter(|(d, _, e)| *d == dir && *e == ending)
        .find_map(|(_, infix, _)| head.strip_suffix(infix))
        .filter(|id| root::check_id(id).is_ok())
}

/// An exclusive claim on one conversation; dropping it gives it up.
#[derive(Debug)]
pub(super) struct Claim {
    /// The open lock file, kept only for the lock it holds.
    _locked: File,
    path: PathBuf,
}

/// What a claim is taken for; written into the lock file, so that a run
/// that finds the claim taken knows whether it will soon be free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Purpose {
    /// Writing the conversation: held as long as that takes.
    Write,
    /// Clearing what a dead run left: held for a moment.
    Clear,
}

/// The outcome of trying to claim a conversation.
pub(super) enum Attempt {
    Claimed(Claim),
    /// Another agy-pack, this pid, is writing the conversation.
    Writing(u32),
    /// Another agy-pack holds the claim to clear leftovers, or took it so
    /// recently that it has not said why yet.
    Busy,
}

/// How long a writer keeps trying a claim that is [`Attempt::Busy`], and
/// how long apart: clearing takes a moment, so this is plenty. One writer
/// never waits for another.
pub(super) const BUSY_SECONDS: u32 = 5;
const BUSY_PAUSE_MS: u32 = 5;

impl Claim {
    /// Claims the conversation whose lock file is `path`. For
    /// [`Purpose::Write`] a claim that is only busy is waited for.
    pub fn take(path: &Path, purpose: Purpose) -> Result<Attempt> {
        let tries = match purpose {
            Purpose::Write => BUSY_SECONDS * 1000 / BUSY_PAUSE_MS,
            Purpose::Clear => 1,
        };
        for _ in 1..tries {
            match Claim::try_take(path, purpose)? {
                Attempt::Busy => {
                    std::thread::sleep(std::time::Duration::from_millis(BUSY_PAUSE_MS.into()))
                }
                attempt => return Ok(attempt),
            }
        }
        Claim::try_take(path, purpose)
    }

    /// Tries to claim the conversation whose lock file is `path`, without
    /// waiting.
    fn try_take(path: &Path, purpose: Purpose) -> Result<Attempt> {
        use std::os::unix::fs::MetadataExt;
        // A holder removes its lock file while it still holds the lock, so
        // between our open and our lock the name may have gone, or come to
        // be another file. A lock counts only on the file the name still
        // refers to; otherwise open again.
        for _ in 0..16 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| Error::io(path.display(), e))?;
            let locked = try_flock(&file)
                .map_err(|e| Error::io(format!("{}: taking the lock", path.display()), e))?;
            if !locked {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Ok(match text.trim().strip_prefix("writing ") {
                    Some(pid) => pid.parse().map_or(Attempt::Busy, Attempt::Writing),
                    None => Attempt::Busy,
                });
            }
            let ours = file.metadata().map_err(|e| Error::io(path.display(), e))?;
            let named = match fs::symlink_metadata(path) {
                Ok(named) => named,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(path.display(), e)),
            };
            if named.file_type().is_symlink() {
                return Err(Error::data(format!(
                    "{}: is a symbolic link; refusing to use it as a lock",
                    path.display()
                )));
            }
            if (named.dev(), named.ino()) != (ours.dev(), ours.ino()) {
                continue;
            }
            // For a run that finds the claim taken.
            let why = match purpose {
                Purpose::Write => "writing",
                Purpose::Clear => "clearing",
            };
            file.set_len(0)
                .and_then(|()| writeln!(file, "{why} {}", std::process::id()))
                .map_err(|e| Error::io(path.display(), e))?;
            return Ok(Attempt::Claimed(Claim {
                _locked: file,
                path: path.to_path_buf(),
            }));
        }
        Err(Error::data(format!(
            "{}: the lock file keeps being replaced",
            path.display()
        )))
    }
}

impl Drop for Claim {
    /// Removes the lock file while still holding the lock (the name check in
    /// [`Claim::try_take`] makes that safe), then the lock goes with the file.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// What a dead holder had left of a conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Leftover {
    Nothing,
    /// Temporaries of a run killed before its point of no return: removed.
    Removed,
    /// A replacement killed after it: finished.
    Finished,
}

/// Deals with what a dead holder left under `names`, which `claim` proves
/// is ours to touch.
pub(super) fn recover(names: &Names, claim: &Claim) -> Result<Leftover> {
    // (A row agy-pack could not derive is left out here as in the run that
    // was killed, which would have said so.)
    if exists(&names.db_ready)? {
        install(names, claim, &mut |_| {})?;
        super::index::finish(&names.index_stash())?;
        return Ok(Leftover::Finished);
    }
    if exists(&names.index_tmp)? && !exists(&names.db_tmp)? {
        // Killed after the database's rename: only the index row and the
        // old brain directory's removal were left.
        super::index::finish(&names.index_stash())?;
        remove_dir(&names.brain_old)?;
        return Ok(Leftover::Finished);
    }
    Ok(if names.remove_temporaries()? {
        Leftover::Removed
    } else {
        Leftover::Nothing
    })
}

/// Puts a conversation whose `.ready` database exists in place of the old
/// one (its index row is written after, by `index::finish`). Each step looks at what is there, so running this again after a
/// kill at any point finishes the job. `step` is called after each step by
/// name (see [`super::kill_point`]).
///
/// Readers may see a mix between the first and the last rename: the order
/// keeps that window to a few system calls, and removes the old
/// database's WAL before the new database arrives, so that SQLite never
/// replays an old WAL into the new file.
pub(super) fn install(names: &Names, _claim: &Claim, step: &mut dyn FnMut(&str)) -> Result<()> {
    for suffix in ["-wal", "-shm"] {
        remove_file(&sidecar(&names.db, suffix))?;
    }
    step("sidecars");
    if exists(&names.meta_tmp)? {
        rename(&names.meta_tmp, &names.meta)?;
    } else if exists(&names.meta_gone)? {
        remove_file(&names.meta)?;
        remove_file(&names.meta_gone)?;
    }
    step("meta");
    if exists(&names.brain_tmp)? {
        if exists(&names.brain)? {
            remove_dir(&names.brain_old)?;
            rename(&names.brain, &names.brain_old)?;
            step("brain-aside");
        }
        rename(&names.brain_tmp, &names.brain)?;
    }
    step("brain");
    if exists(&names.db_ready)? {
        rename(&names.db_ready, &names.db)?;
    }
    step("db");
    for path in [&names.db, &names.brain] {
        if let Some(dir) = path.parent() {
            sync(dir)?;
        }
    }
    remove_dir(&names.brain_old)?;
    step("old");
    Ok(())
}

/// Copies into `to` every entry of `from` that `to` does not have, files
/// synced, symbolic links as links (never followed): a brain directory in
/// place under the files a stream brought of it.
pub(super) fn copy_missing(from: &Path, to: &Path) -> Result<()> {
    let entries = fs::read_dir(from).map_err(|e| Error::io(from.display(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(from.display(), e))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry
            .file_type()
            .map_err(|e| Error::io(source.display(), e))?;
        if kind.is_dir() {
            if !exists(&target)? {
                fs::create_dir(&target).map_err(|e| Error::io(target.display(), e))?;
            }
            copy_missing(&source, &target)?;
            sync(&target)?;
        } else if exists(&target)? {
            continue;
        } else if kind.is_symlink() {
            let link = fs::read_link(&source).map_err(|e| Error::io(source.display(), e))?;
            std::os::unix::fs::symlink(&link, &target)
                .map_err(|e| Error::io(target.display(), e))?;
        } else if kind.is_file() {
            fs::copy(&source, &target).map_err(|e| Error::io(source.display(), e))?;
            sync(&target)?;
        }
    }
    Ok(())
}

/// Whether anything, a symbolic link included, is at `path`.
fn exists(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

/// Removes a file; `false` when there was none.
fn remove_file(path: &Path) -> Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

/// Removes a directory tree (never following a symbolic link in it);
/// `false` when there was none.
fn remove_dir(path: &Path) -> Result<bool> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).map_err(|e| {
        Error::io(
            format!("renaming {} to {}", from.display(), to.display()),
            e,
        )
    })
}

/// Makes a file's data, or a directory's entries (renames and creations
/// in it), durable.
pub(super) fn sync(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(path.display(), e))
}

/// Removes or finishes whatever dead runs left under `root`. A conversation
/// another live agy-pack holds is left alone. Returns one line for each
/// conversation dealt with, and the errors met on the way.
pub(super) fn reclaim(root: &Path) -> Vec<Result<String>> {
    let mut ids = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for dir in [Dir::Conversations, Dir::Brain] {
        let path = root.join(dir.name());
        let entries = match fs::read_dir(&path) {
            Ok(entries) => entries,
            Err(e) => {
                out.push(Err(Error::io(path.display(), e)));
                continue;
            }
        };
        for entry in entries {
            match entry {
                Ok(entry) => {
                    if let Some(id) = entry.file_name().to_str().and_then(|n| temp_owner(dir, n)) {
                        ids.insert(id.to_string());
                    }
                }
                Err(e) => out.push(Err(Error::io(path.display(), e))),
            }
        }
    }
    for id in ids {
        let names = Names::new(root, root, &id);
        let outcome = Claim::take(&names.lock, Purpose::Clear).and_then(|attempt| match attempt {
            Attempt::Claimed(claim) => recover(&names, &claim),
            Attempt::Writing(_) | Attempt::Busy => Ok(Leftover::Nothing),
        });
        match outcome {
            Ok(Leftover::Nothing) => {}
            Ok(leftover) => out.push(Ok(left_by_a_killed_run(&id, leftover))),
            Err(e) => out.push(Err(e.context(format!(
                "clearing what a killed agy-pack left of conversation {id:?}"
            )))),
        }
    }
    out
}

/// The line that says what was done about a dead run's leftovers.
pub(super) fn left_by_a_killed_run(id: &str, leftover: Leftover) -> String {
    match leftover {
        Leftover::Nothing => String::new(),
        Leftover::Removed => format!(
            "removed the temporary files of conversation {id:?} that a killed agy-pack left"
        ),
        Leftover::Finished => format!(
            "finished replacing conversation {id:?}, which a killed agy-pack left half done"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_temporary_name_leads_back_to_its_conversation() {
        for id in ["c1", "a.db", "x.meta", "b.agy-pack.lock", "5f0c1f4e-8c3e"] {
            let names = Names::new(Path::new("/r"), Path::new("/r"), id);
            let mut seen = 0;
            for path in [
                &names.lock,
                &names.db_tmp,
                &names.db_ready,
                &names.meta_tmp,
                &names.meta_gone,
                &names.index_tmp,
                &names.brain_tmp,
                &names.brain_old,
            ] {
                let dir = match path.parent().unwrap().file_name().unwrap().to_str() {
                    Some("brain") => Dir::Brain,
                    _ => Dir::Conversations,
                };
                let name = path.file_name().unwrap().to_str().unwrap();
                assert_eq!(temp_owner(dir, name), Some(id), "{name}");
                seen += 1;
            }
            for suffix in ["-journal", "-wal", "-shm"] {
                let name = format!(".{id}.db.agy-pack.tmp{suffix}");
                assert_eq!(temp_owner(Dir::Conversations, &name), Some(id));
            }
            assert_eq!(seen + 3, TEMP_NAMES.len());
        }
        for name in [
            "c1.db",
            "c1.meta",
            ".c1.db.agy-pack-123.tmp",
            "..agy-pack.lock",
            ".c1.agy-pack.tmp",
            ".c1.db.agy-pack.old",
        ] {
            assert_eq!(temp_owner(Dir::Conversations, name), None, "{name}");
        }
        assert_eq!(temp_owner(Dir::Brain, "c1"), None);
        assert_eq!(temp_owner(Dir::Brain, ".c1.agy-pack.lock"), None);
    }
}
