//! `agy-dump x.db | agy-decode | agy-encode | agy-pack --root R`, then
//! `agy-dump R/conversations/ID.db | agy-decode` gives the same messages,
//! but for their `idx`: without the original (`--onto`), agy-encode numbers
//! the steps it writes afresh, and the pending step and the checkpoint this
//! conversation holds before its last reply go after it.

mod support;

use support::pb::Msg;
use support::steps::*;
use support::{brain_file, run_ok, AgyDb, Scratch};

const ID: &str = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b";
const T0: i64 = 1_786_353_243;

fn put(
    db: &AgyDb,
    idx: i64,
    step_type: u64,
    status: u64,
    meta: &Msg,
    payload_field: u32,
    payload: Msg,
) {
    let s = step(step_type, status, meta, payload_field, payload);
    db.step(idx, step_type as i64, status as i64, &meta.0, &s.0);
}

/// The message records of a stream, each without its `idx`.
fn without_idx(stream: &[u8]) -> Vec<serde_json::Value> {
    std::str::from_utf8(stream)
        .unwrap()
        .lines()
        .map(|l| {
            let mut record: serde_json::Value = serde_json::from_str(l).unwrap();
            record.as_object_mut().unwrap().remove("idx");
            record
        })
        .collect()
}

fn source_db(scratch: &Scratch) -> std::path::PathBuf {
    let root = scratch.join("src-root");
    let db = AgyDb::create(&root, ID);
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, "file:///work/repo").str(4, "main"))
            .ts(2, T0 - 10, 0)
            .str(7, "file:///work/repo")
            .build(),
    );
    db.gen_metadata(
        0,
        &Msg::new()
            .msg(1, Msg::new().str(19, "gemini-3-flash-agent"))
            .varint(2, 1)
            .build(),
    );
    let bash = call(
        "c_1",
        "run_command",
        r#"{"CommandLine":"cargo test","Cwd":"/work/repo","WaitMsBeforeAsync":2000}"#,
    );
    let view = call(
        "c_2",
        "view_file",
        r#"{"AbsolutePath":"/work/repo/Cargo.toml","StartLine":1,"EndLine":3}"#,
    );
    let ls = call("c_3", "list_dir", r#"{"DirectoryPath":"/work/repo"}"#);
    let edit = call(
        "c_4",
        "replace_file_content",
        r#"{"TargetFile":"/work/repo/a.rs","TargetContent":"x","ReplacementContent":"y"}"#,
    );
    let pending = call("c_5", "grep_search", r#"{"Query":"todo"}"#);
    put(
        &db,
        0,
        USER_INPUT,
        DONE,
        &metadata(T0, 4),
        19,
        Msg::new().str(2, "Make the tests pass, s'il vous plaît"),
    );
    let planner_meta = Msg::new()
        .ts(1, T0 + 1, 0)
        .varint(3, 2)
        .msg(9, Msg::new().varint(2, 100).varint(3, 20).varint(5, 50));
    let mut planner = Msg::new().str(1, "Looking.").str(3, "plan").str(4, "sig");
    for c in [&bash, &view, &ls, &edit, &pending] {
        planner = planner.msg(7, c.clone());
    }
    put(
        &db,
        1,
        PLANNER_RESPONSE,
        DONE,
        &planner_meta,
        20,
        planner.varint(12, 10),
    );
    put(
        &db,
        2,
        RUN_COMMAND,
        DONE,
        &tool_metadata(T0 + 2, bash),
        28,
        Msg::new()
            .str(23, "cargo test")
            .msg(21, Msg::new().str(1, "ok: 3 passed\n")),
    );
    put(
        &db,
        3,
        VIEW_FILE,
        ERROR,
        &tool_metadata(T0 + 2, view),
        14,
        Msg::new().str(1, "file:///work/repo/Cargo.toml"),
    );
    put(
        &db,
        4,
        LIST_DIRECTORY,
        DONE,
        &tool_metadata(T0 + 2, ls),
        15,
        Msg::new().msg(3, Msg::new().str(1, "src").varint(2, 1)),
    );
    put(
        &db,
        5,
        GENERIC,
        DONE,
        &tool_metadata(T0 + 3, edit),
        140,
        Msg::new().msg(2, Msg::new().str(1, "The edit was applied.")),
    );
    put(
        &db,
        6,
        GREP_SEARCH,
        RUNNING,
        &tool_metadata(T0 + 3, pending),
        13,
        Msg::new(),
    );
    put(
        &db,
        7,
        CHECKPOINT,
        DONE,
        &metadata(T0 + 4, 5),
        30,
        Msg::new().str(10, "Passing tests"),
    );
    put(
        &db,
        8,
        PLANNER_RESPONSE,
        DONE,
        &Msg::new().ts(1, T0 + 5, 0).varint(3, 2).varint(11, 1318),
        20,
        Msg::new().str(1, "Tests pass.").varint(12, 2),
    );
    let path = db.close();
    brain_file(
        &root,
        ID,
        ".system_generated/logs/transcript.jsonl",
        b"{\"step_index\":0}\n",
    );
    path
}

#[test]
fn dump_decode_encode_pack_round_trips_the_messages() {
    let scratch = Scratch::new("pipeline");
    let db = source_db(&scratch);
    let rows = run_ok("agy-dump", &[db.to_str().unwrap()], b"");
    let messages = run_ok("agy-decode", &[], &rows);
    let text = String::from_utf8(messages.clone()).unwrap();
    // The source really went through every kind used above.
    assert_eq!(text.lines().count(), 8, "{text}");
    assert!(
        text.contains(r#""name":"Bash""#) && text.contains(r#""model":"model-1318""#),
        "{text}"
    );
    assert!(text.contains(r#""title":"Passing tests""#), "{text}");
    // Each message names its source step; steps 6 (pending) and 7 (the
    // checkpoint) show none.
    let idxs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["idx"].clone())
        .collect();
    assert_eq!(
        idxs,
        serde_json::json!([0, 1, 2, 3, 4, 5, 8, null])
            .as_array()
            .unwrap()[..]
    );

    for args in [&[][..], &["--generic"][..]] {
        let root = scratch.join(format!("packed{}", args.len()));
        let encoded = run_ok("agy-encode", args, &messages);
        run_ok("agy-pack", &["--root", root.to_str().unwrap()], &encoded);
        let packed_db = root.join("conversations").join(format!("{ID}.db"));
        assert!(root
            .join("brain")
            .join(ID)
            .join(".system_generated/logs/transcript_full.jsonl")
            .exists());
        let again = run_ok(
            "agy-decode",
            &[],
            &run_ok("agy-dump", &[packed_db.to_str().unwrap()], b""),
        );
        assert_eq!(without_idx(&again), without_idx(&messages), "{args:?}");
    }
}
