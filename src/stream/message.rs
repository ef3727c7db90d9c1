//! The message stream: what `agy-decode` writes and `agy-encode` reads.
//!
//! One JSON object per line. Content blocks have the shape of the Anthropic
//! Messages API and Claude Code transcripts so that existing `jq` habits
//! work; `man agy-decode` documents every record. The same types serve both
//! directions, so what decode writes is by construction what encode reads.
//! Absent values are omitted on output and `null` reads as absent on input.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agy::tools::ArgList;
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

/// A tool call's arguments. agy stores them as JSON text, usually an object;
/// an object keeps its key order, and anything else (including text that is
/// not JSON at all, carried as a string) is kept as it is.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolInput {
    Object(ArgList),
    Other(Value),
}

impl ToolInput {
    /// Reads agy's `arguments_json`. Empty text is an empty object; text
    /// that is not JSON becomes a string so nothing the call carried is lost.
    pub fn from_arguments_json(text: &str) -> ToolInput {
        if text.trim().is_empty() {
            return ToolInput::Object(Vec::new());
        }
        serde_json::from_str(text)
            .unwrap_or_else(|_| ToolInput::Other(Value::String(text.to_string())))
    }

    /// The inverse of [`ToolInput::from_arguments_json`]: a string is
    /// written as its raw text when that reads back as the same string,
    /// anything else (a blank string, a string that is JSON text itself,
    /// any other value) as compact JSON, so the two are a round trip.
    pub fn to_arguments_json(&self) -> String {
        match self {
            ToolInput::Other(Value::String(raw))
                if !raw.trim().is_empty() && serde_json::from_str::<Value>(raw).is_err() =>
            {
                raw.clone()
            }
            ToolInput::Other(value) => json::value_to_string(value),
            ToolInput::Object(args) => object_json(args),
        }
    }
}

/// Arguments as a compact JSON object, keys in their order.
pub fn object_json(args: &ArgList) -> String {
    let mut out = Vec::new();
    json::write_object(&mut out, args.iter().map(|(k, v)| (k, v)));
    String::from_utf8(out).expect("JSON text is UTF-8")
}

impl Serialize for ToolInput {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolInput::Object(args) => {
                let mut map = s.serialize_map(Some(args.len()))?;
                for (k, v) in args {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            ToolInput::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ToolInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct InputVisitor;
        impl<'de> Visitor<'de> for InputVisitor {
            type Value = ToolInput;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("tool input (any JSON value)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolInput, A::Error> {
                let mut args = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    match args
                        .iter_mut()
                        .find(|(key, _): &&mut (String, Value)| *key == k)
                    {
                        // JSON's rule for a repeated key: the last one wins.
                        Some(entry) => entry.1 = v,
                        None => args.push((k, v)),
                    }
                }
                Ok(ToolInput::Object(args))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ToolInput, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    items.push(v);
                }
                Ok(ToolInput::Other(Value::Array(items)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ToolInput, E> {
                Ok(ToolInput::Other(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ToolInput, E> {
                Ok(ToolInput::Other(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ToolInput, E> {
                Ok(ToolInput::Other(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ToolInput, E> {
                Ok(ToolInput::Other(Value::from(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ToolInput, E> {
                Ok(ToolInput::Other(Value::String(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<ToolInput, E> {
                Ok(ToolInput::Other(Value::String(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ToolInput, E> {
                Ok(ToolInput::Other(Value::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<ToolInput, E> {
                Ok(ToolInput::Other(Value::Null))
            }
        }
        d.deserialize_any(InputVisitor)
    }
}

/// A tool result's content: text, a directory listing, or JSON for other
/// structured results (the outcome of an edit, foreign block lists).
#[derive(Clone, Debug, PartialEq)]
pub enum ResultContent<'a> {
    Text(Cow<'a, str>),
    Listing(Listing<'a>),
    Structured(Value),
}

/// A directory listing in the one shape agy-decode writes and agy-encode
/// turns back into a LIST_DIRECTORY step: typed, because building a JSON
/// object (an ordered hash map) per entry was a fifth of agy-encode's time
/// on listing-heavy conversations.
///
/// JSON that has exactly this shape always reads as a `Listing` (see
/// [`ResultContent::from_value`]), and a `Listing` writes the same JSON
/// back, so the typed form is invisible in the stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Listing<'a> {
    /// `["name", …]`: the plain `children` names; never empty.
    Names(Vec<Cow<'a, str>>),
    /// `[{"name":…,"is_dir":…,"num_children":…,"size_bytes":…}, …]`, each
    /// key only when recorded, in that order; `[]` is an empty listing.
    Entries(Vec<ListingEntry<'a>>),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListingEntry<'a> {
    pub name: Option<Cow<'a, str>>,
    pub is_dir: Option<bool>,
    pub num_children: Option<u64>,
    pub size_bytes: Option<u64>,
}

/// A listing entry's keys, in the only order a listing has them.
pub const LISTING_KEYS: [&str; 4] = ["name", "is_dir", "num_children", "size_bytes"];

impl Listing<'_> {
    pub fn is_empty(&self) -> bool {
        match self {
            Listing::Names(names) => names.is_empty(),
            Listing::Entries(entries) => entries.is_empty(),
        }
    }

    /// The listing `value` stands for, if it has a listing's exact shape:
    /// all strings (at least one), or all objects whose keys are among
    /// [`LISTING_KEYS`], in that order, with the right types.
    pub fn from_value(value: &Value) -> Option<Listing<'static>> {
        let items = value.as_array()?;
        if !items.is_empty() && items.iter().all(Value::is_string) {
            let names = items.iter().filter_map(Value::as_str);
            return Some(Listing::Names(
                names.map(|n| Cow::Owned(n.to_string())).collect(),
            ));
        }
        let mut entries = Vec::with_capacity(items.len());
        for item in items {
            let mut entry = ListingEntry::default();
            let mut last_rank = None;
            for (key, v) in item.as_object()? {
                let rank = LISTING_KEYS.iter().position(|k| k == key)?;
                if last_rank.is_some_and(|last| rank <= last) {
                    return None;
                }
                last_rank = Some(rank);
                match rank {
                    0 => entry.name = Some(Cow::Owned(v.as_str()?.to_string())),
                    1 => entry.is_dir = Some(v.as_bool()?),
                    2 => entry.num_children = Some(v.as_u64()?),
                    _ => entry.size_bytes = Some(v.as_u64()?),
                }
            }
            entries.push(entry);
        }
        Some(Listing::Entries(entries))
    }

    /// Writes the listing as compact JSON, as `serde_json` writes the value
    /// it stands for.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        match self {
            Listing::Names(names) => {
                for (i, name) in names.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    json::write_str(out, name);
                }
            }
            Listing::Entries(entries) => {
                for (i, entry) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    entry.write_json(out);
                }
            }
        }
        out.push(b']');
    }
}

impl Serialize for Listing<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Listing::Names(names) => {
                let mut seq = s.serialize_seq(Some(names.len()))?;
                for name in names {
                    seq.serialize_element(name)?;
                }
                seq.end()
            }
            Listing::Entries(entries) => {
                let mut seq = s.serialize_seq(Some(entries.len()))?;
                for entry in entries {
                    seq.serialize_element(entry)?;
                }
                seq.end()
            }
        }
    }
}

impl Serialize for ListingEntry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        if let Some(name) = &self.name {
            map.serialize_entry(LISTING_KEYS[0], name)?;
        }
        if let Some(is_dir) = self.is_dir {
            map.serialize_entry(LISTING_KEYS[1], &is_dir)?;
        }
        for (index, count) in [(2, self.num_children), (3, self.size_bytes)] {
            if let Some(count) = count {
                map.serialize_entry(LISTING_KEYS[index], &count)?;
            }
        }
        map.end()
    }
}

impl ListingEntry<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        let mut first = true;
        let mut key = |out: &mut Vec<u8>, name: &str| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            json::write_key(out, name);
        };
        if let Some(name) = &self.name {
            key(out, LISTING_KEYS[0]);
            json::write_str(out, name);
        }
        if let Some(is_dir) = self.is_dir {
            key(out, LISTING_KEYS[1]);
            out.extend_from_slice(if is_dir { b"true" } else { b"false" });
        }
        for (index, count) in [(2, self.num_children), (3, self.size_bytes)] {
            if let Some(count) = count {
                key(out, LISTING_KEYS[index]);
                json::write_u64(out, count);
            }
        }
        out.push(b'}');
    }
}

impl Default for ResultContent<'_> {
    fn default() -> Self {
        ResultContent::Text(Cow::Borrowed(""))
    }
}

impl ResultContent<'_> {
    /// The content a JSON value read from a message stands for: text, null
    /// as empty text, a listing when it has a listing's shape, else the
    /// value itself. Both readers of the stream go through here, so they
    /// agree.
    pub fn from_value(value: Value) -> ResultContent<'static> {
        match value {
            Value::String(s) => ResultContent::Text(Cow::Owned(s)),
            Value::Null => ResultContent::default(),
            other => match Listing::from_value(&other) {
                Some(listing) => ResultContent::Listing(listing),
                None => ResultContent::Structured(other),
            },
        }
    }

    /// The content as text: structured content as compact JSON, and a list
    /// of Anthropic text blocks (how other tools write results) as their
    /// joined text.
    pub fn to_text(&self) -> Cow<'_, str> {
        match self {
            ResultContent::Text(t) => Cow::Borrowed(t),
            ResultContent::Listing(listing) => {
                let mut out = Vec::new();
                listing.write_json(&mut out);
                Cow::Owned(String::from_utf8(out).expect("JSON text is UTF-8"))
            }
            ResultContent::Structured(v) => match text_blocks(v) {
                Some(text) => Cow::Owned(text),
                None => Cow::Owned(crate::stream::json::value_to_string(v)),
            },
        }
    }

    /// Writes the content as a JSON value.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            ResultContent::Text(text) => json::write_str(out, text),
            ResultContent::Listing(listing) => listing.write_json(out),
            ResultContent::Structured(value) => json::write_value(out, value),
        }
    }
}

/// The joined text of `[{"type":"text","text":…}, …]`, if `v` is that.
fn text_blocks(v: &Value) -> Option<String> {
    let items = v.as_array()?;
    if items.is_empty() {
        return None;
    }
    let mut out = String::new();
    for item in items {
        let obj = item.as_object()?;
        if obj.len() != 2 || obj.get("type")?.as_str()? != "text" {
            return None;
        }
        out.push_str(obj.get("text")?.as_str()?);
    }
    Some(out)
}

impl Serialize for ResultContent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ResultContent::Text(t) => s.serialize_str(t),
            ResultContent::Listing(listing) => listing.serialize(s),
            ResultContent::Structured(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ResultContent<'_> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ResultContent::from_value(Value::deserialize(d)?))
    }
}

fn is_false(b: &bool) -> bool {
    !*b
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
                        json::write_object(out, args.iter().map(|(k, v)| (k, v)))
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

fn write_serde(out: &mut Vec<u8>, value: &impl Serialize) {
    serde_json::to_writer(&mut *out, value).expect("serializing to a Vec cannot fail");
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

/// Any record of the message stream as read: the union of the `message` and
/// `meta` fields, checked by the reader. Unknown keys are ignored so that
/// hand-converted transcripts may carry extra bookkeeping.
#[derive(Debug, Default, PartialEq, Deserialize)]
pub struct InputRecord<'a> {
    pub conversation: Option<String>,
    pub kind: Option<String>,
    pub role: Option<Role>,
    pub timestamp: Option<String>,
    pub model: Option<String>,
    pub stop_reason: Option<String>,
    pub usage: Option<Usage>,
    #[serde(borrow)]
    pub content: Option<Vec<Block<'a>>>,
    pub id: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub title: Option<String>,
    pub step_type: Option<String>,
    pub idx: Option<i64>,
    pub implicit: Option<bool>,
    pub raw: Option<String>,
    pub parent_conversation_id: Option<String>,
    pub forked_from: Option<ForkedFrom>,
}

/// A `file://` URI as a path: the scheme is dropped and `%XX` escapes are
/// decoded (kept as written when they do not decode to UTF-8). Anything
/// that is not a `file://` URI is returned as it is.
pub fn uri_to_path(uri: &str) -> String {
    let Some(rest) = uri.strip_prefix("file://") else {
        return uri.to_string();
    };
    if !rest.contains('%') {
        return rest.to_string();
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if let Some(v) = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| rest.to_string())
}

/// The inverse of [`uri_to_path`] for absolute paths: `file://` plus the
/// path with `%`, controls, spaces and non-ASCII bytes escaped.
pub fn path_to_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 7);
    out.push_str("file://");
    for &b in path.as_bytes() {
        if b == b'%' || b <= b' ' || b >= 0x7f {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

const BASE64_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, as the Messages API carries media.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64_ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Each base64 digit's value, 0xff for anything else.
static BASE64_VALUES: [u8; 256] = {
    let mut table = [0xffu8; 256];
    let mut i = 0;
    while i < 64 {
        table[BASE64_ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// The inverse of [`base64_encode`]; `None` for anything that is not
/// padded standard base64.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (index, chunk) in bytes.chunks(4).enumerate() {
        let last = index + 1 == bytes.len() / 4;
        let padding = chunk.iter().rev().take_while(|&&b| b == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for (i, &b) in chunk[..4 - padding].iter().enumerate() {
            let v = BASE64_VALUES[b as usize];
            if v == 0xff {
                return None;
            }
            n |= u32::from(v) << (18 - 6 * i);
        }
        let n = n.to_be_bytes();
        out.extend_from_slice(&n[1..4 - padding]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn arguments_json_round_trips() {
        for text in [
            r#"{"b":1,"a":[1,{"y":2,"x":1}],"s":"é\n\"q\"","f":1.5,"n":null}"#,
            "not json",
            "[1,2]",
            "7",
        ] {
            let input = ToolInput::from_arguments_json(text);
            if !matches!(input, ToolInput::Other(Value::String(_))) {
                assert_eq!(
                    input.to_arguments_json(),
                    serde_json::to_string(&input).unwrap()
                );
            }
            assert_eq!(
                ToolInput::from_arguments_json(&input.to_arguments_json()),
                input,
                "{text}"
            );
        }
        assert_eq!(
            ToolInput::from_arguments_json(""),
            ToolInput::Object(vec![])
        );
    }

    #[test]
    fn listings_are_typed_exactly_when_they_have_a_listing_shape() {
        use serde_json::json;
        let listings = [
            json!([]),
            json!(["a", "b\n\"", "é"]),
            json!([{"name": "src", "is_dir": true, "num_children": 4}, {}, {"size_bytes": u64::MAX}]),
            json!([{"name": "x", "is_dir": false, "num_children": 0, "size_bytes": 7}]),
        ];
        for value in listings {
            let content = ResultContent::from_value(value.clone());
            let ResultContent::Listing(listing) = &content else {
                panic!("{value} is a listing");
            };
            let mut written = Vec::new();
            listing.write_json(&mut written);
            assert_eq!(written, serde_json::to_vec(&value).unwrap(), "{value}");
            assert_eq!(serde_json::to_value(&content).unwrap(), value);
            assert_eq!(content.to_text(), value.to_string());
        }
        let not_listings = [
            json!({"file": "f", "edited": true}),
            json!([{"is_dir": true, "name": "x"}]),
            json!([{"name": "x", "size_bytes": 1.5}]),
            json!([{"name": "x", "size_bytes": -1}]),
            json!([{"name": null}]),
            json!([{"name": "x", "mode": 7}]),
            json!(["a", {"name": "x"}]),
            json!([{"type": "text", "text": "t"}]),
            json!([1]),
        ];
        for value in not_listings {
            assert_eq!(
                ResultContent::from_value(value.clone()),
                ResultContent::Structured(value)
            );
        }
    }

    #[test]
    fn base64_round_trips() {
        for len in 0..20 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 250) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64_encode(b"hello"), "aGVsbG8=");
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        for bad in ["aGVsbG8", "a===", "aG=s", "aGV$", "aG==aGVs"] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn uris() {
        for path in ["/a b/ü%20.rs", "/plain", "/"] {
            assert_eq!(uri_to_path(&path_to_uri(path)), path);
        }
        assert_eq!(uri_to_path("file:///x%2"), "/x%2");
        assert_eq!(uri_to_path("/not/a/uri"), "/not/a/uri");
        assert_eq!(uri_to_path("file:///%ff"), "/%ff");
    }

    #[test]
    fn result_text_of_foreign_block_lists() {
        let v = serde_json::json!([{"type":"text","text":"a"},{"type":"text","text":"b"}]);
        assert_eq!(ResultContent::Structured(v).to_text(), "ab");
        let v = serde_json::json!([{"name":"x"}]);
        assert_eq!(ResultContent::Structured(v).to_text(), r#"[{"name":"x"}]"#);
    }
}
