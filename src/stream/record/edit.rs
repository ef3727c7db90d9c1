//! Records changed in place: a record written again as it came (or as
//! another conversation's), and a `row` record with some of its cells
//! replaced, every other byte kept. agy-encode `--onto` and agy-edit change
//! conversations this way.

use crate::error::{Error, Result};
use crate::stream::io::Output;
use crate::stream::json;

use super::line_head;

/// A line longer than this goes to the output as it is, not copied into
/// its buffer: a row of 200 MB would be there twice.
const WRITE_THROUGH_AT: usize = 1 << 20;

/// Writes `line` and its newline as one record.
pub fn write_line(out: &mut Output, line: &[u8]) -> Result<()> {
    if line.len() > WRITE_THROUGH_AT {
        out.write_through(line)?;
        out.buf().push(b'\n');
        return out.end_record();
    }
    out.buf().extend_from_slice(line);
    out.buf().push(b'\n');
    out.end_record()
}

/// Writes `line`, a record of some conversation, as a record of
/// conversation `id`: every other byte as it was. A line in agy-dump's
/// shape has its head replaced and the rest written from where it is (a
/// row of 200 MB is not copied); any other is read and written again.
pub fn write_as(out: &mut Output, line: &[u8], id: &str) -> Result<()> {
    if let Some((old, _)) = line_head(line) {
        let rest = &line[HEAD.len() + old.len() + 1..];
        let buf = out.buf();
        buf.extend_from_slice(HEAD);
        json::write_str_body(buf, id);
        buf.push(b'"');
        write_piece(out, rest)?;
        out.buf().push(b'\n');
        return out.end_record();
    }
    let mut record: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(line).map_err(|e| Error::data(format!("bad JSON: {e}")))?;
    record.insert("conversation".into(), serde_json::Value::String(id.into()));
    let bytes = serde_json::to_vec(&record).expect("serializing to a Vec cannot fail");
    write_line(out, &bytes)
}

/// Bytes of a line, by where they are, and what takes their place.
pub type Patch = (std::ops::Range<usize>, Vec<u8>);

/// Writes `line` as one record with the bytes at each range of `edits`
/// (in order, not overlapping) replaced: a few bytes changed in a long
/// line without a copy of it.
pub fn write_patched(out: &mut Output, line: &[u8], edits: &[Patch]) -> Result<()> {
    let mut at = 0;
    for (range, bytes) in edits {
        write_piece(out, &line[at..range.start])?;
        out.buf().extend_from_slice(bytes);
        at = range.end;
    }
    write_piece(out, &line[at..])?;
    out.buf().push(b'\n');
    out.end_record()
}

/// A piece of a record: through the buffer when short, else straight out.
fn write_piece(out: &mut Output, piece: &[u8]) -> Result<()> {
    if piece.len() > WRITE_THROUGH_AT {
        out.write_through(piece)
    } else {
        out.buf().extend_from_slice(piece);
        Ok(())
    }
}

/// How a record in agy-dump's shape opens, up to its conversation id.
const HEAD: &[u8] = b"{\"conversation\":\"";

/// The cells that replace a row's `data` blob: `data`, and `size` when
/// the row has that column (agy's `gen_metadata` keeps the blob's length
/// there).
pub fn data_cells(row: &super::RowCells<'_>, data: Vec<u8>) -> Vec<(&'static str, CellEdit)> {
    let mut edits = Vec::new();
    if row.get("size").is_some() {
        edits.push(("size", CellEdit::Integer(data.len() as i64)));
    }
    edits.insert(0, ("data", CellEdit::Blob(data)));
    edits
}

/// A new value for one cell of a row.
pub enum CellEdit {
    Integer(i64),
    Text(String),
    Blob(Vec<u8>),
    Null,
}

/// `line` (a `row` record) with some cells replaced; every other byte of
/// the record as it was.
pub fn edit_row(line: &[u8], edits: &[(&str, CellEdit)]) -> Result<Vec<u8>> {
    let mut record: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(line).map_err(|e| Error::data(format!("bad JSON: {e}")))?;
    let row = record
        .get_mut("row")
        .and_then(|r| r.as_object_mut())
        .ok_or_else(|| Error::data("row record has no \"row\" object"))?;
    for (column, edit) in edits {
        let value = match edit {
            CellEdit::Integer(v) => serde_json::Value::from(*v),
            CellEdit::Text(text) => serde_json::Value::String(text.clone()),
            CellEdit::Blob(bytes) => {
                // The vectored hex writer: a step's blob is megabytes, and
                // `hex::encode` goes a char at a time.
                let mut digits = Vec::with_capacity(bytes.len() * 2);
                json::write_hex_body(&mut digits, bytes);
                serde_json::Value::String(String::from_utf8(digits).expect("hex digits are ASCII"))
            }
            CellEdit::Null => serde_json::Value::Null,
        };
        row.insert(column.to_string(), value);
    }
    Ok(serde_json::to_vec(&record).expect("serializing to a Vec cannot fail"))
}
