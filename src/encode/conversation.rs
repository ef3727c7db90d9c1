//! What one conversation holds while its messages are encoded: the calls
//! waiting for a result, the `meta` fields, the brain transcripts; how it
//! starts (its database, schema and `trajectory_meta` rows) and ends (the
//! pending calls, the title checkpoint, the metadata blob, the
//! transcripts); and the writing of each step's row and transcript lines.

use std::borrow::Cow;

use crate::agy::steps::{self, field, kind, source, status};
use crate::agy::wire::Writer;
use crate::decode;
use crate::decode::summary::StepFacts;
use crate::error::{Error, Result};
use crate::store::sqlite;
use crate::stream::io;
use crate::stream::message::{self, ForkedFrom, InputRecord, Role, Usage};
use crate::stream::record::{self, Cell, RowShape};
use crate::time::Timestamp;

use super::generation;
use super::step::{head_room, metadata, timestamp_fields, Step, StepWriter};
use super::transcript::{Transcript, TranscriptLine, TRANSCRIPT, TRANSCRIPT_FULL};
#[cfg(doc)]
use super::Synth;
use super::{OpenCall, NAMESPACE};

#[derive(Default)]
struct MetaFields {
    seen: bool,
    timestamp: Option<Timestamp>,
    cwd: Option<String>,
    git_branch: Option<String>,
    title: Option<String>,
    parent_conversation_id: Option<String>,
    forked_from: Option<ForkedFrom>,
    /// The meta record says the conversation is not whole (agy-decode of a
    /// row stream cut short or not all read).
    incomplete: Option<String>,
}

pub(super) struct Conversation {
    pub(super) id: String,
    /// What each of its `steps` rows starts with and their keys.
    steps_row: RowShape,
    /// The same of its `gen_metadata` rows.
    generation_row: RowShape,
    pub(super) next_idx: i64,
    /// Steps for `agy-encode --onto` ([`Synth`]): no brain transcripts,
    /// and no `gen_metadata` rows (the original's are carried).
    pub(super) onto: bool,
    /// `gen_metadata` rows written: the next one's idx.
    generations: i64,
    pub(super) open_calls: Vec<OpenCall>,
    /// The call the step just written raw executed: agy-decode shows that
    /// step's result as the next message's tool_result, which the step
    /// already holds.
    raw_call: Option<String>,
    meta: MetaFields,
    /// The title agy-decode would derive from the steps written so far
    /// (latest checkpoint title, else the first user text), so the meta
    /// record's title costs a checkpoint step only when it differs.
    pub(super) checkpoint_title: Option<String>,
    /// The title of the first user text ([`message::title_from_text`]),
    /// taken when it comes rather than a copy of the text, which may be
    /// tens of MB, kept to the end.
    pub(super) first_user_title: Option<String>,
    transcript: Transcript,
    transcript_full: Transcript,
    /// The step blob being written, and the last step's payload, kept for
    /// their allocations: a large tool output would otherwise fault in fresh
    /// pages for each of them at every step that holds one.
    step_blob: Vec<u8>,
    spare_payload: Vec<u8>,
    /// The names of the artifacts written back.
    pub(super) artifacts: std::collections::HashSet<String>,
    /// What the steps written tell the conversation's index row, by
    /// agy-decode's rules.
    pub(super) summary: decode::summary::Summarizer,
}

impl Conversation {
    pub(super) fn start(id: String, out: &mut Vec<u8>) -> Conversation {
        record::write_db(out, &id, sqlite::AGY_USER_VERSION, true);
        for &(object_type, name, sql) in sqlite::AGY_SCHEMA {
            record::write_schema(out, &id, object_type, name, sql);
        }
        let trajectory_id =
            crate::id::v5(&NAMESPACE, format!("{id}/trajectory").as_bytes()).to_string();
        let columns = sqlite::agy_columns("trajectory_meta");
        record::write_row(
            out,
            &id,
            "trajectory_meta",
            &columns,
            [
                Cell::Text(Cow::Borrowed(trajectory_id.as_bytes())),
                Cell::Text(Cow::Borrowed(id.as_bytes())),
                Cell::Integer(steps::TRAJECTORY_TYPE_CASCADE),
                Cell::Integer(steps::TRAJECTORY_SOURCE_CLI),
            ],
        );
        Conversation::bare(id)
    }

    /// A conversation whose first rows are already written.
    pub(super) fn bare(id: String) -> Conversation {
        Conversation {
            steps_row: RowShape::new(&id, "steps", &sqlite::agy_columns("steps")),
            generation_row: RowShape::new(
                &id,
                "gen_metadata",
                &sqlite::agy_columns("gen_metadata"),
            ),
            id,
            next_idx: 0,
            onto: false,
            generations: 0,
            open_calls: Vec::new(),
            raw_call: None,
            meta: MetaFields::default(),
            checkpoint_title: None,
            first_user_title: None,
            transcript: Transcript::new(TRANSCRIPT),
            transcript_full: Transcript::new(TRANSCRIPT_FULL),
            step_blob: Vec::new(),
            spare_payload: Vec::new(),
            artifacts: std::collections::HashSet::new(),
            summary: decode::summary::Summarizer::new(),
        }
    }

    pub(super) fn message(
        &mut self,
        record: &InputRecord<'_>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        if self.meta.seen {
            return Err(Error::data("message after the conversation's meta record"));
        }
        let role = record
            .role
            .ok_or_else(|| Error::data("message record has no \"role\""))?;
        let timestamp = record
            .timestamp
            .as_deref()
            .map(Timestamp::parse)
            .transpose()
            .map_err(Error::data)?;
        let content = record.content.as_deref().unwrap_or_default();
        let raw_call = self.raw_call.take();
        match role {
            Role::User => {
                let implicit = record.implicit == Some(true);
                self.user_message(content, timestamp, implicit, raw_call, steps)
            }
            Role::System => match record.raw.as_deref() {
                Some(raw) => self.raw_step(raw, record.idx, steps),
                None => self.system_message(
                    record.step_type.as_deref(),
                    record.idx,
                    content,
                    timestamp,
                    steps,
                ),
            },
            Role::Assistant => self.assistant_message(
                content,
                timestamp,
                record.model.as_deref(),
                record.stop_reason.as_deref(),
                record.usage.as_ref(),
                steps,
            ),
        }
    }

    /// Writes the `gen_metadata` row of the generation that made step
    /// `idx` ([`generation`]), when the turn says what it consumed; none
    /// for `--onto`, which carries the original's rows.
    pub(super) fn write_generation(
        &mut self,
        idx: i64,
        model: Option<&str>,
        usage: Option<&Usage>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        let Some(usage) = usage.filter(|u| !u.is_empty()) else {
            return Ok(());
        };
        if self.onto {
            return Ok(());
        }
        let data = generation::data(&self.id, idx, model, usage);
        let start = steps.out.buf().len();
        self.generation_row.write_to(
            steps.out,
            [
                Cell::Integer(self.generations),
                Cell::Blob(Cow::Borrowed(&data)),
                Cell::Integer(data.len() as i64),
            ],
        )?;
        self.generations += 1;
        steps.out.end_line(start)
    }

    /// Why the conversation is not whole, as its meta record says.
    pub(super) fn incomplete(&self) -> Option<String> {
        self.meta.incomplete.clone()
    }

    pub(super) fn meta(&mut self, record: &InputRecord<'_>) -> Result<()> {
        if self.meta.seen {
            return Err(Error::data("second meta record for this conversation"));
        }
        self.meta = MetaFields {
            seen: true,
            timestamp: record
                .timestamp
                .as_deref()
                .map(Timestamp::parse)
                .transpose()
                .map_err(Error::data)?,
            cwd: record.cwd.as_deref().map(str::to_string),
            git_branch: record.git_branch.as_deref().map(str::to_string),
            title: record.title.as_deref().map(str::to_string),
            parent_conversation_id: record.parent_conversation_id.as_deref().map(str::to_string),
            forked_from: record.forked_from.clone(),
            incomplete: record.incomplete.as_deref().map(str::to_string),
        };
        if let Some(fork) = &self.meta.forked_from {
            fork_reference(fork)?;
        }
        Ok(())
    }

    /// A step of a kind nothing here reads, carried whole by a system
    /// message's `raw` (agy-decode --all): written back as it was, its
    /// columns taken from the Step's own fields.
    fn raw_step(&mut self, raw: &str, idx: Option<i64>, steps: &mut StepWriter<'_>) -> Result<()> {
        let bytes = hex::decode(raw)
            .map_err(|e| Error::data(format!("system message: raw is not hex: {e}")))?;
        let step = crate::agy::wire::Message::new(&bytes);
        let step_kind = step.get_u64(field::step::TYPE).unwrap_or(0);
        let step_status = step.get_u64(field::step::STATUS).unwrap_or(0);
        let metadata = step.get_bytes(field::step::METADATA).unwrap_or_default();
        let error = step.get_bytes(field::step::ERROR);
        let meta = crate::agy::wire::Message::new(metadata);
        let step_source = meta.get_u64(field::metadata::SOURCE).unwrap_or(0);
        let timestamp = meta
            .get_message(field::metadata::CREATED_AT)
            .and_then(decode::read_timestamp);
        if let Some(idx) = idx {
            self.next_idx = self.next_idx.max(idx);
        }
        let executed = meta
            .get_message(field::metadata::TOOL_CALL)
            .and_then(|call| call.get_nonempty_str(field::tool_call::ID))
            .map(|id| id.into_owned());
        if let Some(id) = &executed {
            self.open_calls.retain(|c| c.id != *id);
        }
        let line = TranscriptLine::new(step_source, step_kind, step_status, timestamp, None);
        self.write_row(
            steps,
            step_kind,
            step_status,
            metadata,
            error,
            &bytes,
            line,
            Origin::Raw,
        )?;
        self.raw_call = executed;
        Ok(())
    }

    pub(super) fn finish(mut self, steps: &mut StepWriter<'_>) -> Result<()> {
        for call in std::mem::take(&mut self.open_calls) {
            self.tool_step(&call, None, call.timestamp, steps)?;
        }
        let derived_title = self
            .checkpoint_title
            .clone()
            .or_else(|| self.first_user_title.clone());
        if let Some(title) = self
            .meta
            .title
            .take()
            .filter(|t| Some(t) != derived_title.as_ref())
        {
            let mut checkpoint = Writer::new();
            checkpoint
                .string(field::checkpoint::USER_INTENT, &title)
                .bool(field::checkpoint::INTENT_ONLY, true)
                .string(field::checkpoint::CONVERSATION_TITLE, &title);
            self.write_step(
                steps,
                Step {
                    kind: kind::CHECKPOINT,
                    status: status::DONE,
                    metadata: metadata(None, source::SYSTEM, 0).into_bytes(),
                    error: None,
                    payload_field: field::step::CHECKPOINT,
                    payload: checkpoint.into_bytes(),
                    payload_at: 0,
                    line: TranscriptLine::new(
                        source::SYSTEM,
                        kind::CHECKPOINT,
                        status::DONE,
                        None,
                        None,
                    ),
                },
            )?;
        }
        let out = &mut *steps.out;
        let blob = self.trajectory_metadata();
        let columns = sqlite::agy_columns("trajectory_metadata_blob");
        record::write_row(
            out.buf(),
            &self.id,
            "trajectory_metadata_blob",
            &columns,
            [
                Cell::Text(Cow::Borrowed(b"main")),
                Cell::Blob(Cow::Borrowed(&blob)),
            ],
        );
        if let Some(fork) = &self.meta.forked_from {
            let reference = fork_reference(fork)?;
            let columns = sqlite::agy_columns("parent_references");
            record::write_row(
                out.buf(),
                &self.id,
                "parent_references",
                &columns,
                [Cell::Integer(0), Cell::Blob(Cow::Borrowed(&reference))],
            );
        }
        // The index row agy's list needs, derived from what was written
        // (agy-decode's meta rules; FORMAT.md 14 row 7).
        self.summary.trajectory_metadata(&blob);
        let summary = std::mem::take(&mut self.summary).finish();
        summary.row(&self.id).write(out.buf(), &self.id);
        self.transcript.finish(out, &self.id)?;
        self.transcript_full.finish(out, &self.id)?;
        Ok(())
    }

    /// CortexTrajectoryMetadata for the "main" row.
    fn trajectory_metadata(&self) -> Vec<u8> {
        use field::trajectory::*;
        let meta = &self.meta;
        let mut blob = Writer::new();
        if meta.cwd.is_some() || meta.git_branch.is_some() {
            blob.message(WORKSPACES, |w| {
                if let Some(cwd) = &meta.cwd {
                    w.string(WORKSPACE_FOLDER_URI, &message::path_to_uri(cwd));
                }
                if let Some(branch) = &meta.git_branch {
                    w.string(WORKSPACE_BRANCH, branch);
                }
            });
        }
        if let Some(ts) = meta.timestamp {
            blob.message(CREATED_AT, |t| timestamp_fields(t, ts));
        }
        if let Some(parent) = &meta.parent_conversation_id {
            blob.string(PARENT_CONVERSATION_ID, parent);
        }
        blob.string(ROOT_CONVERSATION_ID, &self.id);
        if let Some(cwd) = &meta.cwd {
            blob.string(WORKSPACE_URIS, &message::path_to_uri(cwd));
        }
        // agy's project id for CLI conversations (FORMAT.md 8).
        blob.string(PROJECT_ID, crate::store::root::CLI.project_id);
        blob.into_bytes()
    }

    pub(super) fn write_step(&mut self, steps: &mut StepWriter<'_>, step: Step<'_>) -> Result<()> {
        if step.payload_at > 0 && step.payload_field < field::step::ERROR {
            return self.write_step_around_payload(steps, step);
        }
        let mut blob = std::mem::take(&mut self.step_blob);
        blob.clear();
        let mut bytes = Writer::from_vec(blob);
        bytes
            .varint(field::step::TYPE, step.kind)
            .varint(field::step::STATUS, step.status)
            .bytes(field::step::METADATA, &step.metadata);
        let payload = &step.payload[step.payload_at..];
        // Fields in number order, as agy writes them.
        if step.payload_field < field::step::ERROR {
            bytes.bytes(step.payload_field, payload);
        }
        if let Some(error) = &step.error {
            bytes.bytes(field::step::ERROR, error);
        }
        if step.payload_field > field::step::ERROR {
            bytes.bytes(step.payload_field, payload);
        }
        // The payload is in the step now: kept for the next step's, or given
        // back before the row is written when it is huge.
        self.keep_payload_buffer(step.payload);
        let result = self.write_row(
            steps,
            step.kind,
            step.status,
            &step.metadata,
            step.error.as_deref(),
            bytes.as_bytes(),
            step.line,
            Origin::Built,
        );
        let mut blob = bytes.into_bytes();
        io::shed(&mut blob);
        self.step_blob = blob;
        result
    }

    /// A buffer to build a step's payload in, where the step will hold it:
    /// the spare one, holding room for the fields before the payload
    /// ([`super::step::head_room`]) of a step whose metadata is
    /// `metadata_len` bytes; with where the payload starts, the step's
    /// `payload_at`.
    pub(super) fn payload_buffer(&mut self, metadata_len: usize) -> (Vec<u8>, usize) {
        let mut buf = std::mem::take(&mut self.spare_payload);
        buf.clear();
        let payload_at = head_room(metadata_len);
        buf.resize(payload_at, 0);
        (buf, payload_at)
    }

    /// Keeps `buf` as the spare payload buffer for the next step, emptied,
    /// or gives its allocation back when a huge payload grew it. A step whose
    /// payload was built apart (a user input, a bookkeeping step) leaves the
    /// spare one as it is when that is larger: swapping it for the small
    /// one had each large tool output after a user message grow its buffer
    /// again from nothing (0.6 % of agy-encode's instructions, in copies).
    fn keep_payload_buffer(&mut self, mut buf: Vec<u8>) {
        if buf.capacity() <= self.spare_payload.capacity() {
            return;
        }
        buf.clear();
        io::shed(&mut buf);
        self.spare_payload = buf;
    }

    /// [`Conversation::write_step`] for a payload built after room for the
    /// fields before it ([`super::step::head_room`]): those are written into
    /// that room, right up to the payload, and the step is the buffer from
    /// there, with the payload never copied.
    fn write_step_around_payload(
        &mut self,
        steps: &mut StepWriter<'_>,
        step: Step<'_>,
    ) -> Result<()> {
        let at = step.payload_at;
        let mut head = Writer::new();
        head.varint(field::step::TYPE, step.kind)
            .varint(field::step::STATUS, step.status)
            .field_head(field::step::METADATA, step.metadata.len());
        let mut payload_head = Writer::new();
        payload_head.field_head(step.payload_field, step.payload.len() - at);
        let (head, payload_head) = (head.as_bytes(), payload_head.as_bytes());
        let start = at
            .checked_sub(head.len() + step.metadata.len() + payload_head.len())
            .expect("head_room leaves room for the fields before the payload");
        let mut buf = step.payload;
        let mut place = start;
        for part in [head, &step.metadata, payload_head] {
            buf[place..place + part.len()].copy_from_slice(part);
            place += part.len();
        }
        let mut bytes = Writer::from_vec(buf);
        if let Some(error) = &step.error {
            bytes.bytes(field::step::ERROR, error);
        }
        let buf = bytes.into_bytes();
        let result = self.write_row(
            steps,
            step.kind,
            step.status,
            &step.metadata,
            step.error.as_deref(),
            &buf[start..],
            step.line,
            Origin::Built,
        );
        self.keep_payload_buffer(buf);
        result
    }

    /// Writes a `steps` row at the next idx, and its transcript lines.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write_row(
        &mut self,
        steps: &mut StepWriter<'_>,
        step_kind: u64,
        step_status: u64,
        metadata: &[u8],
        error: Option<&[u8]>,
        step_bytes: &[u8],
        line: TranscriptLine<'_>,
        origin: Origin,
    ) -> Result<()> {
        let idx = self.next_idx;
        self.next_idx += 1;
        let cells = [
            Cell::Integer(idx),
            Cell::Integer(step_kind as i64),
            Cell::Integer(step_status as i64),
            Cell::Integer(0),
            Cell::Blob(Cow::Borrowed(metadata)),
            error.map_or(Cell::Null, |e| Cell::Blob(Cow::Borrowed(e))),
            Cell::Null,
            Cell::Null,
            Cell::Null,
            Cell::Blob(Cow::Borrowed(step_bytes)),
            Cell::Integer(0),
        ];
        let start = steps.out.buf().len();
        self.steps_row.write_to(steps.out, cells)?;
        // A step built here is the kind it was built as, and only a user
        // input's text and a checkpoint's title need it read back; a raw
        // step is read back whole (its payload may name another kind than
        // its type field). Reading every step back was 3.6 % of
        // agy-encode's instructions.
        match origin {
            Origin::Built if !matches!(step_kind, kind::USER_INPUT | kind::CHECKPOINT) => {
                let facts = StepFacts::of_built(step_kind, metadata);
                debug_assert_eq!(
                    facts,
                    StepFacts::of_step(step_bytes, Some(step_kind as i64), metadata),
                    "a built step reads back as built"
                );
                self.summary.note(idx, &facts)
            }
            _ => (self.summary).step(idx, step_bytes, Some(step_kind as i64), metadata),
        }
        steps.out.end_line(start)?;
        if self.onto {
            return Ok(());
        }
        let mut line = line;
        line.step_index = idx;
        let full = &mut self.transcript_full.text;
        let start = full.len();
        line.write_escaped_line(full);
        // Most lines have nothing to cut: the compact transcript gets the
        // same escaped bytes instead of escaping the text once more.
        match line.is_cut_in_compact() {
            true => line.compact().write_escaped_line(&mut self.transcript.text),
            false => self.transcript.text.extend_from_slice(&full[start..]),
        }
        let out = &mut *steps.out;
        self.transcript_full.write_part_if_full(out, &self.id)?;
        self.transcript.write_part_if_full(out, &self.id)
    }
}

/// Where a step written by [`Conversation::write_row`] came from.
#[derive(Clone, Copy)]
pub(super) enum Origin {
    /// Built here from a message: it is the kind it was built as.
    Built,
    /// Carried whole by a system message's `raw`.
    Raw,
}

/// The CortexTrajectoryReference of a `forked_from` object.
fn fork_reference(fork: &ForkedFrom) -> Result<Vec<u8>> {
    use field::reference::*;
    let reference_type = match fork.reference_type.as_deref() {
        None | Some("FORK") => FORK,
        Some("SUBAGENT_FORK") => SUBAGENT_FORK,
        Some(other) => {
            return Err(Error::data(format!(
                "forked_from reference_type {other:?} is neither FORK nor SUBAGENT_FORK"
            )))
        }
    };
    let mut reference = Writer::new();
    if let Some(trajectory) = &fork.trajectory_id {
        reference.string(TRAJECTORY_ID, trajectory);
    }
    if let Some(step) = fork.step_index {
        reference.int64(STEP_INDEX, step);
    }
    reference.varint(REFERENCE_TYPE, reference_type);
    if let Some(conversation) = &fork.conversation_id {
        reference.string(CONVERSATION_ID, conversation);
    }
    Ok(reference.into_bytes())
}
