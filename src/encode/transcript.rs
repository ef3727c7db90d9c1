//! The brain transcripts (FORMAT.md 10): one line per step, full and
//! compact, written out as `file` record parts as they grow.

use std::borrow::Cow;

use crate::agy::steps;
use crate::error::Result;
use crate::stream::io::Output;
use crate::stream::json;
use crate::stream::record;
use crate::time::Timestamp;

use super::OpenCall;

/// Long values in the compact transcript are cut to this many bytes.
const COMPACT_LIMIT: usize = 4096;

pub(super) const TRANSCRIPT: &str = ".system_generated/logs/transcript.jsonl";
pub(super) const TRANSCRIPT_FULL: &str = ".system_generated/logs/transcript_full.jsonl";

/// One line of a brain transcript (FORMAT.md 10).
pub(super) struct TranscriptLine<'a> {
    pub(super) step_index: i64,
    source: &'static str,
    step_type: Cow<'static, str>,
    status: &'static str,
    created_at: Option<String>,
    content: Option<Cow<'a, str>>,
    pub(super) thinking: Option<Cow<'a, str>>,
    /// Each as `{name, args}` with every argument value JSON-encoded (the
    /// JSON text of the value, as a string), as agy writes them; the
    /// transcript carries no call id.
    pub(super) tool_calls: Option<&'a [OpenCall]>,
}

impl TranscriptLine<'_> {
    /// The line as compact JSON (`step_index`, `source`, `type`, `status`,
    /// then `created_at`, `content`, `thinking`, `tool_calls` when present),
    /// written as it sits inside a `file` record's JSON string: its own
    /// punctuation escaped once (`{\"step_index\":`, written so here rather
    /// than escaped at each line, which was a tenth of escaping a
    /// transcript), and its strings' text escaped twice in one pass, which
    /// is what keeps agy-encode near agy-decode's pace.
    fn write_escaped_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"{\"step_index\":"#);
        json::write_i64(out, self.step_index);
        out.extend_from_slice(br#",\"source\":"#);
        nested_string(out, self.source);
        out.extend_from_slice(br#",\"type\":"#);
        nested_string(out, &self.step_type);
        out.extend_from_slice(br#",\"status\":"#);
        nested_string(out, self.status);
        for (key, value) in [
            (
                br#",\"created_at\":"#.as_slice(),
                self.created_at.as_deref(),
            ),
            (br#",\"content\":"#, self.content.as_deref()),
            (br#",\"thinking\":"#, self.thinking.as_deref()),
        ] {
            if let Some(value) = value {
                out.extend_from_slice(key);
                nested_string(out, value);
            }
        }
        if let Some(calls) = self.tool_calls {
            out.extend_from_slice(br#",\"tool_calls\":["#);
            for (i, call) in calls.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(br#"{\"name\":"#);
                nested_string(out, &call.native_name);
                out.extend_from_slice(br#",\"args\":{"#);
                for (j, (key, _)) in call.native_args.iter().flatten().enumerate() {
                    if j > 0 {
                        out.push(b',');
                    }
                    nested_string(out, key);
                    out.push(b':');
                    nested_string(out, call.argument_text(j));
                }
                out.extend_from_slice(b"}}");
            }
            out.push(b']');
        }
        out.push(b'}');
    }
}

/// A JSON string inside a JSON string: its quotes escaped once, its text
/// twice.
fn nested_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(br#"\""#);
    json::write_str_body_twice(out, s);
    out.extend_from_slice(br#"\""#);
}

impl<'a> TranscriptLine<'a> {
    pub(super) fn new(
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
    pub(super) fn compact(&self) -> TranscriptLine<'_> {
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
    pub(super) fn write_escaped_line(&self, out: &mut Vec<u8>) {
        self.write_escaped_json(out);
        out.extend_from_slice(b"\\n");
    }

    /// Whether [`TranscriptLine::compact`] cuts anything from this line.
    pub(super) fn is_cut_in_compact(&self) -> bool {
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
pub(super) struct Transcript {
    path: &'static str,
    pub(super) text: Vec<u8>,
    /// A part has been written: the next one appends.
    started: bool,
}

impl Transcript {
    pub(super) fn new(path: &'static str) -> Transcript {
        Transcript {
            path,
            text: Vec::new(),
            started: false,
        }
    }

    /// Writes a part once enough text has gathered.
    pub(super) fn write_part_if_full(
        &mut self,
        out: &mut Output,
        conversation: &str,
    ) -> Result<()> {
        match self.text.len() >= record::FILE_PART {
            true => self.write_part(out, conversation),
            false => Ok(()),
        }
    }

    /// Writes the text gathered as a part, straight from where it is.
    fn write_part(&mut self, out: &mut Output, conversation: &str) -> Result<()> {
        record::write_file_part_escaped_head(out.buf(), conversation, self.path, self.started);
        out.write_through_within_line(&self.text)?;
        out.buf().extend_from_slice(record::FILE_PART_ESCAPED_END);
        self.started = true;
        self.text.clear();
        out.end_record()
    }

    /// Writes what is left: the last part, or the whole file (empty, even)
    /// when it never filled one.
    pub(super) fn finish(&mut self, out: &mut Output, conversation: &str) -> Result<()> {
        if self.started && self.text.is_empty() {
            return Ok(());
        }
        self.write_part(out, conversation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::steps::{kind, source, status};
    use serde_json::json;

    /// A line as it sits in its `file` record's string reads back, once
    /// that string is read, as serde_json writes the same object.
    #[test]
    fn a_line_is_its_json_escaped_once_more() {
        let args = vec![
            ("CommandLine".into(), json!("grep -n \"x\" a\\b")),
            ("Blocking".into(), json!(true)),
        ];
        // The arguments' JSON as the call holds it, after a field before it.
        let arguments = crate::stream::message::object_json(&args);
        let mut call = b"before".to_vec();
        let start = call.len();
        call.extend_from_slice(arguments.text.as_bytes());
        let calls = [OpenCall {
            id: "call-1".into(),
            native_name: "run_command".into(),
            native_args: Some(args),
            argument_values: (arguments.values.iter())
                .map(|value| start + value.start..start + value.end)
                .collect(),
            call,
            timestamp: None,
        }];
        let text = "a \"quoted\" word,\n\ta backslash \\ and \u{1} é";
        let mut line = TranscriptLine::new(
            source::MODEL,
            kind::PLANNER_RESPONSE,
            status::DONE,
            None,
            Some(Cow::Borrowed(text)),
        );
        line.step_index = 7;
        line.thinking = Some(Cow::Borrowed("why \\n"));
        line.tool_calls = Some(&calls);
        let mut escaped = b"\"".to_vec();
        line.write_escaped_line(&mut escaped);
        escaped.push(b'"');
        let read: String = serde_json::from_slice(&escaped).unwrap();
        let expected = json!({
            "step_index": 7,
            "source": "MODEL",
            "type": "PLANNER_RESPONSE",
            "status": "DONE",
            "content": text,
            "thinking": "why \\n",
            "tool_calls": [{"name": "run_command", "args": {
                "CommandLine": "\"grep -n \\\"x\\\" a\\\\b\"",
                "Blocking": "true",
            }}],
        });
        assert_eq!(read, serde_json::to_string(&expected).unwrap() + "\n");
    }
}
