//! Native agy steps built by hand at the field numbers of FORMAT.md, and the
//! row-stream lines that carry them. Numbers are spelled out here on purpose
//! (not taken from the library's tables) so a wrong constant there shows up
//! as a failing test.

use super::pb::Msg;

/// Step types (CortexStepType).
pub const USER_INPUT: u64 = 14;
pub const PLANNER_RESPONSE: u64 = 15;
pub const CODE_ACTION: u64 = 5;
pub const GREP_SEARCH: u64 = 7;
pub const VIEW_FILE: u64 = 8;
pub const LIST_DIRECTORY: u64 = 9;
pub const RUN_COMMAND: u64 = 21;
pub const CHECKPOINT: u64 = 23;
pub const MCP_TOOL: u64 = 38;
pub const TASK_BOUNDARY: u64 = 81;
pub const CONVERSATION_HISTORY: u64 = 98;
pub const SYSTEM_MESSAGE: u64 = 101;
pub const GENERIC: u64 = 132;

/// Statuses.
pub const PENDING: u64 = 1;
pub const RUNNING: u64 = 2;
pub const DONE: u64 = 3;
pub const CANCELED: u64 = 6;
pub const ERROR: u64 = 7;

/// CortexStepMetadata with created_at (field 1) and source (field 3).
pub fn metadata(seconds: i64, source: u64) -> Msg {
    Msg::new().ts(1, seconds, 0).varint(3, source)
}

/// The metadata and payload blobs of a user message as agy stores it: a
/// USER_INPUT step, DONE, source USER, with the text at UserInput 2 and as
/// its first item (3 {1 text}).
pub fn user_input_step(idx: i64, text: &str) -> (Vec<u8>, Vec<u8>) {
    let metadata = Msg::new()
        .ts(1, 1_786_000_000 + idx, 0)
        .varint(3, 4)
        .build();
    let payload = Msg::new()
        .varint(1, 14)
        .varint(4, 3)
        .bytes(5, &metadata)
        .msg(19, Msg::new().str(2, text).msg(3, Msg::new().str(1, text)))
        .build();
    (metadata, payload)
}

/// A ChatToolCall {1 id, 2 name, 3 arguments_json}.
pub fn call(id: &str, name: &str, args_json: &str) -> Msg {
    Msg::new().str(1, id).str(2, name).str(3, args_json)
}

/// A thinking signature as agy 1.1.23 writes it, at PlannerResponse 14 and
/// ChatToolCall 7 (FORMAT.md 13 rows 1-2): the message `{2 {1: bytes}}`.
/// A typed RUN_COMMAND step of `command` with its `output`, in the Any a
/// GENERIC step's result carries it (agy 1.1.23: FORMAT.md 13 row 3).
pub fn run_command_any(command: &str, status: u64, output: &str) -> Msg {
    let typed = Msg::new().varint(1, RUN_COMMAND).varint(4, status).msg(
        28,
        Msg::new()
            .str(23, command)
            .msg(21, Msg::new().str(1, output)),
    );
    Msg::new()
        .str(1, "type.googleapis.com/gemini_coder.Step")
        .bytes(2, &typed.0)
}

/// A GENERIC step's arguments as map entries, in the order given (agy
/// writes Go's map order, not the call's).
pub fn generic_args(entries: &[(&str, &str)]) -> Msg {
    entries.iter().fold(Msg::new(), |args, (k, v)| {
        args.msg(1, Msg::new().str(1, k).str(2, v))
    })
}

pub fn signature(bytes: &[u8]) -> Msg {
    Msg::new().msg(2, Msg::new().bytes(1, bytes))
}

/// A tool step's metadata: created_at, source MODEL, the call it runs (4).
pub fn tool_metadata(seconds: i64, call: Msg) -> Msg {
    metadata(seconds, 2).msg(4, call)
}

/// A gemini_coder.Step: 1 type, 4 status, 5 metadata, then the payload in
/// its field.
pub fn step(step_type: u64, status: u64, metadata: &Msg, payload_field: u32, payload: Msg) -> Msg {
    Msg::new()
        .varint(1, step_type)
        .varint(4, status)
        .msg(5, metadata.clone())
        .msg(payload_field, payload)
}

/// A `steps` row record whose columns mirror the step as agy writes them.
pub fn row(
    conversation: &str,
    idx: i64,
    step_type: u64,
    status: u64,
    metadata: &Msg,
    payload: &Msg,
) -> String {
    row_with(
        conversation,
        idx,
        step_type,
        status,
        &hex::encode(&metadata.0),
        "null",
        &hex::encode(&payload.0),
    )
}

/// A `steps` row with explicit column text (`error_details` as JSON).
pub fn row_with(
    conversation: &str,
    idx: i64,
    step_type: u64,
    status: u64,
    metadata_hex: &str,
    error_details_json: &str,
    payload_hex: &str,
) -> String {
    format!(
        concat!(
            r#"{{"conversation":"{}","kind":"row","table":"steps","row":{{"idx":{},"step_type":{},"status":{},"#,
            r#""has_subtrajectory":0,"metadata":"{}","error_details":{},"permissions":null,"task_details":null,"#,
            r#""render_info":null,"step_payload":"{}","step_format":0}}}}"#
        ),
        conversation, idx, step_type, status, metadata_hex, error_details_json, payload_hex
    )
}

/// The `db` record that opens a conversation.
pub fn db(conversation: &str) -> String {
    format!(r#"{{"conversation":"{conversation}","kind":"db","user_version":1}}"#)
}

/// A row of another table with one blob column `data` and optional extras.
pub fn blob_row(conversation: &str, table: &str, extra: &str, data: &Msg) -> String {
    format!(
        r#"{{"conversation":"{conversation}","kind":"row","table":"{table}","row":{{{extra}"data":"{}"}}}}"#,
        hex::encode(&data.0)
    )
}

pub fn trajectory_meta(conversation: &str, cascade_id: &str) -> String {
    format!(
        r#"{{"conversation":"{conversation}","kind":"row","table":"trajectory_meta","row":{{"trajectory_id":"t-1","cascade_id":"{cascade_id}","trajectory_type":4,"source":17}}}}"#
    )
}

/// Runs agy-decode with `args` over `lines`, returning its output lines.
pub fn decode_lines(args: &[&str], lines: &[String]) -> Vec<String> {
    let input = lines.join("\n") + "\n";
    let out = super::run_ok("agy-decode", args, input.as_bytes());
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Compares output lines one by one, so a failure shows the first that
/// differs, then their number.
pub fn assert_lines(actual: &[String], expected: &[&str]) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_eq!(a, e, "line {i} differs");
    }
    assert_eq!(actual.len(), expected.len(), "{actual:#?}");
}
