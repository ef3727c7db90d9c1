//! A conversation being built in temporary files: its records checked in
//! order and inserted as they come, its brain files and sidecar written,
//! everything synced before it may be put in place.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::store::index as store_index;
use crate::store::root;
use crate::store::sqlite::{self, Bind, AGY_SCHEMA};
use crate::stream::record::{self, Cell, Column, Counts, End, FileContent, JsonCell, RowCells};

use super::claim::{self, Claim, Names};
use super::same;

/// Where a conversation's records have got to; each kind may only come
/// after the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stage {
    Start,
    Db,
    Schema,
    Rows,
}

/// A conversation being assembled in temporary files.
pub(super) struct Pending {
    pub(super) id: String,
    pub(super) names: Names,
    /// Held until the conversation is in place or its temporaries are gone.
    pub(super) claim: Claim,
    pub(super) stage: Stage,
    pub(super) user_version: i64,
    pub(super) conn: Option<Connection>,
    /// Whether the stream carried the ACP `<id>.meta` sidecar.
    pub(super) has_meta: bool,
    /// The stream's index row, checked; `saw_index` once its record came.
    pub(super) index: Option<store_index::IndexRow>,
    pub(super) saw_index: bool,
    /// Columns of each created table, for values' affinity.
    pub(super) tables: HashMap<String, Vec<Column>>,
    /// Whether each table has rowids (is not `WITHOUT ROWID`), asked when
    /// a blob is to be streamed into it.
    pub(super) rowid_tables: HashMap<String, bool>,
    pub(super) files: HashSet<String>,
    pub(super) saw_schema: bool,
    /// The records that came, counted as an `end` record counts them.
    pub(super) counts: Counts,
    /// Its `db` record says an `end` record closes it.
    pub(super) closed: bool,
    /// The conversation's `end` record, once it came (checked).
    pub(super) end: Option<End>,
    /// The hash of its lines, when it may replace a conversation in place
    /// that is the same to the byte.
    pub(super) lines: Option<same::Lines>,
    /// Past the point of no return: the temporaries are the new
    /// conversation now, to be finished, never removed.
    pub(super) installing: bool,
    /// In place; only its index row may be left to write.
    pub(super) placed: bool,
    /// Its entries in the root's side files, for the end of the run.
    pub(super) sides: Vec<crate::stream::record::Side<'static>>,
}

/// Where agy keeps a conversation's logs; the CLI wedges on resume when
/// the directory is missing, so every conversation gets it.
pub(super) const LOGS: &str = ".system_generated/logs";

/// Blobs over this many bytes are written into their row after it is
/// inserted, from their hex a MiB at a time (SQLite's incremental blob
/// I/O), rather than decoded whole and bound: SQLite takes a copy of a
/// bound value, so a row of one 100 MB blob held its line, the decoded blob
/// and that copy at once. (The row is inserted with as many zeros, which
/// SQLite builds in memory unless the blob is the last column: one copy
/// less, not two.) Smaller blobs, all of a usual conversation's, are bound
/// as before.
const STREAM_BLOB_OVER: usize = 16 << 20;

/// A value to bind: a cell, or zeros to be overwritten by a streamed blob.
enum Value<'c> {
    Cell(Cell<'c>),
    Zeros(usize),
}

/// `zeroblob(n)` as a bound value.
struct ZeroBlob(u64);

impl rusqlite::ToSql for ZeroBlob {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::ZeroBlob(self.0))
    }
}

/// The hex of a plain string value large enough to stream, were its column
/// a blob column.
fn streamed_hex<'v>(value: &'v JsonCell<'_>) -> Option<&'v str> {
    match value {
        JsonCell::Plain(h) | JsonCell::Blob(h) if h.len() / 2 > STREAM_BLOB_OVER => Some(h),
        _ => None,
    }
}

/// That `hex` decodes, with the error decoding it would give if not.
fn check_hex(hex: &str) -> Result<()> {
    if hex.len().is_multiple_of(2) && record::is_hex_digits(hex.as_bytes()) {
        return Ok(());
    }
    record::decode_hex(hex).map(|_| ())
}

/// Appends `, name` (or `name` first) to an INSERT's column list.
fn continue_list(sql: &mut String, i: usize, name: &str) {
    if i > 0 {
        sql.push(',');
    }
    sql.push_str(&sqlite::quote_identifier(name));
}

/// Removes a conversation's temporaries, unless it is past the point of no
/// return; its claim goes when `pending` is dropped, after this.
pub(super) fn discard(pending: &mut Pending) {
    drop(pending.conn.take());
    if pending.installing {
        return;
    }
    let _ = pending.names.remove_temporaries();
}

fn no_file_to_append() -> Error {
    Error::data("\"append\" to a file that no earlier record of the conversation started")
}

/// Appends `bytes` to a file this run created (in its temporary brain
/// directory or as the temporary sidecar), never creating one.
fn append_to(target: &Path, path: &str, bytes: &[u8]) -> Result<()> {
    let mut file = OpenOptions::new()
        .append(true)
        .open(target)
        .map_err(|e| Error::io(path, e))?;
    file.write_all(bytes).map_err(|e| Error::io(path, e))
}

/// A new database for packing into: no rollback journal (a failed
/// conversation is deleted whole, never rolled back) and no fsync until the
/// file is complete; agy's page size.
pub(super) fn open_new_database(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path).map_err(|e| Error::from(e).context(path.display()))?;
    conn.execute_batch(
        "PRAGMA page_size = 32768; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN",
    )?;
    Ok(conn)
}

/// Refuses a conversation whose `trajectory_meta.cascade_id` names
/// another: agy finds a conversation by the id in its file name and fails
/// with "trajectory not found" when the row disagrees (FORMAT.md 14 row 8).
pub(super) fn check_cascade_id(conn: &Connection, id: &str) -> Result<()> {
    let mut stmt = conn.prepare("SELECT cascade_id FROM trajectory_meta ORDER BY rowid")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        if let rusqlite::types::ValueRef::Text(text) = row.get_ref(0)? {
            if !text.is_empty() && text != id.as_bytes() {
                return Err(Error::data(format!(
                    "trajectory_meta.cascade_id is {:?}, not the conversation's id {id:?}: \
                     agy would not find the conversation (\"trajectory not found\")",
                    String::from_utf8_lossy(text)
                )));
            }
        }
    }
    Ok(())
}

pub(super) fn check_created(conn: &Connection, object_type: &str, name: &str) -> Result<()> {
    let found: Option<String> = conn
        .query_row(
            "SELECT type FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .ok();
    match found.as_deref() {
        Some(t) if t == object_type => Ok(()),
        _ => Err(Error::data(format!(
            "schema record names {object_type} {name:?} but its SQL creates something else"
        ))),
    }
}

impl Pending {
    pub(super) fn conn(&self) -> &Connection {
        self.conn.as_ref().expect("open until commit")
    }

    pub(super) fn create(&mut self, object_type: &str, sql: &str) -> Result<()> {
        sqlite::check_schema_sql(object_type, sql)?;
        let conn = self.conn.as_ref().expect("open until commit");
        let mut stmt = conn.prepare(sql)?;
        stmt.raw_execute()?;
        Ok(())
    }

    /// Gives a conversation without schema records agy 1.0.16's schema.
    pub(super) fn ensure_schema(&mut self) -> Result<()> {
        if self.saw_schema {
            return Ok(());
        }
        for (object_type, _, sql) in AGY_SCHEMA {
            self.create(object_type, sql)?;
        }
        self.saw_schema = true;
        Ok(())
    }

    pub(super) fn insert(&mut self, table: &str, row: &RowCells<'_>) -> Result<()> {
        let conn = self.conn.as_ref().expect("open until commit");
        if !self.tables.contains_key(table) {
            let columns = sqlite::table_columns(conn, table)?;
            if columns.is_empty() {
                return Err(Error::data(format!(
                    "no table {table:?} was created for this conversation"
                )));
            }
            self.tables.insert(table.to_string(), columns);
        }
        let streams = row.0.iter().any(|(_, value)| streamed_hex(value).is_some())
            && self.has_rowid(table)?;
        let conn = self.conn.as_ref().expect("open until commit");
        let columns = &self.tables[table];
        let mut cells = Vec::with_capacity(row.0.len());
        // Blob columns written after the insert: (column, hex).
        let mut streamed: Vec<(&str, &str)> = Vec::new();
        let mut sql = format!("INSERT INTO {} (", sqlite::quote_identifier(table));
        for (i, (name, value)) in row.0.iter().enumerate() {
            let column = columns
                .iter()
                .find(|c| c.name == *name)
                .ok_or_else(|| Error::data(format!("table {table:?} has no column {name:?}")))?;
            let blob = match value {
                JsonCell::Plain(_) => column.blob_affinity,
                _ => true,
            };
            if let Some(hex) = streamed_hex(value).filter(|_| streams && blob) {
                check_hex(hex).map_err(|e| e.context(format!("column {name}")))?;
                cells.push(Value::Zeros(hex.len() / 2));
                streamed.push((&**name, hex));
                continue_list(&mut sql, i, name);
                continue;
            }
            cells.push(Value::Cell(
                value
                    .to_cell(column.blob_affinity)
                    .map_err(|e| e.context(format!("column {name}")))?,
            ));
            continue_list(&mut sql, i, name);
        }
        sql.push_str(") VALUES (");
        for i in 0..cells.len() {
            sql.push_str(if i == 0 { "?" } else { ",?" });
        }
        sql.push(')');
        if cells.is_empty() {
            sql = format!(
                "INSERT INTO {} DEFAULT VALUES",
                sqlite::quote_identifier(table)
            );
        }
        let mut stmt = conn.prepare_cached(&sql)?;
        for (i, cell) in cells.iter().enumerate() {
            match cell {
                Value::Cell(cell) => stmt.raw_bind_parameter(i + 1, Bind(cell))?,
                Value::Zeros(len) => stmt.raw_bind_parameter(i + 1, ZeroBlob(*len as u64))?,
            }
        }
        stmt.raw_execute()?;
        if streamed.is_empty() {
            return Ok(());
        }
        let rowid = conn.last_insert_rowid();
        let mut bytes = Vec::new();
        for (column, hex) in streamed {
            let mut blob = conn.blob_open(rusqlite::MAIN_DB, table, column, rowid, false)?;
            // Whole pairs of digits, a MiB of bytes at a time.
            for part in hex.as_bytes().chunks(2 << 20) {
                let decoded = record::decode_hex_bytes_into(part, &mut bytes);
                debug_assert!(decoded, "checked before the insert");
                blob.write_all(&bytes)
                    .map_err(|e| Error::data(format!("column {column}: {e}")))?;
            }
        }
        Ok(())
    }

    /// Whether `table` has rowids, so that a blob can be written into a row
    /// after it is inserted.
    pub(super) fn has_rowid(&mut self, table: &str) -> Result<bool> {
        if let Some(&known) = self.rowid_tables.get(table) {
            return Ok(known);
        }
        let conn = self.conn.as_ref().expect("open until commit");
        let without: Option<i64> = conn
            .query_row(
                "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .ok();
        let rowid = without == Some(0);
        self.rowid_tables.insert(table.to_string(), rowid);
        Ok(rowid)
    }

    /// Writes the `<id>.meta` sidecar to its temporary name; no other file
    /// may go to `conversations/`, where a stray `.db` would become a
    /// conversation.
    pub(super) fn write_meta(
        &mut self,
        path: &str,
        append: bool,
        content: &FileContent<'_>,
    ) -> Result<()> {
        if path != format!("{}.meta", self.id) {
            return Err(Error::data(format!(
                "the only file allowed in conversations/ is \"{}.meta\"",
                self.id
            )));
        }
        let bytes = content.to_bytes()?;
        let tmp = &self.names.meta_tmp;
        if append {
            if !self.has_meta {
                return Err(no_file_to_append());
            }
            return append_to(tmp, path, &bytes);
        }
        if self.has_meta {
            return Err(Error::data("the same file path appears twice"));
        }
        self.has_meta = true;
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(tmp)
            .map_err(|e| Error::io(path, e))?;
        file.write_all(&bytes).map_err(|e| Error::io(path, e))?;
        Ok(())
    }

    /// Writes a brain file, or with `append` the next part of one an
    /// earlier record started.
    pub(super) fn write_file(
        &mut self,
        path: &str,
        append: bool,
        content: &FileContent<'_>,
    ) -> Result<()> {
        let rel = root::check_relative_path(path)?;
        let target = self.names.brain_tmp.join(&rel);
        let bytes = content.to_bytes()?;
        if append {
            if !self.files.contains(path) {
                return Err(no_file_to_append());
            }
            return append_to(&target, path, &bytes);
        }
        if !self.files.insert(path.to_string()) {
            return Err(Error::data("the same file path appears twice"));
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io(parent.display(), e))?;
        }
        // create_new never follows or replaces an existing entry.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .map_err(|e| Error::io(path, e))?;
        file.write_all(&bytes).map_err(|e| Error::io(path, e))?;
        Ok(())
    }

    /// A brain directory the stream did not read whole (`"brain":"not_read"`
    /// in its end record) is not the stream's to replace: with no brain
    /// file in the stream the directory in place is kept as it is (the new
    /// one is not put in place); with some, they are laid over a copy of
    /// it, so that nothing the stream did not hold is removed.
    pub(super) fn keep_unread_brain(&mut self) -> Result<()> {
        let brain = &self.names.brain;
        match fs::symlink_metadata(brain) {
            Ok(meta) if meta.is_dir() => {}
            _ => return Ok(()),
        }
        let tmp = &self.names.brain_tmp;
        if self.files.is_empty() {
            return fs::remove_dir_all(tmp).map_err(|e| Error::io(tmp.display(), e));
        }
        claim::copy_missing(brain, tmp)
    }

    /// Makes every temporary file and directory durable, so that a crash
    /// of the machine after the point of no return cannot put empty files
    /// in place.
    pub(super) fn sync(&self) -> Result<()> {
        claim::sync(&self.names.db_tmp)?;
        if self.has_meta {
            claim::sync(&self.names.meta_tmp)?;
        }
        if fs::symlink_metadata(&self.names.brain_tmp).is_err() {
            return Ok(());
        }
        let mut dirs: BTreeSet<&Path> = Path::new(LOGS).ancestors().collect();
        for rel in &self.files {
            let path = Path::new(rel);
            claim::sync(&self.names.brain_tmp.join(path))?;
            dirs.extend(path.ancestors().skip(1));
        }
        for dir in dirs {
            claim::sync(&self.names.brain_tmp.join(dir))?;
        }
        Ok(())
    }
}
