//! Every step kind of FORMAT.md section 7 that answers a tool call, built at
//! its field numbers in each form agy writes it: the typed step of agy
//! 1.0.x, and the GENERIC carrier of 1.1+ wrapping the kind step raw, in an
//! Any, or as the bare kind message in an Any. Each form must decode to the
//! same tool result.

mod support;

use serde_json::{json, Value};
use support::pb::Msg;
use support::run_ok;
use support::steps::*;

const T0: i64 = 1_786_353_243;

/// One kind's result: how the step is built and what it decodes to.
struct Case {
    tool: &'static str,
    step_type: u64,
    payload_field: u32,
    /// The payload message's proto name, for the Any type URL.
    message: &'static str,
    payload: Msg,
    content: Value,
    is_error: bool,
}

fn case(
    tool: &'static str,
    step_type: u64,
    payload_field: u32,
    message: &'static str,
    payload: Msg,
    content: Value,
    is_error: bool,
) -> Case {
    Case {
        tool,
        step_type,
        payload_field,
        message,
        payload,
        content,
        is_error,
    }
}

fn any(type_url: &str, value: &Msg) -> Msg {
    Msg::new().str(1, type_url).msg(2, value.clone())
}

fn tool_response(json_text: &str, error: &str) -> Msg {
    let mut response = Msg::new().str(1, "client_view_file").str(2, json_text);
    if !error.is_empty() {
        response = response.str(5, error);
    }
    any(
        "type.googleapis.com/antigravity.localharness.ToolResponse",
        &response,
    )
}

fn cases() -> Vec<Case> {
    vec![
        case(
            "view_file",
            8,
            14,
            "CortexStepViewFile",
            Msg::new().str(1, "file:///w/a.rs").str(4, "1: fn a() {}"),
            json!("1: fn a() {}"),
            false,
        ),
        case(
            "run_command",
            21,
            28,
            "CortexStepRunCommand",
            Msg::new()
                .str(23, "ls")
                .msg(21, Msg::new().str(2, "a\nb\n")),
            json!("a\nb\n"),
            false,
        ),
        case(
            "list_dir",
            9,
            15,
            "CortexStepListDirectory",
            Msg::new().str(2, "a.rs").str(2, "b"),
            json!(["a.rs", "b"]),
            false,
        ),
        case(
            "find_by_name",
            25,
            34,
            "CortexStepFind",
            Msg::new().str(1, "*.rs").str(11, "a.rs\nsrc/b.rs"),
            json!("a.rs\nsrc/b.rs"),
            false,
        ),
        case(
            "find_by_name",
            25,
            34,
            "CortexStepFind",
            Msg::new().str(1, "[").str(8, "bad glob"),
            json!("bad glob"),
            true,
        ),
        case(
            "command_status",
            28,
            37,
            "CortexStepCommandStatus",
            Msg::new().str(1, "cmd-1").str(3, "out ").str(4, "err").int(5, 1),
            json!("out err"),
            false,
        ),
        case(
            "command_status",
            28,
            37,
            "CortexStepCommandStatus",
            Msg::new().str(3, "ignored").str(9, "combined"),
            json!("combined"),
            false,
        ),
        case(
            "read_url_content",
            31,
            40,
            "CortexStepReadUrlContent",
            Msg::new()
                .str(1, "https://x.test")
                .msg(2, Msg::new().str(2, "page text").str(4, "Title"))
                .str(3, "https://x.test/"),
            json!("page text"),
            false,
        ),
        case(
            "search_web",
            33,
            42,
            "CortexStepSearchWeb",
            Msg::new().str(1, "rust wire").str(5, "Three results."),
            json!("Three results."),
            false,
        ),
        // write_to_file has no paired step type: dispatch finds field 23.
        case(
            "write_to_file",
            0,
            23,
            "CortexStepWriteToFile",
            Msg::new().str(1, "file:///w/new%20file.rs").varint(4, 1),
            json!({"file": "/w/new file.rs", "created": true}),
            false,
        ),
        case(
            "write_to_file",
            0,
            23,
            "CortexStepWriteToFile",
            Msg::new().str(1, "file:///w/old.rs"),
            json!({"file": "/w/old.rs", "edited": true}),
            false,
        ),
        case(
            "replace_file_content",
            86,
            98,
            "CortexStepFileChange",
            Msg::new().str(1, "file:///w/c.rs").varint(2, 1).str(5, "create"),
            json!({"file": "/w/c.rs", "created": true}),
            false,
        ),
        case(
            "replace_file_content",
            86,
            98,
            "CortexStepFileChange",
            Msg::new().str(1, "file:///w/e.rs").varint(2, 2),
            json!({"file": "/w/e.rs", "edited": true}),
            false,
        ),
        case(
            "delete_file",
            86,
            98,
            "CortexStepFileChange",
            Msg::new().str(1, "file:///w/d.rs").varint(2, 3),
            json!({"file": "/w/d.rs", "deleted": true}),
            false,
        ),
        case(
            "shell_exec",
            112,
            127,
            "CortexStepShellExec",
            Msg::new().str(1, "ls").int(2, 2).str(3, "listing"),
            json!("listing"),
            false,
        ),
        case(
            "shell_exec",
            112,
            127,
            "CortexStepShellExec",
            Msg::new().str(1, "ls").str(3, "partial").str(4, "no such shell"),
            json!("no such shell"),
            true,
        ),
        case(
            "send_command_input",
            100,
            113,
            "CortexStepSendCommandInput",
            Msg::new()
                .str(1, "cmd-1")
                .str(2, "y\n")
                .msg(8, Msg::new().str(1, "Proceed? y\ndone")),
            json!("Proceed? y\ndone"),
            false,
        ),
        case(
            "invoke_subagent",
            127,
            143,
            "CortexStepInvokeSubagent",
            Msg::new()
                .str(1, "research")
                .str(2, "look")
                .str(5, "child-1")
                .msg(10, Msg::new().str(1, "child-1"))
                .msg(10, Msg::new().str(1, "child-2").str(2, "file:///log")),
            json!("child-1\nchild-2"),
            false,
        ),
        case(
            "ask_question",
            138,
            154,
            "CortexStepAskQuestion",
            Msg::new()
                .msg(
                    1,
                    Msg::new()
                        .str(1, "Which db?")
                        .msg(2, Msg::new().str(1, "o1").str(2, "SQLite"))
                        .msg(2, Msg::new().str(1, "o2").str(2, "Postgres"))
                        .str(4, "o2")
                        .str(4, "o9"),
                )
                .msg(1, Msg::new().str(1, "Name?").str(5, "agy-tools"))
                .msg(1, Msg::new().str(1, "Tests?").varint(6, 1)),
            json!("Q: Which db?\nA: Postgres, o9\n\nQ: Name?\nA: agy-tools\n\nQ: Tests?\nA: (skipped)"),
            false,
        ),
        case(
            "client_view_file",
            103,
            116,
            "CortexStepAgencyToolCall",
            Msg::new()
                .str(1, "agent")
                .str(2, "client_view_file")
                .msg(4, any("type.googleapis.com/other.Thing", &Msg::new().str(2, "no")))
                .msg(4, tool_response(r#"{"content":"x"}"#, "")),
            json!(r#"{"content":"x"}"#),
            false,
        ),
        case(
            "client_view_file",
            103,
            116,
            "CortexStepAgencyToolCall",
            Msg::new().msg(4, tool_response("", "permission denied")),
            json!("permission denied"),
            true,
        ),
        // memory has no paired step type either (field 38, not type 38).
        case(
            "update_memory",
            29,
            38,
            "CortexStepMemory",
            Msg::new().str(1, "m-7").varint(3, 2),
            json!("memory m-7 updated"),
            false,
        ),
        case(
            "finish",
            2,
            12,
            "CortexStepFinish",
            Msg::new().str(2, "All done."),
            json!("All done."),
            false,
        ),
        case(
            "mcp_github_search",
            38,
            47,
            "CortexStepMcpTool",
            Msg::new().str(1, "github").str(3, "[1 issue]"),
            json!("[1 issue]"),
            false,
        ),
        case(
            "grep_search",
            7,
            13,
            "CortexStepGrepSearch",
            Msg::new().str(1, "x").str(3, "a.rs:1:x"),
            json!("a.rs:1:x"),
            false,
        ),
        case(
            "run_command",
            17,
            24,
            "CortexStepErrorMessage",
            Msg::new().msg(3, Msg::new().str(2, "short").str(3, "full")),
            json!("short"),
            true,
        ),
    ]
}

/// The ways a kind step rides in GenericStepResult (field 2 of the GENERIC
/// payload) beside the model-facing text: field 6 as a raw Step, as an Any
/// wrapping a Step, as an Any wrapping the kind message, and field 5 (the
/// IDE's `data`) as an Any wrapping a Step.
fn generic_forms(c: &Case) -> Vec<Msg> {
    let kind_step = Msg::new()
        .varint(1, c.step_type)
        .varint(4, DONE)
        .msg(c.payload_field, c.payload.clone());
    let text = "model-facing text";
    vec![
        Msg::new().str(1, text).msg(6, kind_step.clone()),
        Msg::new()
            .str(1, text)
            .msg(6, any("type.googleapis.com/gemini_coder.Step", &kind_step)),
        Msg::new().str(1, text).msg(
            6,
            any(
                &format!("type.googleapis.com/exa.cortex_pb.{}", c.message),
                &c.payload,
            ),
        ),
        Msg::new()
            .str(1, text)
            .msg(5, any("type.googleapis.com/gemini_coder.Step", &kind_step)),
    ]
}

/// Decodes one conversation in which a planner step declares `results`'
/// calls and each step answers one; returns the tool_result blocks by id.
fn decode_results(steps: Vec<(Msg, u64, Msg)>) -> Vec<(String, Value, bool)> {
    let mut lines = vec![db("k")];
    let calls: Vec<Msg> = (0..steps.len())
        .map(|i| call(&format!("c{i}"), "tool", "{}"))
        .collect();
    let mut planner = Msg::new();
    for c in &calls {
        planner = planner.msg(7, c.clone());
    }
    let meta = metadata(T0, 2);
    lines.push(row(
        "k",
        0,
        PLANNER_RESPONSE,
        DONE,
        &meta,
        &step(PLANNER_RESPONSE, DONE, &meta, 20, planner),
    ));
    for (i, (payload_and_field, step_type, _)) in steps.iter().enumerate() {
        let tool_meta = tool_metadata(T0 + 1, calls[i].clone());
        let mut s = Msg::new()
            .varint(1, *step_type)
            .varint(4, DONE)
            .msg(5, tool_meta.clone());
        s.0.extend_from_slice(&payload_and_field.0);
        lines.push(row("k", i as i64 + 1, *step_type, DONE, &tool_meta, &s));
    }
    let out = run_ok("agy-decode", &[], (lines.join("\n") + "\n").as_bytes());
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["role"] == "user")
        .map(|r| {
            let block = &r["content"][0];
            assert_eq!(block["type"], "tool_result", "{r}");
            (
                block["tool_use_id"].as_str().unwrap().to_string(),
                block["content"].clone(),
                block["is_error"] == true,
            )
        })
        .collect()
}

#[test]
fn every_kind_decodes_alike_typed_and_in_each_generic_form() {
    let cases = cases();
    let mut steps = Vec::new();
    let mut expected = Vec::new();
    for c in &cases {
        // The payload field itself, written after the metadata.
        steps.push((
            Msg::new().msg(c.payload_field, c.payload.clone()),
            c.step_type,
            Msg::new(),
        ));
        expected.push((c.tool, "typed", c.content.clone(), c.is_error));
        for (form, generic) in generic_forms(c).into_iter().enumerate() {
            steps.push((
                Msg::new().msg(140, Msg::new().msg(2, generic)),
                132,
                Msg::new(),
            ));
            expected.push((
                c.tool,
                ["raw Step", "Any(Step)", "Any(kind)", "data Any(Step)"][form],
                c.content.clone(),
                c.is_error,
            ));
        }
    }
    let results = decode_results(steps);
    assert_eq!(results.len(), expected.len());
    for (i, ((id, content, is_error), (tool, form, want, want_error))) in
        results.iter().zip(&expected).enumerate()
    {
        assert_eq!(id, &format!("c{i}"));
        assert_eq!(content, want, "{tool} {form}");
        assert_eq!(is_error, want_error, "{tool} {form}");
    }
}

#[test]
fn generic_result_text_wins_when_the_wrapped_step_says_nothing() {
    let text = Msg::new().str(1, "model-facing text");
    let steps = vec![
        // No wrapped step at all.
        text.clone(),
        // A view_file without content: the text is worth more.
        text.clone().msg(
            6,
            Msg::new()
                .varint(1, 8)
                .msg(14, Msg::new().str(1, "file:///a")),
        ),
        // A file change of an unknown type claims nothing.
        text.clone().msg(
            6,
            Msg::new()
                .varint(1, 86)
                .msg(98, Msg::new().str(1, "file:///a").varint(2, 9)),
        ),
        // An Any of a type nothing here reads.
        text.clone().msg(
            6,
            any("type.googleapis.com/x.Unknown", &Msg::new().str(1, "?")),
        ),
        // Garbage where the wrapped step would be.
        text.clone().bytes(6, &[0xff, 0xff, 0x01]),
        // A GENERIC wrapping a GENERIC is not followed.
        text.clone().msg(
            6,
            Msg::new()
                .varint(1, 132)
                .msg(140, Msg::new().msg(2, Msg::new().str(1, "inner"))),
        ),
    ];
    let n = steps.len();
    let results = decode_results(
        steps
            .into_iter()
            .map(|r| (Msg::new().msg(140, Msg::new().msg(2, r)), 132, Msg::new()))
            .collect(),
    );
    assert_eq!(results.len(), n);
    for (id, content, is_error) in results {
        assert_eq!(content, json!("model-facing text"), "{id}");
        assert!(!is_error);
    }
}

#[test]
fn damaged_kind_payloads_give_partial_results_not_errors() {
    for c in cases() {
        let full = c.payload.0.clone();
        for cut in 0..full.len() {
            let steps = vec![(
                Msg::new().bytes(c.payload_field, &full[..cut]),
                c.step_type,
                Msg::new(),
            )];
            let results = decode_results(steps);
            assert_eq!(results.len(), 1, "{} cut {cut}", c.tool);
        }
    }
}
