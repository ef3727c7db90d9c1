//! Row stream → message stream: the logic of `agy-decode`.
//!
//! Steps are read one at a time in stream order (agy-dump writes them in
//! `idx` order, after every other table of the conversation and before its
//! files). What carries over from one step to the next is small: the ids of
//! tool calls still waiting for a result, the models named by
//! `gen_metadata`, and what the `meta` record needs (first user text, latest
//! checkpoint title, latest model, lineage). A conversation is never
//! collected, with one exception that stays bounded: once a tool result's
//! full text is spilled to a brain file (`full_output_uri`), which the
//! stream carries only after the last step, the conversation's remaining
//! messages wait in a [`crate::stream::spool::Spool`] until that file has come.
//!
//! Every blob is read with the tolerant [`wire`] reader, so a damaged blob
//! gives the fields before the damage and never an error.

mod artifacts;
mod conversation;
mod rows;
mod step;
pub mod store;
pub mod summary;
mod waiting;

use std::borrow::Cow;
use std::collections::HashSet;

use crate::agy::steps::field;
use crate::agy::wire;
use crate::error::{Error, Result};
use crate::kinds::results;
use crate::stream::io::{self, Output};
use crate::stream::record::{self, FileDir, JsonCell, Record, RowCells};
use crate::time::Timestamp;

use conversation::Conversation;
use rows::{blob, hex_into, parse_canonical_step_row, StepColumns};
use step::{finish_step, StepView};
use waiting::{Hole, Waiting};

/// What to decode beyond user and assistant messages.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Also write bookkeeping steps, and kinds nothing here understands, as
    /// `system` messages.
    pub all: bool,
    /// Also gather what agy's index row says of the conversation ([`Decoder::summary`],
    /// each step's facts): agy-encode --onto needs it, plain agy-decode
    /// does not, and it copies every user text (a 50 MB one twice).
    pub index: bool,
}

/// Turns a row stream into a message stream, one record at a time.
#[derive(Default)]
pub struct Decoder {
    options: Options,
    current: Option<Conversation>,
    /// Conversations already ended, to reject a stream that interleaves them.
    finished: HashSet<String>,
    /// Reused hex-decoding buffers for the step payload and its side columns.
    payload: Vec<u8>,
    metadata: Vec<u8>,
    error_details: Vec<u8>,
    /// A damaged payload's readable part, as a message.
    repaired: Vec<u8>,
    /// The facts of the step just decoded, for [`OriginalStepRow`].
    last_facts: summary::StepFacts,
    /// What the open conversation's steps so far tell its index row.
    tally: summary::Tally,
    /// What could not be read, for the caller to say on stderr.
    warnings: Vec<String>,
    /// An `end` record came in this stream, so a conversation without one
    /// was cut short.
    saw_end: bool,
    /// Conversations whose messages are not all of them (each said in a
    /// warning, and marked in its meta record).
    pub incomplete: usize,
}

/// What `agy-encode --onto` learns of an original `steps` row besides its
/// messages.
pub struct OriginalStepRow {
    pub idx: Option<i64>,
    /// The id of the call the step executes (metadata 4.1).
    pub call_id: Option<String>,
    pub spill: Option<SpilledResult>,
    /// What the step tells the conversation's index row.
    pub facts: summary::StepFacts,
}

/// A result message just written whose text lives in a brain file.
pub struct SpilledResult {
    /// Offset in the step's message bytes where the text goes.
    pub at: usize,
    /// The brain-relative path of the file.
    pub path: String,
    /// The step's own (truncated) text, for when the file never comes.
    pub fallback: String,
}

impl Decoder {
    pub fn new(options: Options) -> Decoder {
        Decoder {
            options,
            ..Decoder::default()
        }
    }

    /// Consumes one record of the row stream, writing the message records
    /// it completes to `out`. Errors name what is wrong, not where: the
    /// caller knows the line.
    pub fn record(&mut self, record: &Record<'_>, out: &mut Output) -> Result<()> {
        self.enter(record.conversation(), out)?;
        let conv = self.current.as_mut().expect("a conversation is open");
        match record {
            Record::Row { table, row, .. } => match &**table {
                "steps" => self.step_row(row, out),
                "trajectory_meta" => {
                    if let Some(cascade) = row.get("cascade_id").and_then(JsonCell::as_text) {
                        conv.cascade_id = Some(cascade.to_string());
                    }
                    Ok(())
                }
                "trajectory_metadata_blob" => {
                    if row.get("id").and_then(JsonCell::as_text) == Some("main") {
                        conv.read_trajectory_metadata(&blob(row, "data")?.unwrap_or_default());
                    }
                    Ok(())
                }
                "gen_metadata" => {
                    conv.read_generator_metadata(&blob(row, "data")?.unwrap_or_default());
                    Ok(())
                }
                "parent_references" => {
                    conv.read_reference(&blob(row, "data")?.unwrap_or_default());
                    Ok(())
                }
                _ => Ok(()),
            },
            Record::File {
                dir: FileDir::Brain,
                path,
                append,
                content,
                ..
            } => {
                conv.artifacts.file(path, *append, content)?;
                conv.file(path, *append, content)
            }
            Record::Db { closed, .. } => {
                conv.closed = *closed;
                Ok(())
            }
            Record::End { end, .. } => {
                conv.end = Some(end.clone());
                self.saw_end = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Consumes one line of the row stream: a `steps` row or brain file
    /// in agy-dump's own shape read straight from the line, any other
    /// record parsed. Errors name what is wrong, not where.
    pub fn line(&mut self, line: &[u8], out: &mut Output) -> Result<()> {
        if self.canonical_step_line(line, out)? || self.canonical_file_line(line, out)? {
            return Ok(());
        }
        Record::parse(line).and_then(|record| self.record(&record, out))
    }

    /// Why the conversation ending is not whole, if it is not: what its end
    /// record says could not be read, or that it has none where one was to
    /// come (its db record said so, or the conversations before it had
    /// theirs). A stream from before end records says nothing either way.
    fn incomplete(&self, conv: &Conversation) -> Option<String> {
        match &conv.end {
            Some(end) => end
                .error
                .as_ref()
                .map(|error| format!("the row stream says it could not all be read: {error}")),
            None if conv.closed || self.saw_end => {
                Some("the row stream was cut short: its end record never came".to_string())
            }
            None => None,
        }
    }

    /// Makes `id` the open conversation, ending the one before.
    fn enter(&mut self, id: &str, out: &mut Output) -> Result<()> {
        if self.current.as_ref().map(|c| c.id.as_str()) == Some(id) {
            return Ok(());
        }
        self.finish(out)?;
        if self.finished.contains(id) {
            return Err(Error::data(format!(
                "conversation {id:?} appears again after another one; a stream keeps each conversation's records together"
            )));
        }
        self.current = Some(Conversation {
            id: id.to_string(),
            all: self.options.all,
            ..Conversation::default()
        });
        self.tally = summary::Tally::default();
        Ok(())
    }

    /// Ends the open conversation, if any: its held-back messages with the
    /// spilled texts in place, its artifacts, then its `meta` record.
    pub fn finish(&mut self, out: &mut Output) -> Result<()> {
        let Some(mut conv) = self.current.take() else {
            return Ok(());
        };
        if let Some(waiting) = conv.waiting.take() {
            waiting.write(out)?;
        }
        conv.incomplete = self.incomplete(&conv);
        if let Some(why) = &conv.incomplete {
            self.warnings.push(format!(
                "conversation {}: its messages are not all of it ({why}); its meta record says so",
                conv.id
            ));
            self.incomplete += 1;
        }
        std::mem::take(&mut conv.artifacts).write(&conv.id, out.buf());
        serde_json::to_writer(&mut *out.buf(), &conv.meta())
            .expect("serializing to a Vec cannot fail");
        out.buf().push(b'\n');
        out.end_record()?;
        self.finished.insert(conv.id);
        Ok(())
    }

    fn step_row(&mut self, row: &RowCells<'_>, out: &mut Output) -> Result<()> {
        self.step_columns(&StepColumns::of(row), out)
    }

    /// Decodes a `steps` row of the canonical shape agy-dump writes straight
    /// from its line, without building a record: serde_json would scan the
    /// hex of every blob for its closing quote before it is decoded, which
    /// was a tenth of agy-decode's time. Returns false, having done nothing
    /// that the ordinary path would not also do, when the line is any other
    /// record or shape (escapes, wrapped values, other columns, bad hex):
    /// the caller then parses it as usual, errors included.
    pub fn canonical_step_line(&mut self, line: &[u8], out: &mut Output) -> Result<bool> {
        let Some((conversation, columns)) = parse_canonical_step_row(line, Some(&mut self.payload))
        else {
            return Ok(false);
        };
        self.enter(conversation, out)?;
        let has_payload = columns.step_payload.is_some();
        let done = self.with_payload(has_payload, |d, payload| {
            d.step_decoded(&columns, payload, out)
        });
        self.shed();
        done.map(|()| true)
    }

    /// Takes a brain file's text part in agy-dump's shape
    /// ([`record::canonical_file_line`]) straight from its line. Most brain
    /// files (the transcripts) are read by nothing here, and parsing them
    /// with serde_json, every text unescaped into a copy only to be dropped,
    /// was a quarter of agy-decode's time on a store of many conversations
    /// (and half of it on a long conversation's 177 MB of transcripts). The
    /// text is still checked, so a bad line fails as before. A file a
    /// spilled result waits for is kept as it is when it is escaped as
    /// agy-dump escapes (no `\/`), which is what the ordinary path would
    /// write; an artifact's part goes the ordinary way. Returns false for
    /// any other line, having done nothing the ordinary path would not do
    /// first (open the line's conversation).
    pub fn canonical_file_line(&mut self, line: &[u8], out: &mut Output) -> Result<bool> {
        let Some(file) = record::canonical_file_line(line) else {
            return Ok(false);
        };
        // Entering twice is nothing: the ordinary path may still follow.
        self.enter(file.conversation, out)?;
        let conv = self.current.as_mut().expect("a conversation is open");
        let wanted = conv.wants_file(file.path);
        if wanted && file.escaped_text.windows(2).any(|w| w == b"\\/") {
            return Ok(false);
        }
        // Artifacts (the brain's top-level Markdown) are read whole.
        if conv.artifacts.needs(file.path, file.append) {
            return Ok(false);
        }
        if wanted {
            conv.escaped_file_text(file.path, file.append, file.escaped_text)?;
        }
        Ok(true)
    }

    /// [`Decoder::original_record`] for a line of the original that is a
    /// `steps` row of `conversation` in agy-dump's canonical shape, read
    /// straight from the line (as [`Decoder::canonical_step_line`] does);
    /// `None`, having done nothing, for any other line.
    pub fn original_step_line(
        &mut self,
        conversation: &str,
        line: &[u8],
        lines: &mut Vec<u8>,
    ) -> Result<Option<OriginalStepRow>> {
        let Some((id, columns)) = parse_canonical_step_row(line, Some(&mut self.payload)) else {
            return Ok(None);
        };
        if id != conversation {
            return Ok(None);
        }
        self.enter_original(id)?;
        let has_payload = columns.step_payload.is_some();
        let row = self.with_payload(has_payload, |d, payload| {
            d.original_step(&columns, has_payload.then_some(payload), lines)
        });
        self.shed();
        row.map(Some)
    }

    /// [`Decoder::original_step_line`] for a line whose `step_payload` hex
    /// was taken out (`""` left in its place, see [`payload_hex_span`]) and
    /// decoded into `payload`, which is read where it is: a row of
    /// hundreds of MB is then held as its payload, never as hex and payload
    /// at once. `None`, having done nothing, for any other line.
    pub fn original_step_without_hex(
        &mut self,
        conversation: &str,
        skeleton: &[u8],
        payload: &[u8],
        lines: &mut Vec<u8>,
    ) -> Result<Option<OriginalStepRow>> {
        let Some((id, columns)) = parse_canonical_step_row(skeleton, None) else {
            return Ok(None);
        };
        if id != conversation || columns.step_payload != Some(b"") {
            return Ok(None);
        }
        self.enter_original(id)?;
        self.original_step(&columns, Some(payload), lines).map(Some)
    }

    /// What `agy-encode --onto` needs of an original step (`payload`, when
    /// its row has one): its messages in `lines`, its idx and call id.
    fn original_step(
        &mut self,
        columns: &StepColumns<'_>,
        payload: Option<&[u8]>,
        lines: &mut Vec<u8>,
    ) -> Result<OriginalStepRow> {
        let call_id = payload.and_then(|payload| {
            wire::Message::new(payload)
                .get_message(field::step::METADATA)
                .and_then(|m| m.get_message(field::metadata::TOOL_CALL))
                .and_then(|c| c.get_str(field::tool_call::ID))
                .map(Cow::into_owned)
        });
        let spill = self.step_messages(columns, payload.unwrap_or_default(), lines)?;
        Ok(OriginalStepRow {
            idx: columns.idx,
            call_id,
            spill,
            facts: std::mem::take(&mut self.last_facts),
        })
    }

    fn step_columns(&mut self, columns: &StepColumns<'_>, out: &mut Output) -> Result<()> {
        let has_payload = self.decode_payload(columns)?;
        let done = self.with_payload(has_payload, |d, payload| {
            d.step_decoded(columns, payload, out)
        });
        self.shed();
        done
    }

    /// Calls `f` with the payload buffer lent out (empty when the row has
    /// none), so that a step is decoded from a slice wherever its bytes
    /// are: here, or in the database read in process.
    fn with_payload<T>(&mut self, has_payload: bool, f: impl FnOnce(&mut Self, &[u8]) -> T) -> T {
        let payload = std::mem::take(&mut self.payload);
        let done = f(self, if has_payload { &payload } else { &[] });
        self.payload = payload;
        done
    }

    /// Gives back the step buffers a huge row grew ([`io::shed`]).
    fn shed(&mut self) {
        for buf in [&mut self.payload, &mut self.repaired] {
            io::shed(buf);
        }
    }

    /// Decodes a row's payload hex into `self.payload`; false when the row
    /// has none.
    fn decode_payload(&mut self, columns: &StepColumns<'_>) -> Result<bool> {
        match columns.step_payload {
            Some(h) => hex_into(h, "step_payload", &mut self.payload),
            None => Ok(false),
        }
    }

    /// The step whose payload is `payload` (empty when its row has none).
    fn step_decoded(
        &mut self,
        columns: &StepColumns<'_>,
        payload: &[u8],
        out: &mut Output,
    ) -> Result<()> {
        let buf = out.buf();
        let start = buf.len();
        let spilled = self.step_messages(columns, payload, buf)?;
        let conv = self.current.as_mut().expect("a conversation is open");
        if spilled.is_none() && conv.waiting.is_none() {
            return Ok(());
        }
        // From the first spilled result on, this conversation's messages
        // wait for the files.
        let waiting = conv.waiting.get_or_insert_with(Waiting::default);
        let base = waiting.output.len();
        waiting.output.append(&buf[start..])?;
        buf.truncate(start);
        if let Some(spilled) = spilled {
            let fallback_start = waiting.texts.len();
            waiting.texts.append_json_str_body(&spilled.fallback)?;
            waiting.holes.push(Hole {
                at: base + spilled.at as u64,
                fallback: fallback_start..waiting.texts.len(),
                path: spilled.path.clone(),
            });
            waiting.files.insert(spilled.path, Vec::new());
        }
        Ok(())
    }

    /// For `agy-encode --onto`, which reads the original conversation to
    /// tell what an edited stream changed: consumes one record of the
    /// original row stream, writing nothing but, for a `steps` row, the
    /// message lines it gives into `lines` (with `--all`, system messages
    /// included), and what else the merge needs of it. A spilled result's
    /// text is left empty there; its [`SpilledResult`] says where it goes.
    pub fn original_record(
        &mut self,
        record: &Record<'_>,
        lines: &mut Vec<u8>,
    ) -> Result<Option<OriginalStepRow>> {
        self.enter_original(record.conversation())?;
        match record {
            Record::Row { table, row, .. } if table == "steps" => {
                let columns = StepColumns::of(row);
                let has_payload = self.decode_payload(&columns)?;
                let step = self.with_payload(has_payload, |d, payload| {
                    d.original_step(&columns, has_payload.then_some(payload), lines)
                });
                self.shed();
                step.map(Some)
            }
            Record::File { .. } => Ok(None),
            other => {
                let mut sink = Output::to(Box::new(std::io::sink()));
                self.record(other, &mut sink).map(|()| None)
            }
        }
    }

    /// [`Decoder::enter`] for reading an original: what ending the
    /// conversation before would write goes nowhere. (The check comes
    /// first so a step of the open conversation costs no output buffer.)
    fn enter_original(&mut self, id: &str) -> Result<()> {
        if self.current.as_ref().is_some_and(|c| c.id == id) {
            return Ok(());
        }
        self.enter(id, &mut Output::to(Box::new(std::io::sink())))
    }

    /// What the open conversation's index row would say of it now: the
    /// meta record's rules over the steps decoded so far (with
    /// [`Options::index`] only; without it, nothing is gathered).
    pub fn summary(&self) -> Option<crate::store::index::Summary> {
        let conv = self.current.as_ref()?;
        Some(self.tally.clone().summary(conv))
    }

    /// The `meta` record (without its newline) the open conversation
    /// would end with now.
    pub fn meta_line(&self) -> Vec<u8> {
        let mut line = Vec::new();
        if let Some(conv) = &self.current {
            serde_json::to_writer(&mut line, &conv.meta())
                .expect("serializing to a Vec cannot fail");
        }
        line
    }

    /// Writes the messages of the step whose payload is `payload` to `buf`.
    fn step_messages(
        &mut self,
        columns: &StepColumns<'_>,
        payload: &[u8],
        buf: &mut Vec<u8>,
    ) -> Result<Option<SpilledResult>> {
        let damage = self.repair_payload(payload, columns.step_type);
        let payload = match damage {
            Some(_) => &self.repaired[..],
            None => payload,
        };
        let step = wire::Message::new(payload);
        // The columns mirror Step fields 5 and 31; read a column only when
        // the payload lacks its field (a damaged payload, say).
        let mut metadata = step.get_message(field::step::METADATA);
        if metadata.is_none() {
            if let Some(blob) = columns.metadata {
                metadata = Some(wire::Message::new(
                    blob.bytes("metadata", &mut self.metadata)?,
                ));
            }
        }
        let mut error = step.get_message(field::step::ERROR);
        if error.is_none() {
            if let Some(blob) = columns.error_details {
                let bytes = blob.bytes("error_details", &mut self.error_details)?;
                error = Some(wire::Message::new(bytes));
            }
        }
        let view = StepView::new(
            step,
            metadata.unwrap_or_default(),
            error,
            columns.step_type,
            columns.status,
        );
        let conv = self.current.as_mut().expect("a conversation is open");
        if self.options.index {
            let facts = summary::StepFacts::of(&view);
            self.tally.note(columns.idx.unwrap_or(-1), &facts);
            self.last_facts = facts;
        }
        Ok(finish_step(
            conv,
            &mut self.warnings,
            &view,
            columns.idx,
            damage,
            buf,
        ))
    }

    /// Makes a damaged Step readable in `self.repaired`, and says what was
    /// lost: a Step cut short (or unreadable past some byte) becomes its
    /// readable part; a whole Step whose payload is damaged keeps the
    /// payload's readable part in its place. `None`, leaving `repaired`
    /// alone, for a whole Step.
    fn repair_payload(&mut self, payload: &[u8], type_column: Option<i64>) -> Option<String> {
        let damage = match wire::damage(payload) {
            Some(damage) => {
                self.repaired = wire::repair(payload).unwrap_or_default();
                format!("step_payload {damage}")
            }
            None => {
                let step = wire::Message::new(payload);
                let type_tag = step
                    .get_u64(field::step::TYPE)
                    .or(type_column.map(|v| v as u64));
                let (number, kind) = results::payload_of(step, type_tag)?;
                let damage = wire::damage(kind.bytes())?;
                let readable = wire::repair(kind.bytes()).unwrap_or_default();
                self.repaired = wire::set_field(payload, number, &[readable]);
                format!("step_payload field {number}: {damage}")
            }
        };
        Some(damage)
    }

    /// What could not be read since the last call, one line each.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// Where a `steps` row line of `conversation` in agy-dump's canonical
/// shape has its `step_payload` hex, when that hex is lowercase, as
/// agy-dump writes it: then the line is its other bytes around that hex
/// made again from the payload, and a merge can hold the payload alone
/// ([`Decoder::original_step_without_hex`]). `None` for any other line.
pub fn payload_hex_span(conversation: &str, line: &[u8]) -> Option<std::ops::Range<usize>> {
    let (id, columns) = parse_canonical_step_row(line, None)?;
    let hex = columns.step_payload.filter(|_| id == conversation)?;
    if has_uppercase_hex(hex) {
        return None;
    }
    let start = hex.as_ptr() as usize - line.as_ptr() as usize;
    Some(start..start + hex.len())
}

/// Whether `text` holds a digit of `A` to `F`: folded a page at a time,
/// without a branch per byte, so that the compiler vectorizes it.
fn has_uppercase_hex(text: &[u8]) -> bool {
    text.chunks(4096).any(|chunk| {
        chunk
            .iter()
            .fold(false, |seen, &b| seen | (b.wrapping_sub(b'A') < 6))
    })
}

/// A Timestamp message, if it holds a writable time.
pub fn read_timestamp(ts: wire::Message<'_>) -> Option<Timestamp> {
    let t = Timestamp {
        seconds: ts.get_i64(field::timestamp::SECONDS).unwrap_or(0),
        nanos: ts.get_i32(field::timestamp::NANOS).unwrap_or(0),
    };
    t.is_writable().then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `lines` one way or the other, returning the output and the
    /// first error with its line number.
    fn decode_all(lines: &[String], fast: bool) -> (String, Option<(usize, String)>) {
        let written = crate::stream::io::Captured::default();
        let mut out = Output::captured(&written);
        let mut decoder = Decoder::new(Options::default());
        let mut failure = None;
        for (n, line) in lines.iter().enumerate() {
            let line = line.as_bytes();
            let result = match fast {
                true => decoder.canonical_step_line(line, &mut out),
                false => Ok(false),
            }
            .and_then(|done| match done {
                true => Ok(()),
                false => Record::parse(line).and_then(|r| decoder.record(&r, &mut out)),
            });
            if let Err(e) = result {
                failure = Some((n, e.to_string()));
                break;
            }
        }
        if failure.is_none() {
            decoder.finish(&mut out).unwrap();
        }
        out.flush().unwrap();
        let text = String::from_utf8(written.take()).unwrap();
        (text, failure)
    }

    #[test]
    fn canonical_step_rows_decode_as_the_parser_would() {
        use crate::agy::wire::Writer;
        let mut metadata = Writer::new();
        metadata
            .message(field::metadata::CREATED_AT, |t| {
                t.varint(1, 1_786_353_243);
            })
            .varint(field::metadata::SOURCE, 4);
        let metadata = hex::encode(metadata.as_bytes());
        let mut step = Writer::new();
        step.varint(1, 14).varint(4, 3).message(19, |u| {
            u.string(2, "hello");
        });
        let payload = hex::encode(step.as_bytes());
        let row = |conversation: &str, cells: &str| {
            format!(
                "{{\"conversation\":\"{conversation}\",\"kind\":\"row\",\"table\":\"steps\",\"row\":{{{cells}}}}}"
            )
        };
        let canonical = format!(
            "\"idx\":0,\"step_type\":14,\"status\":3,\"has_subtrajectory\":0,\"metadata\":\"{metadata}\",\"error_details\":null,\"permissions\":null,\"task_details\":null,\"render_info\":null,\"step_payload\":\"{payload}\",\"step_format\":0"
        );
        let variants = [
            canonical.clone(),
            canonical.replace("\"idx\":0", "\"idx\":-0"),
            canonical.replace("\"idx\":0", "\"idx\":1.5"),
            canonical.replace("\"idx\":0", "\"idx\":007"),
            canonical.replace("\"idx\":0", "\"idx\":\"0\""),
            canonical.replace("\"idx\":0", "\"idx\":99999999999999999999"),
            canonical.replace("\"status\":3", "\"status\":3,\"status\":7"),
            canonical.replace("\"step_format\":0", "\"step_format\":0,\"future\":1"),
            canonical.replace(&payload, &payload[..payload.len() - 1]),
            canonical.replace(&payload, &format!("{}zz", &payload[..payload.len() - 2])),
            canonical.replace(&payload, &payload.to_uppercase()),
            canonical.replace("\"error_details\":null", "\"error_details\":\"0g\""),
            canonical.replace("\"permissions\":null", "\"permissions\":\"\\u0041\""),
            canonical.replace("\"render_info\":null", "\"render_info\":{\"text\":\"t\"}"),
            canonical.replace("\"metadata\":\"", "\"metadata\":5,\"m\":\""),
            canonical.replace(
                &format!("\"step_payload\":\"{payload}\""),
                "\"step_payload\":null",
            ),
            canonical.replace(
                &format!("\"step_payload\":\"{payload}\""),
                "\"step_payload\":\"0a\\\"\"",
            ),
        ];
        for cells in &variants {
            for conversation in ["c1", "c\\\"2", "ü"] {
                let lines = vec![
                    row(conversation, &canonical),
                    row(conversation, cells),
                    row(conversation, &canonical.replace("\"idx\":0", "\"idx\":1")),
                    row(conversation, cells) + " ",
                    row("other", &canonical),
                    row(conversation, &canonical),
                ];
                assert_eq!(
                    decode_all(&lines, true),
                    decode_all(&lines, false),
                    "{cells}"
                );
            }
        }
        // The fast path does take the canonical shape.
        let mut out = Output::to(Box::new(std::io::sink()));
        let mut decoder = Decoder::new(Options::default());
        assert!(decoder
            .canonical_step_line(row("c1", &canonical).as_bytes(), &mut out)
            .unwrap());
    }
}
