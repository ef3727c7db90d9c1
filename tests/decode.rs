//! agy-decode over row streams built by hand at FORMAT.md's field numbers:
//! the typed tool kinds of agy 1.0.x, the GENERIC carrier of 1.1+, and
//! damaged blobs.

mod support;

use support::pb::Msg;
use support::steps::*;
use support::{run, run_ok, stderr};

/// 2026-08-10T09:14:03Z
const T0: i64 = 1_786_353_243;

fn decode(lines: &[String]) -> Vec<String> {
    decode_lines(&[], lines)
}

/// A planner step declaring `calls`, with the given response text.
fn planner(calls: &[Msg], text: &str) -> Msg {
    let mut p = Msg::new();
    if !text.is_empty() {
        p = p.str(1, text);
    }
    for c in calls {
        p = p.msg(7, c.clone());
    }
    p
}

fn push_step(
    lines: &mut Vec<String>,
    idx: i64,
    step_type: u64,
    status: u64,
    meta: &Msg,
    field: u32,
    payload: Msg,
) {
    let s = step(step_type, status, meta, field, payload);
    lines.push(row("c1", idx, step_type, status, meta, &s));
}

#[test]
fn typed_tool_kinds_of_agy_1_0_decode_field_by_field() {
    let calls = [
        call(
            "call_1",
            "run_command",
            r#"{"CommandLine":"cargo test","Cwd":"/repo","WaitMsBeforeAsync":2000}"#,
        ),
        call(
            "call_2",
            "view_file",
            r#"{"AbsolutePath":"/repo/src/lib.rs","StartLine":5,"EndLine":14}"#,
        ),
        call("call_3", "list_dir", r#"{"DirectoryPath":"/repo"}"#),
        call(
            "call_4",
            "grep_search",
            r#"{"Query":"(","SearchPath":"/repo"}"#,
        ),
        call(
            "call_5",
            "write_to_file",
            r#"{"TargetFile":"/repo/new.rs","CodeContent":"fn x() {}"}"#,
        ),
        call(
            "call_6",
            "replace_file_content",
            r#"{"TargetFile":"/repo/a b.rs","TargetContent":"x","ReplacementContent":"y","AllowMultiple":true}"#,
        ),
        // A signature of another shape than agy 1.1.23's: the whole value.
        call("call_7", "mcp_github_search", r#"{"q":"flaky"}"#).bytes(7, &[0xde, 0xad]),
    ];
    let mut lines = vec![
        db("c1"),
        trajectory_meta("c1", "c1"),
        blob_row(
            "c1",
            "trajectory_metadata_blob",
            r#""id":"main","#,
            &Msg::new()
                .msg(1, Msg::new().str(1, "file:///repo").str(4, "main"))
                .ts(2, T0 - 60, 0)
                .str(7, "file:///repo"),
        ),
        blob_row(
            "c1",
            "gen_metadata",
            r#""idx":0,"size":0,"#,
            &Msg::new()
                .msg(1, Msg::new().str(19, "gemini-3-flash-agent"))
                .varint(2, 2),
        ),
    ];
    let user = Msg::new()
        .str(2, "Fix the flaky test ✓")
        .msg(3, Msg::new().str(1, "Fix the flaky test ✓"))
        .msg(5, Msg::new().str(1, "aGVsbG8=").str(2, "image/png"));
    push_step(&mut lines, 0, USER_INPUT, DONE, &metadata(T0, 4), 19, user);
    push_step(
        &mut lines,
        1,
        CONVERSATION_HISTORY,
        DONE,
        &metadata(T0, 5),
        111,
        Msg::new(),
    );
    let planner_meta = Msg::new()
        .ts(1, T0 + 1, 500_000_000)
        .varint(3, 2)
        .msg(
            9,
            Msg::new()
                .varint(1, 1020)
                .varint(2, 16870)
                .varint(3, 275)
                .varint(5, 12000),
        )
        .varint(11, 1020);
    // The signature in TX's string form (field 4).
    let payload = planner(&calls, "Let me look.")
        .str(3, "thinking…")
        .str(4, "sig-1")
        .varint(12, 10);
    push_step(
        &mut lines,
        2,
        PLANNER_RESPONSE,
        DONE,
        &planner_meta,
        20,
        payload,
    );
    let tool = |i: usize| tool_metadata(T0 + 2, calls[i].clone());
    push_step(
        &mut lines,
        3,
        RUN_COMMAND,
        DONE,
        &tool(0),
        28,
        Msg::new()
            .str(23, "cargo test")
            .msg(21, Msg::new().str(1, "test result: FAILED"))
            .int(6, 101),
    );
    push_step(
        &mut lines,
        4,
        VIEW_FILE,
        DONE,
        &tool(1),
        14,
        Msg::new()
            .str(1, "file:///repo/src/lib.rs")
            .str(4, "5: fn main() {}"),
    );
    push_step(
        &mut lines,
        5,
        LIST_DIRECTORY,
        DONE,
        &tool(2),
        15,
        Msg::new()
            .msg(3, Msg::new().str(1, "src").varint(2, 1).varint(3, 4))
            .msg(3, Msg::new().str(1, "Cargo.toml").varint(4, 120)),
    );
    push_step(
        &mut lines,
        6,
        GREP_SEARCH,
        DONE,
        &tool(3),
        13,
        Msg::new().str(1, "(").str(5, "regex parse error"),
    );
    push_step(
        &mut lines,
        7,
        CODE_ACTION,
        DONE,
        &tool(4),
        10,
        Msg::new()
            .msg(
                1,
                Msg::new().msg(
                    2,
                    Msg::new()
                        .str(1, "fn x() {}")
                        .msg(2, Msg::new().str(5, "file:///repo/new.rs")),
                ),
            )
            .msg(
                2,
                Msg::new().msg(1, Msg::new().str(8, "file:///repo/new.rs").varint(11, 1)),
            ),
    );
    push_step(
        &mut lines,
        8,
        CODE_ACTION,
        DONE,
        &tool(5),
        10,
        Msg::new().msg(
            1,
            Msg::new().msg(
                1,
                Msg::new()
                    .varint(2, 1)
                    .msg(4, Msg::new().str(5, "file:///repo/a%20b.rs")),
            ),
        ),
    );
    // Canceled, with the error text only in the error_details column.
    let mcp_meta = tool(6);
    let mcp = step(
        MCP_TOOL,
        CANCELED,
        &mcp_meta,
        47,
        Msg::new().str(3, "partial"),
    );
    lines.push(row_with(
        "c1",
        9,
        MCP_TOOL,
        CANCELED,
        &hex::encode(&mcp_meta.0),
        &format!(
            "\"{}\"",
            hex::encode(Msg::new().str(2, "canceled by user").0)
        ),
        &hex::encode(&mcp.0),
    ));
    push_step(
        &mut lines,
        10,
        CHECKPOINT,
        DONE,
        &metadata(T0 + 3, 5),
        30,
        Msg::new().str(4, "Fixing the flaky test"),
    );
    push_step(
        &mut lines,
        11,
        SYSTEM_MESSAGE,
        DONE,
        &metadata(T0 + 3, 5),
        114,
        Msg::new().str(1, "notice"),
    );
    let last_meta = Msg::new().ts(1, T0 + 4, 0).varint(3, 2).varint(11, 1020);
    push_step(
        &mut lines,
        12,
        PLANNER_RESPONSE,
        DONE,
        &last_meta,
        20,
        // No thinking text, but a signature in agy 1.1.23's shape.
        planner(&[], "Done.")
            .varint(12, 2)
            .msg(14, signature(&[0x5e, 0x16])),
    );

    let out = decode(&lines);
    assert_lines(
        &out,
        &[
            r#"{"conversation":"c1","kind":"message","role":"user","idx":0,"timestamp":"2026-08-10T09:14:03Z","content":[{"type":"text","text":"Fix the flaky test ✓"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGVsbG8="}}]}"#,
            concat!(
                r#"{"conversation":"c1","kind":"message","role":"assistant","idx":2,"timestamp":"2026-08-10T09:14:04.500Z","model":"gemini-3-flash-agent","stop_reason":"tool_use","#,
                r#""usage":{"input_tokens":16870,"output_tokens":275,"cache_read_input_tokens":12000},"content":["#,
                r#"{"type":"thinking","thinking":"thinking…","signature":"sig-1"},{"type":"text","text":"Let me look."},"#,
                r#"{"type":"tool_use","id":"call_1","name":"Bash","input":{"command":"cargo test","workdir":"/repo","WaitMsBeforeAsync":2000}},"#,
                r#"{"type":"tool_use","id":"call_2","name":"Read","input":{"file_path":"/repo/src/lib.rs","offset":5,"limit":10}},"#,
                r#"{"type":"tool_use","id":"call_3","name":"list_dir","input":{"DirectoryPath":"/repo"}},"#,
                r#"{"type":"tool_use","id":"call_4","name":"grep_search","input":{"Query":"(","SearchPath":"/repo"}},"#,
                r#"{"type":"tool_use","id":"call_5","name":"Write","input":{"file_path":"/repo/new.rs","content":"fn x() {}"}},"#,
                r#"{"type":"tool_use","id":"call_6","name":"Edit","input":{"file_path":"/repo/a b.rs","old_string":"x","new_string":"y","replace_all":true}},"#,
                r#"{"type":"tool_use","id":"call_7","name":"mcp_github_search","input":{"q":"flaky"},"signature":"dead"}]}"#
            ),
            r#"{"conversation":"c1","kind":"message","role":"user","idx":3,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_1","content":"test result: FAILED","is_error":true}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":4,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_2","content":"5: fn main() {}"}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":5,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_3","content":[{"name":"src","is_dir":true,"num_children":4},{"name":"Cargo.toml","size_bytes":120}]}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":6,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_4","content":"regex parse error","is_error":true}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":7,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_5","content":{"file":"/repo/new.rs","created":true}}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":8,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_6","content":{"file":"/repo/a b.rs","edited":true}}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":9,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_7","content":"canceled by user","is_error":true}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"assistant","idx":12,"timestamp":"2026-08-10T09:14:07Z","model":"model-1020","stop_reason":"end_turn","content":[{"type":"thinking","thinking":"","signature":"5e16"},{"type":"text","text":"Done."}]}"#,
            r#"{"conversation":"c1","kind":"meta","id":"c1","timestamp":"2026-08-10T09:13:03Z","cwd":"/repo","git_branch":"main","title":"Fixing the flaky test","model":"model-1020"}"#,
        ],
    );
}

#[test]
fn generic_era_results_pending_orphans_and_unknown_kinds() {
    let bash = call(
        "call_a",
        "run_command",
        r#"{"CommandLine":"ls","Cwd":"/w"}"#,
    )
    .msg(7, signature(&[0xca, 0xfe]));
    let sub = call(
        "call_b",
        "invoke_subagent",
        r#"{"Subagents":[{"Role":"r"}]}"#,
    );
    // A backwards range has no `limit`: it stays native.
    let later = call(
        "call_c",
        "view_file",
        r#"{"AbsolutePath":"/w/x","StartLine":9,"EndLine":2}"#,
    );
    let odd = call("call_d", "future_tool", "not json");
    let boundary = call("call_e", "task_boundary", r#"{"TaskName":"Parser"}"#);
    let mut lines = vec![db("c1")];
    push_step(
        &mut lines,
        0,
        USER_INPUT,
        DONE,
        &metadata(T0, 4),
        19,
        Msg::new()
            .msg(3, Msg::new().str(1, "from "))
            .msg(3, Msg::new().str(1, "items"))
            .str(1, "legacy query"),
    );
    let meta = Msg::new()
        .ts(1, T0, 0)
        .varint(3, 2)
        .msg(24, Msg::new().str(8, "gemini-3.8-flash"));
    push_step(
        &mut lines,
        1,
        PLANNER_RESPONSE,
        DONE,
        &meta,
        20,
        planner(
            &[
                bash.clone(),
                sub.clone(),
                later.clone(),
                odd.clone(),
                boundary.clone(),
            ],
            "",
        )
        .str(16, "raw thoughts")
        // agy 1.1.23's signature outranks TX's string form.
        .str(4, "tx-sig")
        .msg(14, signature(&[0x01, 0x02, 0x03]))
        .varint(12, 99),
    );
    // GENERIC carrier, done.
    push_step(
        &mut lines,
        2,
        GENERIC,
        DONE,
        &tool_metadata(T0 + 1, bash.clone()),
        140,
        Msg::new()
            .msg(1, Msg::new().str(1, "CommandLine").str(2, "ls"))
            .msg(
                2,
                Msg::new().str(1, "The command completed successfully.\nStdout:\na\n"),
            ),
    );
    // GENERIC failing: error details in Step field 31.
    let failed = Msg::new()
        .varint(1, GENERIC)
        .varint(4, ERROR)
        .msg(5, tool_metadata(T0 + 1, sub.clone()))
        .msg(
            31,
            Msg::new().str(3, "full trace").str(1, "subagent failed"),
        )
        .msg(140, Msg::new().msg(2, Msg::new().str(1, "ignored")));
    lines.push(row(
        "c1",
        3,
        GENERIC,
        ERROR,
        &tool_metadata(T0 + 1, sub),
        &failed,
    ));
    // Still running: no result.
    push_step(
        &mut lines,
        4,
        GENERIC,
        RUNNING,
        &tool_metadata(T0 + 1, later),
        140,
        Msg::new(),
    );
    // An unknown kind with a call: an empty result, not a dropped record.
    let unknown = Msg::new()
        .varint(1, 250)
        .varint(4, DONE)
        .msg(5, tool_metadata(T0 + 1, odd))
        .msg(300, Msg::new().str(1, "?"));
    lines.push(row(
        "c1",
        5,
        250,
        DONE,
        &tool_metadata(T0 + 1, Msg::new()),
        &unknown,
    ));
    // A result whose call no planner declared: a tool_result all the same.
    push_step(
        &mut lines,
        6,
        GENERIC,
        DONE,
        &tool_metadata(T0 + 2, call("ghost", "x", "{}")),
        140,
        Msg::new().msg(2, Msg::new().str(1, "boo")),
    );
    // A bookkeeping kind that executed a call answers it with the text of
    // its fields.
    push_step(
        &mut lines,
        7,
        TASK_BOUNDARY,
        DONE,
        &tool_metadata(T0 + 2, boundary),
        93,
        Msg::new()
            .str(1, "Parser")
            .str(2, "started")
            .str(3, "Splitting"),
    );

    let out = decode(&lines);
    assert_lines(
        &out,
        &[
            r#"{"conversation":"c1","kind":"message","role":"user","idx":0,"timestamp":"2026-08-10T09:14:03Z","content":[{"type":"text","text":"from items"}]}"#,
            concat!(
                r#"{"conversation":"c1","kind":"message","role":"assistant","idx":1,"timestamp":"2026-08-10T09:14:03Z","model":"gemini-3.8-flash","stop_reason":"stop-99","content":["#,
                r#"{"type":"thinking","thinking":"raw thoughts","signature":"010203"},"#,
                r#"{"type":"tool_use","id":"call_a","name":"Bash","input":{"command":"ls","workdir":"/w"},"signature":"cafe"},"#,
                r#"{"type":"tool_use","id":"call_b","name":"invoke_subagent","input":{"Subagents":[{"Role":"r"}]}},"#,
                r#"{"type":"tool_use","id":"call_c","name":"view_file","input":{"AbsolutePath":"/w/x","StartLine":9,"EndLine":2}},"#,
                r#"{"type":"tool_use","id":"call_d","name":"future_tool","input":"not json"},"#,
                r#"{"type":"tool_use","id":"call_e","name":"task_boundary","input":{"TaskName":"Parser"}}]}"#
            ),
            r#"{"conversation":"c1","kind":"message","role":"user","idx":2,"timestamp":"2026-08-10T09:14:04Z","content":[{"type":"tool_result","tool_use_id":"call_a","content":"The command completed successfully.\nStdout:\na\n"}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":3,"timestamp":"2026-08-10T09:14:04Z","content":[{"type":"tool_result","tool_use_id":"call_b","content":"subagent failed","is_error":true}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":5,"timestamp":"2026-08-10T09:14:04Z","content":[{"type":"tool_result","tool_use_id":"call_d","content":""}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":6,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"ghost","content":"boo"}]}"#,
            r#"{"conversation":"c1","kind":"message","role":"user","idx":7,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_e","content":"Parser\nstarted\nSplitting"}]}"#,
            r#"{"conversation":"c1","kind":"meta","id":"c1","timestamp":"2026-08-10T09:14:03Z","title":"from items","model":"gemini-3.8-flash"}"#,
        ],
    );
}

#[test]
fn checkpoint_title_field_and_first_text_fallback() {
    let long = "ü".repeat(90);
    let mut lines = vec![db("c2")];
    let s = step(USER_INPUT, DONE, &Msg::new(), 19, Msg::new().str(2, &long));
    lines.push(row("c2", 0, USER_INPUT, DONE, &Msg::new(), &s));
    let out = decode(&lines);
    assert_eq!(out.len(), 2);
    assert_eq!(
        out[1],
        format!(
            r#"{{"conversation":"c2","kind":"meta","id":"c2","title":"{}"}}"#,
            "ü".repeat(80)
        )
    );
    // conversation_title (10) wins over user_intent (4), and the latest
    // checkpoint wins over earlier ones.
    let cp = |title: Msg| step(CHECKPOINT, DONE, &Msg::new(), 30, title);
    lines.push(row(
        "c2",
        1,
        CHECKPOINT,
        DONE,
        &Msg::new(),
        &cp(Msg::new().str(4, "old")),
    ));
    lines.push(row(
        "c2",
        2,
        CHECKPOINT,
        DONE,
        &Msg::new(),
        &cp(Msg::new().str(4, "intent").str(10, "Title")),
    ));
    let out = decode(&lines);
    assert_eq!(
        out[1],
        r#"{"conversation":"c2","kind":"meta","id":"c2","title":"Title"}"#
    );
}

#[test]
fn damaged_blobs_decode_to_their_readable_prefix() {
    let calls = [
        call("k1", "run_command", r#"{"CommandLine":"a"}"#),
        call("k2", "list_dir", "{}"),
    ];
    let meta = metadata(T0, 2);
    let full = step(
        PLANNER_RESPONSE,
        DONE,
        &meta,
        20,
        planner(&calls, "hello").str(3, "thought"),
    );
    // Every cut of the step decodes without error.
    for cut in 0..full.0.len() {
        let truncated = Msg(full.0[..cut].to_vec());
        let out = decode(&[
            db("c1"),
            row("c1", 0, PLANNER_RESPONSE, DONE, &meta, &truncated),
        ]);
        assert!(!out.is_empty(), "cut {cut}");
        for line in &out {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
    }
    // Cutting inside the payload's last field keeps the fields before it;
    // with the metadata field lost, the metadata column is used instead.
    let payload = planner(&calls, "hello").str(3, "thought");
    let mut damaged = Msg::new().varint(1, PLANNER_RESPONSE).varint(4, DONE).0;
    let mut inner = payload.0.clone();
    inner.truncate(inner.len() - 3);
    // The Step is intact but lacks field 5; its planner message is cut
    // inside the thinking text.
    damaged.extend(Msg::new().bytes(20, &inner).0);
    let out = decode(&[
        db("c1"),
        row("c1", 0, PLANNER_RESPONSE, DONE, &meta, &Msg(damaged)),
    ]);
    // The thinking text keeps what is there of it, and the message says
    // it is damaged.
    assert_eq!(
        out[0],
        concat!(
            r#"{"conversation":"c1","kind":"message","role":"assistant","idx":0,"timestamp":"2026-08-10T09:14:03Z","damaged":true,"content":["#,
            r#"{"type":"thinking","thinking":"thou"},"#,
            r#"{"type":"text","text":"hello"},"#,
            r#"{"type":"tool_use","id":"k1","name":"Bash","input":{"command":"a"}},"#,
            r#"{"type":"tool_use","id":"k2","name":"list_dir","input":{}}]}"#
        )
    );
    // Pure garbage is an empty step, not an error, and says it is damaged.
    let out = decode(&[
        db("c1"),
        row_with("c1", 0, 14, 3, "ffff", "null", "ffffffffffffffffffffff"),
    ]);
    assert_eq!(
        out[0],
        r#"{"conversation":"c1","kind":"message","role":"user","idx":0,"damaged":true,"content":[]}"#
    );
}

#[test]
fn malformed_lines_are_errors_naming_the_line() {
    let good = db("c1");
    let input = format!("{good}\n\n{{\"conversation\":\"c1\",\"kind\":\"row\"\n");
    let out = run("agy-decode", &[], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("stdin:3: bad JSON"),
        "{}",
        stderr(&out)
    );

    let bad_hex = row_with("c1", 0, 14, 3, "00", "null", "0g");
    let out = run("agy-decode", &[], format!("{good}\n{bad_hex}\n").as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("stdin:2: column step_payload: bad hex"),
        "{}",
        stderr(&out)
    );

    let interleaved = [db("a"), db("b"), db("a")].join("\n");
    let out = run("agy-decode", &[], interleaved.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("stdin:3: conversation \"a\" appears again"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn command_line() {
    let out = run("agy-decode", &["--help"], b"");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: agy-decode"));
    let out = run("agy-decode", &["--version"], b"");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("agy-decode "));
    let out = run("agy-decode", &["--bogus"], b"");
    assert_eq!(out.status.code(), Some(2));
    let out = run("agy-decode", &["/nonexistent/x"], b"");
    assert_eq!(out.status.code(), Some(1));
    // Several inputs are one stream; `-` is stdin.
    let scratch = support::Scratch::new("decode-args");
    let path = scratch.join("a.ndjson");
    std::fs::write(&path, db("c9") + "\n").unwrap();
    let out = run_ok(
        "agy-decode",
        &[path.to_str().unwrap(), "-"],
        (db("c8") + "\n").as_bytes(),
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "{\"conversation\":\"c9\",\"kind\":\"meta\",\"id\":\"c9\"}\n{\"conversation\":\"c8\",\"kind\":\"meta\",\"id\":\"c8\"}\n"
    );
}

#[test]
fn gen_metadata_names_the_model_enum_its_usage_reports_else_the_user_input_does() {
    // A generation that lists no step indices still ties its name to the
    // model enum in its usage; a step with another enum keeps `model-<n>`.
    let mut lines = vec![
        db("c1"),
        blob_row(
            "c1",
            "gen_metadata",
            r#""idx":0,"size":0,"#,
            &Msg::new().msg(
                1,
                Msg::new()
                    .msg(4, Msg::new().varint(1, 1020))
                    .str(19, "gemini-3.5-flash-low"),
            ),
        ),
    ];
    let named = Msg::new().ts(1, T0, 0).varint(3, 2).varint(11, 1020);
    let unnamed = Msg::new().ts(1, T0 + 1, 0).varint(3, 2).varint(11, 1318);
    push_step(
        &mut lines,
        0,
        PLANNER_RESPONSE,
        DONE,
        &named,
        20,
        planner(&[], "one"),
    );
    push_step(
        &mut lines,
        1,
        PLANNER_RESPONSE,
        DONE,
        &unnamed,
        20,
        planner(&[], "two"),
    );
    let out = decode(&lines);
    let models: Vec<serde_json::Value> = out
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            serde_json::json!("gemini-3.5-flash-low"),
            serde_json::json!("model-1318"),
            serde_json::json!("model-1318"),
        ]
    );

    // Without gen_metadata, the model name the user input's planner
    // configuration holds (19.12.1.28) names the turns after it.
    let mut lines = vec![db("c1")];
    let configured = Msg::new().str(2, "hi").msg(
        12,
        Msg::new().msg(
            1,
            Msg::new()
                .msg(15, Msg::new().varint(1, 1318))
                .str(28, "gemini-3.8-flash-low"),
        ),
    );
    push_step(
        &mut lines,
        0,
        USER_INPUT,
        DONE,
        &metadata(T0, 4),
        19,
        configured,
    );
    push_step(
        &mut lines,
        1,
        PLANNER_RESPONSE,
        DONE,
        &unnamed,
        20,
        planner(&[], "three"),
    );
    let out = decode(&lines);
    let models: Vec<serde_json::Value> = out
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            serde_json::Value::Null,
            serde_json::json!("gemini-3.8-flash-low"),
            serde_json::json!("gemini-3.8-flash-low"),
        ],
        "{out:#?}"
    );
}
