//! The Markdown format: plain CommonMark (with GitHub's tables), no raw
//! HTML of its own, so it reads the same in any renderer or as text.
//!
//! Markdown has nothing to collapse with, so thinking is a quote and tool
//! output is shown whole, in fenced code blocks whose fences outlast any
//! backticks inside. Text from the conversation is Markdown already and is
//! passed through [`markdown::sanitize_markdown`] (text and thinking over
//! [`markdown::MARKDOWN_LIMIT`] are shown as written instead, in a code
//! block); every other string (titles, paths, tool names) is escaped to
//! mean only its characters.

use std::borrow::Cow;
use std::ops::ControlFlow;

use super::body::Out;
use super::calls::{self, CallView, ResultView};
use super::diff::{Diff, Line};
use super::entry::Entry;
use super::escape::{md_fence, md_info, md_inline, Fence};
use super::markdown;
use super::page::{Page, ResultOf};
use super::pretty::Pretty;
use super::stream::{Block, Media, Members, Raw, Record, Role};
use super::summary::{counted, display_time, grouped, Summary};
use super::text::Text;
use crate::time::Timestamp;

#[derive(Default)]
pub struct Markdown;

fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    md_inline(&mut out, text);
    out
}

fn push(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
}

/// A fenced code block of `text` (as [`super::escape::md_code_block`]
/// makes it) and a blank line, written straight into `out`: a copy of a
/// large tool input would cost memory its size.
fn code(out: &mut Vec<u8>, text: &str, info: &str) {
    let fence = md_fence(text);
    push(out, &fence);
    push(out, &md_info(info));
    push(out, "\n");
    push(out, text);
    if !text.ends_with('\n') {
        push(out, "\n");
    }
    push(out, &fence);
    push(out, "\n\n");
}

/// [`code`] of indented JSON, a long one made and written in pieces.
fn json_code(out: &mut Out, json: &Pretty) {
    if json.json_len() > markdown::MARKDOWN_LIMIT {
        long_code(out, &|each| json.pieces(each), "json");
    } else {
        code(out, &json.whole(), "json");
    }
}

/// The pieces of a long text, handed to `each` until it breaks.
type Pieces<'a> = dyn Fn(&mut dyn FnMut(&str) -> ControlFlow<()>) + 'a;

/// [`code`] of a long text, written a piece at a time: a first pass over
/// the pieces finds the fence, the second writes them, each handed on
/// ([`Out::spill`]) before the next is unescaped.
fn long_code(out: &mut Out, pieces: &Pieces, info: &str) {
    let mut fence = Fence::default();
    let mut ends_with_newline = false;
    pieces(&mut |piece| {
        fence.feed(piece);
        ends_with_newline = piece.ends_with('\n');
        ControlFlow::Continue(())
    });
    let fence = fence.fence();
    push(out, &fence);
    push(out, &md_info(info));
    push(out, "\n");
    pieces(&mut |piece| {
        push(out, piece);
        out.spill();
        ControlFlow::Continue(())
    });
    if !ends_with_newline {
        push(out, "\n");
    }
    push(out, &fence);
    push(out, "\n\n");
}

/// The text of a diff in `diff -u` form after `head`, made and handed to
/// `each` in pieces: an Edit rewriting a large file makes a diff as long.
fn diff_text(head: &str, diff: &Diff, each: &mut dyn FnMut(&str) -> ControlFlow<()>) {
    const PIECE: usize = 64 << 10;
    let mut text = String::from(head);
    let mut line_text = String::new();
    for hunk in diff.hunks() {
        text.push_str(&hunk.header);
        text.push('\n');
        for (kind, line) in diff.lines(hunk) {
            text.push(match kind {
                Line::Context => ' ',
                Line::Removed => '-',
                Line::Added => '+',
            });
            text.push_str(line.text(&mut line_text));
            text.push('\n');
            if text.len() >= PIECE {
                if each(&text).is_break() {
                    return;
                }
                text.clear();
            }
        }
    }
    if !text.is_empty() {
        let _ = each(&text);
    }
}

/// Every line of `text` behind `> `.
fn quoted(out: &mut Vec<u8>, text: &str) {
    for line in text.lines() {
        push(out, if line.is_empty() { ">" } else { "> " });
        push(out, line);
        push(out, "\n");
    }
}

fn damage_note(out: &mut Vec<u8>, damage: &Option<Option<Cow<str>>>) {
    let Some(detail) = damage else { return };
    let mut note = String::from("> **Damaged step:** only the part that could be read is shown");
    if let Some(detail) = detail {
        note.push_str(" (");
        note.push_str(&inline(detail));
        note.push(')');
    }
    push(out, &note);
    push(out, ".\n\n");
}

/// A code block's language from a file name's extension, if it has a
/// plain one.
fn language(path: Option<&str>) -> &str {
    let Some((_, ext)) = path.and_then(|p| p.rsplit_once('.')) else {
        return "";
    };
    if ext.len() <= 10 && ext.bytes().all(|b| b.is_ascii_alphanumeric()) {
        ext
    } else {
        ""
    }
}

fn time(at: Option<&str>) -> Option<String> {
    at.and_then(|t| Timestamp::parse(t).ok()).map(display_time)
}

fn record_time(record: &Record) -> Option<String> {
    time(record.timestamp().as_deref())
}

impl Page for Markdown {
    fn extension(&self) -> &'static str {
        "md"
    }

    fn document_start(&self, _out: &mut Vec<u8>, _title: &str) {}

    fn document_end(&self, _out: &mut Vec<u8>) {}

    fn no_conversations(&self, out: &mut Vec<u8>) {
        push(out, "*No conversations in the input.*\n");
    }

    fn conversation_start(&self, out: &mut Vec<u8>, s: &Summary, index_link: bool) {
        push(out, &format!("# {}\n\n", inline(&s.title())));
        if index_link {
            push(out, "[← All conversations](index.md)\n\n");
        }
        push(out, "| | |\n| --- | --- |\n");
        let mut fact = |name: &str, value: &str| {
            push(out, &format!("| {name} | {} |\n", inline(value)));
        };
        fact("Conversation", &s.id);
        if let Some(cwd) = &s.cwd {
            fact("Directory", cwd);
        }
        if let Some(branch) = &s.branch {
            fact("Branch", branch);
        }
        if !s.models.is_empty() {
            fact(
                if s.models.len() == 1 {
                    "Model"
                } else {
                    "Models"
                },
                &s.models.join(", "),
            );
        }
        if let Some(at) = s.started() {
            fact("Started", &display_time(at));
        }
        if let Some(at) = s.last {
            fact("Last message", &display_time(at));
        }
        fact("Turns", &s.turns_line());
        fact("Tokens", &s.tokens_line());
        if let Some(parent) = &s.parent {
            fact("Parent conversation", parent);
        }
        if let Some(fork) = &s.forked_from {
            fact("Forked from", fork);
        }
        push(out, "\n");
        for warning in s.warnings() {
            push(out, &format!("> **Warning:** {}\n\n", inline(&warning)));
        }
    }

    fn conversation_end(&self, out: &mut Vec<u8>) {
        push(out, "---\n\n");
    }

    fn turn_start(&self, out: &mut Vec<u8>, record: &Record, _number: u64) {
        let mut head = vec![match (record.role(), record.is_implicit()) {
            (Some(Role::Assistant), _) => "Assistant".to_string(),
            (_, true) => "User (written by agy)".to_string(),
            _ => "User".to_string(),
        }];
        head.extend(record.model().map(|m| inline(&m)));
        head.extend(record.idx().map(|i| format!("step {i}")));
        head.extend(record_time(record));
        let tokens = record.tokens();
        if !tokens.is_zero() {
            head.push(format!(
                "in {} · out {}",
                grouped(tokens.input),
                grouped(tokens.output)
            ));
        }
        if let Some(stop) = record.stop_reason() {
            if !matches!(&*stop, "end_turn" | "tool_use") {
                head.push(format!("**stopped: {}**", inline(&stop)));
            }
        }
        push(out, &format!("## {}\n\n", head.join(" · ")));
        damage_note(out, &record.damage());
    }

    fn turn_end(&self, _out: &mut Vec<u8>) {}

    fn text(&self, out: &mut Out, text: &Text, _typed: bool) {
        let text = match text {
            Text::Read(text) => text,
            Text::Long(long) => {
                push(
                    out,
                    &format!("*{}*\n\n", markdown::as_written_note(long.bytes())),
                );
                long_code(out, &|each| long.pieces(each), "");
                push(out, "\n");
                return;
            }
        };
        push(out, markdown::sanitize_markdown(text).trim_end());
        push(out, "\n\n");
    }

    /// Thinking over the limit is shown as written, as text is: a note in
    /// the quote, then the thinking in a code block after it.
    fn thinking(&self, out: &mut Out, text: &Text) {
        push(out, "> **Thinking**\n>\n");
        match text {
            Text::Read(text) => {
                quoted(out, &markdown::sanitize_markdown(text));
                push(out, "\n");
            }
            Text::Long(long) => {
                push(
                    out,
                    &format!("> *{}*\n\n", markdown::as_written_note(long.bytes())),
                );
                long_code(out, &|each| long.pieces(each), "");
            }
        }
    }

    fn media(&self, out: &mut Vec<u8>, image: bool, source: &Media) {
        let media_type = source.media_type.as_deref().unwrap_or("unknown type");
        let what = if image { "image" } else { "document" };
        match (&source.data, &source.url) {
            (Some(data), _)
                if image && markdown::media_type_ok(media_type) && markdown::base64_ok(data) =>
            {
                push(
                    out,
                    &format!(
                        "![attached image ({})](data:{media_type};base64,{data})\n\n",
                        inline(media_type)
                    ),
                );
            }
            (Some(_), _) => push(
                out,
                &format!(
                    "*Attached {what} ({}), not shown inline.*\n\n",
                    inline(media_type)
                ),
            ),
            (None, Some(url)) => push(
                out,
                &format!(
                    "*Attached {what} ({}) by reference, not loaded:* {}\n\n",
                    inline(media_type),
                    inline(url)
                ),
            ),
            (None, None) => push(
                out,
                &format!(
                    "*Attached {what} ({}) without data.*\n\n",
                    inline(media_type)
                ),
            ),
        }
    }

    fn other_block(&self, out: &mut Out, block: &Members) {
        let kind = block.string("type");
        push(
            out,
            &format!(
                "*{} block:*\n\n",
                inline(kind.as_deref().unwrap_or("untyped"))
            ),
        );
        json_code(out, &Pretty::of_members(block));
    }

    fn tool_start(&self, _out: &mut Vec<u8>, _number: Option<u64>) {}

    fn call(&self, out: &mut Out, name: &str, input: Raw<'_>) {
        let (view, summary) = calls::show(name, input);
        let mut head = format!("**Tool call: {}**", inline(name));
        if let Some(summary) = summary {
            head.push_str(" · ");
            head.push_str(&inline(&summary));
        }
        push(out, &head);
        push(out, "\n\n");
        let rest = |out: &mut Vec<u8>, rest: &Option<String>| {
            if let Some(rest) = rest {
                push(out, "*Other arguments:*\n\n");
                code(out, rest, "json");
            }
        };
        match &view {
            CallView::Edit {
                path,
                edits,
                rest: others,
            } => {
                for edit in edits {
                    let name = path.as_deref().unwrap_or("file");
                    let head = format!(
                        "--- {name}\n+++ {name}{}\n",
                        if edit.replace_all {
                            " (every occurrence)"
                        } else {
                            ""
                        }
                    );
                    let diff = Diff::of(edit.old, edit.new);
                    long_code(out, &|each| diff_text(&head, &diff, each), "diff");
                }
                rest(out, others);
            }
            CallView::Write {
                path,
                content,
                rest: others,
            } => {
                let language = language(path.as_deref());
                match content {
                    Text::Read(content) => code(out, content, language),
                    Text::Long(long) => long_code(out, &|each| long.pieces(each), language),
                }
                rest(out, others);
            }
            CallView::Json(json) => json_code(out, json),
        }
    }

    fn result(&self, out: &mut Out, result: &ResultOf) {
        let mut head = String::from(if result.is_error {
            "**Error**"
        } else {
            "**Result**"
        });
        if result.call.is_none() {
            match result.name {
                Some(name) => head.push_str(&format!(" of {}", inline(name))),
                None => head.push_str(" of a call not in this conversation"),
            }
        }
        push(out, &head);
        push(out, "\n\n");
        damage_note(out, &result.damaged);
        match &result.view {
            ResultView::Empty => push(out, "*(empty)*\n\n"),
            ResultView::JsonText(body) => match Text::of_json_body(body) {
                Some(Text::Long(long)) => long_code(out, &|each| long.pieces(each), "text"),
                Some(Text::Read(text)) => code(out, &text, "text"),
                // Shown up to the bad escape.
                None => {
                    let mut text = String::with_capacity(body.len());
                    super::escape::unescape_body_into(body, &mut text);
                    code(out, &text, "text");
                }
            },
            ResultView::File { verb, path } => push(out, &format!("{verb} {}\n\n", inline(path))),
            ResultView::Blocks(blocks) => {
                for block in blocks {
                    match Block::of(block) {
                        Block::Text {
                            text: Text::Long(long),
                            ..
                        } => long_code(out, &|each| long.pieces(each), "text"),
                        Block::Text { text, .. } => code(out, &text.read(), "text"),
                        Block::Media { image, source } => self.media(out, image, &source),
                        _ => self.other_block(out, block),
                    }
                }
            }
            ResultView::Json(json) => json_code(out, json),
        }
    }

    fn no_result(&self, out: &mut Vec<u8>) {
        push(out, "*No result recorded.*\n\n");
    }

    fn tool_end(&self, _out: &mut Vec<u8>) {}

    /// A field over the limit is shown as written, as text is: a note in
    /// the quote, then the text in a code block after it.
    fn system(&self, out: &mut Out, record: &Record, _number: u64) {
        let mut head = vec!["System".to_string()];
        head.extend(record.step_type().map(|s| inline(&s)));
        head.extend(record.idx().map(|i| format!("step {i}")));
        head.extend(record_time(record));
        push(out, &format!("> *{}*\n", head.join(" · ")));
        let blocks = record.blocks();
        for block in &blocks {
            if let Block::Text { text, field } = block {
                push(out, ">\n");
                if let Some(field) = field {
                    push(out, &format!("> **{}:**\n>\n", inline(field)));
                }
                match text {
                    Text::Read(text) => quoted(out, &markdown::sanitize_markdown(text)),
                    Text::Long(long) => {
                        push(
                            out,
                            &format!("> *{}*\n\n", markdown::as_written_note(long.bytes())),
                        );
                        long_code(out, &|each| long.pieces(each), "");
                    }
                }
            }
        }
        push(out, "\n");
        damage_note(out, &record.damage());
        for block in &blocks {
            if !matches!(block, Block::Text { .. }) {
                self.block(out, block, false);
            }
        }
    }

    fn unreadable(&self, out: &mut Vec<u8>, place: &str, error: &str) {
        push(
            out,
            &format!(
                "> **Warning:** {}\n\n",
                inline(&format!(
                    "{place}: this input line could not be read: {error}"
                ))
            ),
        );
    }

    fn artifacts_start(&self, out: &mut Vec<u8>) {
        push(out, "## Artifacts\n\n");
    }

    fn artifacts_end(&self, _out: &mut Vec<u8>) {}

    fn artifact(&self, out: &mut Out, name: &str, time: Option<&str>, text: &Text) {
        let mut head = vec![inline(name)];
        head.extend(self::time(time));
        push(out, &format!("### {}\n\n", head.join(" · ")));
        self.text(out, text, false);
    }

    fn index(&self, out: &mut Vec<u8>, entries: &[Entry]) {
        push(
            out,
            &format!(
                "# Conversations\n\n{}, newest first.\n\n",
                counted(entries.len() as u64, "conversation", "conversations")
            ),
        );
        push(out, "| Title | Started | Last message | Turns | Tokens | Model |\n| --- | --- | --- | ---: | ---: | --- |\n");
        for entry in entries {
            let when = |t: &Option<String>| time(t.as_deref()).unwrap_or_default();
            push(
                out,
                &format!(
                    "| [{}]({}) | {} | {} | {} | {} | {} |\n",
                    inline(&entry.title),
                    super::html::file_href(&entry.file),
                    when(&entry.started),
                    when(&entry.last),
                    grouped(entry.turns),
                    grouped(entry.usage.total()),
                    inline(&entry.models.join(", "))
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::markdown::MARKDOWN_LIMIT;

    /// A long text written in pieces is the code block it was written as
    /// whole: a run of backticks across pieces still sets the fence.
    #[test]
    fn a_long_text_in_pieces_is_written_as_the_whole_was() {
        let piece = 64 << 10;
        for end in ["", "\n"] {
            let text = format!(
                "{}{}{}{end}",
                "é".repeat(piece / 2 - 3),
                "`".repeat(10),
                "<a ``` é> 😀\n".repeat(MARKDOWN_LIMIT / 16),
            );
            let mut written = Vec::new();
            Markdown.text(&mut Out::memory(&mut written), &Text::of_str(&text), false);
            let mut whole = Vec::new();
            push(
                &mut whole,
                &format!("*{}*\n\n", markdown::as_written_note(text.len())),
            );
            code(&mut whole, &text, "");
            push(&mut whole, "\n");
            assert!(text.len() > MARKDOWN_LIMIT && whole.starts_with(b"*This text is"));
            assert!(String::from_utf8_lossy(&whole).contains("\n```````````\n"));
            assert!(written == whole, "the pieces differ from the whole");
        }
    }
}
