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
//!   only what changed is rewritten in its bytes ([`patch`]);
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

pub mod patch;

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;

use crate::decode::{self, Decoder, SpilledResult};
use crate::encode::{self, Synth};
use crate::error::{Error, Result};
use crate::io::{Lines, Output};
use crate::message::{Block, InputRecord, ResultContent, Role, ToolInput};
use crate::record::{FileContent, JsonCell, Record};
use crate::spool::Spool;
use crate::steps::field;
use crate::tools;
use crate::wire;

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
    conv: Option<Merge>,
    finished: HashSet<String>,
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
    /// lines of those steps.
    text_edits: HashMap<i64, Vec<(String, String)>>,
}

/// An original step and what the edited stream said of it so far.
struct OriginalStep {
    idx: i64,
    /// The row as the original stream has it.
    line: Vec<u8>,
    /// Its message lines, each with whether it is a system message.
    expected: Vec<(Vec<u8>, bool)>,
    matched: Vec<bool>,
    spill: Option<SpilledResult>,
    /// Edited lines that name this step.
    edited: Vec<Vec<u8>>,
    /// The call this step executes, if any.
    call_id: Option<String>,
}

impl OriginalStep {
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
        for (i, (expected, _)) in self.expected.iter().enumerate() {
            if self.matched[i] {
                continue;
            }
            if line == expected.as_slice() {
                return Some((i, None));
            }
            if let Some(spill) = &self.spill {
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

/// The conversation id and kind of a message-stream line in the shape
/// agy-decode writes (`{"conversation":"…","kind":"…"`), else `None`.
fn line_head(line: &[u8]) -> Option<(&str, &[u8])> {
    let rest = line.strip_prefix(b"{\"conversation\":\"")?;
    let end = memchr::memchr(b'"', rest)?;
    let id = &rest[..end];
    if id.iter().any(|&b| b == b'\\' || b < 0x20) {
        return None;
    }
    let rest = rest[end..].strip_prefix(b"\",\"kind\":\"")?;
    let kind_end = memchr::memchr(b'"', rest)?;
    Some((std::str::from_utf8(id).ok()?, &rest[..kind_end]))
}

impl Merger {
    pub fn open(path: &OsStr, options: Options) -> Result<Merger> {
        Ok(Merger {
            options,
            original: Lines::open(path)?,
            peeked: None,
            decoder: Decoder::new(decode::Options { all: true }),
            conv: None,
            finished: HashSet::new(),
        })
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
                (id, kind.into_bytes())
            }
        };
        if self.conv.as_ref().map(|c| c.id.as_str()) != Some(id.as_str()) {
            self.finish(out)?;
            if !self.finished.insert(id.clone()) {
                return Err(Error::data(format!(
                    "conversation {id:?} appears again after another one; a stream keeps each conversation's records together"
                )));
            }
            self.begin(&id, out)?;
        }
        match kind.as_slice() {
            b"meta" => self.meta(line, out),
            b"message" => self.message(line, out),
            other => Err(Error::data(format!(
                "unknown record kind {:?} (expected message or meta)",
                String::from_utf8_lossy(other)
            ))),
        }
    }

    /// Ends the conversation being merged, if any.
    pub fn finish(&mut self, out: &mut Output) -> Result<()> {
        if self.conv.is_none() {
            return Ok(());
        }
        self.drain_steps(out)?;
        let mut conv = self.conv.take().expect("checked above");
        let at = conv.next_idx;
        conv.next_idx = conv.synth.pending(at, out)?;
        self.write_held(&mut conv, out)?;
        self.copy_files(&mut conv, out)
    }

    fn next_original(&mut self) -> Result<Option<Vec<u8>>> {
        if let Some(line) = self.peeked.take() {
            return Ok(Some(line));
        }
        match self.original.next_line() {
            Ok(line) => Ok(line.map(<[u8]>::to_vec)),
            Err(e) => Err(e.context(self.original.place())),
        }
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
        };
        let mut found = false;
        while let Some(line) = self.next_original()? {
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
                Record::Db { .. } | Record::Schema { .. } => {
                    out.buf().extend_from_slice(&line);
                    out.buf().push(b'\n');
                    out.end_record()?;
                }
                Record::Row { table, .. } if table != "steps" => {
                    let mut sink = Vec::new();
                    self.decoder
                        .original_record(&record, &mut sink)
                        .map_err(|e| self.original_error(e))?;
                    let start = conv.held.len();
                    conv.held.append(&line)?;
                    conv.held_lines.push(start..conv.held.len());
                }
                _ => {
                    self.peeked = Some(line);
                    break;
                }
            }
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
        let conv = self.conv.as_ref().expect("a conversation is open");
        if conv.cur.is_some() || conv.steps_done {
            return Ok(());
        }
        let Some(line) = self.next_original()? else {
            self.conv.as_mut().expect("open").steps_done = true;
            return Ok(());
        };
        let record = Record::parse(&line).map_err(|e| self.original_error(e))?;
        let is_step = Some(record.conversation()) == self.conv.as_ref().map(|c| c.id.as_str())
            && matches!(&record, Record::Row { table, .. } if table == "steps");
        if !is_step {
            drop(record);
            self.peeked = Some(line);
            self.conv.as_mut().expect("open").steps_done = true;
            return Ok(());
        }
        let Record::Row { row, .. } = &record else {
            unreachable!("checked above")
        };
        let idx = row
            .get("idx")
            .and_then(JsonCell::as_i64)
            .ok_or_else(|| self.original_error(Error::data("steps row has no integer idx")))?;
        let call_id = step_call_id(row);
        let mut lines = Vec::new();
        let spill = self
            .decoder
            .original_record(&record, &mut lines)
            .map_err(|e| self.original_error(e))?;
        drop(record);
        let mut expected = Vec::new();
        for l in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let system = line_is_system(l);
            expected.push((l.to_vec(), system));
        }
        let conv = self.conv.as_mut().expect("open");
        let matched = vec![false; expected.len()];
        conv.cur = Some(OriginalStep {
            idx,
            line,
            expected,
            matched,
            spill,
            edited: Vec::new(),
            call_id,
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

    /// The meta record: the original's, unless it changed.
    fn meta(&mut self, line: &[u8], out: &mut Output) -> Result<()> {
        self.drain_steps(out)?;
        let original = self.decoder.meta_line();
        if line == original.as_slice() {
            return Ok(());
        }
        let edited: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(line).map_err(|e| Error::data(format!("bad JSON: {e}")))?;
        let before: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&original).expect("the decoder writes JSON");
        let mut changed: Vec<&str> = Vec::new();
        for key in edited.keys().chain(before.keys()) {
            if edited.get(key) != before.get(key) && !changed.contains(&key.as_str()) {
                changed.push(key);
            }
        }
        // What a meta record shows is derived from the steps (the title
        // from the first user text or the latest checkpoint, the model
        // from the replies), so an edit there is made in the messages.
        // Only the title has a step of its own to say it.
        let conv = self.conv.as_mut().expect("a conversation is open");
        let derived = ["title", "model", "timestamp"];
        if let Some(key) = changed.iter().find(|k| !derived.contains(k)) {
            return Err(Error::data(format!(
                "meta record: {key:?} differs from the original's; agy-encode --onto keeps the original's trajectory metadata (edit it without --onto)"
            )));
        }
        if changed.contains(&"title") {
            if let Some(title) = edited.get("title").and_then(|t| t.as_str()) {
                let record = InputRecord {
                    conversation: Some(conv.id.clone()),
                    kind: Some("message".into()),
                    role: Some(Role::System),
                    step_type: Some("CHECKPOINT".into()),
                    content: Some(vec![
                        Block::Text {
                            text: title.to_string().into(),
                            field: Some("user_intent".into()),
                        },
                        Block::Text {
                            text: title.to_string().into(),
                            field: Some("conversation_title".into()),
                        },
                    ]),
                    ..InputRecord::default()
                };
                conv.new_message(record, out)?;
            }
        }
        Ok(())
    }

    /// The held rows of other tables, with the step numbering applied.
    fn write_held(&mut self, conv: &mut Merge, out: &mut Output) -> Result<()> {
        let identity = conv.is_identity();
        let mut line = Vec::new();
        let mut generation = 0i64;
        for range in std::mem::take(&mut conv.held_lines) {
            line.clear();
            conv.held.read_range(range, &mut line)?;
            if identity {
                out.buf().extend_from_slice(&line);
                out.buf().push(b'\n');
                out.end_record()?;
                continue;
            }
            let record = Record::parse(&line).map_err(|e| self.original_error(e))?;
            let Record::Row { table, row, .. } = &record else {
                unreachable!("only rows are held")
            };
            match &**table {
                "gen_metadata" => {
                    let data = row
                        .get("data")
                        .map(|c| c.blob_bytes())
                        .transpose()?
                        .flatten();
                    let Some(data) = data else {
                        write_line(out, &line)?;
                        continue;
                    };
                    let indices =
                        wire::Message::new(&data).repeated_varints(field::generator::STEP_INDICES);
                    let kept: Vec<u64> = indices
                        .iter()
                        .filter_map(|&i| conv.new_idx(i as i64))
                        .map(|i| i as u64)
                        .collect();
                    if !indices.is_empty() && kept.is_empty() {
                        // Every step of this generation was deleted.
                        continue;
                    }
                    let data = set_step_indices(&data, &kept);
                    let mut edits = vec![("data", CellEdit::Blob(data.clone()))];
                    if row.get("size").is_some() {
                        edits.push(("size", CellEdit::Integer(data.len() as i64)));
                    }
                    edits.push(("idx", CellEdit::Integer(generation)));
                    generation += 1;
                    write_line(out, &edit_row(&line, &edits)?)?;
                }
                "parent_references" => {
                    let data = row
                        .get("data")
                        .map(|c| c.blob_bytes())
                        .transpose()?
                        .flatten()
                        .unwrap_or_default();
                    let reference = wire::Message::new(&data);
                    let own = reference
                        .get_str(field::reference::CONVERSATION_ID)
                        .as_deref()
                        == Some(conv.id.as_str());
                    let step = reference.get_i64(field::reference::STEP_INDEX);
                    match (own, step) {
                        (true, Some(step)) => {
                            let new = conv.new_idx_at_or_before(step);
                            let data =
                                patch::set_varint(&data, field::reference::STEP_INDEX, new as u64);
                            write_line(out, &edit_row(&line, &[("data", CellEdit::Blob(data))])?)?;
                        }
                        _ => write_line(out, &line)?,
                    }
                }
                _ => write_line(out, &line)?,
            }
        }
        Ok(())
    }

    /// The original's brain files, `steps/<idx>/` renumbered (dropped with
    /// a deleted step), spilled outputs replaced where their text was
    /// edited, and transcripts' `step_index` renumbered.
    fn copy_files(&mut self, conv: &mut Merge, out: &mut Output) -> Result<()> {
        let identity = conv.is_identity() && conv.text_edits.is_empty();
        let mut replaced: HashSet<String> = HashSet::new();
        // A transcript being rewritten: its path and the start of a line
        // that the next part continues.
        let mut transcript: Option<(String, Vec<u8>)> = None;
        while let Some(line) = self.next_original()? {
            let record = Record::parse(&line).map_err(|e| self.original_error(e))?;
            if record.conversation() != conv.id {
                self.peeked = Some(line);
                break;
            }
            let Record::File {
                path,
                append,
                content,
                dir,
                ..
            } = &record
            else {
                return Err(self.original_error(Error::data(
                    "a row after the conversation's files (the --onto stream must be agy-dump's order)",
                )));
            };
            if replaced.contains(&**path) {
                continue;
            }
            if let Some((open, carry)) = transcript.take() {
                if *append && open == **path {
                    transcript = Some((open, carry));
                } else if !carry.is_empty() {
                    conv.write_transcript_part(out, &open, true, &carry)?;
                }
            }
            let is_transcript =
                path.starts_with(".system_generated/logs/transcript") && path.ends_with(".jsonl");
            if is_transcript && !identity {
                if let FileContent::Text(text) = content {
                    let mut carry = match transcript.take() {
                        Some((_, carry)) => carry,
                        None => Vec::new(),
                    };
                    carry.extend_from_slice(text.as_bytes());
                    let end = memchr::memrchr(b'\n', &carry).map_or(0, |i| i + 1);
                    let rest = carry.split_off(end);
                    conv.write_transcript_part(out, path, *append, &carry)?;
                    transcript = Some((path.to_string(), rest));
                    continue;
                }
            }
            if let Some(text) = conv.spill_texts.remove(&**path) {
                // The edited stream's text for a spilled result: written
                // whole, if it differs from the file's.
                let original = match content {
                    FileContent::Text(t) => {
                        let mut escaped = Vec::new();
                        crate::json::write_str_body(&mut escaped, t);
                        escaped
                    }
                    FileContent::Hex(_) => Vec::new(),
                };
                if *append || original != text {
                    let mut quoted = b"\"".to_vec();
                    quoted.extend_from_slice(&text);
                    quoted.push(b'"');
                    let text: String = serde_json::from_slice(&quoted)
                        .map_err(|e| Error::data(format!("spilled result text: {e}")))?;
                    let new_path = conv.renumber_path(path).unwrap_or(path.to_string());
                    let mut rest = text.as_bytes();
                    let mut first = true;
                    while first || !rest.is_empty() {
                        let n = crate::record::file_part_len(rest);
                        crate::record::write_file_part(
                            out.buf(),
                            &conv.id,
                            *dir,
                            &new_path,
                            !first,
                            &rest[..n],
                        );
                        out.end_record()?;
                        rest = &rest[n..];
                        first = false;
                    }
                    replaced.insert(path.to_string());
                    continue;
                }
            }
            if identity {
                write_line(out, &line)?;
                continue;
            }
            // A step's own files (a spilled output) get its text edits.
            let edits = step_of_path(path).and_then(|old| conv.text_edits.get(&old));
            let edited = match (edits, content) {
                (Some(edits), FileContent::Text(text)) => {
                    let mut bytes = text.as_bytes().to_vec();
                    for (o, n) in edits {
                        bytes = patch::replace_bytes(&bytes, o.as_bytes(), n.as_bytes());
                    }
                    (bytes != text.as_bytes()).then_some(bytes)
                }
                _ => None,
            };
            match conv.renumber_path(path) {
                Some(new_path) if new_path == **path && edited.is_none() => write_line(out, &line)?,
                Some(new_path) => {
                    let bytes = match edited {
                        Some(bytes) => bytes,
                        None => content.to_bytes()?,
                    };
                    crate::record::write_file_part(
                        out.buf(),
                        &conv.id,
                        *dir,
                        &new_path,
                        *append,
                        &bytes,
                    );
                    out.end_record()?;
                }
                None => {}
            }
        }
        if let Some((open, carry)) = transcript.take() {
            if !carry.is_empty() {
                conv.write_transcript_part(out, &open, true, &carry)?;
            }
        }
        Ok(())
    }
}

/// The step a brain path belongs to: `steps/<idx>/…` or
/// `.system_generated/steps/<idx>/…`.
fn step_of_path(path: &str) -> Option<i64> {
    let rest = path
        .strip_prefix("steps/")
        .or_else(|| path.strip_prefix(".system_generated/steps/"))?;
    let (number, _) = rest.split_once('/')?;
    let idx: i64 = number.parse().ok()?;
    (idx.to_string() == number).then_some(idx)
}

/// Writes `line` and its newline as one record.
fn write_line(out: &mut Output, line: &[u8]) -> Result<()> {
    out.buf().extend_from_slice(line);
    out.buf().push(b'\n');
    out.end_record()
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

/// The id of the call a steps row executes (metadata 4.1).
fn step_call_id(row: &crate::record::RowCells<'_>) -> Option<String> {
    let payload = row.get("step_payload")?.blob_bytes().ok()??;
    let step = wire::Message::new(&payload);
    let call = step
        .get_message(field::step::METADATA)?
        .get_message(field::metadata::TOOL_CALL)?;
    call.get_str(field::tool_call::ID).map(|id| id.into_owned())
}

/// The GENERIC args map entries `{1 key, 2 value}` of a ChatToolCall's
/// arguments, string values as they are and others as JSON text.
fn generic_args(call: &[u8]) -> Vec<Vec<u8>> {
    let json = wire::Message::new(call)
        .get_str(field::tool_call::ARGUMENTS_JSON)
        .unwrap_or_default();
    let ToolInput::Object(args) = ToolInput::from_arguments_json(&json) else {
        return Vec::new();
    };
    args.iter()
        .map(|(key, value)| {
            let mut entry = wire::Writer::new();
            entry.string(field::generic::ENTRY_KEY, key);
            match value {
                serde_json::Value::String(s) => entry.string(field::generic::ENTRY_VALUE, s),
                other => entry.string(
                    field::generic::ENTRY_VALUE,
                    &crate::json::value_to_string(other),
                ),
            };
            entry.into_bytes()
        })
        .collect()
}

/// A generator's metadata with its step list replaced.
fn set_step_indices(data: &[u8], indices: &[u64]) -> Vec<u8> {
    let (spans, tail) = wire::field_spans(data);
    let mut out = wire::Writer::new();
    let mut placed = false;
    for (f, raw) in spans {
        if f.number != field::generator::STEP_INDICES {
            out.raw(raw);
            continue;
        }
        if !placed {
            // Packed, as proto3 writes a repeated integer.
            let mut packed = wire::Writer::new();
            for &i in indices {
                packed.raw(&varint_bytes(i));
            }
            if !indices.is_empty() {
                out.bytes(field::generator::STEP_INDICES, packed.as_bytes());
            }
            placed = true;
        }
    }
    out.raw(tail);
    out.into_bytes()
}

fn varint_bytes(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// A new value for one cell of a row.
enum CellEdit {
    Integer(i64),
    Blob(Vec<u8>),
    Null,
}

/// `line` (a `row` record) with some cells replaced; every other byte of
/// the record as it was.
fn edit_row(line: &[u8], edits: &[(&str, CellEdit)]) -> Result<Vec<u8>> {
    let mut record: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(line).map_err(|e| Error::data(format!("bad JSON: {e}")))?;
    let row = record
        .get_mut("row")
        .and_then(|r| r.as_object_mut())
        .ok_or_else(|| Error::data("row record has no \"row\" object"))?;
    for (column, edit) in edits {
        let value = match edit {
            CellEdit::Integer(v) => serde_json::Value::from(*v),
            CellEdit::Blob(bytes) => serde_json::Value::String(hex::encode(bytes)),
            CellEdit::Null => serde_json::Value::Null,
        };
        row.insert(column.to_string(), value);
    }
    Ok(serde_json::to_vec(&record).expect("serializing to a Vec cannot fail"))
}

impl Merge {
    /// Writes transcript text as a part of the file at `path`, each line
    /// for the new numbering.
    fn write_transcript_part(
        &self,
        out: &mut Output,
        path: &str,
        append: bool,
        text: &[u8],
    ) -> Result<()> {
        let mut kept = Vec::with_capacity(text.len());
        for line in text.split_inclusive(|&b| b == b'\n') {
            let (body, newline) = match line.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (line, false),
            };
            if let Some(new) = self.transcript_line(body) {
                kept.extend_from_slice(&new);
                if newline {
                    kept.push(b'\n');
                }
            }
        }
        crate::record::write_file_part(
            out.buf(),
            &self.id,
            crate::record::FileDir::Brain,
            path,
            append,
            &kept,
        );
        out.end_record()
    }

    /// Nothing renumbered or deleted so far.
    fn is_identity(&self) -> bool {
        self.map.iter().all(|&(old, new)| new == Some(old))
    }

    fn new_idx(&self, old: i64) -> Option<i64> {
        match self.map.binary_search_by_key(&old, |&(o, _)| o) {
            Ok(i) => self.map[i].1,
            Err(_) => None,
        }
    }

    /// The new idx of the last kept step at or before `old` (0 if none).
    fn new_idx_at_or_before(&self, old: i64) -> i64 {
        let end = self.map.partition_point(|&(o, _)| o <= old);
        self.map[..end]
            .iter()
            .rev()
            .find_map(|&(_, new)| new)
            .unwrap_or(0)
    }

    /// A brain path with its `steps/<idx>/` renumbered; `None` when that
    /// step was deleted.
    fn renumber_path(&self, path: &str) -> Option<String> {
        let Some(old) = step_of_path(path) else {
            return Some(path.to_string());
        };
        let new = self.new_idx(old)?;
        let (prefix, rest) = path.split_at(path.find("steps/").expect("a step's path") + 6);
        let tail = &rest[old.to_string().len()..];
        Some(format!("{prefix}{new}{tail}"))
    }

    /// Writes a new message's steps where the merge stands.
    fn new_message(&mut self, record: InputRecord, out: &mut Output) -> Result<()> {
        let at = self.next_idx;
        let end = self.synth.message(record, at, out)?;
        self.next_idx = end;
        Ok(())
    }

    /// Decides the current original step: kept, deleted or edited.
    fn settle(&mut self, out: &mut Output) -> Result<()> {
        let cur = self.cur.take().expect("a step to settle");
        let call_removed = cur
            .call_id
            .as_ref()
            .is_some_and(|id| matches!(self.changed_calls.get(id), Some(None)));
        if !cur.named() {
            if cur.hidden(self.all) && !call_removed {
                return self.keep(&cur, None, out);
            }
            self.map.push((cur.idx, None));
            self.delta -= 1;
            return Ok(());
        }
        if cur.edited.is_empty() {
            return self.keep(&cur, None, out);
        }
        let patched = self.patch(&cur)?;
        match patched {
            Some(row) => self.keep(&cur, Some(row), out),
            None => {
                // Not an edit of this step's own kind: the step goes, and
                // its messages are written as new steps in its place.
                self.map.push((cur.idx, None));
                self.delta -= 1;
                for line in &cur.edited {
                    let mut record = encode::parse_line(line)?;
                    record.idx = None;
                    // The steps that execute its calls repeat them.
                    for block in record.content.iter().flatten() {
                        if let Block::ToolUse {
                            id,
                            name,
                            input,
                            signature,
                        } = block
                        {
                            let call = self.synth.call_bytes(
                                id,
                                name,
                                input.clone(),
                                signature.as_deref(),
                            )?;
                            self.changed_calls.insert(id.to_string(), Some(call));
                        }
                    }
                    self.new_message(record, out)?;
                }
                Ok(())
            }
        }
    }

    /// Writes an original step (or its edited row), renumbered where the
    /// merge has moved, with the calls edits changed.
    fn keep(
        &mut self,
        cur: &OriginalStep,
        edited: Option<Vec<u8>>,
        out: &mut Output,
    ) -> Result<()> {
        let new = (cur.idx + self.delta).max(self.next_idx);
        self.delta = new - cur.idx;
        self.next_idx = new + 1;
        self.map.push((cur.idx, Some(new)));
        let mut line = edited.unwrap_or_else(|| cur.line.clone());
        let changed_call = cur
            .call_id
            .as_ref()
            .and_then(|id| self.changed_calls.get(id))
            .and_then(|c| c.clone());
        let arg_edits = cur
            .call_id
            .as_ref()
            .and_then(|id| self.arg_edits.get(id))
            .cloned()
            .unwrap_or_default();
        if new != cur.idx || changed_call.is_some() {
            line = rewrite_step_row(
                &line,
                |step| {
                    let mut step = step.to_vec();
                    let mut changed = false;
                    if let Some(call) = &changed_call {
                        if let Some(s) = patch::edit_field(&step, field::step::METADATA, |m| {
                            Some(patch::set_field(
                                m,
                                field::metadata::TOOL_CALL,
                                std::slice::from_ref(call),
                            ))
                        }) {
                            step = s;
                            changed = true;
                        }
                        // A GENERIC carrier repeats the arguments as a map.
                        if let Some(s) = patch::edit_field(&step, field::step::GENERIC, |generic| {
                            let has_args = wire::Message::new(generic).has(field::generic::ARGS);
                            has_args.then(|| {
                                patch::set_field(generic, field::generic::ARGS, &generic_args(call))
                            })
                        }) {
                            step = s;
                            changed = true;
                        }
                    }
                    // The executing step's own copies of edited arguments.
                    let numbers = payload_fields();
                    for (from, to) in &arg_edits {
                        if let Some(s) = patch::replace_text_in(&step, &numbers, from, to) {
                            step = s;
                            changed = true;
                        }
                    }
                    if new != cur.idx {
                        if let Some(s) = patch::renumber_step(&step, cur.idx, new) {
                            step = s;
                            changed = true;
                        }
                    }
                    changed.then_some(step)
                },
                Some(new),
            )?;
        }
        write_line(out, &line)
    }

    /// The row of an edited step, or `None` when the edit is not one a
    /// step of this kind can take (the messages are then written anew).
    fn patch(&mut self, cur: &OriginalStep) -> Result<Option<Vec<u8>>> {
        // The edited lines in place of the lines they stand for.
        let mut before = Vec::new();
        for (line, system) in &cur.expected {
            if !*system || self.all {
                before.push(encode::parse_line(line)?);
            }
        }
        let mut after = Vec::new();
        for (i, (line, system)) in cur.expected.iter().enumerate() {
            if cur.matched[i] && (!*system || self.all) {
                after.push(encode::parse_line(line)?);
            }
        }
        for line in &cur.edited {
            after.push(encode::parse_line(line)?);
        }
        // Compare the step's one non-system message.
        let pick = |records: &[InputRecord<'_>]| -> Option<usize> {
            let main: Vec<usize> = (0..records.len())
                .filter(|&i| records[i].role != Some(Role::System))
                .collect();
            match main.as_slice() {
                [one] => Some(*one),
                [] if records.len() == 1 => Some(0),
                _ => None,
            }
        };
        let (Some(b), Some(a)) = (pick(&before), pick(&after)) else {
            return Ok(None);
        };
        let old = &before[b];
        let new = &after[a];
        if old.role != new.role {
            return Ok(None);
        }
        let mut step = step_bytes_of(&cur.line)?;
        let old_blocks = old.content.as_deref().unwrap_or_default();
        let new_blocks = new.content.as_deref().unwrap_or_default();
        let mut status: Option<u64> = None;
        let mut error: Option<Option<Vec<u8>>> = None;
        // Record-level fields a patch does not rewrite: an edit there is
        // written anew.
        if old.timestamp != new.timestamp
            || old.usage != new.usage
            || old.stop_reason != new.stop_reason
            || old.model != new.model
            || old.implicit != new.implicit
            || old.raw != new.raw
        {
            return Ok(None);
        }
        match old.role {
            Some(Role::User) if has_result(old_blocks) => {
                let (
                    Some((old_id, old_content, old_error)),
                    Some((new_id, new_content, new_error)),
                ) = (single_result(old_blocks), single_result(new_blocks))
                else {
                    return Ok(None);
                };
                if old_error != new_error {
                    return Ok(None);
                }
                if old_id != new_id {
                    // Only as its call's id was edited: the call the step
                    // repeats then carries the new id.
                    let edited_call = cur
                        .call_id
                        .as_ref()
                        .and_then(|id| self.changed_calls.get(id))
                        .and_then(|c| c.as_deref())
                        .and_then(|c| wire::Message::new(c).get_str(field::tool_call::ID))
                        .is_some_and(|id| id == new_id);
                    if !edited_call {
                        return Ok(None);
                    }
                }
                let (ResultContent::Text(o), ResultContent::Text(n)) = (old_content, new_content)
                else {
                    return Ok(if old_content == new_content {
                        Some(cur.line.clone())
                    } else {
                        None
                    });
                };
                if o != n {
                    if o.is_empty() {
                        return Ok(None);
                    }
                    let Some(s) = patch::replace_text_in(&step, &payload_and_error(), o, n) else {
                        return Ok(None);
                    };
                    self.note_edit(cur.idx, o, n);
                    step = s;
                    if let Some(details) = wire::Message::new(&step).get_bytes(field::step::ERROR) {
                        error = Some(Some(details.to_vec()));
                    }
                    let _ = &mut status;
                }
            }
            Some(Role::User) => {
                if media_of(old_blocks) != media_of(new_blocks) {
                    return Ok(None);
                }
                let (o, n) = (joined_text(old_blocks), joined_text(new_blocks));
                if o != n {
                    if o.is_empty() {
                        return Ok(None);
                    }
                    match patch::replace_text_in(&step, &[field::step::USER_INPUT], &o, &n) {
                        Some(s) => step = s,
                        None => return Ok(None),
                    }
                    self.note_edit(cur.idx, &o, &n);
                }
            }
            Some(Role::Assistant) => {
                let Some(s) = self.patch_planner(cur.idx, &step, old_blocks, new_blocks)? else {
                    return Ok(None);
                };
                step = s;
            }
            _ => {
                // A system message: each field's text where it was.
                for (o, n) in field_texts(old_blocks, new_blocks)? {
                    if o.is_empty() {
                        return Ok(None);
                    }
                    let payload_field = crate::steps::payload_field(
                        wire::Message::new(&step)
                            .get_u64(field::step::TYPE)
                            .unwrap_or(0),
                    );
                    let Some(number) = payload_field else {
                        return Ok(None);
                    };
                    match patch::replace_text_in(&step, &[number], &o, &n) {
                        Some(s) => step = s,
                        None => return Ok(None),
                    }
                    self.note_edit(cur.idx, &o, &n);
                }
            }
        }
        let _ = status;
        Ok(Some(row_with_step(&cur.line, &step, error)?))
    }

    fn note_edit(&mut self, idx: i64, old: &str, new: &str) {
        self.text_edits
            .entry(idx)
            .or_default()
            .push((old.to_string(), new.to_string()));
    }

    /// A brain transcript line (FORMAT.md 10) for the new numbering:
    /// `None` when its step was deleted; an edited step's line with the
    /// edits made in its escaped text too.
    fn transcript_line(&self, line: &[u8]) -> Option<Vec<u8>> {
        const HEAD: &[u8] = b"{\"step_index\":";
        let Some(rest) = line.strip_prefix(HEAD) else {
            return Some(line.to_vec());
        };
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let Some(old) = std::str::from_utf8(&rest[..digits])
            .ok()
            .and_then(|d| d.parse::<i64>().ok())
        else {
            return Some(line.to_vec());
        };
        let new = self.new_idx(old)?;
        let mut out = HEAD.to_vec();
        out.extend_from_slice(new.to_string().as_bytes());
        let mut tail = rest[digits..].to_vec();
        for (o, n) in self.text_edits.get(&old).into_iter().flatten() {
            let (mut eo, mut en) = (Vec::new(), Vec::new());
            crate::json::write_str_body(&mut eo, o);
            crate::json::write_str_body(&mut en, n);
            if !eo.is_empty() {
                tail = patch::replace_bytes(&tail, &eo, &en);
            }
        }
        out.extend_from_slice(&tail);
        Some(out)
    }

    /// A planner step with its reply text, thinking and calls as edited.
    fn patch_planner(
        &mut self,
        idx: i64,
        step: &[u8],
        old: &[Block<'_>],
        new: &[Block<'_>],
    ) -> Result<Option<Vec<u8>>> {
        let mut step = step.to_vec();
        let texts = |blocks: &[Block<'_>]| -> (String, String, Vec<Option<String>>) {
            let mut text = String::new();
            let mut thinking = String::new();
            let mut signatures = Vec::new();
            for b in blocks {
                match b {
                    Block::Text { text: t, .. } => join(&mut text, t),
                    Block::Thinking {
                        thinking: t,
                        signature,
                    } => {
                        join(&mut thinking, t);
                        signatures.push(signature.as_deref().map(str::to_string));
                    }
                    _ => {}
                }
            }
            (text, thinking, signatures)
        };
        let (old_text, old_thinking, old_signatures) = texts(old);
        let (new_text, new_thinking, new_signatures) = texts(new);
        use field::planner::*;
        if old_signatures != new_signatures {
            // One thinking block's signature: where the step keeps it.
            let ([Some(old_sig)], [Some(new_sig)]) =
                (old_signatures.as_slice(), new_signatures.as_slice())
            else {
                return Ok(None);
            };
            let planner = wire::Message::new(&step)
                .get_message(field::step::PLANNER_RESPONSE)
                .unwrap_or_default();
            let edited = if planner.get_str(SIGNATURE).as_deref() == Some(old_sig.as_str()) {
                patch::edit_field(&step, field::step::PLANNER_RESPONSE, |p| {
                    patch::replace_text_in(p, &[SIGNATURE], old_sig, new_sig)
                })
            } else {
                match (planner.has(THINKING_SIGNATURE), hex::decode(new_sig)) {
                    (true, Ok(bytes)) => {
                        let mut value = wire::Writer::new();
                        crate::steps::signature::write(&mut value, 1, &bytes);
                        // The field's value: what `write` put after its tag.
                        let value = wire::Message::new(value.as_bytes())
                            .get_bytes(1)
                            .unwrap_or_default()
                            .to_vec();
                        patch::edit_field(&step, field::step::PLANNER_RESPONSE, |p| {
                            Some(patch::set_field(
                                p,
                                THINKING_SIGNATURE,
                                std::slice::from_ref(&value),
                            ))
                        })
                    }
                    _ => None,
                }
            };
            match edited {
                Some(s) => step = s,
                None => return Ok(None),
            }
        }
        let planner_field = [field::step::PLANNER_RESPONSE];
        for (o, n, fields) in [
            (&old_text, &new_text, &[RESPONSE, MODIFIED_RESPONSE][..]),
            (&old_thinking, &new_thinking, &[THINKING, RAW_THINKING][..]),
        ] {
            if o == n {
                continue;
            }
            if o.is_empty() {
                return Ok(None);
            }
            let edited = patch::edit_field(&step, planner_field[0], |planner| {
                patch::replace_text_in(planner, fields, o, n)
            });
            match edited {
                Some(s) => step = s,
                None => return Ok(None),
            }
            self.note_edit(idx, o, n);
        }
        // Calls: kept as they were where unchanged, rewritten (keeping
        // every field a tool_use does not show) where edited, dropped
        // where removed.
        let calls = |blocks: &[Block<'_>]| -> Vec<(String, String, ToolInput, Option<String>)> {
            blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse {
                        id,
                        name,
                        input,
                        signature,
                    } => Some((
                        id.to_string(),
                        name.to_string(),
                        input.clone(),
                        signature.as_deref().map(str::to_string),
                    )),
                    _ => None,
                })
                .collect()
        };
        let (old_calls, new_calls) = (calls(old), calls(new));
        if old_calls != new_calls {
            let planner = wire::Message::new(&step)
                .get_message(field::step::PLANNER_RESPONSE)
                .unwrap_or_default();
            let originals: Vec<Vec<u8>> = planner
                .repeated_bytes(TOOL_CALLS)
                .map(<[u8]>::to_vec)
                .collect();
            let mut values = Vec::new();
            let position_of = |id: &str| {
                originals.iter().position(|c| {
                    wire::Message::new(c)
                        .get_str(field::tool_call::ID)
                        .as_deref()
                        == Some(id)
                })
            };
            for (p, (id, name, input, signature)) in new_calls.iter().enumerate() {
                // The original call: the one with this id, else the one at
                // this position when its id is gone (an edited id).
                let paired = position_of(id).or_else(|| {
                    old_calls
                        .get(p)
                        .filter(|(old_id, ..)| !new_calls.iter().any(|(i, ..)| i == old_id))
                        .and_then(|(old_id, ..)| position_of(old_id))
                });
                let Some(at) = paired else {
                    let fresh =
                        self.synth
                            .call_bytes(id, name, input.clone(), signature.as_deref())?;
                    values.push(fresh);
                    continue;
                };
                let bytes = &originals[at];
                let (old_id, old_name, old_input, old_signature) = &old_calls
                    .iter()
                    .find(|(i, ..)| {
                        wire::Message::new(bytes)
                            .get_str(field::tool_call::ID)
                            .as_deref()
                            == Some(i.as_str())
                    })
                    .cloned()
                    .unwrap_or_else(|| (String::new(), String::new(), input.clone(), None));
                if old_id == id
                    && old_name == name
                    && old_input == input
                    && old_signature == signature
                {
                    values.push(bytes.clone());
                    continue;
                }
                let fresh = self
                    .synth
                    .call_bytes(id, name, input.clone(), signature.as_deref())?;
                let fresh_message = wire::Message::new(&fresh);
                let mut call = bytes.clone();
                let mut numbers = Vec::new();
                if old_id != id {
                    numbers.push(field::tool_call::ID);
                }
                if old_name != name || old_input != input {
                    numbers.extend([field::tool_call::NAME, field::tool_call::ARGUMENTS_JSON]);
                    if wire::Message::new(&call).has(field::tool_call::ORIGINAL_NAME) {
                        numbers.push(field::tool_call::ORIGINAL_NAME);
                    }
                }
                if old_signature != signature {
                    numbers.push(field::tool_call::THINKING_SIGNATURE);
                }
                for number in numbers {
                    let value: Vec<Vec<u8>> = fresh_message
                        .get_bytes(number)
                        .map(|b| vec![b.to_vec()])
                        .unwrap_or_default();
                    call = patch::set_field(&call, number, &value);
                }
                self.changed_calls
                    .insert(old_id.clone(), Some(call.clone()));
                if let (ToolInput::Object(before), ToolInput::Object(after)) = (old_input, input) {
                    let pairs = before.iter().filter_map(|(key, value)| {
                        let old_text = value.as_str()?;
                        let new_text = after.iter().find(|(k, _)| k == key)?.1.as_str()?;
                        (old_text != new_text && !old_text.is_empty())
                            .then(|| (old_text.to_string(), new_text.to_string()))
                    });
                    self.arg_edits
                        .entry(old_id.clone())
                        .or_default()
                        .extend(pairs);
                }
                values.push(call);
            }
            for (id, ..) in &old_calls {
                if !new_calls.iter().any(|(i, ..)| i == id) && !self.changed_calls.contains_key(id)
                {
                    self.changed_calls.insert(id.clone(), None);
                }
            }
            let edited = patch::edit_field(&step, field::step::PLANNER_RESPONSE, |planner| {
                Some(patch::set_field(planner, TOOL_CALLS, &values))
            });
            if let Some(s) = edited {
                step = s;
            }
        }
        // The GENERIC args of a tool step mirror its call; tool names map
        // through the common names both ways.
        let _ = tools::to_native;
        Ok(Some(step))
    }
}

fn join(text: &mut String, part: &str) {
    if part.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(part);
}

fn joined_text(blocks: &[Block<'_>]) -> String {
    let mut text = String::new();
    for b in blocks {
        if let Block::Text { text: t, .. } = b {
            join(&mut text, t);
        }
    }
    text
}

fn media_of<'b>(blocks: &'b [Block<'b>]) -> Vec<&'b Block<'b>> {
    blocks
        .iter()
        .filter(|b| matches!(b, Block::Image { .. } | Block::Document { .. }))
        .collect()
}

fn has_result(blocks: &[Block<'_>]) -> bool {
    blocks.iter().any(|b| matches!(b, Block::ToolResult { .. }))
}

/// The content and error flag of a message that is exactly one result.
fn single_result<'b>(blocks: &'b [Block<'b>]) -> Option<(&'b str, &'b ResultContent<'b>, bool)> {
    match blocks {
        [Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        }] => Some((tool_use_id, content, *is_error)),
        _ => None,
    }
}

/// Every Step field that holds a kind's payload.
fn payload_fields() -> Vec<u32> {
    let mut numbers: Vec<u32> = crate::steps::PAYLOAD_FIELDS
        .iter()
        .map(|&(_, f)| f)
        .collect();
    numbers.extend_from_slice(crate::steps::UNPAIRED_PAYLOAD_FIELDS);
    numbers
}

/// Where a tool step holds its result's text: any payload field, and the
/// error details.
fn payload_and_error() -> Vec<u32> {
    let mut numbers = payload_fields();
    numbers.push(field::step::ERROR);
    numbers
}

/// (old, new) text of each system-message field that changed.
fn field_texts(old: &[Block<'_>], new: &[Block<'_>]) -> Result<Vec<(String, String)>> {
    let by_field = |blocks: &[Block<'_>]| -> Vec<(String, String)> {
        blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text { text, field } => Some((
                    field.as_deref().unwrap_or_default().to_string(),
                    text.to_string(),
                )),
                _ => None,
            })
            .collect()
    };
    let (o, n) = (by_field(old), by_field(new));
    if o.len() != n.len() || o.iter().zip(&n).any(|(a, b)| a.0 != b.0) {
        return Err(Error::data(
            "a system message's fields can be edited, not added, removed or reordered (with --onto)",
        ));
    }
    Ok(o.into_iter()
        .zip(n)
        .filter(|(a, b)| a.1 != b.1)
        .map(|(a, b)| (a.1, b.1))
        .collect())
}

/// The Step blob of a `steps` row line.
fn step_bytes_of(line: &[u8]) -> Result<Vec<u8>> {
    let record = Record::parse(line)?;
    let Record::Row { row, .. } = &record else {
        return Err(Error::data("not a row"));
    };
    Ok(row
        .get("step_payload")
        .map(|c| c.blob_bytes())
        .transpose()?
        .flatten()
        .unwrap_or_default())
}

/// A steps row with a new Step blob, its mirror columns (metadata, status,
/// error_details) following it where they mirrored the old one.
fn row_with_step(line: &[u8], step: &[u8], error: Option<Option<Vec<u8>>>) -> Result<Vec<u8>> {
    let old = step_bytes_of(line)?;
    if old == step {
        return Ok(line.to_vec());
    }
    let old_message = wire::Message::new(&old);
    let new_message = wire::Message::new(step);
    let mut edits = vec![("step_payload", CellEdit::Blob(step.to_vec()))];
    let old_meta = old_message.get_bytes(field::step::METADATA);
    let new_meta = new_message.get_bytes(field::step::METADATA);
    if old_meta != new_meta {
        if let Some(meta) = new_meta {
            edits.push(("metadata", CellEdit::Blob(meta.to_vec())));
        }
    }
    match error {
        Some(Some(details)) => edits.push(("error_details", CellEdit::Blob(details))),
        Some(None) => edits.push(("error_details", CellEdit::Null)),
        None => {}
    }
    edit_row(line, &edits)
}

/// A steps row whose Step `edit` changes (its metadata column following),
/// with its idx set to `idx`.
fn rewrite_step_row(
    line: &[u8],
    edit: impl FnOnce(&[u8]) -> Option<Vec<u8>>,
    idx: Option<i64>,
) -> Result<Vec<u8>> {
    let old = step_bytes_of(line)?;
    let mut edits = Vec::new();
    if let Some(step) = edit(&old) {
        let old_meta = wire::Message::new(&old).get_bytes(field::step::METADATA);
        let new_meta = wire::Message::new(&step)
            .get_bytes(field::step::METADATA)
            .map(<[u8]>::to_vec);
        if old_meta.map(<[u8]>::to_vec) != new_meta {
            if let Some(meta) = new_meta {
                edits.push(("metadata", CellEdit::Blob(meta)));
            }
        }
        edits.push(("step_payload", CellEdit::Blob(step)));
    }
    if let Some(idx) = idx {
        edits.push(("idx", CellEdit::Integer(idx)));
    }
    edit_row(line, &edits)
}
