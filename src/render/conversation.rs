//! One conversation walked message by message: the order and nesting of
//! the page, whatever its format.
//!
//! A turn holds its text, then its tool calls, each beside its result. The
//! stream gives a call in the assistant's message and its result in a later
//! user message, so a call is rendered when it is read and held (as bytes)
//! until its result comes; then the two are written together. A call still
//! waiting when anything but a result or a system message comes is written
//! with "no result". A system message between a call and its result (with
//! `--all`, a TASK_BOUNDARY can fall there) waits too and is written after
//! the calls, so it does not cut a call from its result. So what is held is
//! at most the calls of one assistant message and the system messages that
//! came while they waited.
//!
//! The artifacts agy-decode writes after the messages (plan, task list,
//! walkthrough) form a section of their own after the turns.
//!
//! Each message's bytes go to the caller's buffer as soon as they are
//! rendered (the body's batch, [`super::body`]), a long text's a piece at
//! a time ([`super::text`]): the header, which needs the meta record that
//! comes last, is written before the body when the conversation ends.

use std::borrow::Cow;
use std::collections::HashMap;

use super::body::{Held, Out};
use super::calls;
use super::page::{Page, ResultOf};
use super::stream::{Block, Raw, Record, Role};
use super::summary::Summary;
use super::text::Text;
use crate::error::Error;

struct HeldCall {
    id: String,
    name: String,
    number: u64,
    rendered: Held,
}

pub struct Conversation {
    pub summary: Summary,
    held: Vec<HeldCall>,
    /// System messages rendered while calls were held, written once the
    /// calls are settled.
    deferred: Vec<u8>,
    /// Calls written without a result: id to name, so a result that comes
    /// late can still say whose it is.
    unanswered: HashMap<String, String>,
    turn_open: bool,
    /// The artifacts' section is open.
    artifacts_open: bool,
    messages: u64,
    calls: u64,
    /// A held call's bytes could not be kept ([`Conversation::take_error`]).
    error: Option<Error>,
}

impl Conversation {
    pub fn new(id: &str) -> Conversation {
        Conversation {
            summary: Summary::new(id),
            held: Vec::new(),
            deferred: Vec::new(),
            unanswered: HashMap::new(),
            turn_open: false,
            artifacts_open: false,
            messages: 0,
            calls: 0,
            error: None,
        }
    }

    /// The first failure to hold or write a call's page bytes since the
    /// last time this was asked: the conversation cannot be written whole.
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    fn note(&mut self, result: crate::error::Result<()>) {
        if let (Err(e), None) = (result, &self.error) {
            self.error = Some(e);
        }
    }

    /// Renders one message record, appending its bytes to `out`.
    pub fn message(&mut self, page: &dyn Page, record: &Record, out: &mut Out) {
        self.close_artifacts(page, out);
        let blocks = record.blocks();
        self.summary.message(record, &blocks);
        self.messages += 1;
        let number = self.messages;
        match record.role() {
            Some(Role::Assistant) => self.assistant(page, out, record, &blocks, number),
            Some(Role::User) => self.user(page, out, record, &blocks, number),
            Some(Role::System) | None if !self.held.is_empty() => {
                page.system(&mut Out::memory(&mut self.deferred), record, number);
            }
            Some(Role::System) | None => {
                self.settle(page, out);
                page.system(out, record, number);
            }
        }
    }

    fn assistant(
        &mut self,
        page: &dyn Page,
        out: &mut Out,
        record: &Record,
        blocks: &[Block],
        number: u64,
    ) {
        self.settle(page, out);
        page.turn_start(out, record, number);
        self.turn_open = true;
        for block in blocks {
            match block {
                Block::ToolUse { id, name, input } => {
                    self.calls += 1;
                    let rendered = match page.call_later(out, name, *input) {
                        Some(work) => Held::later(input.get().len(), work),
                        None => Held::render(|out| page.call(out, name, *input)),
                    };
                    self.held.push(HeldCall {
                        id: id.to_string(),
                        name: name.to_string(),
                        number: self.calls,
                        rendered,
                    });
                }
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => self.answer(page, out, tool_use_id, *content, *is_error, record),
                other => page.block(out, other, false),
            }
        }
    }

    /// Tool results pair with their calls; anything else makes a user
    /// turn.
    fn user(
        &mut self,
        page: &dyn Page,
        out: &mut Out,
        record: &Record,
        blocks: &[Block],
        number: u64,
    ) {
        let mut turn = false;
        for block in blocks {
            match block {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => self.answer(page, out, tool_use_id, *content, *is_error, record),
                _ => turn = true,
            }
        }
        let results_only = !turn && !blocks.is_empty();
        if results_only {
            return;
        }
        self.settle(page, out);
        page.turn_start(out, record, number);
        for block in blocks {
            match block {
                Block::ToolUse { name, input, .. } => {
                    self.calls += 1;
                    page.tool_start(out, Some(self.calls));
                    page.call(out, name, *input);
                    page.no_result(out);
                    page.tool_end(out);
                }
                other => page.block(out, other, true),
            }
        }
        page.turn_end(out);
    }

    fn answer(
        &mut self,
        page: &dyn Page,
        out: &mut Out,
        id: &str,
        content: Option<Raw<'_>>,
        is_error: bool,
        record: &Record,
    ) {
        let damaged = record.damage();
        let view = calls::result_view(content);
        let call = self
            .held
            .iter()
            .position(|call| call.id == id)
            .map(|at| self.held.remove(at));
        // A result whose call was written without one still names it.
        let late = match call {
            Some(_) => None,
            None => self.unanswered.remove(id),
        };
        page.tool_start(out, call.as_ref().map(|call| call.number));
        let call = call.map(|call| {
            let written = call.rendered.write(out);
            self.note(written);
            (call.name, call.number)
        });
        page.result(
            out,
            &ResultOf {
                name: call.as_ref().map(|(name, _)| &**name).or(late.as_deref()),
                call: call.as_ref().map(|(_, number)| *number),
                view,
                is_error,
                damaged,
            },
        );
        page.tool_end(out);
        if self.held.is_empty() && !self.deferred.is_empty() {
            self.settle(page, out);
        }
    }

    /// Writes the calls still held, without results, closes the open turn,
    /// and writes the system messages that waited for the calls: at the
    /// end of the conversation, before its body is taken.
    pub fn settle(&mut self, page: &dyn Page, out: &mut Out) {
        for call in std::mem::take(&mut self.held) {
            page.tool_start(out, Some(call.number));
            let written = call.rendered.write(out);
            self.note(written);
            page.no_result(out);
            page.tool_end(out);
            self.unanswered.insert(call.id, call.name);
        }
        if self.turn_open {
            page.turn_end(out);
            self.turn_open = false;
        }
        out.append(&mut self.deferred);
    }

    /// Renders one artifact record into the artifacts' section, opening
    /// it after the turns.
    pub fn artifact(&mut self, page: &dyn Page, record: &Record, out: &mut Out) {
        self.settle(page, out);
        if !self.artifacts_open {
            page.artifacts_start(out);
            self.artifacts_open = true;
        }
        let name = record.name();
        let time = record.time();
        let text = record.text().unwrap_or(Text::Read(Cow::Borrowed("")));
        page.artifact(
            out,
            name.as_deref().unwrap_or("(unnamed artifact)"),
            time.as_deref(),
            &text,
        );
    }

    fn close_artifacts(&mut self, page: &dyn Page, out: &mut Vec<u8>) {
        if self.artifacts_open {
            page.artifacts_end(out);
            self.artifacts_open = false;
        }
    }

    /// Marks, where it was, an input line that could not be read.
    pub fn unreadable(&mut self, page: &dyn Page, place: &str, error: &str, out: &mut Out) {
        self.summary.unreadable += 1;
        page.unreadable(out, place, error);
    }

    /// Ends the conversation: its summary, and the last bytes of the body
    /// (calls that got no result).
    pub fn finish(mut self, page: &dyn Page) -> (Summary, Vec<u8>) {
        let mut out = Vec::new();
        self.settle(page, &mut Out::memory(&mut out));
        self.close_artifacts(page, &mut out);
        (self.summary, out)
    }
}
