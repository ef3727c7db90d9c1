//! One conversation walked message by message: the order and nesting of
//! the page, whatever its format.
//!
//! A turn holds its text, then its tool calls, each beside its result. The
//! stream gives a call in the assistant's message and its result in a later
//! user message, so a call is rendered when it is read and held (as bytes)
//! until its result comes; then the two are written together. A call still
//! waiting when anything but a result comes is written with "no result".
//! So what is held is at most the calls of one assistant message.
//!
//! Everything else goes straight to the body spool (memory up to a MiB,
//! then an unlinked temporary file): the header, which needs the meta
//! record that comes last, is written before the body when the
//! conversation ends.

use std::collections::HashMap;

use super::page::{Page, ResultOf};
use super::stream::{Block, Record, Role};
use super::summary::Summary;
use crate::error::Result;
use crate::spool::Spool;

struct HeldCall {
    id: String,
    name: String,
    number: u64,
    rendered: Vec<u8>,
}

pub struct Conversation {
    pub summary: Summary,
    body: Spool,
    scratch: Vec<u8>,
    held: Vec<HeldCall>,
    /// Calls written without a result: id to name, so a result that comes
    /// late can still say whose it is.
    unanswered: HashMap<String, String>,
    turn_open: bool,
    messages: u64,
    calls: u64,
}

impl Conversation {
    pub fn new(id: &str) -> Conversation {
        Conversation {
            summary: Summary::new(id),
            body: Spool::default(),
            scratch: Vec::new(),
            held: Vec::new(),
            unanswered: HashMap::new(),
            turn_open: false,
            messages: 0,
            calls: 0,
        }
    }

    /// Renders one message record.
    pub fn message(&mut self, page: &dyn Page, record: &Record) -> Result<()> {
        self.summary.message(record);
        self.messages += 1;
        let number = self.messages;
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        match record.role() {
            Some(Role::Assistant) => self.assistant(page, &mut out, record, number),
            Some(Role::User) => self.user(page, &mut out, record, number),
            Some(Role::System) | None => {
                self.settle(page, &mut out);
                page.system(&mut out, record, number);
            }
        }
        let written = self.body.append(&out);
        self.scratch = out;
        written
    }

    fn assistant(&mut self, page: &dyn Page, out: &mut Vec<u8>, record: &Record, number: u64) {
        self.settle(page, out);
        page.turn_start(out, record, number);
        self.turn_open = true;
        for block in record.blocks().iter() {
            match block {
                Block::Text(text) => page.text(out, text, false),
                Block::Thinking(text) => page.thinking(out, text),
                Block::ToolUse { id, name, input } => {
                    self.calls += 1;
                    let mut rendered = Vec::new();
                    page.call(&mut rendered, name, input, self.calls);
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
                } => self.answer(page, out, tool_use_id, content, is_error, record),
                Block::Media { image, source } => page.media(out, image, source),
                Block::Other(value) => page.other_block(out, value),
            }
        }
    }

    /// Tool results pair with their calls; anything else makes a user
    /// turn.
    fn user(&mut self, page: &dyn Page, out: &mut Vec<u8>, record: &Record, number: u64) {
        let blocks = record.blocks();
        let mut turn = false;
        for block in blocks.iter() {
            match block {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => self.answer(page, out, tool_use_id, content, is_error, record),
                _ => turn = true,
            }
        }
        let results_only = !turn && blocks.iter().next().is_some();
        if results_only {
            return;
        }
        self.settle(page, out);
        page.turn_start(out, record, number);
        for block in blocks.iter() {
            match block {
                Block::Text(text) => page.text(out, text, true),
                Block::Thinking(text) => page.thinking(out, text),
                Block::ToolUse { name, input, .. } => {
                    self.calls += 1;
                    page.tool_start(out, Some(self.calls));
                    page.call(out, name, input, self.calls);
                    page.no_result(out);
                    page.tool_end(out);
                }
                Block::ToolResult { .. } => {}
                Block::Media { image, source } => page.media(out, image, source),
                Block::Other(value) => page.other_block(out, value),
            }
        }
        page.turn_end(out);
    }

    fn answer(
        &mut self,
        page: &dyn Page,
        out: &mut Vec<u8>,
        id: &str,
        content: &serde_json::Value,
        is_error: bool,
        record: &Record,
    ) {
        let damaged = record.damage();
        match self.held.iter().position(|call| call.id == id) {
            Some(at) => {
                let call = self.held.remove(at);
                page.tool_start(out, Some(call.number));
                out.extend_from_slice(&call.rendered);
                page.result(
                    out,
                    &ResultOf {
                        name: Some(&call.name),
                        call: Some(call.number),
                        content,
                        is_error,
                        damaged,
                    },
                );
                page.tool_end(out);
            }
            None => {
                let name = self.unanswered.remove(id);
                page.tool_start(out, None);
                page.result(
                    out,
                    &ResultOf {
                        name: name.as_deref(),
                        call: None,
                        content,
                        is_error,
                        damaged,
                    },
                );
                page.tool_end(out);
            }
        }
    }

    /// Writes the calls still held, without results, and closes the open
    /// turn.
    fn settle(&mut self, page: &dyn Page, out: &mut Vec<u8>) {
        for call in self.held.drain(..) {
            page.tool_start(out, Some(call.number));
            out.extend_from_slice(&call.rendered);
            page.no_result(out);
            page.tool_end(out);
            self.unanswered.insert(call.id, call.name);
        }
        if self.turn_open {
            page.turn_end(out);
            self.turn_open = false;
        }
    }

    /// Marks, where it was, an input line that could not be read.
    pub fn unreadable(&mut self, page: &dyn Page, place: &str, error: &str) -> Result<()> {
        self.summary.unreadable += 1;
        let mut out = Vec::new();
        page.unreadable(&mut out, place, error);
        self.body.append(&out)
    }

    /// Ends the body; the summary and body are the page's parts.
    pub fn finish(mut self, page: &dyn Page) -> Result<(Summary, Spool)> {
        let mut out = Vec::new();
        self.settle(page, &mut out);
        self.body.append(&out)?;
        Ok((self.summary, self.body))
    }
}
