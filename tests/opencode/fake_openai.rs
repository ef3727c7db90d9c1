//! A fake OpenAI-compatible Chat Completions API on 127.0.0.1 for the real
//! OpenCode (its bundled `@ai-sdk/openai-compatible` provider, pointed here
//! by `options.baseURL`), on `support::fake_http`: it logs every request
//! with the session OpenCode names in its `x-session-id` header, and
//! answers `POST …/chat/completions` with a stream of chunks, and every
//! other request (OpenCode's package installs, sent to [`REGISTRY`] here)
//! with 404.
//!
//! What it answers is scripted by the last message of the request: after a
//! tool result, and for anything but these, the text "pong"; `RUN: cmd`
//! calls OpenCode's `bash` tool with `cmd`; `THINK: …` answers with the
//! reasoning [`THOUGHT`] before "pong". OpenCode's title requests (a
//! request without tools) get the title [`TITLE`].

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use crate::support::fake_http::{FakeHttp, Log, Logged, Reply};

/// The reasoning of the scripted `THINK:` answer.
pub const THOUGHT: &str = "Thinking it over.";

/// The title every title request gets.
pub const TITLE: &str = "A scripted title";

/// The path of the npm registry OpenCode is given.
pub const REGISTRY: &str = "/npm-registry/";

pub struct FakeOpenAi {
    http: FakeHttp,
    log: Log,
}

impl FakeOpenAi {
    pub fn start() -> FakeOpenAi {
        let log = Log::default();
        let logged = log.clone();
        let counter = AtomicU64::new(0);
        let http = FakeHttp::start(move |request| {
            let body = request.json();
            logged.push(Logged {
                session: request.header("x-session-id").map(str::to_string),
                path: format!("{} {}", request.method, request.path),
                body: body.clone(),
            });
            if request.method != "POST" || !request.path.ends_with("/chat/completions") {
                return Reply::not_found();
            }
            let n = counter.fetch_add(1, Ordering::Relaxed);
            Reply::new("200 OK", "text/event-stream", sse(&answer(&body, n)))
        });
        FakeOpenAi { http, log }
    }

    /// What the provider's `baseURL` should be.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.http.base_url())
    }

    /// Where OpenCode's package installs are sent (`npm_config_registry`):
    /// here, where nothing is found.
    pub fn registry_url(&self) -> String {
        format!("{}{REGISTRY}", self.http.base_url())
    }

    /// Every request but the chat completions: `METHOD PATH`.
    pub fn others(&self) -> Vec<String> {
        self.log
            .since(0)
            .into_iter()
            .map(|r| r.path)
            .filter(|p| !p.starts_with("POST /v1/chat/completions"))
            .collect()
    }

    /// The model requests (those that offer tools, not the title
    /// requests) logged so far for `session`.
    pub fn requests_of(&self, session: &str) -> Vec<Logged> {
        self.log
            .of_session(session)
            .into_iter()
            .filter(|r| r.body["tools"].is_array())
            .collect()
    }
}

/// The deltas the script gives for `request`, as chunks of one completion.
fn answer(request: &Value, n: u64) -> Vec<Value> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chatcmpl-fake-{n}"), "object": "chat.completion.chunk",
               "created": 1_800_000_000, "model": "fake-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let usage = json!({"id": format!("chatcmpl-fake-{n}"), "object": "chat.completion.chunk",
                       "created": 1_800_000_000, "model": "fake-model", "choices": [],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}});
    let pong = |mut chunks: Vec<Value>| {
        chunks.push(chunk(
            json!({"role": "assistant", "content": "pong"}),
            Value::Null,
        ));
        chunks.push(chunk(json!({}), "stop".into()));
        chunks.push(usage.clone());
        chunks
    };
    if !request["tools"].is_array() {
        return vec![
            chunk(json!({"role": "assistant", "content": TITLE}), Value::Null),
            chunk(json!({}), "stop".into()),
            usage,
        ];
    }
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    if last["role"] != "user" {
        return pong(Vec::new());
    }
    let text = match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    if let Some((_, command)) = text.split_once("RUN:") {
        let arguments = json!({"command": command.trim(), "description": "scripted"});
        return vec![
            chunk(
                json!({"role": "assistant", "content": Value::Null, "tool_calls": [
                    {"index": 0, "id": format!("call_fake_{n}"), "type": "function",
                     "function": {"name": "bash", "arguments": arguments.to_string()}}]}),
                Value::Null,
            ),
            chunk(json!({}), "tool_calls".into()),
            usage,
        ];
    }
    if text.contains("THINK:") {
        return pong(vec![chunk(
            json!({"role": "assistant", "reasoning_content": THOUGHT}),
            Value::Null,
        )]);
    }
    pong(Vec::new())
}

/// `chunks` as the Chat Completions API streams them.
fn sse(chunks: &[Value]) -> String {
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}
