//! What a tool call takes and a tool result gives: [`ToolInput`], the
//! call's arguments, and [`ResultContent`], the result's text, directory
//! [`Listing`] or other JSON, each read and written in the one shape the
//! stream gives it.

use std::borrow::Cow;
use std::ops::Range;

use serde::de::Deserializer;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agy::tools::ArgList;
use crate::stream::json;

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
    ///
    /// Read by [`json::Cursor::tree`], which reads JSON as serde_json does
    /// (serde_json then reads only what it leaves): tool arguments carry
    /// whole files, and serde_json's parse of them was a tenth of agy-decode
    /// on a long conversation.
    pub fn from_arguments_json(text: &str) -> ToolInput {
        if text.trim().is_empty() {
            return ToolInput::Object(Vec::new());
        }
        let mut cursor = json::Cursor::new(text);
        if let Some(value) = cursor.tree().filter(|_| cursor.at_end()) {
            return ToolInput::from_value(value);
        }
        serde_json::from_str(text)
            .unwrap_or_else(|_| ToolInput::Other(Value::String(text.to_string())))
    }

    /// The input a JSON value stands for, as it deserializes: an object's
    /// members in their order (a repeated key, already one member in a
    /// [`Value`], keeps its first place and its last value, as here), any
    /// other value as it is.
    pub fn from_value(value: Value) -> ToolInput {
        match value {
            Value::Object(map) => ToolInput::Object(map.into_iter().collect()),
            other => ToolInput::Other(other),
        }
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
            ToolInput::Object(args) => object_json(args).text,
        }
    }
}

/// Arguments as a compact JSON object ([`object_json`]), and where each
/// argument's value is in its text.
pub struct ObjectJson {
    pub text: String,
    /// The JSON text of each argument's value, in `text`, in their order.
    pub values: Vec<Range<usize>>,
}

/// Arguments as a compact JSON object, keys in their order.
pub fn object_json(args: &ArgList) -> ObjectJson {
    // Room for the strings (an edit's or a new file's text) as they are, so
    // that the text is not grown, and copied, a doubling at a time.
    let room = args
        .iter()
        .map(|(key, value)| key.len() + 4 + value.as_str().map_or(16, |s| s.len() + 2))
        .sum::<usize>();
    let mut out = Vec::with_capacity(room + 2);
    let mut values = Vec::with_capacity(args.len());
    json::write_object(&mut out, args.iter().map(|(k, v)| (k, v)), |value| {
        values.push(value)
    });
    ObjectJson {
        text: String::from_utf8(out).expect("JSON text is UTF-8"),
        values,
    }
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

/// Read as a [`Value`] is, then taken as [`ToolInput::from_value`] takes
/// it: the one reading of a tool input, whether the message reader's fast
/// path (`Cursor::tree`) or serde_json made the value.
impl<'de> Deserialize<'de> for ToolInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(ToolInput::from_value)
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
    /// Names or entries in the listing.
    pub fn len(&self) -> usize {
        match self {
            Listing::Names(names) => names.len(),
            Listing::Entries(entries) => entries.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
    /// The entry as compact JSON, as serde_json writes it. The keys are
    /// written as constants ([`LISTING_KEYS`]'s, which the tests hold them
    /// to): a listing has hundreds of entries, and writing each key as a
    /// string of unknown length was a third of writing one.
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        if let Some(name) = &self.name {
            out.extend_from_slice(br#""name":"#);
            json::write_str(out, name);
        }
        // A comma before each member but the first.
        let mut comma = self.name.is_some();
        let mut key = |out: &mut Vec<u8>, key: &[u8]| {
            if std::mem::replace(&mut comma, true) {
                out.push(b',');
            }
            out.extend_from_slice(key);
        };
        match self.is_dir {
            Some(true) => key(out, br#""is_dir":true"#),
            Some(false) => key(out, br#""is_dir":false"#),
            None => {}
        }
        if let Some(count) = self.num_children {
            key(out, br#""num_children":"#);
            json::write_u64(out, count);
        }
        if let Some(size) = self.size_bytes {
            key(out, br#""size_bytes":"#);
            json::write_u64(out, size);
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
                // Room for entries of a typical size, not grown from none.
                let mut out = Vec::with_capacity(64 * listing.len() + 2);
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
    let mut texts = Vec::with_capacity(items.len());
    for item in items {
        let obj = item.as_object()?;
        if obj.len() != 2 || obj.get("type")?.as_str()? != "text" {
            return None;
        }
        texts.push(obj.get("text")?.as_str()?);
    }
    Some(join_result_texts(texts))
}

/// The one rule by which the text blocks of a tool result become one text:
/// they are parts of one output (the Messages API reads them so), so
/// nothing goes between them. [`ResultContent::to_text`] and the readers of
/// other agents' sessions both join by it.
pub fn join_result_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    texts.into_iter().collect()
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

#[cfg(test)]
mod tests {
    use super::*;

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
            json!([{"is_dir": false, "size_bytes": 1}, {"num_children": 2}, {"is_dir": true}]),
            json!([{"name": "y", "size_bytes": 3}, {"num_children": 0, "size_bytes": 0}]),
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
    fn result_text_of_foreign_block_lists() {
        let v = serde_json::json!([{"type":"text","text":"a"},{"type":"text","text":"b"}]);
        assert_eq!(ResultContent::Structured(v).to_text(), "ab");
        let v = serde_json::json!([{"name":"x"}]);
        assert_eq!(ResultContent::Structured(v).to_text(), r#"[{"name":"x"}]"#);
    }
}
