//! The SQLite side: agy's schema, reading a conversation database into row
//! records, and writing row records into a new database.
//!
//! agy's schema is in schema.rs, the read-only open in read_only.rs, and
//! file/ reads agy's databases from their files without SQLite
//! ([`Snapshot`], agy-dump's usual way); here a conversation is read
//! through SQLite ([`Source`]), either is opened for agy-dump as
//! [`Tables`], and cells are read and bound.

mod file;
mod read_only;
mod schema;

pub use file::{wal_checksum_at, wal_checksum_serial, Snapshot};

pub(crate) use read_only::sidecar;
pub use read_only::ReadOnly;
use schema::agy_tables_columns;
pub(crate) use schema::definitions;
pub use schema::{
    agy_columns, check_agy_shape, check_schema_sql, declared_columns, AGY_SCHEMA, AGY_USER_VERSION,
    STEPS_COLUMNS,
};

use std::borrow::Cow;
use std::path::Path;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::stream::record::{self, Cell, Column};

/// A table or index as listed in `sqlite_master`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaObject {
    pub object_type: String,
    pub name: String,
    pub sql: String,
}

/// A conversation database opened for a consistent, read-only dump.
///
/// Opening never changes the database, its sidecars or its directory, which
/// rules out SQLite's ordinary read-only open of a WAL database: that creates
/// `-wal` and `-shm` files. See [`ReadOnly::open`] for how each shape agy
/// leaves is read. The whole dump runs inside one read transaction.
pub struct Source {
    db: ReadOnly,
    /// Tables and indexes, read once at open.
    schema: Vec<SchemaObject>,
    /// The visible columns of each table, in schema order.
    columns: Vec<(String, Vec<Column>)>,
}

/// Why a file is not a conversation database we can dump.
#[derive(Debug)]
pub enum OpenError {
    /// Readable, but not an agy database (foreign SQLite, empty file...).
    NotAgy(String),
    /// Any other failure.
    Failed(Error),
}

impl From<rusqlite::Error> for OpenError {
    fn from(err: rusqlite::Error) -> OpenError {
        match err.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => {
                OpenError::NotAgy("not an SQLite database".to_string())
            }
            _ => OpenError::Failed(err.into()),
        }
    }
}

/// Times the first read of a database is tried before its failure stands,
/// 2 ms apart: about a second, far longer than a writer takes to update the
/// WAL index's header.
const FIRST_READ_TRIES: u32 = 500;

/// Begins the read transaction the whole dump runs in: the first read
/// fixes the snapshot, and tells garbage from SQLite.
fn first_read(conn: &Connection) -> rusqlite::Result<Vec<SchemaObject>> {
    conn.execute_batch("BEGIN")?;
    read_schema(conn)
}

/// Whether a read failed only because a live writer was updating the WAL
/// index as it began: the two copies of the index's header differed, and
/// where SQLite's own readers would rebuild the index, a read-only one may
/// not (`SQLITE_READONLY_RECOVERY`, or `SQLITE_BUSY_RECOVERY` while the
/// writer still holds its lock). A second look a moment later finds the
/// header whole. Seen about once in 80 runs of tests/wal.rs's live writer
/// on a loaded machine: agy-dump named the conversation "not dumped".
fn met_a_writer_mid_update(e: &rusqlite::Error) -> bool {
    use rusqlite::ffi;
    matches!(
        e,
        rusqlite::Error::SqliteFailure(ffi::Error { extended_code, .. }, _)
            if matches!(
                *extended_code,
                ffi::SQLITE_READONLY_RECOVERY | ffi::SQLITE_BUSY_RECOVERY | ffi::SQLITE_BUSY
            )
    )
}

/// The failure to name when every try of the first read met a writer
/// mid-update: SQLite's own words ("attempt to write a readonly database")
/// say nothing of what happened.
fn waited_in_vain(e: &rusqlite::Error) -> OpenError {
    let recovery = matches!(
        e.sqlite_error().map(|e| e.extended_code),
        Some(rusqlite::ffi::SQLITE_READONLY_RECOVERY)
    );
    OpenError::Failed(Error::data(match recovery {
        true => "the header of its WAL index (the -shm) stayed half-written for a second while a connection held it open (agy may have stopped in the middle of a write); dump it again once agy has written again or exited",
        false => "a writer kept it locked for a second; dump it again",
    }))
}

impl Source {
    /// Opens `path` for dumping; see the type's documentation for how.
    pub fn open(path: &Path) -> Result<Source, OpenError> {
        let meta =
            std::fs::metadata(path).map_err(|e| OpenError::Failed(Error::io(path.display(), e)))?;
        if !meta.is_file() {
            return Err(OpenError::NotAgy("not a regular file".to_string()));
        }
        if meta.len() == 0 {
            return Err(OpenError::NotAgy("empty file".to_string()));
        }
        let mut tries = 1;
        let (db, schema) = loop {
            let db = ReadOnly::open(path, false)?;
            match first_read(&db.conn) {
                Ok(schema) => break (db, schema),
                Err(e) if met_a_writer_mid_update(&e) && tries < FIRST_READ_TRIES => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                Err(e) if met_a_writer_mid_update(&e) => return Err(waited_in_vain(&e)),
                Err(e) => return Err(e.into()),
            }
        };
        let mut source = Source {
            db,
            schema,
            columns: Vec::new(),
        };
        source.columns = match agy_tables_columns(&source.schema) {
            Some(columns) => columns,
            None => read_columns(&source.db.conn)?,
        };
        check_agy_shape(&source.columns).map_err(OpenError::NotAgy)?;
        Ok(source)
    }

    pub fn connection(&self) -> &Connection {
        &self.db.conn
    }

    /// See [`ReadOnly::check_unchanged`]: called once the dump has read
    /// everything it reads from the database.
    pub fn check_unchanged(&self) -> Result<()> {
        self.db.check_unchanged()
    }

    pub fn user_version(&self) -> Result<i64> {
        Ok(self
            .db
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// `trajectory_meta.cascade_id` of the first row, when it is non-empty text.
    pub fn cascade_id(&self) -> Result<Option<String>> {
        let mut stmt = self
            .db
            .conn
            .prepare("SELECT cascade_id FROM trajectory_meta ORDER BY rowid LIMIT 1")?;
        let mut rows = stmt.query([])?;
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        Ok(match row.get_ref(0)? {
            ValueRef::Text(t) if !t.is_empty() => std::str::from_utf8(t).ok().map(str::to_owned),
            _ => None,
        })
    }

    /// `trajectory_meta.source` of the first row: the lane that wrote the
    /// conversation (17 the CLI, 1 the desktop app).
    pub fn trajectory_source(&self) -> Result<Option<i64>> {
        let mut stmt = self
            .db
            .conn
            .prepare("SELECT source FROM trajectory_meta ORDER BY rowid LIMIT 1")?;
        let mut rows = stmt.query([])?;
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        Ok(match row.get_ref(0)? {
            ValueRef::Integer(source) => Some(source),
            _ => None,
        })
    }

    /// The "main" `trajectory_metadata_blob` (CortexTrajectoryMetadata),
    /// when the table has one that is a blob (and can be read: a reader
    /// of the metadata goes on without it).
    pub fn trajectory_metadata(&self) -> Option<Vec<u8>> {
        let has = self
            .schema
            .iter()
            .any(|o| o.object_type == "table" && o.name == "trajectory_metadata_blob");
        if !has {
            return None;
        }
        self.db
            .conn
            .query_row(
                "SELECT data FROM trajectory_metadata_blob WHERE id = 'main' AND typeof(data) = 'blob'",
                [],
                |r| r.get(0),
            )
            .ok()
    }

    /// Tables and indexes in `sqlite_master` order, SQLite's own excluded.
    pub fn schema(&self) -> &[SchemaObject] {
        &self.schema
    }
}

/// What [`Tables::each_row`] calls with each row: the table's columns and
/// the row's cells, which borrow from the read and live only for the call.
pub type EmitRow<'e> = dyn FnMut(&[Column], &[Cell<'_>]) -> Result<()> + 'e;

/// What agy-dump reads of a conversation database, whether from its files
/// ([`Snapshot`]) or through SQLite ([`Source`]).
pub trait Tables {
    /// `PRAGMA user_version`.
    fn user_version(&self) -> Result<i64>;
    /// Tables and indexes in `sqlite_master` order, SQLite's own excluded.
    fn schema(&self) -> &[SchemaObject];
    /// `trajectory_meta.cascade_id` of the first row, when it is
    /// non-empty UTF-8 text.
    fn cascade_id(&self) -> Result<Option<String>>;
    /// Calls `emit` with each row of `table` in rowid (or primary key)
    /// order.
    fn each_row(&self, table: &str, emit: &mut EmitRow<'_>) -> Result<()>;
    /// [`Tables::each_row`] of the table's first `columns` columns only
    /// (agy-usage reads a step's metadata, never its payload, which comes
    /// after it).
    fn each_row_prefix(&self, table: &str, columns: usize, emit: &mut EmitRow<'_>) -> Result<()>;
    /// Fails when the database changed while it was read without a lock
    /// that would have kept a writer off; called once everything is read.
    fn check_unchanged(&self) -> Result<()>;
}

/// Opens `path` for agy-dump: from its files when [`Snapshot`] takes its
/// shape, else through SQLite.
pub fn open_tables(path: &Path) -> Result<Box<dyn Tables>, OpenError> {
    match Snapshot::open(path) {
        Some(snapshot) => Ok(Box::new(snapshot)),
        None => Ok(Box::new(Source::open(path)?)),
    }
}

impl Tables for Source {
    fn user_version(&self) -> Result<i64> {
        Source::user_version(self)
    }

    fn schema(&self) -> &[SchemaObject] {
        &self.schema
    }

    fn cascade_id(&self) -> Result<Option<String>> {
        Source::cascade_id(self)
    }

    fn each_row(&self, table: &str, emit: &mut EmitRow<'_>) -> Result<()> {
        self.each_row_prefix(table, usize::MAX, emit)
    }

    fn each_row_prefix(&self, table: &str, columns: usize, emit: &mut EmitRow<'_>) -> Result<()> {
        let columns = match self.columns.iter().find(|(t, _)| t == table) {
            // At least one column: a row of none is no row to read.
            Some((_, all)) => &all[..columns.clamp(1, all.len().max(1)).min(all.len())],
            None => return Err(Error::data(format!("no table {table:?}"))),
        };
        let list = columns
            .iter()
            .map(|c| quote_identifier(&c.name))
            .collect::<Vec<_>>()
            .join(",");
        let by_rowid = format!(
            "SELECT {list} FROM {} ORDER BY rowid",
            quote_identifier(table)
        );
        let mut stmt = match self.db.conn.prepare(&by_rowid) {
            Ok(stmt) => stmt,
            // WITHOUT ROWID tables are stored, and so scanned, in key order.
            Err(_) => self
                .db
                .conn
                .prepare(&format!("SELECT {list} FROM {}", quote_identifier(table)))?,
        };
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let cells = (0..columns.len())
                .map(|i| cell(row, i))
                .collect::<Result<Vec<_>>>()?;
            emit(columns, &cells)?;
        }
        Ok(())
    }

    fn check_unchanged(&self) -> Result<()> {
        Source::check_unchanged(self)
    }
}

/// Tables and indexes in `sqlite_master` order, SQLite's own excluded.
fn read_schema(conn: &Connection) -> rusqlite::Result<Vec<SchemaObject>> {
    let mut stmt = conn.prepare(
        "SELECT type, name, sql FROM sqlite_master \
         WHERE type IN ('table', 'index') AND sql IS NOT NULL \
         AND substr(name, 1, 7) <> 'sqlite_' ORDER BY rowid",
    )?;
    let objects = stmt.query_map([], |r| {
        Ok(SchemaObject {
            object_type: r.get(0)?,
            name: r.get(1)?,
            sql: r.get(2)?,
        })
    })?;
    objects.collect()
}

/// Every table's visible columns in `sqlite_master` order, SQLite's own
/// excluded, in one query: preparing statements is most of the cost of
/// reading a small conversation.
pub fn read_columns(conn: &Connection) -> rusqlite::Result<Vec<(String, Vec<Column>)>> {
    let mut stmt = conn.prepare(
        "SELECT m.name, c.name, c.type FROM sqlite_master AS m, pragma_table_info(m.name) AS c \
         WHERE m.type = 'table' AND substr(m.name, 1, 7) <> 'sqlite_' ORDER BY m.rowid, c.cid",
    )?;
    let mut rows = stmt.query([])?;
    let mut tables: Vec<(String, Vec<Column>)> = Vec::new();
    while let Some(row) = rows.next()? {
        let table: String = row.get(0)?;
        let column = Column {
            name: row.get(1)?,
            blob_affinity: record::is_blob_affinity(&row.get::<_, String>(2)?),
        };
        match tables.last_mut() {
            Some((last, columns)) if *last == table => columns.push(column),
            _ => tables.push((table, vec![column])),
        }
    }
    Ok(tables)
}

/// The value of column `i` of `row` as a [`Cell`], borrowing its bytes.
pub fn cell<'r>(row: &'r rusqlite::Row<'_>, i: usize) -> Result<Cell<'r>> {
    Ok(match row.get_ref(i)? {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(v) => Cell::Integer(v),
        ValueRef::Real(v) => Cell::Real(v),
        ValueRef::Text(t) => Cell::Text(Cow::Borrowed(t)),
        ValueRef::Blob(b) => Cell::Blob(Cow::Borrowed(b)),
    })
}

/// Quotes an SQL identifier with double quotes.
pub fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The visible columns of `table` with their affinity, in table order.
pub fn table_columns(conn: &Connection, table: &str) -> Result<Vec<Column>> {
    let mut stmt = conn.prepare("SELECT name, type FROM pragma_table_info(?1) ORDER BY cid")?;
    let columns = stmt.query_map([table], |r| {
        let declared: String = r.get(1)?;
        Ok(Column {
            name: r.get(0)?,
            blob_affinity: record::is_blob_affinity(&declared),
        })
    })?;
    Ok(columns.collect::<rusqlite::Result<_>>()?)
}

/// Binds a [`Cell`] to a statement parameter, bytes as they are (text that
/// is not UTF-8 included).
pub struct Bind<'a, 'c>(pub &'a Cell<'c>);

impl rusqlite::ToSql for Bind<'_, '_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            Cell::Null => ValueRef::Null,
            Cell::Integer(v) => ValueRef::Integer(*v),
            Cell::Real(v) => ValueRef::Real(*v),
            Cell::Text(t) => ValueRef::Text(t),
            Cell::Blob(b) => ValueRef::Blob(b),
        }))
    }
}
