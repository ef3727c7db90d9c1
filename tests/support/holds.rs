//! What a conversation holds (its texts, its calls with their inputs, the
//! text of each result of a declared call), read from agy's plain message
//! stream, and what of it another reading lost: the yardstick of the tests
//! that convert conversations for the real clients (tests/formats.rs,
//! tests/formats/codex.rs, tests/gemini_cli.rs). Each of them reads its
//! client's own shapes (a request, a session file) into the same
//! [`Holds`]; and builds the odd conversation as a stream here
//! ([`message_stream`]).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

/// What a conversation holds: its texts, its calls (id, name, input as
/// JSON) and the text of each result of a call.
#[derive(Debug, Default)]
pub struct Holds {
    pub texts: BTreeSet<String>,
    pub calls: BTreeSet<(String, String, String)>,
    pub results: BTreeSet<(String, String)>,
    /// The assistant turns, where a reading counts them (a request).
    pub assistant_turns: usize,
}

/// A tool result's content as text: a string as it is, text blocks joined
/// with nothing between (as the converters join them), anything else as
/// JSON.
pub fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(blocks) if blocks.iter().all(|b| b["type"] == "text") => blocks
            .iter()
            .map(|b| b["text"].as_str().unwrap())
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

/// A client's tool that agy's message stream names otherwise: (the
/// stream's common name, the client's name, [(common key, client's key)]).
/// Each test writes its client's table out again, so that a mistake in the
/// library's cannot hide in the test.
pub type ToolRow = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// A call of the stream's common names under the client's name and keys
/// by `table` (`to_client`), or back; the input as JSON. A tool the table
/// does not name keeps its name and input.
pub fn map_call(table: &[ToolRow], name: &str, input: &Value, to_client: bool) -> (String, String) {
    for &(common, client, keys) in table {
        let (from, to) = if to_client {
            (common, client)
        } else {
            (client, common)
        };
        if name != from {
            continue;
        }
        let Some(args) = input.as_object() else { break };
        let renamed: serde_json::Map<String, Value> = args
            .iter()
            .map(|(k, v)| {
                let key = keys
                    .iter()
                    .find_map(|&(c, n)| {
                        let (f, t) = if to_client { (c, n) } else { (n, c) };
                        (f == k).then_some(t)
                    })
                    .unwrap_or(k);
                (key.to_string(), v.clone())
            })
            .collect();
        return (to.to_string(), Value::Object(renamed).to_string());
    }
    (name.to_string(), input.to_string())
}

/// What each conversation of a plain message stream holds.
pub fn holds_of_stream(stream: &[Value], thinking_as_text: bool) -> BTreeMap<String, Holds> {
    holds_of_stream_as(stream, thinking_as_text, |name, input| {
        (name.to_string(), input.to_string())
    })
}

/// [`holds_of_stream`], each call's name and input (as JSON) as `call`
/// gives them for the stream's.
pub fn holds_of_stream_as(
    stream: &[Value],
    thinking_as_text: bool,
    call: impl Fn(&str, &Value) -> (String, String),
) -> BTreeMap<String, Holds> {
    let mut all: BTreeMap<String, Holds> = BTreeMap::new();
    let mut declared = BTreeSet::new();
    for record in stream.iter().filter(|r| r["kind"] == "message") {
        let holds = all
            .entry(record["conversation"].as_str().unwrap().to_string())
            .or_default();
        if record["role"] == "system" {
            continue;
        }
        for block in record["content"].as_array().unwrap() {
            match block["type"].as_str().unwrap() {
                "text" if !block["text"].as_str().unwrap().trim().is_empty() => {
                    holds
                        .texts
                        .insert(block["text"].as_str().unwrap().to_string());
                }
                "thinking" if thinking_as_text => {
                    let thinking = block["thinking"].as_str().unwrap();
                    if !thinking.trim().is_empty() {
                        holds
                            .texts
                            .insert(format!("<thinking>\n{thinking}\n</thinking>"));
                    }
                }
                "tool_use" => {
                    let id = block["id"].as_str().unwrap().to_string();
                    declared.insert(id.clone());
                    let (name, input) = call(block["name"].as_str().unwrap(), &block["input"]);
                    holds.calls.insert((id, name, input));
                }
                "tool_result" => {
                    let id = block["tool_use_id"].as_str().unwrap().to_string();
                    let text = result_text(&block["content"]);
                    if declared.remove(&id) {
                        if !text.trim().is_empty() {
                            holds.results.insert((id, text));
                        }
                    } else {
                        let error = if block["is_error"] == true {
                            " (error)"
                        } else {
                            ""
                        };
                        holds
                            .texts
                            .insert(format!("Tool result for {id}{error}: {text}"));
                    }
                }
                _ => {}
            }
        }
    }
    all
}

/// Says what of `want` is not in `got`.
pub fn missing(want: &Holds, got: &Holds, what: &str) -> Vec<String> {
    let cut = |s: &str| s.chars().take(100).collect::<String>();
    let mut missing: Vec<String> = Vec::new();
    missing.extend(
        want.texts
            .difference(&got.texts)
            .map(|t| format!("{what}: text {:?}", cut(t))),
    );
    missing.extend(
        want.calls
            .difference(&got.calls)
            .map(|c| format!("{what}: call {c:?}")),
    );
    missing.extend(
        want.results
            .difference(&got.results)
            .map(|(id, text)| format!("{what}: result of {id}: {:?}", cut(text))),
    );
    missing
}

/// Fails unless `got` holds everything `want` does (of conversation
/// `what`), saying what `by` lost.
pub fn assert_kept(want: &Holds, got: &Holds, what: &str, by: &str) {
    let gaps = missing(want, got, what);
    assert!(gaps.is_empty(), "{by} lost: {gaps:#?}");
}

/// Checks a client's session `id` that went into agy and came back out
/// (`got`, read from agy-decode's stream) against what the session held
/// (`want`): nothing lost, and no text more.
pub fn assert_came_back(want: &Holds, got: &Holds, id: &str) {
    assert_kept(want, got, id, "agy");
    assert_eq!(
        got.texts.len(),
        want.texts.len(),
        "{id}: {:#?} vs {:#?}",
        got.texts,
        want.texts
    );
}

/// A message stream of conversation `id`: each of `messages` (a message
/// record's keys but `conversation` and `kind`) as a line, then `meta` (a
/// meta record, whole).
pub fn message_stream(id: &str, messages: impl IntoIterator<Item = Value>, meta: &Value) -> String {
    let mut stream = String::new();
    for record in messages {
        let mut line = json!({"conversation": id, "kind": "message"});
        line.as_object_mut()
            .unwrap()
            .extend(record.as_object().unwrap().clone());
        stream.push_str(&format!("{line}\n"));
    }
    stream.push_str(&format!("{meta}\n"));
    stream
}
