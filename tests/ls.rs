//! agy-ls: a root's conversations, newest first, from the index and each
//! database's metadata.

mod support;

use std::path::Path;

use rusqlite::Connection;
use support::index::{self as idx, real_conversation, Shape};
use support::store::json_lines;
use support::{run, run_ok, stderr, Scratch};

const A: &str = "0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b";
const B: &str = "1c7a9b9f-2d3e-4f60-8b1c-2d3e4f5a6b7c";
const C: &str = "2d8b0c0a-3e4f-4071-9c2d-3e4f5a6b7c8d";

fn sample() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/sample")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_sample_store_is_listed_newest_first() {
    let out = run_ok("agy-ls", &[&sample()], b"");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 3);
    let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "7d254c20-7c6c-4559-88cf-996411ecac8e",
            "77559890-5f01-4d48-a336-db3155aede22",
            "0bb5c533-0f37-4e6b-8578-b94607c75201"
        ]
    );
    let first = &lines[0];
    let keys: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "id",
            "title",
            "cwd",
            "branch",
            "created",
            "last_active",
            "step_count",
            "models",
            "lane",
            "parent",
            "bytes",
            "index"
        ]
    );
    assert_eq!(first["cwd"], "/home/dev/src/parcel-sort");
    assert_eq!(first["branch"], "main");
    assert_eq!(first["models"], serde_json::json!(["gemini-3.8-flash"]));
    assert_eq!(first["lane"], "cli");
    // The same facts agy-decode's meta record and the database give.
    let dump = run_ok("agy-dump", &[&sample()], b"");
    let decoded = run_ok("agy-decode", &[], &dump);
    for meta in json_lines(&decoded).iter().filter(|m| m["kind"] == "meta") {
        let line = lines.iter().find(|l| l["id"] == meta["id"]).unwrap();
        assert_eq!(line["title"], meta["title"]);
        assert_eq!(line["cwd"], meta["cwd"]);
        assert_eq!(line["created"], meta["timestamp"]);
    }
    for line in &lines {
        let id = line["id"].as_str().unwrap();
        let db = Path::new(&sample()).join(format!("conversations/{id}.db"));
        let conn = Connection::open(&db).unwrap();
        let steps: i64 = conn
            .query_row("SELECT count(*) FROM steps", [], |r| r.get(0))
            .unwrap();
        assert_eq!(line["step_count"], steps);
        let db_bytes = std::fs::metadata(&db).unwrap().len();
        assert!(
            line["bytes"].as_u64().unwrap() > db_bytes,
            "{id}: brain counted"
        );
    }
    // Listing the same store twice gives the same bytes.
    assert_eq!(run_ok("agy-ls", &[&sample()], b""), out);
}

#[test]
fn the_index_says_titles_and_each_rows_truth() {
    let s = Scratch::new("ls-index");
    let root = s.join("root");
    real_conversation(&root, A, &["Fix the flaky login test", "Now run it"]).close();
    real_conversation(&root, B, &["Explain the build"]).close();
    real_conversation(&root, C, &["Third"]).close();
    let conn = idx::create(&root, Shape::V3);
    idx::agy_row(&conn, A, "Login test fix", 9, 5);
    idx::agy_row(&conn, B, "Build explained", 2, 1);
    drop(conn);
    let root_arg = root.to_str().unwrap();
    let lines = json_lines(&run_ok("agy-ls", &[root_arg], b""));
    let by_id = |id: &str| lines.iter().find(|l| l["id"] == id).unwrap().clone();
    assert_eq!(by_id(A)["index"], "agrees");
    assert_eq!(by_id(A)["title"], "Login test fix");
    assert_eq!(by_id(A)["step_count"], 9);
    assert_eq!(by_id(B)["index"], "stale");
    assert_eq!(by_id(C)["index"], "missing");
    assert_eq!(by_id(C)["title"], "Fixing the flaky login test");
    assert_eq!(by_id(C)["cwd"], "/Users/me/src/app");
    // A has the most steps, so the latest activity.
    assert_eq!(lines[0]["id"], A);
    // --reindex makes every row true.
    run_ok("agy-pack", &["--reindex", "--root", root_arg], b"");
    let lines = json_lines(&run_ok("agy-ls", &[root_arg], b""));
    assert!(lines.iter().all(|l| l["index"] == "agrees"), "{lines:?}");

    let table = String::from_utf8(run_ok("agy-ls", &["--format", "table", root_arg], b"")).unwrap();
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 4);
    assert!(rows[0].starts_with("LAST ACTIVE"), "{table}");
    let title_at = rows[0].find("TITLE").unwrap();
    assert!(rows[1][title_at..].starts_with("Login test fix"), "{table}");
    assert!(rows[1].contains(A));
}

#[test]
fn an_unreadable_database_is_named_and_the_rest_are_listed() {
    let s = Scratch::new("ls-bad");
    let root = s.join("root");
    real_conversation(&root, A, &["Hello"]).close();
    real_conversation(&root, B, &["Hi"]).close();
    // B's database cut in the middle of its pages.
    let b_db = root.join("conversations").join(format!("{B}.db"));
    let bytes = std::fs::read(&b_db).unwrap();
    std::fs::write(&b_db, &bytes[..bytes.len() / 2 + 100]).unwrap();
    let out = run("agy-ls", &[root.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&format!("{B}.db")), "{err}");
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["id"], A);
    // A file named that is not a database at all is an error too.
    let junk = s.join("junk.db");
    std::fs::write(&junk, b"not sqlite").unwrap();
    let out = run("agy-ls", &[junk.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("junk.db"), "{}", stderr(&out));
}

#[test]
fn changed_since_lists_only_what_changed() {
    let s = Scratch::new("ls-since");
    let root = s.join("root");
    real_conversation(&root, A, &["Hello"]).close();
    real_conversation(&root, B, &["Hi"]).close();
    let stamp = s.join("stamp");
    std::fs::write(&stamp, b"").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for path in [
        stamp.clone(),
        root.join(format!("conversations/{A}.db")),
        root.join(format!("brain/{A}/.system_generated/logs/transcript.jsonl")),
        root.join(format!("brain/{A}/.system_generated/logs")),
        root.join(format!("brain/{A}/.system_generated")),
        root.join(format!("brain/{A}")),
    ] {
        let file = std::fs::File::options().read(true).open(&path).unwrap();
        file.set_modified(old).unwrap();
    }
    // The stamp is older than B's files but newer than A's.
    let newer = old + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&stamp)
        .unwrap()
        .set_modified(newer)
        .unwrap();
    let out = run_ok(
        "agy-ls",
        &[
            "--changed-since",
            stamp.to_str().unwrap(),
            root.to_str().unwrap(),
        ],
        b"",
    );
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["id"], B);
}

#[test]
fn a_fork_names_its_parent_as_agy_decode_does() {
    // A fork's parent is in its FORK reference, not in its metadata:
    // agy-ls said "parent": null where agy-decode says forked_from.
    let s = Scratch::new("ls-fork");
    let parent = "0bb5c533-0f37-4e6b-8578-b94607c75201";
    let fork = "6f1c2e3d-0000-4000-8000-000000000001";
    let rows = run_ok("agy-dump", &["--id", parent, &sample()], b"");
    let forked = run_ok("agy-edit", &["fork", "--at", "5", "--id", fork], &rows);
    let root = s.join("root");
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &forked);
    let listed = json_lines(&run_ok("agy-ls", &[root.to_str().unwrap()], b""));
    assert_eq!(listed[0]["id"], fork);
    assert_eq!(listed[0]["parent"], parent);
    let meta = json_lines(&run_ok("agy-decode", &[], &forked))
        .into_iter()
        .find(|r| r["kind"] == "meta")
        .unwrap();
    assert_eq!(meta["forked_from"]["conversation_id"], listed[0]["parent"]);
}
