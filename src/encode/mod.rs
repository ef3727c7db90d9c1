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

mod artifacts;
mod calls;
mod conversation;
mod generation;
mod messages;
pub mod onto;
mod payload;
mod step;
mod transcript;

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

use uuid::Uuid;

use crate::agy::tools::ArgList;
use crate::error::{Error, Result};
use crate::stream::io::Output;
use crate::stream::message::{InputRecord, ToolInput};
use crate::stream::record;
use crate::time::Timestamp;

use conversation::Conversation;
use step::StepWriter;

/// The namespace of every UUID agy-encode derives (a fixed random UUID).
const NAMESPACE: Uuid = Uuid::from_u128(0x5f0e_6c1a_9d2b_4e57_8a31_c4d7_20b9_e6f3);

/// A tool call waiting for its result.
struct OpenCall {
    id: String,
    native_name: String,
    native_args: Option<ArgList>,
    /// Where the JSON text of each of `native_args`' values is in `call`
    /// (inside its arguments' JSON), for the brain transcript, which
    /// writes each value's text: taken from there, not written again.
    argument_values: Vec<Range<usize>>,
    /// The encoded ChatToolCall, repeated in the tool step's metadata.
    call: Vec<u8>,
    timestamp: Option<Timestamp>,
}

impl OpenCall {
    /// The JSON text of argument `i`'s value.
    fn argument_text(&self, i: usize) -> &str {
        let bytes = &self.call[self.argument_values[i].clone()];
        simdutf8::basic::from_utf8(bytes).expect("JSON text written as a string is UTF-8")
    }
}

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
/// What a stream holds that nothing reads ([`InputRecord::unread`]), said
/// once per key and conversation: a jq edit that sets a key the stream
/// does not define (`.text` on a thinking block) changes nothing, and
/// should not do so in silence.
#[derive(Debug, Default)]
pub struct Unread {
    conversation: String,
    said: HashSet<String>,
    warnings: Vec<String>,
}

impl Unread {
    /// Notes the unread keys of `record`, a record of `conversation`.
    pub fn note(&mut self, conversation: &str, record: &InputRecord) {
        if record.unread.is_empty() {
            return;
        }
        if self.conversation != conversation {
            self.conversation = conversation.to_string();
            self.said.clear();
        }
        for key in &record.unread {
            if self.said.insert(key.clone()) {
                self.warnings.push(format!(
                    "conversation {conversation:?}: {key} is not part of the message stream; ignored"
                ));
            }
        }
    }

    /// The warnings noted since the last take.
    pub fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

pub struct Encoder {
    options: Options,
    unread: Unread,
    current: Option<Conversation>,
    finished: HashSet<String>,
}

impl Encoder {
    pub fn new(options: Options) -> Encoder {
        Encoder {
            options,
            unread: Unread::default(),
            current: None,
            finished: HashSet::new(),
        }
    }

    /// Reads one record, writing the rows it completes to `out`. The
    /// record is lent: what a conversation keeps of it (an open call's
    /// arguments, the meta record's fields) is copied.
    pub fn record(&mut self, record: &InputRecord<'_>, out: &mut Output) -> Result<()> {
        let id: &str = match (&record.conversation, &self.options.id) {
            (Some(id), _) => id,
            (None, Some(id)) => id,
            (None, None) => {
                return Err(Error::data(
                    "record has no \"conversation\" (give one with --id)",
                ))
            }
        };
        self.unread.note(id, record);
        if self.current.as_ref().map(|c| c.id.as_str()) != Some(id) {
            let id = id.to_string();
            self.finish(out)?;
            if self.finished.contains(&id) {
                return Err(Error::data(format!(
                    "conversation {id:?} appears again after another one; a stream keeps each conversation's records together"
                )));
            }
            record::count_from_here(out);
            self.current = Some(Conversation::start(id, out.buf()));
        }
        let conv = self.current.as_mut().expect("a conversation is open");
        let mut steps = StepWriter {
            out,
            generic: self.options.generic,
        };
        match record.kind.as_deref() {
            Some("message") => conv.message(record, &mut steps),
            Some("meta") => conv.meta(record),
            Some("artifact") => artifacts::write(&conv.id, record, &mut conv.artifacts, steps.out),
            Some(other) => Err(Error::data(format!(
                "unknown record kind {other:?} (expected message, meta or artifact)"
            ))),
            None => Err(Error::data("record has no \"kind\"")),
        }
    }

    /// Warnings about keys nothing reads, since the last call.
    pub fn take_warnings(&mut self) -> Vec<String> {
        self.unread.take()
    }

    /// Ends the open conversation, if any: pending calls, the title
    /// checkpoint, the metadata blob and the brain transcripts.
    pub fn finish(&mut self, out: &mut Output) -> Result<()> {
        let Some(conv) = self.current.take() else {
            return Ok(());
        };
        let id = conv.id.clone();
        let incomplete = conv.incomplete();
        let mut steps = StepWriter {
            out,
            generic: self.options.generic,
        };
        conv.finish(&mut steps)?;
        // The brain directory is the one made here, whole; the conversation
        // is as whole as its messages were.
        record::close(out, &id, true, incomplete)?;
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
    generic: bool,
}

impl Synth {
    pub fn new(id: &str, generic: bool) -> Synth {
        let mut conversation = Conversation::bare(id.to_string());
        conversation.onto = true;
        Synth {
            conversation,
            generic,
        }
    }

    /// Writes the steps of one message record from `at` on; returns the
    /// idx after the last step written.
    pub fn message(&mut self, record: &InputRecord<'_>, at: i64, out: &mut Output) -> Result<i64> {
        self.conversation.next_idx = at;
        let mut steps = StepWriter {
            out,
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
            generic: self.generic,
        };
        for call in std::mem::take(&mut self.conversation.open_calls) {
            self.conversation
                .tool_step(&call, None, call.timestamp, &mut steps)?;
        }
        Ok(self.conversation.next_idx)
    }

    /// What the steps written so far tell the index row, leaving none
    /// here.
    pub fn take_tally(&mut self) -> crate::decode::summary::Tally {
        self.conversation.summary.take_tally()
    }

    /// The ChatToolCall a tool_use block stands for, as a new message's
    /// would be written: what an edited call becomes.
    pub fn call_bytes(
        &self,
        id: &str,
        name: &str,
        input: &ToolInput,
        signature: Option<&str>,
    ) -> Result<Vec<u8>> {
        Ok(self
            .conversation
            .open_call(id, name, input, signature, None)?
            .call)
    }
}

/// Appends `part` to `text`, a blank line between parts: how text blocks
/// become one field (agy-encode --onto compares texts joined the same way).
/// A part alone is borrowed, not copied: a user's text may be tens of MB.
pub(crate) fn join<'a>(text: &mut Cow<'a, str>, part: impl Into<Cow<'a, str>>) {
    let part = part.into();
    if part.is_empty() {
        return;
    }
    if text.is_empty() {
        *text = part;
        return;
    }
    let text = text.to_mut();
    text.push_str("\n\n");
    text.push_str(&part);
}
