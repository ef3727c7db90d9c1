//! What an output format writes: the contract between the conversation
//! walker ([`super::conversation`]) and the HTML and Markdown writers.
//!
//! Every method appends to a byte buffer and cannot fail: the walker owns
//! the I/O. The walker decides order and nesting (a turn holds its text,
//! then its tool calls, each paired with its result); a format only says
//! how each piece looks.

use std::borrow::Cow;

use super::body::{Out, Work};
use super::calls::ResultView;
use super::entry::Entry;
use super::stream::{Block, Media, Members, Raw, Record};
use super::summary::Summary;
use super::text::Text;

/// A tool result as the walker hands it over: with the call's name and
/// number when the call was seen.
pub struct ResultOf<'a> {
    pub name: Option<&'a str>,
    pub call: Option<u64>,
    pub view: ResultView<'a>,
    pub is_error: bool,
    /// The message the result came in was marked damaged.
    pub damaged: Option<Option<Cow<'a, str>>>,
}

pub trait Page {
    /// The file name extension of a page, without the dot.
    fn extension(&self) -> &'static str;

    /// What comes before the first conversation (for HTML the head, with
    /// the policy and the stylesheet); `title` is the first conversation's.
    fn document_start(&self, out: &mut Vec<u8>, title: &str);
    fn document_end(&self, out: &mut Vec<u8>);
    /// The note of a document without conversations.
    fn no_conversations(&self, out: &mut Vec<u8>);

    /// A conversation's header. `index_link`: the page lives beside an
    /// index it can link back to.
    fn conversation_start(&self, out: &mut Vec<u8>, summary: &Summary, index_link: bool);
    fn conversation_end(&self, out: &mut Vec<u8>);

    /// A user or assistant turn: who, when, which model, its usage, and a
    /// mark when the message is damaged. `number` counts the messages of
    /// the conversation from 1.
    fn turn_start(&self, out: &mut Vec<u8>, record: &Record, number: u64);
    fn turn_end(&self, out: &mut Vec<u8>);

    /// Text as Markdown. `typed`: a person wrote it, so its line breaks
    /// are kept.
    fn text(&self, out: &mut Out, text: &Text, typed: bool);
    /// The model's thinking, collapsed.
    fn thinking(&self, out: &mut Out, text: &Text);
    /// An image or document.
    fn media(&self, out: &mut Vec<u8>, image: bool, source: &Media);
    /// A block of a type nothing here knows.
    fn other_block(&self, out: &mut Out, block: &Members);

    /// A block shown where it stands: a call alone (without its result,
    /// which pairing is the walker's) and a tool result not at all. The one
    /// place that says which method shows which kind of block.
    fn block(&self, out: &mut Out, block: &Block, typed: bool) {
        match block {
            Block::Text { text, .. } => self.text(out, text, typed),
            Block::Thinking(text) => self.thinking(out, text),
            Block::ToolUse { name, input, .. } => self.call(out, name, *input),
            Block::ToolResult { .. } => {}
            Block::Media { image, source } => self.media(out, *image, source),
            Block::Other(members) => self.other_block(out, members),
        }
    }

    /// Opens the pairing of call number `number` (none for a result whose
    /// call was not seen) and its result.
    fn tool_start(&self, out: &mut Vec<u8>, number: Option<u64>);
    fn call(&self, out: &mut Out, name: &str, input: Raw<'_>);
    /// [`Page::call`] as work for [`Out::defer`], with what it reads
    /// copied, when the format renders calls so, `out` has another thread
    /// to do it ([`Out::defers`]: without one the copy would be for
    /// nothing) and this one's copy would not matter; `None` to render it
    /// in place.
    fn call_later(&self, _out: &Out, _name: &str, _input: Raw<'_>) -> Option<Work> {
        None
    }
    fn result(&self, out: &mut Out, result: &ResultOf);
    /// In place of the result of a call that got none.
    fn no_result(&self, out: &mut Vec<u8>);
    fn tool_end(&self, out: &mut Vec<u8>);

    /// A system message (agy-decode --all), dimmed.
    fn system(&self, out: &mut Out, record: &Record, number: u64);
    /// In place of an input line that could not be read.
    fn unreadable(&self, out: &mut Vec<u8>, place: &str, error: &str);

    /// Opens and closes the section of the conversation's artifacts (its
    /// plan, task list, walkthrough), which follows its turns.
    fn artifacts_start(&self, out: &mut Vec<u8>);
    fn artifacts_end(&self, out: &mut Vec<u8>);
    /// One artifact: its file name, its time if known, its Markdown,
    /// rendered as the assistant's text is.
    fn artifact(&self, out: &mut Out, name: &str, time: Option<&str>, text: &Text);

    /// A whole index document of `entries`, already in order.
    fn index(&self, out: &mut Vec<u8>, entries: &[Entry]);
}
