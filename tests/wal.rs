//! Reading conversations in the shapes agy leaves them (FORMAT.md 15.6): a
//! `-wal` holding the latest steps, with a `-shm` (agy killed or running)
//! or without (agy exited). The rows in the WAL are read, nothing beside the
//! database changes (not a byte, not a time, not the listing), and a live
//! writer is never kept waiting. Damaged WALs read as SQLite itself recovers
//! them.

mod support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use support::store::{dump_of, json_lines};
use support::{run, stderr, AgyDb, Scratch};

const ID: &str = "5f0c1f4e-8c3e-4a57-9d1e-2b7c9a0d4e11";
/// Steps checkpointed into the database file, then steps left in the WAL.
const IN_DB: i64 = 4;
const IN_WAL: i64 = 7;

/// Everything observable of a directory tree: each entry's path, type,
/// mode, length, times (to the nanosecond) and the SHA-256 of its bytes,
/// and the directories' own times (which change when an entry is added or
/// removed), sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, String)> {
    use sha2::{Digest, Sha256};
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let digest = if meta.is_file() {
                hex::encode(Sha256::digest(std::fs::read(&path).unwrap()))
            } else {
                String::new()
            };
            let what = format!(
                "{:?} mode {:o} len {} mtime {}.{:09} ctime {}.{:09} sha256 {digest}",
                meta.file_type(),
                meta.mode(),
                meta.len(),
                meta.mtime(),
                meta.mtime_nsec(),
                meta.ctime(),
                meta.ctime_nsec()
            );
            if meta.is_dir() {
                stack.push(path.clone());
            }
            out.push((path.strip_prefix(dir).unwrap().to_path_buf(), what));
        }
    }
    let meta = std::fs::metadata(dir).unwrap();
    out.push((
        PathBuf::from("."),
        format!("mtime {}.{:09}", meta.mtime(), meta.mtime_nsec()),
    ));
    out.sort();
    out
}

/// A conversation with `IN_DB` steps in its database file and `IN_WAL`
/// more in its WAL, one transaction each, written by a connection that is
/// still open (its `-shm` beside them).
fn live_conversation(root: &Path) -> AgyDb {
    let live = AgyDb::create(root, ID);
    for idx in 0..IN_DB {
        live.user_step(idx, "checkpointed");
    }
    live.conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    live.conn
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    for idx in IN_DB..IN_DB + IN_WAL {
        live.user_step(idx, "still in the WAL");
    }
    live
}

fn conversations(root: &Path) -> PathBuf {
    root.join("conversations")
}

fn sidecar(root: &Path, suffix: &str) -> PathBuf {
    conversations(root).join(format!("{ID}.db{suffix}"))
}

/// Copies the files of `from`'s conversation with the given suffixes into a
/// new root `to`: what a killed (`-wal`, `-shm`) or exited (`-wal`) agy
/// leaves.
fn copy_shape(from: &Path, to: &Path, suffixes: &[&str]) {
    std::fs::create_dir_all(conversations(to)).unwrap();
    for suffix in suffixes {
        std::fs::copy(sidecar(from, suffix), sidecar(to, suffix)).unwrap();
    }
}

/// The `idx` of every steps record agy-dump writes for `root`.
fn dumped_steps(root: &Path) -> Vec<i64> {
    steps_in(&dump_of(&[root.to_str().unwrap()]))
}

/// The `idx` of every steps record in a row stream.
fn steps_in(rows: &[u8]) -> Vec<i64> {
    json_lines(rows)
        .iter()
        .filter(|r| r["table"] == "steps")
        .map(|r| r["row"]["idx"].as_i64().unwrap())
        .collect()
}

/// What SQLite itself makes of the same files: a copy in a directory of its
/// own, opened read-write (so recovery runs the ordinary way).
fn sqlite_steps(root: &Path, scratch: &Path) -> Vec<i64> {
    let copy = scratch.join("oracle");
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).unwrap();
    for suffix in ["", "-wal"] {
        if sidecar(root, suffix).exists() {
            std::fs::copy(sidecar(root, suffix), copy.join(format!("c.db{suffix}"))).unwrap();
        }
    }
    let conn = Connection::open(copy.join("c.db")).unwrap();
    let mut stmt = conn.prepare("SELECT idx FROM steps ORDER BY idx").unwrap();
    let steps = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<Vec<i64>>>()
        .unwrap();
    steps
}

#[test]
fn reading_a_wal_leaves_every_file_and_the_listing_as_they_were() {
    let s = Scratch::new("wal-untouched");
    let live_root = s.join("live");
    let live = live_conversation(&live_root);
    assert!(sidecar(&live_root, "-shm").exists());
    let expected = dump_of(&[live_root.to_str().unwrap()]);
    let records = json_lines(&expected);
    let steps = records.iter().filter(|r| r["table"] == "steps").count();
    assert_eq!(steps as i64, IN_DB + IN_WAL, "the rows in the WAL are read");

    let killed = s.join("killed");
    copy_shape(&live_root, &killed, &["", "-wal", "-shm"]);
    let exited = s.join("exited");
    copy_shape(&live_root, &exited, &["", "-wal"]);
    // The same conversation checkpointed, and a directory nobody may write.
    let at_rest = s.join("at-rest");
    copy_shape(&live_root, &at_rest, &["", "-wal"]);
    let checkpointer = Connection::open(sidecar(&at_rest, "")).unwrap();
    checkpointer
        .query_row("SELECT count(*) FROM steps", [], |_| Ok(()))
        .unwrap();
    checkpointer.close().unwrap();
    assert!(!sidecar(&at_rest, "-wal").exists());
    let read_only = s.join("read-only");
    copy_shape(&live_root, &read_only, &["", "-wal"]);

    for (name, root) in [
        ("a live agy", &live_root),
        ("a killed agy", &killed),
        ("an exited agy", &exited),
        ("checkpointed", &at_rest),
        ("an exited agy, read-only directory", &read_only),
    ] {
        let dir = conversations(root);
        if name.contains("read-only") {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
            }
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        }
        let before = snapshot(root);
        let db = sidecar(root, "");
        for args in [vec![root.to_str().unwrap()], vec![db.to_str().unwrap()]] {
            let out = run("agy-dump", &args, b"");
            assert!(out.status.success(), "{name}: {}", stderr(&out));
            assert!(out.stderr.is_empty(), "{name}: {}", stderr(&out));
            assert!(out.stdout == expected, "{name}: a different dump");
        }
        let listed = run("agy-ls", &[root.to_str().unwrap()], b"");
        assert!(listed.status.success(), "{name}: {}", stderr(&listed));
        assert!(
            String::from_utf8_lossy(&listed.stdout).contains(ID),
            "{name}: agy-ls lists it"
        );
        assert_eq!(snapshot(root), before, "{name}: reading changed the store");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    drop(live);
}

#[test]
fn a_live_writer_is_never_kept_waiting() {
    let s = Scratch::new("wal-writer");
    let root = s.join("root");
    let live = live_conversation(&root);
    // No busy timeout: a lock held against it would fail its write at once.
    live.conn.busy_timeout(std::time::Duration::ZERO).unwrap();
    let path = root.to_str().unwrap().to_string();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..20 {
            let out = run("agy-dump", &[&path], b"");
            assert!(out.status.success(), "{}", stderr(&out));
            let steps = json_lines(&out.stdout)
                .iter()
                .filter(|r| r["table"] == "steps")
                .count();
            seen.push(steps);
        }
        seen
    });
    let mut idx = IN_DB + IN_WAL;
    while !reader.is_finished() {
        live.user_step(idx, "written while agy-dump reads");
        if idx % 10 == 0 {
            live.conn
                .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                .unwrap();
        }
        idx += 1;
    }
    let seen = reader.join().unwrap();
    // Each dump read one whole snapshot: never fewer steps than before.
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    assert!(seen[0] >= (IN_DB + IN_WAL) as usize, "{seen:?}");
    // No lock of a reader is left: closing checkpoints and removes both.
    live.close();
    assert!(!sidecar(&root, "-wal").exists());
    assert!(!sidecar(&root, "-shm").exists());
}

/// The WAL index's header (the first 96 bytes of the `-shm`) is two copies
/// of 48 bytes that a writer updates one after the other; a reader that
/// finds them different while a writer's connection is open must not
/// rebuild the index (a read-only reader may not), and SQLite answers
/// SQLITE_READONLY_RECOVERY. agy-dump then reads again, 2 ms apart, for
/// about a second. Here the second copy is changed by hand under a live
/// connection: put back after a moment, the dump reads every step; left
/// changed, the dump gives up and says why, and the writer is unharmed.
///
/// The `-shm` is written through one descriptor that stays open until the
/// writer is done: closing any descriptor of a file drops every POSIX
/// lock the process holds on it, the live connection's among them, and a
/// `-shm` no process holds a lock on is one agy-dump rightly ignores.
#[test]
fn a_torn_index_header_is_read_again_once_whole() {
    use std::os::unix::fs::FileExt;
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let s = Scratch::new("wal-torn");
    let root = s.join("root");
    let live = live_conversation(&root);
    let shm = Arc::new(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(sidecar(&root, "-shm"))
            .unwrap(),
    );
    let mut whole = [0u8; 48];
    shm.read_exact_at(&mut whole, 48).unwrap();
    let mut torn = whole;
    // The second copy's change counter (offset 8 of the header).
    torn[8] ^= 0xff;
    let all_steps: Vec<i64> = (0..IN_DB + IN_WAL).collect();
    let dump = || run("agy-dump", &[root.to_str().unwrap()], b"");

    shm.write_all_at(&torn, 48).unwrap();
    let mender = {
        let shm = Arc::clone(&shm);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            shm.write_all_at(&whole, 48).unwrap();
        })
    };
    let started = Instant::now();
    let out = dump();
    mender.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(steps_in(&out.stdout), all_steps);

    shm.write_all_at(&torn, 48).unwrap();
    let out = dump();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("{ID}.db")) && err.contains("not dumped"),
        "{err}"
    );
    assert!(err.contains("WAL index"), "{err}");

    shm.write_all_at(&whole, 48).unwrap();
    live.user_step(IN_DB + IN_WAL, "written after the dumps");
    assert_eq!(dumped_steps(&root).len(), all_steps.len() + 1);
    live.close();
}

/// A frame of the WAL: 24 bytes of header, then a page.
fn frame_len(wal: &[u8]) -> usize {
    24 + u32::from_be_bytes(wal[8..12].try_into().unwrap()) as usize
}

#[test]
fn a_damaged_wal_reads_as_sqlite_recovers_it() {
    let s = Scratch::new("wal-damaged");
    let live_root = s.join("live");
    let live = live_conversation(&live_root);
    let wal = std::fs::read(sidecar(&live_root, "-wal")).unwrap();
    let frame = frame_len(&wal);
    let all: Vec<i64> = (0..IN_DB + IN_WAL).collect();
    let but_last: Vec<i64> = (0..IN_DB + IN_WAL - 1).collect();
    let db_only: Vec<i64> = (0..IN_DB).collect();
    let mut flipped_checksum = wal.clone();
    let last = wal.len() - frame;
    flipped_checksum[last + 24 + 100] ^= 0xff;
    let mut new_salt = wal.clone();
    new_salt[16] ^= 0xff;
    let mut no_header = wal.clone();
    no_header[..32].fill(0);
    let cases: Vec<(&str, Vec<u8>, &[i64])> = vec![
        ("whole", wal.clone(), &all),
        (
            "its last frame torn",
            wal[..wal.len() - frame / 2].to_vec(),
            &but_last,
        ),
        (
            "a byte of the last frame changed",
            flipped_checksum,
            &but_last,
        ),
        ("the header's salt changed", new_salt, &db_only),
        ("no header", no_header, &db_only),
        ("shorter than its header", wal[..20].to_vec(), &db_only),
    ];
    for (shm, suffixes) in [
        ("without -shm", &["", "-wal"][..]),
        ("with a -shm", &["", "-wal", "-shm"][..]),
    ] {
        for (name, bytes, expected) in &cases {
            let root = s.join(format!("{name} {shm}"));
            copy_shape(&live_root, &root, suffixes);
            std::fs::write(sidecar(&root, "-wal"), bytes).unwrap();
            let before = snapshot(&root);
            let got = dumped_steps(&root);
            assert_eq!(got, *expected, "{name}, {shm}");
            assert_eq!(snapshot(&root), before, "{name}, {shm}: the store changed");
            assert_eq!(
                got,
                sqlite_steps(&root, &s.path),
                "{name}, {shm}: as SQLite"
            );
        }
    }
    drop(live);
}

#[test]
fn a_new_conversation_whose_schema_is_only_in_the_wal_is_read() {
    // A conversation agy has just made: the database file is its first
    // page, the tables and every row are in the WAL.
    let s = Scratch::new("wal-only");
    let live_root = s.join("live");
    let live = AgyDb::create(&live_root, ID);
    for idx in 0..3 {
        live.user_step(idx, "only in the WAL");
    }
    let root = s.join("exited");
    copy_shape(&live_root, &root, &["", "-wal"]);
    drop(live);
    let db_len = std::fs::metadata(sidecar(&root, "")).unwrap().len();
    assert!(
        db_len <= 4096,
        "the file holds the header page only ({db_len})"
    );
    let before = snapshot(&root);
    assert_eq!(dumped_steps(&root), [0, 1, 2]);
    assert_eq!(snapshot(&root), before);
}
