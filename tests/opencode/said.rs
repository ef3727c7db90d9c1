//! What a conversation says, in order ([`Said`]: its texts, its calls, its
//! results, its images), read from each shape the OpenCode tests see it in:
//! agy's plain message stream, what `opencode export` prints, and the Chat
//! Completions request OpenCode sends; and the check of a resumed
//! session's request against the stream it was written from.
//!
//! Unlike `support::holds`, order is kept: OpenCode sends its history as it
//! stores it, so every text, call and result must come in the stream's
//! order.

use serde_json::Value;

use crate::support::holds::{map_call, result_text};
use crate::{REPAIR_TEXTS, TOOLS};

/// The turns package's texts, which a written session may hold though the
/// stream does not: the user turn before a conversation that opens with
/// the assistant, and the result of a call that had none.
pub const OPENING: &str = "(The conversation opens with an assistant turn.)";
pub const NO_RESULT: &str =
    "No result was recorded for this call: agy never ran it, or its result was lost.";

/// A conversation's content in order.
#[derive(Debug, Default, PartialEq)]
pub struct Said {
    /// Texts, thinking among them, user's and assistant's as they come.
    pub texts: Vec<String>,
    /// Calls: id, OpenCode's tool name, input as JSON.
    pub calls: Vec<(String, String, String)>,
    /// Results: call id and text.
    pub results: Vec<(String, String)>,
    /// Images sent inline.
    pub images: usize,
}

/// What conversation `id` of a plain message stream says, its calls under
/// OpenCode's names; thinking is text, wrapped as `--thinking text` wraps
/// it when `thinking_as_text`.
pub fn said_by_stream(stream: &[Value], id: &str, thinking_as_text: bool) -> Said {
    let mut said = Said::default();
    let mut declared = Vec::new();
    for record in stream
        .iter()
        .filter(|r| r["kind"] == "message" && r["conversation"] == id && r["role"] != "system")
    {
        for block in record["content"].as_array().unwrap() {
            let text = |key: &str| block[key].as_str().unwrap_or("").to_string();
            match block["type"].as_str().unwrap() {
                "text" if !text("text").trim().is_empty() => said.texts.push(text("text")),
                "thinking" if !text("thinking").trim().is_empty() => {
                    let thinking = text("thinking");
                    said.texts.push(if thinking_as_text {
                        format!("<thinking>\n{thinking}\n</thinking>")
                    } else {
                        thinking
                    });
                }
                "tool_use" => {
                    let (name, input) = map_call(TOOLS, &text("name"), &block["input"], true);
                    declared.push(text("id"));
                    said.calls.push((text("id"), name, input));
                }
                "tool_result" => {
                    let call = text("tool_use_id");
                    // A result of whitespace only is written without content.
                    let content = Some(result_text(&block["content"]))
                        .filter(|c| !c.trim().is_empty())
                        .unwrap_or_default();
                    match declared.iter().position(|d| *d == call) {
                        Some(at) => {
                            declared.remove(at);
                            said.results.push((call, content));
                        }
                        None => {
                            let error = if block["is_error"] == true {
                                " (error)"
                            } else {
                                ""
                            };
                            said.texts
                                .push(format!("Tool result for {call}{error}: {content}"));
                        }
                    }
                }
                "image" if block["source"]["type"] == "base64" => said.images += 1,
                _ => {}
            }
        }
    }
    said
}

/// What an export says as OpenCode sends it: texts it sends (reasoning
/// among them), its calls and their results.
pub fn said_by_export(doc: &Value) -> Said {
    let mut said = Said::default();
    for message in doc["messages"].as_array().unwrap() {
        for part in message["parts"].as_array().unwrap() {
            let text = part["text"].as_str().unwrap_or("");
            match part["type"].as_str().unwrap() {
                "text" if part["ignored"] != true && !text.trim().is_empty() => {
                    said.texts.push(text.to_string())
                }
                "reasoning" if !text.trim().is_empty() => said.texts.push(text.to_string()),
                "tool" => {
                    let state = &part["state"];
                    let id = part["callID"].as_str().unwrap().to_string();
                    said.calls.push((
                        id.clone(),
                        part["tool"].as_str().unwrap().to_string(),
                        state["input"].to_string(),
                    ));
                    let output = match state["status"].as_str() {
                        Some("completed") => &state["output"],
                        _ => &state["error"],
                    };
                    said.results
                        .push((id, output.as_str().unwrap_or("").to_string()));
                }
                _ => {}
            }
        }
    }
    said
}

/// What the messages of a Chat Completions request say, without the system
/// prompt and the last message (the prompt that continued the session,
/// which must be `prompt`).
pub fn said_by_request(name: &str, messages: &[Value], prompt: &str) -> Said {
    let (last, history) = messages.split_last().expect("an empty request");
    assert_eq!(last["role"], "user", "{name}: {last}");
    assert_eq!(
        last["content"].as_str(),
        Some(prompt),
        "{name}: the prompt is the last message"
    );
    let mut said = Said::default();
    for message in history {
        match message["role"].as_str().unwrap() {
            "system" => {}
            "tool" => said.results.push((
                message["tool_call_id"].as_str().unwrap().to_string(),
                message["content"].as_str().unwrap_or("").to_string(),
            )),
            _ => {
                match &message["content"] {
                    Value::String(text) if !text.is_empty() => said.texts.push(text.clone()),
                    Value::Array(parts) => {
                        for part in parts {
                            match part["type"].as_str() {
                                Some("text") => {
                                    said.texts.push(part["text"].as_str().unwrap().to_string())
                                }
                                Some("image_url") => said.images += 1,
                                other => panic!("{name}: a part of type {other:?}"),
                            }
                        }
                    }
                    _ => {}
                }
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    let arguments: Value =
                        serde_json::from_str(call["function"]["arguments"].as_str().unwrap())
                            .unwrap();
                    said.calls.push((
                        call["id"].as_str().unwrap().to_string(),
                        call["function"]["name"].as_str().unwrap().to_string(),
                        arguments.to_string(),
                    ));
                }
            }
        }
    }
    said
}

/// Checks what OpenCode sent (`sent`) against what the conversation said
/// (`want`): the same calls in the same order, each answered once by its
/// result (a call the conversation left without one by the turns' error
/// result), every text in order with nothing between them: each text sent
/// is some of the conversation's texts one after another (OpenCode sends
/// an assistant turn's reasoning and text as one), and none of OpenCode's
/// repairs.
pub fn check_sent(name: &str, sent: &Said, want: &Said) {
    assert_eq!(sent.calls, want.calls, "{name}: calls");
    let ids: Vec<&String> = sent.calls.iter().map(|(id, _, _)| id).collect();
    let answered: Vec<&String> = sent.results.iter().map(|(id, _)| id).collect();
    assert_eq!(
        answered, ids,
        "{name}: results are not one per call, in order"
    );
    let mut wanted = want.results.iter();
    for (id, text) in &sent.results {
        for repair in REPAIR_TEXTS {
            assert!(
                !text.contains(repair),
                "{name}: OpenCode repaired {id}: {text}"
            );
        }
        match wanted.clone().next() {
            Some((want_id, want_text)) if want_id == id => {
                assert_eq!(text, want_text, "{name}: the result of {id}");
                wanted.next();
            }
            _ => assert_eq!(text, NO_RESULT, "{name}: a result of {id} from nowhere"),
        }
    }
    assert_eq!(wanted.next(), None, "{name}: results lost");
    let mut texts = want.texts.iter().peekable();
    for text in &sent.texts {
        let mut rest = text.as_str();
        while !rest.is_empty() {
            if let Some(next) = texts.peek().filter(|t| rest.starts_with(t.as_str())) {
                rest = &rest[next.len()..];
                texts.next();
            } else if let Some(after) = rest.strip_prefix(OPENING) {
                rest = after;
            } else {
                let cut: String = rest.chars().take(300).collect();
                let next: Option<String> = texts.peek().map(|t| t.chars().take(300).collect());
                panic!("{name}: sent a text that is not the next of the conversation:\n{cut:?}\nnext: {next:?}");
            }
        }
    }
    let lost: Vec<&String> = texts.collect();
    assert!(lost.is_empty(), "{name}: texts lost: {lost:#?}");
    assert_eq!(sent.images, want.images, "{name}: images");
}
