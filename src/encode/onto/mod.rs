//! `agy-encode --onto`: an edited message stream written back onto the
//! row stream of the conversation it was decoded from.
//!
//! Both streams come in conversation and step order, so the merge walks
//! them side by side and holds one original step at a time. Each original
//! step is decoded again (as `agy-decode --all` would) into the message
//! lines it gives; the edited stream's lines are matched to it:
//!
//! - lines equal byte for byte to the step's own: the step is unchanged and
//!   its row goes out as it was;
//! - lines that name the step's `idx` but differ: the step is edited, and
//!   only what changed is rewritten in its bytes ([`crate::agy::patch`]);
//! - no line names the step: deleted, unless the stream could not have
//!   shown it (a call still running, or a bookkeeping step in a stream
//!   decoded without `--all`), in which case it is kept;
//! - lines without an `idx`: new messages, written as new steps where they
//!   stand.
//!
//! Steps are renumbered so that idx stays contiguous where it was (agy
//! numbers a conversation's steps 0, 1, 2, … and appends at the end; a hole
//! is what only `/rewind` leaves, transiently). Everything that names a
//! step by idx follows: the step's own 5.20.2, `gen_metadata` step lists,
//! a rewind reference to this conversation, and `steps/<idx>/` brain
//! files. The rows of other tables come before the steps in the original
//! stream but need the new numbering, so they wait in a spool and go out
//! after the steps.
//!
//! Here the walk over both streams; `steps` settles each original step
//! (kept, renumbered, deleted, edited, new steps where they stand), `edit`
//! turns a changed message into edits of the step's bytes, `meta` an
//! edited meta record into edits of the trajectory metadata, the index row
//! and the sidecar, `rows` writes the held rows and the brain files with
//! the numbering and the edits applied, and [`crate::agy::patch`] is the schema-free protobuf editing they share.

mod edit;

mod meta;
mod rows;
mod step_row;
mod steps;

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::sync::Arc;

use crate::decode::summary::{StepFacts, Tally};
use crate::decode::{self, Decoder, OriginalStepRow, SpilledResult};
use crate::encode::{self, Synth};
use crate::error::{Error, Result};
use crate::stream::io::{Lines, Output};
use crate::stream::message::Role;
use crate::stream::record::{self, line_head, write_line, Counts, End, Record};
use crate::stream::spool::Spool;
use step_row::StepRow;

/// What the merge needs to know besides the two streams.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The stream was decoded with `--all`: a bookkeeping step no message
    /// names was deleted. Without it this is learnt from the first system
    /// message, and bookkeeping steps before it are kept.
    pub all: bool,
    /// New tool steps are GENERIC, as agy 1.1 writes them.
    pub generic: bool,
}

/// Merges an edited message stream onto its original row stream.
pub struct Merger {
    options: Options,
    original: Lines,
    /// An original line read ahead.
    peeked: Option<Vec<u8>>,
    decoder: Decoder,
    /// The message lines of the step being loaded, reused.
    lines: Vec<u8>,
    conv: Option<Merge>,
    finished: HashSet<String>,
    unread: encode::Unread,
    /// The original stream's records of the conversation its last line
    /// belongs to, counted for its end record.
    original_counts: (String, Counts),
    /// Said once the merge is done, besides the unread keys.
    warnings: Vec<String>,
}

/// One conversation being merged.
struct Merge {
    id: String,
    all: bool,
    /// The original step being matched.
    cur: Option<OriginalStep>,
    /// The original has no more steps for this conversation.
    steps_done: bool,
    /// New idx minus old idx for the next kept step.
    delta: i64,
    /// The idx after the last step written.
    next_idx: i64,
    /// (old idx, new idx or deleted), in old order.
    map: Vec<(i64, Option<i64>)>,
    /// The original's rows of other tables, written after the steps.
    held: Spool,
    held_lines: Vec<std::ops::Range<u64>>,
    synth: Synth,
    /// Calls an edit changed (their new ChatToolCall) or removed (`None`).
    changed_calls: HashMap<String, Option<Vec<u8>>>,
    /// Edited calls' string arguments, (old, new), by the call's original
    /// id: the step that executes the call holds copies of them (a code
    /// action's file content, a command line).
    arg_edits: HashMap<String, Vec<(String, String)>>,
    /// Spilled results: brain path → the edited stream's text for it
    /// (escaped as in a JSON string), when it differs from the step's own.
    spill_texts: HashMap<String, Vec<u8>>,
    /// Text edits by original idx, (old, new), for the brain transcripts'
    /// lines of those steps. A user text is shared with the tallies, which
    /// keep it too (a pasted text is tens of MB).
    text_edits: HashMap<i64, Vec<TextEdit>>,
    /// Buffers of settled steps, for the next ones.
    pool: Vec<Vec<u8>>,
    /// The original's "main" trajectory metadata, for an edit of the meta
    /// record.
    metadata: Option<Vec<u8>>,
    /// What an edited meta record changes besides the title.
    meta_edit: Option<meta::MetaEdit>,
    /// What the steps written tell the index row (the new steps' facts
    /// join at the end, from [`Synth`]).
    after: Tally,
    /// The original's end record, once read (checked).
    original_end: Option<End>,
    /// The edited stream's meta record came: agy-decode writes it last, so
    /// a stream without it was cut short.
    saw_meta: bool,
}

/// A text edit, (old, new).
type TextEdit = (Arc<str>, Arc<str>);

/// An original step and what the edited stream said of it so far.
struct OriginalStep {
    idx: i64,
    /// The row as the original stream has it.
    line: StepRow,
    /// Its message lines, one after the other (newlines included).
    lines: Vec<u8>,
    /// Each message line's place in `lines`, and whether it is a system
    /// message.
    expected: Vec<(std::ops::Range<usize>, bool)>,
    matched: Vec<bool>,
    spill: Option<SpilledResult>,
    /// Edited lines that name this step.
    edited: Vec<Vec<u8>>,
    /// The call this step executes, if any.
    call_id: Option<String>,
    /// What it tells the index row, as the original has it.
    facts: StepFacts,
}

impl OriginalStep {
    /// The `i`th message line (without its newline).
    fn expected_line(&self, i: usize) -> &[u8] {
        &self.lines[self.expected[i].0.clone()]
    }

    fn named(&self) -> bool {
        !self.edited.is_empty() || self.matched.iter().any(|&m| m)
    }

    /// Shows nothing in a stream decoded with or without `--all`.
    fn hidden(&self, all: bool) -> bool {
        self.expected.iter().all(|(_, system)| *system && !all)
    }

    /// Which expected line `line` is, byte for byte (a spilled result's
    /// text may be anything: it is checked against the file later).
    fn match_line(&self, line: &[u8]) -> Option<(usize, Option<Vec<u8>>)> {
        for i in 0..self.expected.len() {
            if self.matched[i] {
                continue;
            }
            let expected = self.expected_line(i);
            if line == expected {
                return Some((i, None));
            }
            // The spilled result is the step's last message; its text goes
            // `at` bytes into it.
            let last = i + 1 == self.expected.len();
            if let Some(spill) = self
                .spill
                .as_ref()
                .filter(|s| last && s.at <= expected.len())
            {
                let (head, tail) = expected.split_at(spill.at);
                if line.len() >= expected.len()
                    && line.starts_with(head)
                    && line.ends_with(tail)
                    && head.ends_with(b"\"")
                {
                    let text = &line[head.len()..line.len() - tail.len()];
                    if !text.contains(&b'"') || is_json_str_body(text) {
                        return Some((i, Some(text.to_vec())));
                    }
                }
            }
        }
        None
    }
}

/// Whether `text` is the inside of a JSON string (quotes escaped).
fn is_json_str_body(text: &[u8]) -> bool {
    let mut quoted = Vec::with_capacity(text.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(text);
    quoted.push(b'"');
    serde_json::from_slice::<serde::de::IgnoredAny>(&quoted).is_ok()
}

impl Merger {
    pub fn open(path: &OsStr, options: Options) -> Result<Merger> {
        Ok(Merger {
            options,
            original: Lines::open(path)?,
            peeked: None,
            decoder: Decoder::new(decode::Options {
                all: true,
                index: true,
            }),
            lines: Vec::new(),
            conv: None,
            finished: HashSet::new(),
            unread: encode::Unread::default(),
            original_counts: Default::default(),
            warnings: Vec::new(),
        })
    }

    /// Warnings about keys nothing reads, and about the original, since
    /// the last call.
    pub fn take_warnings(&mut self) -> Vec<String> {
        let mut warnings = self.unread.take();
        warnings.append(&mut self.warnings);
        warnings
    }

    /// Consumes one line of the edited message stream.
    pub fn line(&mut self, line: &[u8], out: &mut Output) -> Result<()> {
        let (id, kind) = match line_head(line) {
            Some((id, kind)) => (id.to_string(), kind.to_vec()),
            None => {
                let record = encode::parse_line(line)?;
                let id = record
                    .conversation
                    .ok_or_else(|| Error::data("record has no \"conversation\""))?;
                let kind = record
                    .kind
                    .ok_or_else(|| Error::data("record has no \"kind\""))?;
                (id.into_owned(), kind.into_owned().into_bytes())
            }
        };
        if self.conv.as_ref().map(|c| c.id.as_str()) != Some(id.as_str()) {
            self.finish(out)?;
            if !self.finished.insert(id.clone()) {
                return Err(Error::data(format!(
                    "conversation {id:?} appears again after another one; a stream keeps each conversation's records together"
                )));
            }
            self.begin(&id, out)
                .map_err(|e| e.context(format!("conversation {id}")))?;
        }
        let in_conversation = |e: Error| e.context(format!("conversation {id}"));
        match kind.as_slice() {
            b"meta" => self.meta(line, out).map_err(in_conversation),
            b"message" => self.message(line, out).map_err(in_conversation),
            // The original's brain files, artifacts among them, are carried
            // over as they were.
            b"artifact" => Ok(()),
            other => Err(Error::data(format!(
                "unknown record kind {:?} (expected message, meta or artifact)",
                String::from_utf8_lossy(other)
            ))),
        }
    }

    /// Ends the conversation being merged, if any.
    pub fn finish(&mut self, out: &mut Output) -> Result<()> {
        let Some(conv) = &self.conv else {
            return Ok(());
        };
        if !conv.saw_meta {
            return Err(Error::data(format!(
                "conversation {}: the message stream ends without its meta record, which agy-decode writes last: \
                 it was cut short, and what is missing would be deleted; nothing of it is written back",
                conv.id
            )));
        }
        self.drain_steps(out)?;
        let mut conv = self.conv.take().expect("checked above");
        let at = conv.next_idx;
        conv.next_idx = conv.synth.pending(at, out)?;
        let written = conv.synth.take_tally();
        conv.after.absorb(written);
        self.write_held(&mut conv, out)?;
        self.copy_files(&mut conv, out)?;
        match &conv.original_end {
            Some(end) => record::close(out, &conv.id, end.brain_read, None),
            None => {
                self.warnings.push(format!(
                    "conversation {}: the --onto stream has no end record for it, so nothing says it was whole; the result has none either, and agy-pack will not put it in place of a conversation",
                    conv.id
                ));
                Ok(())
            }
        }
    }

    /// Checks the original's end record: all of the conversation was read,
    /// and every record it counts came.
    fn check_original_end(&self, end: &End) -> Result<End> {
        let (id, counts) = &self.original_counts;
        let refuse = |why: String| {
            self.original_error(Error::data(format!(
                "conversation {id}: {why}; nothing of it is written back"
            )))
        };
        end.check(counts)
            .map_err(|e| refuse(e.message().to_string()))?;
        Ok(end.clone())
    }

    /// Counts an original line toward its conversation's end record.
    fn count_original(&mut self, line: &[u8]) -> Result<()> {
        let id = match line_head(line) {
            Some((id, _)) => std::borrow::Cow::Borrowed(id),
            None => std::borrow::Cow::Owned(
                Record::parse(line)
                    .map_err(|e| self.original_error(e))?
                    .conversation()
                    .to_string(),
            ),
        };
        let (counting, counts) = &mut self.original_counts;
        if *counting != *id {
            *counting = id.into_owned();
            *counts = Counts::default();
        }
        counts.note_head(line, true);
        Ok(())
    }

    fn next_original(&mut self) -> Result<Option<Vec<u8>>> {
        if let Some(line) = self.peeked.take() {
            return Ok(Some(line));
        }
        let mut buf = self
            .conv
            .as_mut()
            .and_then(|c| c.pool.pop())
            .unwrap_or_default();
        let read = self
            .original
            .next_line_into(&mut buf)
            .map_err(|e| e.context(self.original.place()))?;
        self.original.shed();
        if read {
            self.count_original(&buf)?;
        }
        Ok(read.then_some(buf))
    }

    fn original_error(&self, e: Error) -> Error {
        e.context(format!("--onto {}", self.original.place()))
    }

    /// Finds the conversation in the original stream (skipping the ones
    /// before it, which the edited stream left out), copies its db and
    /// schema records, and holds its other rows until the steps are done.
    fn begin(&mut self, id: &str, out: &mut Output) -> Result<()> {
        let mut conv = Merge {
            id: id.to_string(),
            all: self.options.all,
            cur: None,
            steps_done: false,
            delta: 0,
            next_idx: 0,
            map: Vec::new(),
            held: Spool::default(),
            held_lines: Vec::new(),
            synth: Synth::new(id, self.options.generic),
            changed_calls: HashMap::new(),
            arg_edits: HashMap::new(),
            spill_texts: HashMap::new(),
            text_edits: HashMap::new(),
            pool: Vec::new(),
            metadata: None,
            meta_edit: None,
            after: Tally::default(),
            original_end: None,
            saw_meta: false,
        };
        record::count_from_here(out);
        let mut found = false;
        while let Some(line) = self.next_original()? {
            // Another conversation's line is told by its head, unparsed.
            if line_head(&line).is_some_and(|(other, _)| other != id) {
                if found {
                    self.peeked = Some(line);
                    break;
                }
                continue;
            }
            let record = Record::parse(&line).map_err(|e| self.original_error(e))?;
            if record.conversation() != id {
                if found {
                    self.peeked = Some(line);
                    break;
                }
                continue;
            }
            found = true;
            match &record {
                Record::Db { .. } | Record::Schema { .. } => write_line(out, &line)?,
                Record::Row { table, row, .. } if table != "steps" => {
                    if table == "trajectory_metadata_blob"
                        && row
                            .get("id")
                            .and_then(|c| c.as_text())
                            .is_none_or(|id| id == "main")
                    {
                        conv.metadata = row
                            .get("data")
                            .map(|c| c.blob_bytes())
                            .transpose()
                            .map_err(|e| self.original_error(e))?
                            .flatten();
                    }
                    let start = conv.held.len();
                    conv.held.append(&line)?;
                    conv.held_lines.push(start..conv.held.len());
                }
                _ => {
                    self.peeked = Some(line);
                    break;
                }
            }
            // The decoder reads every record before the steps, the db record
            // too, so a conversation with no rows at all (a database agy made
            // and wrote nothing into) is open in it and has the meta record
            // agy-decode gave it.
            self.decoder
                .original_record(&record, &mut Vec::new())
                .map_err(|e| self.original_error(e))?;
        }
        if !found {
            return Err(Error::data(format!(
                "conversation {id:?} is not in the --onto stream (both streams must hold their conversations in the same order)"
            )));
        }
        self.conv = Some(conv);
        Ok(())
    }

    /// Loads the next original step of the conversation, if any.
    fn load_step(&mut self) -> Result<()> {
        // agy-decode said what of the original is damaged; here a damaged
        // step is one more step to match.
        drop(self.decoder.take_warnings());
        let conv = self.conv.as_ref().expect("a conversation is open");
        if conv.cur.is_some() || conv.steps_done {
            return Ok(());
        }
        let Some(line) = self.next_original()? else {
            self.conv.as_mut().expect("open").steps_done = true;
            return Ok(());
        };
        let mut lines = std::mem::take(&mut self.lines);
        lines.clear();
        let id = &self.conv.as_ref().expect("open").id;
        let mut held = StepRow::holding(id, line);
        let fast = match &mut held {
            StepRow::Line(line) => self.decoder.original_step_line(id, line, &mut lines),
            StepRow::Split {
                skeleton, payload, ..
            } => self
                .decoder
                .original_step_without_hex(id, skeleton, payload, &mut lines),
        };
        if let Some(row) = fast.map_err(|e| self.original_error(e))? {
            return self.set_step(held, lines, row);
        }
        let line = held.into_line();
        let record = Record::parse(&line).map_err(|e| self.original_error(e))?;
        let is_step = Some(record.conversation()) == self.conv.as_ref().map(|c| c.id.as_str())
            && matches!(&record, Record::Row { table, .. } if table == "steps");
        if !is_step {
            drop(record);
            self.peeked = Some(line);
            self.conv.as_mut().expect("open").steps_done = true;
            return Ok(());
        }
        let row = self
            .decoder
            .original_record(&record, &mut lines)
            .map_err(|e| self.original_error(e))?
            .expect("a steps row");
        drop(record);
        self.set_step(StepRow::Line(line), lines, row)
    }

    /// Makes an original step, its row `line` and its message `lines`,
    /// the one being matched.
    fn set_step(&mut self, line: StepRow, lines: Vec<u8>, row: OriginalStepRow) -> Result<()> {
        let OriginalStepRow {
            idx,
            call_id,
            spill,
            facts,
        } = row;
        let idx =
            idx.ok_or_else(|| self.original_error(Error::data("steps row has no integer idx")))?;
        let conv = self.conv.as_mut().expect("open");
        let mut expected = Vec::new();
        let mut at = 0;
        for end in memchr::memchr_iter(b'\n', &lines) {
            let body = &lines[at..end];
            if !body.is_empty() {
                expected.push((at..end, line_is_system(body)));
            }
            at = end + 1;
        }
        self.lines = conv.pool.pop().unwrap_or_default();
        let matched = vec![false; expected.len()];
        conv.cur = Some(OriginalStep {
            idx,
            line,
            lines,
            expected,
            matched,
            spill,
            edited: Vec::new(),
            call_id,
            facts,
        });
        Ok(())
    }

    fn message(&mut self, line: &[u8], out: &mut Output) -> Result<()> {
        loop {
            self.load_step()?;
            let conv = self.conv.as_mut().expect("a conversation is open");
            let Some(cur) = conv.cur.as_mut() else {
                // Past the original's last step: only new messages.
                let record = encode::parse_line(line)?;
                self.unread.note(&conv.id, &record);
                if let Some(idx) = record.idx {
                    return Err(Error::data(format!(
                        "message names idx {idx}, which is no step of the original after the ones already merged (messages keep their step order)"
                    )));
                }
                return conv.new_message(record, out);
            };
            if cur.expected.is_empty() {
                // Shows nothing in any stream (a call still running): kept,
                // unless its call went with an edit.
                conv.settle(out)?;
                continue;
            }
            let only_system = cur.expected.iter().all(|(_, system)| *system);
            if only_system && !conv.all && !cur.named() && cur.match_line(line).is_none() {
                // A bookkeeping step the stream does not show (so far it
                // shows no system message): kept, without reading the
                // line to find out.
                conv.settle(out)?;
                continue;
            }
            if let Some((i, spilled)) = cur.match_line(line) {
                cur.matched[i] = true;
                if cur.expected[i].1 {
                    conv.all = true;
                }
                if let (Some(text), Some(spill)) = (spilled, &cur.spill) {
                    conv.spill_texts.insert(spill.path.clone(), text);
                }
                let last = cur.expected.len() - 1;
                if i == last {
                    conv.settle(out)?;
                }
                return Ok(());
            }
            let record = encode::parse_line(line)?;
            self.unread.note(&conv.id, &record);
            match record.idx {
                Some(idx) if idx == cur.idx => {
                    if record.role == Some(Role::System) {
                        conv.all = true;
                    }
                    cur.edited.push(line.to_vec());
                    return Ok(());
                }
                Some(idx) if idx > cur.idx => conv.settle(out)?,
                Some(idx) => {
                    return Err(Error::data(format!(
                        "message names idx {idx}, but the merge is at step {} (messages keep their step order, and name each step once)",
                        cur.idx
                    )))
                }
                None => {
                    if cur.named() {
                        conv.settle(out)?;
                    }
                    return conv.new_message(record, out);
                }
            }
        }
    }

    /// Settles every original step left: kept when the stream could not
    /// show it, else deleted.
    fn drain_steps(&mut self, out: &mut Output) -> Result<()> {
        loop {
            self.load_step()?;
            let conv = self.conv.as_mut().expect("a conversation is open");
            if conv.cur.is_none() {
                return Ok(());
            }
            conv.settle(out)?;
        }
    }
}

/// Whether a message line is a system message.
fn line_is_system(line: &[u8]) -> bool {
    match line_head(line) {
        Some((id, _)) => {
            let at = "{\"conversation\":\"".len() + id.len();
            line[at..].starts_with(b"\",\"kind\":\"message\",\"role\":\"system\"")
        }
        None => false,
    }
}
