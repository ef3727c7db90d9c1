//! agy's index of conversations (`conversation_summaries.db`) travels with
//! its conversations: agy-dump writes each conversation's row, agy-pack
//! writes it back byte for byte, keeps it true when a stream brings none,
//! and `--reindex` rebuilds missing and stale rows. Roots are built in the
//! shape of real agy stores (FORMAT.md 14): a two-turn conversation's
//! steps, a 19-column (1.1.16) or 21-column (`user_version` 3) index.

mod support;

use std::path::Path;

use rusqlite::types::Value;
use rusqlite::Connection;
use support::index::{self as idx, real_conversation, Shape};
use support::store::{contents, dump_of, files_under, json_lines};
use support::{run, run_env, run_ok, stderr, Scratch};

const A: &str = "0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b";
const B: &str = "1c7a9b9f-2d3e-4f60-8b1c-2d3e4f5a6b7c";

/// A root with two real-shaped conversations and, unless `None`, an index
/// of the given shape listing only the first (agy writes rows lazily).
fn root_with(path: &Path, shape: Option<Shape>) {
    real_conversation(path, A, &["Fix the flaky login test", "Now run it"]).close();
    real_conversation(path, B, &["Explain the build"]).close();
    if let Some(shape) = shape {
        let conn = idx::create(path, shape);
        idx::agy_row(&conn, A, "Login test fix", 9, 5);
    }
}

fn index_records(stream: &[u8]) -> Vec<serde_json::Value> {
    json_lines(stream)
        .into_iter()
        .filter(|r| r["kind"] == "index")
        .collect()
}

fn pack(root: &Path, args: &[&str], stream: &[u8]) -> std::process::Output {
    let mut all = vec!["--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    run("agy-pack", &all, stream)
}

/// agy-dump of conversation A's database alone (so with its index row,
/// but no other conversation's).
fn dump_of_a(root: &std::path::Path) -> Vec<u8> {
    let db = root.join("conversations").join(format!("{A}.db"));
    dump_of(&[db.to_str().unwrap()])
}

#[test]
fn dump_then_pack_carries_the_index_rows_byte_for_byte() {
    for shape in [Shape::V1116, Shape::V3] {
        let s = Scratch::new("index-roundtrip");
        let src = s.join("src");
        root_with(&src, Some(shape));
        let stream = dump_of(&[src.to_str().unwrap()]);
        // One index record, for the conversation the index lists, after
        // its rows and before its files.
        let records = json_lines(&stream);
        let indexes = index_records(&stream);
        assert_eq!(indexes.len(), 1, "{shape:?}");
        let index = &indexes[0];
        assert_eq!(index["conversation"], A);
        let columns = index["row"].as_object().unwrap().len();
        assert_eq!(columns, if shape == Shape::V3 { 21 } else { 19 });
        assert_eq!(
            index["user_version"],
            if shape == Shape::V3 { 3 } else { 0 }
        );
        assert_eq!(index["row"]["title"], "Login test fix");
        assert_eq!(index["row"]["not_fully_idle"], 1);
        if shape == Shape::V3 {
            assert_eq!(index["row"]["raw_summary"], "0a0361ff00");
        }
        let at = records.iter().position(|r| r["kind"] == "index").unwrap();
        assert_eq!(records[at - 1]["table"], "steps");
        assert_eq!(records[at + 1]["kind"], "file");

        let dst = s.join("dst");
        let out = pack(&dst, &[], &stream);
        assert!(out.status.success(), "{}", stderr(&out));
        let again = dump_of(&[dst.to_str().unwrap()]);
        // A's row byte for byte; B, which agy had not written a row for,
        // gets its derived one (the root had no index: whatever lists the
        // index lists what agy-pack wrote); every other record as it came.
        let rows_again = index_records(&again);
        assert_eq!(rows_again.len(), 2, "{shape:?}");
        assert_eq!(rows_again[0], indexes[0], "{shape:?}");
        assert_eq!(rows_again[1]["conversation"], B);
        assert!(
            support::without_index(&again) == support::without_index(&stream),
            "{shape:?}: dump | pack | dump differs"
        );
        // The index agy-pack created holds what agy's did, in agy's shape.
        assert_eq!(idx::rows(&src)[..], idx::rows(&dst)[..1], "{shape:?}");
        let (a, b) = (contents(&idx::path(&src)), contents(&idx::path(&dst)));
        assert_eq!(a.user_version, b.user_version);
        let names = |c: &support::store::Contents| -> Vec<String> {
            c.schema.iter().map(|(_, n, _)| n.clone()).collect()
        };
        assert_eq!(names(&a), names(&b));
        // Packed again over itself, nothing changes.
        let before = idx::rows(&dst);
        let out = pack(&dst, &["--force"], &stream);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(idx::rows(&dst), before);
    }
}

#[test]
fn a_root_without_an_index_gets_one_as_agy_makes_it() {
    // agy makes its index on start; a root agy-pack writes into before agy
    // ran has none, and the tools that list conversations from the index
    // (agy's own picker among them) would skip what agy-pack wrote.
    let s = Scratch::new("index-none");
    let src = s.join("src");
    root_with(&src, None);
    let stream = dump_of(&[src.to_str().unwrap()]);
    assert!(index_records(&stream).is_empty());
    let dst = s.join("dst");
    let out = pack(&dst, &[], &stream);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(idx::path(&dst).exists(), "no index made");
    let conn = Connection::open(idx::path(&dst)).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 3, "the index of agy 1.2.16 and later");
    drop(conn);
    // One row per conversation, derived as --reindex derives one, with the
    // summary agy keeps in raw_summary; the rest of the stream as it was.
    let again = dump_of(&[dst.to_str().unwrap()]);
    let rows = index_records(&again);
    assert_eq!(rows.len(), 2);
    for row in &rows {
        let cells = &row["row"];
        assert_eq!(cells["source"], "antigravity-cli");
        assert_eq!(cells["group_id"], "");
        let raw = hex::decode(cells["raw_summary"].as_str().unwrap()).unwrap();
        let summary = agy_tools::agy::wire::Message::new(&raw);
        assert!(matches!(
            summary.last(2),
            Some(agy_tools::agy::wire::Value::Varint(n)) if cells["step_count"] == n
        ));
    }
    assert!(support::without_index(&again) == stream);
    let listed = json_lines(&run_ok("agy-ls", &[dst.to_str().unwrap()], b""));
    assert!(listed.iter().all(|r| r["index"] == "agrees"), "{listed:?}");
    // Every conversation gets its brain directory, which agy 1.0.16 needs.
    assert!(dst.join("brain").join(B).is_dir());
}

#[test]
fn packing_touches_no_other_conversations_row() {
    let s = Scratch::new("index-others");
    let src = s.join("src");
    root_with(&src, Some(Shape::V3));
    let stream = dump_of_a(&src);
    assert_eq!(index_records(&stream).len(), 1);
    // The destination's index lists other conversations, one of them with
    // the same title; and a 19-column index takes the 21-column row's 19.
    let dst = s.join("dst");
    let conn = idx::create(&dst, Shape::V1116);
    idx::agy_row(&conn, "other-1", "Login test fix", 3, 0);
    idx::agy_row(&conn, "other-2", "Something else", 30, 28);
    drop(conn);
    let before = idx::rows(&dst);
    let out = pack(&dst, &[], &stream);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = idx::rows(&dst);
    assert_eq!(&after[..2], &before[..], "other rows changed");
    assert_eq!(after.len(), 3);
    let src_row = idx::row(&src, A).unwrap();
    let dst_row = idx::row(&dst, A).unwrap();
    assert_eq!(&src_row[..19], &dst_row[..], "the 19 columns both have");
}

#[test]
fn a_stream_whose_cascade_id_names_another_conversation_is_refused() {
    let s = Scratch::new("index-cascade");
    let src = s.join("src");
    root_with(&src, None);
    let stream = dump_of_a(&src);
    // The same rows under another conversation id: agy would fail with
    // "trajectory not found".
    let renamed = String::from_utf8(stream).unwrap().replace(
        &format!("{{\"conversation\":\"{A}\""),
        "{\"conversation\":\"copy-of-a\"",
    );
    let dst = s.join("dst");
    let out = pack(&dst, &[], renamed.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("cascade_id") && err.contains(A) && err.contains("copy-of-a"),
        "{err}"
    );
    assert!(files_under(&dst.join("conversations")).is_empty());
    assert!(files_under(&dst.join("brain")).is_empty());
}

#[test]
fn an_index_row_of_another_conversation_is_refused() {
    let s = Scratch::new("index-owner");
    let src = s.join("src");
    root_with(&src, Some(Shape::V1116));
    let stream = dump_of_a(&src);
    let text = String::from_utf8(stream).unwrap();
    let wrong = text.replace(
        &format!("\"row\":{{\"conversation_id\":\"{A}\""),
        &format!("\"row\":{{\"conversation_id\":\"{B}\""),
    );
    assert_ne!(wrong, text);
    let dst = s.join("dst");
    let out = pack(&dst, &[], wrong.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("conversation_id"), "{}", stderr(&out));
    assert!(!idx::path(&dst).exists());
    assert!(!dst.join("conversations").join(format!("{A}.db")).exists());
}

/// `stream` with the `index` record's row changed by `edit`.
fn with_index_row(
    stream: &[u8],
    edit: impl Fn(&mut serde_json::Map<String, serde_json::Value>),
) -> Vec<u8> {
    let mut out = Vec::new();
    for mut record in json_lines(stream) {
        if record["kind"] == "index" {
            edit(record["row"].as_object_mut().unwrap());
        }
        out.extend_from_slice(serde_json::to_string(&record).unwrap().as_bytes());
        out.push(b'\n');
    }
    out
}

/// Found by fuzz/pack: a row with a null where the index's column is NOT
/// NULL was written after its conversation was put in place, failed, and
/// waited for the next run forever (each run failing the same way).
#[test]
fn an_index_row_the_index_would_refuse_is_refused_before_anything_is_written() {
    let s = Scratch::new("index-not-null");
    let src = s.join("src");
    root_with(&src, Some(Shape::V1116));
    let stream = dump_of_a(&src);
    let null = with_index_row(&stream, |row| {
        row.insert("last_modified_time".into(), serde_json::Value::Null);
    });
    let missing = with_index_row(&stream, |row| {
        row.remove("workspace_uris");
    });
    for (bad, column) in [(null, "last_modified_time"), (missing, "workspace_uris")] {
        // A root whose index lists another conversation: the row would
        // go into it.
        let dst = s.join(format!("dst-{column}"));
        real_conversation(&dst, B, &["Explain the build"]).close();
        idx::agy_row(&idx::create(&dst, Shape::V1116), B, "Build", 3, 2);
        let before = files_under(&dst);
        for args in [&[][..], &["--force"]] {
            let out = pack(&dst, args, &bad);
            assert_eq!(out.status.code(), Some(1));
            let err = stderr(&out);
            assert!(err.contains(column) && err.contains("not written"), "{err}");
            assert!(!err.contains("waits in"), "{err}");
            assert_eq!(files_under(&dst), before, "nothing written, nothing left");
        }
    }
}

#[test]
fn a_stream_without_a_row_brings_a_stale_row_up_to_date_and_invents_none() {
    let s = Scratch::new("index-refresh");
    let root = s.join("root");
    root_with(&root, Some(Shape::V1116));
    // The same conversations without an index record (a loose db's dump),
    // with A cut to its first turn.
    let a_db = root.join("conversations").join(format!("{A}.db"));
    let conn = Connection::open(&a_db).unwrap();
    conn.execute("DELETE FROM steps WHERE idx >= 5", [])
        .unwrap();
    drop(conn);
    let stream = dump_of(&[root.to_str().unwrap()]);
    let stream: Vec<u8> = String::from_utf8(stream)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"kind\":\"index\""))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes();
    let out = pack(&root, &["--force"], &support::recount(&stream));
    assert!(out.status.success(), "{}", stderr(&out));
    let row = idx::row(&root, A).unwrap();
    assert_eq!(idx::cell(&row, "step_count"), Value::Integer(5));
    assert_eq!(
        idx::cell(&row, "last_user_input_step_index"),
        Value::Integer(0)
    );
    assert_eq!(
        idx::cell(&row, "title"),
        Value::Text("Login test fix".into())
    );
    assert_eq!(idx::cell(&row, "not_fully_idle"), Value::Integer(1));
    assert!(idx::row(&root, B).is_none(), "a row was invented");
}

#[test]
fn a_run_killed_before_the_index_leaves_it_as_it_was_and_the_next_finishes() {
    let s = Scratch::new("index-kill");
    let src = s.join("src");
    root_with(&src, Some(Shape::V3));
    let stream = dump_of_a(&src);
    let dst = s.join("dst");
    let conn = idx::create(&dst, Shape::V3);
    idx::agy_row(&conn, A, "An older title", 2, 0);
    drop(conn);
    let before = contents(&idx::path(&dst));
    for step in ["written", "ready", "db", "old"] {
        let out = run_env(
            "agy-pack",
            &["--root", dst.to_str().unwrap(), "--force"],
            &stream,
            &[("AGY_PACK_KILL_AT", step)],
        );
        assert!(!out.status.success(), "{step}: not killed");
        assert_eq!(contents(&idx::path(&dst)), before, "{step}: index changed");
        // The next run into the root finishes (or clears) what was left.
        let out = pack(&dst, &[], b"");
        assert!(out.status.success(), "{step}: {}", stderr(&out));
        let expected_title = match step {
            "written" => "An older title",
            _ => "Login test fix",
        };
        assert_eq!(
            idx::cell(&idx::row(&dst, A).unwrap(), "title"),
            Value::Text(expected_title.into()),
            "{step}"
        );
        // Back to the old row for the next kill point.
        let conn = Connection::open(idx::path(&dst)).unwrap();
        conn.execute("DELETE FROM conversation_summaries", [])
            .unwrap();
        idx::agy_row(&conn, A, "An older title", 2, 0);
        drop(conn);
    }
    let leftovers: Vec<_> = files_under(&dst.join("conversations"))
        .into_iter()
        .filter(|(p, _)| p.to_string_lossy().contains("agy-pack"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_reader_holding_the_index_open_delays_agy_pack_and_nothing_is_corrupted() {
    for wal in [false, true] {
        let s = Scratch::new("index-reader");
        let src = s.join("src");
        root_with(&src, Some(Shape::V1116));
        let stream = dump_of(&[src.to_str().unwrap()]);
        let dst = s.join("dst");
        let conn = idx::create(&dst, Shape::V1116);
        idx::agy_row(&conn, "other", "Keep me", 3, 0);
        if wal {
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        }
        // agy (or sqlite3) in the middle of a read transaction.
        conn.execute_batch("BEGIN").unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM conversation_summaries", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(n, 1);
        let packer = std::process::Command::new(support::exe("agy-pack"))
            .args(["--root", dst.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = packer.stdin.as_ref().unwrap();
            stdin.write_all(&stream).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(1500));
        // The reader's snapshot is still the old one.
        let n: i64 = conn
            .query_row("SELECT count(*) FROM conversation_summaries", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(n, 1, "wal {wal}: the read transaction saw a write");
        conn.execute_batch("COMMIT").unwrap();
        let out = packer.wait_with_output().unwrap();
        assert!(out.status.success(), "wal {wal}: {}", stderr(&out));
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        drop(conn);
        let rows = idx::rows(&dst);
        assert_eq!(rows.len(), 2, "wal {wal}");
        assert_eq!(idx::cell(&rows[0], "title"), Value::Text("Keep me".into()));
        assert_eq!(idx::row(&dst, A), idx::row(&src, A));
    }
}

#[test]
fn reindex_restores_missing_rows_fixes_stale_ones_and_leaves_right_ones() {
    let s = Scratch::new("reindex");
    let root = s.join("root");
    real_conversation(&root, A, &["Fix the flaky login test", "Now run it"]).close();
    real_conversation(&root, B, &["Explain the build"]).close();
    const C: &str = "2d8b0c0a-3e4f-4071-9c2d-3e4f5a6b7c8d";
    real_conversation(&root, C, &["Third"]).close();
    let conn = idx::create(&root, Shape::V3);
    // A: right (9 steps, last user input at 5); B: stale; C: deleted from
    // the index; and a row of a conversation not on disk.
    idx::agy_row(&conn, A, "Login test fix", 9, 5);
    idx::agy_row(&conn, B, "Build explained", 2, 1);
    idx::agy_row(&conn, "elsewhere", "Not here", 4, 2);
    drop(conn);
    let before = idx::rows(&root);
    let out = run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    let printed = String::from_utf8(out).unwrap();
    assert_eq!(printed, format!("added {C}\nupdated {B}\n"));
    let after = idx::rows(&root);
    assert_eq!(
        idx::row(&root, A).unwrap(),
        before[0],
        "a right row changed"
    );
    assert_eq!(idx::row(&root, "elsewhere").unwrap(), before[2]);
    let b = idx::row(&root, B).unwrap();
    assert_eq!(idx::cell(&b, "step_count"), Value::Integer(5));
    assert_eq!(
        idx::cell(&b, "last_user_input_step_index"),
        Value::Integer(0)
    );
    assert_eq!(
        idx::cell(&b, "title"),
        Value::Text("Build explained".into())
    );
    assert_eq!(idx::cell(&b, "group_id"), Value::Text("g-1".into()));
    let c = idx::row(&root, C).unwrap();
    let expect = [
        ("title", Value::Text("Fixing the flaky login test".into())),
        ("preview", Value::Text("Third".into())),
        ("step_count", Value::Integer(5)),
        (
            "last_modified_time",
            Value::Text("2026-06-28 09:47:20+00:00".into()),
        ),
        (
            "workspace_uris",
            Value::Text(r#"["file:///Users/me/src/app"]"#.into()),
        ),
        ("status", Value::Text("".into())),
        ("source", Value::Text("antigravity-cli".into())),
        ("project_id", Value::Text("default-cli-project".into())),
        (
            "last_user_input_time",
            Value::Text("2026-06-28 09:46:40+00:00".into()),
        ),
        ("last_user_input_step_index", Value::Integer(0)),
        ("app_data_dir", Value::Text("antigravity-cli".into())),
        ("group_id", Value::Text("".into())),
    ];
    for (column, value) in expect {
        assert_eq!(idx::cell(&c, column), value, "{column}");
    }
    assert_eq!(after.len(), 4);
    // Run again: everything is right now, nothing is written.
    let snapshot = std::fs::read(idx::path(&root)).unwrap();
    let out = run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    assert!(out.is_empty());
    assert_eq!(std::fs::read(idx::path(&root)).unwrap(), snapshot);
}

#[test]
fn reindex_creates_the_index_of_a_root_that_has_none() {
    let s = Scratch::new("reindex-new");
    let root = s.join("root");
    real_conversation(&root, A, &["Hello"]).close();
    let out = run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    assert_eq!(String::from_utf8(out).unwrap(), format!("added {A}\n"));
    let c = contents(&idx::path(&root));
    assert_eq!(c.schema[0].2, idx::DDL_1_1_16[0]);
    assert_eq!(c.schema.len(), 3);
    // And agy-dump now carries the row.
    let stream = dump_of(&[root.to_str().unwrap()]);
    assert_eq!(index_records(&stream)[0]["row"]["preview"], "Hello");
}

#[test]
fn an_unreadable_index_is_named_and_the_conversations_still_dumped() {
    let s = Scratch::new("index-bad");
    let root = s.join("root");
    root_with(&root, None);
    std::fs::write(
        idx::path(&root),
        b"this is not an SQLite database at all, just text",
    )
    .unwrap();
    let out = run("agy-dump", &[root.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("conversation_summaries.db"), "{err}");
    let records = json_lines(&out.stdout);
    assert_eq!(records.iter().filter(|r| r["kind"] == "db").count(), 2);
    assert!(index_records(&out.stdout).is_empty());
    // agy-pack will not write into it either, and says so.
    let a_db = root.join("conversations").join(format!("{A}.db"));
    let stream = run("agy-dump", &[a_db.to_str().unwrap()], b"").stdout;
    let fixed = String::from_utf8(stream).unwrap();
    let with_row = fixed.replace(
        &format!("{{\"conversation\":\"{A}\",\"kind\":\"file\""),
        &format!(
            "{{\"conversation\":\"{A}\",\"kind\":\"index\",\"user_version\":0,\"row\":{{\"conversation_id\":\"{A}\",\"title\":\"t\",\"last_modified_time\":\"x\",\"workspace_uris\":\"[]\",\"last_user_input_time\":\"x\"}}}}\n{{\"conversation\":\"{A}\",\"kind\":\"file\""
        ),
    );
    assert_ne!(with_row, fixed);
    let dst = s.join("dst");
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::copy(idx::path(&root), idx::path(&dst)).unwrap();
    let out = pack(&dst, &[], &support::recount(with_row.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("conversation_summaries.db") && err.contains(A),
        "{err}"
    );
    assert_eq!(
        std::fs::read(idx::path(&dst)).unwrap(),
        std::fs::read(idx::path(&root)).unwrap()
    );
}

#[test]
fn reindex_names_a_database_it_cannot_read_and_indexes_the_rest() {
    let s = Scratch::new("reindex-bad");
    let root = s.join("root");
    root_with(&root, None);
    let b_db = root.join("conversations").join(format!("{B}.db"));
    let bytes = std::fs::read(&b_db).unwrap();
    std::fs::write(&b_db, &bytes[..bytes.len() / 2 + 100]).unwrap();
    let out = run(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("{B}.db")),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("added {A}\n")
    );
    assert!(idx::row(&root, A).is_some() && idx::row(&root, B).is_none());
}

#[test]
fn an_index_database_without_its_table_gets_it_with_the_row() {
    let s = Scratch::new("index-no-table");
    let src = s.join("src");
    root_with(&src, Some(Shape::V3));
    let stream = dump_of(&[src.to_str().unwrap()]);
    // agy created the file and not yet the table (it does both lazily).
    let dst = s.join("dst");
    std::fs::create_dir_all(&dst).unwrap();
    let conn = Connection::open(idx::path(&dst)).unwrap();
    conn.execute_batch("CREATE TABLE other (x); PRAGMA user_version = 3")
        .unwrap();
    drop(conn);
    let out = pack(&dst, &[], &stream);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(idx::rows(&dst), idx::rows(&src));
    assert!(dump_of(&[dst.to_str().unwrap()]) == stream);
}

#[test]
fn an_index_a_killed_run_was_building_is_removed_by_the_next_run() {
    let s = Scratch::new("index-leftover");
    let root = s.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let dead = root.join(".conversation_summaries.db.agy-pack.4242-0.tmp");
    let live = root.join(".conversation_summaries.db.agy-pack.4243-0.tmp");
    let other = root.join(".conversation_summaries.db.agy-pack.x.tmp");
    for path in [&dead, &live, &other] {
        std::fs::write(path, b"half an index").unwrap();
    }
    // A live run holds its file's lock (flock(1) stands in for it).
    let mut holder = std::process::Command::new("flock")
        .args(["-n", live.to_str().unwrap(), "sleep", "30"])
        .spawn()
        .expect("flock(1) from util-linux");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = pack(&root, &[], b"");
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!dead.exists(), "the dead run's file stayed");
    assert!(stderr(&out).contains("4242-0.tmp"), "{}", stderr(&out));
    assert!(live.exists(), "a live run's file was removed");
    assert!(other.exists(), "a file of another name was removed");
}
