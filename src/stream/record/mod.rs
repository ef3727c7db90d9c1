//! The row stream: the NDJSON contract between agy-dump, agy-pack,
//! agy-decode and agy-encode.
//!
//! Each line is one record with `conversation` and `kind` first. For each
//! conversation, contiguous and in this order: one `db` record, `schema`
//! records in `sqlite_master` order, `row` records (every other table first,
//! `steps` last), at most one `index` record, the `side` records of its
//! entries in the root's side files ([`Side`]), then `file` records for the
//! brain directory, and last one `end` record ([`End`]: how much of the
//! conversation the stream holds, and whether all of it was read). A file over [`FILE_PART`] comes in parts: its first
//! record, then records with `"append":true` (agy-encode writes its
//! transcripts' parts between the step rows as they fill; readers take file
//! records anywhere after the schema).
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

mod blob_hex;
mod edit;
mod end;
mod read;
mod side;
mod write;

pub use blob_hex::{
    decode_hex, decode_hex_bytes_into, decode_hex_into, decode_hex_into_at, decode_hex_prefix_into,
    decode_hex_prefix_into_at, hex_digits_len, hex_digits_len_at, is_hex_digits, is_hex_digits_at,
};
pub use edit::{data_cells, edit_row, write_as, write_line, write_patched, CellEdit, Patch};
pub use end::{close, count_from_here, Counts, End};
pub use read::{
    canonical_file_line, line_head, line_table, CanonicalFile, JsonCell, Record, RowCells,
};
pub use side::{Side, SideFile};
pub use write::{
    file_part_len, is_blob_affinity, write_cell, write_db, write_file_part,
    write_file_part_escaped_head, write_index, write_json_cell, write_row, write_schema, Column,
    RowShape, FILE_PART, FILE_PART_ESCAPED_END,
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

/// The content of a `file` record (or of an annotation's `side` record):
/// `text` when it is UTF-8, else `hex`.
#[derive(Clone, Debug, PartialEq)]
pub enum FileContent<'a> {
    Text(Cow<'a, str>),
    Hex(Cow<'a, str>),
}

impl FileContent<'_> {
    pub fn to_bytes(&self) -> crate::error::Result<Vec<u8>> {
        match self {
            FileContent::Text(t) => Ok(t.as_bytes().to_vec()),
            FileContent::Hex(h) => decode_hex(h),
        }
    }
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
