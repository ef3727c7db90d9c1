//! `agy-encode --format opencode`: what `opencode export ID` prints (one
//! JSON document, `{"info": SESSION, "messages": [{"info", "parts"}, …]}`)
//! as message records for the ordinary encoder.
//!
//! The conversation is what OpenCode sends its model when it continues the
//! session (1.18.33, see the man page), read part by part:
//! * A user message's `text` parts are its texts (those OpenCode marks
//!   `ignored` it never sends, and neither are they read); a message whose
//!   texts are all `synthetic` (OpenCode wrote them) is implicit. Images
//!   and other media in `file` parts are images and documents; a text file
//!   or a directory OpenCode sends as the synthetic text it read from it,
//!   so the file part itself is left out. A `subtask` part (a command
//!   that ran a subagent) is its prompt; its result is the `task` call
//!   that follows.
//! * An assistant message's `text` parts are its texts, `reasoning` parts
//!   its thinking (without the provider's metadata), and each `tool` part
//!   a call followed by its result (`completed` with its output, `error`
//!   with its text); a call that never finished has no result. Where a
//!   `step-start` part begins another step after calls, the message goes
//!   on after their results, as OpenCode sends it. An assistant message
//!   that failed is not sent by OpenCode: its error is an ERROR_MESSAGE
//!   system message instead.
//! * Calls of OpenCode's bash, read, write and edit get the common names
//!   (`super::opencode::TOOLS`), which the encoder maps to agy's tools.
//!
//! The conversation id is the UUID the session id was written from by
//! `agy-decode --format opencode`, else one derived from the session id
//! ([`super::opencode::conversation_id`]); the project directory is the
//! session's `directory`.

use std::borrow::Cow;

use serde_json::Value;

use super::opencode::{conversation_id, TOOLS};
use super::read::image_source;
use super::{Conversation, MetaInfo, Msg, Report};
use crate::agy::tools::{self, ArgList};
use crate::error::{Error, Result};
use crate::stream::io::Lines;
use crate::stream::message::{Block, ResultContent, Role, ToolInput, Usage};
use crate::time::Timestamp;

/// Labels of what reading leaves out.
pub mod dropped {
    pub const IGNORED: &str = "texts OpenCode does not send left out";
    pub const FILES_AS_TEXT: &str = "text files and directories left out (sent as their text)";
    pub const SUBTASKS: &str = "subtasks read as their prompt";
    pub const AGENTS: &str = "agent mentions left out";
    pub const COMPACTIONS: &str = "compaction requests left out";
    pub const STEPS: &str = "step, snapshot, patch and retry parts left out";
    pub const METADATA: &str = "provider metadata of parts left out";
    pub const ATTACHMENTS: &str = "attachments of tool results left out";
    pub const UNFINISHED: &str = "calls that never finished left without a result";
    pub const FAILED: &str = "failed assistant messages read as errors";
    pub const PARTS: &str = "parts of other kinds left out";
}

/// Reads one export from `lines` (the whole file is one JSON document).
/// Its bytes are held once (a long line is taken from the reader, not
/// copied), and only while they are parsed; the document is taken apart as
/// the conversation is made. (Parsing as it reads would hold less, but
/// took twice the time.)
pub fn read(lines: &mut Lines, report: &mut Report) -> Result<Conversation> {
    let name = lines.name().to_string();
    let mut whole = Vec::new();
    let mut line = Vec::new();
    while lines.next_line_into(&mut line)? {
        if whole.is_empty() {
            std::mem::swap(&mut whole, &mut line);
        } else {
            whole.extend_from_slice(&line);
        }
        whole.push(b'\n');
    }
    drop(line);
    let doc: Value = serde_json::from_slice(&whole).map_err(|e| {
        Error::data(format!(
            "{name}:{}: not an OpenCode export: {e}",
            e.line().max(1)
        ))
    })?;
    drop(whole);
    conversation(doc, &name, report)
}

/// A time OpenCode keeps (milliseconds) as the stream writes times.
fn time(value: &Value) -> Option<String> {
    Timestamp::from_epoch_millis(value.as_i64()?).format()
}

fn text_of<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The string at `key`, taken out of `value` (empty when there is none).
fn take_text(value: &mut Value, key: &str) -> String {
    match value.get_mut(key).map(Value::take) {
        Some(Value::String(text)) => text,
        _ => String::new(),
    }
}

/// The conversation of an export, taken out of it message by message, so
/// that the export and the conversation are not held whole at once.
fn conversation(mut doc: Value, name: &str, report: &mut Report) -> Result<Conversation> {
    let not_export = |why: &str| Error::data(format!("{name}: not an OpenCode export: {why}"));
    let info = doc
        .get_mut("info")
        .filter(|i| i.is_object())
        .map(Value::take)
        .ok_or_else(|| not_export("no \"info\" object"))?;
    let session = info
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| not_export("the session has no \"id\""))?;
    let messages = match doc.get_mut("messages").map(Value::take) {
        Some(Value::Array(messages)) => messages,
        _ => return Err(not_export("no \"messages\" list")),
    };
    let mut out = Vec::new();
    for (i, mut message) in messages.into_iter().enumerate() {
        let role = message
            .pointer("/info/role")
            .and_then(Value::as_str)
            .map(str::to_string);
        let parts = match message.get_mut("parts").map(Value::take) {
            Some(Value::Array(parts)) => Some(parts),
            _ => None,
        };
        let (Some(role), Some(parts)) = (role, parts) else {
            return Err(not_export(&format!(
                "message {} has no role or no parts",
                i + 1
            )));
        };
        let info = &message["info"];
        match role.as_str() {
            "user" => out.push(user(info, parts, report)),
            "assistant" => assistant(info, parts, &mut out, report),
            other => {
                return Err(not_export(&format!(
                    "message {} has the role {other:?}",
                    i + 1
                )))
            }
        }
    }
    let title = Some(text_of(&info, "title").to_string()).filter(|t| !t.trim().is_empty());
    let meta = MetaInfo {
        timestamp: info.pointer("/time/created").and_then(time),
        cwd: Some(text_of(&info, "directory").to_string()).filter(|d| !d.is_empty()),
        title,
        model: info
            .pointer("/model/id")
            .and_then(Value::as_str)
            .map(str::to_string),
        ..MetaInfo::default()
    };
    Ok(Conversation {
        id: conversation_id(session),
        messages: out,
        meta,
    })
}

/// A user message.
fn user(info: &Value, parts: Vec<Value>, report: &mut Report) -> Msg {
    let mut content = Vec::new();
    // Whether every text is OpenCode's own (None: no text).
    let mut synthetic = None;
    for mut part in parts {
        match text_of(&part, "type") {
            "text" if part.get("ignored") == Some(&Value::Bool(true)) => {
                report.add(dropped::IGNORED, 1);
            }
            "text" => {
                let own = part.get("synthetic") == Some(&Value::Bool(true));
                synthetic = Some(synthetic.unwrap_or(true) && own);
                content.push(Block::text(Cow::Owned(take_text(&mut part, "text"))));
            }
            "file" => {
                let mime = text_of(&part, "mime");
                if mime == "text/plain" || mime == "application/x-directory" {
                    report.add(dropped::FILES_AS_TEXT, 1);
                    continue;
                }
                let mut source = image_source(text_of(&part, "url"));
                if source.media_type.is_none() && !mime.is_empty() {
                    source.media_type = Some(Cow::Owned(mime.to_string()));
                }
                content.push(if mime.starts_with("image/") {
                    Block::Image { source }
                } else {
                    Block::Document { source }
                });
            }
            "subtask" => {
                report.add(dropped::SUBTASKS, 1);
                synthetic = Some(false);
                content.push(Block::text(Cow::Owned(take_text(&mut part, "prompt"))));
            }
            "agent" => report.add(dropped::AGENTS, 1),
            "compaction" => report.add(dropped::COMPACTIONS, 1),
            kind => bookkeeping(kind, report),
        }
    }
    Msg {
        role: Role::User,
        implicit: synthetic == Some(true),
        timestamp: info.pointer("/time/created").and_then(time),
        content,
        ..Msg::default()
    }
}

/// Counts a part that is no content of the conversation.
fn bookkeeping(kind: &str, report: &mut Report) {
    match kind {
        "step-start" | "step-finish" | "snapshot" | "patch" | "retry" => {
            report.add(dropped::STEPS, 1);
        }
        _ => report.add(dropped::PARTS, 1),
    }
}

/// An assistant message: its content, and after each step's calls a user
/// message of their results.
fn assistant(info: &Value, parts: Vec<Value>, out: &mut Vec<Msg>, report: &mut Report) {
    let timestamp = info.pointer("/time/created").and_then(time);
    if let Some(error) = info.get("error").filter(|e| !e.is_null()) {
        report.add(dropped::FAILED, 1);
        let message = error
            .pointer("/data/message")
            .and_then(Value::as_str)
            .unwrap_or_else(|| text_of(error, "name"));
        out.push(Msg {
            role: Role::System,
            step_type: Some("ERROR_MESSAGE".to_string()),
            timestamp: timestamp.clone(),
            content: vec![Block::Text {
                text: Cow::Owned(message.to_string()),
                field: Some(Cow::Borrowed("full_error")),
            }],
            ..Msg::default()
        });
        // OpenCode sends an aborted message's content, but no other
        // failed one's.
        let aborted = text_of(error, "name") == "MessageAbortedError";
        let content = parts
            .iter()
            .any(|p| !matches!(text_of(p, "type"), "step-start" | "reasoning"));
        if !(aborted && content) {
            return;
        }
    }
    let tokens = info.get("tokens");
    let count = |key: &str| tokens.and_then(|t| t.pointer(key)).and_then(Value::as_u64);
    let usage = Usage {
        input_tokens: count("/input"),
        output_tokens: count("/output"),
        cache_creation_input_tokens: count("/cache/write").filter(|&n| n > 0),
        cache_read_input_tokens: count("/cache/read").filter(|&n| n > 0),
    };
    let all_zero = [usage.input_tokens, usage.output_tokens]
        .iter()
        .all(|n| n.unwrap_or(0) == 0)
        && usage.cache_creation_input_tokens.is_none()
        && usage.cache_read_input_tokens.is_none();
    let mut step = Step {
        message: Msg {
            role: Role::Assistant,
            timestamp: timestamp.clone(),
            model: info
                .get("modelID")
                .and_then(Value::as_str)
                .map(str::to_string),
            usage: (!all_zero).then_some(usage),
            ..Msg::default()
        },
        results: Msg {
            role: Role::User,
            timestamp,
            ..Msg::default()
        },
    };
    for mut part in parts {
        if part
            .get("metadata")
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
        {
            report.add(dropped::METADATA, 1);
        }
        match text_of(&part, "type") {
            "text" => step.push(Block::text(Cow::Owned(take_text(&mut part, "text")))),
            "reasoning" => {
                let thinking = take_text(&mut part, "text");
                if !thinking.is_empty() {
                    step.push(Block::Thinking {
                        thinking: Cow::Owned(thinking),
                        signature: None,
                    });
                }
            }
            "tool" => step.tool(part, report),
            "step-start" => {
                report.add(dropped::STEPS, 1);
                step.next_step(out);
            }
            kind => bookkeeping(kind, report),
        }
    }
    step.finish(out);
}

/// One step of an assistant message being read: its content, and the
/// results of its calls.
struct Step {
    message: Msg,
    results: Msg,
}

impl Step {
    fn push(&mut self, block: Block<'static>) {
        self.message.content.push(block);
    }

    /// A tool part: its call, and its result when it has one.
    fn tool(&mut self, mut part: Value, report: &mut Report) {
        let id = take_text(&mut part, "callID");
        let tool = take_text(&mut part, "tool");
        let mut state = part["state"].take();
        let (name, input) = match state["input"].take() {
            Value::Object(map) => {
                let args: ArgList = map.into_iter().collect();
                let (name, mapped) = tools::to_common_by(TOOLS, &tool, Some(&args));
                (name, ToolInput::Object(mapped.unwrap_or(args)))
            }
            other => {
                let (name, _) = tools::to_common_by(TOOLS, &tool, None);
                (name, ToolInput::Other(other))
            }
        };
        self.push(Block::ToolUse {
            id: Cow::Owned(id.clone()),
            name: Cow::Owned(name),
            input,
            signature: None,
        });
        let (text, is_error) = match text_of(&state, "status") {
            "completed" => (take_text(&mut state, "output"), false),
            "error" => (take_text(&mut state, "error"), true),
            _ => {
                report.add(dropped::UNFINISHED, 1);
                return;
            }
        };
        if state
            .get("attachments")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
        {
            report.add(dropped::ATTACHMENTS, 1);
        }
        if self.results.content.is_empty() {
            if let Some(end) = state.pointer("/time/end").and_then(time) {
                self.results.timestamp = Some(end);
            }
        }
        self.results.content.push(Block::ToolResult {
            tool_use_id: Cow::Owned(id),
            content: ResultContent::Text(Cow::Owned(text)),
            is_error,
        });
    }

    /// Ends a step that made calls: its content, then their results; the
    /// message goes on in a new step. A step without calls goes on as it
    /// is.
    fn next_step(&mut self, out: &mut Vec<Msg>) {
        let calls = self
            .message
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }));
        if calls {
            self.finish(out);
        }
    }

    /// Ends the step: its content, then the results of its calls.
    fn finish(&mut self, out: &mut Vec<Msg>) {
        let next = (piece(&self.message), piece(&self.results));
        let message = std::mem::replace(&mut self.message, next.0);
        let results = std::mem::replace(&mut self.results, next.1);
        out.extend(
            [message, results]
                .into_iter()
                .filter(|m| !m.content.is_empty()),
        );
    }
}

/// An empty message of the same role, time and model as `msg`, for the
/// next step of its message.
fn piece(msg: &Msg) -> Msg {
    Msg {
        role: msg.role,
        timestamp: msg.timestamp.clone(),
        model: msg.model.clone(),
        ..Msg::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{read, write, Options};
    use serde_json::json;

    const S: &str = "ses_dcc14a383ffexighqKtkNMJKRa";

    /// A message and its parts in the shape opencode-ai 1.18.33 exports.
    fn message(id: &str, info: Value, parts: Vec<Value>) -> Value {
        let mut info = info;
        info["id"] = id.into();
        info["sessionID"] = S.into();
        let parts: Vec<Value> = parts
            .into_iter()
            .enumerate()
            .map(|(i, mut p)| {
                p["id"] = format!("prt_{id}{i}").into();
                p["sessionID"] = S.into();
                p["messageID"] = id.into();
                p
            })
            .collect();
        json!({"info": info, "parts": parts})
    }

    fn user(id: &str, created: i64, parts: Vec<Value>) -> Value {
        message(
            id,
            json!({"role": "user", "time": {"created": created}, "agent": "build",
                   "model": {"providerID": "fake", "modelID": "fake-model"},
                   "summary": {"diffs": []}}),
            parts,
        )
    }

    fn assistant(id: &str, created: i64, extra: Value, parts: Vec<Value>) -> Value {
        let mut info = json!({"parentID": "msg_u1", "role": "assistant", "mode": "build",
            "agent": "build", "path": {"cwd": "/w", "root": "/"}, "cost": 0,
            "tokens": {"total": 5, "input": 3, "output": 2, "reasoning": 0,
                       "cache": {"write": 0, "read": 1}},
            "modelID": "fake-model", "providerID": "fake",
            "time": {"created": created, "completed": created + 9}, "finish": "stop"});
        info.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        message(id, info, parts)
    }

    fn step_finish() -> Value {
        json!({"type": "step-finish", "reason": "tool-calls", "cost": 0,
               "tokens": {"total": 5, "input": 3, "output": 2, "reasoning": 0,
                          "cache": {"write": 0, "read": 0}}})
    }

    fn tool(call: &str, name: &str, state: Value) -> Value {
        json!({"type": "tool", "tool": name, "callID": call, "state": state})
    }

    /// The records read from `doc`, as JSON values, and the counts.
    fn records(doc: &Value) -> (Vec<Value>, Report) {
        let mut report = Report::default();
        let conv = conversation(doc.clone(), "s.json", &mut report).unwrap();
        (read::record_values(conv), report)
    }

    fn export() -> Value {
        let png = "data:image/png;base64,iVBORw0KGgo=";
        json!({
            "info": {"id": S, "slug": "mighty-engine", "projectID": "global", "directory": "/w",
                     "path": "w", "title": "Listing", "agent": "build",
                     "model": {"id": "fake-model", "providerID": "fake", "variant": "default"},
                     "version": "1.18.33", "time": {"created": 1_796_167_392_380i64,
                                                    "updated": 1_796_167_406_285i64}},
            "messages": [
                user("msg_u1", 1_796_167_392_470, vec![
                    json!({"type": "text", "text": "List it. @notes.txt"}),
                    json!({"type": "text", "synthetic": true,
                           "text": "Called the Read tool with the following input: {\"filePath\":\"/w/notes.txt\"}"}),
                    json!({"type": "file", "mime": "text/plain", "filename": "notes.txt",
                           "url": "file:///w/notes.txt"}),
                    json!({"type": "file", "mime": "image/png", "filename": "a.png", "url": png}),
                    json!({"type": "text", "text": "(hidden)", "ignored": true}),
                ]),
                assistant("msg_a1", 1_796_167_394_343, json!({"finish": "tool-calls"}), vec![
                    json!({"type": "step-start"}),
                    json!({"type": "reasoning", "text": "ls first.",
                           "metadata": {"openai": {"itemId": "rs_1"}},
                           "time": {"start": 1, "end": 2}}),
                    tool("call_1", "bash", json!({"status": "completed",
                        "input": {"command": "ls", "description": "List"},
                        "output": "a\nb", "title": "ls", "metadata": {"exit": 0},
                        "time": {"start": 1_796_167_395_682i64, "end": 1_796_167_396_377i64}})),
                    tool("call_2", "read", json!({"status": "error",
                        "input": {"filePath": "/w/x"}, "error": "File not found: /w/x",
                        "time": {"start": 1, "end": 2}})),
                    step_finish(),
                    json!({"type": "step-start"}),
                    json!({"type": "text", "text": "Two files."}),
                    tool("call_3", "glob", json!({"status": "running",
                        "input": {"pattern": "*"}, "time": {"start": 1}})),
                    step_finish(),
                ]),
                assistant("msg_a2", 1_796_167_400_000, json!({
                    "error": {"name": "APIError", "data": {"message": "Bad Gateway",
                                                          "isRetryable": true}}}),
                    vec![json!({"type": "step-start"})]),
                user("msg_u2", 1_796_167_402_792, vec![
                    json!({"type": "subtask", "prompt": "Find the tests.",
                           "description": "find tests", "agent": "general"}),
                ]),
            ]
        })
    }

    #[test]
    fn an_export_reads_as_opencode_sends_it() {
        let (records, report) = records(&export());
        assert_eq!(
            read::shapes(&records),
            [
                json!(["user", ["text", "text", "image"]]),
                json!(["assistant", ["thinking", "tool_use", "tool_use"]]),
                json!(["user", ["tool_result", "tool_result"]]),
                json!(["assistant", ["text", "tool_use"]]),
                json!(["system", ["text"]]),
                json!(["user", ["text"]]),
                json!([null, null]),
            ]
        );
        assert_eq!(
            records[0]["content"][2]["source"],
            json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
        );
        assert_eq!(records[0]["timestamp"], "2026-12-01T23:23:12.470Z");
        assert_eq!(
            records[1]["content"][1],
            json!({"type": "tool_use", "id": "call_1", "name": "Bash",
                   "input": {"command": "ls", "description": "List"}})
        );
        assert_eq!(records[1]["content"][2]["name"], "Read");
        assert_eq!(
            records[1]["content"][2]["input"],
            json!({"file_path": "/w/x"})
        );
        assert_eq!(records[1]["model"], "fake-model");
        assert_eq!(
            records[1]["usage"],
            json!({"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 1})
        );
        assert_eq!(
            records[2]["content"],
            json!([{"type": "tool_result", "tool_use_id": "call_1", "content": "a\nb"},
                   {"type": "tool_result", "tool_use_id": "call_2",
                    "content": "File not found: /w/x", "is_error": true}])
        );
        assert_eq!(records[2]["timestamp"], "2026-12-01T23:23:16.377Z");
        assert_eq!(records[4]["step_type"], "ERROR_MESSAGE");
        assert_eq!(records[4]["content"][0]["text"], "Bad Gateway");
        assert_eq!(records[5]["content"][0]["text"], "Find the tests.");
        let meta = &records[6];
        assert_eq!(meta["id"], conversation_id(S));
        assert_eq!(meta["cwd"], "/w");
        assert_eq!(meta["title"], "Listing");
        assert_eq!(meta["model"], "fake-model");
        assert_eq!(meta["timestamp"], "2026-12-01T23:23:12.380Z");
        for (label, n) in [
            (dropped::IGNORED, 1),
            (dropped::FILES_AS_TEXT, 1),
            (dropped::SUBTASKS, 1),
            // The failed message's are not read at all.
            (dropped::STEPS, 4),
            (dropped::METADATA, 1),
            (dropped::UNFINISHED, 1),
            (dropped::FAILED, 1),
        ] {
            assert_eq!(report.count(label), n, "{label}: {report}");
        }
    }

    /// What agy-decode writes comes back as the message stream it was:
    /// texts, thinking, calls under the common names, results, times.
    #[test]
    fn a_written_session_reads_back() {
        let stream = [
            json!({"role": "user", "timestamp": "2026-11-02T08:00:00Z",
                   "content": [{"type": "text", "text": "List it."}]}),
            json!({"role": "assistant", "timestamp": "2026-11-02T08:00:01.250Z",
                   "model": "gemini-3-flash", "usage": {"input_tokens": 7, "output_tokens": 2},
                   "content": [{"type": "thinking", "thinking": "ls first."},
                               {"type": "text", "text": "Listing."},
                               {"type": "tool_use", "id": "c1", "name": "Edit",
                                "input": {"file_path": "/a", "old_string": "x", "new_string": "y"}}]}),
            json!({"role": "user", "timestamp": "2026-11-02T08:00:02Z",
                   "content": [{"type": "tool_result", "tool_use_id": "c1",
                                "content": "edited", "is_error": true}]}),
            json!({"role": "assistant", "timestamp": "2026-11-02T08:00:03Z",
                   "model": "gemini-3-flash",
                   "content": [{"type": "text", "text": "Done."}]}),
            json!({"role": "user", "implicit": true, "timestamp": "2026-11-02T08:00:04Z",
                   "content": [{"type": "text", "text": "The user stepped away."}]}),
            json!({"role": "assistant", "timestamp": "2026-11-02T08:00:05Z",
                   "model": "gemini-3-flash",
                   "content": [{"type": "text", "text": "Back."}]}),
        ];
        let id = "a1b2c3d4-0000-4000-8000-000000000001";
        let mut conv = crate::format::Conversation {
            id: id.into(),
            ..Default::default()
        };
        for record in &stream {
            let mut line = record.clone();
            line["conversation"] = id.into();
            line["kind"] = "message".into();
            conv.messages.push(crate::format::Msg {
                role: serde_json::from_value(line["role"].clone()).unwrap(),
                timestamp: line["timestamp"].as_str().map(str::to_string),
                model: line["model"].as_str().map(str::to_string),
                usage: serde_json::from_value(line["usage"].clone()).unwrap_or(None),
                implicit: line["implicit"] == true,
                content: serde_json::from_value(line["content"].clone()).unwrap(),
                ..Default::default()
            });
        }
        conv.meta.cwd = Some("/nowhere".into());
        conv.meta.title = Some("Edit".into());
        let writer = crate::format::Format::OpenCode.writer().unwrap();
        let (bytes, _) = write::written(writer, &mut conv, &Options::default());
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        let (records, report) = records(&doc);
        assert!(report.is_empty(), "{report}");
        let messages: Vec<Value> = records[..records.len() - 1]
            .iter()
            .map(|r| {
                let mut r = r.clone();
                let r = r.as_object_mut().unwrap();
                r.remove("conversation");
                r.remove("kind");
                Value::Object(r.clone())
            })
            .collect();
        assert_eq!(messages, stream);
        assert_eq!(records.last().unwrap()["id"], id);
        assert_eq!(records.last().unwrap()["title"], "Edit");
    }

    /// A user message is implicit only when it has texts and OpenCode wrote
    /// them all: an image alone is the person's.
    #[test]
    fn only_synthetic_texts_make_a_message_implicit() {
        let png = json!({"type": "file", "mime": "image/png", "url": "data:image/png;base64,AA=="});
        let text = |synthetic: bool| json!({"type": "text", "text": "t", "synthetic": synthetic});
        for (parts, implicit) in [
            (vec![png.clone()], false),
            (vec![text(true), png.clone()], true),
            (vec![text(true), text(false)], false),
            (vec![text(true)], true),
        ] {
            let msg = super::user(
                &json!({"time": {"created": 0}}),
                parts.clone(),
                &mut Report::default(),
            );
            assert_eq!(msg.implicit, implicit, "{parts:?}");
        }
    }

    #[test]
    fn not_an_export() {
        for (doc, why) in [
            (json!([]), "no \"info\" object"),
            (json!({"info": {}}), "the session has no \"id\""),
            (json!({"info": {"id": S}}), "no \"messages\" list"),
            (
                json!({"info": {"id": S}, "messages": [{"info": {}}]}),
                "message 1 has no role",
            ),
            (
                json!({"info": {"id": S}, "messages": [{"info": {"role": "tool"}, "parts": []}]}),
                "message 1 has the role \"tool\"",
            ),
        ] {
            let err = conversation(doc, "s.json", &mut Report::default()).unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("s.json: not an OpenCode export: {why}")),
                "{err}"
            );
        }
    }
}
