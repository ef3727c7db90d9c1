//! Content blocks ([`Block`]): text, thinking, tool calls and results,
//! images and documents, read in one pass over their keys and written as
//! compact JSON in the documented key order.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::stream::json;

use super::content::{ResultContent, ToolInput};
#[cfg(doc)]
use super::Message;
use super::{is_false, write_serde};

/// `{"type":"base64","media_type":…,"data":…}`, or
/// `{"type":"url","media_type":…,"url":…}` for media agy holds by URI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImageSource<'a> {
    #[serde(rename = "type")]
    pub source_type: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<Cow<'a, str>>,
}

/// One content block.
///
/// Serialized by serde's derive (the tests compare [`Block::write_json`]
/// with it); deserialized by hand, see the `Deserialize` impl.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block<'a> {
    Text {
        text: Cow<'a, str>,
        /// In a system message, the payload field the text comes from
        /// (`task_name`, `message`, ...), so agy-encode can put it back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        field: Option<Cow<'a, str>>,
    },
    Thinking {
        #[serde(default)]
        thinking: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<Cow<'a, str>>,
    },
    ToolUse {
        id: Cow<'a, str>,
        name: Cow<'a, str>,
        input: ToolInput,
        /// agy's opaque per-call thinking signature (ChatToolCall field 7),
        /// as lowercase hex. Gemini wants it back on resume.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<Cow<'a, str>>,
    },
    ToolResult {
        tool_use_id: Cow<'a, str>,
        #[serde(default)]
        content: ResultContent<'a>,
        #[serde(default, skip_serializing_if = "is_false")]
        is_error: bool,
    },
    Image {
        source: ImageSource<'a>,
    },
    /// Media that is not an image (a PDF, audio, ...) attached to a user
    /// turn, in the shape of the Messages API's document block.
    Document {
        source: ImageSource<'a>,
    },
}

/// Reads a block in one pass over its keys, in any order. serde's derive
/// for an internally tagged enum first copies every field into a buffer to
/// find `type`; for the megabytes of tool output a message stream carries
/// that was a quarter of agy-encode's parsing.
impl<'de, 'a> Deserialize<'de> for Block<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BlockVisitor(std::marker::PhantomData))
    }
}

struct BlockVisitor<'a>(std::marker::PhantomData<Block<'a>>);

/// Stores a key's value, refusing a key given twice.
fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Option<T>,
    map: &mut A,
    key: &'static str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(key));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<'de, 'a> Visitor<'de> for BlockVisitor<'a> {
    type Value = Block<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block object with a \"type\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block<'a>, A::Error> {
        const TYPES: &[&str] = &[
            "text",
            "thinking",
            "tool_use",
            "tool_result",
            "image",
            "document",
        ];
        let mut block_type: Option<String> = None;
        let mut text: Option<String> = None;
        let mut field: Option<Option<String>> = None;
        let mut thinking: Option<Option<String>> = None;
        let mut signature: Option<Option<String>> = None;
        let mut id: Option<String> = None;
        let mut name: Option<String> = None;
        let mut input: Option<ToolInput> = None;
        let mut tool_use_id: Option<String> = None;
        let mut content: Option<ResultContent<'a>> = None;
        let mut is_error: Option<Option<bool>> = None;
        let mut source: Option<ImageSource<'a>> = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "type" => once(&mut block_type, &mut map, "type")?,
                "text" => once(&mut text, &mut map, "text")?,
                "field" => once(&mut field, &mut map, "field")?,
                "thinking" => once(&mut thinking, &mut map, "thinking")?,
                "signature" => once(&mut signature, &mut map, "signature")?,
                "id" => once(&mut id, &mut map, "id")?,
                "name" => once(&mut name, &mut map, "name")?,
                "input" => once(&mut input, &mut map, "input")?,
                "tool_use_id" => once(&mut tool_use_id, &mut map, "tool_use_id")?,
                "content" => once(&mut content, &mut map, "content")?,
                "is_error" => once(&mut is_error, &mut map, "is_error")?,
                "source" => once(&mut source, &mut map, "source")?,
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let block_type = block_type.ok_or_else(|| de::Error::missing_field("type"))?;
        let missing = |key: &'static str| de::Error::missing_field(key);
        Ok(match block_type.as_str() {
            "text" => Block::Text {
                text: Cow::Owned(text.ok_or_else(|| missing("text"))?),
                field: field.flatten().map(Cow::Owned),
            },
            "thinking" => Block::Thinking {
                thinking: Cow::Owned(thinking.flatten().unwrap_or_default()),
                signature: signature.flatten().map(Cow::Owned),
            },
            "tool_use" => Block::ToolUse {
                id: Cow::Owned(id.ok_or_else(|| missing("id"))?),
                name: Cow::Owned(name.ok_or_else(|| missing("name"))?),
                input: input.ok_or_else(|| missing("input"))?,
                signature: signature.flatten().map(Cow::Owned),
            },
            "tool_result" => Block::ToolResult {
                tool_use_id: Cow::Owned(tool_use_id.ok_or_else(|| missing("tool_use_id"))?),
                content: content.unwrap_or_default(),
                is_error: is_error.flatten().unwrap_or(false),
            },
            "image" => Block::Image {
                source: source.ok_or_else(|| missing("source"))?,
            },
            "document" => Block::Document {
                source: source.ok_or_else(|| missing("source"))?,
            },
            other => return Err(de::Error::unknown_variant(other, TYPES)),
        })
    }
}

impl<'a> Block<'a> {
    /// A plain text block.
    pub fn text(text: Cow<'a, str>) -> Block<'a> {
        Block::Text { text, field: None }
    }
}

/// The keys of each block type, as written and read; any other key of a
/// block is not read (see [`super::RECORD_KEYS`]).
pub const BLOCK_KEYS: &[(&str, &[&str])] = &[
    ("text", &["type", "text", "field"]),
    ("thinking", &["type", "thinking", "signature"]),
    ("tool_use", &["type", "id", "name", "input", "signature"]),
    (
        "tool_result",
        &["type", "tool_use_id", "content", "is_error"],
    ),
    ("image", &["type", "source"]),
    ("document", &["type", "source"]),
];

/// The keys of a block of `block_type`, if the stream defines the type.
pub fn block_keys(block_type: &str) -> Option<&'static [&'static str]> {
    BLOCK_KEYS
        .iter()
        .find(|(t, _)| *t == block_type)
        .map(|(_, keys)| *keys)
}

impl Block<'_> {
    /// Writes the block as `serde_json` would; see [`Message::write_json`].
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let optional = |out: &mut Vec<u8>, key: &str, value: &Option<Cow<'_, str>>| {
            if let Some(value) = value {
                out.push(b',');
                json::write_key(out, key);
                json::write_str(out, value);
            }
        };
        match self {
            Block::Text { text, field } => {
                out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                json::write_str(out, text);
                optional(out, "field", field);
            }
            Block::Thinking {
                thinking,
                signature,
            } => {
                out.extend_from_slice(b"{\"type\":\"thinking\",\"thinking\":");
                json::write_str(out, thinking);
                optional(out, "signature", signature);
            }
            Block::ToolUse {
                id,
                name,
                input,
                signature,
            } => {
                out.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":");
                json::write_str(out, id);
                out.extend_from_slice(b",\"name\":");
                json::write_str(out, name);
                out.extend_from_slice(b",\"input\":");
                match input {
                    ToolInput::Object(args) => {
                        json::write_object(out, args.iter().map(|(k, v)| (k, v)), |_| ())
                    }
                    ToolInput::Other(value) => json::write_value(out, value),
                }
                optional(out, "signature", signature);
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                out.extend_from_slice(b"{\"type\":\"tool_result\",\"tool_use_id\":");
                json::write_str(out, tool_use_id);
                out.extend_from_slice(b",\"content\":");
                content.write_json(out);
                if *is_error {
                    out.extend_from_slice(b",\"is_error\":true");
                }
            }
            Block::Image { source } | Block::Document { source } => {
                let kind: &[u8] = match self {
                    Block::Image { .. } => b"{\"type\":\"image\",\"source\":",
                    _ => b"{\"type\":\"document\",\"source\":",
                };
                out.extend_from_slice(kind);
                write_serde(out, source);
            }
        }
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn blocks_read_in_any_key_order_and_refuse_what_is_wrong() {
        let read = |text: &str| serde_json::from_str::<Block>(text);
        assert_eq!(
            read(r#"{"text":"hi","extra":[1,{"x":2}],"type":"text"}"#).unwrap(),
            Block::text("hi".into())
        );
        assert_eq!(
            read(r#"{"is_error":true,"content":"boom","tool_use_id":"c1","type":"tool_result"}"#)
                .unwrap(),
            Block::ToolResult {
                tool_use_id: "c1".into(),
                content: ResultContent::Text("boom".into()),
                is_error: true,
            }
        );
        assert_eq!(
            read(r#"{"type":"thinking","thinking":null,"signature":null}"#).unwrap(),
            Block::Thinking {
                thinking: "".into(),
                signature: None,
            }
        );
        for (bad, why) in [
            (r#"{"type":"text"}"#, "missing field `text`"),
            (r#"{"text":"x"}"#, "missing field `type`"),
            (r#"{"type":"video","text":"x"}"#, "unknown variant `video`"),
            (
                r#"{"type":"text","text":"a","text":"b"}"#,
                "duplicate field `text`",
            ),
            (
                r#"{"type":"tool_use","id":"c","name":"n"}"#,
                "missing field `input`",
            ),
        ] {
            let err = read(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn blocks_serialize_in_the_documented_shape() {
        let blocks = vec![
            Block::text("hi".into()),
            Block::Thinking {
                thinking: "hm".into(),
                signature: None,
            },
            Block::ToolUse {
                id: "c1".into(),
                name: "Bash".into(),
                input: ToolInput::Object(vec![
                    ("z".into(), Value::from(1)),
                    ("a".into(), Value::from(2)),
                ]),
                signature: None,
            },
            Block::ToolResult {
                tool_use_id: "c1".into(),
                content: ResultContent::Text("ok".into()),
                is_error: false,
            },
        ];
        let text = serde_json::to_string(&blocks).unwrap();
        assert_eq!(
            text,
            r#"[{"type":"text","text":"hi"},{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"c1","name":"Bash","input":{"z":1,"a":2}},{"type":"tool_result","tool_use_id":"c1","content":"ok"}]"#
        );
        let back: Vec<Block> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, blocks);
    }
}
