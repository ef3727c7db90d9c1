//! A fake Anthropic Messages API on 127.0.0.1 for the real Claude Code CLI:
//! it logs every request body and answers with a valid SSE stream, which
//! is enough for `claude -p … --resume` to send the whole history it
//! rebuilt. The HTTP side is `support::fake_http`, which stops by itself.
//!
//! What it answers is scripted by the last user text: `RUN: cmd` calls
//! Bash with `cmd`; `PAR: a ;; b` answers with thinking, text and two
//! parallel Bash calls; anything else (and every turn after a result) is
//! the text "pong".

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use crate::support::fake_http::{self, FakeHttp, Log, Logged, Reply};

pub struct FakeApi {
    http: FakeHttp,
    log: Log,
}

impl FakeApi {
    pub fn start() -> FakeApi {
        let log = Log::default();
        let logged = log.clone();
        let counter = AtomicU64::new(0);
        let http = FakeHttp::start(move |request| {
            if request.method == "HEAD" {
                return Reply::new("200 OK", "text/plain", "");
            }
            if request.method != "POST" || !request.path.starts_with("/v1/messages") {
                return Reply::not_found();
            }
            let body = request.json();
            let reply = answer(&body, counter.fetch_add(1, Ordering::Relaxed));
            let streamed = body.get("stream").and_then(Value::as_bool) == Some(true);
            logged.push(Logged {
                session: request
                    .header("x-claude-code-session-id")
                    .map(str::to_string),
                path: request.path.clone(),
                body,
            });
            if streamed {
                Reply::new("200 OK", "text/event-stream", sse(&reply))
            } else {
                Reply::new("200 OK", "application/json", reply.to_string())
            }
        });
        FakeApi { http, log }
    }

    pub fn base_url(&self) -> String {
        self.http.base_url()
    }

    /// The Messages API requests logged so far for `session`.
    pub fn requests_of(&self, session: &str) -> Vec<Logged> {
        self.log.of_session(session)
    }
}

/// The assistant message the script gives for `request`.
fn answer(request: &Value, n: u64) -> Value {
    let last_user = request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|m| m["role"] == "user");
    let blocks: Vec<Value> = match last_user.map(|m| &m["content"]) {
        Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => Vec::new(),
    };
    let answered = blocks.iter().any(|b| b["type"] == "tool_result");
    let text: String = blocks
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let bash = |id: String, command: &str| {
        json!({"type": "tool_use", "id": id, "name": "Bash",
               "input": {"command": command.trim(), "description": "scripted"}})
    };
    let (content, stop) = match (answered, text.split_once("RUN:"), text.split_once("PAR:")) {
        (false, Some((_, command)), _) => {
            (vec![bash(format!("toolu_fake_{n}"), command)], "tool_use")
        }
        (false, _, Some((_, commands))) => {
            let (a, b) = commands.split_once(";;").unwrap_or((commands, "true"));
            (
                vec![
                    json!({"type": "thinking", "thinking": "Both at once.", "signature": "c2lnbmF0dXJl"}),
                    json!({"type": "text", "text": "Running both."}),
                    bash(format!("toolu_fake_{n}a"), a),
                    bash(format!("toolu_fake_{n}b"), b),
                ],
                "tool_use",
            )
        }
        _ => (vec![json!({"type": "text", "text": "pong"})], "end_turn"),
    };
    json!({"id": format!("msg_fake_{n}"), "type": "message", "role": "assistant",
           "model": request["model"], "content": content, "stop_reason": stop,
           "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}})
}

/// `message` as the Messages API streams it.
fn sse(message: &Value) -> String {
    let mut events = Vec::new();
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    events.push(json!({"type": "message_start", "message": start}));
    for (index, block) in message["content"].as_array().unwrap().iter().enumerate() {
        let (empty, delta) = match block["type"].as_str().unwrap() {
            "text" => (
                json!({"type": "text", "text": ""}),
                vec![json!({"type": "text_delta", "text": block["text"]})],
            ),
            "thinking" => (
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": block["thinking"]}),
                    json!({"type": "signature_delta", "signature": block["signature"]}),
                ],
            ),
            _ => (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                vec![
                    json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
                ],
            ),
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": empty}));
        for delta in delta {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta",
                       "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
                       "usage": {"output_tokens": 1}}));
    events.push(json!({"type": "message_stop"}));
    fake_http::sse(&events)
}
