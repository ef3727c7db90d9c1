//! Reading the row stream: a line parsed ([`Record::parse`]) into a
//! [`Record`], a row's values kept as [`JsonCell`]s, borrowed from the line
//! where they can be, until the column's affinity says what each one is.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

use crate::error::{Error, Result};
use crate::stream::json;

use super::blob_hex::decode_hex;
use super::side::{Side, SideFields};
#[cfg(doc)]
use super::FILE_PART;
use super::{Cell, End, FileContent, FileDir};

/// A brain `file` record read straight from its line: see
/// [`canonical_file_line`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CanonicalFile<'a> {
    pub conversation: &'a str,
    pub path: &'a str,
    pub append: bool,
    /// The text's JSON string body, still escaped.
    pub escaped_text: &'a [u8],
}

/// Reads a line of exactly the shape agy-dump (and agy-encode) give a
/// brain file's text part, `{"conversation":"ID","kind":"file","path":"P",
/// ["append":true,]"text":"…"}`, where the id and path need no escape and
/// the text is one [`json::is_simple_str_body`] accepts: a line that
/// [`Record::parse`] reads as a `File` record with these fields. Anything
/// else is `None`, for the parser.
///
/// A reader that drops most brain files (agy-decode keeps only those a
/// spilled result names) can so accept one without unescaping its text into
/// a copy; the text is still checked, so a bad line is never let through.
pub fn canonical_file_line(line: &[u8]) -> Option<CanonicalFile<'_>> {
    fn plain(rest: &[u8]) -> Option<(&str, &[u8])> {
        let end = memchr::memchr(b'"', rest)?;
        let text = &rest[..end];
        if text.iter().any(|&b| b == b'\\' || b < 0x20) {
            return None;
        }
        Some((std::str::from_utf8(text).ok()?, &rest[end + 1..]))
    }
    let (conversation, rest) = plain(line.strip_prefix(b"{\"conversation\":\"")?)?;
    let (path, rest) = plain(rest.strip_prefix(b",\"kind\":\"file\",\"path\":\"")?)?;
    let (append, rest) = match rest.strip_prefix(b",\"append\":true") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let escaped_text = rest.strip_prefix(b",\"text\":\"")?.strip_suffix(b"\"}")?;
    json::is_simple_str_body(escaped_text).then_some(CanonicalFile {
        conversation,
        path,
        append,
        escaped_text,
    })
}

/// The conversation id and kind of a line in the shape agy-decode and
/// agy-dump write (`{"conversation":"…","kind":"…"`), else `None`.
pub fn line_head(line: &[u8]) -> Option<(&str, &[u8])> {
    let rest = line.strip_prefix(b"{\"conversation\":\"")?;
    let end = memchr::memchr(b'"', rest)?;
    let id = &rest[..end];
    if id.iter().any(|&b| b == b'\\' || b < 0x20) {
        return None;
    }
    let rest = rest[end..].strip_prefix(b"\",\"kind\":\"")?;
    let kind_end = memchr::memchr(b'"', rest)?;
    Some((std::str::from_utf8(id).ok()?, &rest[..kind_end]))
}

/// The table of a `row` record in the shape agy-dump writes
/// (`{"conversation":"…","kind":"row","table":"…"`), told without parsing
/// the row: a tool that changes a few tables passes the others' rows, a
/// conversation's bulk, as they are. `None` for any other line.
pub fn line_table(line: &[u8]) -> Option<&[u8]> {
    line_head_table(line)?.table
}

/// What the head of a line in the writers' shape says: [`line_head`] and,
/// for a `row` record, [`line_table`].
#[derive(Clone, Copy, Debug)]
pub struct LineHead<'a> {
    pub conversation: &'a str,
    pub kind: &'a [u8],
    pub table: Option<&'a [u8]>,
}

/// A line's [`LineHead`], read in one pass: the end record's tally asks
/// all three of every line a writer writes.
pub fn line_head_table(line: &[u8]) -> Option<LineHead<'_>> {
    let (conversation, kind) = line_head(line)?;
    let mut head = LineHead {
        conversation,
        kind,
        table: None,
    };
    if kind == b"row" {
        let at = "{\"conversation\":\"".len() + conversation.len() + "\",\"kind\":\"row".len();
        head.table = line[at..]
            .strip_prefix(b"\",\"table\":\"")
            .and_then(|rest| Some(&rest[..memchr::memchr(b'"', rest)?]))
            .filter(|table| !table.contains(&b'\\'));
    }
    Some(head)
}

/// A value as read from the stream, before the column's affinity says what a
/// plain string means.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonCell<'a> {
    Null,
    Integer(i64),
    Real(f64),
    /// A plain string: hex in a BLOB-affinity column, text elsewhere.
    Plain(Cow<'a, str>),
    /// `{"text":…}`
    Text(Cow<'a, str>),
    /// `{"blob":…}` (hex)
    Blob(Cow<'a, str>),
    /// `{"text_hex":…}`
    TextHex(Cow<'a, str>),
}

impl JsonCell<'static> {
    /// The stream form of an SQLite value in a column of the given
    /// affinity: what [`write_cell`](super::write_cell) writes, as a value.
    pub fn from_cell(cell: &Cell<'_>, blob_column: bool) -> JsonCell<'static> {
        match cell {
            Cell::Null => JsonCell::Null,
            Cell::Integer(v) => JsonCell::Integer(*v),
            Cell::Real(v) => JsonCell::Real(*v),
            Cell::Text(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) if !blob_column => JsonCell::Plain(Cow::Owned(text.to_owned())),
                Ok(text) => JsonCell::Text(Cow::Owned(text.to_owned())),
                Err(_) => JsonCell::TextHex(Cow::Owned(hex::encode(bytes))),
            },
            Cell::Blob(bytes) if blob_column => JsonCell::Plain(Cow::Owned(hex::encode(bytes))),
            Cell::Blob(bytes) => JsonCell::Blob(Cow::Owned(hex::encode(bytes))),
        }
    }
}

impl<'a> JsonCell<'a> {
    /// This value with its own copy of any text it borrows.
    pub fn into_owned(self) -> JsonCell<'static> {
        let own = |s: Cow<'a, str>| Cow::Owned(s.into_owned());
        match self {
            JsonCell::Null => JsonCell::Null,
            JsonCell::Integer(v) => JsonCell::Integer(v),
            JsonCell::Real(v) => JsonCell::Real(v),
            JsonCell::Plain(s) => JsonCell::Plain(own(s)),
            JsonCell::Text(s) => JsonCell::Text(own(s)),
            JsonCell::Blob(s) => JsonCell::Blob(own(s)),
            JsonCell::TextHex(s) => JsonCell::TextHex(own(s)),
        }
    }

    /// The SQLite value this stands for in a column of the given affinity.
    pub fn to_cell(&self, blob_column: bool) -> Result<Cell<'_>> {
        Ok(match self {
            JsonCell::Null => Cell::Null,
            JsonCell::Integer(v) => Cell::Integer(*v),
            JsonCell::Real(v) => Cell::Real(*v),
            JsonCell::Plain(s) if blob_column => Cell::Blob(Cow::Owned(decode_hex(s)?)),
            // Borrowed, not copied: an index row's preview is the first
            // user text, which may be tens of MB.
            JsonCell::Plain(s) | JsonCell::Text(s) => Cell::Text(Cow::Borrowed(s.as_bytes())),
            JsonCell::Blob(h) => Cell::Blob(Cow::Owned(decode_hex(h)?)),
            JsonCell::TextHex(h) => Cell::Text(Cow::Owned(decode_hex(h)?)),
        })
    }

    /// The bytes of a blob column's value (plain hex or `{"blob":…}`);
    /// `None` for NULL and for values that are not blobs.
    pub fn blob_bytes(&self) -> Result<Option<Vec<u8>>> {
        match self {
            JsonCell::Plain(h) | JsonCell::Blob(h) => decode_hex(h).map(Some),
            _ => Ok(None),
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            JsonCell::Integer(v) => Some(*v),
            _ => None,
        }
    }

    /// A text value as a string (plain or wrapped).
    pub fn as_text(&self) -> Option<&str> {
        match self {
            JsonCell::Plain(s) | JsonCell::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsonCell<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct CellVisitor;
        impl<'de> Visitor<'de> for CellVisitor {
            type Value = JsonCell<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("null, an integer, a real, a string or a one-key wrapped value")
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<Self::Value, E> {
                Ok(JsonCell::Null)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
                Ok(JsonCell::Integer(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
                i64::try_from(v)
                    .map(JsonCell::Integer)
                    .map_err(|_| E::custom(format!("integer {v} does not fit SQLite's 64 bits")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Self::Value, E> {
                Ok(JsonCell::Real(v))
            }
            fn visit_borrowed_str<E: de::Error>(
                self,
                v: &'de str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(JsonCell::Plain(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Ok(JsonCell::Plain(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<Self::Value, E> {
                Ok(JsonCell::Plain(Cow::Owned(v)))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let Some(BorrowedStr(key)) = map.next_key::<BorrowedStr<'de>>()? else {
                    return Err(de::Error::custom("empty object is not a value"));
                };
                let value: Cow<'de, str> = map.next_value::<BorrowedStr<'de>>()?.0;
                let cell = match &*key {
                    "text" => JsonCell::Text(value),
                    "blob" => JsonCell::Blob(value),
                    "text_hex" => JsonCell::TextHex(value),
                    "real" => match &*value {
                        "inf" => JsonCell::Real(f64::INFINITY),
                        "-inf" => JsonCell::Real(f64::NEG_INFINITY),
                        other => {
                            return Err(de::Error::custom(format!(
                                "wrapped real must be \"inf\" or \"-inf\", not {other:?}"
                            )))
                        }
                    },
                    other => {
                        return Err(de::Error::custom(format!(
                        "unknown wrapped value {other:?} (expected text, blob, text_hex or real)"
                    )))
                    }
                };
                if map.next_key::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom("a wrapped value has exactly one key"));
                }
                Ok(cell)
            }
        }
        d.deserialize_any(CellVisitor)
    }
}

/// A string that borrows from the input when it has no escapes. (serde's
/// own `Cow<str>` always copies.)
struct BorrowedStr<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for BorrowedStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct StrVisitor;
        impl<'de> Visitor<'de> for StrVisitor {
            type Value = BorrowedStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(
                self,
                v: &'de str,
            ) -> std::result::Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Ok(BorrowedStr(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(StrVisitor)
    }
}

/// The columns of a row record, in the order they were written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowCells<'a>(pub Vec<(Cow<'a, str>, JsonCell<'a>)>);

impl<'a> RowCells<'a> {
    pub fn get(&self, column: &str) -> Option<&JsonCell<'a>> {
        self.0
            .iter()
            .find(|(name, _)| name == column)
            .map(|(_, v)| v)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RowCells<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct RowVisitor;
        impl<'de> Visitor<'de> for RowVisitor {
            type Value = RowCells<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of column -> value")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut cells = Vec::new();
                while let Some(key) = map.next_key::<BorrowedStr<'de>>()? {
                    let value = map.next_value::<JsonCell<'de>>()?;
                    if cells.iter().any(|(k, _): &(Cow<'de, str>, _)| *k == key.0) {
                        return Err(de::Error::custom(format!(
                            "column {:?} appears twice",
                            key.0
                        )));
                    }
                    cells.push((key.0, value));
                }
                Ok(RowCells(cells))
            }
        }
        d.deserialize_map(RowVisitor)
    }
}

/// The raw shape of any record line; [`Record::parse`] checks it.
#[derive(serde::Deserialize)]
struct RawRecord<'a> {
    #[serde(borrow)]
    conversation: Option<Cow<'a, str>>,
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    user_version: Option<i64>,
    #[serde(borrow, rename = "type")]
    object_type: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    sql: Option<Cow<'a, str>>,
    #[serde(borrow)]
    table: Option<Cow<'a, str>>,
    #[serde(borrow)]
    row: Option<RowCells<'a>>,
    #[serde(borrow)]
    dir: Option<Cow<'a, str>>,
    #[serde(borrow)]
    path: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    hex: Option<Cow<'a, str>>,
    append: Option<bool>,
    closed: Option<bool>,
    whole: Option<bool>,
    #[serde(borrow)]
    error: Option<Cow<'a, str>>,
    #[serde(borrow)]
    brain: Option<Cow<'a, str>>,
    schema: Option<u64>,
    rows: Option<std::collections::BTreeMap<String, u64>>,
    index: Option<u64>,
    files: Option<u64>,
    side: Option<u64>,
    #[serde(borrow)]
    file: Option<Cow<'a, str>>,
    #[serde(borrow)]
    key: Option<Cow<'a, str>>,
    #[serde(borrow)]
    from: Option<Cow<'a, str>>,
    #[serde(borrow)]
    to: Option<Cow<'a, str>>,
}

/// One record of the row stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Record<'a> {
    Db {
        conversation: Cow<'a, str>,
        user_version: i64,
        /// The conversation's records end with an `end` record: without
        /// one, it was cut short.
        closed: bool,
    },
    Schema {
        conversation: Cow<'a, str>,
        object_type: Cow<'a, str>,
        name: Cow<'a, str>,
        sql: Cow<'a, str>,
    },
    Row {
        conversation: Cow<'a, str>,
        table: Cow<'a, str>,
        row: RowCells<'a>,
    },
    /// The conversation's row of the data root's index (see the module
    /// documentation).
    Index {
        conversation: Cow<'a, str>,
        /// The index database's `PRAGMA user_version`.
        user_version: i64,
        row: RowCells<'a>,
    },
    File {
        conversation: Cow<'a, str>,
        dir: FileDir,
        path: Cow<'a, str>,
        /// Continues the file an earlier record of this conversation
        /// started (see [`FILE_PART`]).
        append: bool,
        content: FileContent<'a>,
    },
    /// The conversation's entry in a side file (see [`Side`]).
    Side {
        conversation: Cow<'a, str>,
        side: Side<'a>,
    },
    /// The conversation's last record: how much of it the stream holds
    /// (see [`End`]).
    End {
        conversation: Cow<'a, str>,
        end: End,
    },
}

fn required<'a>(field: Option<Cow<'a, str>>, kind: &str, key: &str) -> Result<Cow<'a, str>> {
    field.ok_or_else(|| Error::data(format!("{kind} record has no \"{key}\"")))
}

impl<'a> Record<'a> {
    /// Parses one line (without its newline). The error says what is wrong;
    /// the caller adds the file and line.
    pub fn parse(line: &'a [u8]) -> Result<Record<'a>> {
        let raw: RawRecord<'a> =
            serde_json::from_slice(line).map_err(|e| Error::data(format!("bad JSON: {e}")))?;
        let conversation = raw
            .conversation
            .ok_or_else(|| Error::data("record has no \"conversation\""))?;
        let kind = raw
            .kind
            .ok_or_else(|| Error::data("record has no \"kind\""))?;
        Ok(match &*kind {
            "db" => Record::Db {
                conversation,
                user_version: raw
                    .user_version
                    .ok_or_else(|| Error::data("db record has no integer \"user_version\""))?,
                closed: raw.closed.unwrap_or(false),
            },
            "schema" => Record::Schema {
                conversation,
                object_type: required(raw.object_type, "schema", "type")?,
                name: required(raw.name, "schema", "name")?,
                sql: required(raw.sql, "schema", "sql")?,
            },
            "row" => Record::Row {
                conversation,
                table: required(raw.table, "row", "table")?,
                row: raw
                    .row
                    .ok_or_else(|| Error::data("row record has no \"row\" object"))?,
            },
            "index" => Record::Index {
                conversation,
                user_version: raw
                    .user_version
                    .ok_or_else(|| Error::data("index record has no integer \"user_version\""))?,
                row: raw
                    .row
                    .ok_or_else(|| Error::data("index record has no \"row\" object"))?,
            },
            "file" => {
                let content = match (raw.text, raw.hex) {
                    (Some(t), None) => FileContent::Text(t),
                    (None, Some(h)) => FileContent::Hex(h),
                    _ => {
                        return Err(Error::data(
                            "file record needs exactly one of \"text\" and \"hex\"",
                        ))
                    }
                };
                let dir = match raw.dir.as_deref() {
                    None | Some("brain") => FileDir::Brain,
                    Some("conversations") => FileDir::Conversations,
                    Some(other) => {
                        return Err(Error::data(format!(
                            "file record's dir {other:?} is neither brain nor conversations"
                        )))
                    }
                };
                Record::File {
                    conversation,
                    dir,
                    path: required(raw.path, "file", "path")?,
                    append: raw.append.unwrap_or(false),
                    content,
                }
            }
            "side" => {
                let side = SideFields {
                    file: raw.file,
                    key: raw.key,
                    text: raw.text,
                    hex: raw.hex,
                    from: raw.from,
                    to: raw.to,
                }
                .read(&conversation)?;
                Record::Side { conversation, side }
            }
            "end" => Record::End {
                conversation,
                end: End::from_fields(
                    raw.whole,
                    raw.error,
                    raw.brain,
                    raw.schema,
                    raw.rows,
                    raw.index,
                    raw.files,
                    raw.side,
                )?,
            },
            other => {
                return Err(Error::data(format!(
                    "unknown record kind {other:?} (expected db, schema, row, index, side, file or end)"
                )))
            }
        })
    }

    pub fn conversation(&self) -> &str {
        match self {
            Record::Db { conversation, .. }
            | Record::Schema { conversation, .. }
            | Record::Row { conversation, .. }
            | Record::Index { conversation, .. }
            | Record::File { conversation, .. }
            | Record::Side { conversation, .. }
            | Record::End { conversation, .. } => conversation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::record::write_file_part;

    /// What the parser reads of a brain text file line, in the fast path's
    /// terms (the text escaped again by our writer).
    fn parsed_file(line: &[u8]) -> Option<(String, String, bool, Vec<u8>)> {
        match Record::parse(line) {
            Ok(Record::File {
                conversation,
                dir: FileDir::Brain,
                path,
                append,
                content: FileContent::Text(text),
            }) => {
                let mut escaped = Vec::new();
                json::write_str_body(&mut escaped, &text);
                Some((conversation.into(), path.into(), append, escaped))
            }
            _ => None,
        }
    }

    #[test]
    fn a_rows_table_is_read_from_its_head() {
        let line = br#"{"conversation":"c","kind":"row","table":"steps","row":{"idx":1}}"#;
        assert_eq!(line_table(line), Some(&b"steps"[..]));
        assert_eq!(
            line_table(br#"{"conversation":"c","kind":"row","table":"a\"b","row":{}}"#),
            None
        );
        assert_eq!(
            line_table(br#"{"conversation":"c","kind":"index","row":{}}"#),
            None
        );
        assert_eq!(
            line_table(br#"{"kind":"row","conversation":"c","table":"t"}"#),
            None
        );
    }

    #[test]
    fn canonical_file_lines_read_as_the_parser_reads_them() {
        let texts: &[&[u8]] = &[
            b"",
            b"{\"step\":1}\n\ttabbed \\ back\\slash",
            "caf\u{e9} \u{2014}".as_bytes(),
            b"\x01 control",
            b"\xff\xfe not utf-8",
        ];
        for &text in texts {
            for append in [false, true] {
                for dir in [FileDir::Brain, FileDir::Conversations] {
                    let mut line = Vec::new();
                    write_file_part(&mut line, "c-1", dir, "logs/t.jsonl", append, text);
                    line.pop();
                    // Every brain text part the writer makes, but for one
                    // with a \u escape (a control character), which the
                    // fast path leaves to the parser.
                    let expected =
                        parsed_file(&line).filter(|_| !line.windows(2).any(|w| w == b"\\u"));
                    let got = canonical_file_line(&line).map(|f| {
                        let text = f.escaped_text.to_vec();
                        (f.conversation.into(), f.path.into(), f.append, text)
                    });
                    assert_eq!(got, expected, "{}", String::from_utf8_lossy(&line));
                }
            }
        }
        // Shapes the writer does not make: each left to the parser, which
        // reads or refuses it.
        let others: &[&[u8]] = &[
            br#"{"conversation":"c","kind":"file","path":"p","text":"\u00e9"}"#,
            br#"{"conversation":"c","kind":"file","path":"p","text":"a"} "#,
            br#"{"conversation":"c","kind":"file","path":"p","text":"a"b"}"#,
            br#"{"conversation":"c","kind":"file","path":"p","text":"a\"}"#,
            br#"{"conversation":"c\"","kind":"file","path":"p","text":"a"}"#,
            br#"{"conversation":"c","kind":"file","path":"p","append":false,"text":"a"}"#,
            br#"{"conversation":"c","kind":"file","path":"p","hex":"00"}"#,
        ];
        for &line in others {
            assert_eq!(
                canonical_file_line(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
