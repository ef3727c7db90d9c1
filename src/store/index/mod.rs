//! agy's index of conversations: `conversation_summaries.db` in the data
//! root, one table `conversation_summaries` of plain columns, one row per
//! conversation. It is the list agy's `/resume` picker shows (FORMAT.md 14
//! row 6), so a conversation written without a true row is missing from the
//! list, or listed with a step count and a last user turn it no longer has.
//!
//! agy writes rows lazily (one reader saw 1 row for 6 conversations), so a
//! missing row is normal: nothing here fails on one, and a copy never
//! invents one. What this module does:
//!
//! - reads a conversation's row as it is stored ([`Reader`]), every column
//!   `PRAGMA table_info` reports, for the row stream's `index` record;
//! - derives a row from what a conversation says of itself ([`Summary`]),
//!   by the rules of a row agy 1.1.16 accepted (FORMAT.md 14 row 7);
//! - writes rows back ([`apply`]): one transaction, waiting (busy timeout)
//!   while agy holds the database, touching no other conversation's row,
//!   creating the database with agy 1.1.16's DDL when there is none.
//!
//! Each has a file of its own: summary.rs, reader.rs, write.rs; here are
//! agy's DDL and the row they share ([`IndexRow`]).
//!
//! Imports: the ground floor and [`crate::stream`].

mod reader;
mod summary;
mod write;

pub use reader::Reader;
pub use summary::{format_time, Summary};
pub use write::{apply, clear_leftovers, Applied, Change};

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::agy::patch::{self, Rewrite};
use crate::error::{Error, Result};
use crate::store::sqlite;
use crate::stream::record::{self, Column, JsonCell, RowCells};

/// The index's file name in the data root.
pub const FILE_NAME: &str = "conversation_summaries.db";

/// The index's table.
pub const TABLE: &str = "conversation_summaries";

/// The column of an index at `user_version` 3 that holds the summary of
/// its summaries files (agy-store(5)).
pub const RAW_SUMMARY: &str = "raw_summary";

/// agy 1.1.16's DDL, in `sqlite_master` order (issue 18, FORMAT.md 14).
pub const DDL: &[&str] = &[
    r#"CREATE TABLE conversation_summaries (conversation_id text, title text NOT NULL DEFAULT "", preview text NOT NULL DEFAULT "", step_count integer NOT NULL DEFAULT 0, last_modified_time datetime NOT NULL, workspace_uris text NOT NULL, status text NOT NULL DEFAULT "", source text NOT NULL DEFAULT "", project_id text NOT NULL DEFAULT "", agent_name text NOT NULL DEFAULT "", parent_conversation_id text NOT NULL DEFAULT "", nesting_depth integer NOT NULL DEFAULT 0, battle_id text NOT NULL DEFAULT "", winning_conversation_id text NOT NULL DEFAULT "", not_fully_idle numeric NOT NULL DEFAULT false, killed numeric NOT NULL DEFAULT false, last_user_input_time datetime NOT NULL, last_user_input_step_index integer NOT NULL DEFAULT -1, app_data_dir text NOT NULL DEFAULT "", PRIMARY KEY (conversation_id))"#,
    "CREATE INDEX idx_conversation_summaries_last_user_input_time ON conversation_summaries(last_user_input_time)",
    "CREATE INDEX idx_conversation_summaries_last_modified_time ON conversation_summaries(last_modified_time)",
];

/// The columns later agy versions add to the 1.1.16 table (the 21-column
/// form, `user_version` 3), with their definitions for `ALTER TABLE`.
pub const LATER_COLUMNS: &[(&str, &str)] =
    &[("raw_summary", "BLOB"), ("group_id", "TEXT DEFAULT ''")];

/// The columns of [`DDL`]'s table declared `NOT NULL`, each with whether
/// it has a default (a row may leave those out), read from the statement
/// itself so that the two cannot disagree.
fn not_null_columns() -> impl Iterator<Item = (&'static str, bool)> {
    sqlite::definitions(DDL[0])
        .into_iter()
        .filter(|definition| definition.contains("NOT NULL"))
        .filter_map(|definition| {
            let name = definition.split(' ').next()?;
            Some((name, definition.contains(" DEFAULT ")))
        })
}

/// How long a write waits for agy (or another reader) to let go of the
/// index before it gives up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The index of the data root `root`.
pub fn path(root: &Path) -> PathBuf {
    root.join(FILE_NAME)
}

/// A conversation's row of the index: every column in table order, each
/// value in its row-stream form, and the index's `user_version`.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexRow {
    pub user_version: i64,
    pub cells: Vec<(String, JsonCell<'static>)>,
}

impl IndexRow {
    /// The row an `index` record carries, its values moved out of the
    /// record where they are its own (a preview of tens of MB is not
    /// copied).
    pub fn from_record_owned(user_version: i64, row: RowCells<'_>) -> IndexRow {
        IndexRow {
            user_version,
            cells: row
                .0
                .into_iter()
                .map(|(name, cell)| (name.into_owned(), cell.into_owned()))
                .collect(),
        }
    }

    /// The row an `index` record carries.
    pub fn from_record(user_version: i64, row: &RowCells<'_>) -> IndexRow {
        IndexRow {
            user_version,
            cells: row
                .0
                .iter()
                .map(|(name, cell)| (name.to_string(), cell.clone().into_owned()))
                .collect(),
        }
    }

    pub fn get(&self, column: &str) -> Option<&JsonCell<'static>> {
        self.cells.iter().find(|(n, _)| n == column).map(|(_, c)| c)
    }

    /// Replaces the value of `column`, if the row has it.
    pub fn set(&mut self, column: &str, value: JsonCell<'static>) {
        if let Some((_, cell)) = self.cells.iter_mut().find(|(n, _)| n == column) {
            *cell = value;
        }
    }

    /// The `conversation_id` it is the row of, when that is text.
    pub fn conversation_id(&self) -> Option<&str> {
        self.get("conversation_id").and_then(JsonCell::as_text)
    }

    /// Writes the `index` record of conversation `id`.
    pub fn write(&self, out: &mut Vec<u8>, id: &str) {
        record::write_index(
            out,
            id,
            self.user_version,
            self.cells.iter().map(|(n, c)| (n.as_str(), c)),
        );
    }

    /// Checks that the row is conversation `id`'s: its `conversation_id`
    /// names it.
    pub fn check_owner(&self, id: &str) -> Result<()> {
        match self.conversation_id() {
            Some(owner) if owner == id => Ok(()),
            Some(owner) => Err(Error::data(format!(
                "index row's conversation_id is {owner:?}, not the conversation's id {id:?}"
            ))),
            None => Err(Error::data("index row has no text conversation_id")),
        }
    }

    /// Checks that the row can be written into an index of agy's [`DDL`]:
    /// no null, given or left to the column's default, where the table
    /// refuses one. Checked before anything is written, so that a
    /// conversation is not put in place with a row its index will refuse.
    pub fn check_not_null(&self) -> Result<()> {
        for (name, has_default) in not_null_columns() {
            match self.get(name) {
                Some(JsonCell::Null) => {
                    return Err(Error::data(format!(
                        "index column {name} is null, which the index refuses"
                    )))
                }
                None if !has_default => {
                    return Err(Error::data(format!(
                        "index row has no {name}, which the index needs"
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn int(&self, column: &str) -> Option<i64> {
        self.get(column).and_then(JsonCell::as_i64)
    }

    /// The URIs its `workspace_uris` lists (a JSON list of `file://`
    /// URIs): where the index says the conversation's project is.
    pub fn workspace_uris(&self) -> Vec<String> {
        self.get("workspace_uris")
            .and_then(JsonCell::as_text)
            .and_then(|list| serde_json::from_str::<Vec<String>>(list).ok())
            .unwrap_or_default()
    }

    /// The text of `column` rewritten where it is (in `workspace_uris` the
    /// URIs inside the JSON list, escapes and all); whether it changed.
    pub fn rewrite_text(&mut self, column: &str, rewrite: &impl Rewrite) -> bool {
        let Some((_, cell)) = self.cells.iter_mut().find(|(n, _)| n == column) else {
            return false;
        };
        let (JsonCell::Plain(text) | JsonCell::Text(text)) = cell else {
            return false;
        };
        let Some(moved) = patch::rewrite_text(text.as_bytes(), rewrite) else {
            return false;
        };
        *text = Cow::Owned(String::from_utf8(moved).expect("a rewrite of UTF-8 by UTF-8"));
        true
    }

    /// The protobuf blob of `column` (`raw_summary`, a BLOB column)
    /// rewritten at every depth; whether it changed.
    pub fn rewrite_blob(&mut self, column: &str, rewrite: &impl Rewrite) -> Result<bool> {
        self.edit_blob(column, |bytes| patch::rewrite(bytes, rewrite))
    }

    /// The blob of `column` as `edit` makes it (`None`: unchanged);
    /// whether it changed.
    pub fn edit_blob(
        &mut self,
        column: &str,
        edit: impl FnOnce(&[u8]) -> Option<Vec<u8>>,
    ) -> Result<bool> {
        let Some((_, cell)) = self.cells.iter_mut().find(|(n, _)| n == column) else {
            return Ok(false);
        };
        let (JsonCell::Plain(hex) | JsonCell::Blob(hex)) = cell else {
            return Ok(false);
        };
        let bytes = record::decode_hex(hex).map_err(|e| e.context(format!("column {column}")))?;
        let Some(edited) = edit(&bytes) else {
            return Ok(false);
        };
        *hex = Cow::Owned(hex::encode(edited));
        Ok(true)
    }

    /// Empties the row's `raw_summary` (an index at `user_version` 3), for
    /// an edit that changes what it summarizes: agy-pack makes it anew
    /// from the conversation it writes. Whether the row had one.
    pub fn forget_raw_summary(&mut self) -> bool {
        let had = matches!(self.get(RAW_SUMMARY), Some(cell) if *cell != JsonCell::Null);
        self.set(RAW_SUMMARY, JsonCell::Null);
        had
    }

    /// Whether the row wants a `raw_summary` made: it has the column,
    /// empty.
    pub fn lacks_raw_summary(&self) -> bool {
        self.get(RAW_SUMMARY) == Some(&JsonCell::Null)
    }

    /// Gives the row `raw` as its `raw_summary`, adding the column when
    /// it has none (a table without it does not take it: see
    /// `write::insert`).
    pub fn put_raw_summary(&mut self, raw: &[u8]) {
        let cell = JsonCell::Plain(Cow::Owned(hex::encode(raw)));
        match self.cells.iter_mut().find(|(n, _)| n == RAW_SUMMARY) {
            Some((_, old)) => *old = cell,
            None => self.cells.push((RAW_SUMMARY.to_string(), cell)),
        }
    }
}

/// The columns of agy 1.1.16's table, read from [`DDL`]'s statement, not
/// asked of SQLite: an in-memory database made to run the statement and
/// `pragma_table_info` was a quarter of agy-encode's run on
/// examples/sample's conversation, and was made again for each
/// conversation `agy-pack --reindex` summarizes (0.39 -> 0.25 s for
/// 2,000). A test holds the two readings to agree.
pub fn ddl_columns() -> &'static [Column] {
    static COLUMNS: OnceLock<Vec<Column>> = OnceLock::new();
    COLUMNS.get_or_init(|| sqlite::declared_columns(DDL[0]))
}

#[cfg(test)]
mod tests {
    use super::summary::text;
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn the_columns_are_what_sqlite_says() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(DDL[0]).unwrap();
        let sqlite = sqlite::table_columns(&conn, TABLE).unwrap();
        assert_eq!(ddl_columns(), sqlite);
        assert_eq!(sqlite.len(), 19);
    }

    #[test]
    fn the_not_null_columns_are_what_sqlite_says() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(DDL[0]).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT name, dflt_value IS NOT NULL FROM pragma_table_info(?1) WHERE \"notnull\"",
            )
            .unwrap();
        let sqlite: Vec<(String, bool)> = stmt
            .query_map([TABLE], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let ours: Vec<(String, bool)> = not_null_columns()
            .map(|(name, default)| (name.to_string(), default))
            .collect();
        assert_eq!(ours, sqlite);
        assert!(ours.contains(&("last_modified_time".to_string(), false)));
    }

    #[test]
    fn the_workspaces_of_a_row_move_in_place() {
        let mut row = summary::tests::summary().row("c1");
        row.set(
            "workspace_uris",
            text(r#"["file:///home/u/my%20repo","file:///home/u/my%20repo2"]"#),
        );
        assert_eq!(
            row.workspace_uris(),
            ["file:///home/u/my%20repo", "file:///home/u/my%20repo2"]
        );
        let m = crate::agy::paths::Move::new("/home/u/my repo", "/srv/repo").unwrap();
        assert!(row.rewrite_text("workspace_uris", &m));
        assert_eq!(
            row.get("workspace_uris"),
            Some(&text(r#"["file:///srv/repo","file:///home/u/my%20repo2"]"#))
        );
        assert!(!row.rewrite_text("workspace_uris", &m));
        assert!(!row.rewrite_text("no_such_column", &m));
        row.cells.push((
            "raw_summary".into(),
            JsonCell::Plain(Cow::Owned(hex::encode(b"\x0a\x0f/home/u/my repo"))),
        ));
        assert!(row.rewrite_blob("raw_summary", &m).unwrap());
        assert_eq!(
            row.get("raw_summary"),
            Some(&JsonCell::Plain(Cow::Owned(hex::encode(
                b"\x0a\x09/srv/repo"
            ))))
        );
    }
}
