//! The file reader against SQLite itself: databases SQLite wrote, in the
//! shapes agy leaves and the odd ones SQLite can make, read both ways.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::*;
use crate::store::sqlite::Source;

/// A directory of its own for one test, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agy-file-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A conversation database with agy's schema at `path`, in `page_size`
/// pages and `journal` mode, holding `steps` steps whose blobs grow from
/// nothing to several pages (so that records overflow, chains of every
/// length, and the tree has interior pages).
fn agy_db(path: &Path, page_size: u32, journal: &str, steps: i64) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "page_size", page_size).unwrap();
    conn.pragma_update(None, "journal_mode", journal).unwrap();
    conn.pragma_update(None, "user_version", 1).unwrap();
    for (_, _, sql) in AGY_SCHEMA {
        conn.execute_batch(sql).unwrap();
    }
    conn.execute(
        "INSERT INTO trajectory_meta VALUES ('t-1', 'c-1', 4, 17)",
        [],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO trajectory_metadata_blob (data) VALUES (x'0a0568656c6c6f')",
        [],
    )
    .unwrap();
    add_steps(&conn, 0, steps);
    conn
}

/// Steps `from..to`: blobs of a length that walks through every overflow
/// case, texts, NULLs, negative and large integers and a real.
fn add_steps(conn: &Connection, from: i64, to: i64) {
    let mut insert = conn
        .prepare(
            "INSERT INTO steps (idx, step_type, status, metadata, error_details, \
             step_payload, step_format) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .unwrap();
    for idx in from..to {
        let len = (idx as usize * 997) % 20_000;
        let payload: Vec<u8> = (0..len).map(|i| (i * 31 + idx as usize) as u8).collect();
        let error: Option<String> = (idx % 7 == 0).then(|| format!("error {idx} ✓"));
        let format: rusqlite::types::Value = match idx % 3 {
            0 => rusqlite::types::Value::Real(idx as f64 + 0.5),
            1 => rusqlite::types::Value::Integer(-idx * 1_000_000_007),
            _ => rusqlite::types::Value::Integer(i64::MIN + idx),
        };
        insert
            .execute(rusqlite::params![
                idx,
                idx % 40,
                -(idx % 3),
                vec![1u8; (idx % 5) as usize],
                error,
                payload,
                format
            ])
            .unwrap();
        conn.execute(
            "INSERT INTO gen_metadata (idx, data, size) VALUES (?1, ?2, ?3)",
            rusqlite::params![idx, vec![idx as u8; 300], idx * 300],
        )
        .unwrap();
    }
}

/// A table's rows, each cell owned, as one reader gives them.
fn rows_of(tables: &dyn Tables, table: &str) -> Vec<Vec<Cell<'static>>> {
    let mut rows = Vec::new();
    tables
        .each_row(table, &mut |_, cells| {
            rows.push(cells.iter().map(owned).collect());
            Ok(())
        })
        .unwrap();
    rows
}

fn owned(cell: &Cell<'_>) -> Cell<'static> {
    match cell {
        Cell::Null => Cell::Null,
        Cell::Integer(v) => Cell::Integer(*v),
        Cell::Real(v) => Cell::Real(*v),
        Cell::Text(t) => Cell::Text(t.to_vec().into()),
        Cell::Blob(b) => Cell::Blob(b.to_vec().into()),
    }
}

/// Reads `db` from its files and through SQLite and holds the two to
/// each other: user version, schema, cascade id and every row of every
/// table. Returns the number of steps rows.
fn same_both_ways(db: &Path) -> usize {
    let file = Snapshot::open(db).expect("the file reader takes it");
    let sqlite = Source::open(db).ok().unwrap();
    let sqlite: &dyn Tables = &sqlite;
    assert_eq!(file.user_version().unwrap(), sqlite.user_version().unwrap());
    assert_eq!(file.schema(), sqlite.schema());
    assert_eq!(file.cascade_id().unwrap(), sqlite.cascade_id().unwrap());
    let mut steps = 0;
    for object in file.schema().iter().filter(|o| o.object_type == "table") {
        let rows = rows_of(&file, &object.name);
        assert_eq!(rows, rows_of(sqlite, &object.name), "table {}", object.name);
        if object.name == "steps" {
            steps = rows.len();
        }
        // The first columns alone (what agy-usage reads of a step), from a
        // record cut short of its overflow pages, are the same.
        let width = rows.first().map_or(0, Vec::len);
        for n in [1, 4, 5, 6, width, width + 3] {
            let want: Vec<Vec<Cell<'static>>> = rows
                .iter()
                .map(|r| r[..n.clamp(1, r.len())].to_vec())
                .collect();
            for (name, tables) in [("file", &file as &dyn Tables), ("sqlite", sqlite)] {
                let mut got = Vec::new();
                tables
                    .each_row_prefix(&object.name, n, &mut |_, cells| {
                        got.push(cells.iter().map(owned).collect::<Vec<_>>());
                        Ok(())
                    })
                    .unwrap();
                assert_eq!(
                    got, want,
                    "{name}: table {} cut after {n} columns",
                    object.name
                );
            }
        }
    }
    file.check_unchanged().unwrap();
    steps
}

/// Copies `db` and those of its sidecars named by `suffixes` into `to`,
/// as agy leaves them when it exits (or is killed) with `conn` open.
fn left_behind(db: &Path, to: &Path, suffixes: &[&str]) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    let name = db.file_name().unwrap();
    for suffix in suffixes {
        let mut from = db.as_os_str().to_owned();
        from.push(suffix);
        let mut into = to.join(name).into_os_string();
        into.push(suffix);
        std::fs::copy(from, into).unwrap();
    }
    to.join(name)
}

#[test]
fn rollback_databases_of_every_page_size_read_as_sqlite_reads_them() {
    let dir = scratch("pages");
    for page_size in [512, 1024, 4096, 32768, 65536] {
        let db = dir.join(format!("{page_size}.db"));
        agy_db(&db, page_size, "DELETE", 120).close().unwrap();
        assert_eq!(same_both_ways(&db), 120, "page size {page_size}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn free_pages_and_pointer_maps_are_not_rows() {
    let dir = scratch("vacuum");
    let db = dir.join("c.db");
    let conn = Connection::open(&db).unwrap();
    conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
        .unwrap();
    drop(conn);
    let conn = agy_db(&db, 1024, "DELETE", 200);
    conn.execute("DELETE FROM steps WHERE idx % 3 = 1", [])
        .unwrap();
    conn.close().unwrap();
    assert_eq!(same_both_ways(&db), 133);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_wal_left_by_an_exited_or_killed_agy_reads_as_sqlite_reads_it() {
    let dir = scratch("wal");
    let live = dir.join("live/c.db");
    std::fs::create_dir_all(live.parent().unwrap()).unwrap();
    let conn = agy_db(&live, 4096, "WAL", 60);
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    add_steps(&conn, 60, 90);
    conn.execute("UPDATE trajectory_meta SET cascade_id = 'c-2'", [])
        .unwrap();
    // Exited: the WAL, no -shm. Killed: the -shm too, which nobody holds.
    let exited = left_behind(&live, &dir.join("exited"), &["", "-wal"]);
    let killed = left_behind(&live, &dir.join("killed"), &["", "-wal", "-shm"]);
    for db in [&exited, &killed] {
        assert_eq!(same_both_ways(db), 90, "{}", db.display());
    }
    drop(conn);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A WAL of more frames than one read takes (a MiB's worth), whole and
/// cut at and just past the end of a read: SQLite's rows each time.
#[test]
fn a_wal_longer_than_one_read_reads_as_sqlite_reads_it() {
    let dir = scratch("long-wal");
    let live = dir.join("live/c.db");
    std::fs::create_dir_all(live.parent().unwrap()).unwrap();
    let conn = agy_db(&live, 1024, "WAL", 0);
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    let wal_len = || std::fs::metadata(super::sidecar(&live, "-wal")).map_or(0, |m| m.len());
    let mut steps = 0;
    while wal_len() < 5 << 19 {
        add_steps(&conn, steps, steps + 20);
        steps += 20;
    }
    let whole = left_behind(&live, &dir.join("whole"), &["", "-wal"]);
    assert_eq!(same_both_ways(&whole), steps as usize);
    let frames = std::fs::read(super::sidecar(&live, "-wal")).unwrap();
    let frame_len = 24 + 1024;
    let per_read = (1 << 20) / frame_len;
    for (name, cut) in [
        ("at-a-read", 32 + per_read * frame_len),
        ("past-a-read", 32 + per_read * frame_len + 100),
        ("at-two-reads", 32 + 2 * per_read * frame_len),
    ] {
        let db = left_behind(&live, &dir.join(name), &[""]);
        std::fs::write(super::sidecar(&db, "-wal"), &frames[..cut]).unwrap();
        let read = same_both_ways(&db);
        assert!(
            read > 0 && read < steps as usize,
            "{name}: {read} of {steps}"
        );
    }
    drop(conn);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_wal_that_a_live_connection_holds_is_left_to_sqlites_locks() {
    use std::io::{BufRead, Write};
    let dir = scratch("live");
    let db = dir.join("c.db");
    let conn = agy_db(&db, 4096, "WAL", 5);
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    add_steps(&conn, 5, 10);
    let db = left_behind(&db, &dir.join("left"), &["", "-wal", "-shm"]);
    drop(conn);
    assert_eq!(same_both_ways(&db), 10);
    // Another process (locks a process holds itself are not reported to
    // it) opens it as agy would, and keeps it open until told.
    let mut holder = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys\n\
             c = sqlite3.connect(sys.argv[1])\n\
             c.execute('SELECT count(*) FROM steps').fetchall()\n\
             print('open', flush=True)\n\
             sys.stdin.read()",
        ])
        .arg(&db)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3, to hold a connection");
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "open\n");
    assert!(Snapshot::open(&db).is_none(), "a held -shm goes to SQLite");
    holder.stdin.take().unwrap().write_all(b"").unwrap();
    assert!(holder.wait().unwrap().success());
    assert!(Snapshot::open(&db).is_some(), "and once let go, is read");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_torn_wal_tail_and_a_restarted_wals_leftovers_are_not_read() {
    let dir = scratch("tails");
    let live = dir.join("live/c.db");
    std::fs::create_dir_all(live.parent().unwrap()).unwrap();
    let conn = agy_db(&live, 1024, "WAL", 0);
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    add_steps(&conn, 0, 80);
    // Restarted: checkpointed, then fewer frames written over the first
    // ones under new salts; the old frames stay behind them.
    conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))
        .unwrap();
    add_steps(&conn, 80, 83);
    let restarted = left_behind(&live, &dir.join("restarted"), &["", "-wal"]);
    assert_eq!(same_both_ways(&restarted), 83);
    let wal_len = std::fs::metadata(super::sidecar(&restarted, "-wal"))
        .unwrap()
        .len();
    // Torn: the last frame cut short, so the last transaction never
    // committed.
    let torn = left_behind(&live, &dir.join("torn"), &["", "-wal"]);
    let mut frames = std::fs::read(super::sidecar(&live, "-wal")).unwrap();
    frames.truncate(frames.len().min(wal_len as usize) - 100);
    std::fs::write(super::sidecar(&torn, "-wal"), &frames).unwrap();
    assert!(same_both_ways(&torn) <= 83);
    // Garbage where the header should be: no frames, for SQLite's
    // recovery too (through SQLite it was ten seconds of retries and then
    // "locking protocol", found by fuzz/'s sqlite_file).
    let garbage = left_behind(&live, &dir.join("garbage"), &[""]);
    std::fs::write(super::sidecar(&garbage, "-wal"), [b'x'; 60]).unwrap();
    assert_eq!(same_both_ways(&garbage), 80, "the 80 checkpointed");
    // A header whose page size says 1 (as the database header writes
    // 65536), checksummed anew: not a WAL header to SQLite either.
    let one = left_behind(&live, &dir.join("one"), &["", "-wal"]);
    let mut wal = std::fs::read(super::sidecar(&one, "-wal")).unwrap();
    wal[8..12].copy_from_slice(&1u32.to_be_bytes());
    let (s0, s1) = super::checksum::checksum(wal[3] & 1 == 1, (0, 0), &wal[..24]);
    wal[24..28].copy_from_slice(&s0.to_be_bytes());
    wal[28..32].copy_from_slice(&s1.to_be_bytes());
    std::fs::write(super::sidecar(&one, "-wal"), &wal).unwrap();
    assert_eq!(same_both_ways(&one), 80);
    drop(conn);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_table_that_is_not_agys_is_left_to_sqlite() {
    let dir = scratch("foreign");
    let db = dir.join("c.db");
    let conn = agy_db(&db, 4096, "DELETE", 3);
    conn.execute_batch("CREATE TABLE notes (x)").unwrap();
    conn.close().unwrap();
    assert!(Snapshot::open(&db).is_none());
    std::fs::write(dir.join("junk.db"), vec![7u8; 8192]).unwrap();
    assert!(Snapshot::open(&dir.join("junk.db")).is_none());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn each_agy_tables_layout_is_sqlites() {
    let conn = Connection::open_in_memory().unwrap();
    for table in agy_tables() {
        assert_eq!(
            table.layout.defaults.len(),
            table.columns.len(),
            "{}",
            table.name
        );
        conn.execute_batch(table.sql).unwrap();
        // The defaults, and the key: a row of defaults gets rowid 1.
        conn.execute(&format!("INSERT INTO {} DEFAULT VALUES", table.name), [])
            .unwrap();
        let list = table
            .columns
            .iter()
            .map(|c| format!("`{}`", c.name))
            .collect::<Vec<_>>()
            .join(",");
        let mut stmt = conn
            .prepare(&format!("SELECT {list} FROM {}", table.name))
            .unwrap();
        let sqlite: Vec<Cell<'static>> = stmt
            .query_row([], |row| {
                Ok((0..table.columns.len())
                    .map(|i| owned(&super::super::cell(row, i).unwrap()))
                    .collect())
            })
            .unwrap();
        let ours: Vec<Cell<'static>> = (0..table.columns.len())
            .map(|i| match table.layout.rowid_alias {
                Some(alias) if alias == i => Cell::Integer(1),
                _ => owned(&table.layout.defaults[i].cell()),
            })
            .collect();
        assert_eq!(ours, sqlite, "{}", table.name);
    }
}
