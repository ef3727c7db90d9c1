//! The sequencer: one pass over a conversation's messages that makes the
//! API turns, applying the rules [`super`] lists and counting each change.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{
    block_as_text, change, is_name_char, is_web_url, object, orphan_text, text_block, Kept, Msg,
    Report, Rules, Sequenced, Thinking, Turn, IMAGE_TYPES, NO_RESULT, OPENING,
};
use crate::stream::message::{self, Block, ImageSource, ResultContent, Role, ToolInput};

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

struct Sequencer<'r> {
    rules: Rules,
    report: &'r mut Report,
    out: Sequenced,
    /// Calls of the last assistant turn still waiting for their result:
    /// (id in the stream, id written).
    pending: Vec<(String, String)>,
    ids_used: HashSet<String>,
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
                        continue;
                    }
                    // OpenCode keeps its own provider's signatures only;
                    // the formats before it lose these without a count.
                    if signature.is_some() && self.rules.kept == Kept::Reasoning {
                        self.report.add(change::THINKING_SIGNATURES_DROPPED, 1);
                    }
                    if let Some(text) = self.thinking(thinking) {
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
                    let signed = self.rules.kept == Kept::Thoughts;
                    if signature.is_some() && !signed {
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
                    if let (true, Some(signature)) = (signed, signature) {
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

    /// With [`Kept::Thoughts`], an assistant's thinking kept as a
    /// `thinking` block (unless it is to be text); `None` otherwise.
    fn thought(&mut self, thinking: &str, signature: Option<&str>) -> Option<Value> {
        if self.rules.kept != Kept::Thoughts || self.rules.thinking == Thinking::Text {
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
        let kept = match self.rules.kept {
            Kept::ForPeople => Some(change::THINKING_APART),
            Kept::Reasoning => Some(change::REASONING),
            Kept::Nothing | Kept::Thoughts => None,
        };
        if let (Some(label), false) = (kept, thinking.trim().is_empty()) {
            self.report.add(label, 1);
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
