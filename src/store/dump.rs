//! agy-dump: conversation databases and their brain directories to the row
//! stream, with each conversation's row of the root's index.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::{Error, Result};
use crate::store::index::{self, IndexRow};
use crate::store::side::Sides;
use crate::store::sqlite::{self, OpenError, Tables};
use crate::stream::io::Output;
use crate::stream::record::{self, Cell, RowShape};

/// What to dump and how.
#[derive(Clone, Debug, Default)]
pub struct DumpOptions {
    /// Only these conversation ids (all when empty).
    pub ids: Vec<String>,
    /// Emit `file` records for brain directories.
    pub brain: bool,
    /// Only conversations whose database, `-wal`, `.meta` sidecar or brain
    /// files (or brain directories: a file was removed) changed after this.
    pub changed_since: Option<SystemTime>,
    /// The side files of the targets' root, already read (agy-pack, which
    /// dumps the conversations in place one by one, reads them once).
    pub sides: Option<std::sync::Arc<Sides>>,
}

/// A reader of the dump in this same process (agy-decode given a database
/// or a data root), which takes the bulk of a conversation without its
/// row-stream form: each `steps` row as its cells, not as a line of hex,
/// and of the brain files only those it reads. Every other record is
/// written to the output as for any reader, and all of it is written out
/// (`Output::flush`) before each call, so the records and the calls come
/// in the stream's order. Nothing else changes: what fails, and how the
/// conversation's end record then says so, is the dump's as ever.
pub trait Taker {
    /// Conversation `id` is about to be dumped (its first record is next);
    /// an error leaves it not dumped.
    fn begin(&mut self, id: &str) -> Result<()>;
    /// Takes a `steps` row of conversation `id` in place of its line; false
    /// leaves it to be written as a line.
    fn steps_row(
        &mut self,
        id: &str,
        columns: &[record::Column],
        cells: &[Cell<'_>],
    ) -> Result<bool>;
    /// Whether the brain file `rel` of conversation `id` is to be read and
    /// written; a file that is not is not read at all.
    fn reads_file(&mut self, id: &str, rel: &str) -> Result<bool>;
    /// Whether a conversation's index row, its side-file records and its
    /// `.meta` file are read and written (records about a conversation,
    /// not of it).
    fn reads_side_records(&self) -> bool;
}

/// What a dump did: conversations written, and those that failed (each
/// already named through the warning callback).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub dumped: u64,
    pub unchanged: u64,
    pub failed: u64,
    /// Of `failed`, those whose records so far were written, closed by an
    /// end record that says so (the others were not written at all).
    pub cut_short: u64,
    /// Conversations dumped whole that hold damaged blobs (each named).
    pub damaged: u64,
    /// Data roots whose index could not be read (each named): their
    /// conversations are dumped without their index rows.
    pub index_failed: u64,
}

/// What a dumped conversation's `steps` rows say of their blobs: how many
/// rows hold a blob that is cut short or unreadable past some byte, and
/// where the first is. Reading them is not an error; a cron job learns of
/// them from the warning.
#[derive(Debug, Default)]
pub struct Damaged {
    pub rows: u64,
    pub first: Option<String>,
}

/// `--changed-since STAMP`: the modification time of the file `STAMP`, or
/// `STAMP` as an RFC 3339 time. A path that does not exist and is not a
/// time is a usage error, so a mistyped stamp never means "everything".
pub fn parse_stamp(stamp: &std::ffi::OsStr) -> Result<SystemTime> {
    match std::fs::metadata(stamp) {
        Ok(meta) => {
            return meta
                .modified()
                .map_err(|e| Error::io(Path::new(stamp).display(), e))
        }
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io(Path::new(stamp).display(), e))
        }
        Err(_) => {}
    }
    let text = stamp.to_string_lossy();
    let time = crate::time::Timestamp::parse(&text).map_err(|_| {
        Error::usage(format!(
            "--changed-since {text:?}: no such file, and not an RFC 3339 time"
        ))
    })?;
    let offset = std::time::Duration::new(time.seconds.unsigned_abs(), time.nanos as u32);
    Ok(if time.seconds >= 0 {
        SystemTime::UNIX_EPOCH + offset
    } else {
        SystemTime::UNIX_EPOCH - std::time::Duration::from_secs(time.seconds.unsigned_abs())
            + std::time::Duration::from_nanos(time.nanos as u64)
    })
}

/// Whether anything of the conversation at `db` changed after `since`: the
/// database, its `-wal` and `.meta` sidecars, or anything under its brain
/// directory (files and the directories themselves, whose times change when
/// a file is added or removed). Symbolic links are looked at, not followed.
pub fn changed_after(target: &Target, since: SystemTime) -> Result<bool> {
    let newer = |path: &Path| -> Result<bool> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => Ok(meta.modified().map_err(|e| Error::io(path.display(), e))? > since),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::io(path.display(), e)),
        }
    };
    let wal = sqlite::sidecar(&target.db, "-wal");
    if newer(&target.db)? || newer(&wal)? || newer(&target.db.with_extension("meta"))? {
        return Ok(true);
    }
    match &target.brain {
        Some(brain) => tree_newer(brain, since),
        None => Ok(false),
    }
}

fn tree_newer(dir: &Path, since: SystemTime) -> Result<bool> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io(dir.display(), e)),
    };
    if meta.modified().map_err(|e| Error::io(dir.display(), e))? > since {
        return Ok(true);
    }
    if !meta.is_dir() {
        return Ok(false);
    }
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))? {
        let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
        if tree_newer(&entry.path(), since)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// One database to dump, and where its brain directory would be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The database as named, or where a symbolic link named points (its
    /// `-wal` and `.meta` sidecars are beside the real file).
    pub db: PathBuf,
    /// `ROOT/brain/<stem>` for a database at `ROOT/conversations/<stem>.db`
    /// however its path was written; `None` outside a data root.
    pub brain: Option<PathBuf>,
    /// Named on the command line, so not being an agy database is an error
    /// rather than a skip.
    pub explicit: bool,
}

impl Target {
    /// The data root the database is in, whose index may list it.
    pub fn root(&self) -> Option<&Path> {
        self.brain
            .as_deref()
            .and_then(Path::parent)
            .and_then(Path::parent)
    }
}

/// Turns command-line paths into targets: a directory is a data root whose
/// `conversations/*.db` are listed by name; a file is a database.
pub fn targets(paths: &[PathBuf]) -> Result<Vec<Target>> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path.display(), e))?;
        if meta.is_dir() {
            out.extend(root_targets(path)?);
        } else {
            out.push(file_target(path)?);
        }
    }
    Ok(out)
}

/// The `*.db` files of `ROOT/conversations/`, sorted bytewise by name.
pub fn root_targets(root: &Path) -> Result<Vec<Target>> {
    let dir = root.join("conversations");
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        Error::io(
            format!(
                "{}: not an agy data root (no conversations/)",
                root.display()
            ),
            e,
        )
    })?;
    let mut names: Vec<OsString> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
        let name = entry.file_name();
        if Path::new(&name).extension().is_some_and(|e| e == "db") {
            names.push(name);
        }
    }
    names.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    let brain = root.join("brain");
    Ok(names
        .into_iter()
        .map(|name| Target {
            brain: Path::new(&name).file_stem().map(|stem| brain.join(stem)),
            db: dir.join(name),
            explicit: false,
        })
        .collect())
}

/// A database named on the command line. Its brain directory is found from
/// its real path, so `x.db` inside `conversations/`, `./x.db`,
/// `../conversations/x.db`, an absolute path and a symbolic link to it all
/// find the same one.
fn file_target(path: &Path) -> Result<Target> {
    let real = std::fs::canonicalize(path).map_err(|e| Error::io(path.display(), e))?;
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    Ok(Target {
        brain: brain_of(&real),
        db: if link { real } else { path.to_path_buf() },
        explicit: true,
    })
}

/// `ROOT/brain/<stem>` for a database at `ROOT/conversations/<stem>.db`.
fn brain_of(db: &Path) -> Option<PathBuf> {
    let parent = db.parent()?;
    if parent.file_name()? != "conversations" {
        return None;
    }
    Some(parent.parent()?.join("brain").join(db.file_stem()?))
}

/// Dumps every target in order. Skipped files are reported through `warn`.
///
/// A conversation that cannot be read does not stop the others: its
/// failure is named through `warn` and counted in the [`Outcome`], and the
/// next one is dumped. Most failures come before its first record (the
/// database is opened, its schema and id read, its brain directory listed
/// first); one found later (a damaged page deep in the database, a brain
/// file that vanished) leaves the records written so far in the stream,
/// and the warning says the conversation was cut short. Only a failure to
/// write the output itself, or an `--id` that matched nothing, is an error.
pub fn dump(
    targets: &[Target],
    options: &DumpOptions,
    out: &mut Output,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    dump_to(targets, options, out, None, warn)
}

/// [`dump`] read in this same process by `taker` as it goes.
pub fn dump_taken(
    targets: &[Target],
    options: &DumpOptions,
    out: &mut Output,
    taker: &mut dyn Taker,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    dump_to(targets, options, out, Some(taker), warn)
}

fn dump_to<'t>(
    targets: &[Target],
    options: &DumpOptions,
    out: &mut Output,
    mut taker: Option<&mut (dyn Taker + 't)>,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    let side_records = taker.as_ref().is_none_or(|t| t.reads_side_records());
    let mut found = vec![false; options.ids.len()];
    let mut outcome = Outcome::default();
    // Each root's index and side files, read at its first conversation.
    let mut roots: Vec<(PathBuf, Option<index::Reader>, std::sync::Arc<Sides>)> = Vec::new();
    for target in targets {
        // The conversation's id once its first record is out.
        let mut started: Option<String> = None;
        let mut damaged = false;
        let (reader, sides) = match target.root() {
            Some(root) if side_records => {
                if !roots.iter().any(|(r, ..)| r == root) {
                    let reader = index::Reader::open(root).unwrap_or_else(|e| {
                        warn(format!("{e} (index rows not dumped)"));
                        outcome.index_failed += 1;
                        None
                    });
                    let sides = match &options.sides {
                        Some(sides) => sides.clone(),
                        None => std::sync::Arc::new(Sides::read(root, warn)),
                    };
                    roots.push((root.to_path_buf(), reader, sides));
                }
                let (_, reader, sides) =
                    roots.iter().find(|(r, ..)| r == root).expect("just added");
                (reader.as_ref(), Some(&**sides))
            }
            _ => (None, None),
        };
        let result = dump_one(
            target,
            reader,
            sides,
            options,
            taker.as_deref_mut(),
            &mut found,
            out,
            warn,
            &mut started,
            &mut damaged,
        );
        if damaged && result.is_ok() {
            outcome.damaged += 1;
        }
        match result {
            Ok(Some(true)) => outcome.dumped += 1,
            Ok(Some(false)) => outcome.unchanged += 1,
            Ok(None) => {}
            Err(e) if is_output_error(&e) => return Err(e),
            Err(e) => {
                outcome.failed += 1;
                let how = if started.is_some() {
                    "cut short; its records so far are in the output, closed by an end record that says so"
                } else {
                    "not dumped"
                };
                let message = format!("{}: {e}", target.db.display());
                if let Some(id) = &started {
                    outcome.cut_short += 1;
                    record::close(out, id, false, Some(e.to_string()))?;
                }
                warn(format!("{message} ({how})"));
            }
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(Error::data(format!(
            "no conversation with id {:?} found",
            options.ids[i]
        )));
    }
    Ok(outcome)
}

/// A failure writing the row stream, which ends the whole dump (an input
/// named `stdout` that cannot be read is not one).
fn is_output_error(e: &Error) -> bool {
    use crate::error::ErrorKind;
    matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::Output)
}

/// Dumps one target: `Some(true)` when written, `Some(false)` when it had
/// not changed, `None` when skipped (not an agy database, or not an asked-
/// for id). `started` is set to its id once its first record is written.
#[allow(clippy::too_many_arguments)]
fn dump_one<'t>(
    target: &Target,
    index: Option<&index::Reader>,
    sides: Option<&Sides>,
    options: &DumpOptions,
    mut taker: Option<&mut (dyn Taker + 't)>,
    found: &mut [bool],
    out: &mut Output,
    warn: &mut dyn FnMut(String),
    started: &mut Option<String>,
    damaged_seen: &mut bool,
) -> Result<Option<bool>> {
    // Without --id the cheap check comes first: an unchanged conversation
    // is not even opened.
    let changed = |target: &Target| match options.changed_since {
        Some(since) => changed_after(target, since),
        None => Ok(true),
    };
    if options.ids.is_empty() && !changed(target)? {
        return Ok(Some(false));
    }
    let source = match sqlite::open_tables(&target.db) {
        Ok(source) => source,
        Err(OpenError::NotAgy(why)) if !target.explicit => {
            warn(format!(
                "{}: skipped, not an agy conversation database ({why})",
                target.db.display()
            ));
            return Ok(None);
        }
        Err(OpenError::NotAgy(why)) => {
            return Err(Error::data(format!(
                "not an agy conversation database ({why})"
            )))
        }
        Err(OpenError::Failed(e)) => return Err(e),
    };
    let stem = target
        .db
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = source.cascade_id()?.unwrap_or_else(|| stem.clone());
    if !options.ids.is_empty() {
        match options.ids.iter().position(|wanted| *wanted == id) {
            Some(i) => found[i] = true,
            None => return Ok(None),
        }
        if !changed(target)? {
            return Ok(Some(false));
        }
    }
    // Listed before the first record, so a directory that cannot be read
    // fails the conversation before any of it is written.
    // `None` when not read: the end record says so, and a writer keeps
    // the brain directory it has.
    let brain = match (&target.brain, options.brain) {
        (Some(dir), true) => list_brain(dir, warn)?,
        _ => None,
    };
    // Read before the first record too: the row is the conversation's own.
    let index_row = match index {
        Some(reader) => reader.row(&id)?,
        None => None,
    };
    let side_records = match sides {
        Some(sides) => sides.entries(&id)?,
        None => Vec::new(),
    };
    if let Some(taker) = taker.as_deref_mut() {
        out.flush()?;
        taker.begin(&id)?;
    }
    record::count_from_here(out);
    *started = Some(id.clone());
    let damaged = dump_tables(&*source, &id, out, taker.as_deref_mut())?;
    source.check_unchanged()?;
    if let Some(row) = index_row {
        dump_index_row(&row, &id, out)?;
    }
    for side in &side_records {
        side.write(out.buf(), &id);
        out.end_record()?;
    }
    if let Some(first) = &damaged.first {
        warn(format!(
            "{}: conversation {id}: {} steps row(s) hold damaged blobs, the first {first}; agy-decode shows their readable part marked \"damaged\"",
            target.db.display(),
            damaged.rows
        ));
        *damaged_seen = true;
    }
    if taker.as_ref().is_none_or(|t| t.reads_side_records()) {
        dump_meta_sidecar(&target.db, &id, out)?;
    }
    let brain_read = brain.as_ref().is_some_and(|b| b.whole);
    if let Some(brain) = brain {
        for rel in brain.files {
            if let Some(taker) = taker.as_deref_mut() {
                out.flush()?;
                if !taker.reads_file(&id, &rel)? {
                    continue;
                }
            }
            dump_file(
                &brain.dir.join(&rel),
                &id,
                record::FileDir::Brain,
                &rel,
                out,
            )?;
        }
    }
    record::close(out, &id, brain_read, None)?;
    Ok(Some(true))
}

/// The db, schema and row records of one database, `steps` rows last.
pub fn dump_database(source: &dyn Tables, id: &str, out: &mut Output) -> Result<Damaged> {
    dump_tables(source, id, out, None)
}

/// [`dump_database`], its `steps` rows offered to `taker` first.
fn dump_tables<'t>(
    source: &dyn Tables,
    id: &str,
    out: &mut Output,
    mut taker: Option<&mut (dyn Taker + 't)>,
) -> Result<Damaged> {
    let mut damaged = Damaged::default();
    record::write_db(out.buf(), id, source.user_version()?, true);
    out.end_record()?;
    let schema = source.schema();
    for object in schema {
        record::write_schema(
            out.buf(),
            id,
            &object.object_type,
            &object.name,
            &object.sql,
        );
        out.end_record()?;
    }
    let tables = schema.iter().filter(|o| o.object_type == "table");
    let (steps, others): (Vec<_>, Vec<_>) = tables.partition(|o| o.name == "steps");
    for table in others.into_iter().chain(steps) {
        // Made at the table's first row, from the columns every row has.
        let mut shape = None;
        source
            .each_row(&table.name, &mut |columns, cells| {
                if table.name == "steps" {
                    note_damage(columns, cells, &mut damaged);
                    if let Some(taker) = taker.as_deref_mut() {
                        out.flush()?;
                        if taker.steps_row(id, columns, cells)? {
                            return Ok(());
                        }
                    }
                }
                let shape = shape.get_or_insert_with(|| RowShape::new(id, &table.name, columns));
                let start = out.buf().len();
                shape.write_to(out, cells.iter().cloned())?;
                out.end_line(start)
            })
            .map_err(|e| e.context(format!("table {}", table.name)))?;
    }
    Ok(damaged)
}

/// The `index` record: the conversation's row of the root's index, after
/// its database's rows and before its files.
pub fn dump_index_row(row: &IndexRow, id: &str, out: &mut Output) -> Result<()> {
    row.write(out.buf(), id);
    out.end_record()
}

/// Counts a steps row whose protobuf blobs do not read whole.
fn note_damage(columns: &[record::Column], cells: &[Cell<'_>], damaged: &mut Damaged) {
    let idx = columns
        .iter()
        .position(|c| c.name == "idx")
        .and_then(|i| match cells[i] {
            Cell::Integer(v) => Some(v),
            _ => None,
        });
    for (column, cell) in columns.iter().zip(cells) {
        if !matches!(&*column.name, "step_payload" | "metadata" | "error_details") {
            continue;
        }
        let Cell::Blob(bytes) = cell else {
            continue;
        };
        if let Some(damage) = crate::agy::wire::damage(bytes) {
            damaged.rows += 1;
            if damaged.first.is_none() {
                let step = idx.map_or_else(|| "?".to_string(), |i| i.to_string());
                damaged.first = Some(format!("step {step}: {} {damage}", column.name));
            }
            return;
        }
    }
}

/// The ACP lane keeps `<id>.meta` (JSON: cwd, mode) beside each database;
/// it travels as a `file` record with `"dir":"conversations"`.
pub fn dump_meta_sidecar(db: &Path, id: &str, out: &mut Output) -> Result<()> {
    let meta = db.with_extension("meta");
    match std::fs::symlink_metadata(&meta) {
        Ok(m) if m.is_file() => {}
        _ => return Ok(()),
    }
    dump_file(
        &meta,
        id,
        record::FileDir::Conversations,
        &format!("{id}.meta"),
        out,
    )
}

/// The `file` records of one file: read and written a part at a time
/// ([`record::FILE_PART`]), so a large brain file never sits in memory
/// whole.
fn dump_file(
    path: &Path,
    id: &str,
    dir: record::FileDir,
    rel: &str,
    out: &mut Output,
) -> Result<()> {
    use std::io::Read;
    let read_error = |e| Error::io(path.display(), e);
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let mut buf = Vec::with_capacity(record::FILE_PART + 3);
    let mut append = false;
    loop {
        // Three bytes beyond a part: enough to see whether its end splits
        // a UTF-8 sequence.
        let want = (record::FILE_PART + 3 - buf.len()) as u64;
        (&mut file)
            .take(want)
            .read_to_end(&mut buf)
            .map_err(read_error)?;
        let at_end = buf.len() < record::FILE_PART + 3;
        let part = match at_end {
            true if buf.len() <= record::FILE_PART => buf.len(),
            _ => record::file_part_len(&buf),
        };
        let start = out.buf().len();
        record::write_file_part(out.buf(), id, dir, rel, append, &buf[..part]);
        out.end_line(start)?;
        buf.drain(..part);
        append = true;
        if at_end && buf.is_empty() {
            return Ok(());
        }
    }
}

/// A brain directory as listed.
struct Brain {
    dir: PathBuf,
    /// Its regular files, sorted bytewise by path; none when there is no
    /// directory.
    files: Vec<String>,
    /// Every entry of it is among `files`: nothing was skipped.
    whole: bool,
}

/// The files of a brain directory; `None` when it is there but was not
/// read (a symbolic link, reported). Symbolic links in it are reported and
/// skipped, never followed, as are names that are not UTF-8: a brain with
/// any is not whole.
fn list_brain(dir: &Path, warn: &mut dyn FnMut(String)) -> Result<Option<Brain>> {
    let mut brain = Brain {
        dir: dir.to_path_buf(),
        files: Vec::new(),
        whole: true,
    };
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(meta) if meta.file_type().is_symlink() => {
            warn(format!("{}: skipped, a symbolic link", dir.display()));
            return Ok(None);
        }
        Ok(_) => {
            return Err(Error::data(format!(
                "{}: the brain directory is not a directory",
                dir.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Some(brain)),
        Err(e) => return Err(Error::io(dir.display(), e)),
    }
    list_files(dir, String::new(), &mut brain, warn)?;
    brain.files.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    if !brain.whole {
        warn(format!(
            "{}: not all of the brain directory goes out (its end record says \"brain\":\"not_read\", so agy-pack keeps what it skipped)",
            dir.display()
        ));
    }
    Ok(Some(brain))
}

fn list_files(
    dir: &Path,
    prefix: String,
    brain: &mut Brain,
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            warn(format!("{}: skipped, name is not UTF-8", path.display()));
            brain.whole = false;
            continue;
        };
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let file_type = entry
            .file_type()
            .map_err(|e| Error::io(path.display(), e))?;
        if file_type.is_symlink() {
            warn(format!("{}: skipped, a symbolic link", path.display()));
            brain.whole = false;
        } else if file_type.is_dir() {
            list_files(&path, rel, brain, warn)?;
        } else if file_type.is_file() {
            brain.files.push(rel);
        } else {
            warn(format!("{}: skipped, not a regular file", path.display()));
            brain.whole = false;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_own_output_failing_ends_a_dump() {
        let full = || std::io::Error::other("No space left on device");
        assert!(is_output_error(&Error::output(full())));
        let closed = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(is_output_error(&Error::output(closed)));
        // A brain file that happens to be named `stdout` is one input.
        let input = Error::io("/root/brain/c1/stdout", full()).context("c1.db");
        assert!(!is_output_error(&input));
    }
}
