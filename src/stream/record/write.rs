//! Writing the row stream: each kind of record, with its cells in their
//! row-stream form, and a file's content cut into parts of at most
//! [`FILE_PART`].

use crate::error::Result;
use crate::stream::io::Output;
use crate::stream::json;

use super::{Cell, FileDir, JsonCell};

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

/// `{"conversation":…,"kind":"db","user_version":N,"closed":true}`:
/// `closed` says that the conversation's records end with an `end` record
/// (see [`End`](super::End)), so a reader that meets the next conversation,
/// or the end of the stream, before it knows the conversation was cut.
pub fn write_db(out: &mut Vec<u8>, conversation: &str, user_version: i64, closed: bool) {
    write_head(out, conversation, "db");
    out.extend_from_slice(b",\"user_version\":");
    json::write_i64(out, user_version);
    if closed {
        out.extend_from_slice(b",\"closed\":true");
    }
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

/// Writes a `row` record. `cells` must line up with `columns`. A writer
/// of many rows of one table holds a [`RowShape`] instead.
pub fn write_row<'c>(
    out: &mut Vec<u8>,
    conversation: &str,
    table: &str,
    columns: &[Column],
    cells: impl IntoIterator<Item = Cell<'c>>,
) {
    RowShape::new(conversation, table, columns).write(out, cells);
}

/// What every `row` record of one table in one conversation has in
/// common, escaped once: the head (conversation, kind, table) and each
/// column's key. agy-dump and agy-encode write a conversation's rows
/// through one, because escaping the same dozen names again at every row
/// was 3 % of agy-encode's instructions.
pub struct RowShape {
    /// `{"conversation":…,"kind":"row","table":…,"row":{`
    head: Vec<u8>,
    /// Each column's `"name":` (after a comma, but for the first) and
    /// whether it has BLOB affinity.
    keys: Vec<(Box<[u8]>, bool)>,
}

impl RowShape {
    pub fn new(conversation: &str, table: &str, columns: &[Column]) -> RowShape {
        let mut head = Vec::new();
        write_head(&mut head, conversation, "row");
        head.extend_from_slice(b",\"table\":");
        json::write_str(&mut head, table);
        head.extend_from_slice(b",\"row\":{");
        let keys = (columns.iter().enumerate())
            .map(|(i, column)| {
                let mut key = Vec::new();
                if i > 0 {
                    key.push(b',');
                }
                json::write_str(&mut key, &column.name);
                key.push(b':');
                (key.into_boxed_slice(), column.blob_affinity)
            })
            .collect();
        RowShape { head, keys }
    }

    /// Writes a row of `cells`, which must line up with the columns.
    pub fn write<'c>(&self, out: &mut Vec<u8>, cells: impl IntoIterator<Item = Cell<'c>>) {
        out.extend_from_slice(&self.head);
        for ((key, blob_affinity), cell) in self.keys.iter().zip(cells) {
            out.extend_from_slice(key);
            write_cell(out, &cell, *blob_affinity);
        }
        out.extend_from_slice(b"}}\n");
    }

    /// [`RowShape::write`] into `out`, the hex of a blob over
    /// [`HEX_THROUGH_OVER`] bytes written out as it is made
    /// ([`Output::write_hex_str`]) rather than whole into the buffer: the
    /// longest lines of a stream are rows of one large blob, twice its size,
    /// and no writer needs to hold one. The bytes are the same. The caller
    /// ends the record.
    pub fn write_to<'c>(
        &self,
        out: &mut Output,
        cells: impl IntoIterator<Item = Cell<'c>>,
    ) -> Result<()> {
        out.buf().extend_from_slice(&self.head);
        for ((key, blob_affinity), cell) in self.keys.iter().zip(cells) {
            out.buf().extend_from_slice(key);
            match &cell {
                Cell::Blob(bytes) if *blob_affinity && bytes.len() > HEX_THROUGH_OVER => {
                    out.write_hex_str(bytes)?
                }
                _ => write_cell(out.buf(), &cell, *blob_affinity),
            }
        }
        out.buf().extend_from_slice(b"}}\n");
        Ok(())
    }
}

/// Blobs over this many bytes are written by [`RowShape::write_to`] a piece at a
/// time; smaller ones, every row of a usual conversation, go into the
/// buffer whole as before.
pub const HEX_THROUGH_OVER: usize = 4 << 20;

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
    // simdutf8: brain files are most of the bytes agy-dump writes on a long
    // conversation, and std's check of them was 7 % of its instructions.
    match simdutf8::basic::from_utf8(content) {
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
