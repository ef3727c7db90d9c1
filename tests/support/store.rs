//! A store worth copying, and ways to compare two: a conversation with
//! every table and storage class agy-dump must carry, its row-level
//! contents, and a snapshot of a directory tree; a copy of a store, and a
//! page of one damaged. Shared by the tests of agy-dump and agy-pack, which
//! compare what went in with what came out, and of the readers.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::pb::Msg;
use super::{brain_file, run_ok, AgyDb};

/// One SQLite value as (storage class, exact bytes).
pub type Stored = (String, Vec<u8>);

/// Everything a database holds at the row level: user_version, schema, and
/// every row of every table in rowid order.
#[derive(Debug, PartialEq)]
pub struct Contents {
    pub user_version: i64,
    pub schema: Vec<(String, String, String)>,
    pub tables: Vec<(String, Vec<Vec<Stored>>)>,
}

pub fn contents(path: &Path) -> Contents {
    let conn =
        Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let user_version = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid")
        .unwrap();
    let schema: Vec<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut tables = Vec::new();
    for (kind, name, sql) in &schema {
        if kind != "table" {
            continue;
        }
        let order = if sql.contains("WITHOUT ROWID") {
            ""
        } else {
            " ORDER BY rowid"
        };
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{name}\"{order}"))
            .unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| match r.get_ref(i).unwrap() {
                        rusqlite::types::ValueRef::Null => ("null".to_string(), vec![]),
                        rusqlite::types::ValueRef::Integer(v) => {
                            ("integer".to_string(), v.to_le_bytes().to_vec())
                        }
                        rusqlite::types::ValueRef::Real(v) => {
                            ("real".to_string(), v.to_bits().to_le_bytes().to_vec())
                        }
                        rusqlite::types::ValueRef::Text(t) => ("text".to_string(), t.to_vec()),
                        rusqlite::types::ValueRef::Blob(b) => ("blob".to_string(), b.to_vec()),
                    })
                    .collect::<Vec<_>>())
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        tables.push((name.clone(), rows));
    }
    Contents {
        user_version,
        schema,
        tables,
    }
}

/// A database with every table of agy's DDL filled, unknown tables and
/// columns from a "newer agy", every storage class in every column type,
/// invalid UTF-8, empty and NULL blobs and a multi-megabyte blob.
pub fn rich_db(root: &Path, id: &str) -> AgyDb {
    let db = AgyDb::create(root, id);
    for (idx, text) in ["Fix the flaky test", "Ünïcödé ✓ and \"quotes\"\n\ttabs"]
        .iter()
        .enumerate()
    {
        db.user_step(idx as i64, text);
    }
    let big: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    db.step(2, 21, 3, b"", &big);
    let c = &db.conn;
    c.execute("INSERT INTO steps (idx, step_type, status, metadata, step_payload) VALUES (3, 0, 0, NULL, x'')", []).unwrap();
    // Values agy never writes, but a store may hold: each must survive.
    c.execute(
        "INSERT INTO steps (idx, step_type, status, has_subtrajectory, metadata, error_details, permissions, task_details, render_info, step_payload, step_format) \
         VALUES (4, 'text-in-int', 2.5, 1, 'text in blob', 42, 1.5, CAST(x'ff00fe' AS TEXT), 9e999, -9e999, x'00ff')",
        [],
    )
    .unwrap();
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, "file:///repo").str(4, "main"))
            .ts(2, 1_786_000_000, 5)
            .build(),
    );
    db.gen_metadata(
        0,
        &Msg::new()
            .msg(1, Msg::new().str(19, "gemini-3-flash-agent"))
            .build(),
    );
    c.execute("INSERT INTO executor_metadata VALUES (0, x'0a00')", [])
        .unwrap();
    c.execute("INSERT INTO parent_references VALUES (0, NULL)", [])
        .unwrap();
    c.execute("INSERT INTO battle_mode_infos VALUES (0, x'')", [])
        .unwrap();
    // A newer agy's table and column.
    c.execute("ALTER TABLE steps ADD COLUMN future_column text", [])
        .unwrap();
    c.execute(
        "UPDATE steps SET future_column = 'from the future' WHERE idx = 1",
        [],
    )
    .unwrap();
    c.execute(
        "CREATE TABLE `future_table` (`k` integer PRIMARY KEY, `t` text, `i` integer, `r` real, `b` blob, `n` numeric, `u`)",
        [],
    )
    .unwrap();
    for (k, v) in [
        "NULL",
        "7",
        "-9223372036854775808",
        "0.1",
        "1.0",
        "-0.0",
        "9e999",
        "'text'",
        "''",
        "CAST(x'80' AS TEXT)",
        "x''",
        "x'deadbeef'",
        // Found by fuzz/ (record target): a double whose shortest form
        // serde_json's default float parser reads one ulp off, so
        // dump | pack stored another value.
        "9.111111111111111e116",
    ]
    .iter()
    .enumerate()
    {
        c.execute(
            &format!("INSERT INTO future_table VALUES ({k}, {v}, {v}, {v}, {v}, {v}, {v})"),
            [],
        )
        .unwrap();
    }
    c.execute(
        "CREATE TABLE `keyed` (`a` text, `b` blob, PRIMARY KEY (`a`)) WITHOUT ROWID",
        [],
    )
    .unwrap();
    c.execute("INSERT INTO keyed VALUES ('z', x'01'), ('a', NULL)", [])
        .unwrap();
    c.execute(
        "CREATE UNIQUE INDEX `future_index` ON `future_table`(`t`, `i`)",
        [],
    )
    .ok();
    brain_file(
        root,
        id,
        ".system_generated/logs/transcript.jsonl",
        b"{\"step_index\":0}\n",
    );
    brain_file(root, id, "steps/2/output.txt", &[0xff, 0xfe, 0x00, b'x']);
    brain_file(root, id, "task.md", "# Tâche\n".as_bytes());
    db
}

/// agy-dump's stdout for `args`, which must succeed.
pub fn dump_of(args: &[&str]) -> Vec<u8> {
    run_ok("agy-dump", args, b"")
}

/// NDJSON output as JSON values, one a line.
pub fn json_lines(bytes: &[u8]) -> Vec<serde_json::Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

/// Every file, directory and link below `dir` with its contents (`<dir>`,
/// `<link>` for the other two), sorted: equal snapshots mean nothing was
/// written, removed or left behind.
pub fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    if !dir.exists() {
        return out;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let ft = entry.file_type().unwrap();
            if ft.is_dir() {
                out.push((
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    b"<dir>".to_vec(),
                ));
                stack.push(path);
            } else if ft.is_symlink() {
                out.push((
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    b"<link>".to_vec(),
                ));
            } else {
                out.push((
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// Copies the directory tree `from` to `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Overwrites 64 bytes of the database's page `page` (4096-byte pages, as
/// the sample's), past its header: page 4 is the steps table's.
pub fn damage_page(db: &Path, page: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    file.seek(SeekFrom::Start((page - 1) * 4096 + 8)).unwrap();
    file.write_all(&[0xA5; 64]).unwrap();
}
