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

use serde::Deserialize;

use crate::stream::json::Cursor;
use crate::time::Timestamp;

pub use super::raw::Raw;

mod content;

pub use content::{Block, Content, Media, Members};

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
