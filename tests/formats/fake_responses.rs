//! A fake OpenAI Responses API on 127.0.0.1 for the real Codex CLI: it
//! logs every request body (with Codex's `session-id` header) and answers
//! with a valid SSE stream, which is enough for `codex exec resume` to send
//! the whole history it rebuilt. The HTTP side is `support::fake_http`.
//!
//! Only POSTs are answered: Codex's built-in `openai` provider would try
//! a WebSocket first (a GET, refused, then five retries before it falls
//! back), so the tests set up a provider without WebSockets.
//!
//! What it answers is scripted by the last user text, unless a call was
//! answered since: `RUN: cmd` calls `exec_command` with `cmd`; `THINK:`
//! answers with a reasoning item (summary "Thinking it over.", encrypted
//! content only the real API could read) and the text "pong"; anything else
//! (and every turn after an output) is the text "pong".

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use crate::support::fake_http::{self, FakeHttp, Log, Logged, Reply};

/// The summary of the scripted reasoning item.
pub const THOUGHT: &str = "Thinking it over.";

pub struct FakeResponses {
    http: FakeHttp,
    log: Log,
}

impl FakeResponses {
    pub fn start() -> FakeResponses {
        let log = Log::default();
        let logged = log.clone();
        let counter = AtomicU64::new(0);
        let http = FakeHttp::start(move |request| {
            if request.method != "POST" || !request.path.ends_with("/responses") {
                return Reply::not_found();
            }
            let body = request.json();
            let n = counter.fetch_add(1, Ordering::Relaxed);
            let items = answer(&body, n);
            logged.push(Logged {
                session: request.header("session-id").map(str::to_string),
                path: request.path.clone(),
                body,
            });
            Reply::new("200 OK", "text/event-stream", sse(&items, n))
        });
        FakeResponses { http, log }
    }

    /// What the provider's `base_url` should be.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.http.base_url())
    }

    /// The requests logged so far for `session`.
    pub fn requests_of(&self, session: &str) -> Vec<Logged> {
        self.log.of_session(session)
    }
}

/// The output items the script gives for `request`.
fn answer(request: &Value, n: u64) -> Vec<Value> {
    let input = request["input"].as_array().cloned().unwrap_or_default();
    let last_user = input
        .iter()
        .rposition(|i| i["type"] == "message" && i["role"] == "user");
    let answered = last_user.is_some_and(|at| {
        input[at..]
            .iter()
            .any(|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")))
    });
    let text: String = last_user
        .map(|at| {
            input[at]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    let pong = json!({"type": "message", "id": format!("msg_fake_{n}"), "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": "pong", "annotations": []}]});
    if answered {
        return vec![pong];
    }
    if let Some((_, command)) = text.split_once("RUN:") {
        let arguments = json!({"cmd": command.trim()}).to_string();
        return vec![
            json!({"type": "function_call", "id": format!("fc_fake_{n}"),
                           "call_id": format!("call_fake_{n}"), "name": "exec_command",
                           "arguments": arguments, "status": "completed"}),
        ];
    }
    if text.contains("THINK:") {
        return vec![
            json!({"type": "reasoning", "id": format!("rs_fake_{n}"),
                   "summary": [{"type": "summary_text", "text": THOUGHT}],
                   "encrypted_content": "ZmFrZSByZWFzb25pbmc="}),
            pong,
        ];
    }
    vec![pong]
}

/// `items` as the Responses API streams one response.
fn sse(items: &[Value], n: u64) -> String {
    let id = format!("resp_fake_{n}");
    let mut events = vec![json!({"type": "response.created", "response": {"id": id}})];
    for (index, item) in items.iter().enumerate() {
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": item}),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    events.push(
        json!({"type": "response.completed", "response": {"id": id, "usage": {
        "input_tokens": 3, "input_tokens_details": {"cached_tokens": 1},
        "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 5}}}),
    );
    fake_http::sse(&events)
}
