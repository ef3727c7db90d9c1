//! settle: the steps a crash left in flight become CANCELED, as agy's own
//! resume leaves them (FORMAT.md 15 row 1), so that agy's rewind, "edit &
//! retry" and "revert to here" work on the conversation again (row 2).
//!
//! A step is in flight when its status is PENDING, RUNNING, GENERATING,
//! WAITING or QUEUED (1, 2, 8, 9, 11; FORMAT.md 4.2). Its `status` column
//! and its Step's field 4 say CANCELED (6) afterwards, and nothing else of
//! it changes: whatever the writer left on it (agy's own note "Step is
//! still running", a task's details) stays. agy's resume also appends a
//! system step telling the model that background work was stopped; settle
//! adds nothing, since the model has not run. The index row's
//! `not_fully_idle` flag is cleared. A conversation with nothing in flight
//! goes out byte for byte.

use crate::agy::steps::{self, field, status};
use crate::agy::wire::{self, Value};
use crate::error::{Error, Result};
use crate::store::index::IndexRow;
use crate::stream::io::Output;
use crate::stream::record::{
    edit_row, line_head, write_line, write_patched, CellEdit, JsonCell, Patch, Record, RowCells,
    Side,
};

use super::survey::Held;

/// Whether a step of this `status` column is still in flight.
pub(super) fn in_flight(status: i64) -> bool {
    u64::try_from(status).is_ok_and(steps::is_in_flight)
}

/// Writes `held` with its steps in flight settled; returns how many of each
/// status were settled, by status.
pub(super) fn write(held: &mut Held, out: &mut Output) -> Result<Vec<(i64, usize)>> {
    let mut settled: Vec<(i64, usize)> = Vec::new();
    for step in &held.facts.steps {
        if let Some(s) = step.status.filter(|&s| in_flight(s)) {
            match settled.iter_mut().find(|(status, _)| *status == s) {
                Some((_, n)) => *n += 1,
                None => settled.push((s, 1)),
            }
        }
    }
    if settled.is_empty() {
        held.copy(out)?;
        return Ok(settled);
    }
    settled.sort();
    held.replay(|line| {
        // Only steps rows and the index row can change; brain files, the
        // bulk of a conversation's bytes, are not even read.
        if !matches!(
            line_head(line),
            None | Some((_, b"row" | b"index" | b"side"))
        ) {
            return write_line(out, line);
        }
        let record = Record::parse(line)?;
        match &record {
            // The summaries count the steps' states: agy-pack makes them
            // anew from the settled conversation.
            Record::Side {
                side: Side::Summary { .. },
                ..
            } => Ok(()),
            Record::Row { table, row, .. } if table == "steps" => {
                let in_flight = row
                    .get("status")
                    .and_then(|c| c.as_i64())
                    .is_some_and(in_flight);
                if !in_flight {
                    return write_line(out, line);
                }
                settle_row(line, row, out)
            }
            Record::Index {
                user_version, row, ..
            } => {
                let mut index = IndexRow::from_record(*user_version, row);
                let busy = index.get("not_fully_idle").and_then(|c| c.as_i64());
                if busy.is_some_and(|b| b != 0) {
                    index.set("not_fully_idle", JsonCell::Integer(0));
                }
                index.write(out.buf(), record.conversation());
                out.end_record()
            }
            _ => write_line(out, line),
        }
    })?;
    Ok(settled)
}

/// Writes a steps row of a step in flight, settled.
fn settle_row(line: &[u8], row: &RowCells<'_>, out: &mut Output) -> Result<()> {
    let idx = row.get("idx").and_then(|c| c.as_i64()).unwrap_or_default();
    let in_step = |e: Error| e.context(format!("step {idx}"));
    if let Some(edits) = cancel_in_place(line, row.get("step_payload")).map_err(in_step)? {
        return write_patched(out, line, &edits);
    }
    let step = match row.get("step_payload") {
        Some(cell) => cell.blob_bytes().map_err(in_step)?,
        None => None,
    };
    let mut edits = vec![("status", CellEdit::Integer(status::CANCELED as i64))];
    if let Some(step) = step {
        let step = wire::set_varint(&step, field::step::STATUS, status::CANCELED);
        edits.push(("step_payload", CellEdit::Blob(step)));
    }
    write_line(out, &edit_row(line, &edits)?)
}

/// The edits that make a steps row's `status` column and its Step's status
/// (field 4) CANCELED where they stand in the line, every other byte as it
/// was: both are one digit or one byte in agy's rows, so the hex of a 200 MB
/// Step is not decoded, edited and encoded again for one byte. `None` for a
/// row of another shape (no status field in the Step, the column after the
/// Step), which is read and written whole instead.
fn cancel_in_place(line: &[u8], payload: Option<&JsonCell<'_>>) -> Result<Option<Vec<Patch>>> {
    let Some(JsonCell::Plain(hex)) = payload else {
        return Ok(None);
    };
    let hex_at = (hex.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
    let in_line = hex_at
        .checked_add(hex.len())
        .is_some_and(|end| end <= line.len());
    let Some(column) = status_column(line).filter(|c| in_line && c.end <= hex_at) else {
        return Ok(None);
    };
    let step = crate::stream::record::decode_hex(hex)?;
    let (spans, _) = wire::field_spans(&step);
    let places: Vec<usize> = spans
        .iter()
        .filter(|(f, raw)| {
            f.number == field::step::STATUS && matches!(f.value, Value::Varint(_)) && raw.len() == 2
        })
        .map(|(_, raw)| raw.as_ptr() as usize - step.as_ptr() as usize + 1)
        .collect();
    if places.is_empty() {
        return Ok(None);
    }
    let canceled = status::CANCELED as u8;
    let mut edits = vec![(column, vec![b'0' + canceled])];
    for place in places {
        let at = hex_at + 2 * place;
        edits.push((at..at + 2, hex::encode([canceled]).into_bytes()));
    }
    Ok(Some(edits))
}

/// Where the digits of a steps row's `status` column are in its line.
///
/// A JSON string cannot hold an unescaped quote, so `,"status":` (or
/// `{"status":`) is the key itself; the row's cells are scalars or one-key
/// objects, and the record has no other key of that name.
fn status_column(line: &[u8]) -> Option<std::ops::Range<usize>> {
    let row = memchr::memmem::find(line, b"\"row\":{")? + "\"row\":".len();
    let key = b"\"status\":";
    let found = memchr::memmem::find_iter(&line[row..], key)
        .map(|at| row + at)
        .find(|&at| matches!(line[at - 1], b',' | b'{'))?;
    let start = found + key.len();
    let len = line[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    (len > 0).then_some(start..start + len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::io::Captured;

    fn row(status: u64, payload: &[u8]) -> Vec<u8> {
        format!(
            r#"{{"conversation":"c","kind":"row","table":"steps","row":{{"idx":3,"step_type":132,"status":{status},"metadata":null,"step_payload":"{}","step_format":0}}}}"#,
            hex::encode(payload)
        )
        .into_bytes()
    }

    fn step(status: u64) -> Vec<u8> {
        let mut w = wire::Writer::new();
        w.varint(1, 132).varint(4, status).message(5, |m| {
            m.varint(3, 2);
        });
        w.message(140, |g| {
            g.message(2, |r| {
                r.string(1, "Step is still running");
            });
        });
        w.into_bytes()
    }

    /// What [`settle_row`] writes of `line`, and whether it was edited
    /// in place.
    fn settled(line: &[u8]) -> (Vec<u8>, bool) {
        let record = Record::parse(line).unwrap();
        let Record::Row { row: cells, .. } = &record else {
            unreachable!()
        };
        let in_place = cancel_in_place(line, cells.get("step_payload"))
            .unwrap()
            .is_some();
        let captured = Captured::default();
        let mut out = Output::captured(&captured);
        settle_row(line, cells, &mut out).unwrap();
        out.flush().unwrap();
        let mut bytes = captured.take();
        assert_eq!(bytes.pop(), Some(b'\n'));
        (bytes, in_place)
    }

    #[test]
    fn a_step_in_flight_is_canceled_in_place() {
        for s in [1, 2, 8, 9, 11] {
            let (out, in_place) = settled(&row(s, &step(s)));
            assert_eq!(out, row(6, &step(6)), "status {s}");
            assert!(in_place);
        }
    }

    #[test]
    fn a_step_without_its_status_field_gets_one() {
        let mut w = wire::Writer::new();
        w.varint(1, 132).string(140, "x");
        let (out, in_place) = settled(&row(2, &w.into_bytes()));
        assert!(!in_place);
        let parsed = Record::parse(&out).unwrap();
        let Record::Row { row: cells, .. } = &parsed else {
            unreachable!()
        };
        assert_eq!(cells.get("status").unwrap().as_i64(), Some(6));
        let payload = cells
            .get("step_payload")
            .unwrap()
            .blob_bytes()
            .unwrap()
            .unwrap();
        assert_eq!(wire::Message::new(&payload).get_u64(4), Some(6));
    }

    #[test]
    fn the_status_column_is_found_as_a_key_only() {
        let line = br#"{"conversation":"c","kind":"row","table":"steps","row":{"idx":3,"x":{"text":"a,\"status\":9"},"status":2}}"#;
        let at = status_column(line).unwrap();
        assert_eq!(&line[at], b"2");
        assert_eq!(status_column(br#"{"row":{"idx":1}}"#), None);
    }
}
