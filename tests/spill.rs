//! A GENERIC result whose full text agy spilled to a brain file
//! (GenericStepResult.full_output_uri, `brain/<id>/steps/<n>/output.txt`):
//! the row stream carries that file after the last step, and agy-decode
//! puts its text in the result, keeping every message in its place.

mod support;

use serde_json::Value;
use support::pb::Msg;
use support::run_ok;
use support::steps::*;

const T0: i64 = 1_786_353_243;

fn file(conversation: &str, path: &str, text: &str) -> String {
    serde_json::json!({"conversation": conversation, "kind": "file", "path": path, "text": text})
        .to_string()
}

/// A conversation whose planner declares `results.len()` calls, each
/// answered by a GENERIC step with that result message, then a closing
/// assistant turn.
fn conversation(id: &str, results: &[Msg]) -> Vec<String> {
    let calls: Vec<Msg> = (0..results.len())
        .map(|i| call(&format!("c{i}"), "run_command", r#"{"CommandLine":"make"}"#))
        .collect();
    let mut planner = Msg::new();
    for c in &calls {
        planner = planner.msg(7, c.clone());
    }
    let meta = metadata(T0, 2);
    let mut lines = vec![
        db(id),
        row(
            id,
            0,
            PLANNER_RESPONSE,
            DONE,
            &meta,
            &step(PLANNER_RESPONSE, DONE, &meta, 20, planner),
        ),
    ];
    for (i, result) in results.iter().enumerate() {
        let tool_meta = tool_metadata(T0 + 1, calls[i].clone());
        let s = step(
            GENERIC,
            DONE,
            &tool_meta,
            140,
            Msg::new().msg(2, result.clone()),
        );
        lines.push(row(id, i as i64 + 1, GENERIC, DONE, &tool_meta, &s));
    }
    let last = results.len() as i64 + 1;
    let s = step(PLANNER_RESPONSE, DONE, &meta, 20, Msg::new().str(1, "done"));
    lines.push(row(id, last, PLANNER_RESPONSE, DONE, &meta, &s));
    lines
}

fn spilled(text: &str, uri: &str) -> Msg {
    Msg::new().str(1, text).str(7, uri)
}

fn decode(lines: &[String]) -> Vec<Value> {
    let out = run_ok("agy-decode", &[], (lines.join("\n") + "\n").as_bytes());
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The result texts by call, then the kinds of every record, in order.
fn results_and_shape(records: &[Value]) -> (Vec<String>, Vec<String>) {
    let results = records
        .iter()
        .filter(|r| r["role"] == "user")
        .map(|r| r["content"][0]["content"].as_str().unwrap().to_string())
        .collect();
    let shape = records
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["conversation"].as_str().unwrap(),
                r["role"].as_str().unwrap_or("meta")
            )
        })
        .collect();
    (results, shape)
}

#[test]
fn spilled_text_replaces_the_truncated_one_in_place() {
    let mut lines = conversation(
        "s1",
        &[
            spilled(
                "head…",
                "file:///home/u/.gemini/antigravity-cli/brain/s1/steps/1/output.txt",
            ),
            Msg::new().str(1, "plain"),
            spilled("rel…", "steps/2/output.txt"),
            spilled(
                "never…",
                "file:///h/.gemini/antigravity-cli/brain/s1/steps/3/output.txt",
            ),
            // Another conversation's brain is not in this stream.
            spilled(
                "other…",
                "file:///h/.gemini/antigravity-cli/brain/zz/steps/1/output.txt",
            ),
        ],
    );
    lines.push(file(
        "s1",
        ".system_generated/logs/transcript.jsonl",
        "{}\n",
    ));
    lines.push(file(
        "s1",
        "steps/1/output.txt",
        "head and \"the\" whole\ttail ✓\n",
    ));
    lines.push(file("s1", "steps/2/output.txt", "relative whole"));
    lines.extend(conversation("s2", &[Msg::new().str(1, "fast path")]));
    let records = decode(&lines);
    let (results, shape) = results_and_shape(&records);
    assert_eq!(
        results,
        [
            "head and \"the\" whole\ttail ✓\n",
            "plain",
            "relative whole",
            "never…",
            "other…",
            "fast path"
        ]
    );
    assert_eq!(
        shape,
        [
            "s1 assistant",
            "s1 user",
            "s1 user",
            "s1 user",
            "s1 user",
            "s1 user",
            "s1 assistant",
            "s1 meta",
            "s2 assistant",
            "s2 user",
            "s2 assistant",
            "s2 meta"
        ]
    );
}

#[test]
fn an_error_result_is_not_replaced() {
    let tool_call = call("c0", "run_command", "{}");
    let meta = metadata(T0, 2);
    let tool_meta = tool_metadata(T0, tool_call.clone());
    let failed = Msg::new()
        .varint(1, GENERIC)
        .varint(4, ERROR)
        .msg(5, tool_meta.clone())
        .msg(31, Msg::new().str(1, "it broke"))
        .msg(140, Msg::new().msg(2, spilled("x", "steps/1/output.txt")));
    let lines = vec![
        db("e"),
        row(
            "e",
            0,
            PLANNER_RESPONSE,
            DONE,
            &meta,
            &step(
                PLANNER_RESPONSE,
                DONE,
                &meta,
                20,
                Msg::new().msg(7, tool_call),
            ),
        ),
        row("e", 1, GENERIC, ERROR, &tool_meta, &failed),
        file("e", "steps/1/output.txt", "full"),
    ];
    let records = decode(&lines);
    assert_eq!(records[1]["content"][0]["content"], "it broke");
    assert_eq!(records[1]["content"][0]["is_error"], true);
}

#[test]
fn large_spills_and_held_messages_go_through_temporary_files() {
    // Over a MiB of held messages after the spilled result, and a spilled
    // text over a MiB, both beyond what a spool keeps in memory.
    let big_file = "ü".repeat(700_000);
    let filler = "x".repeat(300_000);
    let mut results = vec![spilled("cut", "steps/1/output.txt")];
    results.extend((0..5).map(|_| Msg::new().str(1, &filler)));
    let mut lines = conversation("big", &results);
    // In two parts, as agy-dump writes a file over a megabyte, with another
    // file's record between them.
    let (first, rest) = big_file.split_at(1 << 19);
    lines.push(file("big", "steps/1/output.txt", first));
    lines.push(file("big", "unrelated.txt", "noise"));
    let mut append =
        serde_json::from_str::<Value>(&file("big", "steps/1/output.txt", rest)).unwrap();
    append["append"] = Value::Bool(true);
    lines.push(append.to_string());
    let records = decode(&lines);
    let (texts, shape) = results_and_shape(&records);
    assert_eq!(texts.len(), 6);
    assert!(texts[0] == big_file, "spilled text differs");
    assert!(texts[1..].iter().all(|t| *t == filler));
    assert_eq!(shape.len(), 9);
    assert_eq!(shape[8], "big meta");
}
