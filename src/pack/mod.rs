//! agy-pack: the row stream back into `conversations/<id>.db` and
//! `brain/<id>/` under a data root.
//!
//! Each conversation is claimed first (see `claim.rs`: one writer at a time,
//! and whatever a killed run left is cleared or finished by the next), then
//! built in temporary files beside its destination and renamed into place
//! only when every one of its records was good, so a failure at any line
//! leaves the root as it was. Rows are inserted as they arrive, so memory
//! stays bounded by one record. [`Batch`] drives a whole stream: a
//! conversation that cannot be written is reported and the others still are.
//!
//! A conversation's `index` record goes to the root's
//! `conversation_summaries.db` as the last step of putting it in place
//! (`index.rs`); `--reindex` rebuilds that index from the databases
//! (`reindex.rs`).

mod batch;
mod claim;
mod index;
mod pending;
mod reindex;
mod same;

pub use batch::{Batch, Summary};
pub use reindex::{reindex, Reindexed};

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::store::index as store_index;
use crate::store::root;
use crate::store::side::{self, holders, Sides};
use crate::store::sqlite::{self, AGY_USER_VERSION};
use crate::stream::record::{Counts, FileDir, Record};
use claim::{Attempt, Claim, Leftover, Names, Purpose};
use pending::{check_cascade_id, check_created, discard, open_new_database, Pending, Stage, LOGS};

/// How to pack.
#[derive(Clone, Debug)]
pub struct PackOptions {
    /// The data root to write under.
    pub root: PathBuf,
    /// Replace conversations that already exist.
    pub force: bool,
    /// Validate everything, write nothing under the root.
    pub dry_run: bool,
    /// With `force`, also replace a conversation with another one (see
    /// `same.rs`).
    pub replace_other: bool,
}

/// What became of a conversation that was not refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placed {
    /// Its database is written at this path (with `--dry-run`: checked).
    Written(PathBuf),
    /// The conversation in place is exactly the stream's: nothing of it
    /// was touched.
    Unchanged(PathBuf),
}

/// Packs a stream of records, one conversation at a time.
pub struct Packer {
    options: PackOptions,
    /// Where temporaries are built: the root itself, or for `--dry-run` a
    /// private directory that is removed at the end.
    work: PathBuf,
    pending: Option<Pending>,
    /// Conversations that ended, written or not: their records may not
    /// come again.
    ended: HashSet<String>,
    /// An `end` record came in this stream: it is from a writer that closes
    /// every conversation with one, so a conversation without one was cut
    /// short.
    saw_end: bool,
    /// The root's side files as they were when the run began, read at the
    /// first conversation that is compared with the one in place.
    sides: Option<Arc<Sides>>,
    /// The side entries of the conversations written, put in place at the
    /// end of the run ([`Packer::write_side_files`]).
    side_changes: side::write::Changes,
    /// The root had an index when the run began: a conversation without an
    /// index record gets no row it did not have (agy writes rows lazily).
    /// Else each gets its derived row, in an index made as agy makes it.
    root_had_index: bool,
    warn: Box<dyn FnMut(String)>,
}

static SCRATCH_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A test hook: with `AGY_PACK_KILL_AT=STEP` in the environment, agy-pack
/// kills itself with SIGKILL right after the named step of putting a
/// conversation in place (`written`, `synced`, `ready`, `sidecars`, `meta`,
/// `brain-aside`, `brain`, `db`, `old`, the last before the index row), so a test can stop a run exactly where
/// a crash could, which an outside kill hits only by luck.
fn kill_point(step: &str) {
    static AT: OnceLock<Option<String>> = OnceLock::new();
    if AT
        .get_or_init(|| std::env::var("AGY_PACK_KILL_AT").ok())
        .as_deref()
        == Some(step)
    {
        extern "C" {
            fn raise(sig: i32) -> i32;
        }
        const SIGKILL: i32 = 9;
        // SAFETY: raise takes a signal number and touches no memory; SIGKILL
        // cannot be caught, so it does not return.
        unsafe {
            raise(SIGKILL);
        }
    }
}

impl Packer {
    /// Gets the root ready and clears what killed runs left in it (each
    /// conversation dealt with is reported through `warn`).
    pub fn new(options: PackOptions, mut warn: Box<dyn FnMut(String)>) -> Result<Packer> {
        let work = if options.dry_run {
            let dir = std::env::temp_dir().join(format!(
                "agy-pack-dry-run-{}-{}",
                std::process::id(),
                SCRATCH_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ));
            for sub in ["conversations", "brain"] {
                let path = dir.join(sub);
                fs::create_dir_all(&path).map_err(|e| Error::io(path.display(), e))?;
            }
            dir
        } else {
            let dirs = ["conversations", "brain"].map(|dir| options.root.join(dir));
            // Check both before creating either: a refusal leaves no trace.
            for path in &dirs {
                if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(Error::data(format!(
                        "{}: is a symbolic link; refusing to write through it",
                        path.display()
                    )));
                }
            }
            // agy writes its side files back from memory: nothing is
            // written while it runs.
            if let Some(holder) = holders::process(&options.root) {
                return Err(Error::data(format!(
                    "{}: agy is running on this root ({holder}); it writes the files that list conversations back from memory, \
                     so nothing is written while it runs: quit agy (and the desktop app) and run again",
                    options.root.display()
                )));
            }
            for path in &dirs {
                fs::create_dir_all(path).map_err(|e| Error::io(path.display(), e))?;
            }
            let leftovers = claim::reclaim(&options.root)
                .into_iter()
                .chain(store_index::clear_leftovers(&options.root));
            for outcome in leftovers {
                match outcome {
                    Ok(line) => warn(line),
                    Err(e) => warn(e.to_string()),
                }
            }
            options.root.clone()
        };
        let root_had_index = store_index::path(&options.root).exists();
        Ok(Packer {
            options,
            work,
            pending: None,
            ended: HashSet::new(),
            saw_end: false,
            sides: None,
            side_changes: side::write::Changes::default(),
            root_had_index,
            warn,
        })
    }

    /// The id of the conversation in progress.
    pub fn pending_id(&self) -> Option<&str> {
        self.pending.as_ref().map(|p| p.id.as_str())
    }

    /// Takes one record of the conversation in progress, or begins a
    /// conversation when none is; [`Packer::finish`] the one in progress
    /// before giving records of another. `line` is the record as it came
    /// (without its newline). On error the caller gives the conversation up
    /// with [`Packer::fail`].
    pub fn add(&mut self, record: Record<'_>, line: &[u8]) -> Result<()> {
        let id = record.conversation();
        match self.pending_id() {
            Some(pending) if pending != id => {
                return Err(Error::data(format!(
                    "a record of conversation {id:?} while {pending:?} is not finished"
                )))
            }
            Some(_) => {}
            None => self.begin(id)?,
        }
        if let Some(lines) = self.pending.as_mut().and_then(|p| p.lines.as_mut()) {
            lines.take(line);
        }
        self.apply(record)
    }

    /// Completes the conversation in progress, if any, saying where its
    /// database is and whether it was written.
    pub fn finish(&mut self) -> Result<Option<Placed>> {
        let Some(mut pending) = self.pending.take() else {
            return Ok(None);
        };
        self.ended.insert(pending.id.clone());
        match self.commit(&mut pending) {
            Ok(placed) => {
                if pending.end.is_none() {
                    (self.warn)(format!(
                        "conversation {:?}: no end record, so nothing says the stream held all of it; written as it came",
                        pending.id
                    ));
                }
                Ok(Some(placed))
            }
            Err(e) if pending.placed => Err(Error::data(format!(
                "{e} (conversation {:?} is written, its index row is not: it waits in conversations/.{}.index.agy-pack.tmp for the next agy-pack run into this root)",
                pending.id, pending.id
            ))),
            Err(e) if pending.installing => Err(Error::data(format!(
                "{e} (conversation {:?} is half replaced: the next agy-pack run into this root finishes it)",
                pending.id
            ))),
            Err(e) => {
                discard(&mut pending);
                Err(Error::data(format!(
                    "{e} (conversation {:?} not written)",
                    pending.id
                )))
            }
        }
    }

    /// Gives up conversation `id`: throws it away if it is in progress, and
    /// refuses its records from now on.
    pub fn fail(&mut self, id: &str) {
        if self.pending_id() == Some(id) {
            self.abandon();
        }
        self.ended.insert(id.to_string());
    }

    /// Throws away the conversation in progress, returning its id.
    pub fn abandon(&mut self) -> Option<String> {
        let mut pending = self.pending.take()?;
        discard(&mut pending);
        self.ended.insert(pending.id.clone());
        Some(pending.id)
    }

    fn begin(&mut self, id: &str) -> Result<()> {
        root::check_id(id)?;
        if self.ended.contains(id) {
            return Err(Error::data(format!(
                "records of conversation {id:?} are split apart: it already ended earlier in the stream"
            )));
        }
        if let Some(holder) = holders::presence(&self.options.root, id) {
            return Err(Error::data(format!(
                "conversation {id:?} is open in agy ({holder}): not written while it runs"
            )));
        }
        let names = Names::new(&self.options.root, &self.work, id);
        let claim = match Claim::take(&names.lock, Purpose::Write)? {
            Attempt::Claimed(claim) => claim,
            Attempt::Writing(pid) => {
                return Err(Error::data(format!(
                    "conversation {id:?} is being written by another agy-pack (process {pid}) right now"
                )))
            }
            Attempt::Busy => {
                return Err(Error::data(format!(
                    "conversation {id:?} stayed locked by another agy-pack for {} seconds",
                    claim::BUSY_SECONDS
                )))
            }
        };
        match claim::recover(&names, &claim)? {
            Leftover::Nothing => {}
            leftover => (self.warn)(claim::left_by_a_killed_run(id, leftover)),
        }
        self.check_free(id, &names)?;
        let names_db = names.db.clone();
        let mut pending = Pending {
            id: id.to_string(),
            names,
            claim,
            stage: Stage::Start,
            user_version: AGY_USER_VERSION,
            conn: None,
            has_meta: false,
            index: None,
            saw_index: false,
            tables: HashMap::new(),
            rowid_tables: HashMap::new(),
            files: HashSet::new(),
            saw_schema: false,
            counts: Counts::default(),
            closed: false,
            end: None,
            lines: (self.options.force
                && !self.options.dry_run
                && fs::symlink_metadata(&names_db).is_ok())
            .then(same::Lines::default),
            installing: false,
            placed: false,
            sides: Vec::new(),
        };
        let opened = open_new_database(&pending.names.db_tmp).and_then(|conn| {
            let logs = pending.names.brain_tmp.join(LOGS);
            fs::create_dir_all(&logs).map_err(|e| Error::io(logs.display(), e))?;
            Ok(conn)
        });
        match opened {
            Ok(conn) => pending.conn = Some(conn),
            Err(e) => {
                discard(&mut pending);
                return Err(e);
            }
        }
        self.pending = Some(pending);
        Ok(())
    }

    /// Refuses to replace an existing conversation without `--force`.
    fn check_free(&self, id: &str, names: &Names) -> Result<()> {
        if self.options.force {
            return Ok(());
        }
        for path in [&names.db, &names.brain, &names.meta] {
            if fs::symlink_metadata(path).is_ok() {
                return Err(Error::data(format!(
                    "conversation {id:?} already exists at {} (use --force to replace it)",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    fn apply(&mut self, record: Record<'_>) -> Result<()> {
        let pending = self.pending.as_mut().expect("begin() made one");
        if pending.end.is_some() {
            return Err(Error::data("a record after the conversation's end record"));
        }
        let (kind, table) = match &record {
            Record::Db { .. } => ("db", None),
            Record::Schema { .. } => ("schema", None),
            Record::Row { table, .. } => ("row", Some(&**table)),
            Record::Index { .. } => ("index", None),
            Record::File { .. } => ("file", None),
            Record::Side { .. } => ("side", None),
            Record::End { .. } => ("end", None),
        };
        pending.counts.note(kind.as_bytes(), table);
        match record {
            Record::End { end, .. } => {
                self.saw_end = true;
                end.check(&pending.counts)?;
                pending.end = Some(end);
            }
            Record::Db {
                user_version,
                closed,
                ..
            } => {
                if pending.stage != Stage::Start {
                    return Err(Error::data(
                        "db record must be the first record of its conversation",
                    ));
                }
                pending.closed = closed;
                pending.user_version = user_version;
                pending.stage = Stage::Db;
            }
            Record::Schema {
                object_type,
                name,
                sql,
                ..
            } => {
                if pending.stage > Stage::Schema {
                    return Err(Error::data(
                        "schema record after rows or files: schema must come first",
                    ));
                }
                pending.stage = Stage::Schema;
                pending.saw_schema = true;
                pending
                    .create(&object_type, &sql)
                    .map_err(|e| e.context(format!("schema {name}")))?;
                check_created(pending.conn(), &object_type, &name)?;
            }
            Record::Row { table, row, .. } => {
                pending.ensure_schema()?;
                pending.stage = Stage::Rows;
                pending
                    .insert(&table, &row)
                    .map_err(|e| e.context(format!("row of table {table}")))?;
            }
            Record::Index {
                user_version, row, ..
            } => {
                if pending.saw_index {
                    return Err(Error::data("a second index record for this conversation"));
                }
                pending.saw_index = true;
                pending.index = Some(index::check(&pending.id, user_version, &row)?);
            }
            Record::Side { side, .. } => {
                pending.ensure_schema()?;
                pending.stage = Stage::Rows;
                pending.sides.push(side.into_owned());
            }
            Record::File {
                dir,
                path,
                append,
                content,
                ..
            } => {
                pending.ensure_schema()?;
                pending.stage = Stage::Rows;
                match dir {
                    FileDir::Brain => pending
                        .write_file(&path, append, &content)
                        .map_err(|e| e.context(format!("file {path}")))?,
                    FileDir::Conversations => pending
                        .write_meta(&path, append, &content)
                        .map_err(|e| e.context(format!("file conversations/{path}")))?,
                }
            }
        }
        Ok(())
    }

    /// Completes the temporaries, then (unless this is a dry run) puts them
    /// in place: see [`claim`] for the order and why.
    fn commit(&mut self, pending: &mut Pending) -> Result<Placed> {
        self.check_whole(pending)?;
        pending.ensure_schema()?;
        let dry_run = self.options.dry_run;
        if !dry_run {
            kill_point("written");
        }
        // What is written must read back: a schema record may have replaced
        // agy's tables with ones agy-dump cannot read.
        sqlite::check_agy_shape(&sqlite::read_columns(pending.conn())?)
            .map_err(|why| Error::data(format!("not an agy conversation: {why}")))?;
        check_cascade_id(pending.conn(), &pending.id)?;
        let replaces = fs::symlink_metadata(&pending.names.db).is_ok();
        if replaces && !self.options.replace_other {
            same::check_lineage(pending.conn(), &pending.names.db, &pending.id)?;
        }
        if let Some(lines) = &pending.lines {
            // The brain is dumped unless the stream left it out (--no-brain).
            let brain =
                pending.end.as_ref().is_none_or(|end| end.brain_read) || !pending.files.is_empty();
            let sides = self
                .sides
                .get_or_insert_with(|| Arc::new(Sides::read(&self.options.root, &mut |_| {})))
                .clone();
            if lines.same_as_in_place(&pending.names.db, &pending.names.brain, brain, sides) {
                discard(pending);
                return Ok(Placed::Unchanged(pending.names.db.clone()));
            }
        }
        let conn = pending.conn.take().expect("open until commit");
        conn.pragma_update(None, "user_version", pending.user_version)?;
        conn.execute_batch("COMMIT")?;
        // agy's databases are in WAL mode; the flag lives in the header.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.close().map_err(|(_, e)| Error::from(e))?;
        let names = pending.names.clone();
        if dry_run {
            discard(pending);
            return Ok(Placed::Written(names.db));
        }
        if pending.end.as_ref().is_some_and(|end| !end.brain_read) {
            pending.keep_unread_brain()?;
        }
        pending.sync()?;
        index::stash(
            &pending.names.index_stash(),
            pending.index.as_ref(),
            self.root_had_index,
        )?;
        if !pending.has_meta {
            fs::File::create(&names.meta_gone)
                .map_err(|e| Error::io(names.meta_gone.display(), e))?;
        }
        self.check_free(&pending.id, &names)?;
        kill_point("synced");
        fs::rename(&names.db_tmp, &names.db_ready)
            .map_err(|e| Error::io(names.db_ready.display(), e))?;
        pending.installing = true;
        claim::sync(names.db_ready.parent().expect("a file in conversations/"))?;
        kill_point("ready");
        claim::install(&names, &pending.claim, &mut kill_point)?;
        pending.placed = true;
        if let Some(note) = index::finish(&names.index_stash())? {
            (self.warn)(format!("conversation {:?}: {note}", pending.id));
        }
        self.side_changes.add(side::write::Written {
            id: pending.id.clone(),
            sides: std::mem::take(&mut pending.sides),
        });
        Ok(Placed::Written(names.db))
    }
}

impl Packer {
    /// Refuses a conversation the stream does not show whole: one without
    /// the `end` record its `db` record promised, or that the stream's other
    /// conversations have (cut short), and one without it that would
    /// replace a conversation in place. A stream from before end records
    /// still makes new conversations, with a warning.
    fn check_whole(&mut self, pending: &Pending) -> Result<()> {
        if pending.end.is_some() {
            return Ok(());
        }
        if pending.closed {
            return Err(Error::data(
                "its end record never came, though its db record says one closes it: the stream was cut short",
            ));
        }
        if self.saw_end {
            return Err(Error::data(
                "it has no end record, as the conversations before it in the stream have: the stream was cut short",
            ));
        }
        let names = &pending.names;
        let exists = [&names.db, &names.brain, &names.meta]
            .into_iter()
            .any(|path| fs::symlink_metadata(path).is_ok());
        if exists {
            return Err(Error::data(format!(
                "it has no end record, so nothing says the stream holds all of it (a stream cut short, or from agy-tools before end records): \
                 the conversation at {} is not replaced",
                names.db.display()
            )));
        }
        Ok(())
    }
}

impl Packer {
    /// Puts the side entries of the conversations written so far into the
    /// root's side files (see `side::write`), making a summary for one that
    /// brought none from its database; returns the files changed.
    pub fn write_side_files(&mut self) -> Result<Vec<String>> {
        let changes = std::mem::take(&mut self.side_changes);
        if changes.is_empty() || self.options.dry_run {
            return Ok(Vec::new());
        }
        let root = self.options.root.clone();
        changes.apply(&root, &mut |id| {
            let source = index::open(&root.join("conversations").join(format!("{id}.db")))?;
            let summary = crate::decode::summary::of_database(&source)?;
            Ok(side::derive::Facts::of_database(&source).entry(id, &summary))
        })
    }
}

impl Drop for Packer {
    fn drop(&mut self) {
        self.abandon();
        if let Err(e) = self.write_side_files() {
            (self.warn)(format!("the side files were not brought up to date: {e}"));
        }
        if self.options.dry_run {
            let _ = fs::remove_dir_all(&self.work);
        }
    }
}
