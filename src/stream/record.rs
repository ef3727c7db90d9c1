//! The row stream: the NDJSON contract between agy-dump, agy-pack,
//! agy-decode and agy-encode.
//!
//! Each line is one record with `conversation` and `kind` first. For each
//! conversation, contiguous and in this order: one `db` record, `schema`
//! records in `sqlite_master` order, `row` records (every other table first,
//! `steps` last), at most one `index` record, then `file` records for the
//! brain directory. A file over
//! [`FILE_PART`] comes in parts: its first record, then records with
//! `"append":true` (agy-encode writes its transcripts' parts between the
//! step rows as they fill; readers take file records anywhere after the
//! schema).
//!
//! An `index` record is the conversation's row of another database: the
//! `conversation_summaries` table of the data root's
//! `conversation_summaries.db`, agy's list of conversations. It has a kind
//! of its own, so no reader can take it for a row of the conversation's
//! database, and it carries that database's `user_version` (what agy-pack
//! gives an index it has to create). Its cells follow the rules below, by
//! the affinity of the index's own columns.
//!
//! SQLite values keep their storage class and bytes. In a column whose
//! declared type has BLOB affinity a plain JSON string is the hex of a blob;
//! anywhere else it is text. The cases the plain form cannot say use a
//! one-key object:
//!
//! | form | meaning |
//! | --- | --- |
//! | `{"text":"…"}` | a TEXT value in a BLOB-affinity column |
//! | `{"blob":"00ff"}` | a BLOB value in any other column |
//! | `{"text_hex":"ff00"}` | a TEXT value whose bytes are not valid UTF-8 |
//! | `{"real":"inf"}` / `{"real":"-inf"}` | an infinite REAL |
//!
//! Integers are JSON integers; finite reals always carry a `.` or an
//! exponent, so `1.0` stays REAL.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

use crate::error::{Error, Result};
use crate::stream::json;

/// One SQLite value with its storage class and exact bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell<'a> {
    Null,
    Integer(i64),
    Real(f64),
    /// Text bytes as stored; usually, but not necessarily, UTF-8.
    Text(Cow<'a, [u8]>),
    Blob(Cow<'a, [u8]>),
}

/// Whether a declared column type gives BLOB affinity (SQLite's rule: the
/// type contains "BLOB", or no type was declared).
pub fn is_blob_affinity(declared_type: &str) -> bool {
    declared_type.trim().is_empty() || declared_type.to_ascii_uppercase().contains("BLOB")
}

/// Writes `cell` in its row-stream form for a column of the given affinity.
pub fn write_cell(out: &mut Vec<u8>, cell: &Cell<'_>, blob_column: bool) {
    match cell {
        Cell::Null => out.extend_from_slice(b"null"),
        Cell::Integer(v) => json::write_i64(out, *v),
        Cell::Real(v) if v.is_finite() => json::write_f64(out, *v),
        Cell::Real(v) => out.extend_from_slice(if *v > 0.0 {
            b"{\"real\":\"inf\"}"
        } else {
            b"{\"real\":\"-inf\"}"
        }),
        Cell::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) if !blob_column => json::write_str(out, text),
            Ok(text) => {
                out.extend_from_slice(b"{\"text\":");
                json::write_str(out, text);
                out.push(b'}');
            }
            Err(_) => {
                out.extend_from_slice(b"{\"text_hex\":");
                json::write_hex(out, bytes);
                out.push(b'}');
            }
        },
        Cell::Blob(bytes) if blob_column => json::write_hex(out, bytes),
        Cell::Blob(bytes) => {
            out.extend_from_slice(b"{\"blob\":");
            json::write_hex(out, bytes);
            out.push(b'}');
        }
    }
}

fn write_head(out: &mut Vec<u8>, conversation: &str, kind: &str) {
    out.extend_from_slice(b"{\"conversation\":");
    json::write_str(out, conversation);
    out.extend_from_slice(b",\"kind\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.push(b'"');
}

/// `{"conversation":…,"kind":"db","user_version":N}`
pub fn write_db(out: &mut Vec<u8>, conversation: &str, user_version: i64) {
    write_head(out, conversation, "db");
    out.extend_from_slice(b",\"user_version\":");
    json::write_i64(out, user_version);
    out.extend_from_slice(b"}\n");
}

/// `{"conversation":…,"kind":"schema","type":"table","name":…,"sql":…}`
pub fn write_schema(
    out: &mut Vec<u8>,
    conversation: &str,
    object_type: &str,
    name: &str,
    sql: &str,
) {
    write_head(out, conversation, "schema");
    out.extend_from_slice(b",\"type\":");
    json::write_str(out, object_type);
    out.extend_from_slice(b",\"name\":");
    json::write_str(out, name);
    out.extend_from_slice(b",\"sql\":");
    json::write_str(out, sql);
    out.extend_from_slice(b"}\n");
}

/// A column of a table being written: its name and whether plain strings in
/// it are hex blobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub blob_affinity: bool,
}

/// Writes a `row` record. `cells` must line up with `columns`.
pub fn write_row<'c>(
    out: &mut Vec<u8>,
    conversation: &str,
    table: &str,
    columns: &[Column],
    cells: impl IntoIterator<Item = Cell<'c>>,
) {
    write_head(out, conversation, "row");
    out.extend_from_slice(b",\"table\":");
    json::write_str(out, table);
    out.extend_from_slice(b",\"row\":{");
    for (i, (column, cell)) in columns.iter().zip(cells).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_str(out, &column.name);
        out.push(b':');
        write_cell(out, &cell, column.blob_affinity);
    }
    out.extend_from_slice(b"}}\n");
}

/// Writes an `index` record: the conversation's row of the data root's
/// index, columns in table order, each value in the form it was read in.
pub fn write_index<'c>(
    out: &mut Vec<u8>,
    conversation: &str,
    user_version: i64,
    cells: impl IntoIterator<Item = (&'c str, &'c JsonCell<'c>)>,
) {
    write_head(out, conversation, "index");
    out.extend_from_slice(b",\"user_version\":");
    json::write_i64(out, user_version);
    out.extend_from_slice(b",\"row\":{");
    for (i, (name, cell)) in cells.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_str(out, name);
        out.push(b':');
        write_json_cell(out, cell);
    }
    out.extend_from_slice(b"}}\n");
}

/// Writes a value read from the stream back in the form it was read in,
/// so a row that passes through unchanged keeps its bytes.
pub fn write_json_cell(out: &mut Vec<u8>, cell: &JsonCell<'_>) {
    let wrapped = |out: &mut Vec<u8>, key: &[u8], value: &str| {
        out.extend_from_slice(key);
        json::write_str(out, value);
        out.push(b'}');
    };
    match cell {
        JsonCell::Null => out.extend_from_slice(b"null"),
        JsonCell::Integer(v) => json::write_i64(out, *v),
        JsonCell::Real(v) if v.is_finite() => json::write_f64(out, *v),
        JsonCell::Real(v) => out.extend_from_slice(if *v > 0.0 {
            b"{\"real\":\"inf\"}"
        } else {
            b"{\"real\":\"-inf\"}"
        }),
        JsonCell::Plain(s) => json::write_str(out, s),
        JsonCell::Text(s) => wrapped(out, b"{\"text\":", s),
        JsonCell::Blob(h) => wrapped(out, b"{\"blob\":", h),
        JsonCell::TextHex(h) => wrapped(out, b"{\"text_hex\":", h),
    }
}

/// The most content one `file` record carries. A larger file travels as a
/// first record and then records with `"append":true`, so that no line of
/// the stream, and no reader of it, has to hold a whole large file (a long
/// conversation's transcript runs to hundreds of megabytes).
pub const FILE_PART: usize = 1 << 20;

/// Where to end the next part of `content`: all of it when it fits in
/// [`FILE_PART`], else at most that much, moved back (by at most three
/// bytes) so as not to split a UTF-8 sequence and turn a text file's part
/// into hex.
pub fn file_part_len(content: &[u8]) -> usize {
    if content.len() <= FILE_PART {
        return content.len();
    }
    let mut end = FILE_PART;
    while end > FILE_PART - 3 && content[end] & 0xc0 == 0x80 {
        end -= 1;
    }
    match content[end] & 0xc0 == 0x80 {
        true => FILE_PART,
        false => end,
    }
}

/// Writes a `file` record holding one part of a file in `dir` (only brain
/// files omit `dir`): `text` when the part is UTF-8, else `hex`. `append`
/// says that it continues the file an earlier record started.
pub fn write_file_part(
    out: &mut Vec<u8>,
    conversation: &str,
    dir: FileDir,
    path: &str,
    append: bool,
    content: &[u8],
) {
    write_file_head(out, conversation, dir, path, append);
    match std::str::from_utf8(content) {
        Ok(text) => {
            out.extend_from_slice(b",\"text\":");
            json::write_str(out, text);
        }
        Err(_) => {
            out.extend_from_slice(b",\"hex\":");
            json::write_hex(out, content);
        }
    }
    out.extend_from_slice(b"}\n");
}

/// Writes a brain file part's record up to the opening quote of its
/// `text`, for text already escaped for a JSON string (the inside of its
/// quotes), as agy-encode builds the brain transcripts: the caller writes
/// the text from where it is, then [`FILE_PART_ESCAPED_END`].
pub fn write_file_part_escaped_head(
    out: &mut Vec<u8>,
    conversation: &str,
    path: &str,
    append: bool,
) {
    write_file_head(out, conversation, FileDir::Brain, path, append);
    out.extend_from_slice(b",\"text\":\"");
}

/// What closes a record begun by [`write_file_part_escaped_head`].
pub const FILE_PART_ESCAPED_END: &[u8] = b"\"}\n";

fn write_file_head(out: &mut Vec<u8>, conversation: &str, dir: FileDir, path: &str, append: bool) {
    write_head(out, conversation, "file");
    if dir == FileDir::Conversations {
        out.extend_from_slice(b",\"dir\":\"conversations\"");
    }
    out.extend_from_slice(b",\"path\":");
    json::write_str(out, path);
    if append {
        out.extend_from_slice(b",\"append\":true");
    }
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

/// The byte that each pair of hex digits (either case) stands for, indexed
/// by the two ASCII bytes; 0x100 marks a pair that is not two hex digits.
/// One lookup per output byte instead of two.
static HEX_PAIR_VALUES: [u16; 65536] = {
    const fn digit(c: u8) -> u16 {
        match c {
            b'0'..=b'9' => (c - b'0') as u16,
            b'a'..=b'f' => (c - b'a' + 10) as u16,
            b'A'..=b'F' => (c - b'A' + 10) as u16,
            _ => 0x100,
        }
    }
    let mut table = [0x100u16; 65536];
    let mut i = 0;
    while i < 65536 {
        let (high, low) = (digit((i >> 8) as u8), digit(i as u8));
        if high != 0x100 && low != 0x100 {
            table[i] = (high << 4) | low;
        }
        i += 1;
    }
    table
};

/// Decodes a hex string, naming what was wrong.
///
/// Blobs are most of what agy-pack reads, so this is its hot loop: two table
/// lookups per byte, with the validity of a whole chunk checked at once.
pub fn decode_hex(hex_text: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decode_hex_into(hex_text, &mut out)?;
    Ok(out)
}

/// [`decode_hex`] into a reused buffer, which is cleared first.
pub fn decode_hex_into(hex_text: &str, out: &mut Vec<u8>) -> Result<()> {
    let text = hex_text.as_bytes();
    if text.len() % 2 != 0 {
        return Err(Error::data(format!(
            "bad hex: odd number of digits ({})",
            text.len()
        )));
    }
    out.clear();
    out.resize(text.len() / 2, 0);
    decode_hex_digits(text, out).map_err(|position| {
        let shown = hex_text[position..].chars().next().unwrap_or('?');
        Error::data(format!(
            "bad hex: invalid character {shown:?} at position {position}"
        ))
    })
}

/// Hex digits as bytes into a reused buffer; false when they are not an
/// even number of hex digits (the caller then takes the path that says
/// why). For text not yet known to be UTF-8.
pub fn decode_hex_bytes_into(text: &[u8], out: &mut Vec<u8>) -> bool {
    if text.len() % 2 != 0 {
        return false;
    }
    out.clear();
    out.resize(text.len() / 2, 0);
    decode_hex_digits(text, out).is_ok()
}

/// Decodes `text` into `out` (half its length), or gives the position of
/// the first byte that is not a hex digit.
fn decode_hex_digits(text: &[u8], out: &mut [u8]) -> std::result::Result<(), usize> {
    // Sixteen digits at a time where the CPU has SSE2 (every x86-64), the
    // pair table for the rest and for a chunk holding a bad digit, whose
    // position the table loop finds.
    let vectored = decode_hex_vectored(text, out);
    let (text, out) = (&text[vectored * 2..], &mut out[vectored..]);
    for (chunk_index, (dst, src)) in out.chunks_mut(64).zip(text.chunks(128)).enumerate() {
        let mut invalid = 0u16;
        for (d, pair) in dst.iter_mut().zip(src.chunks_exact(2)) {
            let value = HEX_PAIR_VALUES[usize::from(pair[0]) << 8 | usize::from(pair[1])];
            invalid |= value;
            *d = value as u8;
        }
        if invalid & 0x100 != 0 {
            let at = src
                .iter()
                .position(|b| !b.is_ascii_hexdigit())
                .expect("a chunk flagged invalid has a bad digit");
            return Err(vectored * 2 + chunk_index * 128 + at);
        }
    }
    Ok(())
}

/// Decodes whole blocks of sixteen hex digits with SSE2 until the text
/// ends or a block holds something else; returns the bytes written. On
/// other architectures it writes nothing and the table loop does it all.
///
/// Hex decoding was a ninth of agy-decode's time with the table alone.
#[cfg(target_arch = "x86_64")]
fn decode_hex_vectored(text: &[u8], out: &mut [u8]) -> usize {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function touches memory only through
    // slices.
    unsafe { decode_hex_sse2(text, out) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn decode_hex_sse2(text: &[u8], out: &mut [u8]) -> usize {
    use std::arch::x86_64::*;
    let mut written = 0;
    for (src, dst) in text.chunks_exact(16).zip(out.chunks_exact_mut(8)) {
        let low = u64::from_le_bytes(src[..8].try_into().expect("eight bytes"));
        let high = u64::from_le_bytes(src[8..].try_into().expect("eight bytes"));
        let v = _mm_set_epi64x(high as i64, low as i64);
        // Signed compares: bytes of 0x80 and above are negative, so fail.
        let digit = _mm_and_si128(
            _mm_cmpgt_epi8(v, _mm_set1_epi8(b'0' as i8 - 1)),
            _mm_cmplt_epi8(v, _mm_set1_epi8(b'9' as i8 + 1)),
        );
        let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
        let letter = _mm_and_si128(
            _mm_cmpgt_epi8(folded, _mm_set1_epi8(b'a' as i8 - 1)),
            _mm_cmplt_epi8(folded, _mm_set1_epi8(b'f' as i8 + 1)),
        );
        if _mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xffff {
            break;
        }
        // '0'..'9' & 0xf is the value; 'a'..'f' and 'A'..'F' & 0xf is 1..6.
        let nibbles = _mm_add_epi8(
            _mm_and_si128(v, _mm_set1_epi8(0x0f)),
            _mm_and_si128(letter, _mm_set1_epi8(9)),
        );
        // Each 16-bit lane holds (first digit, second digit) as (low, high).
        let pairs = _mm_or_si128(
            _mm_slli_epi16(_mm_and_si128(nibbles, _mm_set1_epi16(0x00ff)), 4),
            _mm_srli_epi16(nibbles, 8),
        );
        let bytes = _mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)) as u64;
        dst.copy_from_slice(&bytes.to_le_bytes());
        written += 8;
    }
    written
}

#[cfg(not(target_arch = "x86_64"))]
fn decode_hex_vectored(_text: &[u8], _out: &mut [u8]) -> usize {
    0
}

impl JsonCell<'static> {
    /// The stream form of an SQLite value in a column of the given
    /// affinity: what [`write_cell`] writes, as a value.
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
    pub fn to_cell(&self, blob_column: bool) -> Result<Cell<'a>> {
        Ok(match self {
            JsonCell::Null => Cell::Null,
            JsonCell::Integer(v) => Cell::Integer(*v),
            JsonCell::Real(v) => Cell::Real(*v),
            JsonCell::Plain(s) if blob_column => Cell::Blob(Cow::Owned(decode_hex(s)?)),
            JsonCell::Plain(s) | JsonCell::Text(s) => Cell::Text(match s {
                Cow::Borrowed(b) => Cow::Borrowed(b.as_bytes()),
                Cow::Owned(o) => Cow::Owned(o.clone().into_bytes()),
            }),
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
}

/// Which directory a `file` record's path is relative to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileDir {
    /// `brain/<id>/`: the default, written without a `dir` key.
    #[default]
    Brain,
    /// `conversations/`, for the ACP lane's `<id>.meta` sidecar.
    Conversations,
}

/// The content of a `file` record.
#[derive(Clone, Debug, PartialEq)]
pub enum FileContent<'a> {
    Text(Cow<'a, str>),
    Hex(Cow<'a, str>),
}

impl FileContent<'_> {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        match self {
            FileContent::Text(t) => Ok(t.as_bytes().to_vec()),
            FileContent::Hex(h) => decode_hex(h),
        }
    }
}

/// One record of the row stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Record<'a> {
    Db {
        conversation: Cow<'a, str>,
        user_version: i64,
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
            other => {
                return Err(Error::data(format!(
                    "unknown record kind {other:?} (expected db, schema, row, index or file)"
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
            | Record::File { conversation, .. } => conversation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Vec<Column> {
        vec![
            Column {
                name: "idx".into(),
                blob_affinity: false,
            },
            Column {
                name: "data".into(),
                blob_affinity: true,
            },
        ]
    }

    #[test]
    fn every_cell_form_round_trips() {
        let cases: Vec<(Cell, bool)> = vec![
            (Cell::Null, true),
            (Cell::Integer(-3), false),
            (Cell::Real(1.0), false),
            (Cell::Real(f64::INFINITY), false),
            (Cell::Real(f64::NEG_INFINITY), true),
            (Cell::Text(Cow::Borrowed(b"x\"y")), false),
            (Cell::Text(Cow::Borrowed(b"in blob")), true),
            (Cell::Text(Cow::Borrowed(b"\xff\xfe")), false),
            (Cell::Blob(Cow::Borrowed(b"\x00\x01")), true),
            (Cell::Blob(Cow::Borrowed(b"")), true),
            (Cell::Blob(Cow::Borrowed(b"\x02")), false),
        ];
        for (cell, blob) in cases {
            let mut out = Vec::new();
            write_cell(&mut out, &cell, blob);
            let back: JsonCell = serde_json::from_slice(&out).unwrap();
            assert_eq!(
                back.to_cell(blob).unwrap(),
                cell,
                "{}",
                String::from_utf8_lossy(&out)
            );
        }
    }

    #[test]
    fn row_record_round_trips() {
        let mut out = Vec::new();
        let cells = vec![Cell::Integer(0), Cell::Blob(Cow::Borrowed(b"\x08\x0e"))];
        write_row(&mut out, "c1", "steps", &columns(), cells);
        assert_eq!(
            out,
            b"{\"conversation\":\"c1\",\"kind\":\"row\",\"table\":\"steps\",\"row\":{\"idx\":0,\"data\":\"080e\"}}\n"
        );
        let rec = Record::parse(&out[..out.len() - 1]).unwrap();
        let Record::Row { row, .. } = rec else {
            panic!()
        };
        assert_eq!(
            row.get("data").unwrap().blob_bytes().unwrap().unwrap(),
            b"\x08\x0e"
        );
    }

    #[test]
    fn index_records_keep_every_form_of_their_values() {
        let cases: Vec<(Cell, bool)> = vec![
            (Cell::Null, false),
            (Cell::Integer(-1), false),
            (Cell::Real(0.5), false),
            (Cell::Real(f64::NEG_INFINITY), false),
            (Cell::Text(Cow::Borrowed(b"title")), false),
            (Cell::Text(Cow::Borrowed(b"in a blob column")), true),
            (Cell::Text(Cow::Borrowed(b"\xff")), false),
            (Cell::Blob(Cow::Borrowed(b"\x0a\x00")), true),
            (Cell::Blob(Cow::Borrowed(b"\x01")), false),
        ];
        let cells: Vec<(String, JsonCell)> = cases
            .iter()
            .enumerate()
            .map(|(i, (cell, blob))| (format!("c{i}"), JsonCell::from_cell(cell, *blob)))
            .collect();
        let mut out = Vec::new();
        write_index(
            &mut out,
            "c1",
            3,
            cells.iter().map(|(n, c)| (n.as_str(), c)),
        );
        // The same bytes as each value written straight from SQLite.
        let mut expected =
            b"{\"conversation\":\"c1\",\"kind\":\"index\",\"user_version\":3,\"row\":{".to_vec();
        for (i, (cell, blob)) in cases.iter().enumerate() {
            if i > 0 {
                expected.push(b',');
            }
            expected.extend_from_slice(format!("\"c{i}\":").as_bytes());
            write_cell(&mut expected, cell, *blob);
        }
        expected.extend_from_slice(b"}}\n");
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected)
        );
        let Record::Index {
            user_version, row, ..
        } = Record::parse(&out[..out.len() - 1]).unwrap()
        else {
            panic!("not an index record")
        };
        assert_eq!(user_version, 3);
        let back: Vec<(String, JsonCell)> = row
            .0
            .into_iter()
            .map(|(n, c)| (n.into_owned(), c.into_owned()))
            .collect();
        assert_eq!(back, cells);
        let err = Record::parse(br#"{"conversation":"c","kind":"index","row":{}}"#).unwrap_err();
        assert!(err.message().contains("user_version"), "{err}");
    }

    #[test]
    fn hex_decodes_like_the_hex_crate() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 300] {
            let text = hex::encode(&bytes[..len]);
            assert_eq!(decode_hex(&text).unwrap(), &bytes[..len]);
            assert_eq!(decode_hex(&text.to_uppercase()).unwrap(), &bytes[..len]);
        }
        let err = decode_hex(&format!("{}0g", "00".repeat(100))).unwrap_err();
        assert!(err.message().contains("'g' at position 201"), "{err}");
        // A bad digit at every place of a vector block, and after blocks.
        for at in 0..40 {
            for bad in [b'g', b'G', b'/', b':', b'@', b'`', b' ', 0x7f] {
                let mut text = "0a".repeat(20).into_bytes();
                text[at] = bad;
                let text = String::from_utf8(text).unwrap();
                let err = decode_hex(&text).unwrap_err();
                let expected = format!("at position {at}");
                assert!(err.message().contains(&expected), "{text}: {err}");
            }
        }
        let all: String = (0..=255u8).map(|b| format!("{b:02X}")).collect();
        assert_eq!(decode_hex(&all).unwrap(), (0..=255u8).collect::<Vec<_>>());
        assert!(decode_hex("abc")
            .unwrap_err()
            .message()
            .contains("odd number"));
        assert!(decode_hex("zz").is_err());
        assert!(decode_hex("é0").is_err());
    }

    #[test]
    fn bad_records_say_why() {
        let err = Record::parse(br#"{"conversation":"c","kind":"nope"}"#).unwrap_err();
        assert!(err.message().contains("unknown record kind"));
        let err = Record::parse(
            br#"{"conversation":"c","kind":"row","table":"t","row":{"a":{"zz":"1"}}}"#,
        )
        .unwrap_err();
        assert!(err.message().contains("unknown wrapped value"), "{err}");
        let err = Record::parse(b"{nope").unwrap_err();
        assert!(err.message().contains("bad JSON"));
    }
}
