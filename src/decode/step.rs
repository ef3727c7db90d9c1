//! One step's messages: the step's parts read in one pass ([`StepView`]),
//! and the messages each kind of step gives (user input, planner response,
//! tool call results, system messages), written as they are made.

use std::borrow::Cow;

use crate::agy::steps::{self, field, kind, source};
use crate::agy::tools;
use crate::agy::wire;
use crate::kinds::results::{self, Outcome};
use crate::kinds::system;
use crate::stream::message::{
    self, Block, ImageSource, Message, ResultContent, Role, ToolInput, Usage,
};
use crate::time::Timestamp;

use super::conversation::Conversation;
use super::{read_timestamp, SpilledResult};
use crate::stream::message::title_from_text;

/// Writes a step's messages, marked and said when it is damaged.
pub(super) fn finish_step(
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

/// The parts of one step, found in one pass over its fields.
pub(super) struct StepView<'a> {
    pub(super) kind: u64,
    status: u64,
    /// All of the Step, to list its fields when nothing here understands it.
    step: wire::Message<'a>,
    metadata: Metadata<'a>,
    error: Option<wire::Message<'a>>,
    /// The payload field present and its message.
    payload: Option<(u32, wire::Message<'a>)>,
}

/// The fields of a step's metadata the decoder reads, found in one pass
/// over it: read one getter at a time, the metadata's fields were walked
/// six times a step.
struct Metadata<'a> {
    created_at: Option<wire::Message<'a>>,
    source: Option<u64>,
    tool_call: Option<wire::Message<'a>>,
    model_usage: Option<wire::Message<'a>>,
    model_info: Option<wire::Message<'a>>,
    generator_model: Option<u64>,
}

impl<'a> Metadata<'a> {
    /// Each field as [`wire::Message`]'s getters read it: its last value,
    /// when that is of the wire type asked for.
    fn of(metadata: wire::Message<'a>) -> Metadata<'a> {
        use field::metadata::*;
        let [created_at, source, tool_call, model_usage, model_info, generator_model] = metadata
            .last_of([
                CREATED_AT,
                SOURCE,
                TOOL_CALL,
                MODEL_USAGE,
                MODEL_INFO,
                GENERATOR_MODEL,
            ]);
        let message =
            |v: Option<wire::Value<'a>>| v.and_then(|v| v.bytes()).map(wire::Message::new);
        Metadata {
            created_at: message(created_at),
            source: source.and_then(|v| v.u64()),
            tool_call: message(tool_call),
            model_usage: message(model_usage),
            model_info: message(model_info),
            generator_model: generator_model.and_then(|v| v.u64()),
        }
    }
}

impl<'a> StepView<'a> {
    pub(super) fn new(
        step: wire::Message<'a>,
        metadata: wire::Message<'a>,
        error: Option<wire::Message<'a>>,
        type_column: Option<i64>,
        status_column: Option<i64>,
    ) -> StepView<'a> {
        // Both fields in one pass over the Step's fields.
        let [type_field, status_field] = step.last_of([field::step::TYPE, field::step::STATUS]);
        let type_tag = type_field
            .and_then(|v| v.u64())
            .or(type_column.map(|v| v as u64));
        let status = status_column
            .map(|v| v as u64)
            .or(status_field.and_then(|v| v.u64()))
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
            metadata: Metadata::of(metadata),
            error,
            payload,
        }
    }

    pub(super) fn payload(&self) -> wire::Message<'a> {
        self.payload.map(|(_, m)| m).unwrap_or_default()
    }

    pub(super) fn timestamp(&self) -> Option<Timestamp> {
        read_timestamp(self.metadata.created_at?)
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
                let call = view.metadata.tool_call;
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
            if self.first_user_title.is_none() {
                self.first_user_title = Some(title_from_text(&text));
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
            implicit: view.metadata.source == Some(source::USER_IMPLICIT),
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
        // Every singular field in one pass, as the getters read them.
        let [thinking, raw_thinking, thinking_signature, signature, response, modified_response, stop_reason] =
            planner.last_of({
                use field::planner::*;
                [
                    THINKING,
                    RAW_THINKING,
                    THINKING_SIGNATURE,
                    SIGNATURE,
                    RESPONSE,
                    MODIFIED_RESPONSE,
                    STOP_REASON,
                ]
            });
        let thinking = nonempty_str(thinking).or_else(|| nonempty_str(raw_thinking));
        let signature = thinking_signature
            .and_then(|v| v.bytes())
            .map(|value| Cow::Owned(hex::encode(steps::signature::read(value))))
            .or_else(|| nonempty_str(signature));
        if thinking.is_some() || signature.is_some() {
            content.push(Block::Thinking {
                thinking: thinking.unwrap_or_default(),
                signature,
            });
        }
        if let Some(text) = nonempty_str(response).or_else(|| nonempty_str(modified_response)) {
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
        let usage = view.metadata.model_usage.and_then(read_usage);
        let stop_reason = stop_reason
            .and_then(|v| v.u64())
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
        let metadata = &view.metadata;
        if let Some(name) = metadata
            .model_info
            .and_then(|info| info.get_nonempty_str(field::metadata::MODEL_INFO_NAME))
        {
            return Some(name.into_owned());
        }
        let model_enum = metadata.generator_model.filter(|&v| v != 0).or_else(|| {
            metadata
                .model_usage
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
}

/// The prompt: `user_response`, else the text items, else the legacy query.
pub(super) fn user_text(input: wire::Message<'_>) -> Cow<'_, str> {
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

/// A singular field's text as [`wire::Message::get_nonempty_str`] reads
/// it, from its value.
fn nonempty_str(value: Option<wire::Value<'_>>) -> Option<Cow<'_, str>> {
    value?.str().filter(|s| !s.is_empty())
}

fn read_usage(usage: wire::Message<'_>) -> Option<Usage> {
    use field::usage::*;
    let [input, output, cache_write, cache_read] = usage.last_of([
        INPUT_TOKENS,
        OUTPUT_TOKENS,
        CACHE_WRITE_TOKENS,
        CACHE_READ_TOKENS,
    ]);
    let usage = Usage {
        input_tokens: input.and_then(|v| v.u64()),
        output_tokens: output.and_then(|v| v.u64()),
        cache_creation_input_tokens: cache_write.and_then(|v| v.u64()),
        cache_read_input_tokens: cache_read.and_then(|v| v.u64()),
    };
    (!usage.is_empty()).then_some(usage)
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
