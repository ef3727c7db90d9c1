//! The message stream: what `agy-decode` writes and `agy-encode` reads.
//!
//! One JSON object per line. Content blocks have the shape of the Anthropic
//! Messages API and Claude Code transcripts so that existing `jq` habits
//! work; `man agy-decode` documents every record. The same types serve both
//! directions, so what decode writes is by construction what encode reads.
//! Absent values are omitted on output and `null` reads as absent on input.

mod base64;
mod block;
mod content;

pub use crate::agy::uri::{path_to_uri, uri_to_path};
pub use base64::{base64_decode, base64_encode};
pub use block::{block_keys, Block, ImageSource, BLOCK_KEYS};
pub use content::{
    join_result_texts, object_json, Listing, ListingEntry, ObjectJson, ResultContent, ToolInput,
    LISTING_KEYS,
};

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::stream::json;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    /// A bookkeeping step (`agy-decode --all`): checkpoints, notices, task
    /// boundaries, and kinds nothing here understands.
    System,
}

/// Token counts of one model turn, under the Anthropic names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
}

impl Usage {
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A `message` record as written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message<'a> {
    pub conversation: &'a str,
    pub kind: &'static str,
    pub role: Role,
    /// System messages: the step's type, unprefixed (`TASK_BOUNDARY`), or
    /// its number when the CLI's enum has no name for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_type: Option<Cow<'a, str>>,
    /// The `idx` of the step the message comes from: what `agy-encode
    /// --onto` matches an edited stream to its source by. Absent on
    /// messages written by hand (they are new).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idx: Option<i64>,
    /// User messages the system wrote (source USER_IMPLICIT).
    #[serde(skip_serializing_if = "is_false")]
    pub implicit: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// System messages of a kind nothing here reads (`--all`): the whole
    /// Step as hex, so agy-encode can write it back as it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<Cow<'a, str>>,
    /// The step's blob could not be read whole; the message holds its
    /// readable part (`agy-decode` says on stderr what was lost).
    #[serde(skip_serializing_if = "is_false")]
    pub damaged: bool,
    pub content: Vec<Block<'a>>,
}

impl Message<'_> {
    /// Writes the record as one JSON line (without the newline): the same
    /// bytes `serde_json` writes for it, but the text of blocks, often
    /// megabytes of tool output, goes through [`json::write_str`], which
    /// skips clean runs eight bytes at a time; serde_json's escaper looks at
    /// every byte and was the largest cost of agy-decode.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"conversation\":");
        json::write_str(out, self.conversation);
        out.extend_from_slice(b",\"kind\":");
        json::write_str(out, self.kind);
        out.extend_from_slice(b",\"role\":");
        write_serde(out, &self.role);
        if let Some(step_type) = &self.step_type {
            out.extend_from_slice(b",\"step_type\":");
            json::write_str(out, step_type);
        }
        if let Some(idx) = self.idx {
            out.extend_from_slice(b",\"idx\":");
            json::write_i64(out, idx);
        }
        if self.implicit {
            out.extend_from_slice(b",\"implicit\":true");
        }
        for (key, value) in [
            ("timestamp", self.timestamp.as_deref()),
            ("model", self.model.as_deref()),
            ("stop_reason", self.stop_reason.as_deref()),
        ] {
            if let Some(value) = value {
                out.push(b',');
                json::write_key(out, key);
                json::write_str(out, value);
            }
        }
        if let Some(usage) = &self.usage {
            out.extend_from_slice(b",\"usage\":");
            write_serde(out, usage);
        }
        if let Some(raw) = &self.raw {
            out.extend_from_slice(b",\"raw\":");
            json::write_str(out, raw);
        }
        if self.damaged {
            out.extend_from_slice(b",\"damaged\":true");
        }
        out.extend_from_slice(b",\"content\":[");
        for (i, block) in self.content.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            block.write_json(out);
        }
        out.extend_from_slice(b"]}");
    }
}

fn write_serde(out: &mut Vec<u8>, value: &impl Serialize) {
    serde_json::to_writer(&mut *out, value).expect("serializing to a Vec cannot fail");
}

/// Titles made from the first user text are cut to this many characters.
pub const TITLE_CHARS: usize = 80;

/// The title of a conversation that has none of its own: the first line of
/// its first user text, trimmed, cut to [`TITLE_CHARS`] characters. One
/// rule for agy-decode's meta record, agy-encode's trajectory summary and
/// agy-render's header, so a conversation is called the same everywhere; a
/// title is one line, because lists (agy's `/resume` picker, an index page)
/// show it as one.
pub fn title_from_text(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("").trim();
    line.chars().take(TITLE_CHARS).collect()
}

/// The `meta` record as written, once per conversation after its last
/// message.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Meta<'a> {
    pub conversation: &'a str,
    pub kind: &'static str,
    pub id: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The conversation that spawned this one (a subagent's parent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_conversation_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkedFrom>,
    /// Why the conversation's messages are not all of it: the row stream
    /// said it could not all be read, or was cut short. Written, and
    /// refused where a whole conversation is needed (agy-encode --onto).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
}

/// Where a forked conversation was cut from (a `parent_references` row):
/// `{"conversation_id":…,"step_index":…,"trajectory_id":…,
/// "reference_type":"FORK"|"SUBAGENT_FORK"}`, each key only when recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkedFrom {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_index: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_type: Option<String>,
}

/// The keys of each record kind: what agy-decode writes and agy-encode
/// reads (`damaged` is written and deliberately not read back). A key
/// outside its kind's list is not read, and agy-encode says so: a jq edit
/// that sets one (`.title` on a message) would otherwise change nothing
/// without a word.
pub const RECORD_KEYS: &[(&str, &[&str])] = &[
    (
        "message",
        &[
            "conversation",
            "kind",
            "role",
            "step_type",
            "idx",
            "raw",
            "damaged",
            "implicit",
            "timestamp",
            "model",
            "stop_reason",
            "usage",
            "content",
        ],
    ),
    (
        "meta",
        &[
            "conversation",
            "kind",
            "id",
            "timestamp",
            "cwd",
            "git_branch",
            "title",
            "model",
            "parent_conversation_id",
            "forked_from",
            "incomplete",
        ],
    ),
    // A brain artifact (agy-decode writes it; agy-encode writes it back).
    (
        "artifact",
        &["conversation", "kind", "name", "time", "text"],
    ),
];

/// The keys of a record of `kind`, if the message stream defines the kind.
pub fn record_keys(kind: &str) -> Option<&'static [&'static str]> {
    RECORD_KEYS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, keys)| *keys)
}

/// What a line holds that no reader reads: each key outside its record's
/// or its block's list ([`RECORD_KEYS`], [`BLOCK_KEYS`]), said as `key
/// "text" of a thinking block`. Empty for a line that is not a JSON object.
pub fn unread_keys(line: &[u8]) -> Vec<String> {
    let mut unread = Vec::new();
    let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
        return unread;
    };
    let Some(kind) = record.get("kind").and_then(Value::as_str) else {
        return unread;
    };
    let Some(keys) = record_keys(kind) else {
        return unread;
    };
    for key in record.keys().filter(|k| !keys.contains(&k.as_str())) {
        unread.push(format!("key {key:?} of a {kind} record"));
    }
    let blocks = record.get("content").and_then(Value::as_array);
    for block in blocks.into_iter().flatten().filter_map(Value::as_object) {
        let Some(block_type) = block.get("type").and_then(Value::as_str) else {
            continue;
        };
        let Some(keys) = block_keys(block_type) else {
            continue;
        };
        for key in block.keys().filter(|k| !keys.contains(&k.as_str())) {
            unread.push(format!("key {key:?} of a {block_type} block"));
        }
    }
    unread
}

/// Any record of the message stream as read: the union of the `message` and
/// `meta` fields, checked by the reader. Keys outside a record's kind are
/// not read (hand-converted transcripts may carry extra bookkeeping); the
/// reader lists them in [`InputRecord::unread`] so agy-encode can say so.
///
/// Its strings borrow from the line where they need no unescaping, as the
/// blocks' do: owned, the record-level ones (the conversation id, kind,
/// timestamp, model, a system step's `raw` hex) were five allocations a
/// record on the reading thread and five frees on agy-encode's other.
#[derive(Debug, Default, PartialEq, Deserialize)]
pub struct InputRecord<'a> {
    pub conversation: Option<Cow<'a, str>>,
    pub kind: Option<Cow<'a, str>>,
    pub role: Option<Role>,
    pub timestamp: Option<Cow<'a, str>>,
    pub model: Option<Cow<'a, str>>,
    pub stop_reason: Option<Cow<'a, str>>,
    pub usage: Option<Usage>,
    #[serde(borrow)]
    pub content: Option<Vec<Block<'a>>>,
    pub id: Option<Cow<'a, str>>,
    pub cwd: Option<Cow<'a, str>>,
    pub git_branch: Option<Cow<'a, str>>,
    pub title: Option<Cow<'a, str>>,
    pub step_type: Option<Cow<'a, str>>,
    pub idx: Option<i64>,
    pub implicit: Option<bool>,
    pub raw: Option<Cow<'a, str>>,
    pub parent_conversation_id: Option<Cow<'a, str>>,
    pub forked_from: Option<ForkedFrom>,
    /// A `meta` record's word that the conversation is not whole.
    pub incomplete: Option<Cow<'a, str>>,
    /// An `artifact` record's file name, time and Markdown.
    pub name: Option<Cow<'a, str>>,
    pub time: Option<Cow<'a, str>>,
    pub text: Option<Cow<'a, str>>,
    /// Keys of the line that nothing reads ([`unread_keys`]); filled by
    /// [`crate::stream::message_reader::read_line`].
    #[serde(skip)]
    pub unread: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_first_line_cut_by_characters() {
        let text = "ü".repeat(100);
        assert_eq!(title_from_text(&text).chars().count(), TITLE_CHARS);
        assert_eq!(title_from_text("  short \n"), "short");
        assert_eq!(
            title_from_text("\n\n  Fix the parser \nthen the tests"),
            "Fix the parser"
        );
        assert_eq!(title_from_text(" \n "), "");
    }

    #[test]
    fn hand_written_json_is_what_serde_writes() {
        let source = ImageSource {
            source_type: "base64".into(),
            media_type: Some("image/png".into()),
            data: Some("iVBO".into()),
            url: None,
        };
        let blocks = vec![
            Block::text("plain \"quoted\"\n\u{1}é✓".into()),
            Block::Text {
                text: "x".repeat(40).into(),
                field: Some("task_name".into()),
            },
            Block::Thinking {
                thinking: "hmm".into(),
                signature: Some("c2ln".into()),
            },
            Block::Thinking {
                thinking: "".into(),
                signature: None,
            },
            Block::ToolUse {
                id: "call_1".into(),
                name: "Bash".into(),
                input: ToolInput::from_arguments_json(r#"{"command":"ls","z":1,"a":[true]}"#),
                signature: Some("00ff".into()),
            },
            Block::ToolUse {
                id: "call_2".into(),
                name: "x".into(),
                input: ToolInput::from_arguments_json("not json"),
                signature: None,
            },
            Block::ToolResult {
                tool_use_id: "call_1".into(),
                content: ResultContent::Text("out\tput\\".repeat(3).into()),
                is_error: true,
            },
            Block::ToolResult {
                tool_use_id: "call_2".into(),
                content: ResultContent::Structured(
                    serde_json::json!([{"name": "a", "is_dir": true}]),
                ),
                is_error: false,
            },
            Block::Image {
                source: source.clone(),
            },
            Block::Document { source },
        ];
        let full = Message {
            conversation: "c\"1",
            kind: "message",
            role: Role::System,
            step_type: Some("TASK_BOUNDARY".into()),
            idx: Some(-3),
            implicit: true,
            timestamp: Some("2026-08-10T09:14:03Z".into()),
            model: Some("gemini".into()),
            stop_reason: Some("tool_use".into()),
            usage: Some(Usage {
                input_tokens: Some(1),
                output_tokens: None,
                cache_creation_input_tokens: Some(3),
                cache_read_input_tokens: None,
            }),
            raw: Some("0801".into()),
            damaged: true,
            content: blocks,
        };
        let bare = Message {
            conversation: "c",
            kind: "message",
            role: Role::User,
            step_type: None,
            idx: None,
            implicit: false,
            timestamp: None,
            model: None,
            stop_reason: None,
            usage: None,
            raw: None,
            damaged: false,
            content: Vec::new(),
        };
        for message in [full, bare] {
            let mut ours = Vec::new();
            message.write_json(&mut ours);
            let theirs = serde_json::to_vec(&message).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(theirs).unwrap()
            );
        }
    }
}
