//! `agy-encode --format gemini-cli`: a Gemini CLI session file as message
//! records for the ordinary encoder.
//!
//! A session file is a log, not a list (Gemini CLI 0.61.0, see the man
//! page). It is replayed as the CLI replays it when it resumes:
//! * the header (`sessionId`, `projectHash`, ...) and every `$set` patch
//!   are the session's metadata; `$set.messages` replaces every record;
//! * a record (a line with a string `id`) replaces the earlier record with
//!   the same id at that record's place, or is added at the end;
//! * `{"$rewindTo": id}` drops that record and everything after it (all
//!   of them when no record has that id).
//!
//! What is left is read as the CLI sends it to the model:
//! * user records that are empty or start with `/`, `?`,
//!   `<session_context>` or `<hook_context>` (its commands and its own
//!   context) are left out, as are `info` and `warning` records; an `error`
//!   record becomes an ERROR_MESSAGE system message;
//! * a `gemini` record's calls are its `functionCall` content parts, else
//!   its `toolCalls`, and the results in its `toolCalls` follow it as a
//!   user message. The CLI writes each result a second time as a user
//!   record; that copy is left out, so each result is read once;
//! * thoughts become thinking blocks; a `thoughtSignature` (base64) becomes
//!   the signature (hex) of its call, or, on a text part, of the thinking;
//! * calls of Gemini CLI's shell, read, write and edit tools get the common
//!   names (`gemini_cli::TOOLS`), which the encoder maps to agy's tools.
//!
//! The conversation id is the session id; the project directory is the one
//! the `.project_root` marker beside `chats/` names.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{Map, Value};

use super::gemini_cli::{is_skipped_text, rename_call, SHIELD};
use super::{Conversation, MetaInfo, Msg, Report};
use crate::error::{Error, Result};
use crate::stream::io::Lines;
use crate::stream::message::{self, Block, ImageSource, ResultContent, Role, ToolInput, Usage};

/// Labels of what reading leaves out.
pub mod dropped {
    pub const SKIPPED_USER: &str = "user records Gemini CLI does not send left out";
    pub const NOTICES: &str = "info and warning records left out";
    pub const OTHER_RECORDS: &str = "records of other types left out";
    pub const DUPLICATES: &str = "results written twice read once";
    pub const REPLACED: &str = "records replaced by a later one";
    pub const REWOUND: &str = "records dropped by a rewind";
    pub const PARTS: &str = "content parts of other kinds left out";
    pub const OTHER_LINES: &str = "lines of other kinds left out";
}

/// The session after replay: its metadata and its records in order.
#[derive(Default)]
struct Session {
    meta: Map<String, Value>,
    ids: Vec<String>,
    records: HashMap<String, Value>,
}

impl Session {
    fn put(&mut self, record: Value, report: &mut Report) {
        let id = record["id"]
            .as_str()
            .expect("a record has a string id")
            .to_string();
        if self.records.insert(id.clone(), record).is_some() {
            report.add(dropped::REPLACED, 1);
        } else {
            self.ids.push(id);
        }
    }

    fn rewind(&mut self, id: &str, report: &mut Report) {
        let from = self.ids.iter().position(|i| i == id).unwrap_or(0);
        for gone in self.ids.drain(from..) {
            self.records.remove(&gone);
            report.add(dropped::REWOUND, 1);
        }
    }

    /// One line of the file, replayed.
    fn line(&mut self, value: Value, report: &mut Report) {
        let Value::Object(map) = &value else {
            unreachable!("lines are checked to be objects")
        };
        if let Some(id) = map.get("$rewindTo").and_then(Value::as_str) {
            let id = id.to_string();
            self.rewind(&id, report);
        } else if map.get("id").is_some_and(Value::is_string) {
            self.put(value, report);
        } else if let Some(Value::Object(set)) = map.get("$set") {
            if let Some(Value::Array(messages)) = set.get("messages") {
                self.ids.clear();
                self.records.clear();
                for message in messages {
                    if message.get("id").is_some_and(Value::is_string) {
                        self.put(message.clone(), report);
                    }
                }
            }
            for (key, v) in set {
                self.meta.insert(key.clone(), v.clone());
            }
        } else if map.get("sessionId").is_some_and(Value::is_string)
            && map.get("projectHash").is_some_and(Value::is_string)
        {
            for (key, v) in map {
                if key == "messages" {
                    for message in v.as_array().into_iter().flatten() {
                        if message.get("id").is_some_and(Value::is_string) {
                            self.put(message.clone(), report);
                        }
                    }
                } else {
                    self.meta.insert(key.clone(), v.clone());
                }
            }
        } else {
            report.add(dropped::OTHER_LINES, 1);
        }
    }

    fn meta_str(&self, key: &str) -> Option<&str> {
        self.meta.get(key).and_then(Value::as_str)
    }
}

/// Reads one session from `lines`. A legacy session (one JSON object
/// spread over the file, as Gemini CLI wrote before JSONL) is read too.
pub fn read(lines: &mut Lines, total: &mut Report) -> Result<Conversation> {
    let name = lines.name().to_string();
    let mut report = Report::default();
    let mut session = Session::default();
    let mut whole = Vec::new();
    let mut first_error = None;
    while let Some(line) = lines.next_line()? {
        whole.extend_from_slice(line);
        whole.push(b'\n');
        if first_error.is_some() || line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(value @ Value::Object(_)) => session.line(value, &mut report),
            Ok(_) => {
                first_error = Some(Error::data(format!(
                    "{}: a session line is a JSON object",
                    lines.place()
                )))
            }
            Err(e) => {
                first_error = Some(Error::data(format!(
                    "{}: not a JSON line: {e}",
                    lines.place()
                )))
            }
        }
    }
    if let Some(err) = first_error {
        match serde_json::from_slice::<Value>(&whole) {
            Ok(legacy @ Value::Object(_))
                if legacy.get("messages").is_some_and(Value::is_array) =>
            {
                session = Session::default();
                report = Report::default();
                session.line(legacy, &mut report);
            }
            _ => return Err(err),
        }
    }
    let Some(id) = session.meta_str("sessionId").map(str::to_string) else {
        return Err(Error::data(format!(
            "{name}: not a Gemini CLI session: no header with a sessionId and a projectHash"
        )));
    };
    let cwd = project_root(Path::new(&name));
    let conv = conversation(&session, id, cwd, &mut report);
    total.merge(&report);
    Ok(conv)
}

/// The project directory of a session file at `chats/<file>`: what the
/// `.project_root` marker beside `chats/` says.
fn project_root(file: &Path) -> Option<String> {
    let marker = file.parent()?.parent()?.join(".project_root");
    let owner = std::fs::read_to_string(marker).ok()?;
    Some(owner.trim().to_string()).filter(|o| !o.is_empty())
}

/// The conversation the replayed session holds.
fn conversation(
    session: &Session,
    id: String,
    cwd: Option<String>,
    report: &mut Report,
) -> Conversation {
    let mut messages: Vec<Msg> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for record_id in &session.ids {
        let record = &session.records[record_id];
        let timestamp = record
            .get("timestamp")
            .and_then(Value::as_str)
            .map(str::to_string);
        match record.get("type").and_then(Value::as_str) {
            Some("user") => {
                if let Some(msg) = user_message(record, &mut answered, report) {
                    messages.push(Msg { timestamp, ..msg });
                }
            }
            Some("gemini") => {
                let (msg, results) = gemini_messages(record, &mut answered, report);
                if !msg.content.is_empty() {
                    messages.push(Msg {
                        timestamp: timestamp.clone(),
                        ..msg
                    });
                }
                if !results.is_empty() {
                    messages.push(Msg {
                        role: Role::User,
                        timestamp,
                        content: results,
                        ..Msg::default()
                    });
                }
            }
            Some("error") => {
                let text = content_text(record.get("content"));
                if !text.trim().is_empty() {
                    messages.push(Msg {
                        role: Role::System,
                        step_type: Some("ERROR_MESSAGE".to_string()),
                        timestamp,
                        content: vec![Block::Text {
                            text: Cow::Owned(text),
                            field: Some(Cow::Borrowed("full_error")),
                        }],
                        ..Msg::default()
                    });
                }
            }
            Some("info" | "warning") => report.add(dropped::NOTICES, 1),
            _ => report.add(dropped::OTHER_RECORDS, 1),
        }
    }
    let meta = MetaInfo {
        timestamp: session.meta_str("startTime").map(str::to_string),
        cwd,
        title: session
            .meta_str("summary")
            .filter(|t| !t.trim().is_empty())
            .map(str::to_string),
        ..MetaInfo::default()
    };
    Conversation { id, messages, meta }
}

/// A record's content as a list of parts.
fn parts(content: Option<&Value>) -> Vec<Value> {
    match content {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![serde_json::json!({"text": s})],
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| match p {
                Value::String(s) => serde_json::json!({"text": s}),
                other => other.clone(),
            })
            .collect(),
        Some(other) => vec![other.clone()],
    }
}

/// A record's content as Gemini CLI turns it into text to judge it.
fn content_text(content: Option<&Value>) -> String {
    parts(content)
        .iter()
        .map(|p| match p.get("text").and_then(Value::as_str) {
            Some(text) if p.get("thought").is_none() => text.to_string(),
            _ => "[part]".to_string(),
        })
        .collect()
}

fn user_message(
    record: &Value,
    answered: &mut HashSet<String>,
    report: &mut Report,
) -> Option<Msg> {
    let text = content_text(record.get("content"));
    if is_skipped_text(&text) {
        report.add(dropped::SKIPPED_USER, 1);
        return None;
    }
    let mut content = Vec::new();
    for (i, part) in parts(record.get("content")).into_iter().enumerate() {
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            // The shield gemini_cli writes before a text the CLI would skip.
            let text = match text.strip_prefix(SHIELD) {
                Some(rest) if i == 0 && is_skipped_text(rest) => rest,
                _ => text,
            };
            content.push(Block::text(Cow::Owned(text.to_string())));
        } else if let Some(response) = part.get("functionResponse") {
            let id = response.get("id").and_then(Value::as_str).unwrap_or("");
            if !answered.insert(id.to_string()) {
                report.add(dropped::DUPLICATES, 1);
                continue;
            }
            content.push(result_block(id, response, false));
        } else if let Some(block) = inline_data(&part) {
            content.push(block);
        } else {
            report.add(dropped::PARTS, 1);
        }
    }
    (!content.is_empty()).then(|| Msg {
        role: Role::User,
        content,
        ..Msg::default()
    })
}

/// An `inlineData` part as an image or document block.
fn inline_data(part: &Value) -> Option<Block<'static>> {
    let data = part.get("inlineData")?;
    let mime = data.get("mimeType").and_then(Value::as_str).unwrap_or("");
    let source = ImageSource {
        source_type: Cow::Borrowed("base64"),
        media_type: (!mime.is_empty()).then(|| Cow::Owned(mime.to_string())),
        data: Some(Cow::Owned(
            data.get("data").and_then(Value::as_str)?.to_string(),
        )),
        url: None,
    };
    Some(if mime.starts_with("image/") {
        Block::Image { source }
    } else {
        Block::Document { source }
    })
}

/// A `functionResponse` as a result block: `{output}` is its text,
/// `{error}` an error's text, anything else structured.
fn result_block(id: &str, response: &Value, failed: bool) -> Block<'static> {
    let body = response.get("response").cloned().unwrap_or_default();
    let only = |key: &str| {
        body.as_object()
            .filter(|m| m.len() == 1)
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (content, is_error) = if let Some(output) = only("output") {
        (ResultContent::Text(Cow::Owned(output)), failed)
    } else if let Some(error) = only("error") {
        (ResultContent::Text(Cow::Owned(error)), true)
    } else {
        (ResultContent::from_value(body), failed)
    };
    Block::ToolResult {
        tool_use_id: Cow::Owned(id.to_string()),
        content,
        is_error,
    }
}

/// A base64 `thoughtSignature` as the stream's hex (as it was, when it is
/// not base64).
fn signature(part: &Value) -> Option<Cow<'static, str>> {
    let text = part.get("thoughtSignature")?.as_str()?;
    Some(Cow::Owned(match message::base64_decode(text) {
        Some(bytes) => hex::encode(bytes),
        None => text.to_string(),
    }))
}

/// A call under its common name when it has one.
fn call_block(call: &Value, signature: Option<Cow<'static, str>>) -> Block<'static> {
    let id = call.get("id").and_then(Value::as_str).unwrap_or("");
    let name = call.get("name").and_then(Value::as_str).unwrap_or("");
    let args = call
        .get("args")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let (name, input) = match args {
        Value::Object(map) => match rename_call(name, &map, false) {
            Some((common, mapped)) => (common, ToolInput::Object(mapped.into_iter().collect())),
            None => (
                name.to_string(),
                ToolInput::Object(map.into_iter().collect()),
            ),
        },
        other => (name.to_string(), ToolInput::Other(other)),
    };
    Block::ToolUse {
        id: Cow::Owned(id.to_string()),
        name: Cow::Owned(name),
        input,
        signature,
    }
}

/// A `gemini` record as an assistant message, and the results in its
/// `toolCalls` as the blocks of the user message after it.
fn gemini_messages(
    record: &Value,
    answered: &mut HashSet<String>,
    report: &mut Report,
) -> (Msg, Vec<Block<'static>>) {
    let mut content = Vec::new();
    for thought in record
        .get("thoughts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = |key: &str| thought.get(key).and_then(Value::as_str).unwrap_or("");
        let thinking = match text("subject") {
            "" => text("description").to_string(),
            subject => format!("**{subject}** {}", text("description")),
        };
        if !thinking.trim().is_empty() {
            content.push(Block::Thinking {
                thinking: Cow::Owned(thinking),
                signature: None,
            });
        }
    }
    let mut in_content: HashSet<String> = HashSet::new();
    for part in parts(record.get("content")) {
        if let Some(call) = part.get("functionCall") {
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                in_content.insert(id.to_string());
            }
            content.push(call_block(call, signature(&part)));
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                content.push(Block::Thinking {
                    thinking: Cow::Owned(text.to_string()),
                    signature: signature(&part),
                });
                continue;
            }
            if let Some(sig) = signature(&part) {
                thinking_signature(&mut content, sig);
            }
            if !text.is_empty() {
                content.push(Block::text(Cow::Owned(text.to_string())));
            }
        } else {
            report.add(dropped::PARTS, 1);
        }
    }
    let mut results = Vec::new();
    for call in record
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
        if !in_content.contains(id) {
            content.push(call_block(call, None));
        }
        let failed = matches!(
            call.get("status").and_then(Value::as_str),
            Some("error" | "cancelled")
        );
        if let Some(Value::String(output)) = call.get("result") {
            // The CLI sends a string result as `{"output": …}`.
            if answered.insert(id.to_string()) {
                results.push(Block::ToolResult {
                    tool_use_id: Cow::Owned(id.to_string()),
                    content: ResultContent::Text(Cow::Owned(output.clone())),
                    is_error: failed,
                });
            }
            continue;
        }
        for part in parts(call.get("result")) {
            if let Some(response) = part.get("functionResponse") {
                let answers = response.get("id").and_then(Value::as_str).unwrap_or(id);
                if answered.insert(answers.to_string()) {
                    results.push(result_block(answers, response, failed));
                } else {
                    report.add(dropped::DUPLICATES, 1);
                }
            } else if let Some(text) = part.get("text").and_then(Value::as_str) {
                results.push(Block::text(Cow::Owned(text.to_string())));
            } else if !part.is_null() {
                report.add(dropped::PARTS, 1);
            }
        }
    }
    // Gemini CLI records Gemini's counts: `input` is the prompt with its
    // cached part, `output` the reply without its `thoughts`. agy counts
    // input without the cache reads and output with the thinking
    // (agy-store(5), USAGE).
    let tokens = record.get("tokens");
    let count = |key: &str| tokens.and_then(|t| t.get(key)).and_then(Value::as_u64);
    let cached = count("cached").unwrap_or(0);
    let output = match (count("output"), count("thoughts")) {
        (None, None) => None,
        (output, thoughts) => Some(output.unwrap_or(0) + thoughts.unwrap_or(0)),
    };
    let usage = Usage {
        input_tokens: count("input").map(|input| input.saturating_sub(cached)),
        output_tokens: output,
        cache_creation_input_tokens: None,
        cache_read_input_tokens: (cached > 0).then_some(cached),
    };
    let msg = Msg {
        role: Role::Assistant,
        model: record
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string),
        usage: Some(usage).filter(|u| !u.is_empty()),
        content,
        ..Msg::default()
    };
    (msg, results)
}

/// Gives the thinking of a message the signature found on a text part:
/// the last thinking block without one, else a new empty one before
/// everything.
fn thinking_signature(content: &mut Vec<Block<'static>>, sig: Cow<'static, str>) {
    let open = content.iter_mut().rev().find_map(|b| match b {
        Block::Thinking { signature, .. } if signature.is_none() => Some(signature),
        _ => None,
    });
    match open {
        Some(slot) => *slot = Some(sig),
        None => content.insert(
            0,
            Block::Thinking {
                thinking: Cow::Borrowed(""),
                signature: Some(sig),
            },
        ),
    }
}
