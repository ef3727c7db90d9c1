//! A conversation converted from another agent keeps what each of its
//! turns consumed where agy and the usage tools read it: a `gen_metadata`
//! row per generation (agy-store(5), USAGE). The sums are computed here
//! from the sessions' own JSON and from the rows' protobuf, read by this
//! file's own reader, and must agree.

mod support;

use serde_json::{json, Value};
use support::store::json_lines;
use support::{run_ok, Scratch};

/// A varint at `at`, and where it ends.
fn varint(bytes: &[u8], mut at: usize) -> (u64, usize) {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[at];
        value |= u64::from(b & 0x7f) << shift;
        at += 1;
        if b & 0x80 == 0 {
            return (value, at);
        }
        shift += 7;
    }
}

/// Every field of a protobuf message, as (number, varint or bytes).
fn fields(bytes: &[u8]) -> Vec<(u64, Result<u64, Vec<u8>>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let (key, next) = varint(bytes, at);
        at = next;
        match key & 7 {
            0 => {
                let (v, next) = varint(bytes, at);
                at = next;
                out.push((key >> 3, Ok(v)));
            }
            2 => {
                let (len, next) = varint(bytes, at);
                let end = next + len as usize;
                out.push((key >> 3, Err(bytes[next..end].to_vec())));
                at = end;
            }
            other => panic!("wire type {other} in a generation"),
        }
    }
    out
}

fn field(message: &[u8], number: u64) -> Option<Result<u64, Vec<u8>>> {
    fields(message)
        .into_iter()
        .find(|(n, _)| *n == number)
        .map(|(_, v)| v)
}

/// The four sums of the rows' ModelUsageStats (2 input, 3 output, 4 cache
/// writes, 5 cache reads), the models named, and how many rows.
fn row_sums(rows: &[u8]) -> ([u64; 4], Vec<String>, usize) {
    let mut sums = [0u64; 4];
    let mut models = Vec::new();
    let mut count = 0;
    for record in json_lines(rows) {
        if record["table"] != "gen_metadata" {
            continue;
        }
        count += 1;
        let data = hex::decode(record["row"]["data"].as_str().unwrap()).unwrap();
        assert_eq!(record["row"]["size"], data.len(), "size is data's length");
        let Some(Err(chat)) = field(&data, 1) else {
            panic!("no ChatModelMetadata")
        };
        let Some(Err(usage)) = field(&chat, 4) else {
            panic!("no usage")
        };
        for (i, number) in [2, 3, 4, 5].into_iter().enumerate() {
            if let Some(Ok(v)) = field(&usage, number) {
                sums[i] += v;
            }
        }
        if let Some(Err(name)) = field(&chat, 19) {
            models.push(String::from_utf8(name).unwrap());
        }
        assert!(matches!(field(&data, 2), Some(Ok(_))), "the step it made");
        assert!(
            matches!(field(&usage, 11), Some(Err(id)) if id.starts_with(b"req_")),
            "a response id"
        );
    }
    (sums, models, count)
}

fn lines(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

#[test]
fn a_claude_code_session_keeps_its_usage() {
    let s = Scratch::new("usage-claude");
    let usages = [
        json!({"input_tokens": 1200, "output_tokens": 340, "cache_creation_input_tokens": 90,
               "cache_read_input_tokens": 15000}),
        json!({"input_tokens": 30, "output_tokens": 12, "cache_read_input_tokens": 16100}),
    ];
    let mut session = Vec::new();
    let mut parent = Value::Null;
    for (i, usage) in usages.iter().enumerate() {
        let (u, a) = (format!("u{i}"), format!("a{i}"));
        session.push(
            json!({"type": "user", "uuid": u, "parentUuid": parent, "sessionId": "s1",
            "timestamp": format!("2026-11-30T15:4{i}:05Z"), "cwd": "/home/me/app",
            "message": {"role": "user", "content": format!("question {i}")}}),
        );
        session.push(
            json!({"type": "assistant", "uuid": a, "parentUuid": u, "sessionId": "s1",
            "timestamp": format!("2026-11-30T15:4{i}:09Z"),
            "message": {"id": format!("msg_{i}"), "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "text", "text": format!("answer {i}")}],
                        "usage": usage}}),
        );
        parent = json!(a);
    }
    let file = s.join("s1.jsonl");
    std::fs::write(&file, lines(&session)).unwrap();
    let rows = run_ok(
        "agy-encode",
        &["--format", "claude-code", file.to_str().unwrap()],
        b"",
    );
    let (sums, models, count) = row_sums(&rows);
    let sum = |key: &str| {
        usages
            .iter()
            .map(|u| u[key].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    assert_eq!(count, 2);
    assert_eq!(
        sums,
        [
            sum("input_tokens"),
            sum("output_tokens"),
            sum("cache_creation_input_tokens"),
            sum("cache_read_input_tokens"),
        ]
    );
    assert_eq!(models, ["claude-sonnet-4-5", "claude-sonnet-4-5"]);
    // agy-decode still names the model and shows each turn's usage.
    let messages = json_lines(&run_ok("agy-decode", &[], &rows));
    let shown: u64 = messages
        .iter()
        .filter_map(|m| m["usage"]["output_tokens"].as_u64())
        .sum();
    assert_eq!(shown, sum("output_tokens"));
}

#[test]
fn a_codex_session_keeps_its_usage() {
    // Codex counts cached input inside input_tokens; agy's input excludes
    // cache reads.
    let s = Scratch::new("usage-codex");
    let line = |kind: &str, payload: Value| json!({"timestamp": "2026-08-10T09:00:00.000Z", "type": kind, "payload": payload});
    let counts = [
        json!({"input_tokens": 5000, "cached_input_tokens": 4096, "output_tokens": 210}),
        json!({"input_tokens": 5400, "cached_input_tokens": 5000, "output_tokens": 35}),
    ];
    let mut session = vec![
        line(
            "session_meta",
            json!({"id": "s2", "timestamp": "2026-08-10T09:00:00.000Z", "cwd": "/w",
                   "originator": "codex_exec", "cli_version": "0.171.0"}),
        ),
        line("turn_context", json!({"model": "gpt-5.6", "cwd": "/w"})),
    ];
    for (i, count) in counts.iter().enumerate() {
        session.push(line(
            "response_item",
            json!({"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": format!("question {i}")}]}),
        ));
        session.push(line(
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": format!("answer {i}")}]}),
        ));
        session.push(line(
            "event_msg",
            json!({"type": "token_count", "info": {"last_token_usage": count}}),
        ));
    }
    let file = s.join("rollout.jsonl");
    std::fs::write(&file, lines(&session)).unwrap();
    let rows = run_ok(
        "agy-encode",
        &["--format", "codex", file.to_str().unwrap()],
        b"",
    );
    let (sums, models, count) = row_sums(&rows);
    let sum = |key: &str| counts.iter().map(|c| c[key].as_u64().unwrap()).sum::<u64>();
    assert_eq!(count, 2);
    assert_eq!(
        sums,
        [
            sum("input_tokens") - sum("cached_input_tokens"),
            sum("output_tokens"),
            0,
            sum("cached_input_tokens"),
        ]
    );
    assert_eq!(models, ["gpt-5.6", "gpt-5.6"]);
}

#[test]
fn a_turn_that_says_nothing_of_its_usage_has_no_row() {
    let stream = concat!(
        r#"{"conversation":"c","kind":"message","role":"user","content":[{"type":"text","text":"hi"}]}"#,
        "\n",
        r#"{"conversation":"c","kind":"message","role":"assistant","model":"gemini-pro-default","content":[{"type":"text","text":"hello"}]}"#,
        "\n"
    );
    let rows = run_ok("agy-encode", &[], stream.as_bytes());
    assert_eq!(row_sums(&rows).2, 0);
}

#[test]
fn a_gemini_cli_session_keeps_its_usage() {
    // Gemini CLI records Gemini's counts: `input` holds the cached part
    // and `output` leaves out the `thoughts`; agy's input leaves out the
    // cache reads and its output holds the thinking.
    let s = Scratch::new("usage-gemini");
    let tokens = [
        json!({"input": 9000, "output": 150, "cached": 6000, "thoughts": 420, "tool": 0, "total": 9570}),
        json!({"input": 9800, "output": 40, "cached": 9000, "thoughts": 0, "tool": 0, "total": 9840}),
    ];
    let mut session = vec![json!({"sessionId": "9d3f5a6e-1c2b-4e8f-9a7d-0b1c2d3e4f51",
        "projectHash": "ab", "startTime": "2026-11-30T10:00:00.000Z",
        "lastUpdated": "2026-11-30T10:05:00.000Z", "kind": "main"})];
    for (i, t) in tokens.iter().enumerate() {
        session.push(
            json!({"id": format!("u{i}"), "timestamp": "2026-11-30T10:00:01.000Z",
            "type": "user", "content": [{"text": format!("question {i}")}]}),
        );
        session.push(
            json!({"id": format!("g{i}"), "timestamp": "2026-11-30T10:00:02.000Z",
            "type": "gemini", "content": format!("answer {i}"), "model": "gemini-2.5-flash",
            "tokens": t}),
        );
    }
    let dir = s.join("tmp/w/chats");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(s.join("tmp/w/.project_root"), "/w\n").unwrap();
    let file = dir.join("session-2026-11-30T10-00-9d3f5a6e.jsonl");
    std::fs::write(&file, lines(&session)).unwrap();
    let rows = run_ok(
        "agy-encode",
        &["--format", "gemini-cli", file.to_str().unwrap()],
        b"",
    );
    let (sums, models, count) = row_sums(&rows);
    let sum = |key: &str| tokens.iter().map(|t| t[key].as_u64().unwrap()).sum::<u64>();
    assert_eq!(count, 2);
    assert_eq!(
        sums,
        [
            sum("input") - sum("cached"),
            sum("output") + sum("thoughts"),
            0,
            sum("cached"),
        ]
    );
    assert_eq!(models, ["gemini-2.5-flash", "gemini-2.5-flash"]);
}
