//! Structure-aware: message streams built from the fuzzer's bytes in the
//! shape agy-decode writes (user, assistant and system messages; text,
//! thinking, tool calls of the mapped tools and others, tool results,
//! images; usage, models, stop reasons, a meta record), then the two
//! invariants of the issue:
//!
//! - encode never writes rows decode cannot read: whatever agy-encode
//!   accepts, agy-decode reads back without an error or a warning;
//! - decode∘encode is a fixpoint: the messages decode gives, encoded and
//!   decoded again, come back the same (ignoring `idx`).
#![no_main]

use agy_fuzz::{decode_rows, encode_messages};
use agy_tools::stream::message::base64_encode;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

#[derive(Arbitrary, Debug)]
struct Stream {
    generic: bool,
    all: bool,
    messages: Vec<Msg>,
    meta: Option<Meta>,
}

#[derive(Arbitrary, Debug)]
struct Meta {
    title: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    model: Option<u8>,
}

#[derive(Arbitrary, Debug)]
enum Role {
    User,
    Assistant,
    System(u8),
}

#[derive(Arbitrary, Debug)]
struct Msg {
    role: Role,
    /// Seconds after the first message, and nanoseconds.
    time: Option<(u16, u32)>,
    model: Option<u8>,
    stop_reason: Option<u8>,
    usage: Option<(u32, u32, Option<u32>, Option<u32>)>,
    blocks: Vec<Block>,
}

#[derive(Arbitrary, Debug)]
enum Block {
    Text(String, Option<u8>),
    Thinking(String, Option<Vec<u8>>),
    ToolUse {
        call: u8,
        tool: u8,
        a: String,
        b: String,
        signature: Option<Vec<u8>>,
    },
    ToolResult {
        call: u8,
        text: String,
        error: bool,
    },
    Image {
        data: Vec<u8>,
        media: u8,
    },
}

const MODELS: &[&str] = &["gemini-3-flash-agent", "gemini-3.8-flash", "model-1020", ""];
const STOPS: &[&str] = &["end_turn", "tool_use", "max_tokens", "stop-42"];
const SYSTEM_STEPS: &[&str] = &[
    "CHECKPOINT",
    "SYSTEM_MESSAGE",
    "CONVERSATION_HISTORY",
    "TASK_BOUNDARY",
    "ERROR_MESSAGE",
];
const FIELDS: &[&str] = &["message", "event_type", "task_name", "summary"];
const MEDIA: &[&str] = &["image/png", "image/jpeg", "application/pdf"];

fn pick<'a>(list: &[&'a str], i: u8) -> &'a str {
    list[usize::from(i) % list.len()]
}

fn tool_input(tool: u8, a: &str, b: &str) -> (String, Value) {
    let (name, input) = match tool % 10 {
        0 => ("Bash", json!({"command": a})),
        1 => ("Read", json!({"file_path": a})),
        2 => ("Write", json!({"file_path": a, "content": b})),
        3 => (
            "Edit",
            json!({"file_path": a, "old_string": a, "new_string": b}),
        ),
        4 => ("list_dir", json!({"DirectoryPath": a})),
        5 => ("grep_search", json!({"Query": a, "SearchPath": b})),
        6 => ("mcp_github_search", json!({"q": {"nested": [a, b]}})),
        7 => (
            "call_mcp_tool",
            json!({"ServerName": a, "ToolName": b, "Arguments": {}}),
        ),
        8 => ("invoke_subagent", json!(a)),
        _ => return (format!("x_{a}"), json!({"arg": b})),
    };
    (name.to_string(), input)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn timestamp(seconds: u16, nanos: u32) -> String {
    let s = u32::from(seconds);
    let nanos = nanos % 1_000_000_000;
    let frac = if nanos == 0 {
        String::new()
    } else {
        format!(".{nanos:09}")
    };
    format!(
        "2026-08-10T{:02}:{:02}:{:02}{frac}Z",
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

const ID: &str = "fuzz-conversation";

fn stream_text(stream: &Stream) -> Vec<u8> {
    let mut out = Vec::new();
    for (idx, msg) in stream.messages.iter().enumerate() {
        let mut content = Vec::new();
        for block in &msg.blocks {
            content.push(match block {
                Block::Text(text, None) => json!({"type": "text", "text": text}),
                Block::Text(text, Some(f)) => json!({"type": "text", "text": text, "field": pick(FIELDS, *f)}),
                Block::Thinking(text, None) => json!({"type": "thinking", "thinking": text}),
                Block::Thinking(text, Some(sig)) => json!({"type": "thinking", "thinking": text, "signature": base64_encode(sig)}),
                Block::ToolUse { call, tool, a, b, signature } => {
                    let (name, input) = tool_input(*tool, a, b);
                    let mut v = json!({"type": "tool_use", "id": format!("call_{}", call % 8), "name": name, "input": input});
                    if let Some(sig) = signature {
                        v["signature"] = json!(hex(sig));
                    }
                    v
                }
                Block::ToolResult { call, text, error } => {
                    let mut v = json!({"type": "tool_result", "tool_use_id": format!("call_{}", call % 8), "content": text});
                    if *error {
                        v["is_error"] = json!(true);
                    }
                    v
                }
                Block::Image { data, media } => json!({"type": "image", "source": {"type": "base64", "media_type": pick(MEDIA, *media), "data": base64_encode(data)}}),
            });
        }
        let mut m = json!({"conversation": ID, "kind": "message"});
        match msg.role {
            Role::User => m["role"] = json!("user"),
            Role::Assistant => m["role"] = json!("assistant"),
            Role::System(s) => {
                m["role"] = json!("system");
                m["step_type"] = json!(pick(SYSTEM_STEPS, s));
            }
        }
        m["idx"] = json!(idx);
        if let Some((s, n)) = msg.time {
            m["timestamp"] = json!(timestamp(s, n));
        }
        if let Some(model) = msg.model {
            m["model"] = json!(pick(MODELS, model));
        }
        if let Some(stop) = msg.stop_reason {
            m["stop_reason"] = json!(pick(STOPS, stop));
        }
        if let Some((i, o, c, r)) = msg.usage {
            let mut u = json!({"input_tokens": i, "output_tokens": o});
            if let Some(c) = c {
                u["cache_creation_input_tokens"] = json!(c);
            }
            if let Some(r) = r {
                u["cache_read_input_tokens"] = json!(r);
            }
            m["usage"] = u;
        }
        m["content"] = Value::Array(content);
        serde_json::to_writer(&mut out, &m).unwrap();
        out.push(b'\n');
    }
    if let Some(meta) = &stream.meta {
        let mut m = json!({"conversation": ID, "kind": "meta", "id": ID});
        if let Some(t) = &meta.title {
            m["title"] = json!(t);
        }
        if let Some(c) = &meta.cwd {
            m["cwd"] = json!(c);
        }
        if let Some(g) = &meta.git_branch {
            m["git_branch"] = json!(g);
        }
        if let Some(model) = meta.model {
            m["model"] = json!(pick(MODELS, model));
        }
        serde_json::to_writer(&mut out, &m).unwrap();
        out.push(b'\n');
    }
    out
}

/// Each line of a message stream as JSON, without its `idx`.
fn without_idx(stream: &[u8]) -> Vec<Value> {
    stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut v: Value = serde_json::from_slice(l).expect("decode writes JSON");
            if let Some(o) = v.as_object_mut() {
                o.remove("idx");
            }
            v
        })
        .collect()
}

fuzz_target!(|stream: Stream| agy_fuzz::measure(|| run(stream)));

fn run(stream: Stream) {
    let messages = stream_text(&stream);
    // Input encode refuses is not this target's business (the encode
    // target covers refusals); what it accepts must hold the invariants.
    let Ok(rows) = encode_messages(&messages, stream.generic) else {
        return;
    };
    let show = || String::from_utf8_lossy(&messages).into_owned();
    let (first, warnings) = decode_rows(&rows, stream.all)
        .unwrap_or_else(|e| panic!("decode refuses what encode wrote: {e}\n{}", show()));
    assert!(
        warnings.is_empty(),
        "decode warns on what encode wrote: {warnings:?}\n{}",
        show()
    );
    let rows2 = encode_messages(&first, stream.generic).unwrap_or_else(|e| {
        panic!(
            "encode refuses what decode wrote: {e}\n{}",
            String::from_utf8_lossy(&first)
        )
    });
    let (second, warnings) = decode_rows(&rows2, stream.all).unwrap_or_else(|e| {
        panic!(
            "decode refuses what encode wrote: {e}\n{}",
            String::from_utf8_lossy(&first)
        )
    });
    assert!(
        warnings.is_empty(),
        "decode warns on what encode wrote: {warnings:?}"
    );
    assert_eq!(
        without_idx(&second),
        without_idx(&first),
        "decode∘encode is not a fixpoint for\n{}",
        String::from_utf8_lossy(&first)
    );
}
