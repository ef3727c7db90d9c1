//! Reading `steps` rows: the columns decoding needs, from a parsed record
//! or straight from a line of agy-dump's canonical shape, and their hex
//! blobs decoded.

use crate::error::Result;
use crate::store::sqlite;
use crate::stream::record::{JsonCell, RowCells};

/// Decodes a blob column into a fresh vector (`None` for NULL).
pub(super) fn blob(row: &RowCells<'_>, column: &str) -> Result<Option<Vec<u8>>> {
    match row.get(column) {
        None => Ok(None),
        Some(cell) => cell
            .blob_bytes()
            .map_err(|e| e.context(format!("column {column}"))),
    }
}

/// Decodes a blob column's hex into `buf`, reusing its allocation.
pub(super) fn hex_into(hex_text: &[u8], column: &str, buf: &mut Vec<u8>) -> Result<bool> {
    if crate::stream::record::decode_hex_bytes_into(hex_text, buf) {
        return Ok(true);
    }
    // Not hex: say exactly what is wrong, as for any other column.
    let text = crate::agy::wire::lossy_str(hex_text);
    crate::stream::record::decode_hex_into(&text, buf)
        .map_err(|e| e.context(format!("column {column}")))?;
    Ok(true)
}

/// What decoding reads of a `steps` row: its integers, and its blob
/// columns (absent when NULL or not a blob): the payload as hex, decoded
/// into the decoder's buffer before the step is, and the two columns read
/// only when the payload lacks their mirror as they came.
#[derive(Default)]
pub(super) struct StepColumns<'a> {
    pub(super) idx: Option<i64>,
    pub(super) step_type: Option<i64>,
    pub(super) status: Option<i64>,
    pub(super) metadata: Option<Blob<'a>>,
    pub(super) error_details: Option<Blob<'a>>,
    pub(super) step_payload: Option<&'a [u8]>,
}

/// A blob column as it came: as hex from a line of the row stream, or as
/// its bytes from the database itself ([`super::Decoder::step_cells`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Blob<'a> {
    Hex(&'a [u8]),
    Bytes(&'a [u8]),
}

impl<'a> Blob<'a> {
    /// The blob's bytes: its own, or its hex decoded into `buf`.
    pub(super) fn bytes<'b>(self, column: &str, buf: &'b mut Vec<u8>) -> Result<&'b [u8]>
    where
        'a: 'b,
    {
        match self {
            Blob::Bytes(bytes) => Ok(bytes),
            Blob::Hex(hex_text) => {
                hex_into(hex_text, column, buf)?;
                Ok(buf)
            }
        }
    }
}

impl<'a> StepColumns<'a> {
    /// The columns of a parsed `steps` row.
    pub(super) fn of(row: &'a RowCells<'_>) -> StepColumns<'a> {
        let hex = |column: &str| match row.get(column) {
            Some(JsonCell::Plain(h)) | Some(JsonCell::Blob(h)) => Some(h.as_bytes()),
            _ => None,
        };
        StepColumns {
            idx: row.get("idx").and_then(JsonCell::as_i64),
            step_type: row.get("step_type").and_then(JsonCell::as_i64),
            status: row.get("status").and_then(JsonCell::as_i64),
            metadata: hex("metadata").map(Blob::Hex),
            error_details: hex("error_details").map(Blob::Hex),
            step_payload: hex("step_payload"),
        }
    }
}

/// Reads a line of exactly the shape agy-dump gives a row of agy's `steps`
/// table: `{"conversation":"ID","kind":"row","table":"steps","row":{…}}`
/// with known column names once each, and values that are integers, null
/// or strings of hex digits. Anything else is `None`, for the ordinary
/// parser to read. The id is checked by `str::from_utf8` and the escape
/// test.
///
/// With `payload`, the `step_payload` hex is decoded into it as it is
/// read, and its closing quote is where the digits stop: the hex, most of
/// the line, is passed over once rather than searched for the quote and
/// then decoded (the search was 2 % of agy-decode's time on a long
/// conversation). Likewise each other string's end is where its hex
/// digits end.
pub(super) fn parse_canonical_step_row<'l>(
    line: &'l [u8],
    mut payload: Option<&mut Vec<u8>>,
) -> Option<(&'l str, StepColumns<'l>)> {
    const COLUMNS: &[&str] = sqlite::STEPS_COLUMNS;
    let rest = line.strip_prefix(b"{\"conversation\":\"")?;
    let end = memchr::memchr(b'"', rest)?;
    let id = &rest[..end];
    if id.iter().any(|&b| b == b'\\' || b < 0x20) {
        return None;
    }
    let id = std::str::from_utf8(id).ok()?;
    let mut rest =
        rest[end..].strip_prefix(b"\",\"kind\":\"row\",\"table\":\"steps\",\"row\":{")?;
    let mut columns = StepColumns::default();
    let mut seen = 0u16;
    loop {
        rest = rest.strip_prefix(b"\"")?;
        let end = memchr::memchr(b'"', rest)?;
        let column = COLUMNS.iter().position(|c| c.as_bytes() == &rest[..end])?;
        if seen & (1 << column) != 0 {
            return None;
        }
        seen |= 1 << column;
        rest = rest[end + 1..].strip_prefix(b":")?;
        enum Value<'a> {
            Integer(i64),
            Null,
            Hex(&'a [u8]),
        }
        let value;
        (value, rest) = match rest.first()? {
            b'"' => {
                let body = &rest[1..];
                let end = match payload.as_deref_mut() {
                    // Decoded, so an even number of digits (as the
                    // ordinary path's decoding asks).
                    Some(out) if COLUMNS[column] == "step_payload" => {
                        let end = crate::stream::record::decode_hex_prefix_into(body, out);
                        end.is_multiple_of(2).then_some(end)?
                    }
                    _ => crate::stream::record::hex_digits_len(body),
                };
                if body.get(end) != Some(&b'"') {
                    return None;
                }
                (Value::Hex(&body[..end]), &body[end + 1..])
            }
            b'n' => (Value::Null, rest.strip_prefix(b"null")?),
            _ => {
                let end = rest.iter().position(|&b| b == b',' || b == b'}')?;
                let digits = std::str::from_utf8(&rest[..end]).ok()?;
                let unsigned = digits.strip_prefix('-').unwrap_or(digits);
                // `-0` reads as a real, not an integer, on the ordinary path.
                let plain = !unsigned.is_empty()
                    && unsigned.bytes().all(|b| b.is_ascii_digit())
                    && (unsigned == "0" || !unsigned.starts_with('0'))
                    && digits != "-0";
                if !plain {
                    return None;
                }
                (Value::Integer(digits.parse().ok()?), &rest[end..])
            }
        };
        let integer = match value {
            Value::Integer(v) => Some(v),
            _ => None,
        };
        let hex = match value {
            Value::Hex(h) => Some(h),
            _ => None,
        };
        match COLUMNS[column] {
            // A string in an integer column is text, which decoding never
            // reads, but which must still be valid JSON: leave it to the
            // parser. Likewise an integer column's other forms.
            "idx" | "step_type" | "status" | "has_subtrajectory" | "step_format"
                if hex.is_some() =>
            {
                return None
            }
            "idx" => columns.idx = integer,
            "step_type" => columns.step_type = integer,
            "status" => columns.status = integer,
            // Every string is hex digits (so valid JSON); metadata and
            // error_details are decoded only when the payload lacks their
            // mirror.
            "step_payload" => columns.step_payload = hex,
            "metadata" => columns.metadata = hex.map(Blob::Hex),
            "error_details" => columns.error_details = hex.map(Blob::Hex),
            _ => {}
        }
        // An integer where hex is read counts as absent, as in the ordinary
        // path.
        match rest.first()? {
            b',' => rest = &rest[1..],
            b'}' => break,
            _ => return None,
        }
    }
    (rest == b"}}").then_some((id, columns))
}
