//! `agy-encode --format codex`: a Codex CLI rollout file as message records
//! for the ordinary encoder.
//!
//! Codex writes two kinds of rollout, and both are read: "legacy" (every
//! session before 0.171, and what `agy-decode --format codex` writes) and
//! "paginated" (new sessions of 0.171: an `ordinal` on every line, plus
//! `world_state`, `token_usage_record` and `item_completed` lines, which
//! repeat what the other lines say and are skipped). What is read, and how
//! (see also the man page):
//! * The conversation is what Codex sends its model: the `response_item`
//!   lines in order. Messages of the developer role, and the user messages
//!   Codex writes itself (environment context, AGENTS.md and skill
//!   instructions, …), are left out, since Codex writes them afresh when it
//!   resumes.
//! * Reasoning keeps its summary text as thinking, never its encrypted
//!   content; an `agent_reasoning` event that repeats no reasoning item's
//!   text (the thinking agy-decode wrote for people) is thinking too.
//! * Calls are `function_call` (arguments parsed as JSON),
//!   `custom_tool_call` (the input, a string) and `local_shell_call` (the
//!   action); their outputs are results. Tool names map back through
//!   [`super::codex::TOOLS`]: `exec_command` is `Bash`.
//! * A `compacted` line's summary is an implicit user message, after the
//!   turns it summarised; `thread_rolled_back` drops the turns it names,
//!   as Codex does.
//! * Token counts come from `token_count` events (or paginated
//!   `token_usage_record` lines); the model from `turn_context` or
//!   `thread_settings_applied`; the title from `thread_name_updated`.
//!
//! A line without its top-level `timestamp` string is one Codex itself
//! drops, and so is it here (counted); a line that is not a JSON object is
//! bad input.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::Value;

use super::codex::TOOLS;
use super::read::image_source;
use super::{Conversation, MetaInfo, Msg, Report};
use crate::agy::tools::{self, ArgList};
use crate::error::{Error, Result};
use crate::stream::io::Lines;
use crate::stream::message::{self, Block, ResultContent, Role, ToolInput, Usage};
use crate::time::Timestamp;

/// Labels of what reading leaves out.
pub mod dropped {
    pub const NO_TIMESTAMP: &str = "lines without a timestamp left out (Codex drops them too)";
    pub const CONTEXT: &str = "messages Codex writes itself left out";
    pub const ITEMS: &str = "response items of other kinds left out";
    pub const PARTS: &str = "content parts of other kinds left out";
    pub const ENCRYPTED: &str = "encrypted reasoning left out";
    pub const ROLLED_BACK: &str = "messages rolled back";
    pub const COMPACTED: &str = "compaction summaries read as implicit user messages";
}

/// The openings of the user messages Codex writes itself rather than
/// the person: context it sends again on every resume.
const CONTEXT_OPENINGS: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions for ",
    "<skills_instructions>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<collaboration_mode>",
    "<apps_instructions>",
];

/// Reads one rollout from `lines`; the conversation id is the session
/// id.
pub fn read(lines: &mut Lines, report: &mut Report) -> Result<Conversation> {
    let name = lines.name().to_string();
    let mut reader = Reader::default();
    while let Some(line) = lines.next_line()? {
        let value = serde_json::from_slice::<Value>(line)
            .map_err(|e| Error::data(format!("{}: not a JSON line: {e}", lines.place())))?;
        reader
            .line(value)
            .map_err(|e| Error::data(format!("{}: {e}", lines.place())))?;
    }
    let (conv, read) = reader.finish(&name)?;
    report.merge(&read);
    Ok(conv)
}

/// What has been read of a rollout so far.
#[derive(Default)]
struct Reader {
    /// Whether `session_meta` has been read (it must come first).
    started: bool,
    id: String,
    timestamp: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    title: Option<String>,
    /// The model of the turns being read now.
    model: Option<String>,
    messages: Vec<Msg>,
    /// The texts of reasoning items, which `agent_reasoning` events repeat.
    reasoning: HashSet<String>,
    report: Report,
}

impl Reader {
    /// Takes one line; an error is about that line.
    fn line(&mut self, value: Value) -> std::result::Result<(), String> {
        let Value::Object(mut line) = value else {
            return Err("a rollout line is a JSON object".into());
        };
        let Some(Value::String(timestamp)) = line.remove("timestamp") else {
            self.report.add(dropped::NO_TIMESTAMP, 1);
            return Ok(());
        };
        let kind = match line.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            _ => return Err("a rollout line has a \"type\" string".into()),
        };
        let payload = line.remove("payload").unwrap_or(Value::Null);
        if !self.started {
            if kind != "session_meta" {
                return Err(format!(
                    "the first line is {kind:?}, not session_meta (Codex does not resume such a file)"
                ));
            }
            self.started = true;
            let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_string);
            self.id = text("id").ok_or("session_meta has no \"id\"")?;
            self.timestamp = text("timestamp").or_else(|| Some(timestamp.clone()));
            self.cwd = text("cwd");
            self.git_branch = payload
                .pointer("/git/branch")
                .and_then(Value::as_str)
                .map(str::to_string);
            return Ok(());
        }
        let timestamp = Timestamp::parse(&timestamp).ok().map(|_| timestamp);
        match kind.as_str() {
            "response_item" => self.item(&payload, timestamp),
            "event_msg" => self.event(&payload, timestamp),
            "turn_context" => {
                if let Some(model) = payload.get("model").and_then(Value::as_str) {
                    self.model = Some(model.to_string());
                }
            }
            "compacted" => {
                let summary = payload.get("message").and_then(Value::as_str).unwrap_or("");
                if !summary.trim().is_empty() {
                    self.report.add(dropped::COMPACTED, 1);
                    self.messages.push(Msg {
                        role: Role::User,
                        implicit: true,
                        timestamp,
                        content: vec![Block::text(Cow::Owned(summary.to_string()))],
                        ..Msg::default()
                    });
                }
            }
            "token_usage_record" => {
                if let Some(usage) = payload.get("usage").and_then(usage) {
                    self.usage(usage);
                }
            }
            // A forked session repeats its parent's meta; the first counts.
            // world_state is Codex's own context, sent afresh on resume.
            _ => {}
        }
        Ok(())
    }

    fn item(&mut self, item: &Value, timestamp: Option<String>) {
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or("");
        match text("type") {
            "message" => match text("role") {
                "assistant" => {
                    let blocks = self.parts(item);
                    self.assistant(blocks, timestamp);
                }
                "user" => {
                    let blocks = self.parts(item);
                    let is_context = blocks.iter().any(|b| match b {
                        Block::Text { text, .. } => {
                            CONTEXT_OPENINGS.iter().any(|o| text.starts_with(o))
                        }
                        _ => false,
                    });
                    if is_context {
                        self.report.add(dropped::CONTEXT, 1);
                    } else if !blocks.is_empty() {
                        self.messages.push(Msg {
                            role: Role::User,
                            timestamp,
                            content: blocks,
                            ..Msg::default()
                        });
                    }
                }
                _ => self.report.add(dropped::CONTEXT, 1),
            },
            "reasoning" => {
                if item.get("encrypted_content").is_some_and(|e| !e.is_null()) {
                    self.report.add(dropped::ENCRYPTED, 1);
                }
                let mut texts = Vec::new();
                for key in ["summary", "content"] {
                    for part in item
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(t) = part.get("text").and_then(Value::as_str) {
                            self.reasoning.insert(t.to_string());
                            texts.push(t);
                        }
                    }
                    if !texts.is_empty() {
                        break;
                    }
                }
                let thinking = texts.join("\n\n");
                if !thinking.trim().is_empty() {
                    self.assistant(vec![thinking_block(thinking)], timestamp);
                }
            }
            "function_call" => {
                let arguments = text("arguments");
                let input = match serde_json::from_str::<Value>(arguments) {
                    Ok(Value::Object(map)) => {
                        let args: ArgList = map.into_iter().collect();
                        let (name, mapped) = tools::to_common_by(TOOLS, text("name"), Some(&args));
                        let call = call(
                            text("call_id"),
                            &name,
                            ToolInput::Object(mapped.unwrap_or(args)),
                        );
                        self.assistant(vec![call], timestamp);
                        return;
                    }
                    Ok(other) => ToolInput::Other(other),
                    Err(_) => ToolInput::Other(Value::String(arguments.to_string())),
                };
                let (name, _) = tools::to_common_by(TOOLS, text("name"), None);
                self.assistant(vec![call(text("call_id"), &name, input)], timestamp);
            }
            "custom_tool_call" => {
                let input = ToolInput::Other(Value::String(text("input").to_string()));
                let (name, _) = tools::to_common_by(TOOLS, text("name"), None);
                self.assistant(vec![call(text("call_id"), &name, input)], timestamp);
            }
            "local_shell_call" => {
                let action = item.get("action").cloned().unwrap_or(Value::Null);
                let input = match action {
                    Value::Object(map) => ToolInput::Object(map.into_iter().collect()),
                    other => ToolInput::Other(other),
                };
                let id = item
                    .get("call_id")
                    .or_else(|| item.get("id"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                self.assistant(vec![call(id, "local_shell", input)], timestamp);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let (content, is_error) = output(item.get("output"));
                self.result(
                    Block::ToolResult {
                        tool_use_id: Cow::Owned(text("call_id").to_string()),
                        content,
                        is_error,
                    },
                    timestamp,
                );
            }
            _ => self.report.add(dropped::ITEMS, 1),
        }
    }

    fn event(&mut self, event: &Value, timestamp: Option<String>) {
        let text = |key: &str| event.get(key).and_then(Value::as_str);
        match text("type").unwrap_or("") {
            "agent_reasoning" => {
                let thinking = text("text").unwrap_or("");
                if !thinking.trim().is_empty() && !self.reasoning.contains(thinking) {
                    self.assistant(vec![thinking_block(thinking.to_string())], timestamp);
                }
            }
            "token_count" => {
                if let Some(usage) = event.pointer("/info/last_token_usage").and_then(usage) {
                    self.usage(usage);
                }
            }
            "thread_name_updated" => {
                if let Some(name) = text("thread_name").filter(|n| !n.trim().is_empty()) {
                    self.title = Some(name.to_string());
                }
            }
            "thread_settings_applied" => {
                if let Some(model) = event
                    .pointer("/thread_settings/model")
                    .and_then(Value::as_str)
                {
                    self.model = Some(model.to_string());
                }
            }
            "thread_rolled_back" => {
                let turns = event.get("num_turns").and_then(Value::as_u64).unwrap_or(0);
                self.roll_back(turns);
            }
            _ => {}
        }
    }

    /// The blocks of a message item's content parts.
    fn parts(&mut self, item: &Value) -> Vec<Block<'static>> {
        let mut blocks = Vec::new();
        let parts = match item.get("content") {
            Some(Value::Array(parts)) => parts.as_slice(),
            Some(Value::String(text)) => {
                return vec![Block::text(Cow::Owned(text.clone()))];
            }
            _ => &[],
        };
        for part in parts {
            let text = |key: &str| part.get(key).and_then(Value::as_str);
            match text("type").unwrap_or("") {
                "input_text" | "output_text" | "text" => {
                    blocks.push(Block::text(Cow::Owned(
                        text("text").unwrap_or("").to_string(),
                    )));
                }
                "input_image" => match text("image_url").map(image_source) {
                    Some(source) => blocks.push(Block::Image { source }),
                    None => self.report.add(dropped::PARTS, 1),
                },
                _ => self.report.add(dropped::PARTS, 1),
            }
        }
        blocks
    }

    /// Adds assistant blocks to the assistant message being read, or starts
    /// one: the items of one response come one after another.
    fn assistant(&mut self, blocks: Vec<Block<'static>>, timestamp: Option<String>) {
        if blocks.is_empty() {
            return;
        }
        match self.messages.last_mut() {
            Some(msg) if msg.role == Role::Assistant => msg.content.extend(blocks),
            _ => self.messages.push(Msg {
                role: Role::Assistant,
                timestamp,
                model: self.model.clone(),
                content: blocks,
                ..Msg::default()
            }),
        }
    }

    /// Adds a result to the user message of results being read, or starts
    /// one.
    fn result(&mut self, block: Block<'static>, timestamp: Option<String>) {
        match self.messages.last_mut() {
            Some(msg)
                if msg.role == Role::User
                    && !msg.implicit
                    && msg
                        .content
                        .iter()
                        .all(|b| matches!(b, Block::ToolResult { .. })) =>
            {
                msg.content.push(block);
            }
            _ => self.messages.push(Msg {
                role: Role::User,
                timestamp,
                content: vec![block],
                ..Msg::default()
            }),
        }
    }

    /// Token counts belong to the assistant message just read.
    fn usage(&mut self, usage: Usage) {
        if let Some(msg) = self
            .messages
            .iter_mut()
            .rev()
            .find(|m| m.role == Role::Assistant)
        {
            msg.usage = Some(usage);
        }
    }

    /// Drops the last `turns` turns, each from a message the person typed
    /// (not a result, not an implicit message) to the end.
    fn roll_back(&mut self, turns: u64) {
        let mut left = turns;
        let mut cut = self.messages.len();
        while left > 0 {
            let Some(at) = self.messages[..cut].iter().rposition(|m| {
                m.role == Role::User
                    && !m.implicit
                    && m.content
                        .iter()
                        .any(|b| !matches!(b, Block::ToolResult { .. }))
            }) else {
                cut = 0;
                break;
            };
            cut = at;
            left -= 1;
        }
        let dropped = self.messages.len() - cut;
        self.report.add(dropped::ROLLED_BACK, dropped as u64);
        self.messages.truncate(cut);
    }

    /// The conversation of the rollout and what was left out, or an error
    /// when it held no session.
    fn finish(self, name: &str) -> Result<(Conversation, Report)> {
        if !self.started {
            return Err(Error::data(format!(
                "{name}: no session_meta line: not a Codex rollout"
            )));
        }
        let meta = MetaInfo {
            timestamp: self.timestamp,
            cwd: self.cwd,
            git_branch: self.git_branch,
            title: self.title,
            model: self.model,
            ..MetaInfo::default()
        };
        let conv = Conversation {
            id: self.id,
            messages: self.messages,
            meta,
        };
        Ok((conv, self.report))
    }
}

fn call(id: &str, name: &str, input: ToolInput) -> Block<'static> {
    Block::ToolUse {
        id: Cow::Owned(id.to_string()),
        name: Cow::Owned(name.to_string()),
        input,
        signature: None,
    }
}

fn thinking_block(thinking: String) -> Block<'static> {
    Block::Thinking {
        thinking: Cow::Owned(thinking),
        signature: None,
    }
}

/// A call's output: a string as it is; a list of content parts as their
/// text (or, holding anything but text, as JSON); Codex's older
/// `{content, success}` object as its content, `success: false` being an
/// error.
fn output(output: Option<&Value>) -> (ResultContent<'static>, bool) {
    match output {
        None | Some(Value::Null) => (ResultContent::default(), false),
        Some(Value::String(s)) => (ResultContent::Text(Cow::Owned(s.clone())), false),
        Some(Value::Array(parts))
            if parts.iter().all(|p| {
                matches!(
                    p.get("type").and_then(Value::as_str),
                    Some("input_text" | "output_text" | "text")
                )
            }) =>
        {
            let texts = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str));
            let text = message::join_result_texts(texts);
            (ResultContent::Text(Cow::Owned(text)), false)
        }
        Some(Value::Object(o)) if o.get("content").is_some_and(Value::is_string) => {
            let failed = o.get("success").and_then(Value::as_bool) == Some(false);
            let (content, _) = self::output(o.get("content"));
            (content, failed)
        }
        Some(other) => (ResultContent::from_value(other.clone()), false),
    }
}

/// Codex's token counts (`input_tokens` includes the cached ones) as the
/// message stream's.
fn usage(counts: &Value) -> Option<Usage> {
    let n = |key: &str| counts.get(key).and_then(Value::as_u64);
    let input = n("input_tokens")?;
    let cached = n("cached_input_tokens").unwrap_or(0);
    let usage = Usage {
        input_tokens: Some(input.saturating_sub(cached)),
        output_tokens: n("output_tokens"),
        cache_creation_input_tokens: None,
        cache_read_input_tokens: (cached > 0).then_some(cached),
    };
    Some(usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Reads `lines` as a rollout; the records as JSON values.
    fn read(lines: &[Value]) -> (Vec<Value>, Report) {
        let mut reader = Reader::default();
        for line in lines {
            reader.line(line.clone()).unwrap();
        }
        let (conv, report) = reader.finish("r.jsonl").unwrap();
        (crate::format::read::record_values(conv), report)
    }

    fn line(kind: &str, payload: Value) -> Value {
        json!({"timestamp": "2026-08-10T09:00:00.000Z", "type": kind, "payload": payload})
    }

    fn meta() -> Value {
        line(
            "session_meta",
            json!({"id": "s1", "timestamp": "2026-08-10T09:00:00.000Z", "cwd": "/w",
                   "originator": "codex_exec", "cli_version": "0.171.0",
                   "git": {"branch": "main"}}),
        )
    }

    fn user(text: &str) -> Value {
        line(
            "response_item",
            json!({"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": text}]}),
        )
    }

    fn assistant(text: &str) -> Value {
        line(
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": text}]}),
        )
    }

    fn content(record: &Value) -> &Value {
        &record["content"]
    }

    #[test]
    fn a_shell_turn_with_reasoning_and_usage() {
        let (records, report) = read(&[
            meta(),
            line("turn_context", json!({"model": "gpt-5.6", "cwd": "/w"})),
            line(
                "response_item",
                json!({"type": "message", "role": "developer",
                       "content": [{"type": "input_text", "text": "be careful"}]}),
            ),
            user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
            user("List it."),
            line(
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "ls first"}],
                       "encrypted_content": "opaque"}),
            ),
            line(
                "event_msg",
                json!({"type": "agent_reasoning", "text": "ls first"}),
            ),
            line(
                "response_item",
                json!({"type": "function_call", "name": "exec_command",
                       "arguments": "{\"cmd\":\"ls\",\"workdir\":\"/w\"}", "call_id": "c1"}),
            ),
            line(
                "response_item",
                json!({"type": "custom_tool_call", "name": "apply_patch",
                       "input": "*** Begin Patch", "call_id": "c2"}),
            ),
            line(
                "response_item",
                json!({"type": "function_call_output", "call_id": "c1", "output": "a\nb"}),
            ),
            line(
                "response_item",
                json!({"type": "custom_tool_call_output", "call_id": "c2",
                       "output": {"content": "patch failed", "success": false}}),
            ),
            assistant("Done."),
            line(
                "event_msg",
                json!({"type": "token_count", "info": {"last_token_usage":
                       {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 2}}}),
            ),
            line(
                "event_msg",
                json!({"type": "thread_name_updated", "thread_name": "Listing"}),
            ),
            line("web_search_call", json!({})),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "no timestamp"}]}}),
        ]);
        assert_eq!(records.len(), 5, "{records:#?}");
        assert_eq!(records[0]["role"], "user");
        assert_eq!(
            content(&records[0]),
            &json!([{"type": "text", "text": "List it."}])
        );
        assert_eq!(records[1]["role"], "assistant");
        assert_eq!(records[1]["model"], "gpt-5.6");
        assert_eq!(
            content(&records[1]),
            &json!([
                {"type": "thinking", "thinking": "ls first"},
                {"type": "tool_use", "id": "c1", "name": "Bash",
                 "input": {"command": "ls", "workdir": "/w"}},
                {"type": "tool_use", "id": "c2", "name": "apply_patch", "input": "*** Begin Patch"}
            ])
        );
        assert_eq!(
            content(&records[2]),
            &json!([
                {"type": "tool_result", "tool_use_id": "c1", "content": "a\nb"},
                {"type": "tool_result", "tool_use_id": "c2", "content": "patch failed", "is_error": true}
            ])
        );
        assert_eq!(
            content(&records[3]),
            &json!([{"type": "text", "text": "Done."}])
        );
        assert_eq!(
            records[3]["usage"],
            json!({"input_tokens": 6, "output_tokens": 2, "cache_read_input_tokens": 4})
        );
        assert_eq!(records[4]["kind"], "meta");
        assert_eq!(records[4]["id"], "s1");
        assert_eq!(records[4]["cwd"], "/w");
        assert_eq!(records[4]["git_branch"], "main");
        assert_eq!(records[4]["title"], "Listing");
        assert_eq!(report.count(dropped::CONTEXT), 2);
        assert_eq!(report.count(dropped::ENCRYPTED), 1);
        assert_eq!(report.count(dropped::NO_TIMESTAMP), 1);
    }

    #[test]
    fn thinking_only_in_events_rollbacks_and_compaction() {
        let (records, report) = read(&[
            meta(),
            user("one"),
            line(
                "event_msg",
                json!({"type": "agent_reasoning", "text": "agy thought this"}),
            ),
            assistant("first"),
            user("two"),
            assistant("second"),
            user("three"),
            assistant("third"),
            line(
                "event_msg",
                json!({"type": "thread_rolled_back", "num_turns": 2}),
            ),
            line("compacted", json!({"message": "We said one and first."})),
            user("four"),
        ]);
        let texts: Vec<String> = records
            .iter()
            .filter(|r| r["kind"] == "message")
            .map(|r| content(r).to_string())
            .collect();
        assert_eq!(
            texts,
            [
                json!([{"type": "text", "text": "one"}]).to_string(),
                json!([{"type": "thinking", "thinking": "agy thought this"},
                       {"type": "text", "text": "first"}])
                .to_string(),
                json!([{"type": "text", "text": "We said one and first."}]).to_string(),
                json!([{"type": "text", "text": "four"}]).to_string(),
            ]
        );
        assert_eq!(records[2]["implicit"], true);
        assert_eq!(report.count(dropped::ROLLED_BACK), 4);
        assert_eq!(report.count(dropped::COMPACTED), 1);
    }

    #[test]
    fn bad_rollouts_are_refused() {
        let mut reader = Reader::default();
        let err = reader.line(user("hi")).unwrap_err();
        assert!(err.contains("not session_meta"), "{err}");
        let mut reader = Reader::default();
        let err = reader.line(json!([1])).unwrap_err();
        assert!(err.contains("JSON object"), "{err}");
        let mut reader = Reader::default();
        let err = reader
            .line(json!({"timestamp": "2026-08-10T09:00:00Z", "payload": {}}))
            .unwrap_err();
        assert!(err.contains("\"type\""), "{err}");
        let err = Reader::default().finish("empty.jsonl").unwrap_err();
        assert!(err.to_string().contains("empty.jsonl: no session_meta"));
    }

    #[test]
    fn images_and_outputs() {
        let source = image_source("data:image/png;base64,AAAA");
        assert_eq!(source.source_type, "base64");
        assert_eq!(source.media_type.as_deref(), Some("image/png"));
        assert_eq!(source.data.as_deref(), Some("AAAA"));
        let source = image_source("https://example.com/a.png");
        assert_eq!(source.url.as_deref(), Some("https://example.com/a.png"));
        let parts =
            json!([{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]);
        assert!(matches!(
            output(Some(&parts)),
            // Joined as the message stream joins a result's text blocks.
            (ResultContent::Text(t), false) if t == "ab"
        ));
    }
}
