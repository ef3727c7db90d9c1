//! Each kind of message as steps: a system message as its bookkeeping
//! step, a user message as a USER_INPUT step (and its tool results as their
//! calls' tool steps), an assistant message as a PLANNER_RESPONSE step
//! whose tool calls then wait for their results.

use std::borrow::Cow;

use crate::agy::steps::{self, field, kind, source, status};
use crate::agy::wire::Writer;
use crate::error::{Error, Result};
use crate::kinds::system;
use crate::stream::message::{self, Block, ImageSource, Usage};
use crate::time::Timestamp;

use super::conversation::Conversation;
use super::step::{metadata, Step, StepWriter};
use super::transcript::TranscriptLine;
use super::{join, OpenCall, NAMESPACE};

impl Conversation {
    /// A bookkeeping step of the kind `step_type` names, its text blocks in
    /// the payload fields they name (FORMAT.md 7). Any other kind comes
    /// back only from `raw` ([`Conversation::raw_step`]); without it, it is
    /// an error rather than a step left out. The step goes at the
    /// message's `idx` when that is still free, so a round trip keeps the
    /// numbering.
    pub(super) fn system_message(
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
        let mut joined = Cow::Borrowed("");
        for &(_, text) in &texts {
            join(&mut joined, text);
        }
        self.write_step(
            steps,
            Step {
                kind: step_kind,
                status: status::DONE,
                metadata: metadata(timestamp, source::SYSTEM, 0).into_bytes(),
                error: None,
                payload_field: bookkeeping.payload_field,
                payload,
                payload_at: 0,
                line: TranscriptLine::new(
                    source::SYSTEM,
                    step_kind,
                    status::DONE,
                    timestamp,
                    (!joined.is_empty()).then_some(joined),
                ),
            },
        )
    }

    /// Text, images and documents become one USER_INPUT step; each tool
    /// result becomes its call's tool step, in the order the blocks come,
    /// but for the result of `raw_call`, which the raw step before holds.
    pub(super) fn user_message(
        &mut self,
        content: &[Block<'_>],
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
                Block::Text { text: t, .. } => join(&mut input.text, &**t),
                Block::Image { source } => input.attach(source, true)?,
                Block::Document { source } => input.attach(source, false)?,
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => {
                    if raw_call.as_deref() == Some(&**tool_use_id) {
                        raw_call = None;
                        continue;
                    }
                    if !input.is_empty() {
                        self.user_input(&std::mem::take(&mut input), implicit, timestamp, steps)?;
                        wrote_input = true;
                    }
                    self.tool_result(tool_use_id, content, *is_error, timestamp, steps)?;
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
        let text = &*input.text;
        if self.first_user_title.is_none() && !text.is_empty() {
            self.first_user_title = Some(message::title_from_text(text));
        }
        let step_source = if implicit {
            source::USER_IMPLICIT
        } else {
            source::USER_EXPLICIT
        };
        let meta = metadata(timestamp, step_source, 0).into_bytes();
        // Built after room for the step's fields before it, where the step
        // will hold it: a user text may be tens of MB, and it is in the
        // payload twice.
        let (buf, payload_at) = self.payload_buffer(meta.len());
        let mut payload = Writer::from_vec(buf);
        if !text.is_empty() {
            payload.string(field::user_input::USER_RESPONSE, text);
            payload.message_of_string(field::user_input::ITEMS, field::user_input::ITEM_TEXT, text);
        }
        for image in &input.images {
            payload.bytes(field::user_input::IMAGES, image);
        }
        for media in &input.media {
            payload.bytes(field::user_input::MEDIA, media);
        }
        let content = (!text.is_empty()).then_some(Cow::Borrowed(text));
        self.write_step(
            steps,
            Step {
                kind: kind::USER_INPUT,
                status: status::DONE,
                metadata: meta,
                error: None,
                payload_field: field::step::USER_INPUT,
                payload: payload.into_bytes(),
                payload_at,
                line: TranscriptLine::new(
                    step_source,
                    kind::USER_INPUT,
                    status::DONE,
                    timestamp,
                    content,
                )
                .framed("<USER_REQUEST>\n", "\n</USER_REQUEST>"),
            },
        )
    }

    pub(super) fn assistant_message(
        &mut self,
        content: &[Block<'_>],
        timestamp: Option<Timestamp>,
        model: Option<&str>,
        stop_reason: Option<&str>,
        usage: Option<&Usage>,
        steps: &mut StepWriter<'_>,
    ) -> Result<()> {
        let mut thinking = Cow::Borrowed("");
        let mut signature: Option<String> = None;
        let mut response = Cow::Borrowed("");
        let mut calls: Vec<OpenCall> = Vec::new();
        for block in content {
            match block {
                Block::Thinking {
                    thinking: t,
                    signature: s,
                } => {
                    join(&mut thinking, &**t);
                    if let Some(s) = s {
                        signature = Some(s.to_string());
                    }
                }
                Block::Text { text, .. } => join(&mut response, &**text),
                // agy has no assistant media; keep a trace rather than drop.
                Block::Image { source } | Block::Document { source } => join(
                    &mut response,
                    format!(
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
                    let call = self.open_call(id, name, input, signature.as_deref(), timestamp)?;
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
        // Room for the usage (four counts) and a model's name.
        let model_len = model.map_or(0, str::len);
        let mut meta = metadata(timestamp, source::MODEL, 48 + model_len);
        if let Some(usage) = usage.filter(|u| !u.is_empty()) {
            meta.message(field::metadata::MODEL_USAGE, |m| {
                super::generation::counts(m, usage)
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
        let meta = meta.into_bytes();
        let idx = self.next_idx;
        // Built where the step will hold it, as a tool step's payload is.
        let (buf, payload_at) = self.payload_buffer(meta.len());
        let mut planner = Writer::from_vec(buf);
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
        let message_id = crate::id::v5(&NAMESPACE, format!("{}/message/{idx}", self.id).as_bytes());
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

        let mut line = TranscriptLine::new(
            source::MODEL,
            kind::PLANNER_RESPONSE,
            status::DONE,
            timestamp,
            (!response.is_empty()).then_some(Cow::Borrowed(&*response)),
        );
        line.thinking = (!thinking.is_empty()).then_some(Cow::Borrowed(&*thinking));
        line.tool_calls = (!calls.is_empty()).then_some(&calls[..]);
        self.write_step(
            steps,
            Step {
                kind: kind::PLANNER_RESPONSE,
                status: status::DONE,
                metadata: meta,
                error: None,
                payload_field: field::step::PLANNER_RESPONSE,
                payload: planner.into_bytes(),
                payload_at,
                line,
            },
        )?;
        self.write_generation(idx, model, usage, steps)?;
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
}

/// What one USER_INPUT step will hold.
#[derive(Default)]
struct UserInput<'a> {
    /// The text blocks joined; one alone is borrowed from its block.
    text: Cow<'a, str>,
    /// Encoded ImageData (field 5).
    images: Vec<Vec<u8>>,
    /// Encoded Media (field 9). Once one is written, later images go here
    /// too, because agy-decode reads field 5 before field 9 and the blocks
    /// must come back in their order.
    media: Vec<Vec<u8>>,
}

impl UserInput<'_> {
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
