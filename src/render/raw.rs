//! A JSON value kept as its text, for the renderer to read when it shows
//! it: a tool's input or result of megabytes is borrowed from the line,
//! never built into a tree.

use serde::de::Deserializer;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::stream::json::Cursor;

/// A JSON value as its text, borrowed from the line: checked when the line
/// was read, read when it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    pub const NULL: Raw<'static> = Raw("null");

    /// `text` as one JSON value, if it is one (whitespace around it is not
    /// kept).
    pub fn of(text: &'a str) -> Option<Raw<'a>> {
        serde_json::from_str::<&RawValue>(text)
            .ok()
            .map(|raw| Raw(raw.get()))
    }

    /// The value at `cursor`, checked as it is skipped; `None` for what
    /// the cursor leaves to serde_json.
    pub fn read(cursor: &mut Cursor<'a>) -> Option<Raw<'a>> {
        cursor.value().map(Raw)
    }

    /// The value's JSON text.
    pub fn get(self) -> &'a str {
        self.0
    }

    /// The value's text copied, to be read elsewhere (on another thread)
    /// without checking it again.
    pub fn to_owned_raw(self) -> OwnedRaw {
        OwnedRaw(self.0.to_string())
    }
}

/// A [`Raw`] that owns its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedRaw(String);

impl OwnedRaw {
    pub fn get(&self) -> Raw<'_> {
        Raw(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Raw<'a>, D::Error> {
        <&'de RawValue>::deserialize(deserializer).map(|raw| Raw(raw.get()))
    }
}
