//! Row stream → message stream: the logic of `agy-decode`.
//!
//! Steps are read one at a time in stream order (agy-dump writes them in
//! `idx` order, after every other table of the conversation). What carries
//! over from one step to the next is small: the ids of tool calls still
//! waiting for a result, the models named by `gen_metadata`, and what the
//! `meta` record needs (first user text, latest checkpoint title, latest
//! model). A conversation is never collected.
//!
//! Every blob is read with the tolerant [`wire`] reader, so a damaged blob
//! gives the fields before the damage and never an error.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::message::{
    self, Block, ImageSource, Message, Meta, ResultContent, Role, ToolInput, Usage,
};
use crate::record::{JsonCell, Record, RowCells};
use crate::steps::{self, field, kind};
use crate::time::Timestamp;
use crate::tools;
use crate::wire::{self, Value as WireValue};

/// Titles derived from the first user text are cut to this many characters.
const TITLE_CHARS: usize = 80;

/// Turns a row stream into a message stream, one record at a time.
#[derive(Default)]
pub struct Decoder {
    current: Option<Conversation>,
    /// Conversations already ended, to reject a stream that interleaves them.
    finished: HashSet<String>,
    /// Reused hex-decoding buffers for the step payload and its side columns.
    payload: Vec<u8>,
    metadata: Vec<u8>,
    error_details: Vec<u8>,
}

/// What one conversation remembers between steps.
#[derive(Default)]
struct Conversation {
    id: String,
    cascade_id: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    created_at: Option<Timestamp>,
    first_step_time: Option<Timestamp>,
    /// Step idx → human model name, from `gen_metadata`.
    models_by_step: HashMap<i64, String>,
    /// Ids of calls declared by a planner step and not yet answered.
    open_calls: HashSet<String>,
    checkpoint_title: Option<String>,
    first_user_text: Option<String>,
    latest_model: Option<String>,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Consumes one record of the row stream, appending any message records
    /// it completes to `out`. Errors name what is wrong, not where: the
    /// caller knows the line.
    pub fn record(&mut self, record: &Record<'_>, out: &mut Vec<u8>) -> Result<()> {
        let id = record.conversation();
        if self.current.as_ref().map(|c| c.id.as_str()) != Some(id) {
            self.finish(out)?;
            if self.finished.contains(id) {
                return Err(Error::data(format!(
                    "conversation {id:?} appears again after another one; a stream keeps each conversation's records together"
                )));
            }
            self.current = Some(Conversation {
                id: id.to_string(),
                ..Conversation::default()
            });
        }
        let Record::Row { table, row, .. } = record else {
            return Ok(());
        };
        match &**table {
            "steps" => self.step_row(row, out),
            "trajectory_meta" => {
                let conv = self.current.as_mut().expect("a conversation is open");
                if let Some(cascade) = row.get("cascade_id").and_then(JsonCell::as_text) {
                    conv.cascade_id = Some(cascade.to_string());
                }
                Ok(())
            }
            "trajectory_metadata_blob" => {
                if row.get("id").and_then(JsonCell::as_text) != Some("main") {
                    return Ok(());
                }
                let data = blob(row, "data")?.unwrap_or_default();
                self.current
                    .as_mut()
                    .expect("a conversation is open")
                    .read_trajectory_metadata(&data);
                Ok(())
            }
            "gen_metadata" => {
                let data = blob(row, "data")?.unwrap_or_default();
                self.current
                    .as_mut()
                    .expect("a conversation is open")
                    .read_generator_metadata(&data);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Ends the open conversation, if any, writing its `meta` record.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let Some(conv) = self.current.take() else {
            return Ok(());
        };
        let meta = Meta {
            conversation: &conv.id,
            kind: "meta",
            id: Cow::Borrowed(conv.cascade_id.as_deref().unwrap_or(&conv.id)),
            timestamp: conv
                .created_at
                .or(conv.first_step_time)
                .and_then(|t| t.format()),
            cwd: conv.cwd.clone(),
            git_branch: conv.git_branch.clone(),
            title: conv
                .checkpoint_title
                .clone()
                .or_else(|| conv.first_user_text.as_deref().map(title_from_text)),
            model: conv.latest_model.clone(),
        };
        write_json(out, &meta);
        self.finished.insert(conv.id);
        Ok(())
    }

    fn step_row(&mut self, row: &RowCells<'_>, out: &mut Vec<u8>) -> Result<()> {
        let has_payload = hex_into(row, "step_payload", &mut self.payload)?;
        if !has_payload {
            self.payload.clear();
        }
        let step = wire::Message::new(&self.payload);
        // The columns mirror Step fields 5 and 31; read a column only when
        // the payload lacks its field (a damaged payload, say).
        let mut metadata = step.get_message(field::step::METADATA);
        if metadata.is_none() && hex_into(row, "metadata", &mut self.metadata)? {
            metadata = Some(wire::Message::new(&self.metadata));
        }
        let mut error = step.get_message(field::step::ERROR);
        if error.is_none() && hex_into(row, "error_details", &mut self.error_details)? {
            error = Some(wire::Message::new(&self.error_details));
        }
        let view = StepView::new(
            step,
            metadata.unwrap_or_default(),
            error,
            row.get("step_type").and_then(JsonCell::as_i64),
            row.get("status").and_then(JsonCell::as_i64),
        );
        let idx = row.get("idx").and_then(JsonCell::as_i64);
        let conv = self.current.as_mut().expect("a conversation is open");
        conv.step(&view, idx, out);
        Ok(())
    }
}

/// The parts of one step, found in one pass over its fields.
struct StepView<'a> {
    kind: u64,
    status: u64,
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
        // Dispatch on the payload that is present (DX): the one the type tag
        // names if it is there, else the first known payload field.
        let expected = type_tag.and_then(steps::payload_field);
        let mut payload = None;
        for f in step.fields() {
            let WireValue::Bytes(bytes) = f.value else {
                continue;
            };
            if Some(f.number) == expected {
                payload = Some((f.number, wire::Message::new(bytes)));
                break;
            }
            if payload.is_none() && steps::kind_of_payload_field(f.number).is_some() {
                payload = Some((f.number, wire::Message::new(bytes)));
            }
        }
        let kind = payload
            .and_then(|(f, _)| steps::kind_of_payload_field(f))
            .or(type_tag)
            .unwrap_or(0);
        StepView {
            kind,
            status,
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
}

impl Conversation {
    fn step(&mut self, view: &StepView<'_>, idx: Option<i64>, out: &mut Vec<u8>) {
        let timestamp = view.timestamp();
        if self.first_step_time.is_none() {
            self.first_step_time = timestamp;
        }
        let timestamp = timestamp.and_then(|t| t.format());
        match view.kind {
            kind::USER_INPUT => self.user_input(view, timestamp, out),
            kind::PLANNER_RESPONSE => self.planner_response(view, idx, timestamp, out),
            kind::CHECKPOINT => {
                let checkpoint = view.payload();
                if let Some(title) = checkpoint
                    .get_nonempty_str(field::checkpoint::CONVERSATION_TITLE)
                    .or_else(|| checkpoint.get_nonempty_str(field::checkpoint::USER_INTENT))
                {
                    self.checkpoint_title = Some(title.into_owned());
                }
            }
            kind::CONVERSATION_HISTORY | kind::SYSTEM_MESSAGE | kind::EPHEMERAL_MESSAGE => {}
            _ => self.tool_step(view, timestamp, out),
        }
    }

    fn user_input(&mut self, view: &StepView<'_>, timestamp: Option<String>, out: &mut Vec<u8>) {
        let input = view.payload();
        let text = user_text(input);
        let mut content = Vec::new();
        if !text.is_empty() {
            if self.first_user_text.is_none() {
                self.first_user_text = Some(text.to_string());
            }
            content.push(Block::Text { text });
        }
        for image in input.repeated_messages(field::user_input::IMAGES) {
            content.push(Block::Image {
                source: ImageSource {
                    source_type: Cow::Borrowed("base64"),
                    media_type: image.get_nonempty_str(field::image::MIME_TYPE),
                    data: image.get_str(field::image::BASE64_DATA).unwrap_or_default(),
                },
            });
        }
        write_message(out, &self.id, Role::User, timestamp, content);
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
        let signature = planner.get_nonempty_str(field::planner::SIGNATURE);
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
            content.push(Block::Text { text });
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
                .map(|b| Cow::Owned(hex::encode(b)));
            self.open_calls.insert(id.to_string());
            content.push(Block::ToolUse {
                id,
                name: Cow::Owned(name),
                input,
                signature,
            });
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
            conversation: &self.id,
            kind: "message",
            role: Role::Assistant,
            timestamp,
            model: model.map(Cow::Owned),
            stop_reason,
            usage,
            content,
        };
        write_json(out, &message);
    }

    /// The human model name where the store has one (`gen_metadata`, then
    /// the step's model info), else `model-<n>` from the model enum.
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
        metadata
            .get_u64(field::metadata::GENERATOR_MODEL)
            .filter(|&v| v != 0)
            .or_else(|| {
                metadata
                    .get_message(field::metadata::MODEL_USAGE)
                    .and_then(|u| u.get_u64(field::usage::MODEL))
                    .filter(|&v| v != 0)
            })
            .map(steps::model_enum_name)
    }

    /// A step that executed a tool call gives that call's result once it has
    /// settled; a step without a call gives nothing.
    fn tool_step(&mut self, view: &StepView<'_>, timestamp: Option<String>, out: &mut Vec<u8>) {
        let Some(call) = view.metadata.get_message(field::metadata::TOOL_CALL) else {
            return;
        };
        if !steps::is_settled(view.status) {
            return;
        }
        let id = call.get_str(field::tool_call::ID).unwrap_or_default();
        let outcome = match view.payload {
            Some((payload_field, payload)) => payload_outcome(payload_field, payload),
            None => Outcome::text(Cow::Borrowed("")),
        };
        let details_text = view.error.and_then(error_text);
        let is_error = steps::is_failure(view.status) || details_text.is_some() || outcome.failed;
        let content = match details_text.or(outcome.error_text) {
            Some(text) => ResultContent::Text(text),
            None => outcome.content,
        };
        let block = if self.open_calls.remove(&*id) {
            Block::ToolResult {
                tool_use_id: id,
                content,
                is_error,
            }
        } else {
            Block::Text {
                text: Cow::Owned(message::orphan_result_text(
                    &id,
                    &content.to_text(),
                    is_error,
                )),
            }
        };
        write_message(out, &self.id, Role::User, timestamp, vec![block]);
    }

    fn read_trajectory_metadata(&mut self, data: &[u8]) {
        let meta = wire::Message::new(data);
        let workspace = meta.get_message(field::trajectory::WORKSPACES);
        let folder = workspace
            .and_then(|w| w.get_nonempty_str(field::trajectory::WORKSPACE_FOLDER_URI))
            .or_else(|| {
                meta.repeated_bytes(field::trajectory::WORKSPACE_URIS)
                    .map(String::from_utf8_lossy)
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
    }
}

/// What a tool step's payload says about its result.
struct Outcome<'a> {
    content: ResultContent<'a>,
    /// The payload itself reports a failure (exit code, search error, ...).
    failed: bool,
    /// Text to show instead of `content` when the step failed.
    error_text: Option<Cow<'a, str>>,
}

impl<'a> Outcome<'a> {
    fn text(text: Cow<'a, str>) -> Outcome<'a> {
        Outcome {
            content: ResultContent::Text(text),
            failed: false,
            error_text: None,
        }
    }
}

/// The result of each step kind that can execute a tool call, by the Step
/// field its payload lives in. A kind missing here still gives a result —
/// an empty one — so no call is left without its answer.
fn payload_outcome(payload_field: u32, payload: wire::Message<'_>) -> Outcome<'_> {
    match payload_field {
        field::step::RUN_COMMAND => run_command_outcome(payload),
        field::step::VIEW_FILE => {
            use field::view_file::*;
            Outcome::text(
                payload
                    .get_str(CONTENT)
                    .or_else(|| payload.get_str(RAW_CONTENT))
                    .unwrap_or_default(),
            )
        }
        field::step::LIST_DIRECTORY => list_directory_outcome(payload),
        field::step::GREP_SEARCH => {
            use field::grep_search::*;
            let mut outcome = Outcome::text(payload.get_str(RAW_OUTPUT).unwrap_or_default());
            if let Some(error) = payload.get_nonempty_str(GREP_ERROR) {
                outcome.failed = true;
                outcome.error_text = Some(error);
            }
            outcome
        }
        field::step::CODE_ACTION => code_action_outcome(payload),
        field::step::MCP_TOOL => Outcome::text(
            payload
                .get_str(field::mcp_tool::RESULT_STRING)
                .unwrap_or_default(),
        ),
        field::step::GENERIC => Outcome::text(
            payload
                .get_message(field::generic::RESULT)
                .and_then(|r| r.get_str(field::generic::RESULT_TEXT))
                .unwrap_or_default(),
        ),
        field::step::ERROR_MESSAGE => {
            let text = payload
                .get_message(field::error_message::ERROR)
                .and_then(error_text);
            Outcome {
                content: ResultContent::default(),
                failed: true,
                error_text: text,
            }
        }
        _ => Outcome::text(Cow::Borrowed("")),
    }
}

fn run_command_outcome(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::run_command::*;
    let output_of = |f: u32| {
        payload.get_message(f).and_then(|o| {
            o.get_str(OUTPUT_FULL)
                .or_else(|| o.get_str(OUTPUT_TRUNCATED))
        })
    };
    let text = output_of(COMBINED_OUTPUT)
        .or_else(|| output_of(STDOUT_OUTPUT))
        .unwrap_or_else(
            || match (payload.get_str(STDOUT), payload.get_str(STDERR)) {
                (Some(out), Some(err)) => Cow::Owned(format!("{out}{err}")),
                (Some(one), None) | (None, Some(one)) => one,
                (None, None) => Cow::Borrowed(""),
            },
        );
    let mut outcome = Outcome::text(text);
    outcome.failed = payload.get_i32(EXIT_CODE).is_some_and(|code| code != 0);
    outcome
}

/// A listing is structured: `[{"name":…,"is_dir":…,"num_children":…,
/// "size_bytes":…}]` with each key only when its field is present, or the
/// plain `children` names as an array of strings.
fn list_directory_outcome(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::list_directory::*;
    if payload.get_bool(DIR_NOT_FOUND) == Some(true) {
        let path = payload
            .get_nonempty_str(DIRECTORY_PATH_URI)
            .map(|u| message::uri_to_path(&u));
        let text = match path {
            Some(path) => format!("directory not found: {path}"),
            None => "directory not found".to_string(),
        };
        return Outcome {
            content: ResultContent::default(),
            failed: true,
            error_text: Some(Cow::Owned(text)),
        };
    }
    let mut entries = Vec::new();
    for result in payload.repeated_messages(RESULTS) {
        let mut entry = Map::new();
        if let Some(name) = result.get_str(RESULT_NAME) {
            entry.insert("name".into(), Value::String(name.into_owned()));
        }
        if let Some(is_dir) = result.get_bool(RESULT_IS_DIR) {
            entry.insert("is_dir".into(), Value::Bool(is_dir));
        }
        if let Some(n) = result.get_u64(RESULT_NUM_CHILDREN) {
            entry.insert("num_children".into(), Value::from(n));
        }
        if let Some(n) = result.get_u64(RESULT_SIZE_BYTES) {
            entry.insert("size_bytes".into(), Value::from(n));
        }
        entries.push(Value::Object(entry));
    }
    if entries.is_empty() {
        entries.extend(
            payload
                .repeated_bytes(CHILDREN)
                .map(|b| Value::String(String::from_utf8_lossy(b).into_owned())),
        );
    }
    Outcome {
        content: ResultContent::Structured(Value::Array(entries)),
        failed: false,
        error_text: None,
    }
}

/// An edit or file creation: `{"file":…,"created":true}` or
/// `{"file":…,"edited":true}`; empty text when the step names no file.
fn code_action_outcome(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::code_action::*;
    let edit = payload
        .get_message(ACTION_RESULT)
        .and_then(|r| r.get_message(RESULT_EDIT));
    let spec = payload.get_message(ACTION_SPEC);
    let create_spec = spec.and_then(|s| s.get_message(SPEC_CREATE_FILE));
    let spec_path = create_spec
        .and_then(|c| c.get_message(CREATE_PATH))
        .or_else(|| {
            spec.and_then(|s| s.get_message(SPEC_COMMAND))
                .and_then(|c| c.get_message(COMMAND_FILE))
        })
        .and_then(|p| {
            p.get_nonempty_str(PATH_URI)
                .or_else(|| p.get_nonempty_str(PATH_LEGACY))
        });
    let Some(uri) = edit
        .and_then(|e| e.get_nonempty_str(EDIT_ABSOLUTE_URI))
        .or(spec_path)
    else {
        return Outcome::text(Cow::Borrowed(""));
    };
    let created = match edit {
        Some(edit) => edit.get_bool(EDIT_CREATE_FILE) == Some(true),
        None => create_spec.is_some(),
    };
    let mut object = Map::new();
    object.insert("file".into(), Value::String(message::uri_to_path(&uri)));
    object.insert(
        if created { "created" } else { "edited" }.into(),
        Value::Bool(true),
    );
    Outcome {
        content: ResultContent::Structured(Value::Object(object)),
        failed: false,
        error_text: None,
    }
}

/// The text of CortexErrorDetails: the model-facing message first, then
/// the user-facing one, the short and the full error. `None` when all are
/// empty.
fn error_text(details: wire::Message<'_>) -> Option<Cow<'_, str>> {
    use field::error_details::*;
    [
        MODEL_ERROR_MESSAGE,
        USER_ERROR_MESSAGE,
        SHORT_ERROR,
        FULL_ERROR,
    ]
    .into_iter()
    .find_map(|f| details.get_nonempty_str(f))
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

/// A title from the first user text: its first [`TITLE_CHARS`] characters.
fn title_from_text(text: &str) -> String {
    text.trim().chars().take(TITLE_CHARS).collect()
}

fn write_message(
    out: &mut Vec<u8>,
    conversation: &str,
    role: Role,
    timestamp: Option<String>,
    content: Vec<Block<'_>>,
) {
    let message = Message {
        conversation,
        kind: "message",
        role,
        timestamp,
        model: None,
        stop_reason: None,
        usage: None,
        content,
    };
    write_json(out, &message);
}

fn write_json(out: &mut Vec<u8>, value: &impl serde::Serialize) {
    serde_json::to_writer(&mut *out, value).expect("serializing to a Vec cannot fail");
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

/// Decodes a blob column's hex into `buf`, reusing its allocation. False
/// when the column is absent, NULL or not a blob.
fn hex_into(row: &RowCells<'_>, column: &str, buf: &mut Vec<u8>) -> Result<bool> {
    let hex_text = match row.get(column) {
        Some(JsonCell::Plain(h)) | Some(JsonCell::Blob(h)) => h,
        _ => return Ok(false),
    };
    buf.clear();
    buf.resize(hex_text.len() / 2, 0);
    if hex_text.len() % 2 != 0 || hex::decode_to_slice(hex_text.as_bytes(), buf).is_err() {
        return Err(Error::data(format!("column {column}: bad hex")));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_cut_by_characters() {
        let text = "ü".repeat(100);
        assert_eq!(title_from_text(&text).chars().count(), TITLE_CHARS);
        assert_eq!(title_from_text("  short \n"), "short");
    }
}
