//! agy-encode keeps agy's index true: a conversation it writes carries the
//! row agy 1.1.16 accepted (FORMAT.md 14 row 7), derived by agy-decode's
//! meta rules, and `--onto` carries the original row, changing only what
//! the edit changed.

mod support;

use std::path::Path;

use rusqlite::types::Value;
use rusqlite::Connection;
use serde_json::json;
use support::index::{self as idx, real_conversation, Shape};
use support::store::json_lines;
use support::{run_ok, Scratch};

const A: &str = "0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b";

fn db_facts(db: &Path) -> (i64, i64) {
    let conn = Connection::open(db).unwrap();
    let steps = conn
        .query_row("SELECT count(*) FROM steps", [], |r| r.get(0))
        .unwrap();
    let last_input = conn
        .query_row(
            "SELECT coalesce(max(idx), -1) FROM steps WHERE step_type = 14",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (steps, last_input)
}

#[test]
fn a_claude_code_session_encoded_and_packed_gets_a_true_row() {
    let s = Scratch::new("index-claude");
    let session = s.join("s1.jsonl");
    let line = |v: serde_json::Value| v.to_string() + "\n";
    let user = |uuid: &str, parent: Option<&str>, at: &str, content: serde_json::Value| {
        line(
            json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s1",
                    "timestamp": at, "cwd": "/home/me/my app",
                    "message": {"role": "user", "content": content}}),
        )
    };
    let assistant = |uuid: &str, parent: &str, at: &str, text: &str| {
        line(
            json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s1",
                    "timestamp": at,
                    "message": {"id": uuid, "role": "assistant", "model": "claude-x",
                                "content": [{"type": "text", "text": text}]}}),
        )
    };
    let text = [
        user(
            "u1",
            None,
            "2026-11-30T15:42:05.580Z",
            json!("Rename the crate"),
        ),
        assistant("a1", "u1", "2026-11-30T15:42:06Z", "Renamed."),
        user(
            "u2",
            Some("a1"),
            "2026-11-30T15:43:00Z",
            json!("And the docs"),
        ),
        assistant("a2", "u2", "2026-11-30T15:43:09Z", "Done."),
    ]
    .concat();
    std::fs::write(&session, text).unwrap();
    let rows = run_ok(
        "agy-encode",
        &["--format", "claude-code", session.to_str().unwrap()],
        b"",
    );
    let root = s.join("root");
    // The root's index exists, as agy's does, and lists another
    // conversation: the new row joins it.
    let conn = idx::create(&root, Shape::V3);
    idx::agy_row(&conn, "other", "Other", 3, 1);
    drop(conn);
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &rows);
    let row = idx::row(&root, "s1").expect("a row");
    let (steps, last_input) = db_facts(&root.join("conversations/s1.db"));
    assert!(steps >= 4);
    let expect = [
        ("conversation_id", Value::Text("s1".into())),
        ("title", Value::Text("Rename the crate".into())),
        ("preview", Value::Text("Rename the crate".into())),
        ("step_count", Value::Integer(steps)),
        (
            "last_modified_time",
            Value::Text("2026-11-30 15:43:09+00:00".into()),
        ),
        (
            "workspace_uris",
            Value::Text(r#"["file:///home/me/my%20app"]"#.into()),
        ),
        ("status", Value::Text("".into())),
        ("source", Value::Text("antigravity-cli".into())),
        ("project_id", Value::Text("default-cli-project".into())),
        (
            "last_user_input_time",
            Value::Text("2026-11-30 15:43:00+00:00".into()),
        ),
        ("last_user_input_step_index", Value::Integer(last_input)),
        ("app_data_dir", Value::Text("antigravity-cli".into())),
        ("group_id", Value::Text("".into())),
    ];
    for (column, value) in expect {
        assert_eq!(idx::cell(&row, column), value, "{column}");
    }
    // The index is agy's at user_version 3: the row's summary is made
    // from the conversation, as agy's own are.
    let Value::Blob(raw) = idx::cell(&row, "raw_summary") else {
        panic!("no raw_summary")
    };
    let raw = agy_tools::agy::wire::Message::new(&raw);
    assert_eq!(raw.get_str(1).as_deref(), Some("Rename the crate"));
    assert!(matches!(
        raw.last(2),
        Some(agy_tools::agy::wire::Value::Varint(n)) if Value::Integer(n as i64) == idx::cell(&row, "step_count")
    ));
    assert!(last_input >= 2);
    // The same rules as --reindex: it finds nothing to do.
    let out = run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
}

#[test]
fn deleting_the_last_user_turn_with_onto_updates_the_row_and_nothing_else() {
    let s = Scratch::new("index-onto");
    let root = s.join("root");
    real_conversation(&root, A, &["Fix the flaky login test", "Now run it"]).close();
    let conn = idx::create(&root, Shape::V1116);
    idx::agy_row(&conn, A, "Login test fix", 9, 5);
    drop(conn);
    let before = idx::row(&root, A).unwrap();
    let rows_path = s.join("rows.ndjson");
    let rows = run_ok("agy-dump", &[root.to_str().unwrap()], b"");
    std::fs::write(&rows_path, &rows).unwrap();
    let messages = run_ok("agy-decode", &[], &rows);

    // Unedited, the row (and all else) comes back byte for byte.
    let same = run_ok(
        "agy-encode",
        &["--onto", rows_path.to_str().unwrap()],
        &messages,
    );
    let copy = s.join("copy");
    run_ok("agy-pack", &["--root", copy.to_str().unwrap()], &same);
    let again = run_ok("agy-dump", &[copy.to_str().unwrap()], b"");
    assert!(again == rows, "decode | encode --onto | pack changed bytes");

    // The last user turn (and the reply to it) deleted with jq.
    let jq = std::process::Command::new("jq")
        .args(["-c", "select(.kind != \"message\" or .idx < 5)"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let edited = match jq {
        Ok(mut child) => {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(&messages).unwrap();
            child.wait_with_output().unwrap().stdout
        }
        // Without jq, the same filter in Rust.
        Err(_) => json_lines(&messages)
            .into_iter()
            .filter(|m| m["kind"] != "message" || m["idx"].as_i64().unwrap() < 5)
            .map(|m| m.to_string() + "\n")
            .collect::<String>()
            .into_bytes(),
    };
    assert!(edited.len() < messages.len());
    let new_rows = run_ok(
        "agy-encode",
        &["--onto", rows_path.to_str().unwrap()],
        &edited,
    );
    run_ok(
        "agy-pack",
        &["--force", "--root", root.to_str().unwrap()],
        &new_rows,
    );
    let (steps, last_input) = db_facts(&root.join(format!("conversations/{A}.db")));
    assert!(steps < 9, "{steps}");
    assert_eq!(last_input, 0);
    let after = idx::row(&root, A).unwrap();
    assert_eq!(idx::cell(&after, "step_count"), Value::Integer(steps));
    assert_eq!(
        idx::cell(&after, "last_user_input_step_index"),
        Value::Integer(0)
    );
    // What the edit did not change keeps agy's bytes: its own title and
    // preview, its flags, its workspace.
    for column in [
        "title",
        "preview",
        "workspace_uris",
        "status",
        "not_fully_idle",
        "agent_name",
        "app_data_dir",
    ] {
        assert_eq!(
            idx::cell(&after, column),
            idx::cell(&before, column),
            "{column}"
        );
    }
    // The times follow the conversation's last step and user input.
    assert_eq!(
        idx::cell(&after, "last_user_input_time"),
        Value::Text("2026-06-28 09:46:40+00:00".into())
    );
    let out = run_ok("agy-ls", &[root.to_str().unwrap()], b"");
    assert_eq!(json_lines(&out)[0]["index"], "agrees");
}

#[test]
fn encoding_decoded_messages_derives_the_row_reindex_would() {
    let s = Scratch::new("index-encode");
    let src = s.join("src");
    real_conversation(&src, A, &["Fix the flaky login test", "Now run it"]).close();
    let rows = run_ok("agy-dump", &[src.to_str().unwrap()], b"");
    let messages = run_ok("agy-decode", &["--all"], &rows);
    let encoded = run_ok("agy-encode", &[], &messages);
    let records: Vec<_> = json_lines(&encoded)
        .into_iter()
        .filter(|r| r["kind"] == "index")
        .collect();
    assert_eq!(records.len(), 1);
    let meta = json_lines(&messages)
        .into_iter()
        .find(|m| m["kind"] == "meta")
        .unwrap();
    assert_eq!(records[0]["row"]["title"], meta["title"]);
    assert_eq!(records[0]["row"]["preview"], "Fix the flaky login test");
    let dst = s.join("dst");
    run_ok("agy-pack", &["--root", dst.to_str().unwrap()], &encoded);
    let (steps, last_input) = db_facts(&dst.join(format!("conversations/{A}.db")));
    assert_eq!(records[0]["row"]["step_count"], steps);
    assert_eq!(records[0]["row"]["last_user_input_step_index"], last_input);
    let before = std::fs::read(idx::path(&dst)).unwrap();
    let out = run_ok(
        "agy-pack",
        &["--reindex", "--root", dst.to_str().unwrap()],
        b"",
    );
    assert!(out.is_empty());
    assert_eq!(std::fs::read(idx::path(&dst)).unwrap(), before);
}
