//! The SQLite side: agy's schema, reading a conversation database into row
//! records, and writing row records into a new database.

/// The schema agy 1.0.16 writes (FORMAT.md 2.1, copied byte-for-byte from
/// real databases): `(type, name, sql)` in `sqlite_master` order. A stream
/// without schema records is packed with this.
pub const AGY_SCHEMA: &[(&str, &str, &str)] = &[
    ("table", "trajectory_meta", "CREATE TABLE `trajectory_meta` (`trajectory_id` text,`cascade_id` text,`trajectory_type` integer,`source` integer,PRIMARY KEY (`trajectory_id`))"),
    ("table", "steps", "CREATE TABLE `steps` (`idx` integer,`step_type` integer NOT NULL DEFAULT 0,`status` integer NOT NULL DEFAULT 0,`has_subtrajectory` numeric NOT NULL DEFAULT false,`metadata` blob,`error_details` blob,`permissions` blob,`task_details` blob,`render_info` blob,`step_payload` blob,`step_format` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))"),
    ("table", "gen_metadata", "CREATE TABLE `gen_metadata` (`idx` integer,`data` blob,`size` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))"),
    ("table", "executor_metadata", "CREATE TABLE `executor_metadata` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))"),
    ("table", "parent_references", "CREATE TABLE `parent_references` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))"),
    ("table", "trajectory_metadata_blob", "CREATE TABLE `trajectory_metadata_blob` (`id` text DEFAULT \"main\",`data` blob,PRIMARY KEY (`id`))"),
    ("table", "battle_mode_infos", "CREATE TABLE `battle_mode_infos` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))"),
    ("index", "idx_steps_status", "CREATE INDEX `idx_steps_status` ON `steps`(`status`)"),
    ("index", "idx_steps_step_type", "CREATE INDEX `idx_steps_step_type` ON `steps`(`step_type`)"),
];

/// The columns of one of agy's tables, read from [`AGY_SCHEMA`] so the
/// schema stays the one place that says what they are and which hold blobs.
/// Empty for a table agy's schema does not have.
pub fn agy_columns(table: &str) -> Vec<Column> {
    let Some((_, _, sql)) = AGY_SCHEMA
        .iter()
        .find(|(object_type, name, _)| *object_type == "table" && *name == table)
    else {
        return Vec::new();
    };
    let (Some(open), Some(close)) = (sql.find('('), sql.rfind(')')) else {
        return Vec::new();
    };
    let mut columns = Vec::new();
    let mut depth = 0;
    let mut start = open + 1;
    let body = &sql[..close];
    for (i, c) in body.char_indices().skip(open + 1) {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                columns.extend(column_definition(&body[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    columns.extend(column_definition(&body[start..]));
    columns
}

/// The columns of every table in `schema` when each is created by the very
/// statement agy's schema has for it (as in every agy database), without
/// asking SQLite: its `pragma_table_info` query cost a conversation of 40
/// steps a tenth of agy-dump's instructions. `None` when any table is
/// another's, for [`read_columns`] to read.
fn agy_tables_columns(schema: &[SchemaObject]) -> Option<Vec<(String, Vec<Column>)>> {
    static AGY: std::sync::OnceLock<Vec<(&str, &str, Vec<Column>)>> = std::sync::OnceLock::new();
    let agy = AGY.get_or_init(|| {
        AGY_SCHEMA
            .iter()
            .filter(|(object_type, _, _)| *object_type == "table")
            .map(|(_, name, sql)| (*name, *sql, agy_columns(name)))
            .collect()
    });
    schema
        .iter()
        .filter(|object| object.object_type == "table")
        .map(|object| {
            agy.iter()
                .find(|(name, sql, _)| *name == object.name && *sql == object.sql)
                .map(|(name, _, columns)| (name.to_string(), columns.clone()))
        })
        .collect()
}

/// `` `name` type … `` as a column; a table constraint (`PRIMARY KEY (…)`)
/// is none.
fn column_definition(definition: &str) -> Option<Column> {
    let rest = definition.trim().strip_prefix('`')?;
    let (name, rest) = rest.split_once('`')?;
    let declared = rest.split_whitespace().next().unwrap_or("");
    Some(Column {
        name: name.to_string(),
        blob_affinity: record::is_blob_affinity(declared),
    })
}

/// `PRAGMA user_version` of every agy database seen so far.
pub const AGY_USER_VERSION: i64 = 1;

/// The columns of agy's `steps` table, in order.
pub const STEPS_COLUMNS: &[&str] = &[
    "idx",
    "step_type",
    "status",
    "has_subtrajectory",
    "metadata",
    "error_details",
    "permissions",
    "task_details",
    "render_info",
    "step_payload",
    "step_format",
];

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::vfs;
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

/// `path` with `suffix` appended to its file name: a database's `-wal`,
/// `-shm` or `-journal`.
pub(crate) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Builds a `file:` URI for `path` with `query`, escaping what URIs need.
fn file_uri(path: &Path, query: &str) -> Result<String> {
    let absolute = std::path::absolute(path).map_err(|e| Error::io(path.display(), e))?;
    let text = absolute
        .to_str()
        .ok_or_else(|| Error::data(format!("{}: path is not valid UTF-8", absolute.display())))?;
    let mut uri = String::from("file:");
    for b in text.bytes() {
        match b {
            b'?' | b'#' | b'%' => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(b as char),
        }
    }
    uri.push('?');
    uri.push_str(query);
    Ok(uri)
}

/// A database opened read-only without changing it, its sidecars or its
/// directory (see [`ReadOnly::open`] for how).
pub struct ReadOnly {
    pub conn: Connection,
    path: PathBuf,
    /// What the files looked like before the read, when no lock of the
    /// read keeps a writer from changing them: checked again by
    /// [`ReadOnly::check_unchanged`].
    before: Option<Fingerprint>,
    /// Opened through the `agy-ro` VFS to read a WAL.
    wal: bool,
}

/// What a writer that started during an unlocked read would have changed:
/// the database file (a checkpoint writes into it) and the header of its
/// WAL (a restarted WAL gets new salts before any frame is overwritten).
/// Frames appended to the WAL do not matter: the read never sees them.
#[derive(Debug, PartialEq, Eq)]
struct Fingerprint {
    db_len: u64,
    db_modified: Option<std::time::SystemTime>,
    wal_header: Option<Vec<u8>>,
}

impl Fingerprint {
    /// The database's length and time, and the first 32 bytes of its WAL
    /// when the read is to use it (`wal`).
    fn take(path: &Path, wal: bool) -> std::io::Result<Fingerprint> {
        use std::io::Read;
        let meta = std::fs::metadata(path)?;
        let mut wal_header = None;
        if wal {
            let mut header = Vec::with_capacity(32);
            match std::fs::File::open(sidecar(path, "-wal")) {
                Ok(wal) => wal.take(32).read_to_end(&mut header)?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
                Err(e) => return Err(e),
            };
            wal_header = Some(header);
        }
        Ok(Fingerprint {
            db_len: meta.len(),
            db_modified: meta.modified().ok(),
            wal_header,
        })
    }
}

impl ReadOnly {
    /// Opens `path` for reading, in the shape its sidecars say:
    /// - a `-wal` and a `-shm` (a live agy, or one that was killed): through
    ///   the `agy-ro` VFS ([`super::vfs`]), which maps the `-shm` read-only,
    ///   as `readonly_shm` does: the read takes part in WAL locking, so a
    ///   live writer keeps clear of the frames it reads, and a killed one's
    ///   WAL is read into SQLite's heap;
    /// - a non-empty `-wal` and no `-shm` (agy exited: FORMAT.md 15.6):
    ///   through the same VFS, which then has SQLite build the WAL index
    ///   in its heap from the `-wal`; no file is created or written;
    /// - otherwise there are no rows outside the database file: a WAL
    ///   database is opened `immutable`; a rollback-mode one is read under
    ///   SQLite's locks (which create nothing) when `lock` says a live
    ///   writer may be changing it (agy's index), else `immutable` too.
    ///
    /// The two reads that hold no lock a writer would see (immutable, and
    /// a WAL without its `-shm`) note what the files looked like first, for
    /// [`ReadOnly::check_unchanged`].
    pub fn open(path: &Path, lock: bool) -> Result<ReadOnly, OpenError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let wal_len = std::fs::metadata(sidecar(path, "-wal")).map(|m| m.len());
        let shm = sidecar(path, "-shm").exists();
        let io = |e| OpenError::Failed(Error::io(path.display(), e));
        if matches!(wal_len, Ok(len) if len > 0 || shm) {
            vfs::register().map_err(|e| OpenError::Failed(Error::data(e)))?;
            let before = (!shm)
                .then(|| Fingerprint::take(path, true))
                .transpose()
                .map_err(io)?;
            let uri = file_uri(path, "mode=ro&readonly_shm=1").map_err(OpenError::Failed)?;
            return Ok(ReadOnly {
                conn: Connection::open_with_flags_and_vfs(uri, flags, vfs::NAME)?,
                path: path.to_path_buf(),
                before,
                wal: true,
            });
        }
        // A rollback-mode database is read under SQLite's locks, which
        // create nothing; a WAL one without sidecars has no live writer.
        let immutable = !lock || is_wal_file(path);
        let query = match immutable {
            false => "mode=ro",
            true => "mode=ro&immutable=1",
        };
        let before = immutable
            .then(|| Fingerprint::take(path, false))
            .transpose()
            .map_err(io)?;
        let uri = file_uri(path, query).map_err(OpenError::Failed)?;
        Ok(ReadOnly {
            conn: Connection::open_with_flags(uri, flags)?,
            path: path.to_path_buf(),
            before,
            wal: false,
        })
    }

    /// Fails when the database changed since it was opened without a lock
    /// that would have kept a writer off: an agy that started on it during
    /// the read may have checkpointed into the file or restarted its WAL,
    /// so what was read may mix two states. (A WAL read through its `-shm`
    /// is protected by its read lock, and is not checked.)
    pub fn check_unchanged(&self) -> Result<()> {
        let Some(before) = &self.before else {
            return Ok(());
        };
        // A -shm that appeared between the look and the read was mapped:
        // its locks protected the read.
        if self.wal && !vfs::read_without_shm(&self.conn) {
            return Ok(());
        }
        let now = Fingerprint::take(&self.path, before.wal_header.is_some())
            .map_err(|e| Error::io(self.path.display(), e))?;
        if now != *before {
            return Err(Error::data(
                "it changed while it was read (an agy opened it): the records may mix its old and new state; dump it again",
            ));
        }
        Ok(())
    }
}

/// Whether the database header says WAL mode (file format versions 2 at
/// bytes 18 and 19); a file too short to tell is not.
fn is_wal_file(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| header[18] == 2 && header[19] == 2)
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

    /// Calls `emit` with each row of `table` in rowid (or primary key) order.
    pub fn each_row(
        &self,
        table: &str,
        mut emit: impl FnMut(&[Column], &rusqlite::Row<'_>) -> Result<()>,
    ) -> Result<()> {
        let columns = match self.columns.iter().find(|(t, _)| t == table) {
            Some((_, columns)) => columns.as_slice(),
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
            emit(columns, row)?;
        }
        Ok(())
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

/// The visible columns of every table, in one query: preparing statements
/// is most of the cost of dumping a small conversation.
/// The columns agy-dump and agy-decode cannot do without: a step's `idx`
/// numbers the conversation and `trajectory_meta.cascade_id` names it.
/// Any other column or table may be missing or new.
const REQUIRED_COLUMNS: &[(&str, &str)] = &[("steps", "idx"), ("trajectory_meta", "cascade_id")];

/// Whether `tables` (as [`read_columns`] lists them) are an agy
/// conversation's, and if not, why. agy-dump skips a database that is not;
/// agy-pack refuses to write one, so that what it writes always dumps.
pub fn check_agy_shape(tables: &[(String, Vec<Column>)]) -> std::result::Result<(), String> {
    for (table, column) in REQUIRED_COLUMNS {
        let Some((_, columns)) = tables.iter().find(|(t, _)| t == table) else {
            return Err(format!("no {table} table"));
        };
        if !columns.iter().any(|c| c.name == *column) {
            return Err(format!("no {column} column in table {table}"));
        }
    }
    Ok(())
}

/// Every table's columns in `sqlite_master` order, SQLite's own excluded.
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

/// Checks that `sql` is one `CREATE TABLE` or `CREATE [UNIQUE] INDEX`
/// statement of the declared `object_type`; a stream may not run anything
/// else (triggers, views, ATTACH, pragmas, several statements).
pub fn check_schema_sql(object_type: &str, sql: &str) -> Result<()> {
    let words: Vec<String> = sql
        .split_ascii_whitespace()
        .take(3)
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let statement_type = match words.as_slice() {
        ["CREATE", "TABLE", ..] => "table",
        ["CREATE", "INDEX", ..] | ["CREATE", "UNIQUE", "INDEX"] => "index",
        _ => {
            return Err(Error::data(
                "only CREATE TABLE and CREATE [UNIQUE] INDEX statements are accepted",
            ))
        }
    };
    if has_second_statement(sql) {
        return Err(Error::data("schema SQL holds more than one statement"));
    }
    if statement_type != object_type {
        return Err(Error::data(format!(
            "schema record of type {object_type:?} holds a CREATE {} statement",
            statement_type.to_ascii_uppercase()
        )));
    }
    Ok(())
}

/// True when something other than blanks and comments follows the first
/// `;` that is outside quotes and comments.
fn has_second_statement(sql: &str) -> bool {
    let bytes = sql.as_bytes();
    let mut i = 0;
    let mut ended = false;
    while i < bytes.len() {
        let b = bytes[i];
        let closing = match b {
            b'\'' => Some(b'\''),
            b'"' => Some(b'"'),
            b'`' => Some(b'`'),
            b'[' => Some(b']'),
            _ => None,
        };
        if let Some(close) = closing {
            if ended {
                return true;
            }
            i += 1;
            while i < bytes.len() && bytes[i] != close {
                i += 1;
            }
            i += 1;
        } else if bytes[i..].starts_with(b"--") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            i = match sql[i + 2..].find("*/") {
                Some(end) => i + 2 + end + 2,
                None => bytes.len(),
            };
        } else if b == b';' {
            ended = true;
            i += 1;
        } else {
            if ended && !b.is_ascii_whitespace() {
                return true;
            }
            i += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAL database with one row in its file and two in its WAL, left as
    /// an exited agy leaves it (no -shm), in a directory of its own.
    fn exited_wal_db(name: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("agy-sqlite-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("live")).unwrap();
        let live = Connection::open(dir.join("live/c.db")).unwrap();
        live.pragma_update(None, "journal_mode", "WAL").unwrap();
        live.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        live.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        live.execute_batch("INSERT INTO t VALUES (2); INSERT INTO t VALUES (3);")
            .unwrap();
        for suffix in ["", "-wal"] {
            std::fs::copy(
                dir.join(format!("live/c.db{suffix}")),
                dir.join(format!("c.db{suffix}")),
            )
            .unwrap();
        }
        (dir.clone(), dir.join("c.db"))
    }

    #[test]
    fn a_writer_that_starts_during_an_unlocked_read_is_noticed() {
        let count = |conn: &Connection| -> i64 {
            conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                .unwrap()
        };
        // The WAL read into SQLite's heap, and an immutable read.
        for checkpointed in [false, true] {
            let (dir, db) = exited_wal_db(&format!("unchanged-{checkpointed}"));
            if checkpointed {
                let c = Connection::open(&db).unwrap();
                count(&c);
                c.close().unwrap();
                assert!(!sidecar(&db, "-wal").exists());
            }
            let reader = ReadOnly::open(&db, false).ok().unwrap();
            reader.conn.execute_batch("BEGIN").unwrap();
            assert_eq!(count(&reader.conn), 3);
            assert_eq!(vfs::read_without_shm(&reader.conn), !checkpointed);
            reader.check_unchanged().unwrap();
            // An agy opens it meanwhile, writes and checkpoints.
            let writer = Connection::open(&db).unwrap();
            writer.execute_batch("INSERT INTO t VALUES (4)").unwrap();
            writer
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                .unwrap();
            assert_eq!(count(&reader.conn), 3, "one snapshot");
            let err = reader.check_unchanged().unwrap_err().to_string();
            assert!(err.contains("changed while it was read"), "{err}");
            drop(writer);
            drop(reader);
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    #[test]
    fn columns_come_from_the_schema() {
        let steps = agy_columns("steps");
        let names: Vec<&str> = steps.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, STEPS_COLUMNS);
        let blobs: Vec<&str> = steps
            .iter()
            .filter(|c| c.blob_affinity)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            blobs,
            [
                "metadata",
                "error_details",
                "permissions",
                "task_details",
                "render_info",
                "step_payload"
            ]
        );
        let blob = agy_columns("trajectory_metadata_blob");
        assert_eq!(
            blob,
            [
                Column {
                    name: "id".into(),
                    blob_affinity: false
                },
                Column {
                    name: "data".into(),
                    blob_affinity: true
                },
            ]
        );
        assert_eq!(agy_columns("trajectory_meta").len(), 4);
        assert!(agy_columns("nonesuch").is_empty());
    }

    #[test]
    fn agy_tables_have_the_columns_sqlite_reports() {
        let conn = Connection::open_in_memory().unwrap();
        for (_, _, sql) in AGY_SCHEMA {
            conn.execute(sql, []).unwrap();
        }
        let schema = read_schema(&conn).unwrap();
        let known = agy_tables_columns(&schema).expect("agy's own schema");
        assert_eq!(known, read_columns(&conn).unwrap());
        assert_eq!(known.len(), 7);
        // A table agy's schema does not have, or one written otherwise,
        // is left to SQLite.
        conn.execute("CREATE TABLE extra (a, b BLOB)", []).unwrap();
        assert!(agy_tables_columns(&read_schema(&conn).unwrap()).is_none());
        let other = Connection::open_in_memory().unwrap();
        other
            .execute("CREATE TABLE `trajectory_meta` (`cascade_id` text)", [])
            .unwrap();
        assert!(agy_tables_columns(&read_schema(&other).unwrap()).is_none());
    }

    #[test]
    fn schema_sql_is_one_create_statement() {
        for (object_type, name, sql) in AGY_SCHEMA {
            check_schema_sql(object_type, sql).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        check_schema_sql("table", "CREATE TABLE t (a DEFAULT ';x'); -- done").unwrap();
        check_schema_sql("index", "create unique index i on t(a)").unwrap();
        for (object_type, sql) in [
            ("table", "CREATE TABLE a(x); DROP TABLE b"),
            ("table", "CREATE TABLE a(x);/* */ ATTACH 'x' AS y"),
            (
                "table",
                "CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; END",
            ),
            ("table", "CREATE VIEW v AS SELECT 1"),
            ("table", "ATTACH DATABASE '/tmp/x' AS x"),
            ("table", "PRAGMA writable_schema = 1"),
            ("index", "CREATE TABLE a(x)"),
        ] {
            assert!(check_schema_sql(object_type, sql).is_err(), "{sql}");
        }
    }
}
