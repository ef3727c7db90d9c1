//! A fake Anthropic Messages API on 127.0.0.1 for the real Claude Code CLI:
//! it logs every request body and answers with a valid SSE stream, which
//! is enough for `claude -p … --resume` to send the whole history it
//! rebuilt. It stops by itself: when dropped, and at the latest after
//! [`LIFETIME`], and each connection after [`IDLE`] without a request.
//!
//! What it answers is scripted by the last user text: `RUN: cmd` calls
//! Bash with `cmd`; `PAR: a ;; b` answers with thinking, text and two
//! parallel Bash calls; anything else (and every turn after a result) is
//! the text "pong".

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const LIFETIME: Duration = Duration::from_secs(900);
pub const IDLE: Duration = Duration::from_secs(60);

/// One logged request: Claude Code's session header and the body.
#[derive(Clone, Debug)]
pub struct Request {
    pub session: Option<String>,
    pub path: String,
    pub body: Value,
}

pub struct FakeApi {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

struct Shared {
    requests: Arc<Mutex<Vec<Request>>>,
    counter: AtomicU64,
}

impl FakeApi {
    pub fn start() -> FakeApi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            requests: requests.clone(),
            counter: AtomicU64::new(0),
        });
        let stopping = stop.clone();
        let accept = std::thread::spawn(move || {
            let deadline = Instant::now() + LIFETIME;
            while !stopping.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let shared = shared.clone();
                        std::thread::spawn(move || serve(stream, &shared));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FakeApi {
            port,
            requests,
            stop,
            accept: Some(accept),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The Messages API requests logged so far for `session`.
    pub fn requests_of(&self, session: &str) -> Vec<Request> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.session.as_deref() == Some(session))
            .cloned()
            .collect()
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Serves one keep-alive connection until it closes or idles.
fn serve(stream: TcpStream, shared: &Shared) {
    stream.set_read_timeout(Some(IDLE)).ok();
    let mut writer = stream.try_clone().expect("clone a TcpStream");
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut length = 0usize;
        let mut session = None;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                let value = value.trim();
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.parse().unwrap_or(0),
                    "x-claude-code-session-id" => session = Some(value.to_string()),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let (status, content_type, reply) = if method == "POST" && path.starts_with("/v1/messages")
        {
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let reply = answer(&body, shared);
            let streamed = body.get("stream").and_then(Value::as_bool) == Some(true);
            shared.requests.lock().unwrap().push(Request {
                session,
                path: path.clone(),
                body,
            });
            if streamed {
                ("200 OK", "text/event-stream", sse(&reply))
            } else {
                ("200 OK", "application/json", reply.to_string())
            }
        } else if method == "HEAD" {
            ("200 OK", "text/plain", String::new())
        } else {
            ("404 Not Found", "text/plain", String::new())
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n",
            reply.len()
        );
        if writer.write_all(head.as_bytes()).is_err()
            || (method != "HEAD" && writer.write_all(reply.as_bytes()).is_err())
        {
            return;
        }
    }
}

/// The assistant message the script gives for `request`.
fn answer(request: &Value, shared: &Shared) -> Value {
    let n = shared.counter.fetch_add(1, Ordering::Relaxed);
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
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}
