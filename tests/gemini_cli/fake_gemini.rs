//! A fake Gemini API for the real Gemini CLI, on `support::fake_http`: it
//! logs every request and answers `:streamGenerateContent?alt=sse` and
//! `:generateContent` (which the CLI also calls, for titles and routing),
//! enough for `gemini -p … --resume` to send the whole history it rebuilt.
//!
//! What it answers is scripted by the last content of the request: after a
//! function response, and for anything but `RUN: cmd`, the text "pong";
//! `RUN: cmd` calls the CLI's shell tool with `cmd`, the call carrying the
//! thought signature [`SIGNATURE`]. A request that asks for JSON (the
//! CLI's model router does) gets an object with each required property of
//! its schema.

use serde_json::{json, Map, Value};

use crate::support::fake_http::{FakeHttp, Log, Logged, Received, Reply};

/// The thought signature of the scripted shell call (base64).
pub const SIGNATURE: &str = "c2NyaXB0ZWQtc2lnbmF0dXJl";

pub struct FakeGemini {
    http: FakeHttp,
    log: Log,
}

impl FakeGemini {
    pub fn start() -> FakeGemini {
        let log = Log::default();
        let logged = log.clone();
        let http = FakeHttp::start(move |received: &Received| {
            let body = received.json();
            logged.push(Logged {
                session: None,
                path: received.path.clone(),
                body: body.clone(),
            });
            if received.method != "POST" {
                return Reply::not_found();
            }
            let answer = answer(&body);
            if received.path.contains(":streamGenerateContent") {
                Reply::new(
                    "200 OK",
                    "text/event-stream",
                    format!("data: {answer}\r\n\r\n"),
                )
            } else if received.path.contains(":generateContent") {
                Reply::new("200 OK", "application/json", answer.to_string())
            } else {
                Reply::not_found()
            }
        });
        FakeGemini { http, log }
    }

    pub fn base_url(&self) -> String {
        self.http.base_url()
    }

    /// How many requests were logged so far.
    pub fn count(&self) -> usize {
        self.log.count()
    }

    /// The requests logged since the `from`-th.
    pub fn since(&self, from: usize) -> Vec<Logged> {
        self.log.since(from)
    }
}

/// The scripted answer to a request, as a `GenerateContentResponse`.
fn answer(request: &Value) -> Value {
    let config = &request["generationConfig"];
    let parts = if config["responseMimeType"] == "application/json" {
        let schema = if config["responseJsonSchema"].is_object() {
            &config["responseJsonSchema"]
        } else {
            &config["responseSchema"]
        };
        vec![json!({"text": example(schema).to_string()})]
    } else {
        let last = request["contents"]
            .as_array()
            .and_then(|c| c.last())
            .cloned()
            .unwrap_or_default();
        let parts = last["parts"].as_array().cloned().unwrap_or_default();
        let answered = parts.iter().any(|p| p.get("functionResponse").is_some());
        let text: String = parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(" ");
        match text.split_once("RUN:") {
            Some((_, command)) if !answered => vec![
                json!({"text": "Running it."}),
                json!({"functionCall": {"name": "run_shell_command",
                                        "args": {"command": command.trim(), "description": "scripted"}},
                       "thoughtSignature": SIGNATURE}),
            ],
            _ => vec![json!({"text": "pong"})],
        }
    };
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "gemini-fake"
    })
}

/// A value of JSON schema `schema` (Gemini's upper-case type names or
/// JSON Schema's): every required property, each the simplest of its type.
fn example(schema: &Value) -> Value {
    match schema["type"]
        .as_str()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("object") => {
            let mut out = Map::new();
            for name in schema["required"].as_array().into_iter().flatten() {
                let name = name.as_str().unwrap_or_default();
                out.insert(name.to_string(), example(&schema["properties"][name]));
            }
            Value::Object(out)
        }
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        _ => json!("scripted"),
    }
}
