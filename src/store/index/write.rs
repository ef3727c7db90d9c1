//! Writing rows into the index: one transaction, a new index created
//! whole under a temporary name, leftovers of killed runs cleared.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
use crate::store::lock::try_flock;
use crate::store::sqlite::{self, Bind};
use crate::stream::record::Column;

use super::reader::read_row;
use super::{path, IndexRow, Summary, DDL, LATER_COLUMNS, TABLE};

/// What to do with one conversation's row.
#[derive(Clone, Debug)]
pub enum Change {
    /// Put this row in place of the conversation's (the row stream's own).
    Put(IndexRow),
    /// Bring an existing row up to date with the conversation when it
    /// disagrees; never create one.
    Refresh(Summary),
    /// Write the derived row when there is none, refresh a stale one
    /// (`agy-pack --reindex`).
    Reindex(Summary),
    /// As `Reindex`, for a root that had no index: one is made as the agy
    /// of today makes it on start (`user_version` 3, with `raw_summary`
    /// and `group_id`).
    Create(Summary),
}

/// What [`apply`] did to each conversation's row, in the order given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The row was already what it should be (or none was wanted).
    Unchanged,
    /// A new row.
    Added,
    /// An existing row replaced.
    Updated,
}

/// Applies `changes` to the index of `root` in one transaction, waiting up
/// to `busy` for other connections to let go of it. A conversation not
/// named keeps its row byte for byte. When the root has no index and a
/// change wants a row, the index is created whole (agy 1.1.16's DDL, plus
/// the later columns the first row brings) under a temporary name and
/// linked into place, so a killed run never leaves half an index.
pub fn apply(root: &Path, changes: &[(String, Change)], busy: Duration) -> Result<Vec<Applied>> {
    let path = path(root);
    let fail = |e: Error| e.context(path.display());
    if !index_exists(&path)? {
        if first_new_row(changes).is_none() {
            return Ok(vec![Applied::Unchanged; changes.len()]);
        }
        if let Some(applied) = create(root, changes, busy).map_err(fail)? {
            return Ok(applied);
        }
    }
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .map_err(|e| fail(e.into()))?;
    conn.busy_timeout(busy).map_err(|e| fail(e.into()))?;
    write_rows(&conn, changes).map_err(|e| {
        let e = fail(e);
        match e.message().contains("database is locked") {
            true => e.context(format!(
                "another program held the index for more than {} seconds",
                busy.as_secs()
            )),
            false => e,
        }
    })
}

fn index_exists(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(meta.len() > 0 || !meta.is_file()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

/// The row that decides the shape of an index to create: the first one a
/// change would add.
fn first_new_row(changes: &[(String, Change)]) -> Option<IndexRow> {
    changes.iter().find_map(|(id, change)| match change {
        Change::Put(row) => Some(row.clone()),
        Change::Reindex(summary) => Some(summary.row(id)),
        Change::Create(summary) => Some(summary.row_v3(id)),
        Change::Refresh(_) => None,
    })
}

static TEMP_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Creates the index with `changes` applied, under a temporary name, and
/// links it into place; `None` when another program created one first
/// (the caller then writes into that one).
fn create(
    root: &Path,
    changes: &[(String, Change)],
    busy: Duration,
) -> Result<Option<Vec<Applied>>> {
    let tmp = root.join(format!(
        "{TEMP_PREFIX}{}-{}{TEMP_SUFFIX}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    // Locked while it is being built, so that a later run can tell the
    // file of a run that died (its lock is gone) from one being built.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| Error::io(tmp.display(), e))?;
    if !try_flock(&lock).map_err(|e| Error::io(tmp.display(), e))? {
        return Err(Error::data(format!(
            "{}: locked by another process",
            tmp.display()
        )));
    }
    let result = (|| -> Result<Option<Vec<Applied>>> {
        let conn = Connection::open(&tmp)?;
        conn.busy_timeout(busy)?;
        let applied = write_rows(&conn, changes)?;
        conn.close().map_err(|(_, e)| Error::from(e))?;
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(tmp.display(), e))?;
        // link(2) never replaces: the index another program made in the
        // meantime wins, and ours is thrown away.
        match std::fs::hard_link(&tmp, path(root)) {
            Ok(()) => Ok(Some(applied)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
            Err(e) => Err(Error::io(path(root).display(), e)),
        }
    })();
    let _ = std::fs::remove_file(sqlite::sidecar(&tmp, "-journal"));
    let _ = std::fs::remove_file(&tmp);
    drop(lock);
    result
}

/// The names of the index's temporary files: the prefix and suffix around
/// `PID-N`.
const TEMP_PREFIX: &str = ".conversation_summaries.db.agy-pack.";
const TEMP_SUFFIX: &str = ".tmp";

/// Removes the temporary index files of runs that died while building one
/// (their lock is gone with them); a file a live run holds is left alone.
/// Returns a line for each file removed, and the errors met.
pub fn clear_leftovers(root: &Path) -> Vec<Result<String>> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => return vec![Err(Error::io(root.display(), e))],
    };
    for entry in entries {
        let name = match entry {
            Ok(entry) => entry.file_name(),
            Err(e) => {
                out.push(Err(Error::io(root.display(), e)));
                continue;
            }
        };
        let Some(name) = name.to_str() else { continue };
        let ours = name
            .strip_prefix(TEMP_PREFIX)
            .and_then(|rest| rest.strip_suffix(TEMP_SUFFIX))
            .is_some_and(|pid_n| {
                !pid_n.is_empty() && pid_n.bytes().all(|b| b.is_ascii_digit() || b == b'-')
            });
        if !ours {
            continue;
        }
        let path = root.join(name);
        let cleared = (|| -> std::io::Result<bool> {
            let file = std::fs::OpenOptions::new().write(true).open(&path)?;
            if !try_flock(&file)? {
                return Ok(false);
            }
            match std::fs::remove_file(sqlite::sidecar(&path, "-journal")) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            std::fs::remove_file(&path)?;
            Ok(true)
        })();
        match cleared {
            Ok(true) => out.push(Ok(format!(
                "removed {}, an index a killed agy-pack was building",
                path.display()
            ))),
            Ok(false) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => out.push(Err(Error::io(path.display(), e))),
        }
    }
    out
}

/// agy 1.1.16's table and indexes, the later columns `shape` has, and
/// its `user_version`, inside the caller's transaction.
fn create_schema(conn: &Connection, shape: &IndexRow) -> Result<()> {
    for sql in DDL {
        conn.execute_batch(sql)?;
    }
    for (name, definition) in LATER_COLUMNS {
        if shape.get(name).is_some() {
            conn.execute_batch(&format!(
                "ALTER TABLE {TABLE} ADD COLUMN {name} {definition}"
            ))?;
        }
    }
    conn.pragma_update(None, "user_version", shape.user_version)?;
    Ok(())
}

/// Writes the rows `changes` want, in one immediate transaction. An index
/// database without the table (agy creates both lazily) gets it first,
/// in the same transaction, when a row is to be written.
fn write_rows(conn: &Connection, changes: &[(String, Change)]) -> Result<Vec<Applied>> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| -> Result<Vec<Applied>> {
        if sqlite::table_columns(conn, TABLE)?.is_empty() {
            match first_new_row(changes) {
                Some(shape) => create_schema(conn, &shape)?,
                None => return Ok(vec![Applied::Unchanged; changes.len()]),
            }
        }
        let columns = sqlite::table_columns(conn, TABLE)?;
        let user_version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let mut applied = Vec::with_capacity(changes.len());
        for (id, change) in changes {
            let old = read_row(conn, &columns, user_version, id)?;
            let new = match (change, &old) {
                (Change::Put(row), _) => Some(row.clone()),
                (
                    Change::Refresh(summary) | Change::Reindex(summary) | Change::Create(summary),
                    Some(old),
                ) => (!summary.agrees(old)).then(|| summary.refresh(old)),
                (Change::Reindex(summary), None) => Some(summary.row(id)),
                (Change::Create(summary), None) => Some(summary.row_v3(id)),
                (Change::Refresh(_), None) => None,
            };
            // A derived row in an index that has `raw_summary`: the
            // summary made from the database.
            let new = new.map(|mut row| {
                if let Change::Reindex(Summary {
                    raw_summary: Some(raw),
                    ..
                }) = change
                {
                    row.put_raw_summary(raw);
                }
                row
            });
            let Some(new) = new else {
                applied.push(Applied::Unchanged);
                continue;
            };
            new.check_owner(id)?;
            if old
                .as_ref()
                .is_some_and(|old| same_cells(old, &new, &columns))
            {
                applied.push(Applied::Unchanged);
                continue;
            }
            conn.execute(
                &format!("DELETE FROM {TABLE} WHERE conversation_id = ?1"),
                [id],
            )?;
            insert(conn, &columns, &new).map_err(|e| e.context(format!("row of {id}")))?;
            applied.push(match old {
                Some(_) => Applied::Updated,
                None => Applied::Added,
            });
        }
        Ok(applied)
    })();
    match result {
        Ok(applied) => {
            conn.execute_batch("COMMIT")?;
            Ok(applied)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Whether `new`, written into a table of `columns`, would store what
/// `old` holds.
fn same_cells(old: &IndexRow, new: &IndexRow, columns: &[Column]) -> bool {
    columns.iter().all(
        |column| match (old.get(&column.name), new.get(&column.name)) {
            (Some(a), Some(b)) => {
                a.to_cell(column.blob_affinity).ok() == b.to_cell(column.blob_affinity).ok()
            }
            _ => false,
        },
    )
}

/// Inserts the columns of `row` that the table has (a row from a newer
/// agy may bring more; the table's own agy does not know them).
fn insert(conn: &Connection, columns: &[Column], row: &IndexRow) -> Result<()> {
    let mut names = Vec::new();
    let mut cells = Vec::new();
    for (name, value) in &row.cells {
        let Some(column) = columns.iter().find(|c| c.name == *name) else {
            continue;
        };
        cells.push(
            value
                .to_cell(column.blob_affinity)
                .map_err(|e| e.context(format!("column {name}")))?,
        );
        names.push(sqlite::quote_identifier(name));
    }
    let marks = vec!["?"; cells.len()].join(",");
    let sql = format!("INSERT INTO {TABLE} ({}) VALUES ({marks})", names.join(","));
    let mut stmt = conn.prepare(&sql)?;
    for (i, cell) in cells.iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, Bind(cell))?;
    }
    stmt.raw_execute()?;
    Ok(())
}
