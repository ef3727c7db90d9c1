//! Tool calls waiting for a result: the ChatToolCall a tool_use block
//! becomes, and the tool step written when its result comes (or, still
//! PENDING, when the conversation ends without one).

use crate::agy::steps::{self, field, source, status};
use crate::agy::tools;
use crate::agy::wire::Writer;
use crate::error::{Error, Result};
use crate::stream::message::{self, ObjectJson, ResultContent, ToolInput};
use crate::time::Timestamp;

use super::conversation::Conversation;
use super::payload::Carrier;
use super::step::{metadata, Step, StepWriter};
use super::transcript::TranscriptLine;
use super::OpenCall;

impl Conversation {
    pub(super) fn open_call(
        &self,
        id: &str,
        name: &str,
        input: &ToolInput,
        signature: Option<&str>,
        timestamp: Option<Timestamp>,
    ) -> Result<OpenCall> {
        let (native_name, arguments_json, native_args) = match input {
            // The call keeps its arguments until its result comes, after
            // the record is gone: the mapped copy, or a copy as they were
            // when the tool is not mapped.
            ToolInput::Object(args) => {
                let (native_name, mapped) = tools::to_native(name, Some(args));
                let args = mapped.unwrap_or_else(|| args.clone());
                (native_name, message::object_json(&args), Some(args))
            }
            other => (
                tools::to_native(name, None).0,
                ObjectJson {
                    text: other.to_arguments_json(),
                    values: Vec::new(),
                },
                None,
            ),
        };
        // Room for every field at once (a tag and a length of up to ten
        // bytes each): a call's arguments run to whole files, and growing
        // the writer from a small message copied them again.
        let signature_len = signature.map_or(0, |s| s.len() / 2 + 24);
        let mut call = Writer::with_capacity(
            id.len() + 2 * native_name.len() + arguments_json.text.len() + signature_len + 4 * 12,
        );
        call.string(field::tool_call::ID, id)
            .string(field::tool_call::NAME, &native_name)
            .string(field::tool_call::ARGUMENTS_JSON, &arguments_json.text);
        let arguments_end = call.len();
        let arguments_start = arguments_end - arguments_json.text.len();
        let argument_values = arguments_json
            .values
            .into_iter()
            .map(|value| arguments_start + value.start..arguments_start + value.end)
            .collect();
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
            argument_values,
            call: call.into_bytes(),
            timestamp,
        })
    }

    pub(super) fn tool_result(
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
                    argument_values: Vec::new(),
                    call: call.into_bytes(),
                    timestamp,
                };
                self.tool_step(&orphan, Some((content, is_error)), timestamp, steps)
            }
        }
    }

    /// The step that executed `call`, holding its result, or PENDING
    /// without one.
    pub(super) fn tool_step(
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
        let mut meta = metadata(timestamp, source::MODEL, call.call.len() + 12);
        meta.bytes(field::metadata::TOOL_CALL, &call.call);
        let meta = meta.into_bytes();
        // The payload (a tool's whole output) is built after room for the
        // step's fields before it, where the step will hold it.
        let (buf, payload_at) = self.payload_buffer(meta.len());
        let (step_kind, payload_field, payload) = carrier.encode(args, buf);
        let text = result.map(|(content, _)| content.to_text());
        self.write_step(
            steps,
            Step {
                kind: step_kind,
                status: step_status,
                metadata: meta,
                error,
                payload_field,
                payload,
                payload_at,
                line: TranscriptLine::new(source::MODEL, step_kind, step_status, timestamp, text),
            },
        )
    }
}
