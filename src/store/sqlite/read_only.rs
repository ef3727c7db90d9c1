//! Opening a database read-only without changing it, its sidecars or its
//! directory, and noticing a writer that started during an unlocked read.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
use crate::store::vfs;

use super::OpenError;

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
pub(super) struct Fingerprint {
    db_len: u64,
    db_modified: Option<std::time::SystemTime>,
    wal_header: Option<Vec<u8>>,
}

impl Fingerprint {
    /// The database's length and time, and the first 32 bytes of its WAL
    /// when the read is to use it (`wal`).
    pub(super) fn take(path: &Path, wal: bool) -> std::io::Result<Fingerprint> {
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

    /// Whether the WAL's header is part of it.
    pub(super) fn has_wal(&self) -> bool {
        self.wal_header.is_some()
    }
}

impl ReadOnly {
    /// Opens `path` for reading, in the shape its sidecars say:
    /// - a `-wal` and a `-shm` (a live agy, or one that was killed): through
    ///   the `agy-ro` VFS ([`crate::store::vfs`]), which maps the `-shm` read-only,
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
        // Without a -shm, SQLite would retry a read whose WAL header is
        // not valid for ten seconds and then fail ("locking protocol"),
        // where its recovery would read such a WAL as empty: it is.
        let empty_wal = !shm && matches!(wal_len, Ok(len) if len > 0) && !wal_header_valid(path);
        if matches!(wal_len, Ok(len) if (len > 0 && !empty_wal) || shm) {
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

/// Whether the `-wal` of `path` starts with a header SQLite's recovery
/// would read frames after.
fn wal_header_valid(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 32];
    std::fs::File::open(sidecar(path, "-wal"))
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| super::file::wal::valid_header(&header).is_some())
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
}
