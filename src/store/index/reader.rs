//! Reading a conversation's row of the index as it is stored.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use crate::error::{Error, Result};
use crate::store::sqlite::{self, OpenError, ReadOnly};
use crate::stream::record::{Column, JsonCell};

use super::{path, IndexRow, BUSY_TIMEOUT, TABLE};

/// The index of a data root opened for reading, without changing it: no
/// transaction is held between reads, so agy can write to it while a long
/// dump goes on.
pub struct Reader {
    db: ReadOnly,
    columns: Vec<Column>,
    user_version: i64,
    path: PathBuf,
}

impl Reader {
    /// The index of `root`, or `None` when it has none, or no
    /// `conversation_summaries` table in it (agy creates both lazily).
    pub fn open(root: &Path) -> Result<Option<Reader>> {
        let path = path(root);
        match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() && meta.len() > 0 => {}
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path.display(), e)),
        }
        let fail = |e: Error| e.context(path.display());
        let db = match ReadOnly::open(&path, true) {
            Ok(db) => db,
            Err(OpenError::NotAgy(why)) => return Err(fail(Error::data(why))),
            Err(OpenError::Failed(e)) => return Err(fail(e)),
        };
        db.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| fail(e.into()))?;
        let columns = sqlite::table_columns(&db.conn, TABLE).map_err(fail)?;
        if columns.is_empty() {
            return Ok(None);
        }
        let user_version = db
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| fail(e.into()))?;
        Ok(Some(Reader {
            db,
            columns,
            user_version,
            path,
        }))
    }

    /// The row of conversation `id`, if the index has one.
    pub fn row(&self, id: &str) -> Result<Option<IndexRow>> {
        read_row(&self.db.conn, &self.columns, self.user_version, id)
            .map_err(|e| e.context(format!("{}: row of {id}", self.path.display())))
    }
}

/// The row of conversation `id` in an index whose table has `columns`.
pub(super) fn read_row(
    conn: &Connection,
    columns: &[Column],
    user_version: i64,
    id: &str,
) -> Result<Option<IndexRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT * FROM {TABLE} WHERE conversation_id = ?1 ORDER BY rowid LIMIT 1"
    ))?;
    let row = stmt
        .query_row([id], |row| {
            Ok(columns
                .iter()
                .enumerate()
                .map(|(i, column)| {
                    let cell = sqlite::cell(row, i)?;
                    Ok((
                        column.name.clone(),
                        JsonCell::from_cell(&cell, column.blob_affinity),
                    ))
                })
                .collect::<Result<Vec<_>>>())
        })
        .optional()?;
    Ok(row.transpose()?.map(|cells| IndexRow {
        user_version,
        cells,
    }))
}
