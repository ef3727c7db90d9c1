//! The `end` record: a conversation's last record, saying how much of it
//! the stream holds and whether all of it could be read.
//!
//! A row stream can always be cut short (a `head`, a killed pipe, a full
//! disk), a filter can drop lines, and a database can be damaged halfway
//! through. Without a closing record none of that shows: a cut stream is a
//! shorter conversation, and `agy-pack --force` would put it in place of
//! the whole one. So every writer of the stream closes each conversation
//! with
//!
//! ```text
//! {"conversation":"ID","kind":"end","whole":true,"brain":"read","schema":5,"rows":{"steps":16,"trajectory_meta":1},"index":1,"files":7}
//! ```
//!
//! - `whole`: everything of the conversation could be read. `false` comes
//!   with `"error"`, what could not (a damaged page): the records before it
//!   are what was read.
//! - `brain`: `"read"` when the conversation's brain directory was listed
//!   and every file of it is in the stream (no directory: none), or
//!   `"not_read"` (`--no-brain`, a database outside a data root): a writer
//!   then keeps the brain directory it has.
//! - `schema`, `rows` (per table, tables in byte order), `index`,
//!   `files` (file records, each part of a file in parts counted) and,
//!   when there are any, `side`: the records of the conversation before
//!   this one. A writer that could not
//!   count them (a line it could not read the head of) leaves the four out;
//!   a reader then checks only that the record came.
//!
//! [`Counts`] counts records as they go by, from a whole record or from a
//! line's head alone.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::stream::heads;
use crate::stream::io::Output;
use crate::stream::json;

use super::read::{line_head_table, LineHead};

/// How many records of each kind a conversation has before its `end`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub schema: u64,
    pub rows: BTreeMap<String, u64>,
    pub index: u64,
    pub files: u64,
    /// Side records: written only when there are any, so a stream of
    /// conversations without side entries reads as it did before them.
    pub side: u64,
}

impl Counts {
    /// Counts one record by its kind (and a row's table). `db` and `end`
    /// records are not counted: the first opens a conversation, the second
    /// closes it. An unknown kind is not counted either.
    pub fn note(&mut self, kind: &[u8], table: Option<&str>) {
        match kind {
            b"schema" => self.schema += 1,
            b"index" => self.index += 1,
            b"file" => self.files += 1,
            b"side" => self.side += 1,
            b"row" => {
                let table = table.unwrap_or_default();
                match self.rows.get_mut(table) {
                    Some(n) => *n += 1,
                    None => {
                        self.rows.insert(table.to_string(), 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// Counts one line of the stream from its head, the first bytes of it
    /// (`whole` when they are the whole line). `false` when the head does
    /// not say what the record is: a line not in the writers' own shape
    /// whose head is not all of it.
    pub fn note_head(&mut self, head: &[u8], whole: bool) -> bool {
        self.note_read_head(head, line_head_table(head), whole)
    }

    /// [`Counts::note_head`] with the head already read by
    /// [`line_head_table`].
    fn note_read_head(&mut self, head: &[u8], read: Option<LineHead<'_>>, whole: bool) -> bool {
        if let Some(LineHead { kind, table, .. }) = read {
            let table = match (kind, table) {
                (b"row", Some(table)) => std::str::from_utf8(table).ok(),
                (b"row", None) if whole => return self.note_parsed(head),
                (b"row", None) => return false,
                _ => None,
            };
            self.note(kind, table);
            return true;
        }
        whole && self.note_parsed(head)
    }

    fn note_parsed(&mut self, line: &[u8]) -> bool {
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(borrow)]
            kind: Option<Cow<'a, str>>,
            #[serde(borrow)]
            table: Option<Cow<'a, str>>,
        }
        match serde_json::from_slice::<Head<'_>>(line) {
            Ok(Head {
                kind: Some(kind),
                table,
            }) => {
                self.note(kind.as_bytes(), table.as_deref());
                true
            }
            _ => false,
        }
    }

    /// What `said` (an end record's counts) has that these do not, in
    /// words; `None` when they agree.
    pub fn missing_from(&self, said: &Counts) -> Option<String> {
        let mut wrong = Vec::new();
        let mut compare = |what: &str, said: u64, got: u64| {
            if said != got {
                wrong.push(format!("{said} {what} record(s) said, {got} arrived"));
            }
        };
        compare("schema", said.schema, self.schema);
        let tables: std::collections::BTreeSet<&String> =
            said.rows.keys().chain(self.rows.keys()).collect();
        for table in tables {
            let get = |c: &Counts| c.rows.get(table).copied().unwrap_or(0);
            compare(&format!("{table} row"), get(said), get(self));
        }
        compare("index", said.index, self.index);
        compare("file", said.files, self.files);
        compare("side", said.side, self.side);
        (!wrong.is_empty()).then(|| wrong.join(", "))
    }
}

/// What an `end` record says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct End {
    /// `None` when the whole conversation was read; else what could not be.
    pub error: Option<String>,
    /// The brain directory was read, and all of it is in the stream.
    pub brain_read: bool,
    /// The records before it, when the writer counted them.
    pub counts: Option<Counts>,
}

impl End {
    pub fn is_whole(&self) -> bool {
        self.error.is_none()
    }

    /// That the conversation this record closes arrived whole: it says all
    /// of it was read, and the records that came (`arrived`) are the ones
    /// it counts, when it counts them. The error says which, in the words
    /// every tool uses.
    pub fn check(&self, arrived: &Counts) -> Result<()> {
        if let Some(error) = &self.error {
            return Err(Error::data(format!(
                "its end record says it could not all be read ({error})"
            )));
        }
        match self
            .counts
            .as_ref()
            .and_then(|said| arrived.missing_from(said))
        {
            Some(missing) => Err(Error::data(format!(
                "its records are not all there ({missing}): the stream was cut or filtered"
            ))),
            None => Ok(()),
        }
    }

    /// Writes the record, with its newline.
    pub fn write(&self, out: &mut Vec<u8>, conversation: &str) {
        out.extend_from_slice(b"{\"conversation\":");
        json::write_str(out, conversation);
        out.extend_from_slice(b",\"kind\":\"end\",\"whole\":");
        out.extend_from_slice(if self.is_whole() { b"true" } else { b"false" });
        if let Some(error) = &self.error {
            out.extend_from_slice(b",\"error\":");
            json::write_str(out, error);
        }
        out.extend_from_slice(b",\"brain\":");
        out.extend_from_slice(if self.brain_read {
            b"\"read\""
        } else {
            b"\"not_read\""
        });
        if let Some(counts) = &self.counts {
            out.extend_from_slice(b",\"schema\":");
            json::write_u64(out, counts.schema);
            out.extend_from_slice(b",\"rows\":{");
            for (i, (table, n)) in counts.rows.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json::write_str(out, table);
                out.push(b':');
                json::write_u64(out, *n);
            }
            out.extend_from_slice(b"},\"index\":");
            json::write_u64(out, counts.index);
            out.extend_from_slice(b",\"files\":");
            json::write_u64(out, counts.files);
            if counts.side > 0 {
                out.extend_from_slice(b",\"side\":");
                json::write_u64(out, counts.side);
            }
        }
        out.extend_from_slice(b"}\n");
    }

    /// Reads the fields of an `end` record (see the module documentation).
    #[allow(clippy::too_many_arguments)] // one per field of the record
    pub(super) fn from_fields(
        whole: Option<bool>,
        error: Option<Cow<'_, str>>,
        brain: Option<Cow<'_, str>>,
        schema: Option<u64>,
        rows: Option<BTreeMap<String, u64>>,
        index: Option<u64>,
        files: Option<u64>,
        side: Option<u64>,
    ) -> Result<End> {
        let whole = whole.ok_or_else(|| Error::data("end record has no boolean \"whole\""))?;
        let error = match (whole, error) {
            (true, None) => None,
            (true, Some(_)) => {
                return Err(Error::data(
                    "end record says \"whole\":true but has an \"error\"",
                ))
            }
            (false, error) => Some(
                error
                    .map(Cow::into_owned)
                    .unwrap_or_else(|| "the writer could not read all of it".to_string()),
            ),
        };
        let brain_read = match brain.as_deref() {
            Some("read") => true,
            Some("not_read") => false,
            Some(other) => {
                return Err(Error::data(format!(
                    "end record's brain {other:?} is neither \"read\" nor \"not_read\""
                )))
            }
            None => return Err(Error::data("end record has no \"brain\"")),
        };
        let counts = match (schema, rows, index, files) {
            (None, None, None, None) => None,
            (Some(schema), Some(rows), Some(index), Some(files)) => Some(Counts {
                schema,
                rows,
                index,
                files,
                side: side.unwrap_or(0),
            }),
            _ => return Err(Error::data(
                "end record has some of \"schema\", \"rows\", \"index\" and \"files\" but not all",
            )),
        };
        Ok(End {
            error,
            brain_read,
            counts,
        })
    }
}

/// Starts counting a conversation's records: `out` hands the head of
/// every line it writes from now on to a tally, for [`close`].
pub fn count_from_here(out: &mut Output) {
    out.count_lines(Box::<Tally>::default());
}

/// Writes the `end` record of the lines written since
/// [`count_from_here`], counted from their heads (left uncounted when a
/// head does not say what its record is). Its conversation is the one the
/// first of them names, else `id`.
pub fn close(out: &mut Output, id: &str, brain_read: bool, error: Option<String>) -> Result<()> {
    let tally = out
        .count_lines(Box::<Tally>::default())
        .and_then(|tally| tally.into_any().downcast::<Tally>().ok())
        .map(|tally| *tally)
        .unwrap_or_default();
    let end = End {
        error,
        brain_read,
        counts: tally.counted.then_some(tally.counts),
    };
    end.write(out.buf(), tally.named.as_deref().unwrap_or(id));
    out.end_record()
}

/// The records of the lines an [`Output`] wrote, counted as each line
/// ends: what [`close`] says of them.
struct Tally {
    counts: Counts,
    /// Whether every line's head said what its record is.
    counted: bool,
    /// The conversation the first line names.
    named: Option<String>,
}

impl Default for Tally {
    fn default() -> Tally {
        Tally {
            counts: Counts::default(),
            counted: true,
            named: None,
        }
    }
}

impl heads::Tally for Tally {
    fn enough(&self, head: &[u8]) -> bool {
        line_head_table(head).is_some_and(|read| read.kind != b"row" || read.table.is_some())
    }

    fn line(&mut self, head: &[u8], whole: bool) {
        let read = line_head_table(head);
        self.counted &= self.counts.note_read_head(head, read, whole);
        if self.named.is_none() {
            self.named = read.map(|read| read.conversation.to_string());
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::super::Record;
    use super::*;

    fn counts() -> Counts {
        let mut counts = Counts::default();
        for (kind, table) in [
            ("schema", None),
            ("schema", None),
            ("row", Some("trajectory_meta")),
            ("row", Some("steps")),
            ("row", Some("steps")),
            ("index", None),
            ("file", None),
        ] {
            counts.note(kind.as_bytes(), table);
        }
        counts
    }

    #[test]
    fn end_records_round_trip() {
        let ends = [
            End {
                error: None,
                brain_read: true,
                counts: Some(counts()),
            },
            End {
                error: Some("table steps: database disk image is malformed".into()),
                brain_read: false,
                counts: Some(Counts::default()),
            },
            End {
                error: None,
                brain_read: true,
                counts: None,
            },
            // Counts past i64 (fuzz/ found one written as a negative
            // number, which then did not read back).
            End {
                error: None,
                brain_read: true,
                counts: Some(Counts {
                    schema: u64::MAX,
                    rows: [("t".to_string(), u64::MAX - 1)].into(),
                    index: i64::MAX as u64 + 1,
                    files: u64::MAX,
                    side: u64::MAX,
                }),
            },
        ];
        for end in ends {
            let mut line = Vec::new();
            end.write(&mut line, "c\"1");
            assert_eq!(line.pop(), Some(b'\n'));
            let Record::End {
                conversation,
                end: back,
            } = Record::parse(&line).unwrap()
            else {
                panic!("not an end record: {}", String::from_utf8_lossy(&line))
            };
            assert_eq!(conversation, "c\"1");
            assert_eq!(back, end);
        }
        let mut line = Vec::new();
        ends_with_counts().write(&mut line, "c1");
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "{\"conversation\":\"c1\",\"kind\":\"end\",\"whole\":true,\"brain\":\"read\",\"schema\":2,\"rows\":{\"steps\":2,\"trajectory_meta\":1},\"index\":1,\"files\":1}\n"
        );
    }

    fn ends_with_counts() -> End {
        End {
            error: None,
            brain_read: true,
            counts: Some(counts()),
        }
    }

    #[test]
    fn bad_end_records_say_why() {
        for (line, why) in [
            (
                r#"{"conversation":"c","kind":"end","brain":"read"}"#,
                "whole",
            ),
            (r#"{"conversation":"c","kind":"end","whole":true}"#, "brain"),
            (
                r#"{"conversation":"c","kind":"end","whole":true,"brain":"yes"}"#,
                "neither",
            ),
            (
                r#"{"conversation":"c","kind":"end","whole":true,"brain":"read","schema":1}"#,
                "not all",
            ),
            (
                r#"{"conversation":"c","kind":"end","whole":true,"error":"x","brain":"read"}"#,
                "error",
            ),
        ] {
            let err = Record::parse(line.as_bytes()).unwrap_err();
            assert!(err.message().contains(why), "{line}: {err}");
        }
    }

    #[test]
    fn heads_count_as_whole_records_do() {
        let lines: &[&[u8]] = &[
            br#"{"conversation":"c","kind":"schema","type":"table","name":"t","sql":"x"}"#,
            br#"{"conversation":"c","kind":"row","table":"steps","row":{"idx":0}}"#,
            // Not in the writers' shape: read whole.
            br#"{"kind":"row","conversation":"c","table":"steps","row":{"idx":1}}"#,
            br#"{"conversation":"c","kind":"index","user_version":0,"row":{}}"#,
            br#"{"conversation":"c","kind":"file","path":"a","text":""}"#,
        ];
        let mut counts = Counts::default();
        for line in lines {
            assert!(counts.note_head(line, true));
        }
        let mut expected = Counts::default();
        expected.note(b"schema", None);
        expected.note(b"row", Some("steps"));
        expected.note(b"row", Some("steps"));
        expected.note(b"index", None);
        expected.note(b"file", None);
        assert_eq!(counts, expected);
        // A head cut off before it says its table cannot be counted.
        assert!(!counts.note_head(br#"{"kind":"row","conversation":"c","tab"#, false));
        assert!(counts.note_head(
            br#"{"conversation":"c","kind":"row","table":"t","row":{"#,
            false
        ));
    }

    #[test]
    fn a_whole_conversation_is_one_that_is_all_there() {
        let end = ends_with_counts();
        assert!(end.check(&counts()).is_ok());
        let mut short = counts();
        short.files = 0;
        let err = end.check(&short).unwrap_err();
        assert!(err.message().contains("not all there"), "{err}");
        let uncounted = End {
            counts: None,
            ..end.clone()
        };
        assert!(
            uncounted.check(&short).is_ok(),
            "nothing counted, nothing checked"
        );
        let damaged = End {
            error: Some("page 4".into()),
            ..end
        };
        let err = damaged.check(&counts()).unwrap_err();
        assert!(
            err.message().contains("could not all be read (page 4)"),
            "{err}"
        );
    }

    #[test]
    fn missing_records_are_named() {
        let said = counts();
        assert_eq!(said.missing_from(&said), None);
        let mut got = counts();
        got.rows.insert("steps".into(), 1);
        got.files = 0;
        let why = got.missing_from(&said).unwrap();
        assert!(
            why.contains("2 steps row record(s) said, 1 arrived"),
            "{why}"
        );
        assert!(why.contains("1 file record(s) said, 0 arrived"), "{why}");
    }
}
