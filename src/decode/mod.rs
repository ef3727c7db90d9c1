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

pub mod summary;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::agy::steps::{self, field, kind, source};
use crate::agy::tools;
use crate::agy::wire;
use crate::error::{Error, Result};
use crate::kinds::results::{self, Outcome};
use crate::kinds::system;
use crate::store::sqlite;
use crate::stream::io::Output;
use crate::stream::message::{
    self, Block, ForkedFrom, ImageSource, Message, Meta, ResultContent, Role, ToolInput, Usage,
};
use crate::stream::record::{FileContent, FileDir, JsonCell, Record, RowCells};
use crate::stream::spool::Spool;
use crate::time::Timestamp;

/// Titles derived from the first user text are cut to this many characters.
const TITLE_CHARS: usize = 80;

/// What to decode beyond user and assistant messages.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Also write bookkeeping steps, and kinds nothing here understands, as
    /// `system` messages.
    pub all: bool,
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
    /// What could not be read, for the caller to say on stderr.
    warnings: Vec<String>,
}

/// What one conversation remembers between steps.
#[derive(Default)]
struct Conversation {
    id: String,
    all: bool,
    cascade_id: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    created_at: Option<Timestamp>,
    first_step_time: Option<Timestamp>,
    parent_conversation_id: Option<String>,
    /// FORK and SUBAGENT_FORK references, in row order.
    references: Vec<ForkedFrom>,
    /// Step idx → human model name, from `gen_metadata`.
    models_by_step: HashMap<i64, String>,
    /// Model enum → human model name, from `gen_metadata` rows whose usage
    /// names the enum: the name for steps no generation lists.
    models_by_enum: HashMap<u64, String>,
    /// Ids of calls declared by a planner step and not yet answered.
    open_calls: HashSet<String>,
    checkpoint_title: Option<String>,
    first_user_text: Option<String>,
    latest_model: Option<String>,
    /// The model name of the latest user input's planner configuration.
    configured_model: Option<String>,
    /// The step being decoded is damaged (its messages say so).
    damaged: bool,
    /// Present once a result waits for its spilled full text.
    waiting: Option<Waiting>,
}

/// A conversation's output held back until the files it needs have come.
#[derive(Default)]
struct Waiting {
    /// The messages since the first result that waits, with a hole (no
    /// bytes) where each waiting result's text goes.
    output: Spool,
    /// JSON-escaped texts: each hole's fallback, then each file that came.
    texts: Spool,
    holes: Vec<Hole>,
    /// Brain path → its escaped content in `texts`, a range per part of
    /// the file, for the paths a hole names (none until the file comes).
    files: HashMap<String, Vec<Range<u64>>>,
}

/// Where a spilled text goes in [`Waiting::output`].
struct Hole {
    at: u64,
    path: String,
    /// The step's own (truncated) text in [`Waiting::texts`], used when the
    /// file never comes.
    fallback: Range<u64>,
}

/// What `agy-encode --onto` learns of an original `steps` row besides its
/// messages.
pub struct OriginalStepRow {
    pub idx: Option<i64>,
    /// The id of the call the step executes (metadata 4.1).
    pub call_id: Option<String>,
    pub spill: Option<SpilledResult>,
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
            } => conv.file(path, *append, content),
            _ => Ok(()),
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
        Ok(())
    }

    /// Ends the open conversation, if any: its held-back messages with the
    /// spilled texts in place, then its `meta` record.
    pub fn finish(&mut self, out: &mut Output) -> Result<()> {
        let Some(mut conv) = self.current.take() else {
            return Ok(());
        };
        if let Some(waiting) = conv.waiting.take() {
            waiting.write(out)?;
        }
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
        let Some((conversation, columns)) = parse_canonical_step_row(line) else {
            return Ok(false);
        };
        if !self.decode_canonical_payload(&columns) {
            return Ok(false);
        }
        self.enter(conversation, out)?;
        self.step_decoded(&columns, columns.step_payload.is_some(), out)
            .map(|()| true)
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
        let Some((id, columns)) = parse_canonical_step_row(line) else {
            return Ok(None);
        };
        if id != conversation || !self.decode_canonical_payload(&columns) {
            return Ok(None);
        }
        self.enter_original(id)?;
        let has_payload = columns.step_payload.is_some();
        self.original_step(&columns, has_payload, lines).map(Some)
    }

    /// What `agy-encode --onto` needs of an original step whose payload is
    /// in `self.payload`: its messages in `lines`, its idx and call id.
    fn original_step(
        &mut self,
        columns: &StepColumns<'_>,
        has_payload: bool,
        lines: &mut Vec<u8>,
    ) -> Result<OriginalStepRow> {
        let call_id = match has_payload {
            true => wire::Message::new(&self.payload)
                .get_message(field::step::METADATA)
                .and_then(|m| m.get_message(field::metadata::TOOL_CALL))
                .and_then(|c| c.get_str(field::tool_call::ID))
                .map(Cow::into_owned),
            false => None,
        };
        let spill = self.step_messages(columns, has_payload, lines)?;
        Ok(OriginalStepRow {
            idx: columns.idx,
            call_id,
            spill,
        })
    }

    /// Decodes a canonical row's payload hex into `self.payload`; false
    /// (leaving the line to the ordinary parser) when it is not hex.
    fn decode_canonical_payload(&mut self, columns: &StepColumns<'_>) -> bool {
        columns
            .step_payload
            .is_none_or(|h| crate::stream::record::decode_hex_bytes_into(h, &mut self.payload))
    }

    fn step_columns(&mut self, columns: &StepColumns<'_>, out: &mut Output) -> Result<()> {
        let has_payload = self.decode_payload(columns)?;
        self.step_decoded(columns, has_payload, out)
    }

    /// Decodes a row's payload hex into `self.payload`; false when the row
    /// has none.
    fn decode_payload(&mut self, columns: &StepColumns<'_>) -> Result<bool> {
        match columns.step_payload {
            Some(h) => hex_into(h, "step_payload", &mut self.payload),
            None => Ok(false),
        }
    }

    /// The step whose payload is in `self.payload` (when `has_payload`).
    fn step_decoded(
        &mut self,
        columns: &StepColumns<'_>,
        has_payload: bool,
        out: &mut Output,
    ) -> Result<()> {
        let buf = out.buf();
        let start = buf.len();
        let spilled = self.step_messages(columns, has_payload, buf)?;
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
                self.original_step(&columns, has_payload, lines).map(Some)
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

    /// Writes the messages of the step whose payload is in `self.payload`
    /// (when `has_payload`) to `buf`.
    fn step_messages(
        &mut self,
        columns: &StepColumns<'_>,
        has_payload: bool,
        buf: &mut Vec<u8>,
    ) -> Result<Option<SpilledResult>> {
        if !has_payload {
            self.payload.clear();
        }
        let damage = self.repair_payload(columns.step_type);
        let step = wire::Message::new(&self.payload);
        // The columns mirror Step fields 5 and 31; read a column only when
        // the payload lacks its field (a damaged payload, say).
        let mut metadata = step.get_message(field::step::METADATA);
        if metadata.is_none() {
            if let Some(h) = columns.metadata {
                if hex_into(h, "metadata", &mut self.metadata)? {
                    metadata = Some(wire::Message::new(&self.metadata));
                }
            }
        }
        let mut error = step.get_message(field::step::ERROR);
        if error.is_none() {
            if let Some(h) = columns.error_details {
                if hex_into(h, "error_details", &mut self.error_details)? {
                    error = Some(wire::Message::new(&self.error_details));
                }
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
        Ok(finish_step(
            conv,
            &mut self.warnings,
            &view,
            columns.idx,
            damage,
            buf,
        ))
    }

    /// Leaves a damaged Step in `self.payload` readable, and says what was
    /// lost: a Step cut short (or unreadable past some byte) becomes its
    /// readable part; a whole Step whose payload is damaged keeps the
    /// payload's readable part in its place.
    fn repair_payload(&mut self, type_column: Option<i64>) -> Option<String> {
        let damage = match wire::damage(&self.payload) {
            Some(damage) => {
                self.repaired = wire::repair(&self.payload).unwrap_or_default();
                format!("step_payload {damage}")
            }
            None => {
                let step = wire::Message::new(&self.payload);
                let type_tag = step
                    .get_u64(field::step::TYPE)
                    .or(type_column.map(|v| v as u64));
                let (number, payload) = results::payload_of(step, type_tag)?;
                let damage = wire::damage(payload.bytes())?;
                let readable = wire::repair(payload.bytes()).unwrap_or_default();
                self.repaired = wire::set_field(&self.payload, number, &[readable]);
                format!("step_payload field {number}: {damage}")
            }
        };
        std::mem::swap(&mut self.payload, &mut self.repaired);
        Some(damage)
    }

    /// What could not be read since the last call, one line each.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

/// Writes a step's messages, marked and said when it is damaged.
fn finish_step(
    conv: &mut Conversation,
    warnings: &mut Vec<String>,
    view: &StepView<'_>,
    idx: Option<i64>,
    damage: Option<String>,
    buf: &mut Vec<u8>,
) -> Option<SpilledResult> {
    let start = buf.len();
    conv.damaged = damage.is_some();
    let spilled = conv.step(view, idx, buf);
    conv.damaged = false;
    if let Some(damage) = damage {
        let step = idx.map_or_else(|| "?".to_string(), |i| i.to_string());
        let shown = if buf.len() > start {
            "the readable part is decoded and marked \"damaged\""
        } else {
            "it gives no message"
        };
        warnings.push(format!(
            "conversation {}: step {step}: {damage}; {shown}",
            conv.id
        ));
    }
    spilled
}

impl Waiting {
    /// The held-back messages with each hole filled: the file's text when
    /// it came, else the step's own.
    fn write(self, out: &mut Output) -> Result<()> {
        let Waiting {
            mut output,
            mut texts,
            holes,
            files,
        } = self;
        let mut at = 0;
        for hole in &holes {
            output.copy_range(at..hole.at, out)?;
            match files.get(&hole.path).filter(|parts| !parts.is_empty()) {
                Some(parts) => {
                    for part in parts {
                        texts.copy_range(part.clone(), out)?;
                    }
                }
                None => texts.copy_range(hole.fallback.clone(), out)?,
            }
            at = hole.at;
        }
        output.copy_range(at..output.len(), out)?;
        out.end_record()
    }
}

/// The parts of one step, found in one pass over its fields.
struct StepView<'a> {
    kind: u64,
    status: u64,
    /// All of the Step, to list its fields when nothing here understands it.
    step: wire::Message<'a>,
    metadata: wire::Message<'a>,
    error: Option<wire::Message<'a>>,
    /// The payload field present and its message.
    payload: Option<(u32, wire::Message<'a>)>,
}

impl<'a> StepView<'a> {
    fn new(
        step: wire::Message<'a>,
        metadata: wire::Message<'a>,
        error: Option<wire::Message<'a>>,
        type_column: Option<i64>,
        status_column: Option<i64>,
    ) -> StepView<'a> {
        let type_tag = step
            .get_u64(field::step::TYPE)
            .or(type_column.map(|v| v as u64));
        let status = status_column
            .map(|v| v as u64)
            .or(step.get_u64(field::step::STATUS))
            .unwrap_or(0);
        let payload = results::payload_of(step, type_tag);
        let kind = payload
            .and_then(|(f, _)| steps::kind_of_payload_field(f))
            .or(type_tag)
            .unwrap_or(0);
        StepView {
            kind,
            status,
            step,
            metadata,
            error,
            payload,
        }
    }

    fn payload(&self) -> wire::Message<'a> {
        self.payload.map(|(_, m)| m).unwrap_or_default()
    }

    fn timestamp(&self) -> Option<Timestamp> {
        read_timestamp(self.metadata.get_message(field::metadata::CREATED_AT)?)
    }

    /// `step type N (NAME) is not understood; Step fields present: 1, 4, …`
    fn not_understood_text(&self) -> String {
        let mut numbers: Vec<u32> = self.step.fields().map(|f| f.number).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let numbers: Vec<String> = numbers.iter().map(u32::to_string).collect();
        let name = match steps::kind_name(self.kind) {
            Some(name) => format!(" ({name})"),
            None => String::new(),
        };
        format!(
            "step type {}{name} is not understood; Step fields present: {}",
            self.kind,
            numbers.join(", ")
        )
    }
}

/// The `step_type` of a system message: the unprefixed enum name, else the
/// number.
fn step_type_name(step_kind: u64) -> Cow<'static, str> {
    match steps::kind_name(step_kind) {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(step_kind.to_string()),
    }
}

impl Conversation {
    fn meta(&self) -> Meta<'_> {
        Meta {
            conversation: &self.id,
            kind: "meta",
            id: Cow::Borrowed(self.cascade_id.as_deref().unwrap_or(&self.id)),
            timestamp: self
                .created_at
                .or(self.first_step_time)
                .and_then(|t| t.format()),
            cwd: self.cwd.clone(),
            git_branch: self.git_branch.clone(),
            title: self
                .checkpoint_title
                .clone()
                .or_else(|| self.first_user_text.as_deref().map(title_from_text)),
            model: self.latest_model.clone(),
            parent_conversation_id: self.parent_conversation_id.clone(),
            forked_from: self.forked_from(),
        }
    }

    /// Writes the messages of one step; tells where a result's text must be
    /// put once its spill file comes.
    fn step(
        &mut self,
        view: &StepView<'_>,
        idx: Option<i64>,
        out: &mut Vec<u8>,
    ) -> Option<SpilledResult> {
        let timestamp = view.timestamp();
        if self.first_step_time.is_none() {
            self.first_step_time = timestamp;
        }
        let timestamp = timestamp.and_then(|t| t.format());
        match view.kind {
            kind::USER_INPUT => self.user_input(view, idx, timestamp, out),
            kind::PLANNER_RESPONSE => self.planner_response(view, idx, timestamp, out),
            step_kind => {
                if step_kind == kind::CHECKPOINT {
                    let checkpoint = view.payload();
                    if let Some(title) = checkpoint
                        .get_nonempty_str(field::checkpoint::CONVERSATION_TITLE)
                        .or_else(|| checkpoint.get_nonempty_str(field::checkpoint::USER_INTENT))
                    {
                        self.checkpoint_title = Some(title.into_owned());
                    }
                }
                let call = view.metadata.get_message(field::metadata::TOOL_CALL);
                let bookkeeping = system::by_kind(step_kind)
                    .filter(|_| call.is_none() || step_kind != kind::ERROR_MESSAGE);
                if let Some(bookkeeping) = bookkeeping {
                    if self.all {
                        let content = bookkeeping.blocks(view.payload());
                        // One that executed a call is carried whole, as the
                        // step also answers the call below and agy-encode
                        // must write one step for the two messages.
                        let raw = call.map(|_| Cow::Owned(hex::encode(view.step.bytes())));
                        self.system_message(step_kind, idx, timestamp.clone(), content, raw, out);
                    }
                    // A bookkeeping kind that executed a call (agy's
                    // task_boundary tool) still answers it.
                    if let Some(call) = call {
                        return self.tool_step(view, call, idx, timestamp, out);
                    }
                    return None;
                }
                let understood = view.payload.is_some_and(|(f, _)| results::understands(f));
                if self.all && !understood {
                    let text = Cow::Owned(view.not_understood_text());
                    let content = vec![Block::text(text)];
                    // The whole Step as hex, so agy-encode can write the
                    // step back although nothing here reads it.
                    let raw = Cow::Owned(hex::encode(view.step.bytes()));
                    self.system_message(step_kind, idx, timestamp.clone(), content, Some(raw), out);
                }
                if let Some(call) = call {
                    return self.tool_step(view, call, idx, timestamp, out);
                }
            }
        }
        None
    }

    /// A user input or reply with nothing to show: no message, but with
    /// `--all` a system message saying so (carrying the step whole, so it
    /// can be written back). No empty message appears unexplained.
    fn nothing_to_show(
        &self,
        view: &StepView<'_>,
        idx: Option<i64>,
        timestamp: Option<String>,
        what: &str,
        out: &mut Vec<u8>,
    ) {
        if !self.all {
            return;
        }
        let name = step_type_name(view.kind);
        let text = Cow::Owned(format!("{name} step with {what}"));
        let raw = Cow::Owned(hex::encode(view.step.bytes()));
        self.system_message(
            view.kind,
            idx,
            timestamp,
            vec![Block::text(text)],
            Some(raw),
            out,
        );
    }

    fn system_message(
        &self,
        step_kind: u64,
        idx: Option<i64>,
        timestamp: Option<String>,
        content: Vec<Block<'_>>,
        raw: Option<Cow<'_, str>>,
        out: &mut Vec<u8>,
    ) {
        let message = Message {
            step_type: Some(step_type_name(step_kind)),
            raw,
            ..self.new_message(Role::System, idx, timestamp, content)
        };
        write_json(out, &message);
    }

    fn user_input(
        &mut self,
        view: &StepView<'_>,
        idx: Option<i64>,
        timestamp: Option<String>,
        out: &mut Vec<u8>,
    ) {
        use field::media;
        let input = view.payload();
        if let Some(name) = input
            .get_message(field::user_input::PLANNER_CONFIG)
            .and_then(|c| c.get_message(field::user_input::PLANNER_CONFIG_MODEL))
            .and_then(|m| m.get_nonempty_str(field::user_input::PLANNER_CONFIG_MODEL_NAME))
        {
            self.configured_model = Some(name.into_owned());
        }
        let text = user_text(input);
        let mut content = Vec::new();
        if !text.is_empty() {
            if self.first_user_text.is_none() {
                self.first_user_text = Some(text.to_string());
            }
            content.push(Block::text(text));
        }
        for image in input.repeated_messages(field::user_input::IMAGES) {
            content.push(Block::Image {
                source: ImageSource {
                    source_type: Cow::Borrowed("base64"),
                    media_type: image.get_nonempty_str(field::image::MIME_TYPE),
                    data: Some(image.get_str(field::image::BASE64_DATA).unwrap_or_default()),
                    url: None,
                },
            });
        }
        // Media (grade B): inline bytes as base64, else the URI; an image
        // type is an image block, anything else a document block.
        for item in input.repeated_messages(field::user_input::MEDIA) {
            let media_type = item.get_nonempty_str(media::MIME_TYPE);
            let source = match (
                item.get_bytes(media::INLINE_DATA).filter(|d| !d.is_empty()),
                item.get_nonempty_str(media::URI),
            ) {
                (Some(data), _) => ImageSource {
                    source_type: Cow::Borrowed("base64"),
                    media_type,
                    data: Some(Cow::Owned(message::base64_encode(data))),
                    url: None,
                },
                (None, Some(uri)) => ImageSource {
                    source_type: Cow::Borrowed("url"),
                    media_type,
                    data: None,
                    url: Some(uri),
                },
                (None, None) => continue,
            };
            let is_image = source
                .media_type
                .as_deref()
                .is_some_and(|t| t.starts_with("image/"));
            content.push(if is_image {
                Block::Image { source }
            } else {
                Block::Document { source }
            });
        }
        if content.is_empty() && !self.damaged {
            self.nothing_to_show(view, idx, timestamp, "no text, images or documents", out);
            return;
        }
        let message = Message {
            implicit: view.metadata.get_u64(field::metadata::SOURCE) == Some(source::USER_IMPLICIT),
            ..self.new_message(Role::User, idx, timestamp, content)
        };
        write_json(out, &message);
    }

    fn planner_response(
        &mut self,
        view: &StepView<'_>,
        idx: Option<i64>,
        timestamp: Option<String>,
        out: &mut Vec<u8>,
    ) {
        let planner = view.payload();
        let mut content = Vec::new();
        let thinking = planner
            .get_nonempty_str(field::planner::THINKING)
            .or_else(|| planner.get_nonempty_str(field::planner::RAW_THINKING));
        let signature = planner
            .get_bytes(field::planner::THINKING_SIGNATURE)
            .map(|value| Cow::Owned(hex::encode(steps::signature::read(value))))
            .or_else(|| planner.get_nonempty_str(field::planner::SIGNATURE));
        if thinking.is_some() || signature.is_some() {
            content.push(Block::Thinking {
                thinking: thinking.unwrap_or_default(),
                signature,
            });
        }
        if let Some(text) = planner
            .get_nonempty_str(field::planner::RESPONSE)
            .or_else(|| planner.get_nonempty_str(field::planner::MODIFIED_RESPONSE))
        {
            content.push(Block::text(text));
        }
        for call in planner.repeated_messages(field::planner::TOOL_CALLS) {
            let id = call.get_str(field::tool_call::ID).unwrap_or_default();
            let native_name = call.get_str(field::tool_call::NAME).unwrap_or_default();
            let input = ToolInput::from_arguments_json(
                &call
                    .get_str(field::tool_call::ARGUMENTS_JSON)
                    .unwrap_or_default(),
            );
            let (name, input) = match input {
                ToolInput::Object(args) => {
                    let (name, mapped) = tools::to_common(&native_name, Some(&args));
                    (name, ToolInput::Object(mapped.unwrap_or(args)))
                }
                other => (tools::to_common(&native_name, None).0, other),
            };
            let signature = call
                .get_bytes(field::tool_call::THINKING_SIGNATURE)
                .filter(|b| !b.is_empty())
                .map(|b| Cow::Owned(hex::encode(steps::signature::read(b))));
            self.open_calls.insert(id.to_string());
            content.push(Block::ToolUse {
                id,
                name: Cow::Owned(name),
                input,
                signature,
            });
        }
        if content.is_empty() && !self.damaged {
            self.nothing_to_show(view, idx, timestamp, "no text, thinking or tool calls", out);
            return;
        }
        let model = self.model_of(view, idx);
        if model.is_some() {
            self.latest_model.clone_from(&model);
        }
        let usage = view
            .metadata
            .get_message(field::metadata::MODEL_USAGE)
            .and_then(read_usage);
        let stop_reason = planner
            .get_u64(field::planner::STOP_REASON)
            .filter(|&v| v != 0)
            .map(steps::stop_reason_name);
        let message = Message {
            model: model.map(Cow::Owned),
            stop_reason,
            usage,
            ..self.new_message(Role::Assistant, idx, timestamp, content)
        };
        write_json(out, &message);
    }

    /// The human model name where the store has one (`gen_metadata` by step,
    /// the step's model info, `gen_metadata` by model enum, then the name
    /// the latest user input's planner configuration holds), else
    /// `model-<n>` from the model enum.
    fn model_of(&self, view: &StepView<'_>, idx: Option<i64>) -> Option<String> {
        if let Some(name) = idx.and_then(|i| self.models_by_step.get(&i)) {
            return Some(name.clone());
        }
        let metadata = view.metadata;
        if let Some(name) = metadata
            .get_message(field::metadata::MODEL_INFO)
            .and_then(|info| info.get_nonempty_str(field::metadata::MODEL_INFO_NAME))
        {
            return Some(name.into_owned());
        }
        let model_enum = metadata
            .get_u64(field::metadata::GENERATOR_MODEL)
            .filter(|&v| v != 0)
            .or_else(|| {
                metadata
                    .get_message(field::metadata::MODEL_USAGE)
                    .and_then(|u| u.get_u64(field::usage::MODEL))
                    .filter(|&v| v != 0)
            });
        if let Some(name) = model_enum.and_then(|e| self.models_by_enum.get(&e)) {
            return Some(name.clone());
        }
        if let Some(name) = &self.configured_model {
            return Some(name.clone());
        }
        model_enum.map(steps::model_enum_name)
    }

    /// A step that executed a tool call gives that call's result once it has
    /// settled; a step still in flight gives nothing.
    fn tool_step(
        &mut self,
        view: &StepView<'_>,
        call: wire::Message<'_>,
        idx: Option<i64>,
        timestamp: Option<String>,
        out: &mut Vec<u8>,
    ) -> Option<SpilledResult> {
        if !steps::is_settled(view.status) {
            return None;
        }
        let id = call.get_str(field::tool_call::ID).unwrap_or_default();
        let outcome = match view.payload {
            // An ERROR_MESSAGE that executed a call is a tool step (see
            // `step`), whose result `results` reads.
            Some((payload_field, payload)) => match system::by_kind(view.kind)
                .filter(|_| view.kind != kind::ERROR_MESSAGE)
            {
                // A bookkeeping kind's result is the text of its fields.
                Some(bookkeeping) => Outcome::text(Cow::Owned(bookkeeping.joined_text(payload))),
                None => results::outcome(payload_field, payload),
            },
            None => Outcome::default(),
        };
        let details_text = view.error.and_then(results::error_text);
        let is_error = steps::is_failure(view.status) || details_text.is_some() || outcome.failed;
        let replaced = details_text.or(outcome.error_text);
        let spill_path = outcome
            .full_output_uri
            .as_deref()
            .filter(|_| replaced.is_none())
            .and_then(|uri| self.brain_path(uri));
        let content = match replaced {
            Some(text) => ResultContent::Text(text),
            None => outcome.content,
        };
        // A result whose call no planner step declared (an orphan) is a
        // tool_result all the same: the stream shows what the step holds.
        self.open_calls.remove(&*id);
        let Some(path) = spill_path else {
            let block = Block::ToolResult {
                tool_use_id: id,
                content,
                is_error,
            };
            write_json(
                out,
                &self.new_message(Role::User, idx, timestamp, vec![block]),
            );
            return None;
        };
        // The text goes in later: write the message with empty content and
        // remember where that content starts.
        let fallback = content.to_text().into_owned();
        let block = Block::ToolResult {
            tool_use_id: id,
            content: ResultContent::default(),
            is_error,
        };
        let start = out.len();
        write_json(
            out,
            &self.new_message(Role::User, idx, timestamp, vec![block]),
        );
        // Every other "content" key is followed by `[`, and quotes inside
        // strings are escaped, so this finds the result's.
        const EMPTY_CONTENT: &[u8] = b"\"content\":\"\"";
        let at = memchr::memmem::rfind(&out[start..], EMPTY_CONTENT)
            .expect("a result message with empty content holds it")
            + EMPTY_CONTENT.len()
            - 1;
        Some(SpilledResult { at, path, fallback })
    }

    /// The brain-relative path a `full_output_uri` names: the part after
    /// `brain/<this conversation>/`, or the text itself when it is already
    /// relative (`steps/12/output.txt`). `None` for anywhere else, since
    /// the row stream carries only this conversation's brain files.
    fn brain_path(&self, uri: &str) -> Option<String> {
        let path = message::uri_to_path(uri);
        if let Some(at) = path.rfind("/brain/") {
            let rest = &path[at + "/brain/".len()..];
            let (dir, inside) = rest.split_once('/')?;
            let ours = dir == self.id || Some(dir) == self.cascade_id.as_deref();
            return (ours && !inside.is_empty()).then(|| inside.to_string());
        }
        let relative = !path.is_empty() && !path.starts_with('/') && !path.contains("://");
        relative.then_some(path)
    }

    /// A brain file (or the next part of one) of the row stream: kept when
    /// a waiting result names it.
    fn file(&mut self, path: &str, append: bool, content: &FileContent<'_>) -> Result<()> {
        let Some(waiting) = self.waiting.as_mut() else {
            return Ok(());
        };
        let Some(slot) = waiting.files.get_mut(path) else {
            return Ok(());
        };
        let start = waiting.texts.len();
        match content {
            FileContent::Text(text) => waiting.texts.append_json_str_body(text)?,
            FileContent::Hex(hex_text) => {
                let bytes = crate::stream::record::decode_hex(hex_text)?;
                waiting
                    .texts
                    .append_json_str_body(&crate::agy::wire::lossy_str(&bytes))?
            }
        }
        if !append {
            slot.clear();
        }
        slot.push(start..waiting.texts.len());
        Ok(())
    }

    fn read_trajectory_metadata(&mut self, data: &[u8]) {
        let meta = wire::Message::new(data);
        let workspace = meta.get_message(field::trajectory::WORKSPACES);
        let folder = workspace
            .and_then(|w| w.get_nonempty_str(field::trajectory::WORKSPACE_FOLDER_URI))
            .or_else(|| {
                meta.repeated_bytes(field::trajectory::WORKSPACE_URIS)
                    .map(crate::agy::wire::lossy_str)
                    .find(|u| !u.is_empty())
            });
        if let Some(uri) = folder {
            self.cwd = Some(message::uri_to_path(&uri));
        }
        if let Some(branch) =
            workspace.and_then(|w| w.get_nonempty_str(field::trajectory::WORKSPACE_BRANCH))
        {
            self.git_branch = Some(branch.into_owned());
        }
        if let Some(ts) = meta
            .get_message(field::trajectory::CREATED_AT)
            .and_then(read_timestamp)
        {
            self.created_at = Some(ts);
        }
        if let Some(parent) = meta.get_nonempty_str(field::trajectory::PARENT_CONVERSATION_ID) {
            self.parent_conversation_id = Some(parent.into_owned());
        }
    }

    fn read_generator_metadata(&mut self, data: &[u8]) {
        let generation = wire::Message::new(data);
        let Some(name) = generation
            .get_message(field::generator::CHAT_MODEL)
            .and_then(|m| m.get_nonempty_str(field::generator::RESPONSE_MODEL))
        else {
            return;
        };
        for idx in generation.repeated_varints(field::generator::STEP_INDICES) {
            self.models_by_step.insert(idx as i64, name.to_string());
        }
        let model_enum = generation
            .get_message(field::generator::CHAT_MODEL)
            .and_then(|m| m.get_message(field::generator::USAGE))
            .and_then(|usage| usage.get_u64(field::usage::MODEL))
            .filter(|&v| v != 0);
        if let Some(model_enum) = model_enum {
            self.models_by_enum.insert(model_enum, name.into_owned());
        }
    }

    /// A `parent_references` row: kept when it is a fork (FORK or
    /// SUBAGENT_FORK, grade B) naming a conversation or trajectory.
    fn read_reference(&mut self, data: &[u8]) {
        use field::reference::*;
        let reference = wire::Message::new(data);
        let reference_type = match reference.get_u64(REFERENCE_TYPE) {
            Some(FORK) => "FORK",
            Some(SUBAGENT_FORK) => "SUBAGENT_FORK",
            _ => return,
        };
        let fork = ForkedFrom {
            conversation_id: reference
                .get_nonempty_str(CONVERSATION_ID)
                .map(Cow::into_owned),
            step_index: reference.get_i32(STEP_INDEX).map(i64::from),
            trajectory_id: reference
                .get_nonempty_str(TRAJECTORY_ID)
                .map(Cow::into_owned),
            reference_type: Some(reference_type.to_string()),
        };
        if fork.conversation_id.is_some() || fork.trajectory_id.is_some() {
            self.references.push(fork);
        }
    }

    /// The latest fork reference that names another conversation (a
    /// rewind's reference names the conversation itself).
    fn forked_from(&self) -> Option<ForkedFrom> {
        self.references
            .iter()
            .rev()
            .find(|r| {
                let own = r.conversation_id.as_deref();
                own.is_none() || (own != Some(&self.id) && own != self.cascade_id.as_deref())
            })
            .cloned()
    }
}

/// The prompt: `user_response`, else the text items, else the legacy query.
fn user_text(input: wire::Message<'_>) -> Cow<'_, str> {
    use field::user_input::*;
    if let Some(text) = input.get_nonempty_str(USER_RESPONSE) {
        return text;
    }
    let mut items = String::new();
    for item in input.repeated_messages(ITEMS) {
        if let Some(text) = item.get_str(ITEM_TEXT) {
            items.push_str(&text);
        }
    }
    if !items.is_empty() {
        return Cow::Owned(items);
    }
    input.get_str(QUERY).unwrap_or_default()
}

fn read_usage(usage: wire::Message<'_>) -> Option<Usage> {
    use field::usage::*;
    let usage = Usage {
        input_tokens: usage.get_u64(INPUT_TOKENS),
        output_tokens: usage.get_u64(OUTPUT_TOKENS),
        cache_creation_input_tokens: usage.get_u64(CACHE_WRITE_TOKENS),
        cache_read_input_tokens: usage.get_u64(CACHE_READ_TOKENS),
    };
    (!usage.is_empty()).then_some(usage)
}

/// A Timestamp message, if it holds a writable time.
pub fn read_timestamp(ts: wire::Message<'_>) -> Option<Timestamp> {
    let t = Timestamp {
        seconds: ts.get_i64(field::timestamp::SECONDS).unwrap_or(0),
        nanos: ts.get_i32(field::timestamp::NANOS).unwrap_or(0),
    };
    t.is_writable().then_some(t)
}

/// A title from the first user text: its first `TITLE_CHARS` characters.
pub fn title_from_text(text: &str) -> String {
    text.trim().chars().take(TITLE_CHARS).collect()
}

impl Conversation {
    /// A message with only what every message has, marked when the step
    /// being decoded is damaged.
    fn new_message<'a>(
        &'a self,
        role: Role,
        idx: Option<i64>,
        timestamp: Option<String>,
        content: Vec<Block<'a>>,
    ) -> Message<'a> {
        Message {
            conversation: &self.id,
            kind: "message",
            role,
            step_type: None,
            idx,
            raw: None,
            damaged: self.damaged,
            implicit: false,
            timestamp,
            model: None,
            stop_reason: None,
            usage: None,
            content,
        }
    }
}

fn write_json(out: &mut Vec<u8>, message: &Message<'_>) {
    message.write_json(out);
    out.push(b'\n');
}

/// Decodes a blob column into a fresh vector (`None` for NULL).
fn blob(row: &RowCells<'_>, column: &str) -> Result<Option<Vec<u8>>> {
    match row.get(column) {
        None => Ok(None),
        Some(cell) => cell
            .blob_bytes()
            .map_err(|e| e.context(format!("column {column}"))),
    }
}

/// Decodes a blob column's hex into `buf`, reusing its allocation.
fn hex_into(hex_text: &[u8], column: &str, buf: &mut Vec<u8>) -> Result<bool> {
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
/// columns as hex (absent when NULL or not a blob).
struct StepColumns<'a> {
    idx: Option<i64>,
    step_type: Option<i64>,
    status: Option<i64>,
    metadata: Option<&'a [u8]>,
    error_details: Option<&'a [u8]>,
    step_payload: Option<&'a [u8]>,
}

impl<'a> StepColumns<'a> {
    /// The columns of a parsed `steps` row.
    fn of(row: &'a RowCells<'_>) -> StepColumns<'a> {
        let hex = |column: &str| match row.get(column) {
            Some(JsonCell::Plain(h)) | Some(JsonCell::Blob(h)) => Some(h.as_bytes()),
            _ => None,
        };
        StepColumns {
            idx: row.get("idx").and_then(JsonCell::as_i64),
            step_type: row.get("step_type").and_then(JsonCell::as_i64),
            status: row.get("status").and_then(JsonCell::as_i64),
            metadata: hex("metadata"),
            error_details: hex("error_details"),
            step_payload: hex("step_payload"),
        }
    }
}

/// Reads a line of exactly the shape agy-dump gives a row of agy's `steps`
/// table: `{"conversation":"ID","kind":"row","table":"steps","row":{…}}`
/// with known column names once each, and values that are integers, null
/// or strings without escapes. Anything else is `None`, for the ordinary
/// parser to read. Strings are not checked here: blob hex is checked by
/// decoding it, and the id by `str::from_utf8` and the escape test.
fn parse_canonical_step_row(line: &[u8]) -> Option<(&str, StepColumns<'_>)> {
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
    let mut columns = StepColumns {
        idx: None,
        step_type: None,
        status: None,
        metadata: None,
        error_details: None,
        step_payload: None,
    };
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
                let end = memchr::memchr(b'"', &rest[1..])?;
                (Value::Hex(&rest[1..1 + end]), &rest[end + 2..])
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
            // step_payload is checked by decoding it before anything else.
            "step_payload" => columns.step_payload = hex,
            // Every other blob column's hex must be valid JSON, which it is
            // when every byte is a hex digit: metadata and error_details are
            // decoded only when the payload lacks their mirror.
            other => {
                if !hex.is_none_or(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    return None;
                }
                match other {
                    "metadata" => columns.metadata = hex,
                    "error_details" => columns.error_details = hex,
                    _ => {}
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes `lines` one way or the other, returning the output and the
    /// first error with its line number.
    fn decode_all(lines: &[String], fast: bool) -> (String, Option<(usize, String)>) {
        use std::sync::{Arc, Mutex};
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Shared {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let written = Arc::new(Mutex::new(Vec::new()));
        let mut out = Output::to(Box::new(Shared(written.clone())));
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
        let text = String::from_utf8(written.lock().unwrap().clone()).unwrap();
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

    #[test]
    fn titles_are_cut_by_characters() {
        let text = "ü".repeat(100);
        assert_eq!(title_from_text(&text).chars().count(), TITLE_CHARS);
        assert_eq!(title_from_text("  short \n"), "short");
    }
}
