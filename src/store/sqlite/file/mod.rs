//! A conversation database read straight from its file and WAL, without
//! SQLite, for agy-dump.
//!
//! Through SQLite, each conversation paid for opening a connection,
//! parsing the whole schema, preparing a statement per table and, with a
//! WAL, reading every frame in recovery and then again: on a store of
//! 2,000 small conversations that fixed cost was most of agy-dump's own
//! CPU. Reading agy's seven tables needs far less: the file header, the
//! WAL's committed frames, and each table's b-tree in rowid order.
//!
//! [`Snapshot::open`] takes a database only in the shapes it knows
//! through and through, and declines the rest (`None`), which SQLite then
//! reads as before ([`super::Source`]):
//! - every table is one of agy's, created by the very statement agy's
//!   schema has ([`super::AGY_SCHEMA`]), so each column's place, default
//!   and rowid alias are known; UTF-8 text, SQLite's standard b-tree fill
//!   fractions;
//! - no live connection: a `-shm` that a process holds (a running agy) is
//!   read through SQLite, whose locks keep the writer off the frames read.
//!   A `-shm` nobody holds (a killed agy) is not trusted, as SQLite does
//!   not trust it: the WAL is read whole, as recovery does.
//!
//! Like SQLite's reads without a lock, the read notes the files first
//! and [`Snapshot::check_unchanged`] fails if an agy started on them meanwhile.
//! A damaged tree is reported with its page, never followed in a loop.
//! `AGY_DUMP_READER=sqlite` sends every database through SQLite, for
//! comparing the two.

mod btree;
mod checksum;
mod record;
pub(super) mod wal;

pub use checksum::{checksum_at as wal_checksum_at, serial as wal_checksum_serial};

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::read_only::{sidecar, Fingerprint};
use super::{check_agy_shape, EmitRow, SchemaObject, Tables, AGY_SCHEMA};
use crate::error::{Error, Result};
use crate::store::lock;
use crate::stream::record::{Cell, Column};

use btree::Pages;
use record::{Default, Layout};

/// A consistent snapshot of a conversation database, read from its files.
pub struct Snapshot {
    path: PathBuf,
    pages: Pages,
    user_version: i64,
    schema: Vec<SchemaObject>,
    tables: Vec<Table>,
    before: Fingerprint,
}

/// One of agy's tables in this database.
struct Table {
    name: String,
    root: u32,
    columns: &'static [Column],
    layout: &'static Layout,
}

/// [`super::EmitRow`] that may stop the walk.
type EachRow<'e> = dyn FnMut(&[Column], &[Cell<'_>]) -> Result<ControlFlow<()>> + 'e;

/// The environment variable that sends every database through SQLite.
const READER: &str = "AGY_DUMP_READER";

impl Snapshot {
    /// Opens `path` when it is in a shape this reader takes (see the
    /// module's documentation); `None` when SQLite is to read it, for any
    /// reason, including a file that cannot be read at all (SQLite then
    /// says why).
    ///
    /// Asking whether the `-shm` is held opens and closes it, and closing
    /// any descriptor of a file drops every POSIX lock the process holds on
    /// it: not to be called while this process has an SQLite connection to
    /// the same database open (agy-dump has none), whose locks it would drop.
    pub fn open(path: &Path) -> Option<Snapshot> {
        if std::env::var_os(READER).is_some_and(|v| v == "sqlite") {
            return None;
        }
        let wal_len = std::fs::metadata(sidecar(path, "-wal")).map_or(0, |m| m.len());
        match std::fs::File::open(sidecar(path, "-shm")) {
            // A live connection holds a read lock on the -shm's "dead man
            // switch" byte for as long as it is open (SQLite's unix VFS).
            Ok(shm) if !lock::posix_lock_held(&shm, SHM_DMS, 1).unwrap_or(true) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // Held, or there and not to be asked: SQLite's locks decide.
            _ => return None,
        }
        let with_wal = wal_len > 0;
        let before = Fingerprint::take(path, with_wal).ok()?;
        let db = std::fs::File::open(path).ok()?;
        let db_len = db.metadata().ok()?.len();
        let mut header = [0u8; 100];
        std::os::unix::fs::FileExt::read_exact_at(&db, &mut header, 0).ok()?;
        let header = Header::read(&header)?;
        // A database in rollback mode does not read its WAL.
        if with_wal && !header.wal_mode {
            return None;
        }
        let (wal_file, wal) = match with_wal {
            true => {
                let file = std::fs::File::open(sidecar(path, "-wal")).ok()?;
                let index = wal::read(&file, wal_len, header.page_size)?;
                (Some(file), index)
            }
            false => (None, wal::Index::default()),
        };
        let in_file = db_len.div_ceil(header.page_size as u64);
        let count = match wal.db_pages {
            Some(pages) => pages,
            None => u32::try_from(in_file).ok()?,
        };
        let mut pages = Pages {
            db,
            wal_file,
            wal,
            page_size: header.page_size,
            usable: header.usable,
            count,
            ahead: std::default::Default::default(),
        };
        // Page 1 again, as the snapshot has it: the WAL may hold a newer one.
        let mut first = vec![0u8; header.page_size];
        pages.read(1, &mut first).ok()?;
        let header = Header::read(&first[..100])?;
        let same_pages = header.page_size == pages.page_size && header.usable == pages.usable;
        if !same_pages || !header.utf8 || !(1..=4).contains(&header.schema_format) {
            return None;
        }
        // SQLite's own check: a header that claims more pages than the
        // file (or WAL) holds is damaged. A stale count is not used.
        if let Some(claimed) = header.pages {
            if claimed > pages.count {
                return None;
            }
            pages.count = claimed;
        }
        let (schema, tables) = read_schema(&pages)?;
        let columns: Vec<(String, Vec<Column>)> = tables
            .iter()
            .map(|t| (t.name.clone(), t.columns.to_vec()))
            .collect();
        check_agy_shape(&columns).ok()?;
        Some(Snapshot {
            path: path.to_path_buf(),
            pages,
            user_version: header.user_version,
            schema,
            tables,
            before,
        })
    }

    fn rows(&self, table: &str, emit: &mut EachRow<'_>) -> Result<()> {
        let Some(table) = self.tables.iter().find(|t| t.name == table) else {
            return Err(Error::data(format!("no table {table:?}")));
        };
        btree::each_row(&self.pages, table.root, |rowid, payload| {
            let cells = record::cells(payload, rowid, table.layout)
                .map_err(|e| e.context(format!("table {}", table.name)))?;
            emit(table.columns, &cells)
        })
    }
}

impl Tables for Snapshot {
    fn user_version(&self) -> Result<i64> {
        Ok(self.user_version)
    }

    fn schema(&self) -> &[SchemaObject] {
        &self.schema
    }

    fn cascade_id(&self) -> Result<Option<String>> {
        let mut id = None;
        self.rows("trajectory_meta", &mut |columns, cells| {
            let at = columns.iter().position(|c| c.name == "cascade_id");
            if let Some(Cell::Text(t)) = at.map(|i| &cells[i]) {
                id = std::str::from_utf8(t)
                    .ok()
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned);
            }
            Ok(ControlFlow::Break(()))
        })?;
        Ok(id)
    }

    fn each_row(&self, table: &str, emit: &mut EmitRow<'_>) -> Result<()> {
        self.rows(table, &mut |columns, cells| {
            emit(columns, cells).map(ControlFlow::Continue)
        })
    }

    fn each_row_prefix(&self, table: &str, columns: usize, emit: &mut EmitRow<'_>) -> Result<()> {
        let Some(found) = self.tables.iter().find(|t| t.name == table) else {
            return Err(Error::data(format!("no table {table:?}")));
        };
        let columns = columns
            .clamp(1, found.columns.len().max(1))
            .min(found.columns.len());
        btree::each_row_prefix(&self.pages, found.root, Some(columns), |rowid, payload| {
            let cells = record::first_cells(payload, rowid, found.layout, columns)
                .map_err(|e| e.context(format!("table {}", found.name)))?;
            emit(&found.columns[..columns], &cells).map(ControlFlow::Continue)
        })
    }

    /// Fails when the files changed since the snapshot was opened: an agy
    /// that started on the database meanwhile may have checkpointed into
    /// it or restarted its WAL, so what was read may mix two states.
    fn check_unchanged(&self) -> Result<()> {
        let now = Fingerprint::take(&self.path, self.before.has_wal())
            .map_err(|e| Error::io(self.path.display(), e))?;
        match now == self.before {
            true => Ok(()),
            false => Err(Error::data(
                "it changed while it was read (an agy opened it): the records may mix its old and new state; dump it again",
            )),
        }
    }
}

/// The byte of the `-shm` on which every open connection holds a shared
/// lock: `UNIX_SHM_DMS` in SQLite's os_unix.c, after the WAL index's
/// header (120 bytes) and its eight lock bytes.
const SHM_DMS: u64 = 128;

/// What this reader needs of the 100-byte database header
/// (sqlite.org/fileformat2.html, "The Database Header").
struct Header {
    page_size: usize,
    usable: usize,
    wal_mode: bool,
    /// The in-header database size, when it is valid.
    pages: Option<u32>,
    user_version: i64,
    /// The text encoding is UTF-8 (1); UTF-16 ones are SQLite's to read.
    utf8: bool,
    /// 1 to 4 for SQLite's schema formats.
    schema_format: u32,
}

impl Header {
    /// `None` for a header this reader does not take.
    fn read(bytes: &[u8]) -> Option<Header> {
        let u16_at = |i: usize| u16::from_be_bytes([bytes[i], bytes[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
        if &bytes[..16] != b"SQLite format 3\0" {
            return None;
        }
        let page_size = match u16_at(16) {
            1 => 65536,
            n => usize::from(n),
        };
        let usable = page_size.checked_sub(usize::from(bytes[20]))?;
        let wal_mode = match (bytes[18], bytes[19]) {
            (1, 1) => false,
            (2, 2) => true,
            _ => return None,
        };
        // SQLite's standard payload fractions, and sizes it can write.
        let standard =
            bytes[21..24] == [64, 32, 32] && wal::valid_page_size(page_size) && usable >= 480;
        // The size is valid when written by a SQLite that also wrote the
        // change counter it was valid for.
        let pages = Some(u32_at(28)).filter(|&n| n != 0 && u32_at(24) == u32_at(92));
        standard.then_some(Header {
            page_size,
            usable,
            wal_mode,
            pages,
            user_version: i64::from(u32_at(60) as i32),
            // Until a database holds a table, both are 0.
            utf8: u32_at(56) == 1,
            schema_format: u32_at(44),
        })
    }
}

/// The schema as [`super::Source::schema`] lists it, and the root page of
/// each table; `None` when a table is not one of agy's.
fn read_schema(pages: &Pages) -> Option<(Vec<SchemaObject>, Vec<Table>)> {
    let master = Layout {
        rowid_alias: None,
        defaults: vec![Default::Null; 5],
    };
    let mut schema = Vec::new();
    let mut tables = Vec::new();
    let mut foreign = false;
    btree::each_row(pages, 1, |rowid, payload| {
        let cells = record::cells(payload, rowid, &master)?;
        let text = |i: usize| match &cells[i] {
            Cell::Text(t) => std::str::from_utf8(t).ok(),
            _ => None,
        };
        let (Some(object_type), Some(name)) = (text(0), text(1)) else {
            foreign = true;
            return Ok(ControlFlow::Break(()));
        };
        let sql = match &cells[4] {
            Cell::Null => None,
            _ => match text(4) {
                Some(sql) => Some(sql),
                None => {
                    foreign = true;
                    return Ok(ControlFlow::Break(()));
                }
            },
        };
        // Listed as read_schema's query lists them.
        let (Some(sql), true, false) = (
            sql,
            matches!(object_type, "table" | "index"),
            name.starts_with("sqlite_"),
        ) else {
            return Ok(ControlFlow::Continue(()));
        };
        if object_type == "table" {
            let agy = agy_tables().iter().find(|t| t.name == name && t.sql == sql);
            let root = match cells[3] {
                Cell::Integer(root) => u32::try_from(root).ok(),
                _ => None,
            };
            let (Some(agy), Some(root)) = (agy, root) else {
                foreign = true;
                return Ok(ControlFlow::Break(()));
            };
            tables.push(Table {
                name: name.to_string(),
                root,
                columns: &agy.columns,
                layout: &agy.layout,
            });
        }
        schema.push(SchemaObject {
            object_type: object_type.to_string(),
            name: name.to_string(),
            sql: sql.to_string(),
        });
        Ok(ControlFlow::Continue(()))
    })
    .ok()?;
    (!foreign).then_some((schema, tables))
}

/// One of agy's tables as its `CREATE TABLE` statement lays it out.
struct AgyTable {
    name: &'static str,
    sql: &'static str,
    columns: Vec<Column>,
    layout: Layout,
}

/// agy's tables, each laid out once from [`AGY_SCHEMA`].
fn agy_tables() -> &'static [AgyTable] {
    static TABLES: OnceLock<Vec<AgyTable>> = OnceLock::new();
    TABLES.get_or_init(|| {
        AGY_SCHEMA
            .iter()
            .filter(|(object_type, _, _)| *object_type == "table")
            .map(|(_, name, sql)| AgyTable {
                name,
                sql,
                columns: super::agy_columns(name),
                layout: layout(sql),
            })
            .collect()
    })
}

/// The layout of a table created by `sql`, one of [`AGY_SCHEMA`]'s
/// statements: `` `name` type [NOT NULL] [DEFAULT value] `` per column,
/// then `PRIMARY KEY (`key`)`. A single key column declared `integer` is
/// the rowid (SQLite's rule, the declared type compared without case).
fn layout(sql: &'static str) -> Layout {
    let mut names = Vec::new();
    let mut defaults = Vec::new();
    let mut key = None;
    for definition in super::schema::definitions(sql) {
        if let Some(rest) = definition.strip_prefix("PRIMARY KEY") {
            let key_list = rest.trim().trim_matches(|c| c == '(' || c == ')');
            key = (!key_list.contains(',')).then(|| key_list.trim_matches('`'));
            continue;
        }
        let mut words = definition.split_whitespace();
        let name = words.next().unwrap_or("").trim_matches('`');
        let declared = words.next().unwrap_or("");
        let rest: Vec<&'static str> = words.collect();
        let default = rest
            .iter()
            .position(|w| w.eq_ignore_ascii_case("DEFAULT"))
            .and_then(|i| rest.get(i + 1))
            .map_or(Default::Null, |value| literal(value));
        names.push((name, declared));
        defaults.push(default);
    }
    let rowid_alias = names.iter().position(|(name, declared)| {
        Some(*name) == key && declared.eq_ignore_ascii_case("integer")
    });
    Layout {
        rowid_alias,
        defaults,
    }
}

/// A `DEFAULT` value of agy's schema as SQLite reads it: a number, `true`
/// or `false` (1 and 0), or a quoted word, which SQLite takes as text
/// where it names no column (`"main"`).
fn literal(value: &'static str) -> Default {
    if let Ok(v) = value.parse() {
        return Default::Integer(v);
    }
    match value.to_ascii_lowercase().as_str() {
        "false" => Default::Integer(0),
        "true" => Default::Integer(1),
        "null" => Default::Null,
        _ => Default::Text(value.trim_matches(|c| c == '"' || c == '\'')),
    }
}

#[cfg(test)]
mod tests;
