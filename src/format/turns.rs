//! Messages to API turns: the sequencing rules of the Messages API, which
//! both `--format anthropic` and `--format claude-code` follow (Claude Code
//! sends a resumed session to that API, and repairs, silently and lossily,
//! whatever breaks the rules; see the man page).
//!
//! The rules, and how each is met:
//! * The first message is the user's: an assistant opening gets a user turn
//!   before it saying so.
//! * Roles alternate: consecutive user messages, and consecutive assistant
//!   messages with no call between them, are merged into one turn.
//! * Each assistant turn's calls are answered by the next user turn, its
//!   `tool_result` blocks first. A result that comes later than that, or
//!   answers no call, is an orphan and becomes text; a call left without a
//!   result gets an `is_error` result that says so.
//! * Content is what the API knows: text that is not whitespace only,
//!   tool calls whose input is an object and whose ids and names match the
//!   API's patterns, results as text, images and documents of the media
//!   types the API takes (anything else becomes a note in text).
//! * Thinking never goes out as thinking (its signature is Gemini's, which
//!   Anthropic cannot verify): it is dropped, or turned into text.
//!
//! Blocks are built as JSON values in the API's shapes, so what is written
//! has exactly the keys the API defines.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{Conversation, Msg, Report, Thinking};
use crate::stream::message::{self, Block, ImageSource, ResultContent, Role, ToolInput, Usage};

/// The text of the error result a call with no result gets.
pub const NO_RESULT: &str =
    "No result was recorded for this call: agy never ran it, or its result was lost.";

/// The user turn put before a conversation that opens with the assistant.
pub const OPENING: &str = "(The conversation opens with an assistant turn.)";

/// The labels `--verbose` counts under.
pub mod change {
    pub const THINKING_DROPPED: &str = "thinking blocks dropped";
    pub const THINKING_TEXT: &str = "thinking blocks turned into text";
    pub const SIGNATURES_DROPPED: &str = "tool call signatures dropped";
    pub const BLANK_TEXT: &str = "whitespace-only texts dropped";
    pub const SYSTEM_KEPT: &str = "system messages moved into system";
    pub const SYSTEM_DROPPED: &str = "system messages dropped";
    pub const EMPTY_MESSAGES: &str = "messages left empty and dropped";
    pub const USER_MERGED: &str = "user messages merged into the turn before";
    pub const ASSISTANT_MERGED: &str = "assistant messages merged into the turn before";
    pub const UNANSWERED: &str = "calls without a result given an error result";
    pub const ORPHANS: &str = "results without a call turned into text";
    pub const STRUCTURED: &str = "structured results turned into text";
    pub const MEDIA_NOTES: &str = "images and documents replaced by a note";
    pub const MISPLACED: &str = "blocks the role cannot hold turned into text";
    pub const IDS: &str = "tool call ids rewritten";
    pub const NAMES: &str = "tool names rewritten";
    pub const INPUTS: &str = "tool inputs that are not objects wrapped";
    pub const THINKING_APART: &str = "thinking blocks kept for people only";
    pub const OPENING: &str = "opening user turns added";
    pub const TRAILING: &str = "trailing whitespace trimmed from the last turn";
    pub const THOUGHTS: &str = "thinking blocks kept as thoughts";
}

/// One API turn. A user turn's content is its `results`, then `blocks`.
#[derive(Clone, Debug)]
pub struct Turn {
    pub role: Role,
    pub results: Vec<Value>,
    pub blocks: Vec<Value>,
    /// Of the first message merged into the turn.
    pub timestamp: Option<String>,
    /// Of the last message merged into the turn that names them.
    pub model: Option<String>,
    pub stop_reason: Option<String>,
    pub usage: Option<Usage>,
    /// Every message of the turn was written by the system (`implicit`).
    pub implicit: bool,
}

impl Turn {
    pub fn new(role: Role, msg: Option<&Msg>) -> Turn {
        Turn {
            role,
            results: Vec::new(),
            blocks: Vec::new(),
            timestamp: msg.and_then(|m| m.timestamp.clone()),
            model: msg.and_then(|m| m.model.clone()),
            stop_reason: msg.and_then(|m| m.stop_reason.clone()),
            usage: msg.and_then(|m| m.usage.clone()),
            implicit: msg.is_some_and(|m| m.implicit),
        }
    }

    /// The turn's content blocks in order.
    pub fn into_content(self) -> Vec<Value> {
        let mut content = self.results;
        content.extend(self.blocks);
        content
    }

    pub fn has_calls(&self) -> bool {
        self.blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
    }
}

/// What sequencing makes of a conversation.
#[derive(Debug, Default)]
pub struct Sequenced {
    /// The text of system messages, when they are kept.
    pub system: Vec<String>,
    pub turns: Vec<Turn>,
    /// Every tool name the turns call, in order of first use.
    pub tool_names: Vec<String>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Rules {
    pub thinking: Thinking,
    /// System messages go into [`Sequenced::system`] (else they are
    /// dropped).
    pub keep_system: bool,
    /// With [`Thinking::Drop`], thinking that is not blank stays in its
    /// turn as a `{"type": "thinking", "thinking": TEXT}` block, for a
    /// format that can show it to people without sending it to a model
    /// (Codex's `agent_reasoning` events).
    pub thinking_apart: bool,
    /// A tool input that is a JSON string stays a string (for a format
    /// with free-form tools, Codex's custom tools) instead of being wrapped
    /// as `{"arguments": …}`.
    pub string_inputs: bool,
    /// Gemini CLI: an assistant's thinking that is not turned into text
    /// stays a `thinking` block with its signature (the session keeps it as
    /// thoughts, which the CLI shows but never sends), and tool calls keep
    /// their `signature`. Gemini may still accept agy's signatures, as
    /// agy's models are Gemini models; Anthropic never would.
    pub gemini: bool,
}

struct Sequencer<'r> {
    rules: Rules,
    report: &'r mut Report,
    out: Sequenced,
    /// Calls of the last assistant turn still waiting for their result:
    /// (id in the stream, id written).
    pending: Vec<(String, String)>,
    ids_used: HashSet<String>,
}

/// A conversation's turns for `agy-decode --format`, or `None`, said on
/// stderr, when none are left (`what` names what is then not written).
/// The messages are taken out of `conv`, so that it is not held twice.
pub fn sequence_conversation(
    conv: &mut Conversation,
    rules: Rules,
    report: &mut Report,
    what: &str,
) -> Option<Sequenced> {
    let sequenced = sequence(std::mem::take(&mut conv.messages), rules, report);
    if sequenced.turns.is_empty() {
        crate::error::warn(
            "agy-decode",
            format_args!(
                "conversation {} has no user or assistant content; no {what} written",
                conv.id
            ),
        );
        return None;
    }
    Some(sequenced)
}

/// Puts `messages` in the order and shape of API turns, counting every
/// change in `report`. Each message is dropped once its turn is made.
pub fn sequence(messages: Vec<Msg>, rules: Rules, report: &mut Report) -> Sequenced {
    let mut s = Sequencer {
        rules,
        report,
        out: Sequenced::default(),
        pending: Vec::new(),
        ids_used: HashSet::new(),
    };
    for msg in messages {
        match msg.role {
            Role::System => s.system(&msg),
            Role::Assistant => s.assistant(&msg),
            Role::User => s.user(&msg),
        }
    }
    s.close_pending();
    if s.out
        .turns
        .first()
        .is_some_and(|t| t.role == Role::Assistant)
    {
        let mut opening = Turn::new(Role::User, None);
        opening.timestamp = s.out.turns[0].timestamp.clone();
        opening.blocks.push(text_block(OPENING));
        s.out.turns.insert(0, opening);
        s.report.add(change::OPENING, 1);
    }
    s.out
}

impl Sequencer<'_> {
    fn system(&mut self, msg: &Msg) {
        let texts: Vec<&str> = msg
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text, .. } if !text.trim().is_empty() => Some(&**text),
                _ => None,
            })
            .collect();
        if !self.rules.keep_system || texts.is_empty() {
            self.report.add(change::SYSTEM_DROPPED, 1);
            return;
        }
        let kind = msg.step_type.as_deref().unwrap_or("SYSTEM");
        self.out
            .system
            .push(format!("[{kind}] {}", texts.join("\n")));
        self.report.add(change::SYSTEM_KEPT, 1);
    }

    fn assistant(&mut self, msg: &Msg) {
        let mut blocks = Vec::new();
        let mut calls = Vec::new();
        for block in &msg.content {
            match block {
                Block::Thinking {
                    thinking,
                    signature,
                } => {
                    if let Some(kept) = self.thought(thinking, signature.as_deref()) {
                        blocks.push(kept);
                    } else if let Some(text) = self.thinking(thinking) {
                        blocks.push(text);
                    }
                }
                Block::Text { text, .. } => {
                    if let Some(text) = self.text(text) {
                        blocks.push(text);
                    }
                }
                Block::ToolUse {
                    id,
                    name,
                    input,
                    signature,
                } => {
                    let written = self.call_id(id);
                    let name = self.tool_name(name);
                    if signature.is_some() && !self.rules.gemini {
                        self.report.add(change::SIGNATURES_DROPPED, 1);
                    }
                    let input = match input {
                        ToolInput::Object(args) => {
                            Value::Object(args.iter().cloned().collect::<Map<_, _>>())
                        }
                        ToolInput::Other(value @ Value::String(_)) if self.rules.string_inputs => {
                            value.clone()
                        }
                        ToolInput::Other(value) => {
                            self.report.add(change::INPUTS, 1);
                            let mut wrapped = Map::new();
                            wrapped.insert("arguments".into(), value.clone());
                            Value::Object(wrapped)
                        }
                    };
                    if !self.out.tool_names.contains(&name) {
                        self.out.tool_names.push(name.clone());
                    }
                    let mut call = object([
                        ("type", "tool_use".into()),
                        ("id", written.clone().into()),
                        ("name", name.into()),
                        ("input", input),
                    ]);
                    if let (true, Some(signature)) = (self.rules.gemini, signature) {
                        call.as_object_mut()
                            .expect("an object")
                            .insert("signature".into(), signature.as_ref().into());
                    }
                    blocks.push(call);
                    calls.push((id.to_string(), written));
                }
                other => {
                    self.report.add(change::MISPLACED, 1);
                    blocks.push(text_block(&block_as_text(other)));
                }
            }
        }
        if blocks.is_empty() {
            self.report.add(change::EMPTY_MESSAGES, 1);
            return;
        }
        self.close_pending();
        match self.out.turns.last_mut() {
            Some(turn) if turn.role == Role::Assistant => {
                self.report.add(change::ASSISTANT_MERGED, 1);
                turn.blocks.extend(blocks);
                if msg.model.is_some() {
                    turn.model.clone_from(&msg.model);
                }
                if msg.stop_reason.is_some() {
                    turn.stop_reason.clone_from(&msg.stop_reason);
                }
                if msg.usage.is_some() {
                    turn.usage.clone_from(&msg.usage);
                }
            }
            _ => {
                let mut turn = Turn::new(Role::Assistant, Some(msg));
                turn.blocks = blocks;
                self.out.turns.push(turn);
            }
        }
        self.pending = calls;
    }

    fn user(&mut self, msg: &Msg) {
        let mut results = Vec::new();
        let mut blocks = Vec::new();
        for block in &msg.content {
            match block {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => match self.pending.iter().position(|(id, _)| id == tool_use_id) {
                    Some(at) => {
                        let (_, written) = self.pending.remove(at);
                        results.push(self.result(&written, content, *is_error));
                    }
                    None => {
                        self.report.add(change::ORPHANS, 1);
                        let text = orphan_text(tool_use_id, &content.to_text(), *is_error);
                        blocks.push(text_block(&text));
                    }
                },
                Block::Text { text, .. } => {
                    if let Some(text) = self.text(text) {
                        blocks.push(text);
                    }
                }
                Block::Image { source } => blocks.push(self.image(source)),
                Block::Document { source } => blocks.push(self.document(source)),
                Block::Thinking { thinking, .. } => {
                    if let Some(text) = self.thinking(thinking) {
                        blocks.push(text);
                    }
                }
                Block::ToolUse { .. } => {
                    self.report.add(change::MISPLACED, 1);
                    blocks.push(text_block(&block_as_text(block)));
                }
            }
        }
        if results.is_empty() && blocks.is_empty() {
            self.report.add(change::EMPTY_MESSAGES, 1);
            return;
        }
        let turn = match self.out.turns.last_mut() {
            Some(turn) if turn.role == Role::User => {
                self.report.add(change::USER_MERGED, 1);
                turn.implicit &= msg.implicit;
                if turn.timestamp.is_none() {
                    turn.timestamp.clone_from(&msg.timestamp);
                }
                turn
            }
            _ => {
                self.out.turns.push(Turn::new(Role::User, Some(msg)));
                self.out.turns.last_mut().expect("just pushed")
            }
        };
        turn.results.extend(results);
        turn.blocks.extend(blocks);
    }

    /// Answers the calls still waiting with an error result, in the user
    /// turn after their assistant turn (made if there is none yet).
    fn close_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if self
            .out
            .turns
            .last()
            .is_some_and(|t| t.role == Role::Assistant)
        {
            self.out.turns.push(Turn::new(Role::User, None));
        }
        let turn = self.out.turns.last_mut().expect("a turn holds the calls");
        for (_, written) in self.pending.drain(..) {
            self.report.add(change::UNANSWERED, 1);
            turn.results.push(object([
                ("type", "tool_result".into()),
                ("tool_use_id", written.into()),
                ("content", NO_RESULT.into()),
                ("is_error", true.into()),
            ]));
        }
    }

    /// With [`Rules::gemini`], an assistant's thinking kept as a `thinking`
    /// block (unless it is to be text); `None` otherwise.
    fn thought(&mut self, thinking: &str, signature: Option<&str>) -> Option<Value> {
        if !self.rules.gemini || self.rules.thinking == Thinking::Text {
            return None;
        }
        if thinking.trim().is_empty() && signature.is_none() {
            return None;
        }
        self.report.add(change::THOUGHTS, 1);
        let mut block = object([("type", "thinking".into()), ("thinking", thinking.into())]);
        if let Some(signature) = signature {
            block
                .as_object_mut()
                .expect("an object")
                .insert("signature".into(), signature.into());
        }
        Some(block)
    }

    fn thinking(&mut self, thinking: &str) -> Option<Value> {
        if self.rules.thinking == Thinking::Text && !thinking.trim().is_empty() {
            self.report.add(change::THINKING_TEXT, 1);
            return Some(text_block(&format!("<thinking>\n{thinking}\n</thinking>")));
        }
        if self.rules.thinking_apart && !thinking.trim().is_empty() {
            self.report.add(change::THINKING_APART, 1);
            return Some(object([
                ("type", "thinking".into()),
                ("thinking", thinking.into()),
            ]));
        }
        self.report.add(change::THINKING_DROPPED, 1);
        None
    }

    fn text(&mut self, text: &str) -> Option<Value> {
        if text.trim().is_empty() {
            self.report.add(change::BLANK_TEXT, 1);
            return None;
        }
        Some(text_block(text))
    }

    fn result(&mut self, id: &str, content: &ResultContent<'_>, is_error: bool) -> Value {
        if !matches!(content, ResultContent::Text(_)) {
            self.report.add(change::STRUCTURED, 1);
        }
        let text = content.to_text();
        let mut block = object([("type", "tool_result".into()), ("tool_use_id", id.into())]);
        if !text.trim().is_empty() {
            block
                .as_object_mut()
                .expect("an object")
                .insert("content".into(), Value::String(text.into_owned()));
        } else if !text.is_empty() {
            self.report.add(change::BLANK_TEXT, 1);
        }
        if is_error {
            block
                .as_object_mut()
                .expect("an object")
                .insert("is_error".into(), true.into());
        }
        block
    }

    /// A unique id of the API's pattern `[A-Za-z0-9_-]+` for a call.
    fn call_id(&mut self, id: &str) -> String {
        let mut written = if id.is_empty() {
            "call".to_string()
        } else {
            id.chars()
                .map(|c| if is_name_char(c) { c } else { '_' })
                .collect()
        };
        if self.ids_used.contains(&written) {
            let base = written.clone();
            let mut n = 2;
            while self.ids_used.contains(&written) {
                written = format!("{base}_{n}");
                n += 1;
            }
        }
        if written != id {
            self.report.add(change::IDS, 1);
        }
        self.ids_used.insert(written.clone());
        written
    }

    /// A tool name of the API's pattern `[A-Za-z0-9_-]{1,64}`.
    fn tool_name(&mut self, name: &str) -> String {
        let mut written: String = name
            .chars()
            .map(|c| if is_name_char(c) { c } else { '_' })
            .take(64)
            .collect();
        if written.is_empty() {
            written = "tool".into();
        }
        if written != name {
            self.report.add(change::NAMES, 1);
        }
        written
    }

    fn image(&mut self, source: &ImageSource<'_>) -> Value {
        let media_type = source.media_type.as_deref();
        match (&*source.source_type, &source.data, &source.url) {
            ("base64", Some(data), _)
                if media_type.is_some_and(|t| IMAGE_TYPES.contains(&t)) && !data.is_empty() =>
            {
                object([
                    ("type", "image".into()),
                    (
                        "source",
                        object([
                            ("type", "base64".into()),
                            ("media_type", media_type.into()),
                            ("data", data.as_ref().into()),
                        ]),
                    ),
                ])
            }
            ("url", _, Some(url)) if is_web_url(url) => object([
                ("type", "image".into()),
                (
                    "source",
                    object([("type", "url".into()), ("url", url.as_ref().into())]),
                ),
            ]),
            _ => self.media_note("image", source),
        }
    }

    fn document(&mut self, source: &ImageSource<'_>) -> Value {
        let media_type = source.media_type.as_deref();
        let document = |source: Value| object([("type", "document".into()), ("source", source)]);
        match (&*source.source_type, &source.data, &source.url) {
            ("base64", Some(data), _) if media_type == Some("application/pdf") => {
                document(object([
                    ("type", "base64".into()),
                    ("media_type", "application/pdf".into()),
                    ("data", data.as_ref().into()),
                ]))
            }
            ("base64", Some(data), _) if media_type == Some("text/plain") => {
                match message::base64_decode(data).and_then(|b| String::from_utf8(b).ok()) {
                    Some(text) if !text.trim().is_empty() => document(object([
                        ("type", "text".into()),
                        ("media_type", "text/plain".into()),
                        ("data", text.into()),
                    ])),
                    _ => self.media_note("document", source),
                }
            }
            ("url", _, Some(url))
                if is_web_url(url) && media_type.is_none_or(|t| t == "application/pdf") =>
            {
                document(object([
                    ("type", "url".into()),
                    ("url", url.as_ref().into()),
                ]))
            }
            _ => self.media_note("document", source),
        }
    }

    fn media_note(&mut self, what: &str, source: &ImageSource<'_>) -> Value {
        self.report.add(change::MEDIA_NOTES, 1);
        let mut note = format!(
            "[{what} not included: {}",
            source.media_type.as_deref().unwrap_or("media type unknown")
        );
        match &source.url {
            Some(url) => note.push_str(&format!(", {url}]")),
            None => note.push_str(", inline data]"),
        }
        text_block(&note)
    }
}

/// A result that answers no call of the turn before, as user text: the
/// text agy-decode once wrote for such a result.
pub fn orphan_text(tool_use_id: &str, content: &str, is_error: bool) -> String {
    let error = if is_error { " (error)" } else { "" };
    format!("Tool result for {tool_use_id}{error}: {content}")
}

/// The image media types the Messages API accepts.
pub const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

fn is_web_url(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// A block a role cannot hold, as its JSON.
fn block_as_text(block: &Block<'_>) -> String {
    let mut out = Vec::new();
    block.write_json(&mut out);
    String::from_utf8(out).expect("JSON text is UTF-8")
}

pub fn text_block(text: &str) -> Value {
    object([("type", "text".into()), ("text", text.into())])
}

/// A JSON object with its keys in the order given.
pub fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::borrow::Cow;

    fn msg(role: Role, content: Vec<Block<'static>>) -> Msg {
        Msg {
            role,
            content,
            ..Msg::default()
        }
    }

    fn call(id: &str) -> Block<'static> {
        Block::ToolUse {
            id: Cow::Owned(id.into()),
            name: "Bash".into(),
            input: ToolInput::Object(vec![("command".into(), json!("ls"))]),
            signature: Some("00ff".into()),
        }
    }

    fn result(id: &str, text: &str) -> Block<'static> {
        Block::ToolResult {
            tool_use_id: Cow::Owned(id.into()),
            content: ResultContent::Text(Cow::Owned(text.into())),
            is_error: false,
        }
    }

    fn content(turn: &Turn) -> Value {
        Value::Array(turn.clone().into_content())
    }

    fn rules() -> Rules {
        Rules {
            thinking: Thinking::Drop,
            keep_system: true,
            ..Rules::default()
        }
    }

    #[test]
    fn parallel_results_become_one_user_turn_with_results_first() {
        let messages = vec![
            msg(Role::User, vec![Block::text("go".into())]),
            msg(Role::Assistant, vec![call("a"), call("b"), call("c")]),
            msg(Role::User, vec![result("b", "B")]),
            msg(Role::User, vec![Block::text("also this".into())]),
            msg(Role::User, vec![result("a", "A")]),
            msg(Role::Assistant, vec![Block::text("done".into())]),
            msg(Role::User, vec![result("c", "late")]),
        ];
        let mut report = Report::default();
        let s = sequence(messages.clone(), rules(), &mut report);
        let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
        assert_eq!(
            roles,
            [
                Role::User,
                Role::Assistant,
                Role::User,
                Role::Assistant,
                Role::User
            ]
        );
        assert_eq!(
            content(&s.turns[2]),
            json!([
                {"type": "tool_result", "tool_use_id": "b", "content": "B"},
                {"type": "tool_result", "tool_use_id": "a", "content": "A"},
                {"type": "tool_result", "tool_use_id": "c", "content": NO_RESULT, "is_error": true},
                {"type": "text", "text": "also this"}
            ])
        );
        assert_eq!(
            content(&s.turns[4]),
            json!([{"type": "text", "text": "Tool result for c: late"}])
        );
        assert_eq!(report.count(change::UNANSWERED), 1);
        assert_eq!(report.count(change::ORPHANS), 1);
        assert_eq!(report.count(change::USER_MERGED), 2);
        assert_eq!(report.count(change::SIGNATURES_DROPPED), 3);
        assert_eq!(s.tool_names, ["Bash"]);
    }

    #[test]
    fn openings_blanks_thinking_and_system() {
        let messages = vec![
            msg(
                Role::Assistant,
                vec![Block::Thinking {
                    thinking: "hm".into(),
                    signature: Some("sig".into()),
                }],
            ),
            msg(Role::Assistant, vec![Block::text("hello".into())]),
            msg(Role::Assistant, vec![Block::text("again".into())]),
            Msg {
                step_type: Some("CHECKPOINT".into()),
                ..msg(Role::System, vec![Block::text("title".into())])
            },
            msg(Role::User, vec![Block::text(" \n".into())]),
        ];
        let mut report = Report::default();
        let s = sequence(messages.clone(), rules(), &mut report);
        assert_eq!(s.turns.len(), 2);
        assert_eq!(
            content(&s.turns[0]),
            json!([{"type": "text", "text": OPENING}])
        );
        assert_eq!(
            content(&s.turns[1]),
            json!([{"type": "text", "text": "hello"}, {"type": "text", "text": "again"}])
        );
        assert_eq!(s.system, ["[CHECKPOINT] title"]);
        for (what, n) in [
            (change::THINKING_DROPPED, 1),
            (change::EMPTY_MESSAGES, 2),
            (change::ASSISTANT_MERGED, 1),
            (change::BLANK_TEXT, 1),
            (change::OPENING, 1),
            (change::SYSTEM_KEPT, 1),
        ] {
            assert_eq!(report.count(what), n, "{what}");
        }
        let text = sequence(
            messages[..1].to_vec(),
            Rules {
                thinking: Thinking::Text,
                keep_system: false,
                ..Rules::default()
            },
            &mut Report::default(),
        );
        assert_eq!(
            content(&text.turns[1]),
            json!([{"type": "text", "text": "<thinking>\nhm\n</thinking>"}])
        );
    }

    #[test]
    fn ids_names_inputs_and_media_are_made_acceptable() {
        let messages = vec![
            msg(
                Role::User,
                vec![
                    Block::Image {
                        source: ImageSource {
                            source_type: "base64".into(),
                            media_type: Some("image/heic".into()),
                            data: Some("AAAA".into()),
                            url: None,
                        },
                    },
                    Block::Document {
                        source: ImageSource {
                            source_type: "base64".into(),
                            media_type: Some("text/plain".into()),
                            data: Some(message::base64_encode(b"notes").into()),
                            url: None,
                        },
                    },
                ],
            ),
            msg(
                Role::Assistant,
                vec![
                    Block::ToolUse {
                        id: "call.1".into(),
                        name: "mcp:github/list".into(),
                        input: ToolInput::Other(json!("not json")),
                        signature: None,
                    },
                    call("call_1"),
                ],
            ),
            msg(
                Role::User,
                vec![Block::ToolResult {
                    tool_use_id: "call.1".into(),
                    content: ResultContent::Structured(json!({"file": "/a", "edited": true})),
                    is_error: true,
                }],
            ),
        ];
        let mut report = Report::default();
        let s = sequence(messages.clone(), rules(), &mut report);
        assert_eq!(
            content(&s.turns[0]),
            json!([
                {"type": "text", "text": "[image not included: image/heic, inline data]"},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}}
            ])
        );
        assert_eq!(
            content(&s.turns[1]),
            json!([
                {"type": "tool_use", "id": "call_1", "name": "mcp_github_list", "input": {"arguments": "not json"}},
                {"type": "tool_use", "id": "call_1_2", "name": "Bash", "input": {"command": "ls"}}
            ])
        );
        assert_eq!(
            content(&s.turns[2]),
            json!([
                {"type": "tool_result", "tool_use_id": "call_1", "content": "{\"file\":\"/a\",\"edited\":true}", "is_error": true},
                {"type": "tool_result", "tool_use_id": "call_1_2", "content": NO_RESULT, "is_error": true}
            ])
        );
        assert_eq!(report.count(change::IDS), 2);
        assert_eq!(report.count(change::NAMES), 1);
        assert_eq!(report.count(change::INPUTS), 1);
        assert_eq!(report.count(change::STRUCTURED), 1);
        assert_eq!(report.count(change::MEDIA_NOTES), 1);
    }
}
