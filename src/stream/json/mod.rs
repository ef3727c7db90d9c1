//! Low-level JSON text output shared by the row and message writers.
//!
//! Records are written straight into a byte buffer instead of going through
//! `serde_json::Value`: a step row is mostly one large hex string, and
//! building a tree for it would copy it twice for nothing.
//!
//! `escape` writes text as JSON strings, `scan` reads string literals
//! without unescaping them, `unescape` reads their escapes, `hex` writes
//! blobs as hex strings, `read` reads a line of JSON in place; this module
//! writes numbers, values and keys.

use std::ops::Range;

mod escape;
mod hex;
mod read;
mod scan;
mod unescape;

pub use escape::{
    write_str, write_str_body, write_str_body_at, write_str_body_twice, write_str_body_twice_at,
};
pub use hex::{write_hex, write_hex_body, write_hex_body_at};
pub use read::Cursor;
pub use scan::{
    clean_prefix_len, clean_prefix_len_at, is_simple_str_body, is_simple_str_body_at,
    simple_str_end, simple_str_end_at, simple_str_end_by_walking,
};
pub use unescape::{
    escape_len, read_escape, simple_escape, unescape_body_at, unescape_text_at, LoneSurrogate,
};

pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    serde_json::to_writer(out, &v).expect("writing to a Vec cannot fail");
}

pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    serde_json::to_writer(out, &v).expect("writing to a Vec cannot fail");
}

/// Writes a finite real so that it reads back as a real: `1.0`, never `1`.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    debug_assert!(v.is_finite());
    serde_json::to_writer(out, &v).expect("writing to a Vec cannot fail");
}

/// Writes a JSON value compactly, byte for byte as `serde_json` does, but
/// with strings (tool arguments carry whole files) through [`write_str`].
pub fn write_value(out: &mut Vec<u8>, value: &serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(out, map, |_| ()),
        scalar => serde_json::to_writer(out, scalar).expect("writing to a Vec cannot fail"),
    }
}

/// The compact JSON text of `value`, as `value.to_string()` gives it, but
/// through [`write_value`] rather than `fmt`'s per-piece calls.
pub fn value_to_string(value: &serde_json::Value) -> String {
    let mut out = Vec::new();
    write_value(&mut out, value);
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// Writes an object from its entries in order; see [`write_value`].
/// `mark` is told where each value's text lies in `out`, in entry order, so
/// that a caller can take a value's JSON text from there rather than write
/// it again.
pub fn write_object<'v>(
    out: &mut Vec<u8>,
    entries: impl IntoIterator<Item = (&'v String, &'v serde_json::Value)>,
    mut mark: impl FnMut(Range<usize>),
) {
    out.push(b'{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, key);
        out.push(b':');
        let start = out.len();
        write_value(out, value);
        mark(start..out.len());
    }
    out.push(b'}');
}

/// Writes `"key":` (the key must need no escaping).
pub fn write_key(out: &mut Vec<u8>, key: &str) {
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_serde_writes_them() {
        let value = serde_json::json!({
            "z": [1, -2, 3.5, 1e300, true, false, null, "a\"b"],
            "a": {"nested": {"x": "é\n"}, "empty": {}, "list": []},
            "u": 18446744073709551615u64
        });
        let mut out = Vec::new();
        write_value(&mut out, &value);
        assert_eq!(out, serde_json::to_vec(&value).unwrap());
        assert_eq!(value_to_string(&value), value.to_string());
    }

    #[test]
    fn reals_stay_real() {
        let mut out = Vec::new();
        write_f64(&mut out, 1.0);
        assert_eq!(out, b"1.0");
    }
}
