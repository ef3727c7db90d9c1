//! A conversation's index row on its way through agy-pack.
//!
//! The row stream's `index` record is checked when it arrives and kept with
//! the conversation's temporaries (`.<id>.index.agy-pack.tmp`); a stream
//! without one keeps the word `refresh` there instead. Writing the row is
//! the last step of putting the conversation in place ([`finish`]), in the
//! index's own transaction: a run killed before it leaves the index as it
//! was, and the next run into the root finishes it (see `claim.rs`).
//!
//! Without an `index` record the stream says the conversation has no row
//! of its own, but a root's index may still hold one for the conversation
//! being replaced; that row is brought up to date with the new database
//! when it disagrees with it; no row is invented in an index that exists.
//! A root without an index gets one, as agy makes it on start, holding the
//! conversation's derived row: readers of the index (agy's own picker, other
//! people's listers) list only what it holds.
//!
//! In an index that has `raw_summary` (`user_version` 3), a row the stream
//! brought without one, or with it emptied by an edit, gets the summary
//! made from the conversation's database.

use std::io::Write;

use std::path::Path;

use crate::decode::summary;
use crate::error::{Error, Result};
use crate::store::index::{self, Change, IndexRow};
use crate::store::sqlite::{OpenError, Source};
use crate::stream::record::{Record, RowCells};

/// What the `.index` temporary holds when the stream brought no row: the
/// row in the root's index is brought up to date, if there is one.
const REFRESH: &str = "refresh\n";

/// What it holds instead when the run began in a root without an index:
/// the conversation gets its derived row, in an index made as agy makes
/// it (the first conversation written makes it, the others are added).
const DERIVE: &str = "derive\n";

/// Checks an `index` record of conversation `id`: its row is the
/// conversation's, every value is well formed, and no null is where the
/// index refuses one.
pub(super) fn check(id: &str, user_version: i64, row: &RowCells<'_>) -> Result<IndexRow> {
    let row = IndexRow::from_record(user_version, row);
    row.check_owner(id)?;
    row.check_not_null()?;
    let later_blobs: Vec<&str> = index::LATER_COLUMNS
        .iter()
        .filter(|(_, definition)| definition.starts_with("BLOB"))
        .map(|(name, _)| *name)
        .collect();
    for (name, cell) in &row.cells {
        cell.to_cell(later_blobs.contains(&name.as_str()))
            .map_err(|e| e.context(format!("index column {name}")))?;
    }
    Ok(row)
}

/// Where a conversation's row waits, and what it is the row of.
pub(super) struct Stash<'a> {
    /// The `.index` temporary.
    pub path: &'a Path,
    pub root: &'a Path,
    pub id: &'a str,
    /// The conversation's database in place.
    pub db: &'a Path,
}

/// Keeps the row (or, with none, the word `refresh`, or `derive` when the
/// run began in a root without an index) with the conversation's
/// temporaries, synced.
pub(super) fn stash(stash: &Stash<'_>, row: Option<&IndexRow>, root_had_index: bool) -> Result<()> {
    let mut text = Vec::new();
    match (row, root_had_index) {
        (Some(row), _) => row.write(&mut text, stash.id),
        (None, true) => text.extend_from_slice(REFRESH.as_bytes()),
        (None, false) => text.extend_from_slice(DERIVE.as_bytes()),
    }
    let path = stash.path;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(path.display(), e))?;
    file.write_all(&text)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(path.display(), e))
}

/// Writes the stashed row of a conversation now in place into the root's
/// index, then removes the stash. Repeating it after a kill is harmless.
/// Returns what the caller is to say when a row agy-pack would have made
/// (a derived row, a `raw_summary`) could not be: the database does not
/// read as a summary is read (a schema agy never wrote). Such a row is
/// not the stream's, so its lack is said, not an error.
pub(super) fn finish(stash: &Stash<'_>) -> Result<Option<String>> {
    let path = stash.path;
    let text = match std::fs::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path.display(), e)),
    };
    let mut note = None;
    let change = if text == REFRESH.as_bytes() {
        refresh(stash.root, stash.db)?
    } else if text == DERIVE.as_bytes() {
        match open(stash.db).and_then(|source| summary::of_database_with_raw(&source)) {
            Ok(summary) => Some(Change::Create(summary)),
            Err(e) => {
                note = Some(format!(
                    "no index row made for it: its summary could not be read ({e})"
                ));
                None
            }
        }
    } else {
        let line = text.strip_suffix(b"\n").unwrap_or(&text);
        let record = Record::parse(line).map_err(|e| e.context(path.display()))?;
        let Record::Index {
            user_version, row, ..
        } = record
        else {
            return Err(Error::data(format!(
                "{}: not an index record",
                path.display()
            )));
        };
        let mut row = check(stash.id, user_version, &row)?;
        if wants_raw_summary(&row, stash.root)? {
            match open(stash.db).and_then(|source| summary::of_database_with_raw(&source)) {
                Ok(summary) => {
                    if let Some(raw) = summary.raw_summary {
                        row.put_raw_summary(&raw);
                    }
                }
                Err(e) => {
                    note = Some(format!(
                        "its index row has no raw_summary: its summary could not be read ({e})"
                    ))
                }
            }
        }
        Some(Change::Put(row))
    };
    if let Some(change) = change {
        index::apply(
            stash.root,
            &[(stash.id.to_string(), change)],
            index::BUSY_TIMEOUT,
        )?;
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path.display(), e)),
        _ => Ok(note),
    }
}

/// The refresh of the conversation's existing row, if the root has an
/// index to hold one.
fn refresh(root: &Path, db: &Path) -> Result<Option<Change>> {
    if !index::path(root).exists() {
        return Ok(None);
    }
    Ok(Some(Change::Refresh(summary::of_database_with_raw(
        &open(db)?,
    )?)))
}

/// The conversation database at `db`, opened to read its summary.
pub(super) fn open(db: &Path) -> Result<Source> {
    match Source::open(db) {
        Ok(source) => Ok(source),
        Err(OpenError::NotAgy(why)) => Err(Error::data(format!("{}: {why}", db.display()))),
        Err(OpenError::Failed(e)) => Err(e.context(db.display())),
    }
}

/// Whether a row the stream brought is to get a `raw_summary` made from
/// its database: it has the column, empty (an edit emptied it: what it
/// summarized changed), or it has not and the root's index has.
fn wants_raw_summary(row: &IndexRow, root: &Path) -> Result<bool> {
    if row.lacks_raw_summary() {
        return Ok(true);
    }
    if row.get(index::RAW_SUMMARY).is_some() {
        return Ok(false);
    }
    let path = index::path(root);
    if !path.exists() {
        return Ok(false);
    }
    let conn = rusqlite::Connection::open_with_flags(
        &path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Error::from(e).context(path.display()))?;
    let columns = crate::store::sqlite::table_columns(&conn, index::TABLE)
        .map_err(|e| e.context(path.display()))?;
    Ok(columns.iter().any(|c| c.name == index::RAW_SUMMARY))
}
