//! What a conversation holds ([`Holds`], `support::holds`), read from
//! each of the shapes the tests see it in (agy's message stream with
//! Gemini CLI's tool names, a Gemini CLI session file, a Gemini API
//! request), and the checks of a resumed session's request.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{json, Value};

use super::{REPAIR_TEXTS, TOOLS};
use crate::support::holds::{assert_kept, holds_of_stream_as, map_call, result_text, Holds};
use crate::support::store::json_lines;

/// What each conversation of a plain message stream holds, its calls
/// named as in Gemini CLI.
pub fn holds_of_stream(stream: &[Value], thinking_as_text: bool) -> BTreeMap<String, Holds> {
    holds_of_stream_as(stream, thinking_as_text, |name, input| {
        map_call(TOOLS, name, input, true)
    })
}

/// A user text as the model got it: without the zero-width space
/// agy-decode puts before a text Gemini CLI would otherwise skip.
pub fn unshielded(text: &str) -> String {
    match text.strip_prefix('\u{200B}') {
        Some(rest) if rest.starts_with(['/', '?', '<']) => rest.to_string(),
        _ => text.to_string(),
    }
}

/// What Gemini API contents hold, checked for the CLI's repairs on the
/// way: no sentinel text or result, every call answered exactly once.
pub fn holds_of_request(name: &str, contents: &[Value]) -> Holds {
    let mut holds = Holds::default();
    let mut answers: BTreeMap<String, usize> = BTreeMap::new();
    let mut calls = Vec::new();
    for content in contents {
        for part in content["parts"].as_array().unwrap() {
            if let Some(text) = part["text"].as_str() {
                for repair in REPAIR_TEXTS {
                    assert!(
                        !text.contains(repair),
                        "{name}: Gemini CLI repaired the session: {text:?}"
                    );
                }
                if part["thought"] != true {
                    holds.texts.insert(unshielded(text));
                }
            }
            if let Some(call) = part.get("functionCall") {
                let id = call["id"].as_str().unwrap().to_string();
                calls.push(id.clone());
                holds.calls.insert((
                    id,
                    call["name"].as_str().unwrap().to_string(),
                    call["args"].to_string(),
                ));
            }
            if let Some(response) = part.get("functionResponse") {
                let id = response["id"].as_str().unwrap().to_string();
                *answers.entry(id.clone()).or_default() += 1;
                let body = &response["response"];
                let text = match (body["output"].as_str(), body["error"].as_str()) {
                    (Some(output), _) => output.to_string(),
                    (None, Some(error)) => error.to_string(),
                    _ => body.to_string(),
                };
                for repair in REPAIR_TEXTS {
                    assert!(
                        !text.contains(repair),
                        "{name}: a placeholder result: {response}"
                    );
                }
                holds.results.insert((id, text));
            }
        }
    }
    for id in &calls {
        assert_eq!(
            answers.get(id),
            Some(&1),
            "{name}: call {id} answered {:?} times",
            answers.get(id)
        );
    }
    assert_eq!(
        answers.len(),
        calls.len(),
        "{name}: results without a call: {answers:?} {calls:?}"
    );
    holds
}

/// The thought signatures of the calls in a session file's content parts.
pub fn signatures_of_session(path: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    for line in json_lines(&std::fs::read(path).unwrap()) {
        for part in line["content"].as_array().into_iter().flatten() {
            if let (Some(id), Some(signature)) = (
                part["functionCall"]["id"].as_str(),
                part["thoughtSignature"].as_str(),
            ) {
                found.insert(id.to_string(), signature.to_string());
            }
        }
    }
    found
}

/// Checks a resumed session's request: everything `want` holds, in
/// order of the conversation (each text, call and result once, results
/// after their calls), each signature of the file carried, and the resume
/// prompt last.
pub fn check_resumed(
    name: &str,
    contents: &[Value],
    want: &Holds,
    signatures: &BTreeMap<String, String>,
) {
    let got = holds_of_request(name, contents);
    assert_kept(want, &got, name, "Gemini CLI's request");
    for content in contents {
        for part in content["parts"].as_array().unwrap() {
            if let Some(id) = part["functionCall"]["id"].as_str() {
                if let Some(signature) = signatures.get(id) {
                    assert_eq!(
                        part["thoughtSignature"].as_str(),
                        Some(signature.as_str()),
                        "{name}: {id}"
                    );
                }
            }
        }
    }
    // Order: each result comes in the content right after its call's.
    for (i, content) in contents.iter().enumerate() {
        for part in content["parts"].as_array().unwrap() {
            if let Some(id) = part["functionResponse"]["id"].as_str() {
                let before = &contents[i.saturating_sub(1)];
                assert!(
                    before["role"] == "model"
                        && before["parts"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|p| p["functionCall"]["id"] == id),
                    "{name}: the result of {id} does not follow its call"
                );
            }
        }
    }
    let last = contents.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(
        last["parts"].as_array().unwrap().last().unwrap()["text"],
        "Resume check.",
        "{name}: the resume prompt is the last part"
    );
}

pub fn holds_of_session(path: &Path) -> Holds {
    let mut records = Vec::new();
    for line in json_lines(&std::fs::read(path).unwrap()) {
        if line.get("id").is_some() {
            records.push(line);
        } else if let Some(messages) = line["$set"]["messages"].as_array() {
            records.extend(messages.iter().cloned());
        }
    }
    let mut holds = Holds::default();
    for record in records {
        let parts = match &record["content"] {
            Value::String(s) => vec![json!({"text": s})],
            Value::Array(parts) => parts.clone(),
            _ => Vec::new(),
        };
        for part in &parts {
            if let Some(text) = part["text"].as_str() {
                if !text.trim().is_empty() && !text.starts_with("<session_context>") {
                    holds.texts.insert(text.to_string());
                }
            }
            if let Some(call) = part.get("functionCall") {
                holds.calls.insert((
                    call["id"].as_str().unwrap().to_string(),
                    call["name"].as_str().unwrap().to_string(),
                    call["args"].to_string(),
                ));
            }
        }
        for call in record["toolCalls"].as_array().into_iter().flatten() {
            let id = call["id"].as_str().unwrap().to_string();
            holds.calls.insert((
                id.clone(),
                call["name"].as_str().unwrap().to_string(),
                call["args"].to_string(),
            ));
            for part in call["result"].as_array().into_iter().flatten() {
                let output = part["functionResponse"]["response"]["output"]
                    .as_str()
                    .unwrap();
                holds.results.insert((id.clone(), output.to_string()));
            }
        }
    }
    holds
}

/// The call ids the model is sent for those the CLI writes: the CLI keeps
/// `<name>__<id>` in its file and sends `<id>`.
pub fn sent_ids(holds: &Holds) -> Holds {
    let strip = |id: &str, name: &str| {
        id.strip_prefix(&format!("{name}__"))
            .unwrap_or(id)
            .to_string()
    };
    let names: BTreeMap<String, String> = holds
        .calls
        .iter()
        .map(|(id, name, _)| (id.clone(), name.clone()))
        .collect();
    Holds {
        texts: holds.texts.clone(),
        calls: holds
            .calls
            .iter()
            .map(|(id, name, args)| (strip(id, name), name.clone(), args.clone()))
            .collect(),
        results: holds
            .results
            .iter()
            .map(|(id, text)| {
                (
                    strip(id, names.get(id).map_or("", String::as_str)),
                    text.clone(),
                )
            })
            .collect(),
        assistant_turns: holds.assistant_turns,
    }
}

/// The order of a conversation: its user texts, its assistant texts and
/// its call ids, each in the order they come.
#[derive(Debug, Default, PartialEq)]
pub struct Order {
    pub user: Vec<String>,
    pub model: Vec<String>,
    pub calls: Vec<String>,
}

/// The order of conversation `id` in a plain message stream (texts as
/// `holds_of_stream` takes them).
pub fn order_of_stream(stream: &[Value], id: &str, thinking_as_text: bool) -> Order {
    let mut order = Order::default();
    let mut declared = BTreeSet::new();
    for record in stream
        .iter()
        .filter(|r| r["kind"] == "message" && r["conversation"] == id && r["role"] != "system")
    {
        let user = record["role"] == "user";
        let texts = if user {
            &mut order.user
        } else {
            &mut order.model
        };
        for block in record["content"].as_array().unwrap() {
            match block["type"].as_str().unwrap() {
                "text" if !block["text"].as_str().unwrap().trim().is_empty() => {
                    texts.push(block["text"].as_str().unwrap().to_string());
                }
                "thinking"
                    if thinking_as_text
                        && !block["thinking"].as_str().unwrap().trim().is_empty() =>
                {
                    texts.push(format!(
                        "<thinking>\n{}\n</thinking>",
                        block["thinking"].as_str().unwrap()
                    ));
                }
                "tool_use" => {
                    let call = block["id"].as_str().unwrap().to_string();
                    declared.insert(call.clone());
                    order.calls.push(call);
                }
                "tool_result" => {
                    let call = block["tool_use_id"].as_str().unwrap();
                    if !declared.remove(call) {
                        let error = if block["is_error"] == true {
                            " (error)"
                        } else {
                            ""
                        };
                        let text = result_text(&block["content"]);
                        texts.push(format!("Tool result for {call}{error}: {text}"));
                    }
                }
                _ => {}
            }
        }
    }
    order
}

/// The order of Gemini API contents.
pub fn order_of_request(contents: &[Value]) -> Order {
    let mut order = Order::default();
    for content in contents {
        for part in content["parts"].as_array().unwrap() {
            if let Some(text) = part["text"].as_str().filter(|_| part["thought"] != true) {
                if content["role"] == "user" {
                    order.user.push(unshielded(text));
                } else {
                    order.model.push(text.to_string());
                }
            }
            if let Some(id) = part["functionCall"]["id"].as_str() {
                order.calls.push(id.to_string());
            }
        }
    }
    order
}

/// True when `want` is `got` with some items left out.
fn is_subsequence(want: &[String], got: &[String]) -> bool {
    let mut got = got.iter();
    want.iter().all(|w| got.any(|g| g == w))
}

/// Checks that the request keeps the conversation's order: the user texts,
/// the assistant texts and the calls each come in the order of the stream
/// (the request may hold more texts: the CLI's context, the resume prompt).
pub fn check_order(name: &str, contents: &[Value], want: &Order) {
    let got = order_of_request(contents);
    assert!(
        is_subsequence(&want.user, &got.user),
        "{name}: user texts out of order:\n{:#?}\n{:#?}",
        want.user,
        got.user
    );
    assert!(
        is_subsequence(&want.model, &got.model),
        "{name}: assistant texts out of order:\n{:#?}\n{:#?}",
        want.model,
        got.model
    );
    assert_eq!(got.calls, want.calls, "{name}: calls out of order");
}
