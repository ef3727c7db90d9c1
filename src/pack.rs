//! agy-pack: the row stream back into `conversations/<id>.db` and
//! `brain/<id>/` under a data root.
//!
//! Each conversation is built in temporary files beside its destination and
//! renamed into place only when every one of its records was good, so a
//! failure at any line leaves the root as it was. Rows are inserted as they
//! arrive, so memory stays bounded by one record.

use std::collections::{HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::record::{Column, FileContent, FileDir, Record, RowCells};
use crate::root;
use crate::store::{self, Bind, AGY_SCHEMA, AGY_USER_VERSION};

/// How to pack.
#[derive(Clone, Debug)]
pub struct PackOptions {
    /// The data root to write under.
    pub root: PathBuf,
    /// Replace conversations that already exist.
    pub force: bool,
    /// Validate everything, write nothing under the root.
    pub dry_run: bool,
}

/// Where a conversation's records have got to; each kind may only come
/// after the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Start,
    Db,
    Schema,
    Rows,
}

/// A conversation being assembled in temporary files.
struct Pending {
    id: String,
    stage: Stage,
    user_version: i64,
    conn: Option<Connection>,
    tmp_db: PathBuf,
    tmp_brain: PathBuf,
    /// The ACP `<id>.meta` sidecar, once the stream has carried one.
    tmp_meta: Option<PathBuf>,
    /// Columns of each created table, for values' affinity.
    tables: HashMap<String, Vec<Column>>,
    files: HashSet<String>,
    saw_schema: bool,
}

/// Packs a stream of records, one conversation at a time.
pub struct Packer {
    options: PackOptions,
    pending: Option<Pending>,
    done: HashSet<String>,
    /// A private directory for `--dry-run` builds.
    scratch: Option<PathBuf>,
}

static SCRATCH_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Packer {
    pub fn new(options: PackOptions) -> Result<Packer> {
        let scratch = if options.dry_run {
            let dir = std::env::temp_dir().join(format!(
                "agy-pack-dry-run-{}-{}",
                std::process::id(),
                SCRATCH_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            ));
            fs::create_dir_all(&dir).map_err(|e| Error::io(dir.display(), e))?;
            Some(dir)
        } else {
            let dirs = ["conversations", "brain"].map(|dir| options.root.join(dir));
            // Check both before creating either: a refusal leaves no trace.
            for path in &dirs {
                if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(Error::data(format!(
                        "{}: is a symbolic link; refusing to write through it",
                        path.display()
                    )));
                }
            }
            for path in &dirs {
                fs::create_dir_all(path).map_err(|e| Error::io(path.display(), e))?;
            }
            None
        };
        Ok(Packer {
            options,
            pending: None,
            done: HashSet::new(),
            scratch,
        })
    }

    fn db_path(&self, id: &str) -> PathBuf {
        self.options
            .root
            .join("conversations")
            .join(format!("{id}.db"))
    }

    fn meta_path(&self, id: &str) -> PathBuf {
        self.options
            .root
            .join("conversations")
            .join(format!("{id}.meta"))
    }

    fn brain_path(&self, id: &str) -> PathBuf {
        self.options.root.join("brain").join(id)
    }

    /// Takes one record. Returns the path of a database written when this
    /// record began a new conversation and so completed the previous one.
    /// On error the caller discards the conversation with [`Packer::abandon`].
    pub fn add(&mut self, record: Record<'_>) -> Result<Option<PathBuf>> {
        let id = record.conversation();
        let mut written = None;
        if self.pending.as_ref().is_some_and(|p| p.id != id) {
            written = Some(self.finish()?.expect("a conversation was pending"));
        }
        if self.pending.is_none() {
            self.begin(id)?;
        }
        self.apply(record)?;
        Ok(written)
    }

    /// Completes the conversation in progress, if any, returning its path.
    pub fn finish(&mut self) -> Result<Option<PathBuf>> {
        let Some(mut pending) = self.pending.take() else {
            return Ok(None);
        };
        let result = self.commit(&mut pending);
        if let Err(e) = result {
            discard(&mut pending);
            return Err(Error::data(format!(
                "{e} (conversation {:?} not written)",
                pending.id
            )));
        }
        result.map(Some)
    }

    /// Throws away the conversation in progress, returning its id.
    pub fn abandon(&mut self) -> Option<String> {
        let mut pending = self.pending.take()?;
        discard(&mut pending);
        Some(pending.id)
    }

    fn begin(&mut self, id: &str) -> Result<()> {
        root::check_id(id)?;
        if self.done.contains(id) {
            return Err(Error::data(format!(
                "records of conversation {id:?} are split apart: it already ended earlier in the stream"
            )));
        }
        self.check_free(id)?;
        let tag = format!("agy-pack-{}.tmp", std::process::id());
        let (tmp_db, tmp_brain) = match &self.scratch {
            Some(dir) => (
                dir.join(format!("{id}.db")),
                dir.join(format!("brain-{id}")),
            ),
            None => (
                self.options
                    .root
                    .join("conversations")
                    .join(format!(".{id}.db.{tag}")),
                self.options.root.join("brain").join(format!(".{id}.{tag}")),
            ),
        };
        // Leftovers of a crashed earlier run with the same pid.
        let _ = fs::remove_file(&tmp_db);
        let _ = fs::remove_dir_all(&tmp_brain);
        let mut pending = Pending {
            id: id.to_string(),
            stage: Stage::Start,
            user_version: AGY_USER_VERSION,
            conn: None,
            tmp_db,
            tmp_brain,
            tmp_meta: None,
            tables: HashMap::new(),
            files: HashSet::new(),
            saw_schema: false,
        };
        let opened = open_new_database(&pending.tmp_db).and_then(|conn| {
            let logs = pending.tmp_brain.join(".system_generated").join("logs");
            fs::create_dir_all(&logs).map_err(|e| Error::io(logs.display(), e))?;
            Ok(conn)
        });
        match opened {
            Ok(conn) => pending.conn = Some(conn),
            Err(e) => {
                discard(&mut pending);
                return Err(e);
            }
        }
        self.pending = Some(pending);
        Ok(())
    }

    /// Refuses to replace an existing conversation without `--force`.
    fn check_free(&self, id: &str) -> Result<()> {
        if self.options.force {
            return Ok(());
        }
        for path in [self.db_path(id), self.brain_path(id), self.meta_path(id)] {
            if fs::symlink_metadata(&path).is_ok() {
                return Err(Error::data(format!(
                    "conversation {id:?} already exists at {} (use --force to replace it)",
                    path.display()
                )));
            }
        }
        Ok(())
    }

    fn apply(&mut self, record: Record<'_>) -> Result<()> {
        let pending = self.pending.as_mut().expect("begin() made one");
        match record {
            Record::Db { user_version, .. } => {
                if pending.stage != Stage::Start {
                    return Err(Error::data(
                        "db record must be the first record of its conversation",
                    ));
                }
                pending.user_version = user_version;
                pending.stage = Stage::Db;
            }
            Record::Schema {
                object_type,
                name,
                sql,
                ..
            } => {
                if pending.stage > Stage::Schema {
                    return Err(Error::data(
                        "schema record after rows or files: schema must come first",
                    ));
                }
                pending.stage = Stage::Schema;
                pending.saw_schema = true;
                pending
                    .create(&object_type, &sql)
                    .map_err(|e| e.context(format!("schema {name}")))?;
                check_created(pending.conn(), &object_type, &name)?;
            }
            Record::Row { table, row, .. } => {
                pending.ensure_schema()?;
                pending.stage = Stage::Rows;
                pending
                    .insert(&table, &row)
                    .map_err(|e| e.context(format!("row of table {table}")))?;
            }
            Record::File {
                dir,
                path,
                append,
                content,
                ..
            } => {
                pending.ensure_schema()?;
                pending.stage = Stage::Rows;
                match dir {
                    FileDir::Brain => pending
                        .write_file(&path, append, &content)
                        .map_err(|e| e.context(format!("file {path}")))?,
                    FileDir::Conversations => {
                        let tmp = self
                            .scratch
                            .clone()
                            .unwrap_or_else(|| self.options.root.join("conversations"))
                            .join(format!(
                                ".{}.meta.agy-pack-{}.tmp",
                                pending.id,
                                std::process::id()
                            ));
                        pending
                            .write_meta(&path, append, &content, tmp)
                            .map_err(|e| e.context(format!("file conversations/{path}")))?
                    }
                }
            }
        }
        Ok(())
    }

    fn commit(&mut self, pending: &mut Pending) -> Result<PathBuf> {
        pending.ensure_schema()?;
        let conn = pending.conn.take().expect("open until commit");
        conn.pragma_update(None, "user_version", pending.user_version)?;
        conn.execute_batch("COMMIT")?;
        // agy's databases are in WAL mode; the flag lives in the header.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.close().map_err(|(_, e)| Error::from(e))?;
        let file =
            fs::File::open(&pending.tmp_db).map_err(|e| Error::io(pending.tmp_db.display(), e))?;
        file.sync_all()
            .map_err(|e| Error::io(pending.tmp_db.display(), e))?;
        let id = pending.id.clone();
        let db = self.db_path(&id);
        if self.scratch.is_some() {
            discard(pending);
            self.done.insert(id);
            return Ok(db);
        }
        self.check_free(&id)?;
        let brain = self.brain_path(&id);
        let old_brain = self
            .options
            .root
            .join("brain")
            .join(format!(".{id}.agy-pack-{}.old", std::process::id()));
        let _ = fs::remove_dir_all(&old_brain);
        let had_brain = fs::symlink_metadata(&brain).is_ok();
        if had_brain {
            fs::rename(&brain, &old_brain).map_err(|e| Error::io(brain.display(), e))?;
        }
        if let Err(e) = fs::rename(&pending.tmp_brain, &brain) {
            if had_brain {
                let _ = fs::rename(&old_brain, &brain);
            }
            return Err(Error::io(brain.display(), e));
        }
        // A stale WAL beside the new file would be replayed into it.
        for suffix in ["-wal", "-shm"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            match fs::remove_file(&name) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(Path::new(&name).display(), e)),
            }
        }
        let meta = self.meta_path(&id);
        match &pending.tmp_meta {
            Some(tmp) => fs::rename(tmp, &meta).map_err(|e| Error::io(meta.display(), e))?,
            None => match fs::remove_file(&meta) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(meta.display(), e)),
            },
        }
        fs::rename(&pending.tmp_db, &db).map_err(|e| Error::io(db.display(), e))?;
        if had_brain {
            let _ = fs::remove_dir_all(&old_brain);
        }
        if let Some(dir) = db.parent() {
            if let Ok(dir) = fs::File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        self.done.insert(id);
        Ok(db)
    }
}

impl Drop for Packer {
    fn drop(&mut self) {
        self.abandon();
        if let Some(dir) = self.scratch.take() {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

fn discard(pending: &mut Pending) {
    drop(pending.conn.take());
    let _ = fs::remove_file(&pending.tmp_db);
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = pending.tmp_db.as_os_str().to_owned();
        name.push(suffix);
        let _ = fs::remove_file(name);
    }
    let _ = fs::remove_dir_all(&pending.tmp_brain);
    if let Some(meta) = pending.tmp_meta.take() {
        let _ = fs::remove_file(meta);
    }
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
fn open_new_database(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path).map_err(|e| Error::from(e).context(path.display()))?;
    conn.execute_batch(
        "PRAGMA page_size = 32768; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; BEGIN",
    )?;
    Ok(conn)
}

fn check_created(conn: &Connection, object_type: &str, name: &str) -> Result<()> {
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
    fn conn(&self) -> &Connection {
        self.conn.as_ref().expect("open until commit")
    }

    fn create(&mut self, object_type: &str, sql: &str) -> Result<()> {
        store::check_schema_sql(object_type, sql)?;
        let conn = self.conn.as_ref().expect("open until commit");
        let mut stmt = conn.prepare(sql)?;
        stmt.raw_execute()?;
        Ok(())
    }

    /// Gives a conversation without schema records agy 1.0.16's schema.
    fn ensure_schema(&mut self) -> Result<()> {
        if self.saw_schema {
            return Ok(());
        }
        for (object_type, _, sql) in AGY_SCHEMA {
            self.create(object_type, sql)?;
        }
        self.saw_schema = true;
        Ok(())
    }

    fn insert(&mut self, table: &str, row: &RowCells<'_>) -> Result<()> {
        let conn = self.conn.as_ref().expect("open until commit");
        if !self.tables.contains_key(table) {
            let columns = store::table_columns(conn, table)?;
            if columns.is_empty() {
                return Err(Error::data(format!(
                    "no table {table:?} was created for this conversation"
                )));
            }
            self.tables.insert(table.to_string(), columns);
        }
        let columns = &self.tables[table];
        let mut cells = Vec::with_capacity(row.0.len());
        let mut sql = format!("INSERT INTO {} (", store::quote_identifier(table));
        for (i, (name, value)) in row.0.iter().enumerate() {
            let column = columns
                .iter()
                .find(|c| c.name == *name)
                .ok_or_else(|| Error::data(format!("table {table:?} has no column {name:?}")))?;
            cells.push(
                value
                    .to_cell(column.blob_affinity)
                    .map_err(|e| e.context(format!("column {name}")))?,
            );
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&store::quote_identifier(name));
        }
        sql.push_str(") VALUES (");
        for i in 0..cells.len() {
            sql.push_str(if i == 0 { "?" } else { ",?" });
        }
        sql.push(')');
        if cells.is_empty() {
            sql = format!(
                "INSERT INTO {} DEFAULT VALUES",
                store::quote_identifier(table)
            );
        }
        let mut stmt = conn.prepare_cached(&sql)?;
        for (i, cell) in cells.iter().enumerate() {
            stmt.raw_bind_parameter(i + 1, Bind(cell))?;
        }
        stmt.raw_execute()?;
        Ok(())
    }

    /// Writes the `<id>.meta` sidecar to `tmp`; no other file may go to
    /// `conversations/`, where a stray `.db` would become a conversation.
    fn write_meta(
        &mut self,
        path: &str,
        append: bool,
        content: &FileContent<'_>,
        tmp: PathBuf,
    ) -> Result<()> {
        if path != format!("{}.meta", self.id) {
            return Err(Error::data(format!(
                "the only file allowed in conversations/ is \"{}.meta\"",
                self.id
            )));
        }
        let bytes = content.to_bytes()?;
        if append {
            let Some(tmp) = &self.tmp_meta else {
                return Err(no_file_to_append());
            };
            return append_to(tmp, path, &bytes);
        }
        if self.tmp_meta.is_some() {
            return Err(Error::data("the same file path appears twice"));
        }
        let _ = fs::remove_file(&tmp);
        self.tmp_meta = Some(tmp.clone());
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io(path, e))?;
        file.write_all(&bytes).map_err(|e| Error::io(path, e))?;
        Ok(())
    }

    /// Writes a brain file, or with `append` the next part of one an
    /// earlier record started.
    fn write_file(&mut self, path: &str, append: bool, content: &FileContent<'_>) -> Result<()> {
        let rel = root::check_relative_path(path)?;
        let target = self.tmp_brain.join(&rel);
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
}
