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

use serde_json::Value;

use super::{Conversation, Msg, Report, Thinking};
use crate::stream::message::{Block, Role, Usage};
pub use sequencer::sequence;

mod sequencer;

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
    pub const REASONING: &str = "thinking blocks kept as reasoning";
    pub const THINKING_SIGNATURES_DROPPED: &str = "thinking signatures dropped";
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

    /// Why an assistant turn ended, as the session formats say it: for its
    /// calls, at the maximum of tokens (its stop reason says so), or not.
    pub fn stop(&self) -> Stop {
        if self.has_calls() {
            Stop::Calls
        } else if self.stop_reason.as_deref() == Some("max_tokens") {
            Stop::MaxTokens
        } else {
            Stop::End
        }
    }
}

/// Why an assistant turn ended ([`Turn::stop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Calls,
    MaxTokens,
    End,
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
    /// What thinking becomes when it is not turned into text.
    pub kept: Kept,
    /// A tool input that is a JSON string stays a string (for a format
    /// with free-form tools, Codex's custom tools) instead of being wrapped
    /// as `{"arguments": …}`.
    pub string_inputs: bool,
}

impl Rules {
    /// The Messages API's rules: thinking dropped, system messages
    /// dropped, inputs objects.
    pub const DEFAULT: Rules = Rules {
        thinking: Thinking::Drop,
        keep_system: false,
        kept: Kept::Nothing,
        string_inputs: false,
    };
}

/// Where a format keeps thinking that is not turned into text (with
/// [`Thinking::Drop`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kept {
    /// Nowhere: it is dropped.
    #[default]
    Nothing,
    /// Thinking that is not blank stays in its turn as a
    /// `{"type": "thinking", "thinking": TEXT}` block, for a format that
    /// can show it to people without sending it to a model (Codex's
    /// `agent_reasoning` events).
    ForPeople,
    /// Gemini CLI: an assistant's thinking stays a `thinking` block with
    /// its signature (the session keeps it as thoughts, which the CLI
    /// shows but never sends), and tool calls keep their `signature`.
    /// Gemini may still accept agy's signatures, as agy's models are
    /// Gemini models; Anthropic never would.
    Thoughts,
    /// OpenCode: thinking that is not blank stays in its turn as a
    /// `thinking` block, which the session keeps as a reasoning part, a
    /// part of the history like any other (OpenCode decides what of it
    /// a model is sent); signatures are not kept.
    Reasoning,
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
mod tests;
