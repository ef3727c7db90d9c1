//! Message stream → row stream: the logic of `agy-encode`.
//!
//! Each user and assistant message becomes one step, written as soon as it
//! is read; each tool call becomes one tool step, written when its result
//! arrives (or, still PENDING, when the conversation ends without one). What
//! is held between records is the calls still waiting for a result, the
//! conversation's `meta` fields, and the tail of each brain transcript,
//! which goes out as a `file` record part whenever it passes a megabyte.
//!
//! The step encoding follows agy 1.0.16 (the seed's and TX's fixtures):
//! typed kinds for Bash/Read/Write/Edit, GENERIC for every other tool.
//! Every choice here is made so that `agy-decode` gives back the message
//! stream it was given; see the table in `man agy-encode`.
//!
//! [`onto`] is `agy-encode --onto`: an edited stream written back onto the
//! original rows.
//!
//! Imports: [`crate::decode`] and the layers below it.

pub mod onto;

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::Value;
use uuid::Uuid;

use crate::agy::steps::{self, field, kind, source, status};
use crate::agy::tools::{self, ArgList};
use crate::agy::wire::Writer;
use crate::decode;
use crate::error::{Error, Result};
use crate::kinds::system;
use crate::store::sqlite;
use crate::stream::io::Output;
use crate::stream::json;
use crate::stream::json::Depth;
use crate::stream::message::{
    self, Block, ForkedFrom, ImageSource, InputRecord, Listing, ResultContent, Role, ToolInput,
    Usage,
};
use crate::stream::record::{self, Cell, Column};
use crate::time::Timestamp;

/// The namespace of every UUID agy-encode derives (a fixed random UUID).
const NAMESPACE: Uuid = Uuid::from_u128(0x5f0e_6c1a_9d2b_4e57_8a31_c4d7_20b9_e6f3);

/// agy's project id for CLI conversations (FORMAT.md 8).
const CLI_PROJECT_ID: &str = "default-cli-project";

/// The `WaitMsBeforeAsync` agy 1.0.16 stamps when a call does not say.
const DEFAULT_WAIT_MS: u64 = 2000;

/// Long values in the compact transcript are cut to this many bytes.
const COMPACT_LIMIT: usize = 4096;

const TRANSCRIPT: &str = ".system_generated/logs/transcript.jsonl";
const TRANSCRIPT_FULL: &str = ".system_generated/logs/transcript_full.jsonl";

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Write every tool step as GENERIC, as agy 1.1 and later do.
    pub generic: bool,
    /// The conversation of records that name none.
    pub id: Option<String>,
}

/// Parses one line of the message stream.
pub fn parse_line(line: &[u8]) -> Result<InputRecord<'_>> {
    crate::stream::message_reader::read_line(line)
}

/// Turns a message stream into a row stream, one record at a time.
pub struct Encoder {
    options: Options,
    current: Option<Conversation>,
    finished: HashSet<String>,
    steps_columns: Vec<Column>,
}

impl Encoder {
    pub fn new(options: Options) -> Encoder {
        let steps_columns = sqlite::agy_columns("steps");
        Encoder {
            options,
            current: None,
            finished: HashSet::new(),
            steps_columns,
        }
    }

    /// Consumes one record, writing the rows it completes to `out`.
    pub fn record(&mut self, record: InputRecord, out: &mut Output) -> Result<()> {
        let id = match (&record.conversation, &self.options.id) {
            (Some(id), _) | (None, Some(id)) => id.clone(),
            (None, None) => {
                return Err(Error::data(
                    "record has no \"conversation\" (give one with --id)",
                ))
            }
        };
        if self.current.as_ref().map(|c| c.id.as_str()) != Some(id.as_str()) {
            self.finish(out)?;
            if self.finished.contains(&id) {
                return Err(Error::data(format!(
                    "conversation {id:?} appears again after another one; a stream keeps each conversation's records together"
                )));
            }
            self.current = Some(Conversation::start(id, out.buf()));
        }
        let conv = self.current.as_mut().expect("a conversation is open");
        let mut steps = StepWriter {
            out,
            columns: &self.steps_columns,
            generic: self.options.generic,
        };
        match record.kind.as_deref() {
            Some("message") => conv.message(record, &mut steps),
            Some("meta") => conv.meta(record),
            Some(other) => Err(Error::data(format!(
                "unknown record kind {other:?} (expected message or meta)"
            ))),
            None => Err(Error::data("record has no \"kind\"")),
        }
    }

    /// Ends the open conversation, if any: pending calls, the title
    /// checkpoint, the metadata blob and the brain transcripts.
    pub fn finish(&mut self, out: &mut Output) -> Result<()> {
        let Some(conv) = self.current.take() else {
            return Ok(());
        };
        let id = conv.id.clone();
        let mut steps = StepWriter {
            out,
            columns: &self.steps_columns,
            generic: self.options.generic,
        };
        conv.finish(&mut steps)?;
        self.finished.insert(id);
        Ok(())
    }
}

/// Writes the steps of new messages into a conversation that
/// `agy-encode --onto` otherwise copies from its original: the same
/// step-making as a whole conversation, at the idx the merge gives, without
/// the rows and brain transcripts only a whole conversation has.
pub struct Synth {
    conversation: Conversation,
    steps_columns: Vec<Column>,
    generic: bool,
}

impl Synth {
    pub fn new(id: &str, generic: bool) -> Synth {
        let mut conversation = Conversation::bare(id.to_string());
        conversation.onto = true;
        Synth {
            conversation,
            steps_columns: sqlite::agy_columns("steps"),
            generic,
        }
    }

    /// Writes the steps of one message record from `at` on; returns the
    /// idx after the last step written.
    pub fn message(&mut self, record: InputRecord, at: i64, out: &mut Output) -> Result<i64> {
        self.conversation.next_idx = at;
        let mut steps = StepWriter {
            out,
            columns: &self.steps_columns,
            generic: self.generic,
        };
        self.conversation.message(record, &mut steps)?;
        Ok(self.conversation.next_idx)
    }

    /// Writes the calls of new messages that no result answered, PENDING,
    /// from `at` on; returns the idx after the last.
    pub fn pending(&mut self, at: i64, out: &mut Output) -> Result<i64> {
        self.conversation.next_idx = at;
        let mut steps = StepWriter {
            out,
            columns: &self.steps_columns,
            generic: self.generic,
        };
        for call in std::mem::take(&mut self.conversation.open_calls) {
            self.conversation
                .tool_step(&call, None, call.timestamp, &mut steps)?;
        }
        Ok(self.conversation.next_idx)
    }

    /// The ChatToolCall a tool_use block stands for, as a new message's
    /// would be written: what an edited call becomes.
    pub fn call_bytes(
        &self,
        id: &str,
        name: &str,
        input: ToolInput,
        signature: Option<&str>,
    ) -> Result<Vec<u8>> {
        Ok(self
            .conversation
            .open_call(id, name, input, signature, None)?
            .call)
    }
}

/// Writes step rows; shared by everything that makes a step.
struct StepWriter<'o> {
    out: &'o mut Output,
    columns: &'o [Column],
    generic: bool,
}

/// A tool call waiting for its result.
struct OpenCall {
    id: String,
    native_name: String,
    native_args: Option<ArgList>,
    /// The encoded ChatToolCall, repeated in the tool step's metadata.
    call: Vec<u8>,
    timestamp: Option<Timestamp>,
}

#[derive(Default)]
struct MetaFields {
    seen: bool,
    timestamp: Option<Timestamp>,
    cwd: Option<String>,
    git_branch: Option<String>,
    title: Option<String>,
    parent_conversation_id: Option<String>,
    forked_from: Option<ForkedFrom>,
}

struct Conversation {
    id: String,
    next_idx: i64,
    /// Steps for `agy-encode --onto` ([`Synth`]): no brain transcripts.
    onto: bool,
    open_calls: Vec<OpenCall>,
    /// The call the step just written raw executed: agy-decode shows that
    /// step's result as the next message's tool_result, which the step
    /// already holds.
    raw_call: Option<String>,
    meta: MetaFields,
    /// The title agy-decode would derive from the steps written so far
    /// (latest checkpoint title, else the first user text), so the meta
    /// record's title costs a checkpoint step only when it differs.
    checkpoint_title: Option<String>,
    first_user_text: Option<String>,
    transcript: Transcript,
    transcript_full: Transcript,
    /// The step blob being written, and the last step's payload, kept for
    /// their allocations: a large tool output would otherwise fault in fresh
    /// pages for each of them at every step that holds one.
    step_blob: Vec<u8>,
    spare_payload: Vec<u8>,
}

/// One step about to be written.
struct Step<'a> {
    kind: u64,
    status: u64,
    metadata: Vec<u8>,
    error: Option<Vec<u8>>,
    payload_field: u32,
    payload: Vec<u8>,
    /// What the brain transcript says about it.
    line: TranscriptLine<'a>,
}

impl Conversation {
    fn start(id: String, out: &mut Vec<u8>) -> Conversation {
        record::write_db(out, &id, sqlite::AGY_USER_VERSION);
        for &(object_type, name, sql) in sqlite::AGY_SCHEMA {
            record::write_schema(out, &id, object_type, name, sql);
        }
        let trajectory_id =
            Uuid::new_v5(&NAMESPACE, format!("{id}/trajectory").as_bytes()).to_string();
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
    fn bare(id: String) -> Conversation {
        Conversation {
            id,
            next_idx: 0,
            onto: false,
            open_calls: Vec::new(),
            raw_call: None,
            meta: MetaFields::default(),
            checkpoint_title: None,
            first_user_text: None,
            transcript: Transcript::new(TRANSCRIPT),
            transcript_full: Transcript::new(TRANSCRIPT_FULL),
            step_blob: Vec::new(),
            spare_payload: Vec::new(),
        }
    }

    fn message(&mut self, record: InputRecord, steps: &mut StepWriter<'_>) -> Result<()> {
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
        let content = record.content.unwrap_or_default();
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
                    &content,
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

    fn meta(&mut self, record: InputRecord) -> Result<()> {
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
            cwd: record.cwd,
            git_branch: record.git_branch,
            title: record.title,
            parent_conversation_id: record.parent_conversation_id,
            forked_from: record.forked_from,
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
        self.write_row(steps, step_kind, step_status, metadata, error, &bytes, line)?;
        self.raw_call = executed;
        Ok(())
    }

    /// A bookkeeping step of the kind `step_type` names, its text blocks in
    /// the payload fields they name (FORMAT.md 7). Any other kind comes
    /// back only from `raw` ([`Conversation::raw_step`]); without it, it is
    /// an error rather than a step left out. The step goes at the
    /// message's `idx` when that is still free, so a round trip keeps the
    /// numbering.
    fn system_message(
        &mut self,
        step_type: Option<&str>,
        idx: Option<i64>,
        content: &[Block<'_>],
        timestamp: Option<Timestamp>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        let name = step_type.ok_or_else(|| Error::data("system message has no \"step_type\""))?;
        let step_kind = steps::kind_by_name(name)
            .or_else(|| name.parse::<u64>().ok().filter(|n| n.to_string() == name))
            .ok_or_else(|| Error::data(format!("unknown step_type {name:?}")))?;
        let Some(bookkeeping) = system::by_kind(step_kind) else {
            return Err(Error::data(format!(
                "system message of kind {name} carries no \"raw\" step, and its fields are not known here"
            )));
        };
        let mut texts = Vec::with_capacity(content.len());
        for block in content {
            let Block::Text { text, field } = block else {
                return Err(Error::data("a system message holds only text blocks"));
            };
            let field = field.as_deref().unwrap_or(bookkeeping.default_field());
            texts.push((field, &**text));
        }
        let payload = bookkeeping
            .payload(&texts)
            .map_err(|e| Error::data(format!("{name} message: {e}")))?;
        if step_kind == kind::CHECKPOINT {
            let last = |name: &str| {
                texts
                    .iter()
                    .rev()
                    .find(|(f, _)| *f == name)
                    .map(|(_, t)| *t)
                    .filter(|t| !t.is_empty())
            };
            if let Some(title) = last("conversation_title").or_else(|| last("user_intent")) {
                self.checkpoint_title = Some(title.to_string());
            }
        }
        if let Some(idx) = idx {
            self.next_idx = self.next_idx.max(idx);
        }
        let mut joined = String::new();
        for (_, text) in &texts {
            join(&mut joined, text);
        }
        self.write_step(
            steps,
            Step {
                kind: step_kind,
                status: status::DONE,
                metadata: metadata(timestamp, source::SYSTEM).into_bytes(),
                error: None,
                payload_field: bookkeeping.payload_field,
                payload,
                line: TranscriptLine::new(
                    source::SYSTEM,
                    step_kind,
                    status::DONE,
                    timestamp,
                    (!joined.is_empty()).then_some(Cow::Owned(joined)),
                ),
            },
        )
    }

    /// Text, images and documents become one USER_INPUT step; each tool
    /// result becomes its call's tool step, in the order the blocks come,
    /// but for the result of `raw_call`, which the raw step before holds.
    fn user_message(
        &mut self,
        content: Vec<Block<'_>>,
        timestamp: Option<Timestamp>,
        implicit: bool,
        mut raw_call: Option<String>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        let mut input = UserInput::default();
        let mut wrote_input = false;
        let empty = content.is_empty();
        for block in content {
            match block {
                Block::Text { text: t, .. } => join(&mut input.text, &t),
                Block::Image { source } => input.attach(&source, true)?,
                Block::Document { source } => input.attach(&source, false)?,
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    if raw_call.as_deref() == Some(&*tool_use_id) {
                        raw_call = None;
                        continue;
                    }
                    if !input.is_empty() {
                        self.user_input(&std::mem::take(&mut input), implicit, timestamp, steps)?;
                        wrote_input = true;
                    }
                    self.tool_result(&tool_use_id, &content, is_error, timestamp, steps)?;
                }
                Block::Thinking { .. } | Block::ToolUse { .. } => {
                    return Err(Error::data(
                        "a user message holds only text, image, document and tool_result blocks",
                    ));
                }
            }
        }
        if !input.is_empty() || (empty && !wrote_input) {
            self.user_input(&input, implicit, timestamp, steps)?;
        }
        Ok(())
    }

    fn user_input(
        &mut self,
        input: &UserInput,
        implicit: bool,
        timestamp: Option<Timestamp>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        let text = input.text.as_str();
        if self.first_user_text.is_none() && !text.is_empty() {
            self.first_user_text = Some(text.to_string());
        }
        let step_source = if implicit {
            source::USER_IMPLICIT
        } else {
            source::USER_EXPLICIT
        };
        let mut payload = Writer::new();
        if !text.is_empty() {
            payload.string(field::user_input::USER_RESPONSE, text);
            payload.message(field::user_input::ITEMS, |item| {
                item.string(field::user_input::ITEM_TEXT, text);
            });
        }
        for image in &input.images {
            payload.bytes(field::user_input::IMAGES, image);
        }
        for media in &input.media {
            payload.bytes(field::user_input::MEDIA, media);
        }
        let content = (!text.is_empty())
            .then(|| Cow::Owned(format!("<USER_REQUEST>\n{text}\n</USER_REQUEST>")));
        self.write_step(
            steps,
            Step {
                kind: kind::USER_INPUT,
                status: status::DONE,
                metadata: metadata(timestamp, step_source).into_bytes(),
                error: None,
                payload_field: field::step::USER_INPUT,
                payload: payload.into_bytes(),
                line: TranscriptLine::new(
                    step_source,
                    kind::USER_INPUT,
                    status::DONE,
                    timestamp,
                    content,
                ),
            },
        )
    }

    fn assistant_message(
        &mut self,
        content: Vec<Block<'_>>,
        timestamp: Option<Timestamp>,
        model: Option<&str>,
        stop_reason: Option<&str>,
        usage: Option<&Usage>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        let mut thinking = String::new();
        let mut signature: Option<String> = None;
        let mut response = String::new();
        let mut calls: Vec<OpenCall> = Vec::new();
        for block in content {
            match block {
                Block::Thinking {
                    thinking: t,
                    signature: s,
                } => {
                    join(&mut thinking, &t);
                    if let Some(s) = s {
                        signature = Some(s.into_owned());
                    }
                }
                Block::Text { text, .. } => join(&mut response, &text),
                // agy has no assistant media; keep a trace rather than drop.
                Block::Image { source } | Block::Document { source } => join(
                    &mut response,
                    &format!(
                        "[image: {}]",
                        source.media_type.as_deref().unwrap_or("unknown type")
                    ),
                ),
                Block::ToolUse {
                    id,
                    name,
                    input,
                    signature,
                } => {
                    let call =
                        self.open_call(&id, &name, input, signature.as_deref(), timestamp)?;
                    calls.push(call);
                }
                Block::ToolResult { .. } => {
                    return Err(Error::data("tool_result blocks belong in user messages"));
                }
            }
        }
        let stop_value = stop_reason
            .map(|name| {
                steps::stop_reason_value(name).ok_or_else(|| {
                    Error::data(format!(
                        "unknown stop_reason {name:?} (expected end_turn, tool_use, max_tokens, error, aborted or stop-<n>)"
                    ))
                })
            })
            .transpose()?;
        let idx = self.next_idx;
        let mut planner = Writer::new();
        if !response.is_empty() {
            planner.string(field::planner::RESPONSE, &response);
        }
        if !thinking.is_empty() {
            planner.string(field::planner::THINKING, &thinking);
        }
        // A hex signature is the bytes Gemini signed, written where agy
        // 1.1.23 keeps them; any other text is TX's string form.
        if let Some(text) = signature.as_deref().filter(|s| !s.is_empty()) {
            match hex::decode(text) {
                Ok(bytes) => steps::signature::write(
                    &mut planner,
                    field::planner::THINKING_SIGNATURE,
                    &bytes,
                ),
                Err(_) => {
                    planner.string(field::planner::SIGNATURE, text);
                }
            }
        }
        let message_id = Uuid::new_v5(&NAMESPACE, format!("{}/message/{idx}", self.id).as_bytes());
        planner.string(field::planner::MESSAGE_ID, &format!("bot-{message_id}"));
        for call in &calls {
            planner.bytes(field::planner::TOOL_CALLS, &call.call);
        }
        if !response.is_empty() {
            planner.string(field::planner::MODIFIED_RESPONSE, &response);
        }
        if let Some(value) = stop_value {
            planner.varint(field::planner::STOP_REASON, value);
        }

        let mut meta = metadata(timestamp, source::MODEL);
        if let Some(usage) = usage.filter(|u| !u.is_empty()) {
            use field::usage::*;
            meta.message(field::metadata::MODEL_USAGE, |m| {
                for (number, value) in [
                    (INPUT_TOKENS, usage.input_tokens),
                    (OUTPUT_TOKENS, usage.output_tokens),
                    (CACHE_WRITE_TOKENS, usage.cache_creation_input_tokens),
                    (CACHE_READ_TOKENS, usage.cache_read_input_tokens),
                ] {
                    if let Some(v) = value {
                        m.varint(number, v);
                    }
                }
            });
        }
        match model.map(|m| (m, steps::model_enum_value(m))) {
            Some((_, Some(value))) => {
                meta.varint(field::metadata::GENERATOR_MODEL, value);
            }
            Some((name, None)) => {
                meta.message(field::metadata::MODEL_INFO, |info| {
                    info.string(field::metadata::MODEL_INFO_NAME, name);
                });
            }
            None => {}
        }

        let mut line = TranscriptLine::new(
            source::MODEL,
            kind::PLANNER_RESPONSE,
            status::DONE,
            timestamp,
            (!response.is_empty()).then_some(Cow::Borrowed(response.as_str())),
        );
        line.thinking = (!thinking.is_empty()).then_some(Cow::Borrowed(thinking.as_str()));
        line.tool_calls = (!calls.is_empty()).then_some(&calls[..]);
        self.write_step(
            steps,
            Step {
                kind: kind::PLANNER_RESPONSE,
                status: status::DONE,
                metadata: meta.into_bytes(),
                error: None,
                payload_field: field::step::PLANNER_RESPONSE,
                payload: planner.into_bytes(),
                line,
            },
        )?;
        for call in calls {
            // A second open call with the same id: the first one will never
            // be answered (decode pairs results with the latest), so it is
            // written now, pending.
            if let Some(i) = self.open_calls.iter().position(|c| c.id == call.id) {
                let earlier = self.open_calls.remove(i);
                self.tool_step(&earlier, None, earlier.timestamp, steps)?;
            }
            self.open_calls.push(call);
        }
        Ok(())
    }

    fn open_call(
        &self,
        id: &str,
        name: &str,
        input: ToolInput,
        signature: Option<&str>,
        timestamp: Option<Timestamp>,
    ) -> Result<OpenCall> {
        let (native_name, arguments_json, native_args) = match input {
            ToolInput::Object(args) => {
                let (native_name, mapped) = tools::to_native(name, Some(&args));
                let args = mapped.unwrap_or(args);
                (native_name, message::object_json(&args), Some(args))
            }
            other => (
                tools::to_native(name, None).0,
                other.to_arguments_json(),
                None,
            ),
        };
        let mut call = Writer::new();
        call.string(field::tool_call::ID, id)
            .string(field::tool_call::NAME, &native_name)
            .string(field::tool_call::ARGUMENTS_JSON, &arguments_json);
        if let Some(signature) = signature {
            let bytes = hex::decode(signature)
                .map_err(|e| Error::data(format!("tool_use {id:?}: signature is not hex: {e}")))?;
            steps::signature::write(&mut call, field::tool_call::THINKING_SIGNATURE, &bytes);
        }
        call.string(field::tool_call::ORIGINAL_NAME, &native_name);
        Ok(OpenCall {
            id: id.to_string(),
            native_name,
            native_args,
            call: call.into_bytes(),
            timestamp,
        })
    }

    fn tool_result(
        &mut self,
        tool_use_id: &str,
        content: &ResultContent<'_>,
        is_error: bool,
        timestamp: Option<Timestamp>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        match self.open_calls.iter().position(|c| c.id == tool_use_id) {
            Some(i) => {
                let call = self.open_calls.remove(i);
                self.tool_step(&call, Some((content, is_error)), timestamp, steps)
            }
            // A result no call declared (an orphan, as agy-decode shows a
            // tool step whose call no planner step holds): its own tool
            // step, executing a call that has only the id.
            None => {
                let mut call = Writer::new();
                call.string(field::tool_call::ID, tool_use_id);
                let orphan = OpenCall {
                    id: tool_use_id.to_string(),
                    native_name: String::new(),
                    native_args: None,
                    call: call.into_bytes(),
                    timestamp,
                };
                self.tool_step(&orphan, Some((content, is_error)), timestamp, steps)
            }
        }
    }

    /// The step that executed `call`, holding its result, or PENDING
    /// without one.
    fn tool_step(
        &mut self,
        call: &OpenCall,
        result: Option<(&ResultContent<'_>, bool)>,
        timestamp: Option<Timestamp>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        let args = call.native_args.as_deref().unwrap_or(&[]);
        let mut error = None;
        let (step_status, carrier) = match result {
            None => (
                status::PENDING,
                Carrier::for_call(&call.native_name, steps.generic, None),
            ),
            // A failed call whose result is structured (an edit outcome, a
            // listing) is its typed step with status ERROR: agy-decode
            // shows the payload's structure when no error text says more.
            Some((content, true)) if !matches!(content, ResultContent::Text(_)) => (
                status::ERROR,
                Carrier::for_result(&call.native_name, steps.generic, content),
            ),
            Some((content, true)) => {
                let mut details = Writer::new();
                details.string(field::error_details::USER_ERROR_MESSAGE, &content.to_text());
                error = Some(details.into_bytes());
                (
                    status::ERROR,
                    Carrier::for_call(&call.native_name, steps.generic, None),
                )
            }
            Some((content, false)) => (
                status::DONE,
                Carrier::for_result(&call.native_name, steps.generic, content),
            ),
        };
        let spare = std::mem::take(&mut self.spare_payload);
        let (step_kind, payload_field, payload) = carrier.encode(args, spare);
        let text = result.map(|(content, _)| content.to_text());
        let mut meta = metadata(timestamp, source::MODEL);
        meta.bytes(field::metadata::TOOL_CALL, &call.call);
        self.write_step(
            steps,
            Step {
                kind: step_kind,
                status: step_status,
                metadata: meta.into_bytes(),
                error,
                payload_field,
                payload,
                line: TranscriptLine::new(source::MODEL, step_kind, step_status, timestamp, text),
            },
        )
    }

    fn finish(mut self, steps: &mut StepWriter<'_>) -> Result<()> {
        for call in std::mem::take(&mut self.open_calls) {
            self.tool_step(&call, None, call.timestamp, steps)?;
        }
        let derived_title = self
            .checkpoint_title
            .clone()
            .or_else(|| self.first_user_text.as_deref().map(decode::title_from_text));
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
                    metadata: metadata(None, source::SYSTEM).into_bytes(),
                    error: None,
                    payload_field: field::step::CHECKPOINT,
                    payload: checkpoint.into_bytes(),
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
        blob.string(PROJECT_ID, CLI_PROJECT_ID);
        blob.into_bytes()
    }

    fn write_step(&mut self, steps: &mut StepWriter<'_>, step: Step<'_>) -> Result<()> {
        let mut blob = std::mem::take(&mut self.step_blob);
        blob.clear();
        let mut bytes = Writer::from_vec(blob);
        bytes
            .varint(field::step::TYPE, step.kind)
            .varint(field::step::STATUS, step.status)
            .bytes(field::step::METADATA, &step.metadata);
        // Fields in number order, as agy writes them.
        if step.payload_field < field::step::ERROR {
            bytes.bytes(step.payload_field, &step.payload);
        }
        if let Some(error) = &step.error {
            bytes.bytes(field::step::ERROR, error);
        }
        if step.payload_field > field::step::ERROR {
            bytes.bytes(step.payload_field, &step.payload);
        }
        let result = self.write_row(
            steps,
            step.kind,
            step.status,
            &step.metadata,
            step.error.as_deref(),
            bytes.as_bytes(),
            step.line,
        );
        self.step_blob = bytes.into_bytes();
        self.spare_payload = step.payload;
        result
    }

    /// Writes a `steps` row at the next idx, and its transcript lines.
    #[allow(clippy::too_many_arguments)]
    fn write_row(
        &mut self,
        steps: &mut StepWriter<'_>,
        step_kind: u64,
        step_status: u64,
        metadata: &[u8],
        error: Option<&[u8]>,
        step_bytes: &[u8],
        line: TranscriptLine<'_>,
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
        record::write_row(steps.out.buf(), &self.id, "steps", steps.columns, cells);
        steps.out.end_record()?;
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

/// What one USER_INPUT step will hold.
#[derive(Default)]
struct UserInput {
    text: String,
    /// Encoded ImageData (field 5).
    images: Vec<Vec<u8>>,
    /// Encoded Media (field 9). Once one is written, later images go here
    /// too, because agy-decode reads field 5 before field 9 and the blocks
    /// must come back in their order.
    media: Vec<Vec<u8>>,
}

impl UserInput {
    fn is_empty(&self) -> bool {
        self.text.is_empty() && self.images.is_empty() && self.media.is_empty()
    }

    /// An image or document block: a base64 image as ImageData, anything
    /// else (a URL, a document, an image after those) as Media.
    fn attach(&mut self, source: &ImageSource<'_>, image: bool) -> Result<()> {
        let missing = |key: &str| {
            Error::data(format!(
                "{} source of type {:?} has no \"{key}\"",
                if image { "image" } else { "document" },
                source.source_type
            ))
        };
        match &*source.source_type {
            "base64" if image && self.media.is_empty() => {
                let data = source.data.as_deref().ok_or_else(|| missing("data"))?;
                let mut item = Writer::new();
                item.string(field::image::BASE64_DATA, data);
                if let Some(media_type) = &source.media_type {
                    item.string(field::image::MIME_TYPE, media_type);
                }
                self.images.push(item.into_bytes());
            }
            "base64" => {
                let data = source.data.as_deref().ok_or_else(|| missing("data"))?;
                let bytes = message::base64_decode(data)
                    .ok_or_else(|| Error::data("media data is not padded standard base64"))?;
                let mut item = Writer::new();
                if let Some(media_type) = &source.media_type {
                    item.string(field::media::MIME_TYPE, media_type);
                }
                item.bytes(field::media::INLINE_DATA, &bytes);
                self.media.push(item.into_bytes());
            }
            "url" => {
                let url = source.url.as_deref().ok_or_else(|| missing("url"))?;
                let mut item = Writer::new();
                if let Some(media_type) = &source.media_type {
                    item.string(field::media::MIME_TYPE, media_type);
                }
                item.string(field::media::URI, url);
                self.media.push(item.into_bytes());
            }
            other => {
                return Err(Error::data(format!(
                    "source type {other:?} is not supported (only base64 and url)"
                )))
            }
        }
        Ok(())
    }
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

/// Which step kind carries a tool result, with what it needs.
enum Carrier<'a> {
    RunCommand(Option<Cow<'a, str>>),
    ViewFile(Option<Cow<'a, str>>),
    /// An edit or creation of `file`.
    CodeAction {
        file: Option<String>,
        created: bool,
    },
    ListDirectory(&'a Listing<'a>),
    /// A deleted file (FILE_CHANGE, the only kind that says so).
    FileDeleted(String),
    /// A kind of [`TEXT_KINDS`].
    Text(&'static TextKind, Option<Cow<'a, str>>),
    Generic(Option<Cow<'a, str>>),
}

/// A tool whose typed kind holds its result text in one field (FORMAT.md
/// 7), and the arguments the kind repeats.
struct TextKind {
    native: &'static str,
    payload_field: u32,
    /// Where the result text goes, from the payload.
    text_path: &'static [u32],
    /// (argument key, payload field) of string arguments.
    args: &'static [(&'static str, u32)],
}

/// Without `--generic`, these tools' results come back as their own kind,
/// which agy-decode reads the same text from.
const TEXT_KINDS: &[TextKind] = &[
    TextKind {
        native: "grep_search",
        payload_field: field::step::GREP_SEARCH,
        text_path: &[field::grep_search::RAW_OUTPUT],
        args: &[("Query", 1)],
    },
    TextKind {
        native: "find_by_name",
        payload_field: field::step::FIND,
        text_path: &[field::find::RAW_OUTPUT],
        args: &[("Pattern", field::find::PATTERN)],
    },
    TextKind {
        native: "call_mcp_tool",
        payload_field: field::step::MCP_TOOL,
        text_path: &[field::mcp_tool::RESULT_STRING],
        args: &[("ServerName", 1)],
    },
    TextKind {
        native: "command_status",
        payload_field: field::step::COMMAND_STATUS,
        text_path: &[field::command_status::COMBINED],
        args: &[("CommandId", 1)],
    },
    TextKind {
        native: "read_url_content",
        payload_field: field::step::READ_URL_CONTENT,
        text_path: &[
            field::read_url_content::WEB_DOCUMENT,
            field::read_url_content::DOCUMENT_TEXT,
        ],
        args: &[("Url", 1)],
    },
    TextKind {
        native: "search_web",
        payload_field: field::step::SEARCH_WEB,
        text_path: &[field::search_web::SUMMARY],
        args: &[("Query", 1)],
    },
    // Its result is the text of its fields (agy-decode joins them); the
    // whole text goes into the first.
    TextKind {
        native: "task_boundary",
        payload_field: field::step::TASK_BOUNDARY,
        text_path: &[field::task_boundary::TASK_NAME],
        args: &[],
    },
];

impl<'a> Carrier<'a> {
    /// The kind for a call by its native name, holding `text` if any.
    fn for_call(native_name: &str, generic: bool, text: Option<Cow<'a, str>>) -> Carrier<'a> {
        match native_name {
            _ if generic => Carrier::Generic(text),
            "run_command" => Carrier::RunCommand(text),
            _ if TEXT_KINDS.iter().any(|k| k.native == native_name) => Carrier::Text(
                TEXT_KINDS
                    .iter()
                    .find(|k| k.native == native_name)
                    .expect("found above"),
                text,
            ),
            "view_file" => Carrier::ViewFile(text),
            "write_to_file" | "replace_file_content" if text.is_none() => Carrier::CodeAction {
                file: None,
                created: native_name == "write_to_file",
            },
            _ => Carrier::Generic(text),
        }
    }

    /// The kind for a successful result. Structured results need the typed
    /// step that decode turns back into that structure, even with
    /// `--generic`, because GENERIC holds only text; free text for an edit
    /// rides GENERIC, because a code action holds none.
    fn for_result(native_name: &str, generic: bool, content: &'a ResultContent<'_>) -> Carrier<'a> {
        if let ResultContent::Listing(listing) = content {
            return Carrier::ListDirectory(listing);
        }
        if let ResultContent::Structured(value) = content {
            match file_outcome(value) {
                Some((file, "deleted")) => return Carrier::FileDeleted(file.to_string()),
                Some((file, what)) => {
                    return Carrier::CodeAction {
                        file: Some(file.to_string()),
                        created: what == "created",
                    }
                }
                None => {}
            }
        }
        Carrier::for_call(native_name, generic, Some(content.to_text()))
    }

    /// `(step type, payload field, payload)`, with the call's native
    /// arguments filling the typed fields agy expects; the payload is built
    /// in `buf` (emptied first), so its allocation can serve step after step.
    fn encode(self, args: &[(String, Value)], mut buf: Vec<u8>) -> (u64, u32, Vec<u8>) {
        let arg = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let arg_str = |key: &str| arg(key).and_then(Value::as_str);
        buf.clear();
        let mut payload = Writer::from_vec(buf);
        match self {
            Carrier::RunCommand(text) => {
                use field::run_command::*;
                if let Some(cwd) = arg_str("Cwd") {
                    payload.string(CWD, cwd);
                }
                payload.bool(BLOCKING, true).varint(
                    WAIT_MS_BEFORE_ASYNC,
                    arg("WaitMsBeforeAsync")
                        .and_then(Value::as_u64)
                        .unwrap_or(DEFAULT_WAIT_MS),
                );
                if let Some(text) = text {
                    payload.message(COMBINED_OUTPUT, |o| {
                        o.string(OUTPUT_FULL, &text);
                    });
                }
                if let Some(command) = arg_str("CommandLine") {
                    payload.string(COMMAND_LINE, command);
                }
                (
                    kind::RUN_COMMAND,
                    field::step::RUN_COMMAND,
                    payload.into_bytes(),
                )
            }
            Carrier::ViewFile(text) => {
                use field::view_file::*;
                if let Some(path) = arg_str("AbsolutePath") {
                    payload.string(ABSOLUTE_PATH_URI, &message::path_to_uri(path));
                }
                for (key, number) in [("StartLine", START_LINE), ("EndLine", END_LINE)] {
                    if let Some(line) = arg(key).and_then(Value::as_u64) {
                        payload.varint(number, line);
                    }
                }
                if let Some(text) = text {
                    payload.string(CONTENT, &text);
                }
                (
                    kind::VIEW_FILE,
                    field::step::VIEW_FILE,
                    payload.into_bytes(),
                )
            }
            Carrier::CodeAction { file, created } => {
                use field::code_action::*;
                let target = arg_str("TargetFile").or(file.as_deref());
                payload.message(ACTION_SPEC, |spec| {
                    let path = |p: &mut Writer| {
                        if let Some(target) = target {
                            p.string(PATH_URI, &message::path_to_uri(target));
                        }
                    };
                    if created {
                        spec.message(SPEC_CREATE_FILE, |c| {
                            if let Some(code) = arg_str("CodeContent") {
                                c.string(CREATE_INSTRUCTION, code);
                            }
                            c.message(CREATE_PATH, path);
                            if let Some(overwrite) = arg("Overwrite").and_then(Value::as_bool) {
                                c.bool(CREATE_OVERWRITE, overwrite);
                            }
                        });
                    } else {
                        spec.message(SPEC_COMMAND, |c| {
                            c.bool(COMMAND_IS_EDIT, true).message(COMMAND_FILE, path);
                            if arg("TargetContent").is_some() || arg("ReplacementContent").is_some()
                            {
                                c.message(COMMAND_REPLACEMENT_CHUNKS, |chunk| {
                                    if let Some(s) = arg_str("TargetContent") {
                                        chunk.string(CHUNK_TARGET, s);
                                    }
                                    if let Some(s) = arg_str("ReplacementContent") {
                                        chunk.string(CHUNK_REPLACEMENT, s);
                                    }
                                    if let Some(b) = arg("AllowMultiple").and_then(Value::as_bool) {
                                        chunk.bool(CHUNK_ALLOW_MULTIPLE, b);
                                    }
                                });
                            }
                        });
                    }
                });
                if let Some(file) = &file {
                    payload.message(ACTION_RESULT, |result| {
                        result.message(RESULT_EDIT, |edit| {
                            edit.string(EDIT_ABSOLUTE_URI, &message::path_to_uri(file));
                            if created {
                                edit.bool(EDIT_CREATE_FILE, true);
                            }
                        });
                    });
                }
                payload.bool(USE_FAST_APPLY, true);
                (
                    kind::CODE_ACTION,
                    field::step::CODE_ACTION,
                    payload.into_bytes(),
                )
            }
            Carrier::ListDirectory(listing) => {
                use field::list_directory::*;
                if let Some(path) = arg_str("DirectoryPath") {
                    payload.string(DIRECTORY_PATH_URI, &message::path_to_uri(path));
                }
                match listing {
                    Listing::Names(names) => {
                        for name in names {
                            payload.string(CHILDREN, name);
                        }
                    }
                    Listing::Entries(entries) => {
                        for entry in entries {
                            payload.message(RESULTS, |r| {
                                if let Some(name) = &entry.name {
                                    r.string(RESULT_NAME, name);
                                }
                                if let Some(is_dir) = entry.is_dir {
                                    r.bool(RESULT_IS_DIR, is_dir);
                                }
                                if let Some(n) = entry.num_children {
                                    r.varint(RESULT_NUM_CHILDREN, n);
                                }
                                if let Some(n) = entry.size_bytes {
                                    r.varint(RESULT_SIZE_BYTES, n);
                                }
                            });
                        }
                    }
                }
                (
                    kind::LIST_DIRECTORY,
                    field::step::LIST_DIRECTORY,
                    payload.into_bytes(),
                )
            }
            Carrier::FileDeleted(file) => {
                use field::file_change::*;
                payload
                    .string(ABSOLUTE_PATH_URI, &message::path_to_uri(&file))
                    .varint(FILE_CHANGE_TYPE, DELETE);
                (
                    kind::FILE_CHANGE,
                    field::step::FILE_CHANGE,
                    payload.into_bytes(),
                )
            }
            Carrier::Text(text_kind, text) => {
                for &(key, number) in text_kind.args {
                    if let Some(value) = arg_str(key) {
                        payload.string(number, value);
                    }
                }
                if let Some(text) = text {
                    match text_kind.text_path {
                        [number] => {
                            payload.string(*number, &text);
                        }
                        [outer, inner] => {
                            payload.message(*outer, |m| {
                                m.string(*inner, &text);
                            });
                        }
                        _ => unreachable!("text paths are one or two fields deep"),
                    }
                }
                let step_kind = steps::kind_of_payload_field(text_kind.payload_field)
                    .expect("a text kind's payload field has a kind");
                (step_kind, text_kind.payload_field, payload.into_bytes())
            }
            Carrier::Generic(text) => {
                use field::generic::*;
                for (key, value) in args {
                    payload.message(ARGS, |entry| {
                        entry.string(ENTRY_KEY, key);
                        match value {
                            Value::String(s) => entry.string(ENTRY_VALUE, s),
                            other => entry.string(ENTRY_VALUE, &json::value_to_string(other)),
                        };
                    });
                }
                if let Some(text) = text {
                    payload.message(RESULT, |r| {
                        r.string(RESULT_TEXT, &text);
                    });
                }
                (kind::GENERIC, field::step::GENERIC, payload.into_bytes())
            }
        }
    }
}

/// `{"file":…,"created"|"edited"|"deleted":true}`, in that key order, as
/// decode writes it: the file and what happened to it.
fn file_outcome(value: &Value) -> Option<(&str, &str)> {
    let object = value.as_object()?;
    let mut entries = object.iter();
    let (Some((first, file)), Some((flag, truth)), None) =
        (entries.next(), entries.next(), entries.next())
    else {
        return None;
    };
    if first != "file" || *truth != Value::Bool(true) {
        return None;
    }
    let file = file.as_str()?;
    match flag.as_str() {
        what @ ("created" | "edited" | "deleted") => Some((file, what)),
        _ => None,
    }
}

/// CortexStepMetadata with a creation time and a source.
fn metadata(timestamp: Option<Timestamp>, step_source: u64) -> Writer {
    let mut meta = Writer::new();
    if let Some(ts) = timestamp {
        meta.message(field::metadata::CREATED_AT, |t| timestamp_fields(t, ts));
    }
    meta.varint(field::metadata::SOURCE, step_source);
    meta
}

fn timestamp_fields(t: &mut Writer, ts: Timestamp) {
    t.int64(field::timestamp::SECONDS, ts.seconds);
    if ts.nanos != 0 {
        t.int64(field::timestamp::NANOS, i64::from(ts.nanos));
    }
}

/// Appends `part` to `text`, a blank line between parts: how text blocks
/// become one field (agy-encode --onto compares texts joined the same way).
pub(crate) fn join(text: &mut String, part: &str) {
    if part.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(part);
}

/// One line of a brain transcript (FORMAT.md 10).
struct TranscriptLine<'a> {
    step_index: i64,
    source: &'static str,
    step_type: Cow<'static, str>,
    status: &'static str,
    created_at: Option<String>,
    content: Option<Cow<'a, str>>,
    thinking: Option<Cow<'a, str>>,
    /// Each as `{name, args}` with every argument value JSON-encoded (the
    /// JSON text of the value, as a string), as agy writes them; the
    /// transcript carries no call id.
    tool_calls: Option<&'a [OpenCall]>,
}

impl TranscriptLine<'_> {
    /// The line as compact JSON: `step_index`, `source`, `type`, `status`,
    /// then `created_at`, `content`, `thinking`, `tool_calls` when present.
    /// Written by hand at the depth it is needed: the transcript travels
    /// inside a `file` record's string, and escaping the conversation's text
    /// twice in one pass is what keeps agy-encode near agy-decode's pace.
    fn write_json(&self, out: &mut Vec<u8>, depth: Depth) {
        depth.raw(out, "{\"step_index\":");
        json::write_i64(out, self.step_index);
        depth.raw(out, ",\"source\":");
        depth.string(out, self.source);
        depth.raw(out, ",\"type\":");
        depth.string(out, &self.step_type);
        depth.raw(out, ",\"status\":");
        depth.string(out, self.status);
        for (key, value) in [
            (",\"created_at\":", self.created_at.as_deref()),
            (",\"content\":", self.content.as_deref()),
            (",\"thinking\":", self.thinking.as_deref()),
        ] {
            if let Some(value) = value {
                depth.raw(out, key);
                depth.string(out, value);
            }
        }
        if let Some(calls) = self.tool_calls {
            depth.raw(out, ",\"tool_calls\":[");
            for (i, call) in calls.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                depth.raw(out, "{\"name\":");
                depth.string(out, &call.native_name);
                depth.raw(out, ",\"args\":{");
                for (j, (key, value)) in call.native_args.iter().flatten().enumerate() {
                    if j > 0 {
                        out.push(b',');
                    }
                    depth.string(out, key);
                    out.push(b':');
                    depth.string(out, &json::value_to_string(value));
                }
                out.extend_from_slice(b"}}");
            }
            out.push(b']');
        }
        out.push(b'}');
    }
}

impl<'a> TranscriptLine<'a> {
    fn new(
        step_source: u64,
        step_kind: u64,
        step_status: u64,
        timestamp: Option<Timestamp>,
        content: Option<Cow<'a, str>>,
    ) -> TranscriptLine<'a> {
        TranscriptLine {
            step_index: 0,
            source: steps::source_name(step_source).unwrap_or("UNSPECIFIED"),
            step_type: steps::kind_name(step_kind)
                .map(Cow::Borrowed)
                .unwrap_or_else(|| Cow::Owned(step_kind.to_string())),
            status: steps::status_name(step_status).unwrap_or("UNSPECIFIED"),
            created_at: timestamp.and_then(|t| t.format_seconds()),
            content,
            thinking: None,
            tool_calls: None,
        }
    }

    /// The line of the compact transcript: long values cut with agy's
    /// `<truncated N bytes>` marker.
    fn compact(&self) -> TranscriptLine<'_> {
        TranscriptLine {
            step_index: self.step_index,
            source: self.source,
            step_type: self.step_type.clone(),
            status: self.status,
            created_at: self.created_at.clone(),
            content: self.content.as_deref().map(truncate),
            thinking: self.thinking.as_deref().map(truncate),
            tool_calls: self.tool_calls,
        }
    }
}

impl TranscriptLine<'_> {
    /// Writes the line and its newline escaped for a JSON string, as it
    /// sits in a transcript's `file` record.
    fn write_escaped_line(&self, out: &mut Vec<u8>) {
        self.write_json(out, Depth::Nested);
        out.extend_from_slice(b"\\n");
    }

    /// Whether [`TranscriptLine::compact`] cuts anything from this line.
    fn is_cut_in_compact(&self) -> bool {
        [&self.content, &self.thinking]
            .into_iter()
            .flatten()
            .any(|text| text.len() > COMPACT_LIMIT)
    }
}

fn truncate(text: &str) -> Cow<'_, str> {
    if text.len() <= COMPACT_LIMIT {
        return Cow::Borrowed(text);
    }
    let mut end = COMPACT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}<truncated {} bytes>",
        &text[..end],
        text.len() - end
    ))
}

/// A brain transcript being built: its JSON-escaped text since the last
/// part went out. Once that passes [`record::FILE_PART`] it is written as a
/// `file` record (the first plain, the rest with `"append":true`) between
/// the step rows, so neither agy-encode nor any reader of its stream holds
/// a conversation's transcript whole, and nothing waits in a temporary
/// file.
struct Transcript {
    path: &'static str,
    text: Vec<u8>,
    /// A part has been written: the next one appends.
    started: bool,
}

impl Transcript {
    fn new(path: &'static str) -> Transcript {
        Transcript {
            path,
            text: Vec::new(),
            started: false,
        }
    }

    /// Writes a part once enough text has gathered.
    fn write_part_if_full(&mut self, out: &mut Output, conversation: &str) -> Result<()> {
        match self.text.len() >= record::FILE_PART {
            true => self.write_part(out, conversation),
            false => Ok(()),
        }
    }

    /// Writes the text gathered as a part, straight from where it is.
    fn write_part(&mut self, out: &mut Output, conversation: &str) -> Result<()> {
        record::write_file_part_escaped_head(out.buf(), conversation, self.path, self.started);
        out.write_through(&self.text)?;
        out.buf().extend_from_slice(record::FILE_PART_ESCAPED_END);
        self.started = true;
        self.text.clear();
        out.end_record()
    }

    /// Writes what is left: the last part, or the whole file (empty, even)
    /// when it never filled one.
    fn finish(&mut self, out: &mut Output, conversation: &str) -> Result<()> {
        if self.started && self.text.is_empty() {
            return Ok(());
        }
        self.write_part(out, conversation)
    }
}
