//! agy-decode's message stream as agy-render reads it: leniently, and
//! without building a tree of it.
//!
//! The renderer is a reader for people, so it must not break when the
//! stream grows. Keys it does not know are ignored, and every key it knows
//! is optional and taken as raw JSON text first, to be read when it is
//! shown: a key whose type changes (or a stream from another writer) gives
//! a page with that field missing rather than no page at all. Only
//! `conversation` and `kind` are required: without them a line cannot be
//! placed.
//!
//! Raw text also keeps the work in proportion to what is shown: a tool's
//! input or result of megabytes is borrowed from the line, re-indented or
//! unescaped once into the page, never built into a `serde_json::Value`.
//! A line is read with [`Cursor`] (see [`Record::parse`]); serde_json reads
//! only what the cursor is not sure of, and its reading then stands.

use std::borrow::Cow;
use std::cell::OnceCell;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::stream::json::Cursor;
use crate::time::Timestamp;

pub use super::raw::Raw;

use super::escape::{json_body_text, unescape_body_into};
use super::text::Text;

/// One line of the stream, message or meta, borrowed from the line.
#[derive(Debug, Default, Deserialize)]
pub struct Record<'a> {
    #[serde(borrow)]
    pub conversation: Cow<'a, str>,
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow, default)]
    role: Option<Raw<'a>>,
    #[serde(borrow, default)]
    step_type: Option<Raw<'a>>,
    #[serde(borrow, default)]
    idx: Option<Raw<'a>>,
    #[serde(borrow, default)]
    implicit: Option<Raw<'a>>,
    #[serde(borrow, default)]
    timestamp: Option<Raw<'a>>,
    #[serde(borrow, default)]
    model: Option<Raw<'a>>,
    #[serde(borrow, default)]
    stop_reason: Option<Raw<'a>>,
    #[serde(borrow, default)]
    usage: Option<Raw<'a>>,
    /// The usage's counts ([`Record::tokens`]), read once: a turn and the
    /// header's totals both ask for them.
    #[serde(skip)]
    tokens: OnceCell<Tokens>,
    /// The timestamp read as a time ([`Record::message_time`]), once: a
    /// turn's heading and the header's first and last times both ask.
    #[serde(skip)]
    parsed_time: OnceCell<Option<Timestamp>>,
    /// An array of blocks; a plain string (the Messages API's shorthand)
    /// counts as one text block.
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    /// `true`, or a string saying what was lost: the step's blob was cut
    /// short or stopped making sense, and what is shown is the readable part.
    #[serde(borrow, default)]
    damaged: Option<Raw<'a>>,
    // The meta record's keys.
    #[serde(borrow, default)]
    cwd: Option<Raw<'a>>,
    #[serde(borrow, default)]
    git_branch: Option<Raw<'a>>,
    #[serde(borrow, default)]
    title: Option<Raw<'a>>,
    #[serde(borrow, default)]
    parent_conversation_id: Option<Raw<'a>>,
    #[serde(borrow, default)]
    forked_from: Option<Raw<'a>>,
    // The artifact record's keys.
    #[serde(borrow, default)]
    name: Option<Raw<'a>>,
    #[serde(borrow, default)]
    time: Option<Raw<'a>>,
    #[serde(borrow, default)]
    text: Option<Raw<'a>>,
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

/// The string `raw` holds, borrowed when it has no escapes; `None` when
/// it is not a string.
pub fn string(raw: Raw<'_>) -> Option<Cow<'_, str>> {
    let body = raw.get().strip_prefix('"')?.strip_suffix('"')?;
    json_body_text(body)
}

fn opt_string<'a>(raw: Option<Raw<'a>>) -> Option<Cow<'a, str>> {
    raw.and_then(string)
}

/// An unsigned integer, if `raw` is one.
pub fn unsigned(raw: Option<Raw<'_>>) -> Option<u64> {
    raw?.get().parse().ok()
}

/// The members of a JSON object in their order, values left as raw text.
#[derive(Debug, Default)]
pub struct Members<'a>(pub Vec<(Cow<'a, str>, Raw<'a>)>);

impl<'a> Members<'a> {
    /// The members of `raw`, or `None` when it is not an object.
    pub fn of(raw: Raw<'a>) -> Option<Members<'a>> {
        if !raw.get().starts_with('{') {
            return None;
        }
        let mut cursor = Cursor::new(raw.get());
        Members::read(&mut cursor).or_else(|| serde_json::from_str(raw.get()).ok())
    }

    /// The fast path of the [`Deserialize`] below: an object's members, no
    /// members for any other value; `None` for what serde must read.
    fn read(cursor: &mut Cursor<'a>) -> Option<Members<'a>> {
        // A block has some four members: room for them at once, not a
        // reallocation at the first, second and fifth.
        let mut members = Vec::with_capacity(4);
        if cursor.peek()? != b'{' {
            cursor.value()?;
            return Some(Members(members));
        }
        cursor.members(|cursor, key| {
            members.push((key, Raw::read(cursor)?));
            Some(())
        })?;
        Some(Members(members))
    }

    pub fn get(&self, key: &str) -> Option<Raw<'a>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    pub fn string(&self, key: &str) -> Option<Cow<'a, str>> {
        opt_string(self.get(key))
    }

    pub fn is_true(&self, key: &str) -> bool {
        self.get(key).is_some_and(|v| v.get() == "true")
    }
}

/// Anything but an object reads as no members, so one odd block does not
/// make its message unreadable.
impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members<'a>, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Members<'de>, M::Error> {
                let mut members = Vec::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    members.push((key.0, map.next_value::<Raw<'de>>()?));
                }
                Ok(Members(members))
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Members<'de>, S::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Members::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Members<'de>, E> {
                Ok(Members::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Members<'de>, E> {
                Ok(Members::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Members<'de>, E> {
                Ok(Members::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Members<'de>, E> {
                Ok(Members::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Members<'de>, E> {
                Ok(Members::default())
            }
            fn visit_unit<E>(self) -> Result<Members<'de>, E> {
                Ok(Members::default())
            }
        }
        deserializer.deserialize_any(MembersVisitor)
    }
}

/// A message's `content`: an array of blocks, each kept as its members,
/// or a string. Read in the same pass as the rest of the line.
#[derive(Debug)]
pub enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Members<'a>>),
    /// Anything else: no blocks.
    Other,
}

impl<'a> Content<'a> {
    /// The fast path of the [`Deserialize`] below, as an `Option` (null is
    /// no content); `None` for what serde must read.
    fn read(cursor: &mut Cursor<'a>) -> Option<Option<Content<'a>>> {
        Some(Some(match cursor.peek()? {
            b'n' => return cursor.null().then_some(None),
            b'"' => Content::Text(cursor.string()?),
            b'[' => {
                let mut blocks = Vec::new();
                cursor.array(|cursor| {
                    blocks.push(Members::read(cursor)?);
                    Some(())
                })?;
                Content::Blocks(blocks)
            }
            _ => {
                cursor.value()?;
                Content::Other
            }
        }))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Content<'a>, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Content<'de>, S::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element::<Members<'de>>()? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Content<'de>, E> {
                Ok(Content::Text(Cow::Borrowed(text)))
            }
            fn visit_string<E>(self, text: String) -> Result<Content<'de>, E> {
                Ok(Content::Text(Cow::Owned(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Content<'de>, E> {
                Ok(Content::Text(Cow::Owned(text.to_string())))
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Content<'de>, M::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Content<'de>, E> {
                Ok(Content::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Content<'de>, E> {
                Ok(Content::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Content<'de>, E> {
                Ok(Content::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Content<'de>, E> {
                Ok(Content::Other)
            }
            fn visit_unit<E>(self) -> Result<Content<'de>, E> {
                Ok(Content::Other)
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// A key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key<'a>, D::Error> {
        #[derive(Deserialize)]
        struct Wrapped<'a>(#[serde(borrow)] Cow<'a, str>);
        Wrapped::deserialize(deserializer).map(|w| Key(w.0))
    }
}

/// One content block, as far as the renderer tells blocks apart.
pub enum Block<'a> {
    Text {
        text: Text<'a>,
        /// The payload field a system message's text comes from.
        field: Option<Cow<'a, str>>,
    },
    Thinking(Text<'a>),
    ToolUse {
        id: Cow<'a, str>,
        name: Cow<'a, str>,
        /// Absent input is `null`.
        input: Raw<'a>,
    },
    ToolResult {
        tool_use_id: Cow<'a, str>,
        content: Option<Raw<'a>>,
        is_error: bool,
    },
    /// An image or document.
    Media {
        image: bool,
        source: Media<'a>,
    },
    /// A block of a type nothing here knows, or of a known type without
    /// what that type needs: shown as JSON.
    Other(&'a Members<'a>),
}

/// Where a media block's bytes are.
#[derive(Debug, Default)]
pub struct Media<'a> {
    pub media_type: Option<Cow<'a, str>>,
    /// Base64 data, when the source is `base64`.
    pub data: Option<Cow<'a, str>>,
    pub url: Option<Cow<'a, str>>,
}

impl<'a> Media<'a> {
    fn of(raw: Raw<'a>) -> Option<Media<'a>> {
        let members = Members::of(raw)?;
        let base64 = members.string("type").as_deref() == Some("base64");
        Some(Media {
            media_type: members.string("media_type"),
            data: if base64 { members.string("data") } else { None },
            url: members.string("url"),
        })
    }
}

impl<'a> Block<'a> {
    pub fn of<'b: 'a>(block: &'a Members<'b>) -> Block<'a> {
        let kind = block.string("type");
        match kind.as_deref() {
            Some("text") => match block.get("text").and_then(Text::of_json) {
                Some(text) => Block::Text {
                    text,
                    field: block.string("field"),
                },
                None => Block::Other(block),
            },
            Some("thinking") => Block::Thinking(
                block
                    .get("thinking")
                    .and_then(Text::of_json)
                    .unwrap_or(Text::Read(Cow::Borrowed(""))),
            ),
            Some("tool_use") => Block::ToolUse {
                id: block.string("id").unwrap_or_default(),
                name: block
                    .string("name")
                    .unwrap_or(Cow::Borrowed("(unnamed tool)")),
                input: block.get("input").unwrap_or(Raw::NULL),
            },
            Some("tool_result") => Block::ToolResult {
                tool_use_id: block.string("tool_use_id").unwrap_or_default(),
                content: block.get("content"),
                is_error: block.is_true("is_error"),
            },
            Some(kind @ ("image" | "document")) => match block.get("source").and_then(Media::of) {
                Some(source) => Block::Media {
                    image: kind == "image",
                    source,
                },
                None => Block::Other(block),
            },
            _ => Block::Other(block),
        }
    }
}

impl<'a> Content<'a> {
    /// The blocks: an array's items, or a string as one text block.
    pub fn blocks(&'a self) -> Vec<Block<'a>> {
        match self {
            Content::Text(text) => vec![Block::Text {
                text: Text::of_str(text),
                field: None,
            }],
            Content::Blocks(items) => items.iter().map(Block::of).collect(),
            Content::Other => Vec::new(),
        }
    }
}

impl Members<'_> {
    /// The members as one line of JSON.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        out.push(b'{');
        for (i, (key, value)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            crate::stream::json::write_str(&mut out, key);
            out.push(b':');
            out.extend_from_slice(value.get().as_bytes());
        }
        out.push(b'}');
        String::from_utf8(out).expect("JSON of strings is UTF-8")
    }
}

#[derive(Deserialize)]
struct Usage<'a> {
    #[serde(borrow, default)]
    input_tokens: Option<Raw<'a>>,
    #[serde(borrow, default)]
    output_tokens: Option<Raw<'a>>,
    #[serde(borrow, default)]
    cache_creation_input_tokens: Option<Raw<'a>>,
    #[serde(borrow, default)]
    cache_read_input_tokens: Option<Raw<'a>>,
}

/// The counts of a usage object as serde reads [`Usage`] ([`usage_by_serde`]),
/// read in place: each assistant message's usage is read for its turn and
/// for the header's totals, and serde's reading was 3 % of agy-render.
/// `None` for what it leaves to serde: anything but an object whose keys
/// come at most once.
fn usage_in_place(text: &str) -> Option<Tokens> {
    const KEYS: [&str; 4] = [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ];
    let mut values: [Option<&str>; 4] = [None; 4];
    let mut cursor = Cursor::new(text);
    cursor.object(|cursor, key| match KEYS.iter().position(|k| *k == key) {
        // serde refuses a field named twice.
        Some(slot) if values[slot].is_some() => None,
        Some(slot) => {
            values[slot] = Some(cursor.value()?);
            Some(())
        }
        None => cursor.value().map(drop),
    })?;
    let count = |slot: usize| values[slot].and_then(|text| text.parse().ok()).unwrap_or(0);
    Some(Tokens {
        input: count(0),
        output: count(1),
        cache_creation: count(2),
        cache_read: count(3),
    })
}

/// The counts of a usage object by serde: zeros for what it refuses.
fn usage_by_serde(text: &str) -> Tokens {
    let Ok(usage) = serde_json::from_str::<Usage>(text) else {
        return Tokens::default();
    };
    let count = |raw| unsigned(raw).unwrap_or(0);
    Tokens {
        input: count(usage.input_tokens),
        output: count(usage.output_tokens),
        cache_creation: count(usage.cache_creation_input_tokens),
        cache_read: count(usage.cache_read_input_tokens),
    }
}

/// The fields a record is read for: `conversation`, `kind`, `content` and
/// the seventeen of [`Record::raw_field`].
const RECORD_FIELDS: usize = 20;

impl<'a> Record<'a> {
    /// Reads a line: by the fast path of [`Record::read_fast`], else by
    /// serde_json, whose reading (or error) then stands.
    pub fn parse(line: &'a [u8]) -> Result<Record<'a>, String> {
        if let Some(record) = simdutf8::basic::from_utf8(line)
            .ok()
            .and_then(Record::read_fast)
        {
            return Ok(record);
        }
        serde_json::from_slice(line).map_err(|e| format!("not a message record: {e}"))
    }

    /// Reads a line as serde_json reads it into a `Record`, with a
    /// [`Cursor`]: serde_json skipped a tool's output of megabytes a few
    /// bytes at a time to find where its raw text ends, a third of
    /// agy-render's time on a long conversation. `None` for anything it is
    /// not sure of (a key given twice, a missing `conversation` or `kind`,
    /// a value of the wrong type, malformed JSON), which serde then reads.
    fn read_fast(text: &'a str) -> Option<Record<'a>> {
        let mut record = Record::default();
        // The keys of fields that came, null or not: serde refuses one
        // given twice (and ignores unknown keys, however often they come).
        // Room for every field a record has, so it is never grown.
        let mut seen: Vec<Cow<'a, str>> = Vec::with_capacity(RECORD_FIELDS);
        let mut cursor = Cursor::new(text);
        cursor.members(|cursor, key| {
            let slot = match &*key {
                "conversation" | "kind" | "content" => None,
                name => match record.raw_field(name) {
                    Some(slot) => Some(slot),
                    None => return cursor.value().map(drop),
                },
            };
            if seen.contains(&key) {
                return None;
            }
            match (&*key, slot) {
                (_, Some(slot)) if cursor.null() => *slot = None,
                (_, Some(slot)) => *slot = Some(Raw::read(cursor)?),
                ("conversation", None) => record.conversation = cursor.string()?,
                ("kind", None) => record.kind = cursor.string()?,
                (_, None) => record.content = Content::read(cursor)?,
            }
            seen.push(key);
            Some(())
        })?;
        let has = |key: &str| seen.iter().any(|k| k == key);
        (cursor.at_end() && has("conversation") && has("kind")).then_some(record)
    }

    /// The field of a key held as raw JSON text.
    fn raw_field(&mut self, key: &str) -> Option<&mut Option<Raw<'a>>> {
        Some(match key {
            "role" => &mut self.role,
            "step_type" => &mut self.step_type,
            "idx" => &mut self.idx,
            "implicit" => &mut self.implicit,
            "timestamp" => &mut self.timestamp,
            "model" => &mut self.model,
            "stop_reason" => &mut self.stop_reason,
            "usage" => &mut self.usage,
            "damaged" => &mut self.damaged,
            "cwd" => &mut self.cwd,
            "git_branch" => &mut self.git_branch,
            "title" => &mut self.title,
            "parent_conversation_id" => &mut self.parent_conversation_id,
            "forked_from" => &mut self.forked_from,
            "name" => &mut self.name,
            "time" => &mut self.time,
            "text" => &mut self.text,
            _ => return None,
        })
    }

    /// The role, for a message; `None` for a role nothing here knows.
    pub fn role(&self) -> Option<Role> {
        match opt_string(self.role).as_deref()? {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "system" => Some(Role::System),
            _ => None,
        }
    }

    pub fn timestamp(&self) -> Option<Cow<'a, str>> {
        opt_string(self.timestamp)
    }

    pub fn model(&self) -> Option<Cow<'a, str>> {
        opt_string(self.model)
    }

    pub fn stop_reason(&self) -> Option<Cow<'a, str>> {
        opt_string(self.stop_reason)
    }

    pub fn is_implicit(&self) -> bool {
        self.implicit.is_some_and(|v| v.get() == "true")
    }

    /// Whether the message is marked damaged, and what the mark says when
    /// it says more than `true`.
    pub fn damage(&self) -> Option<Option<Cow<'a, str>>> {
        let raw = self.damaged?;
        match raw.get() {
            "true" => Some(None),
            text if text.starts_with('"') => string(raw).filter(|s| !s.is_empty()).map(Some),
            text if text.starts_with('{') && text != "{}" => Some(None),
            _ => None,
        }
    }

    /// The step type of a system message, as text (a name or a number).
    pub fn step_type(&self) -> Option<Cow<'a, str>> {
        let raw = self.step_type?;
        string(raw).or_else(|| unsigned(Some(raw)).map(|n| Cow::Owned(n.to_string())))
    }

    pub fn idx(&self) -> Option<u64> {
        unsigned(self.idx)
    }

    /// The usage counts; keys that are absent or not counts are zero.
    /// The timestamp as a time; `None` when there is none or it is not
    /// RFC 3339.
    pub fn message_time(&self) -> Option<Timestamp> {
        *self.parsed_time.get_or_init(|| {
            self.timestamp()
                .and_then(|text| Timestamp::parse(&text).ok())
        })
    }

    pub fn tokens(&self) -> Tokens {
        *self.tokens.get_or_init(|| match self.usage {
            Some(usage) => {
                usage_in_place(usage.get()).unwrap_or_else(|| usage_by_serde(usage.get()))
            }
            None => Tokens::default(),
        })
    }

    pub fn blocks(&self) -> Vec<Block<'_>> {
        match &self.content {
            Some(content) => content.blocks(),
            None => Vec::new(),
        }
    }

    pub fn title(&self) -> Option<Cow<'a, str>> {
        opt_string(self.title)
    }

    /// An artifact's file name (`task.md`).
    pub fn name(&self) -> Option<Cow<'a, str>> {
        opt_string(self.name)
    }

    /// An artifact's time, as the stream writes times.
    pub fn time(&self) -> Option<Cow<'a, str>> {
        opt_string(self.time)
    }

    /// An artifact's Markdown.
    pub fn text(&self) -> Option<Text<'a>> {
        self.text.and_then(Text::of_json)
    }

    pub fn cwd(&self) -> Option<Cow<'a, str>> {
        opt_string(self.cwd)
    }

    pub fn git_branch(&self) -> Option<Cow<'a, str>> {
        opt_string(self.git_branch)
    }

    pub fn parent_conversation_id(&self) -> Option<Cow<'a, str>> {
        opt_string(self.parent_conversation_id)
    }

    /// The conversation this one was forked from.
    pub fn forked_from(&self) -> Option<Cow<'a, str>> {
        Members::of(self.forked_from?)?.string("conversation_id")
    }
}

/// Appends the string held by the JSON string literal `raw` to `out`,
/// unescaped; `false` (and nothing appended) when `raw` is not a string.
/// For large tool output: one pass, into a buffer that is reused.
pub fn unescape_into(raw: &str, out: &mut String) -> bool {
    raw.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .is_some_and(|body| unescape_body_into(body, out))
}

#[cfg(test)]
mod tests {
    #[test]
    fn usage_read_in_place_is_usage_read_by_serde() {
        let usages = [
            r#"{"input_tokens":5,"output_tokens":7,"cache_creation_input_tokens":11,"cache_read_input_tokens":13}"#,
            r#"{ "output_tokens" : 2 , "service_tier" : "standard" , "input_tokens" : 1 }"#,
            r#"{"input_tokens":"many","output_tokens":-1,"cache_read_input_tokens":1.5}"#,
            r#"{"input_tokens":null,"output_tokens":18446744073709551615}"#,
            r#"{"input_tokens":18446744073709551616,"output_tokens":{"nested":[1,2]}}"#,
            r#"{"input\u005ftokens":3}"#,
            r#"{}"#,
        ];
        for usage in usages {
            let in_place = super::usage_in_place(usage).expect(usage);
            assert_eq!(in_place, super::usage_by_serde(usage), "{usage}");
        }
        // Left to serde: a key twice (refused), an array (read as the
        // fields in order), anything else.
        for usage in [
            r#"{"input_tokens":1,"input_tokens":2}"#,
            "[3,4]",
            "null",
            "7",
        ] {
            assert_eq!(super::usage_in_place(usage), None, "{usage}");
        }
        assert_eq!(super::usage_by_serde("[3,4]").output, 4);
        assert_eq!(
            super::usage_by_serde(r#"{"input_tokens":1,"input_tokens":2}"#).input,
            0
        );
    }

    use super::*;

    #[test]
    fn unknown_keys_and_odd_types_are_tolerated() {
        let line = br#"{"conversation":"c","kind":"message","role":"assistant","idx":"x","timestamp":7,"usage":{"input_tokens":5,"output_tokens":"many"},"damaged":true,"raw":"00ff","new_key":[1],"content":[{"type":"text","text":"hi"},{"type":"hologram"},{"type":"text","text":3}]}"#;
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
        let kinds: Vec<_> = record
            .blocks()
            .iter()
            .map(|b| match b {
                Block::Text { text, .. } => text.read().into_owned(),
                Block::Other(members) => members.to_json(),
                _ => String::from("?"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "hi",
                r#"{"type":"hologram"}"#,
                r#"{"type":"text","text":3}"#
            ]
        );
    }

    #[test]
    fn a_line_without_conversation_or_kind_is_refused() {
        assert!(Record::parse(br#"{"kind":"message"}"#).is_err());
        assert!(Record::parse(br#"{"conversation":"c"}"#).is_err());
        assert!(Record::parse(b"[1]").is_err());
        assert!(Record::parse(br#"{"conversation":"c","kind":"message","content":[}"#).is_err());
        let odd = Record::parse(br#"{"conversation":"c","kind":"message","content":[1,"a",[2],{"type":"text","text":"t"}]}"#).unwrap();
        assert_eq!(odd.blocks().len(), 4);
    }

    /// The fast path takes `line` (when `fast`), and whatever it takes it
    /// reads as serde_json does; serde's reading of anything it refuses
    /// stands.
    fn check(line: &str, fast: bool) {
        let by_serde = serde_json::from_str::<Record<'_>>(line);
        match Record::read_fast(line) {
            Some(record) => match by_serde {
                Ok(serde) => assert_eq!(format!("{record:?}"), format!("{serde:?}"), "{line}"),
                Err(e) => panic!("fast path read what serde refuses ({e}): {line}"),
            },
            None => assert!(!fast, "the fast path left {line} to serde"),
        }
    }

    #[test]
    fn the_fast_path_reads_as_serde_reads() {
        for line in [
            r#"{"conversation":"c","kind":"message","role":"assistant","idx":"x","timestamp":7,"usage":{"input_tokens":5},"damaged":true,"raw":"00ff","new_key":[1,{"a":null}],"content":[{"type":"text","text":"hi"},{"type":"hologram"},1,"a",[2],{"type":"text","text":3}]}"#,
            r#" { "conversation" : "c\u00e9" , "kind" : "meta" , "cwd" : "/a\"b" , "title" : null , "forked_from" : { "conversation_id" : "p" } } "#,
            r#"{"kind":"message","conversation":"c","content":"hel\nlo","model":null}"#,
            r#"{"conversation":"c","kind":"message","content":null,"text":"x"}"#,
            r#"{"conversation":"c","kind":"message","content":{"a":1}}"#,
            r#"{"conversation":"c","kind":"message","content":[{"type":"text","text":"a","type":"b"}]}"#,
            r#"{"conversation":"c","kind":"artifact","name":"task.md","time":"t","text":"x\n# y"}"#,
        ] {
            check(line, true);
        }
        // A key twice (null or not), no kind, a kind that is not a string,
        // a lone surrogate: serde's to read or refuse.
        for line in [
            r#"{"conversation":"c","kind":"message","role":null,"role":"user"}"#,
            r#"{"conversation":"c","kind":"message","content":null,"content":[]}"#,
            r#"{"conversation":"c"}"#,
            r#"{"conversation":"c","kind":1}"#,
            r#"{"conversation":"c","kind":"message","text":"\ud800"}"#,
            r#"{"conversation":"c","kind":"message"} x"#,
        ] {
            check(line, false);
        }
    }

    #[test]
    fn every_cut_and_every_changed_byte_reads_as_serde_reads_it() {
        let line = r#"{"conversation":"c","kind":"message","role":"user","idx":12,"usage":{"input_tokens":-1.5e3},"content":[{"type":"tool_result","tool_use_id":"x","content":"a\"b\\n\u00e9","is_error":false},{"type":"tool_use","id":"i","name":"n","input":{"k":[1,{"z":"}"},true]}},"s",{"type":"text","text":"t"}]}"#;
        check(line, true);
        for cut in 0..line.len() {
            if let Some(prefix) = line.get(..cut) {
                check(prefix, false);
            }
        }
        let replacements = [
            b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'x', b'u', b' ', b'n', b'.',
        ];
        for at in 0..line.len() {
            for &r in &replacements {
                let mut bytes = line.as_bytes().to_vec();
                bytes[at] = r;
                if let Ok(changed) = String::from_utf8(bytes) {
                    check(&changed, false);
                }
            }
        }
    }

    #[test]
    fn string_content_is_one_text_block() {
        let record = Record::parse(
            br#"{"conversation":"c","kind":"message","role":"user","content":"hel\nlo"}"#,
        )
        .unwrap();
        let blocks = record.blocks();
        assert!(matches!(&blocks[..], [Block::Text { text, .. }] if text.read() == "hel\nlo"));
    }

    #[test]
    fn members_keep_their_order_and_raw_values() {
        let raw = Raw::of(r#"{"b":[1, 2],"a\u0041":"x\ny","c":true}"#).unwrap();
        let members = Members::of(raw).unwrap();
        let keys: Vec<_> = members.0.iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(keys, ["b", "aA", "c"]);
        assert_eq!(members.get("b").unwrap().get(), "[1, 2]");
        assert_eq!(members.string("aA").as_deref(), Some("x\ny"));
        assert!(members.is_true("c"));
        assert!(Members::of(Raw::of("[1]").unwrap()).is_none());
    }

    #[test]
    fn unescaping_matches_serde() {
        for text in [
            "plain",
            "",
            "line\nbreak\ttab \"quoted\" back\\slash /",
            "\u{1}\u{1f}é😀\u{2028}",
            "ends with backslash \\",
        ] {
            let raw = serde_json::to_string(text).unwrap();
            let mut out = String::from("prefix:");
            assert!(unescape_into(&raw, &mut out), "{raw}");
            assert_eq!(out, format!("prefix:{text}"));
        }
        let mut out = String::new();
        assert!(unescape_into(r#""\u00e9\ud83d\ude00\/""#, &mut out));
        assert_eq!(out, "é😀/");
        out.clear();
        assert!(unescape_into(r#""\ud83d alone""#, &mut out));
        assert_eq!(out, "\u{FFFD} alone");
        assert!(!unescape_into("12", &mut out));
    }
}
