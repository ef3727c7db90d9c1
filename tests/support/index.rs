//! agy's index of conversations, built as agy builds it: the data root's
//! `conversation_summaries.db` with agy 1.1.16's DDL (19 columns), or a
//! later agy's 21 columns and `user_version` 3 (FORMAT.md 14 rows 6-7).
//! The DDL is spelt out here again so a wrong copy in the library fails.

use std::path::{Path, PathBuf};

use rusqlite::types::Value;
use rusqlite::{params_from_iter, Connection};

use super::pb::Msg;
use super::steps::{metadata, step, CHECKPOINT, CONVERSATION_HISTORY, DONE, PLANNER_RESPONSE};
use super::{brain_file, AgyDb};

pub const DDL_1_1_16: &[&str] = &[
    r#"CREATE TABLE conversation_summaries (conversation_id text, title text NOT NULL DEFAULT "", preview text NOT NULL DEFAULT "", step_count integer NOT NULL DEFAULT 0, last_modified_time datetime NOT NULL, workspace_uris text NOT NULL, status text NOT NULL DEFAULT "", source text NOT NULL DEFAULT "", project_id text NOT NULL DEFAULT "", agent_name text NOT NULL DEFAULT "", parent_conversation_id text NOT NULL DEFAULT "", nesting_depth integer NOT NULL DEFAULT 0, battle_id text NOT NULL DEFAULT "", winning_conversation_id text NOT NULL DEFAULT "", not_fully_idle numeric NOT NULL DEFAULT false, killed numeric NOT NULL DEFAULT false, last_user_input_time datetime NOT NULL, last_user_input_step_index integer NOT NULL DEFAULT -1, app_data_dir text NOT NULL DEFAULT "", PRIMARY KEY (conversation_id))"#,
    "CREATE INDEX idx_conversation_summaries_last_user_input_time ON conversation_summaries(last_user_input_time)",
    "CREATE INDEX idx_conversation_summaries_last_modified_time ON conversation_summaries(last_modified_time)",
];

/// Which shape of index to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// agy 1.1.16: 19 columns, user_version 0.
    V1116,
    /// Later: + raw_summary BLOB, group_id TEXT, user_version 3.
    V3,
}

pub fn path(root: &Path) -> PathBuf {
    root.join("conversation_summaries.db")
}

/// Creates the index of `root` in the given shape.
pub fn create(root: &Path, shape: Shape) -> Connection {
    std::fs::create_dir_all(root).unwrap();
    let conn = Connection::open(path(root)).unwrap();
    for sql in DDL_1_1_16 {
        conn.execute_batch(sql).unwrap();
    }
    if shape == Shape::V3 {
        conn.execute_batch(
            "ALTER TABLE conversation_summaries ADD COLUMN raw_summary BLOB; \
             ALTER TABLE conversation_summaries ADD COLUMN group_id TEXT DEFAULT ''; \
             PRAGMA user_version = 3",
        )
        .unwrap();
    }
    conn
}

/// A row as agy writes one: its own title, times with a fraction, a
/// status, a raw summary blob in the 21-column form.
pub fn agy_row(conn: &Connection, id: &str, title: &str, steps: i64, last_input: i64) {
    let mut columns = vec![
        ("conversation_id", Value::Text(id.into())),
        ("title", Value::Text(title.into())),
        ("preview", Value::Text("whatever agy showed".into())),
        ("step_count", Value::Integer(steps)),
        (
            "last_modified_time",
            Value::Text("2026-06-28 10:15:42.123456+02:00".into()),
        ),
        (
            "workspace_uris",
            Value::Text(r#"["file:///Users/me/src/app"]"#.into()),
        ),
        ("status", Value::Text("".into())),
        ("source", Value::Text("antigravity-cli".into())),
        ("project_id", Value::Text("default-cli-project".into())),
        ("agent_name", Value::Text("".into())),
        ("not_fully_idle", Value::Integer(1)),
        (
            "last_user_input_time",
            Value::Text("2026-06-28 10:15:40+02:00".into()),
        ),
        ("last_user_input_step_index", Value::Integer(last_input)),
        ("app_data_dir", Value::Text("antigravity-cli".into())),
    ];
    let has_later: bool = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_info('conversation_summaries') WHERE name = 'raw_summary'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
        > 0;
    if has_later {
        columns.push(("raw_summary", Value::Blob(vec![0x0a, 0x03, b'a', 0xff, 0])));
        columns.push(("group_id", Value::Text("g-1".into())));
    }
    let names: Vec<&str> = columns.iter().map(|(n, _)| *n).collect();
    let marks = vec!["?"; columns.len()].join(",");
    conn.execute(
        &format!(
            "INSERT INTO conversation_summaries ({}) VALUES ({marks})",
            names.join(",")
        ),
        params_from_iter(columns.into_iter().map(|(_, v)| v)),
    )
    .unwrap();
}

/// Every row of the index, each column as (name, value), in rowid order.
pub fn rows(root: &Path) -> Vec<Vec<(String, Value)>> {
    let conn = Connection::open(path(root)).unwrap();
    let mut stmt = conn
        .prepare("SELECT * FROM conversation_summaries ORDER BY rowid")
        .unwrap();
    let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let rows = stmt
        .query_map([], |r| {
            Ok(names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), r.get::<_, Value>(i).unwrap()))
                .collect::<Vec<_>>())
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows
}

/// The row of `id`, if any.
pub fn row(root: &Path, id: &str) -> Option<Vec<(String, Value)>> {
    rows(root)
        .into_iter()
        .find(|r| r[0].1 == Value::Text(id.into()))
}

/// One column of a row.
pub fn cell(row: &[(String, Value)], column: &str) -> Value {
    row.iter()
        .find(|(n, _)| n == column)
        .unwrap_or_else(|| panic!("no column {column}"))
        .1
        .clone()
}

const EPHEMERAL_MESSAGE: u64 = 90;

/// A conversation as agy ≥ 1.0.10 writes one (FORMAT.md 14 row 2): per turn
/// USER_INPUT, (the first only) CONVERSATION_HISTORY with an empty payload,
/// EPHEMERAL_MESSAGE, PLANNER_RESPONSE, CHECKPOINT naming the conversation.
pub fn real_conversation(root: &Path, id: &str, turns: &[&str]) -> AgyDb {
    let db = AgyDb::create(root, id);
    let mut idx = 0i64;
    let t = |idx: i64| 1_782_640_000 + idx * 10;
    for (turn, text) in turns.iter().enumerate() {
        let m = metadata(t(idx), 4);
        let input = Msg::new().str(2, text).msg(3, Msg::new().str(1, text));
        let s = step(14, DONE, &m, 19, input).build();
        db.step(idx, 14, DONE as i64, &m.build(), &s);
        idx += 1;
        if turn == 0 {
            let m = metadata(t(idx), 1);
            let s = step(CONVERSATION_HISTORY, DONE, &m, 111, Msg::new()).build();
            db.step(
                idx,
                CONVERSATION_HISTORY as i64,
                DONE as i64,
                &m.build(),
                &s,
            );
            idx += 1;
        }
        let m = metadata(t(idx), 1);
        let s = step(EPHEMERAL_MESSAGE, DONE, &m, 103, Msg::new()).build();
        db.step(idx, EPHEMERAL_MESSAGE as i64, DONE as i64, &m.build(), &s);
        idx += 1;
        let m = metadata(t(idx), 2);
        let reply = Msg::new().str(1, &format!("Done: {text}"));
        let s = step(PLANNER_RESPONSE, DONE, &m, 20, reply).build();
        db.step(idx, PLANNER_RESPONSE as i64, DONE as i64, &m.build(), &s);
        idx += 1;
        let m = metadata(t(idx), 1);
        let checkpoint = Msg::new()
            .str(4, "Fixing the flaky login test")
            .varint(9, 1)
            .varint(12, idx as u64)
            .str(
                15,
                &format!("file:///Users/me/.gemini/antigravity-cli/brain/{id}/.system_generated/logs/transcript.jsonl"),
            )
            .str(19, text);
        let s = step(CHECKPOINT, DONE, &m, 30, checkpoint).build();
        db.step(idx, CHECKPOINT as i64, DONE as i64, &m.build(), &s);
        idx += 1;
    }
    db.trajectory_metadata(
        &Msg::new()
            .msg(
                1,
                Msg::new().str(1, "file:///Users/me/src/app").str(4, "main"),
            )
            .ts(2, 1_782_639_990, 0)
            .build(),
    );
    brain_file(
        root,
        id,
        ".system_generated/logs/transcript.jsonl",
        b"{\"step_index\":0}\n",
    );
    db
}
