//! agy-dump and agy-pack: the row stream is a lossless copy of a store, and
//! every refusal leaves nothing behind.

mod support;

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use support::pb::Msg;
use support::{brain_file, run, run_ok, stderr, AgyDb, Scratch};

const ID: &str = "5f0c1f4e-8c3e-4a57-9d1e-2b7c9a0d4e11";

/// One SQLite value as (storage class, exact bytes).
type Stored = (String, Vec<u8>);

/// Everything a database holds at the row level: user_version, schema, and
/// every row of every table in rowid order.
#[derive(Debug, PartialEq)]
struct Contents {
    user_version: i64,
    schema: Vec<(String, String, String)>,
    tables: Vec<(String, Vec<Vec<Stored>>)>,
}

fn contents(path: &Path) -> Contents {
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
fn rich_db(root: &Path, id: &str) -> AgyDb {
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

fn dump_of(args: &[&str]) -> Vec<u8> {
    run_ok("agy-dump", args, b"")
}

fn lines(bytes: &[u8]) -> Vec<serde_json::Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
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

#[test]
fn dump_then_pack_is_identical_at_the_row_level() {
    let s = Scratch::new("roundtrip");
    let src = s.join("src");
    let db = rich_db(&src, ID);
    let db_path = db.close();
    let stream = dump_of(&[db_path.to_str().unwrap()]);

    let dst = s.join("dst");
    let printed = run_ok("agy-pack", &["--root", dst.to_str().unwrap()], &stream);
    let packed = dst.join("conversations").join(format!("{ID}.db"));
    assert_eq!(
        String::from_utf8(printed).unwrap(),
        format!("{}\n", packed.display())
    );

    assert_eq!(contents(&db_path), contents(&packed));
    let again = dump_of(&[packed.to_str().unwrap()]);
    assert!(again == stream, "dumping the packed db gives other bytes");
    assert_eq!(
        files_under(&src.join("brain").join(ID)),
        files_under(&dst.join("brain").join(ID))
    );
    // Packed databases are agy-shaped: WAL journal, page size of agy.
    let conn = Connection::open(&packed).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn large_brain_files_travel_in_parts_of_a_megabyte() {
    const PART: usize = 1 << 20;
    let s = Scratch::new("parts");
    let src = s.join("src");
    let db_path = rich_db(&src, ID).close();
    // Text whose part boundaries fall inside two-, three- and four-byte
    // characters, binary data, and sizes either side of one part.
    let mut text = "a".repeat(PART - 1) + "é";
    text += &"b".repeat(PART - 3);
    text += "✓";
    text += &"c".repeat(PART - 5);
    text += "🦀tail";
    let binary: Vec<u8> = (0..PART * 3 / 2).map(|i| (i * 7 % 256) as u8).collect();
    let files: [(&str, Vec<u8>); 4] = [
        ("big.txt", text.clone().into_bytes()),
        ("big.bin", binary),
        ("exact.txt", vec![b'x'; PART]),
        ("one-more.txt", vec![b'y'; PART + 1]),
    ];
    for (name, content) in &files {
        brain_file(&src, ID, name, content);
    }
    let stream = dump_of(&[db_path.to_str().unwrap()]);
    let file_lines = stream
        .split(|b| *b == b'\n')
        .filter(|l| l.windows(13).any(|w| w == b"\"kind\":\"file\""));
    assert!(
        file_lines.into_iter().all(|l| l.len() < 2 * PART + 200),
        "a file record holds more than one part"
    );
    let records = lines(&stream);
    let parts = |path: &str| -> Vec<&serde_json::Value> {
        records.iter().filter(|r| r["path"] == path).collect()
    };
    let big = parts("big.txt");
    assert_eq!(big.len(), 4);
    assert!(big[0].get("append").is_none() && big[1..].iter().all(|r| r["append"] == true));
    // Cut before each multi-byte character, so every part stays text.
    let texts: Vec<&str> = big.iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert_eq!(texts.concat(), text);
    assert_eq!(
        texts.iter().map(|t| t.len()).collect::<Vec<_>>(),
        [PART - 1, PART - 1, PART - 2, 4 + 4]
    );
    assert!(parts("big.bin").iter().all(|r| r.get("hex").is_some()));
    assert_eq!(parts("big.bin").len(), 2);
    assert_eq!(parts("exact.txt").len(), 1);
    assert_eq!(parts("one-more.txt").len(), 2);

    let dst = s.join("dst");
    run_ok("agy-pack", &["--root", dst.to_str().unwrap()], &stream);
    assert_eq!(
        files_under(&src.join("brain").join(ID)),
        files_under(&dst.join("brain").join(ID))
    );
    let packed = dst.join("conversations").join(format!("{ID}.db"));
    assert!(dump_of(&[packed.to_str().unwrap()]) == stream);
}

#[test]
fn stream_shape_follows_the_contract() {
    let s = Scratch::new("shape");
    let db = rich_db(&s.path, ID);
    db.close();
    let records = lines(&dump_of(&[s.path.to_str().unwrap()]));
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[0], "db");
    assert_eq!(records[0]["user_version"], 1);
    let first_row = kinds.iter().position(|k| *k == "row").unwrap();
    let first_file = kinds.iter().position(|k| *k == "file").unwrap();
    assert!(kinds[1..first_row].iter().all(|k| *k == "schema"));
    assert!(kinds[first_row..first_file].iter().all(|k| *k == "row"));
    assert!(kinds[first_file..].iter().all(|k| *k == "file"));
    assert!(records.iter().all(|r| r["conversation"] == ID));
    // steps rows come after every other table's rows.
    let tables: Vec<&str> = records[first_row..first_file]
        .iter()
        .map(|r| r["table"].as_str().unwrap())
        .collect();
    let first_step = tables.iter().position(|t| *t == "steps").unwrap();
    assert!(tables[first_step..].iter().all(|t| *t == "steps"));
    assert_eq!(tables[0], "trajectory_meta");
    // The seed's example step, byte for byte in its fields.
    let step0 = &records[first_row + first_step];
    assert_eq!(step0["row"]["idx"], 0);
    assert_eq!(step0["row"]["step_type"], 14);
    assert_eq!(
        step0["row"]["metadata"],
        hex::encode(Msg::new().ts(1, 1_786_000_000, 0).varint(3, 4).build())
    );
    let odd = records
        .iter()
        .find(|r| r["table"] == "steps" && r["row"]["idx"] == 4)
        .unwrap();
    assert_eq!(odd["row"]["step_type"], "text-in-int");
    assert_eq!(
        odd["row"]["metadata"],
        serde_json::json!({"text": "text in blob"})
    );
    assert_eq!(odd["row"]["error_details"], 42);
    assert_eq!(
        odd["row"]["task_details"],
        serde_json::json!({"text_hex": "ff00fe"})
    );
    assert_eq!(
        odd["row"]["render_info"],
        serde_json::json!({"real": "inf"})
    );
    assert_eq!(
        odd["row"]["step_payload"],
        serde_json::json!({"real": "-inf"})
    );
    let future = records
        .iter()
        .find(|r| r["table"] == "future_table" && r["row"]["k"] == 11)
        .unwrap();
    assert_eq!(future["row"]["t"], serde_json::json!({"blob": "deadbeef"}));
    assert_eq!(future["row"]["b"], "deadbeef");
    // Files: sorted bytewise, text when UTF-8, hex otherwise.
    let paths: Vec<&str> = records[first_file..]
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            ".system_generated/logs/transcript.jsonl",
            "steps/2/output.txt",
            "task.md"
        ]
    );
    assert_eq!(records[first_file + 1]["hex"], "fffe0078");
    assert_eq!(records[first_file + 2]["text"], "# Tâche\n");
    // Non-ASCII is written as UTF-8, not \u escapes; reals keep their point.
    let raw = String::from_utf8(dump_of(&[s.path.to_str().unwrap()])).unwrap();
    assert!(raw.contains("Tâche"));
    assert!(raw.contains("\"r\":1.0"));
    // --no-brain drops file records.
    let records = lines(&dump_of(&["--no-brain", s.path.to_str().unwrap()]));
    assert!(records.iter().all(|r| r["kind"] != "file"));
}

fn hashes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files_under(dir)
}

#[test]
fn dump_reads_the_wal_and_changes_nothing() {
    let s = Scratch::new("wal");
    let live = AgyDb::create(&s.path, ID);
    live.conn
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    for idx in 0..7 {
        live.user_step(idx, "still in the WAL");
    }
    let conversations = s.join("conversations");
    assert!(conversations.join(format!("{ID}.db-wal")).exists());
    // A live writer beside us: the -shm is there.
    let before = hashes(&s.path);
    let records = lines(&dump_of(&[s.path.to_str().unwrap()]));
    assert_eq!(records.iter().filter(|r| r["table"] == "steps").count(), 7);
    assert_eq!(hashes(&s.path), before, "dumping changed the store");

    // A crashed agy: db and WAL, no -shm.
    let crashed = Scratch::new("crashed");
    let dir = crashed.join("conversations");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        conversations.join(format!("{ID}.db")),
        dir.join(format!("{ID}.db")),
    )
    .unwrap();
    std::fs::copy(
        conversations.join(format!("{ID}.db-wal")),
        dir.join(format!("{ID}.db-wal")),
    )
    .unwrap();
    let before = hashes(&crashed.path);
    let crashed_records = lines(&dump_of(&[crashed.path.to_str().unwrap()]));
    assert_eq!(crashed_records, records);
    assert_eq!(
        hashes(&crashed.path),
        before,
        "dumping changed the crashed store"
    );

    // Closed cleanly: no sidecars, and none appear.
    drop(live);
    assert!(!conversations.join(format!("{ID}.db-wal")).exists());
    let before = hashes(&s.path);
    assert_eq!(lines(&dump_of(&[s.path.to_str().unwrap()])), records);
    assert_eq!(hashes(&s.path), before);
}

#[test]
fn dump_works_from_a_read_only_copy() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("readonly");
    rich_db(&s.path, ID).close();
    let expected = dump_of(&[s.path.to_str().unwrap()]);
    let dir = s.join("conversations");
    let db = dir.join(format!("{ID}.db"));
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let got = dump_of(&[s.path.to_str().unwrap()]);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(got == expected);
}

#[test]
fn discovery_skips_what_is_not_agy_with_one_warning_each() {
    let s = Scratch::new("discovery");
    AgyDb::create(&s.path, "b-conversation").close();
    AgyDb::create(&s.path, "a-conversation").close();
    let dir = s.join("conversations");
    std::fs::write(dir.join("empty.db"), b"").unwrap();
    std::fs::write(dir.join("garbage.db"), b"this is not sqlite at all, not even close......................................................................................").unwrap();
    std::fs::write(dir.join("old.pb"), b"\x01\x02").unwrap();
    let foreign = Connection::open(dir.join("foreign.db")).unwrap();
    foreign.execute("CREATE TABLE notes (x)", []).unwrap();
    drop(foreign);

    let out = run("agy-dump", &[s.path.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let ids: Vec<String> = lines(&out.stdout)
        .iter()
        .filter(|r| r["kind"] == "db")
        .map(|r| r["conversation"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["a-conversation", "b-conversation"]);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 3, "{err}");
    for name in ["empty.db", "garbage.db", "foreign.db"] {
        assert!(
            err.lines()
                .any(|l| l.contains(name) && l.contains("skipped")),
            "{err}"
        );
    }

    for name in ["empty.db", "garbage.db", "foreign.db"] {
        let out = run("agy-dump", &[dir.join(name).to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(
            stderr(&out).contains(name)
                && stderr(&out).contains("not an agy conversation database")
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn ids_select_conversations_and_default_root_comes_from_the_environment() {
    let s = Scratch::new("ids");
    let root = s.join("home/.gemini/antigravity-cli");
    AgyDb::create(&root, "one").close();
    AgyDb::create(&root, "two").close();
    let home = s.join("home");
    let out = support::run_env(
        "agy-dump",
        &["--id", "two"],
        b"",
        &[("HOME", home.to_str().unwrap()), ("GEMINI_HOME", "")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let records = lines(&out.stdout);
    assert!(!records.is_empty() && records.iter().all(|r| r["conversation"] == "two"));

    let gemini = s.join("elsewhere");
    AgyDb::create(&gemini.join("antigravity-cli"), "three").close();
    let out = support::run_env(
        "agy-dump",
        &[],
        b"",
        &[
            ("HOME", home.to_str().unwrap()),
            ("GEMINI_HOME", gemini.to_str().unwrap()),
        ],
    );
    assert!(lines(&out.stdout)
        .iter()
        .all(|r| r["conversation"] == "three"));

    let out = run("agy-dump", &["--id", "nope", root.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("\"nope\""));
}

#[test]
fn brain_symlinks_are_skipped_not_followed() {
    let s = Scratch::new("symlink");
    AgyDb::create(&s.path, ID).close();
    brain_file(&s.path, ID, "real.txt", b"real");
    std::fs::write(s.join("secret"), b"secret").unwrap();
    std::os::unix::fs::symlink(s.join("secret"), s.join("brain").join(ID).join("link.txt"))
        .unwrap();
    let out = run("agy-dump", &[s.path.to_str().unwrap()], b"");
    assert!(out.status.success());
    let files: Vec<String> = lines(&out.stdout)
        .iter()
        .filter(|r| r["kind"] == "file")
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files, ["real.txt"]);
    assert!(stderr(&out).contains("link.txt") && stderr(&out).contains("symbolic link"));
}

#[test]
fn dump_into_a_closed_pipe_exits_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let s = Scratch::new("pipe");
    rich_db(&s.path, ID).close();
    let mut child = Command::new(support::exe("agy-dump"))
        .arg(&s.path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here, like `head -1` exiting.
    let out = child.wait_with_output().unwrap();
    assert!(first.contains("\"kind\":\"db\""));
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_stream_without_schema_gets_the_agy_ddl() {
    let s = Scratch::new("noschema");
    let (m, p) = support::steps::user_input_step(0, "hello");
    let stream = format!(
        "{{\"conversation\":\"c1\",\"kind\":\"row\",\"table\":\"trajectory_meta\",\"row\":{{\"trajectory_id\":\"t\",\"cascade_id\":\"c1\",\"trajectory_type\":4,\"source\":17}}}}\n\
         {{\"conversation\":\"c1\",\"kind\":\"row\",\"table\":\"steps\",\"row\":{{\"idx\":0,\"step_type\":14,\"status\":3,\"metadata\":\"{}\",\"step_payload\":\"{}\"}}}}\n",
        hex::encode(m),
        hex::encode(p)
    );
    run_ok(
        "agy-pack",
        &["--root", s.path.to_str().unwrap()],
        stream.as_bytes(),
    );
    let c = contents(&s.join("conversations/c1.db"));
    assert_eq!(c.user_version, 1);
    let expected: Vec<String> = support::AGY_DDL.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        c.schema
            .iter()
            .map(|(_, _, sql)| sql.clone())
            .collect::<Vec<_>>(),
        expected
    );
    assert!(s.join("brain/c1/.system_generated/logs").is_dir());
    let steps = &c.tables.iter().find(|(t, _)| t == "steps").unwrap().1;
    assert_eq!(
        steps[0][3],
        ("integer".to_string(), 0i64.to_le_bytes().to_vec()),
        "defaults apply"
    );
}

/// Runs agy-pack on `stream` into a fresh root and checks that it fails
/// with exit 1, a message containing every `needles`, and an untouched root.
fn refused(stream: &str, args: &[&str], needles: &[&str]) {
    let s = Scratch::new("refuse");
    let root = s.join("root");
    std::fs::create_dir_all(root.join("conversations")).unwrap();
    std::fs::create_dir_all(root.join("brain")).unwrap();
    let before = files_under(&root);
    let mut all = vec!["--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run("agy-pack", &all, stream.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{stream}: {}", stderr(&out));
    let err = stderr(&out);
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in {err:?}");
    }
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        files_under(&root),
        before,
        "agy-pack left something behind for {stream}"
    );
}

const GOOD_DB: &str = r#"{"conversation":"c1","kind":"db","user_version":1}"#;
const GOOD_ROW: &str =
    r#"{"conversation":"c1","kind":"row","table":"steps","row":{"idx":0,"step_payload":"080e"}}"#;

#[test]
fn pack_refuses_malformed_records_and_leaves_nothing() {
    refused(
        &format!("{GOOD_DB}\n{GOOD_ROW}\n{{not json\n"),
        &[],
        &["stdin:3", "bad JSON", "\"c1\" not written"],
    );
    refused(
        &format!("{GOOD_DB}\n{}\n", GOOD_ROW.replace("080e", "08zz")),
        &[],
        &["stdin:2", "step_payload", "bad hex"],
    );
    refused(
        &format!("{GOOD_DB}\n{{\"conversation\":\"c1\",\"kind\":\"mystery\"}}\n"),
        &[],
        &["stdin:2", "unknown record kind \"mystery\""],
    );
    refused(
        &format!("{GOOD_DB}\n{}\n", GOOD_ROW.replace("steps", "nowhere")),
        &[],
        &["stdin:2", "no table \"nowhere\""],
    );
    refused(
        &format!(
            "{GOOD_DB}\n{}\n",
            GOOD_ROW.replace("step_payload", "nonsense")
        ),
        &[],
        &["stdin:2", "no column \"nonsense\""],
    );
    refused(
        &format!("{GOOD_ROW}\n{GOOD_DB}\n"),
        &[],
        &["stdin:2", "db record must be the first"],
    );
    refused(
        r#"{"kind":"db","user_version":1}"#,
        &[],
        &["stdin:1", "no \"conversation\""],
    );
    refused(
        r#"{"conversation":"c1","kind":"file","path":"a","text":"x","hex":"00"}"#,
        &[],
        &["exactly one of"],
    );
    refused(
        &format!(
            "{GOOD_DB}\n{}\n",
            r#"{"conversation":"c1","kind":"file","path":"a","append":true,"text":"x"}"#
        ),
        &[],
        &[
            "stdin:2",
            "file a",
            "\"append\" to a file that no earlier record",
        ],
    );
    refused(
        &format!(
            "{GOOD_DB}\n{}\n",
            r#"{"conversation":"c1","kind":"file","dir":"conversations","path":"c1.meta","append":true,"text":"x"}"#
        ),
        &[],
        &["stdin:2", "\"append\" to a file that no earlier record"],
    );
    // Records of one conversation split apart: the first c1 was written, so
    // check the message and that the second c1 and c2 were not.
    let s = Scratch::new("split");
    let stream = format!("{GOOD_ROW}\n{}\n{GOOD_ROW}\n", GOOD_ROW.replace("c1", "c2"));
    let out = run(
        "agy-pack",
        &["--root", s.path.to_str().unwrap()],
        stream.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("stdin:3") && stderr(&out).contains("split apart"),
        "{}",
        stderr(&out)
    );
    assert!(s.join("conversations/c1.db").exists() && s.join("conversations/c2.db").exists());
    let leftovers: Vec<_> = std::fs::read_dir(s.join("conversations"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "{leftovers:?}");
}

#[test]
fn pack_refuses_paths_and_sql_that_escape() {
    for id in ["../evil", "a/b", "..", "", ".hidden"] {
        let line = GOOD_ROW.replace("\"c1\"", &serde_json::to_string(id).unwrap());
        refused(&line, &[], &["conversation id"]);
    }
    for path in ["../../etc/passwd", "/etc/passwd", "a/../../b", "a//b"] {
        let line = format!(
            "{{\"conversation\":\"c1\",\"kind\":\"file\",\"path\":{},\"text\":\"x\"}}",
            serde_json::to_string(path).unwrap()
        );
        refused(&line, &[], &["file path"]);
    }
    let schema = |t: &str, sql: &str| {
        format!(
            "{{\"conversation\":\"c1\",\"kind\":\"schema\",\"type\":\"{t}\",\"name\":\"x\",\"sql\":{}}}",
            serde_json::to_string(sql).unwrap()
        )
    };
    refused(
        &schema("table", "CREATE TABLE x(a); DROP TABLE y"),
        &[],
        &["more than one statement"],
    );
    refused(
        &schema("table", "ATTACH DATABASE '/tmp/evil.db' AS evil"),
        &[],
        &["only CREATE TABLE"],
    );
    refused(
        &schema(
            "trigger",
            "CREATE TRIGGER x AFTER INSERT ON steps BEGIN DELETE FROM steps; END",
        ),
        &[],
        &["only CREATE TABLE"],
    );
    refused(
        &schema("view", "CREATE VIEW x AS SELECT 1"),
        &[],
        &["only CREATE TABLE"],
    );
    refused(
        &schema("table", "CREATE TABLE y(a)"),
        &[],
        &["creates something else"],
    );
    // A schema that is not agy's: agy-pack would write what agy-dump then
    // skips as "not an agy conversation database", so it refuses it.
    refused(
        &format!("{}\n", schema("table", "CREATE TABLE x(a)")),
        &[],
        &[
            "not an agy conversation: no steps table",
            "conversation \"c1\" not written",
        ],
    );
    let named = |name: &str, sql: &str| {
        format!(
            "{{\"conversation\":\"c1\",\"kind\":\"schema\",\"type\":\"table\",\"name\":\"{name}\",\"sql\":{}}}",
            serde_json::to_string(sql).unwrap()
        )
    };
    refused(
        &format!(
            "{}\n{}\n",
            named(
                "trajectory_meta",
                "CREATE TABLE trajectory_meta (trajectory_id text)"
            ),
            named(
                "steps",
                "CREATE TABLE steps (idx integer, step_payload blob)"
            ),
        ),
        &[],
        &["not an agy conversation: no cascade_id column in table trajectory_meta"],
    );
    refused(
        &format!("{GOOD_ROW}\n{}\n", schema("table", "CREATE TABLE x(a)")),
        &[],
        &["schema must come first"],
    );
    // A file path used twice, and a file where a directory must go.
    let file = |p: &str| {
        format!("{{\"conversation\":\"c1\",\"kind\":\"file\",\"path\":\"{p}\",\"text\":\"x\"}}")
    };
    refused(
        &format!("{}\n{}\n", file("a.txt"), file("a.txt")),
        &[],
        &["appears twice"],
    );
    refused(
        &format!("{}\n{}\n", file("a"), file("a/b")),
        &[],
        &["stdin:2", "file a/b"],
    );
}

#[test]
fn pack_refuses_to_clobber_unless_forced() {
    let s = Scratch::new("clobber");
    let src = s.join("src");
    rich_db(&src, ID).close();
    let stream = dump_of(&[src.to_str().unwrap()]);
    let root = s.join("root");
    let old = AgyDb::create(&root, ID);
    old.user_step(0, "the old conversation");
    old.conn
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    brain_file(&root, ID, "old.txt", b"old");
    let before = files_under(&root);
    let out = run("agy-pack", &["--root", root.to_str().unwrap()], &stream);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("already exists") && stderr(&out).contains("--force"),
        "{}",
        stderr(&out)
    );
    assert_eq!(files_under(&root), before);

    // --force replaces it whole and removes the stale sidecars.
    let old_path = old.path.clone();
    std::mem::forget(old.conn); // as if agy crashed: -wal and -shm stay
    assert!(root.join(format!("conversations/{ID}.db-wal")).exists());
    run_ok(
        "agy-pack",
        &["--root", root.to_str().unwrap(), "--force"],
        &stream,
    );
    assert!(!root.join(format!("conversations/{ID}.db-wal")).exists());
    assert!(!root.join(format!("conversations/{ID}.db-shm")).exists());
    assert!(!root.join(format!("brain/{ID}/old.txt")).exists());
    assert_eq!(
        contents(&old_path),
        contents(&src.join(format!("conversations/{ID}.db")))
    );
    let names: Vec<_> = std::fs::read_dir(root.join("brain"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        [std::ffi::OsString::from(ID)],
        "no temporary or old brain left"
    );
}

#[test]
fn dry_run_validates_and_writes_nothing() {
    let s = Scratch::new("dry");
    let src = s.join("src");
    rich_db(&src, ID).close();
    let stream = dump_of(&[src.to_str().unwrap()]);
    let root = s.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let out = run(
        "agy-pack",
        &["--root", root.to_str().unwrap(), "--dry-run"],
        &stream,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(files_under(&root).is_empty(), "{:?}", files_under(&root));
    let bad =
        String::from_utf8(stream)
            .unwrap()
            .replacen("\"kind\":\"row\"", "\"kind\":\"rwo\"", 1);
    let out = run(
        "agy-pack",
        &["--root", root.to_str().unwrap(), "-n"],
        bad.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(files_under(&root).is_empty());
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    for bin in ["agy-dump", "agy-pack"] {
        let out = run(bin, &["--no-such-flag"], b"");
        assert_eq!(out.status.code(), Some(2), "{bin}");
        assert!(stderr(&out).contains("--no-such-flag"));
        assert!(out.stdout.is_empty());
        let out = run(bin, &["--help"], b"");
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("Usage:"));
        let out = run(bin, &["--version"], b"");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{bin} {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
    let out = run("agy-pack", &["--lane", "moon"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn pack_reads_files_and_stdin_dash_in_order() {
    let s = Scratch::new("inputs");
    let one = s.join("one.ndjson");
    std::fs::write(&one, format!("{}\n", GOOD_ROW)).unwrap();
    let two = GOOD_ROW.replace("c1", "c2");
    let root = s.join("root");
    let out = run_ok(
        "agy-pack",
        &["--root", root.to_str().unwrap(), one.to_str().unwrap(), "-"],
        two.as_bytes(),
    );
    let printed = String::from_utf8(out).unwrap();
    assert_eq!(printed.lines().count(), 2);
    assert!(printed.lines().next().unwrap().ends_with("c1.db"));
    let missing = run(
        "agy-pack",
        &["--root", root.to_str().unwrap(), "/no/such/file"],
        b"",
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("/no/such/file"));
}

#[test]
fn many_conversations_round_trip_through_one_stream() {
    let s = Scratch::new("many");
    let src = s.join("src");
    for i in 0..5 {
        let db = AgyDb::create(&src, &format!("conv-{i}"));
        for idx in 0..i {
            db.user_step(idx, &format!("message {idx} of {i}"));
        }
        db.conn
            .execute(
                "INSERT INTO gen_metadata (idx, data, size) VALUES (?1, x'0a00', 2)",
                params![i],
            )
            .unwrap();
        db.close();
        brain_file(
            &src,
            &format!("conv-{i}"),
            "note.md",
            format!("note {i}").as_bytes(),
        );
    }
    let stream = dump_of(&[src.to_str().unwrap()]);
    let dst = s.join("dst");
    let printed = run_ok("agy-pack", &["--root", dst.to_str().unwrap()], &stream);
    assert_eq!(String::from_utf8(printed).unwrap().lines().count(), 5);
    assert!(dump_of(&[dst.to_str().unwrap()]) == stream);
}

#[test]
fn acp_meta_sidecar_travels_with_its_conversation() {
    let s = Scratch::new("acp");
    let gemini = s.join("gemini");
    let acp = gemini.join("antigravity-acp");
    AgyDb::create(&acp, ID).close();
    let meta = br#"{"cwd":"/repo","mode_id":"default"}"#;
    std::fs::write(acp.join(format!("conversations/{ID}.meta")), meta).unwrap();
    let env = [("GEMINI_HOME", gemini.to_str().unwrap())];
    let out = support::run_env("agy-dump", &["--lane", "acp"], b"", &env);
    assert!(out.status.success(), "{}", stderr(&out));
    let records = lines(&out.stdout);
    let sidecar = records
        .iter()
        .find(|r| r["kind"] == "file" && r["dir"] == "conversations")
        .unwrap();
    assert_eq!(sidecar["path"], format!("{ID}.meta"));
    assert_eq!(sidecar["text"], std::str::from_utf8(meta).unwrap());

    let copy = s.join("copy");
    let dst = copy.join("antigravity-acp");
    let env2 = [("GEMINI_HOME", copy.to_str().unwrap())];
    let packed = support::run_env("agy-pack", &["--lane", "acp"], &out.stdout, &env2);
    assert!(packed.status.success(), "{}", stderr(&packed));
    assert_eq!(
        std::fs::read(dst.join(format!("conversations/{ID}.meta"))).unwrap(),
        meta
    );
    assert!(support::run_env("agy-dump", &["--lane", "acp"], b"", &env2).stdout == out.stdout);

    // Nothing but <id>.meta may be written to conversations/.
    let evil =
        r#"{"conversation":"c1","kind":"file","dir":"conversations","path":"other.db","text":"x"}"#;
    refused(evil, &[], &["only file allowed in conversations/"]);
    refused(
        r#"{"conversation":"c1","kind":"file","dir":"etc","path":"x","text":"x"}"#,
        &[],
        &["neither brain nor conversations"],
    );
}

#[test]
fn pack_never_writes_through_a_symlinked_store_directory() {
    for linked in ["brain", "conversations"] {
        let s = Scratch::new("symlinked");
        let root = s.join("root");
        let elsewhere = s.join("elsewhere");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join(linked)).unwrap();
        let before = files_under(&s.path);
        let out = run(
            "agy-pack",
            &["--root", root.to_str().unwrap()],
            GOOD_ROW.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(1), "{linked}");
        let err = stderr(&out);
        assert!(
            err.contains(linked) && err.contains("symbolic link"),
            "{err}"
        );
        assert_eq!(
            files_under(&s.path),
            before,
            "{linked}: something was written"
        );
    }
}
