//! `agy-decode --all`: bookkeeping steps and kinds nothing here understands
//! as `system` messages, and `agy-encode` writing them back, end to end
//! through real databases:
//! `agy-dump | agy-decode --all | agy-encode | agy-pack`, then
//! `agy-dump | agy-decode --all` gives the same messages.

mod support;

use support::pb::Msg;
use support::steps::*;
use support::{brain_file, run_ok, AgyDb, Scratch};

const T0: i64 = 1_786_353_243;
const ID: &str = "0b7e1f2a-9c3d-4e5f-8a7b-1c2d3e4f5a6b";

const NOTIFY_USER: u64 = 82;
const ERROR_MESSAGE: u64 = 17;
const EPHEMERAL_MESSAGE: u64 = 90;
const DIRECTORY_RULES: u64 = 139;
const FILE_CHANGE: u64 = 86;

use support::steps::decode_lines as decode;

/// The `steps` row at `idx` of a row stream, as JSON.
fn steps_row(lines: &[String], idx: i64) -> serde_json::Value {
    lines
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["table"] == "steps" && r["row"]["idx"] == idx)
        .unwrap()["row"]
        .clone()
}

/// Every bookkeeping kind of the system table, an unknown kind alone and
/// one executing a call, and a known kind whose payload nothing reads.
fn bookkeeping_stream() -> Vec<String> {
    let sys = metadata(T0, 5);
    let mut lines = vec![db("s")];
    let mut push = |idx: i64, step_type: u64, field: u32, payload: Msg| {
        let s = step(step_type, DONE, &sys, field, payload);
        lines.push(row("s", idx, step_type, DONE, &sys, &s));
    };
    push(0, USER_INPUT, 19, Msg::new().str(2, "hi"));
    push(1, CONVERSATION_HISTORY, 111, Msg::new());
    push(
        2,
        TASK_BOUNDARY,
        93,
        Msg::new()
            .str(1, "Parser")
            .str(2, "started")
            .str(3, "Splitting")
            .varint(5, 1),
    );
    push(
        3,
        NOTIFY_USER,
        94,
        Msg::new().str(2, "Please review").varint(3, 1),
    );
    push(
        4,
        ERROR_MESSAGE,
        24,
        Msg::new()
            .msg(3, Msg::new().str(1, "Quota").str(3, "429 trace"))
            .varint(5, 1),
    );
    push(
        5,
        SYSTEM_MESSAGE,
        114,
        Msg::new()
            .str(1, "Subagents were stopped.")
            .str(3, "resume"),
    );
    push(6, EPHEMERAL_MESSAGE, 103, Msg::new().str(1, "<reminder>"));
    push(
        7,
        DIRECTORY_RULES,
        156,
        Msg::new()
            .str(2, "file:///w/GEMINI.md")
            .str(2, "file:///w/sub/AGENTS.md"),
    );
    push(
        8,
        CHECKPOINT,
        30,
        Msg::new()
            .str(4, "intent")
            .str(5, "summary")
            .varint(9, 1)
            .str(10, "Title"),
    );
    // OPEN_BROWSER_URL with a payload field nothing here knows.
    push(9, 56, 900, Msg::new().str(1, "https://x.test"));
    // A type the CLI's enum does not have, executing a declared call.
    let odd = call("c9", "future_tool", "{}");
    let planner = step(
        PLANNER_RESPONSE,
        DONE,
        &metadata(T0, 2),
        20,
        Msg::new().msg(7, odd.clone()),
    );
    lines.push(row(
        "s",
        10,
        PLANNER_RESPONSE,
        DONE,
        &metadata(T0, 2),
        &planner,
    ));
    let tool_meta = tool_metadata(T0 + 1, odd);
    let unknown = Msg::new()
        .varint(1, 250)
        .varint(4, DONE)
        .msg(5, tool_meta.clone())
        .varint(7, 1)
        .msg(300, Msg::new());
    lines.push(row("s", 11, 250, DONE, &tool_meta, &unknown));
    lines
}

#[test]
fn all_shows_bookkeeping_and_what_is_not_understood() {
    let lines = bookkeeping_stream();
    let user = r#"{"conversation":"s","kind":"message","role":"user","idx":0,"timestamp":"2026-08-10T09:14:03Z","content":[{"type":"text","text":"hi"}]}"#;
    let assistant = r#"{"conversation":"s","kind":"message","role":"assistant","idx":10,"timestamp":"2026-08-10T09:14:03Z","content":[{"type":"tool_use","id":"c9","name":"future_tool","input":{}}]}"#;
    let result = r#"{"conversation":"s","kind":"message","role":"user","idx":11,"timestamp":"2026-08-10T09:14:04Z","content":[{"type":"tool_result","tool_use_id":"c9","content":""}]}"#;
    let meta = r#"{"conversation":"s","kind":"meta","id":"s","timestamp":"2026-08-10T09:14:03Z","title":"Title"}"#;
    // Without --all: exactly the messages of before.
    assert_lines(&decode(&[], &lines), &[user, assistant, result, meta]);
    let sys =
        |rest: &str| format!(r#"{{"conversation":"s","kind":"message","role":"system",{rest}}}"#);
    // A kind nothing here reads carries its whole Step, the row's
    // step_payload.
    let raw = |idx: i64| steps_row(&lines, idx)["step_payload"].clone();
    assert_lines(
        &decode(&["--all"], &lines),
        &[
            user,
            &sys(
                r#""step_type":"CONVERSATION_HISTORY","idx":1,"timestamp":"2026-08-10T09:14:03Z","content":[]"#,
            ),
            &sys(concat!(
                r#""step_type":"TASK_BOUNDARY","idx":2,"timestamp":"2026-08-10T09:14:03Z","content":["#,
                r#"{"type":"text","text":"Parser","field":"task_name"},"#,
                r#"{"type":"text","text":"started","field":"task_status"},"#,
                r#"{"type":"text","text":"Splitting","field":"task_summary"}]"#
            )),
            &sys(
                r#""step_type":"NOTIFY_USER","idx":3,"timestamp":"2026-08-10T09:14:03Z","content":[{"type":"text","text":"Please review","field":"notification_content"}]"#,
            ),
            &sys(concat!(
                r#""step_type":"ERROR_MESSAGE","idx":4,"timestamp":"2026-08-10T09:14:03Z","content":["#,
                r#"{"type":"text","text":"Quota","field":"user_error_message"},"#,
                r#"{"type":"text","text":"429 trace","field":"full_error"}]"#
            )),
            &sys(concat!(
                r#""step_type":"SYSTEM_MESSAGE","idx":5,"timestamp":"2026-08-10T09:14:03Z","content":["#,
                r#"{"type":"text","text":"Subagents were stopped.","field":"message"},"#,
                r#"{"type":"text","text":"resume","field":"event_type"}]"#
            )),
            &sys(
                r#""step_type":"EPHEMERAL_MESSAGE","idx":6,"timestamp":"2026-08-10T09:14:03Z","content":[{"type":"text","text":"<reminder>","field":"content"}]"#,
            ),
            &sys(concat!(
                r#""step_type":"DIRECTORY_RULES","idx":7,"timestamp":"2026-08-10T09:14:03Z","content":["#,
                r#"{"type":"text","text":"file:///w/GEMINI.md","field":"rule_file_uris"},"#,
                r#"{"type":"text","text":"file:///w/sub/AGENTS.md","field":"rule_file_uris"}]"#
            )),
            &sys(concat!(
                r#""step_type":"CHECKPOINT","idx":8,"timestamp":"2026-08-10T09:14:03Z","content":["#,
                r#"{"type":"text","text":"intent","field":"user_intent"},"#,
                r#"{"type":"text","text":"summary","field":"session_summary"},"#,
                r#"{"type":"text","text":"Title","field":"conversation_title"}]"#
            )),
            &sys(&format!(
                r#""step_type":"OPEN_BROWSER_URL","idx":9,"timestamp":"2026-08-10T09:14:03Z","raw":{},"content":[{{"type":"text","text":"step type 56 (OPEN_BROWSER_URL) is not understood; Step fields present: 1, 4, 5, 900"}}]"#,
                raw(9)
            )),
            assistant,
            &sys(&format!(
                r#""step_type":"250","idx":11,"timestamp":"2026-08-10T09:14:04Z","raw":{},"content":[{{"type":"text","text":"step type 250 is not understood; Step fields present: 1, 4, 5, 7, 300"}}]"#,
                raw(11)
            )),
            result,
            meta,
        ],
    );
}

#[test]
fn encode_writes_system_messages_back_and_raw_steps_byte_for_byte() {
    let source = bookkeeping_stream();
    let messages = run_ok(
        "agy-decode",
        &["--all"],
        (source.join("\n") + "\n").as_bytes(),
    );
    let rows: Vec<String> = String::from_utf8(run_ok("agy-encode", &[], &messages))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    // Every message comes back at its idx, the not-understood kinds too.
    let again = run_ok(
        "agy-decode",
        &["--all"],
        (rows.join("\n") + "\n").as_bytes(),
    );
    let expected: Vec<&str> = std::str::from_utf8(&messages).unwrap().lines().collect();
    assert_lines(
        &String::from_utf8(again)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>(),
        &expected,
    );
    // Those are written back from their raw Step: the same bytes, their
    // columns mirroring it. The one that executed call c9 holds its result,
    // which is not written again.
    for idx in [9, 11] {
        let (original, written) = (steps_row(&source, idx), steps_row(&rows, idx));
        for column in [
            "step_type",
            "status",
            "metadata",
            "error_details",
            "step_payload",
        ] {
            assert_eq!(written[column], original[column], "step {idx} {column}");
        }
    }
    let steps = rows.iter().filter(|r| r.contains(r#""table":"steps""#));
    assert_eq!(steps.count(), 12);
}

/// A database using what issue 4 added: every bookkeeping kind, a pending
/// tool step (an idx gap for encode to keep), an implicit user turn with
/// media, a planner turn with only modified_response and raw_thinking, a
/// MultiEdit call, a deleted file, a spilled result and lineage.
fn source_db(root: &std::path::Path) -> std::path::PathBuf {
    let db = AgyDb::create(root, ID);
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, "file:///w").str(4, "dev"))
            .ts(2, T0 - 5, 0)
            .str(5, "parent-conv")
            .str(6, "root-conv")
            .varint(17, 1)
            .build(),
    );
    db.conn
        .execute(
            "INSERT INTO parent_references (idx, data) VALUES (0, ?1), (1, ?2)",
            rusqlite::params![
                Msg::new()
                    .str(1, "traj-p")
                    .int(2, 7)
                    .varint(5, 2)
                    .str(6, "parent-conv")
                    .build(),
                // A rewind names the conversation itself: not a fork.
                Msg::new()
                    .str(1, "traj-self")
                    .varint(5, 2)
                    .str(6, ID)
                    .build(),
            ],
        )
        .unwrap();
    let sys = metadata(T0, 5);
    let put = |idx: i64, step_type: u64, status: u64, meta: &Msg, field: u32, payload: Msg| {
        let s = step(step_type, status, meta, field, payload);
        db.step(idx, step_type as i64, status as i64, &meta.0, &s.0);
    };
    put(
        0,
        USER_INPUT,
        DONE,
        &metadata(T0, 4),
        19,
        Msg::new()
            .str(2, "Tidy the repo")
            .msg(5, Msg::new().str(1, "aGk=").str(2, "image/png"))
            .msg(9, Msg::new().str(1, "application/pdf").bytes(2, b"%PDF"))
            .msg(9, Msg::new().str(1, "image/jpeg").bytes(2, b"\xff\xd8"))
            .msg(9, Msg::new().str(1, "audio/ogg").str(5, "file:///w/a.ogg")),
    );
    put(1, CONVERSATION_HISTORY, DONE, &sys, 111, Msg::new());
    put(
        2,
        DIRECTORY_RULES,
        DONE,
        &sys,
        156,
        Msg::new().str(2, "file:///w/GEMINI.md"),
    );
    let multi = call(
        "m1",
        "multi_replace_file_content",
        r#"{"TargetFile":"/w/a.rs","ReplacementChunks":[{"TargetContent":"a","ReplacementContent":"b","AllowMultiple":false}],"toolAction":"Editing"}"#,
    );
    let rm = call("m2", "delete_file", r#"{"Path":"/w/old.rs"}"#);
    let sh = call(
        "m3",
        "run_command",
        r#"{"CommandLine":"cargo build","Cwd":"/w"}"#,
    );
    let waiting = call("m4", "command_status", r#"{"CommandId":"x"}"#);
    let planner_meta = metadata(T0 + 1, 2);
    put(
        3,
        PLANNER_RESPONSE,
        DONE,
        &planner_meta,
        20,
        Msg::new()
            .msg(7, multi.clone())
            .msg(7, rm.clone())
            .msg(7, sh.clone())
            .msg(7, waiting.clone())
            .str(8, "Editing now.")
            .str(16, "raw plan"),
    );
    put(
        4,
        GENERIC,
        DONE,
        &tool_metadata(T0 + 2, multi),
        140,
        Msg::new().msg(2, Msg::new().str(1, "Applied 1 edit.")),
    );
    put(
        5,
        FILE_CHANGE,
        DONE,
        &tool_metadata(T0 + 2, rm),
        98,
        Msg::new().str(1, "file:///w/old.rs").varint(2, 3),
    );
    put(
        6,
        GENERIC,
        DONE,
        &tool_metadata(T0 + 2, sh),
        140,
        Msg::new().msg(
            2,
            Msg::new().str(1, "Compiling…<truncated 9000 bytes>").str(
                7,
                &format!("file:///home/u/.gemini/antigravity-cli/brain/{ID}/steps/6/output.txt"),
            ),
        ),
    );
    put(
        7,
        GENERIC,
        RUNNING,
        &tool_metadata(T0 + 2, waiting),
        140,
        Msg::new(),
    );
    put(
        8,
        TASK_BOUNDARY,
        DONE,
        &sys,
        93,
        Msg::new().str(1, "Tidy").str(3, "Done tidying"),
    );
    put(9, NOTIFY_USER, DONE, &sys, 94, Msg::new().str(2, "Tidied."));
    put(
        10,
        USER_INPUT,
        DONE,
        &metadata(T0 + 3, 3),
        19,
        Msg::new().str(2, "<system reminder>"),
    );
    put(
        11,
        SYSTEM_MESSAGE,
        DONE,
        &sys,
        114,
        Msg::new().str(1, "Background task stopped."),
    );
    put(
        12,
        EPHEMERAL_MESSAGE,
        DONE,
        &sys,
        103,
        Msg::new().str(1, "ephemeral"),
    );
    put(
        13,
        ERROR_MESSAGE,
        DONE,
        &sys,
        24,
        Msg::new().msg(3, Msg::new().str(2, "rate limited")),
    );
    put(
        14,
        CHECKPOINT,
        DONE,
        &sys,
        30,
        Msg::new().str(4, "Tidy the repo").str(10, "Repo tidy-up"),
    );
    let path = db.close();
    brain_file(
        root,
        ID,
        "steps/6/output.txt",
        "Compiling… all 9000 bytes\nFinished".as_bytes(),
    );
    path
}

#[test]
fn all_streams_round_trip_through_databases() {
    let scratch = Scratch::new("all-pipeline");
    let db = source_db(&scratch.join("src"));
    let messages = run_ok(
        "agy-decode",
        &["--all"],
        &run_ok("agy-dump", &[db.to_str().unwrap()], b""),
    );
    let text = String::from_utf8(messages.clone()).unwrap();
    for wanted in [
        r#""implicit":true"#,
        r#""name":"MultiEdit","input":{"file_path":"/w/a.rs","edits":[{"old_string":"a","new_string":"b","replace_all":false}],"toolAction":"Editing"}"#,
        r#""content":{"file":"/w/old.rs","deleted":true}"#,
        r#""content":"Compiling… all 9000 bytes\nFinished""#,
        r#"{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERg=="}}"#,
        r#"{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9g="}}"#,
        r#"{"type":"document","source":{"type":"url","media_type":"audio/ogg","url":"file:///w/a.ogg"}}"#,
        r#"{"type":"thinking","thinking":"raw plan"},{"type":"text","text":"Editing now."}"#,
        r#""step_type":"TASK_BOUNDARY","idx":8,"#,
        r#""parent_conversation_id":"parent-conv","forked_from":{"conversation_id":"parent-conv","step_index":7,"trajectory_id":"traj-p","reference_type":"FORK"}}"#,
    ] {
        assert!(text.contains(wanted), "{wanted}\n{text}");
    }
    assert_eq!(
        text.lines()
            .filter(|l| l.contains(r#""role":"system""#))
            .count(),
        8
    );

    for args in [&[][..], &["--generic"][..]] {
        let root = scratch.join(format!("packed{}", args.len()));
        let rows = run_ok("agy-encode", args, &messages);
        run_ok("agy-pack", &["--root", root.to_str().unwrap()], &rows);
        let packed = root.join("conversations").join(format!("{ID}.db"));
        let again = run_ok(
            "agy-decode",
            &["--all"],
            &run_ok("agy-dump", &[packed.to_str().unwrap()], b""),
        );
        assert_eq!(String::from_utf8(again).unwrap(), text, "{args:?}");
    }
}
