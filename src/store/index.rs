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
//! Imports: the ground floor and [`crate::stream`].

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::agy::patch::{self, Rewrite};
use crate::error::{Error, Result};
use crate::store::lock::try_flock;
use crate::store::root::{Lane, CLI};
use crate::store::sqlite::{self, Bind, OpenError, ReadOnly};
use crate::stream::message::path_to_uri;
use crate::stream::record::{self, Column, JsonCell, RowCells};
use crate::time::Timestamp;

/// The index's file name in the data root.
pub const FILE_NAME: &str = "conversation_summaries.db";

/// The index's table.
pub const TABLE: &str = "conversation_summaries";

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
    let table = DDL[0];
    let columns = &table[table.find('(').map_or(0, |at| at + 1)..table.rfind(')').unwrap_or(0)];
    columns
        .split(", ")
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
        let Some((_, cell)) = self.cells.iter_mut().find(|(n, _)| n == column) else {
            return Ok(false);
        };
        let (JsonCell::Plain(hex) | JsonCell::Blob(hex)) = cell else {
            return Ok(false);
        };
        let bytes = record::decode_hex(hex).map_err(|e| e.context(format!("column {column}")))?;
        let Some(moved) = patch::rewrite(&bytes, rewrite) else {
            return Ok(false);
        };
        *hex = Cow::Owned(hex::encode(moved));
        Ok(true)
    }
}

/// What a conversation says of itself that its index row repeats, by the
/// rules of agy-decode's `meta` record: the title is the latest checkpoint
/// title, else the first user text cut to 80 characters; the workspace is
/// the trajectory metadata's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub title: Option<String>,
    /// The first user text, whole.
    pub preview: Option<String>,
    /// The number of `steps` rows.
    pub step_count: i64,
    pub created: Option<Timestamp>,
    /// The time of the step with the highest idx that has one.
    pub last_step_time: Option<Timestamp>,
    pub cwd: Option<String>,
    /// The workspace's git branch (not in the index; agy-ls shows it).
    pub branch: Option<String>,
    pub parent_conversation_id: Option<String>,
    /// The idx of the last USER_INPUT step, and its time.
    pub last_user_input: Option<(i64, Option<Timestamp>)>,
    /// `trajectory_meta.source`, when known: the lane whose marks a
    /// derived row bears (the CLI's when it is not the desktop app's).
    pub trajectory_source: Option<i64>,
}

/// A time as the index writes it: `YYYY-MM-DD HH:MM:SS+00:00`.
pub fn format_time(time: Timestamp) -> Option<String> {
    let text = time.format_seconds()?;
    let date_time = text.strip_suffix('Z')?.replacen('T', " ", 1);
    Some(format!("{date_time}+00:00"))
}

/// The time written when a conversation has none at all (the columns are
/// NOT NULL).
const NO_TIME: &str = "1970-01-01 00:00:00+00:00";

fn text(value: impl Into<String>) -> JsonCell<'static> {
    JsonCell::Plain(Cow::Owned(value.into()))
}

impl Summary {
    /// The columns a summary decides, with their values.
    fn derived(&self) -> Vec<(&'static str, JsonCell<'static>)> {
        let last_modified = self.last_step_time.or(self.created);
        let time =
            |t: Option<Timestamp>| text(t.and_then(format_time).as_deref().unwrap_or(NO_TIME));
        let (last_input_idx, last_input_time) = match self.last_user_input {
            Some((idx, time)) => (idx, time.or(last_modified)),
            None => (-1, last_modified),
        };
        let workspaces = match &self.cwd {
            Some(cwd) => serde_json::to_string(&[path_to_uri(cwd)]).expect("strings serialize"),
            None => "[]".to_string(),
        };
        vec![
            ("title", text(self.title.clone().unwrap_or_default())),
            ("preview", text(self.preview.clone().unwrap_or_default())),
            ("step_count", JsonCell::Integer(self.step_count)),
            ("last_modified_time", time(last_modified)),
            ("workspace_uris", text(workspaces)),
            (
                "parent_conversation_id",
                text(self.parent_conversation_id.clone().unwrap_or_default()),
            ),
            ("last_user_input_time", time(last_input_time)),
            (
                "last_user_input_step_index",
                JsonCell::Integer(last_input_idx),
            ),
        ]
    }

    /// The whole row of conversation `id`, in the 1.1.16 table's 19
    /// columns, as the row agy 1.1.16 accepted has them: status `""`,
    /// source and app_data_dir `antigravity-cli`, project_id
    /// `default-cli-project`, the other columns their defaults; a
    /// conversation of the desktop app gets that lane's marks instead
    /// ([`crate::store::root::Lane::marks`]).
    pub fn row(&self, id: &str) -> IndexRow {
        let marks = self
            .trajectory_source
            .and_then(Lane::of_trajectory_source)
            .and_then(Lane::marks)
            .unwrap_or(CLI);
        let derived = self.derived();
        let value = |name: &str| {
            derived
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone())
        };
        let columns = ddl_columns();
        let cells = columns
            .iter()
            .map(|column| {
                let name = column.name.as_str();
                let cell = match name {
                    "conversation_id" => text(id),
                    "source" => text(marks.index_source),
                    "app_data_dir" => text(marks.app_data_dir),
                    "project_id" => text(marks.project_id),
                    "status" => text(marks.status),
                    "nesting_depth" | "not_fully_idle" | "killed" => JsonCell::Integer(0),
                    _ => value(name).unwrap_or_else(|| text("")),
                };
                (name.to_string(), cell)
            })
            .collect();
        IndexRow {
            user_version: 0,
            cells,
        }
    }

    /// Whether `row` agrees with this summary on what an edit changes and
    /// agy's list relies on: the step count and the last user input's idx.
    /// (Titles and times agy writes its own way are not compared.)
    pub fn agrees(&self, row: &IndexRow) -> bool {
        let last = self.last_user_input.map_or(-1, |(idx, _)| idx);
        row.int("step_count") == Some(self.step_count)
            && row.int("last_user_input_step_index") == Some(last)
    }

    /// `row` brought up to date with this summary (`--reindex`, and a
    /// conversation written without an index record): the counts, times,
    /// preview and workspace follow the conversation; a non-empty title is
    /// agy's or the user's name for it and is kept; every column a summary
    /// says nothing of keeps its bytes.
    pub fn refresh(&self, row: &IndexRow) -> IndexRow {
        let mut out = row.clone();
        for (name, value) in self.derived() {
            let named = row.get("title").and_then(JsonCell::as_text);
            if name == "title" && named.is_some_and(|t| !t.is_empty()) {
                continue;
            }
            out.set(name, value);
        }
        out
    }

    /// `row`, the original row of a conversation whose summary was
    /// `before`, carried onto the edited conversation whose summary is
    /// this (`agy-encode --onto`): a column whose derived value the edit
    /// changed takes the new one, every other keeps its bytes.
    pub fn carry(&self, before: &Summary, row: &IndexRow) -> IndexRow {
        let mut out = row.clone();
        for ((name, old), (_, new)) in before.derived().into_iter().zip(self.derived()) {
            if old != new {
                out.set(name, new);
            }
        }
        out
    }
}

/// The columns of agy 1.1.16's table.
pub fn ddl_columns() -> Vec<Column> {
    let conn = Connection::open_in_memory().expect("an in-memory database opens");
    conn.execute_batch(DDL[0]).expect("agy's DDL is valid");
    sqlite::table_columns(&conn, TABLE).expect("the table was just created")
}

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
                (Change::Refresh(summary) | Change::Reindex(summary), Some(old)) => {
                    (!summary.agrees(old)).then(|| summary.refresh(old))
                }
                (Change::Reindex(summary), None) => Some(summary.row(id)),
                (Change::Refresh(_), None) => None,
            };
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

fn read_row(
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

#[cfg(test)]
mod tests {
    use super::*;

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

    fn summary() -> Summary {
        Summary {
            title: Some("Fix the test".into()),
            preview: Some("Fix the flaky test please".into()),
            step_count: 5,
            created: Some(Timestamp {
                seconds: 1_786_000_000,
                nanos: 0,
            }),
            last_step_time: Some(Timestamp {
                seconds: 1_786_000_100,
                nanos: 7,
            }),
            cwd: Some("/home/u/my repo".into()),
            branch: None,
            parent_conversation_id: None,
            last_user_input: Some((
                3,
                Some(Timestamp {
                    seconds: 1_786_000_050,
                    nanos: 0,
                }),
            )),
            trajectory_source: None,
        }
    }

    #[test]
    fn a_derived_row_follows_the_rows_agy_accepted() {
        let row = summary().row("c1");
        let names: Vec<&str> = row.cells.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), 19);
        assert_eq!(names[0], "conversation_id");
        assert_eq!(names[18], "app_data_dir");
        let get = |c: &str| row.get(c).unwrap().clone();
        assert_eq!(get("conversation_id"), text("c1"));
        assert_eq!(get("step_count"), JsonCell::Integer(5));
        assert_eq!(get("last_modified_time"), text("2026-08-06 07:08:20+00:00"));
        assert_eq!(
            get("last_user_input_time"),
            text("2026-08-06 07:07:30+00:00")
        );
        assert_eq!(get("last_user_input_step_index"), JsonCell::Integer(3));
        assert_eq!(
            get("workspace_uris"),
            text(r#"["file:///home/u/my%20repo"]"#)
        );
        assert_eq!(get("source"), text("antigravity-cli"));
        assert_eq!(get("app_data_dir"), text("antigravity-cli"));
        assert_eq!(get("project_id"), text("default-cli-project"));
        assert_eq!(get("status"), text(""));
        assert_eq!(get("killed"), JsonCell::Integer(0));
        let desktop = Summary {
            trajectory_source: Some(1),
            ..summary()
        }
        .row("c1");
        for (column, value) in [
            ("source", ""),
            ("app_data_dir", "antigravity"),
            ("status", "CASCADE_RUN_STATUS_IDLE"),
            ("project_id", "outside-of-project"),
        ] {
            assert_eq!(desktop.get(column), Some(&text(value)), "{column}");
        }
        let empty = Summary::default().row("c2");
        assert_eq!(
            empty.get("last_user_input_step_index"),
            Some(&JsonCell::Integer(-1))
        );
        assert_eq!(empty.get("workspace_uris"), Some(&text("[]")));
        assert_eq!(empty.get("last_modified_time"), Some(&text(NO_TIME)));
    }

    #[test]
    fn carrying_changes_only_what_the_edit_changed() {
        let before = summary();
        let mut agy_row = before.row("c1");
        agy_row.set("title", text("agy's own title"));
        agy_row.set("last_modified_time", text("2026-08-05 19:48:21.5+00:00"));
        // Nothing changed: every byte stays.
        assert_eq!(before.carry(&before, &agy_row), agy_row);
        let mut after = before.clone();
        after.step_count = 3;
        after.last_user_input = Some((0, before.created));
        let carried = after.carry(&before, &agy_row);
        assert_eq!(carried.get("step_count"), Some(&JsonCell::Integer(3)));
        assert_eq!(
            carried.get("last_user_input_step_index"),
            Some(&JsonCell::Integer(0))
        );
        assert_eq!(carried.get("title"), Some(&text("agy's own title")));
        assert_eq!(
            carried.get("last_modified_time"),
            Some(&text("2026-08-05 19:48:21.5+00:00"))
        );
        assert!(!before.agrees(&carried) && after.agrees(&carried));
    }

    #[test]
    fn refreshing_keeps_a_name_and_unknown_columns() {
        let mut old = summary().row("c1");
        old.cells.push(("group_id".into(), text("g7")));
        old.set("title", text("Named by agy"));
        let mut now = summary();
        now.step_count = 9;
        now.title = Some("derived".into());
        let fresh = now.refresh(&old);
        assert_eq!(fresh.get("title"), Some(&text("Named by agy")));
        assert_eq!(fresh.get("group_id"), Some(&text("g7")));
        assert_eq!(fresh.get("step_count"), Some(&JsonCell::Integer(9)));
        old.set("title", text(""));
        assert_eq!(now.refresh(&old).get("title"), Some(&text("derived")));
    }

    #[test]
    fn the_workspaces_of_a_row_move_in_place() {
        let mut row = summary().row("c1");
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
