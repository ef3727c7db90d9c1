//! `agy-decode --format anthropic`: one Messages API request body per
//! conversation, `{"conversation":…,"system":…,"tools":[…],"messages":[…]}`.
//! With `conversation` taken out and `model` and `max_tokens` put in, it is
//! a request the API accepts: the turns follow [`super::turns`], `system`
//! holds the bookkeeping messages' text (present only when there is some),
//! and `tools` declares every tool the history calls, because the API
//! refuses `tool_use` and `tool_result` blocks in a request that defines no
//! tools. The declarations take any object (`"input_schema":
//! {"type":"object"}`); remove them with jq to send the conversation for a
//! review that must call nothing.

use serde_json::Value;

use super::turns::{self, change, object, Rules, Sequenced};
use super::write::{Shape, Writer};
use super::{Conversation, Report};
use crate::stream::message::Role;

/// How `--format anthropic` is written.
pub const WRITER: Writer = Writer {
    rules: Rules {
        keep_system: true,
        ..Rules::DEFAULT
    },
    what: "request",
    shape: Shape::Line(write_request),
};

/// Writes `conv`'s request as one line to `out`. The turns are written one
/// by one, each dropped once written, so the conversation is not held a
/// second time as one JSON value before it is serialized.
fn write_request(
    conv: &Conversation,
    mut sequenced: Sequenced,
    report: &mut Report,
    buf: &mut Vec<u8>,
) {
    trim_last_assistant(&mut sequenced.turns, report);
    let json = |buf: &mut Vec<u8>, value: &Value| {
        serde_json::to_writer(buf, value).expect("serializing to a Vec cannot fail");
    };
    buf.extend_from_slice(b"{\"conversation\":");
    json(buf, &conv.id.as_str().into());
    if !sequenced.system.is_empty() {
        buf.extend_from_slice(b",\"system\":");
        json(buf, &sequenced.system.join("\n\n").into());
    }
    if !sequenced.tool_names.is_empty() {
        let tools = sequenced
            .tool_names
            .iter()
            .map(|name| {
                object([
                    ("name", name.as_str().into()),
                    ("input_schema", object([("type", "object".into())])),
                ])
            })
            .collect();
        buf.extend_from_slice(b",\"tools\":");
        json(buf, &Value::Array(tools));
    }
    buf.extend_from_slice(b",\"messages\":[");
    for (i, turn) in sequenced.turns.into_iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        let role = match turn.role {
            Role::Assistant => "assistant",
            _ => "user",
        };
        let content = Value::Array(turn.into_content());
        json(buf, &object([("role", role.into()), ("content", content)]));
    }
    buf.extend_from_slice(b"]}\n");
}

/// The API refuses a final assistant turn whose text ends in whitespace
/// (it would be continued from there): such text is trimmed, and a block
/// left empty is dropped.
fn trim_last_assistant(turns: &mut Vec<turns::Turn>, report: &mut Report) {
    let Some(last) = turns.last_mut().filter(|t| t.role == Role::Assistant) else {
        return;
    };
    let Some(block) = last.blocks.last_mut() else {
        return;
    };
    let Some(Value::String(text)) = block.get_mut("text") else {
        return;
    };
    let trimmed = text.trim_end().len();
    if trimmed == text.len() {
        return;
    }
    report.add(change::TRAILING, 1);
    text.truncate(trimmed);
    if text.is_empty() {
        last.blocks.pop();
        if last.blocks.is_empty() {
            turns.pop();
        }
    }
}
