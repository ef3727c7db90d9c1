//! The row stream: the NDJSON contract between agy-dump, agy-pack,
//! agy-decode and agy-encode.
//!
//! Each line is one record with `conversation` and `kind` first. For each
//! conversation, contiguous and in this order: one `db` record, `schema`
//! records in `sqlite_master` order, `row` records (every other table first,
//! `steps` last), then `file` records for the brain directory. A file over
//! [`FILE_PART`] comes in parts: its first record, then records with
//! `"append":true` (agy-encode writes its transcripts' parts between the
//! step rows as they fill; readers take file records anywhere after the
//! schema).
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

mod blob_hex;
mod read;
mod write;

pub use blob_hex::{decode_hex, decode_hex_bytes_into, decode_hex_into, is_hex_digits};
pub use read::{canonical_file_line, CanonicalFile, FileContent, JsonCell, Record, RowCells};
pub use write::{
    file_part_len, is_blob_affinity, write_cell, write_db, write_file_part,
    write_file_part_escaped_head, write_row, write_row_to, write_schema, Column, FILE_PART,
    FILE_PART_ESCAPED_END,
};

use std::borrow::Cow;

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

/// Which directory a `file` record's path is relative to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileDir {
    /// `brain/<id>/`: the default, written without a `dir` key.
    #[default]
    Brain,
    /// `conversations/`, for the ACP lane's `<id>.meta` sidecar.
    Conversations,
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
