//! The brain transcripts (FORMAT.md 10): one line per step, full and
//! compact, written out as `file` record parts as they grow.

use std::borrow::Cow;
use std::fmt::Write as _;

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
    /// What the content is written between ([`TranscriptLine::framed`]).
    frame: (&'static str, &'static str),
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
        nested_string(out, [self.source]);
        out.extend_from_slice(br#",\"type\":"#);
        nested_string(out, [&self.step_type]);
        out.extend_from_slice(br#",\"status\":"#);
        nested_string(out, [self.status]);
        if let Some(created_at) = &self.created_at {
            out.extend_from_slice(br#",\"created_at\":"#);
            nested_string(out, [created_at]);
        }
        if let Some(content) = &self.content {
            out.extend_from_slice(br#",\"content\":"#);
            nested_string(out, [self.frame.0, content, self.frame.1]);
        }
        if let Some(thinking) = &self.thinking {
            out.extend_from_slice(br#",\"thinking\":"#);
            nested_string(out, [thinking]);
        }
        if let Some(calls) = self.tool_calls {
            out.extend_from_slice(br#",\"tool_calls\":["#);
            for (i, call) in calls.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(br#"{\"name\":"#);
                nested_string(out, [&call.native_name]);
                out.extend_from_slice(br#",\"args\":{"#);
                for (j, (key, _)) in call.native_args.iter().flatten().enumerate() {
                    if j > 0 {
                        out.push(b',');
                    }
                    nested_string(out, [key]);
                    out.push(b':');
                    nested_string(out, [call.argument_text(j)]);
                }
                out.extend_from_slice(b"}}");
            }
            out.push(b']');
        }
        out.push(b'}');
    }
}

/// A JSON string inside a JSON string, of `parts` one after the other: its
/// quotes escaped once, its text twice.
fn nested_string<const N: usize>(out: &mut Vec<u8>, parts: [&str; N]) {
    out.extend_from_slice(br#"\""#);
    for part in parts {
        json::write_str_body_twice(out, part);
    }
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
            frame: ("", ""),
            thinking: None,
            tool_calls: None,
        }
    }

    /// The line with its content written between `before` and `after`
    /// (a user request in its tags): kept apart rather than copied into
    /// one string, since a user text may be tens of MB.
    pub(super) fn framed(self, before: &'static str, after: &'static str) -> TranscriptLine<'a> {
        TranscriptLine {
            frame: (before, after),
            ..self
        }
    }

    /// The line of the compact transcript: long values cut with agy's
    /// `<truncated N bytes>` marker.
    pub(super) fn compact(&self) -> TranscriptLine<'_> {
        let (before, after) = self.frame;
        let content = self.content.as_deref();
        let cut = content.and_then(|text| truncate([before, text, after]));
        TranscriptLine {
            step_index: self.step_index,
            source: self.source,
            step_type: self.step_type.clone(),
            status: self.status,
            created_at: self.created_at.clone(),
            frame: match cut {
                Some(_) => ("", ""),
                None => self.frame,
            },
            content: content.map(|text| cut.map_or(Cow::Borrowed(text), Cow::Owned)),
            thinking: (self.thinking.as_deref())
                .map(|text| truncate([text]).map_or(Cow::Borrowed(text), Cow::Owned)),
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
        let frame = self.frame.0.len() + self.frame.1.len();
        let content = self.content.as_deref().map_or(0, |text| frame + text.len());
        let thinking = self.thinking.as_deref().map_or(0, str::len);
        content.max(thinking) > COMPACT_LIMIT
    }
}

/// The text of `parts` one after the other, cut after its first
/// [`COMPACT_LIMIT`] bytes (at a character's start) with agy's
/// `<truncated N bytes>` marker; `None` when it is no longer than that.
fn truncate<const N: usize>(parts: [&str; N]) -> Option<String> {
    let len: usize = parts.iter().map(|part| part.len()).sum();
    if len <= COMPACT_LIMIT {
        return None;
    }
    let mut head = String::with_capacity(COMPACT_LIMIT + 32);
    for part in parts {
        let room = COMPACT_LIMIT - head.len();
        if part.len() <= room {
            head.push_str(part);
            continue;
        }
        let mut end = room;
        while !part.is_char_boundary(end) {
            end -= 1;
        }
        head.push_str(&part[..end]);
        break;
    }
    let cut = len - head.len();
    let _ = write!(head, "<truncated {cut} bytes>");
    Some(head)
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

    /// A framed content writes, and cuts in the compact transcript, as the
    /// one string of frame and text would: texts whose cut falls before,
    /// in and after the text, on a multi-byte character and beside it.
    #[test]
    fn a_framed_text_is_the_text_in_its_frame() {
        let (before, after) = ("<USER_REQUEST>\n", "\n</USER_REQUEST>");
        let frame = before.len() + after.len();
        let mut texts = vec![String::new(), "short \"one\"".to_string()];
        for len in [
            COMPACT_LIMIT - frame - 1,
            COMPACT_LIMIT - frame,
            COMPACT_LIMIT - frame + 1,
        ]
        .into_iter()
        .chain(COMPACT_LIMIT - before.len() - 2..COMPACT_LIMIT - before.len() + 3)
        .chain([COMPACT_LIMIT - 5, COMPACT_LIMIT + 100])
        {
            texts.push("x".repeat(len));
            // A two-byte character across the cut, and one ending at it.
            for at in [
                COMPACT_LIMIT - before.len() - 1,
                COMPACT_LIMIT - before.len() - 2,
            ] {
                if at + 2 <= len {
                    let mut text = "x".repeat(len - 2);
                    text.insert(at.min(text.len()), 'é');
                    texts.push(text);
                }
            }
        }
        for text in &texts {
            let line = |content: Cow<'static, str>| {
                TranscriptLine::new(
                    source::USER_EXPLICIT,
                    kind::USER_INPUT,
                    status::DONE,
                    None,
                    Some(content),
                )
            };
            let whole = line(Cow::Owned(format!("{before}{text}{after}")));
            let framed = line(Cow::Owned(text.clone())).framed(before, after);
            assert_eq!(
                framed.is_cut_in_compact(),
                whole.is_cut_in_compact(),
                "{}",
                text.len()
            );
            for compact in [false, true] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                match compact {
                    false => (
                        whole.write_escaped_line(&mut a),
                        framed.write_escaped_line(&mut b),
                    ),
                    true => (
                        whole.compact().write_escaped_line(&mut a),
                        framed.compact().write_escaped_line(&mut b),
                    ),
                };
                assert!(a == b, "length {}, compact {compact}", text.len());
            }
        }
    }
}
