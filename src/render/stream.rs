//! agy-decode's message stream as agy-render reads it: leniently.
//!
//! The renderer is a reader for people, so it must not break when the
//! stream grows. Keys it does not know are ignored, and every key it does
//! know is optional and read as a JSON value first, so a key whose type
//! changes (or a stream from another writer) gives a page with that field
//! missing rather than no page at all. Only `conversation` and `kind` are
//! required: without them a line cannot be placed.

use serde::Deserialize;
use serde_json::Value;

/// One line of the stream, message or meta.
#[derive(Debug, Default, Deserialize)]
pub struct Record {
    pub conversation: String,
    pub kind: String,
    #[serde(default)]
    pub role: Option<Value>,
    #[serde(default)]
    pub step_type: Option<Value>,
    #[serde(default)]
    pub idx: Option<Value>,
    #[serde(default)]
    pub implicit: Option<Value>,
    #[serde(default)]
    pub timestamp: Option<Value>,
    #[serde(default)]
    pub model: Option<Value>,
    #[serde(default)]
    pub stop_reason: Option<Value>,
    #[serde(default)]
    pub usage: Option<Value>,
    /// An array of blocks; a plain string (the Messages API's shorthand)
    /// counts as one text block.
    #[serde(default)]
    pub content: Option<Value>,
    /// `true`, or a string saying what was lost: the step's blob was cut
    /// short or stopped making sense, and what is shown is the readable part.
    #[serde(default)]
    pub damaged: Option<Value>,
    // The meta record's keys.
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    pub cwd: Option<Value>,
    #[serde(default)]
    pub git_branch: Option<Value>,
    #[serde(default)]
    pub title: Option<Value>,
    #[serde(default)]
    pub parent_conversation_id: Option<Value>,
    #[serde(default)]
    pub forked_from: Option<Value>,
}

/// Whose a message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    System,
}

/// Token counts, as summed over a conversation's assistant messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
}

impl Tokens {
    pub fn add(&mut self, other: Tokens) {
        self.input += other.input;
        self.output += other.output;
        self.cache_creation += other.cache_creation;
        self.cache_read += other.cache_read;
    }

    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_creation + self.cache_read
    }

    pub fn is_zero(&self) -> bool {
        self.total() == 0
    }
}

/// The string in `value`, if it is one.
pub fn text(value: &Option<Value>) -> Option<&str> {
    value.as_ref().and_then(Value::as_str)
}

impl Record {
    pub fn parse(line: &[u8]) -> Result<Record, String> {
        serde_json::from_slice(line).map_err(|e| format!("not a message record: {e}"))
    }

    /// The role, for a message; `None` for a role nothing here knows.
    pub fn role(&self) -> Option<Role> {
        match text(&self.role)? {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "system" => Some(Role::System),
            _ => None,
        }
    }

    pub fn timestamp(&self) -> Option<&str> {
        text(&self.timestamp)
    }

    pub fn model(&self) -> Option<&str> {
        text(&self.model)
    }

    pub fn is_implicit(&self) -> bool {
        self.implicit.as_ref().and_then(Value::as_bool) == Some(true)
    }

    /// Whether the message is marked damaged, and what the mark says when
    /// it says more than `true`.
    pub fn damage(&self) -> Option<Option<&str>> {
        match self.damaged.as_ref()? {
            Value::Bool(true) => Some(None),
            Value::String(s) if !s.is_empty() => Some(Some(s)),
            Value::Object(map) if !map.is_empty() => Some(None),
            _ => None,
        }
    }

    /// The step type of a system message, as text (a name or a number).
    pub fn step_type(&self) -> Option<String> {
        match self.step_type.as_ref()? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    pub fn idx(&self) -> Option<u64> {
        self.idx.as_ref().and_then(Value::as_u64)
    }

    /// The usage counts; keys that are absent or not counts are zero.
    pub fn tokens(&self) -> Tokens {
        let Some(Value::Object(usage)) = &self.usage else {
            return Tokens::default();
        };
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        Tokens {
            input: count("input_tokens"),
            output: count("output_tokens"),
            cache_creation: count("cache_creation_input_tokens"),
            cache_read: count("cache_read_input_tokens"),
        }
    }

    /// The content blocks. A string is one text block; anything else that
    /// is not an array is no blocks.
    pub fn blocks(&self) -> Blocks<'_> {
        match &self.content {
            Some(Value::Array(items)) => Blocks::Array(items),
            Some(Value::String(text)) => Blocks::Text(text),
            _ => Blocks::Array(&[]),
        }
    }
}

pub enum Blocks<'a> {
    Array(&'a [Value]),
    Text(&'a str),
}

/// One content block, as far as the renderer tells blocks apart.
pub enum Block<'a> {
    Text(&'a str),
    Thinking(&'a str),
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a Value,
        is_error: bool,
    },
    /// An image or document: its `source`.
    Media {
        image: bool,
        source: &'a Value,
    },
    /// A block of a type nothing here knows, shown as JSON.
    Other(&'a Value),
}

static NULL: Value = Value::Null;

impl<'a> Block<'a> {
    pub fn of(value: &'a Value) -> Block<'a> {
        let str_of = |key: &str| value.get(key).and_then(Value::as_str);
        match str_of("type") {
            Some("text") => match str_of("text") {
                Some(text) => Block::Text(text),
                None => Block::Other(value),
            },
            Some("thinking") => Block::Thinking(str_of("thinking").unwrap_or("")),
            Some("tool_use") => Block::ToolUse {
                id: str_of("id").unwrap_or(""),
                name: str_of("name").unwrap_or("(unnamed tool)"),
                input: value.get("input").unwrap_or(&NULL),
            },
            Some("tool_result") => Block::ToolResult {
                tool_use_id: str_of("tool_use_id").unwrap_or(""),
                content: value.get("content").unwrap_or(&NULL),
                is_error: value.get("is_error").and_then(Value::as_bool) == Some(true),
            },
            Some(kind @ ("image" | "document")) => Block::Media {
                image: kind == "image",
                source: value.get("source").unwrap_or(&NULL),
            },
            _ => Block::Other(value),
        }
    }
}

impl<'a> Blocks<'a> {
    pub fn iter(&self) -> impl Iterator<Item = Block<'a>> + '_ {
        let (items, text): (&'a [Value], Option<&'a str>) = match *self {
            Blocks::Array(items) => (items, None),
            Blocks::Text(text) => (&[], Some(text)),
        };
        text.map(Block::Text)
            .into_iter()
            .chain(items.iter().map(Block::of))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_and_odd_types_are_tolerated() {
        let line = br#"{"conversation":"c","kind":"message","role":"assistant","idx":"x","timestamp":7,"usage":{"input_tokens":5,"output_tokens":"many"},"damaged":true,"raw":"00ff","new_key":[1],"content":[{"type":"text","text":"hi"},{"type":"hologram"}]}"#;
        let record = Record::parse(line).unwrap();
        assert_eq!(record.role(), Some(Role::Assistant));
        assert_eq!(record.timestamp(), None);
        assert_eq!(record.idx(), None);
        assert_eq!(record.damage(), Some(None));
        assert_eq!(
            record.tokens(),
            Tokens {
                input: 5,
                ..Tokens::default()
            }
        );
        let blocks = record.blocks();
        let kinds: Vec<_> = blocks
            .iter()
            .map(|b| matches!(b, Block::Text("hi")))
            .collect();
        assert_eq!(kinds, [true, false]);
    }

    #[test]
    fn a_line_without_conversation_or_kind_is_refused() {
        assert!(Record::parse(br#"{"kind":"message"}"#).is_err());
        assert!(Record::parse(br#"{"conversation":"c"}"#).is_err());
        assert!(Record::parse(b"[1]").is_err());
    }

    #[test]
    fn string_content_is_one_text_block() {
        let record = Record::parse(
            br#"{"conversation":"c","kind":"message","role":"user","content":"hello"}"#,
        )
        .unwrap();
        let blocks = record.blocks();
        assert!(matches!(blocks.iter().next(), Some(Block::Text("hello"))));
    }
}
