//! A message's `content` as agy-render reads it: its blocks, each kept
//! as its members' raw text until it is shown (see the parent module).

use std::borrow::Cow;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::stream::json::Cursor;

use super::super::text::Text;
use super::{opt_string, Raw};

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
    pub(super) fn read(cursor: &mut Cursor<'a>) -> Option<Option<Content<'a>>> {
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
