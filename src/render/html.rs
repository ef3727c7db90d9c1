//! The HTML format: one self-contained page, readable offline, light and
//! dark by `prefers-color-scheme`.
//!
//! Every string from the stream is written through [`escape`](super::escape) (text or
//! attribute), Markdown through [`markdown::to_html`]. The page has no
//! script, no `style` attribute and no URL but `data:` images, links and
//! its own index, and its Content-Security-Policy says so ([`csp`]), so a
//! browser refuses whatever escaping might have missed.

use std::borrow::Cow;
use std::ops::ControlFlow;

use super::body::{Out, Work};
use super::calls::{self, CallView, ResultView};
use super::csp;
use super::diff::{Diff, Line};
use super::entry::Entry;
use super::escape::{html_attr, html_text};
use super::markdown;
use super::page::{Page, ResultOf};
use super::pre::{long_pre, pre, pretty_pre, size, Source, LONG_LINES};
use super::pretty::Pretty;
use super::stream::{Block, Media, Members, Raw, Record, Role};
use super::summary::{counted, display_time, grouped, iso_time, write_grouped, Summary};
use super::text::{LongText, Text};
use crate::stream::json::write_u64;
use crate::time::Timestamp;

pub struct Html {
    policy: String,
}

impl Html {
    pub fn new() -> Html {
        Html {
            policy: csp::policy(),
        }
    }
}

impl Default for Html {
    fn default() -> Html {
        Html::new()
    }
}

fn push(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
}

/// `<tag class="class">escaped text</tag>`
fn element(out: &mut Vec<u8>, tag: &str, class: &str, text: &str) {
    push(out, "<");
    push(out, tag);
    if !class.is_empty() {
        push(out, " class=\"");
        push(out, class);
        push(out, "\"");
    }
    push(out, ">");
    html_text(out, text);
    push(out, "</");
    push(out, tag);
    push(out, ">");
}

fn time(out: &mut Vec<u8>, time: Timestamp) {
    push(out, "<time datetime=\"");
    html_attr(out, &iso_time(time));
    push(out, "\">");
    html_text(out, &display_time(time));
    push(out, "</time>");
}

/// [`time`] of a message's timestamp. The stream's own form, UTC with a
/// `Z`, is written as it stands (checked, not reformatted: a page has one
/// per message); any other valid form is converted.
fn stream_time(out: &mut Vec<u8>, text: &str) {
    stream_time_read(out, text, Timestamp::parse(text).ok());
}

/// [`stream_time`] of a timestamp already read as `parsed` (a record's
/// [`Record::message_time`]).
fn stream_time_read(out: &mut Vec<u8>, text: &str, parsed: Option<Timestamp>) {
    let Some(parsed) = parsed else {
        return;
    };
    let b = text.as_bytes();
    if b.len() >= 20 && b[10] == b'T' && text.ends_with('Z') {
        push(out, "<time datetime=\"");
        push(out, text);
        push(out, "\">");
        push(out, &text[..10]);
        push(out, " ");
        push(out, &text[11..19]);
        push(out, " UTC</time>");
    } else {
        time(out, parsed);
    }
}

/// `text` escaped as it stands; a long text a piece at a time, each
/// handed on before the next.
fn plain_text(out: &mut Out, text: &Text) {
    match text {
        Text::Read(text) => html_text(out, text),
        Text::Long(long) => long.pieces(|piece| {
            html_text(out, piece);
            out.spill();
            ControlFlow::Continue(())
        }),
    }
}

/// A `<pre>` of indented JSON, a long one written in pieces, a large
/// one rendered by the spooling thread when `out` has one.
fn json_pre(out: &mut Out, json: &Pretty) {
    let len = json.json_len();
    if len > markdown::MARKDOWN_LIMIT {
        pretty_pre(out, "json", json);
    } else if handed_over(len) && out.defers() {
        let json = json.to_owned_parts();
        out.defer(
            len,
            Box::new(move |out| pre(out, "json", Source::Text(&json.whole()))),
        );
    } else {
        pre(out, "json", Source::Text(&json.whole()));
    }
}

/// A tool call: its head and how its input shows ([`calls::show`]).
fn call(out: &mut Out, name: &str, input: Raw<'_>) {
    push(out, "<div class=\"call\"><div class=\"tool-head\">");
    element(out, "span", "tool-name", name);
    let (view, head) = calls::show(name, input);
    if let Some(head) = head {
        element(out, "code", "", &head);
    }
    push(out, "</div>");
    match &view {
        CallView::Edit {
            path,
            edits,
            rest: others,
        } => {
            for edit in edits {
                diff(
                    out,
                    path.as_deref(),
                    &Diff::of(edit.old, edit.new),
                    edit.replace_all,
                );
            }
            rest(out, others);
        }
        CallView::Write {
            content,
            rest: others,
            ..
        } => {
            match content {
                Text::Read(content) => pre(out, "file", Source::Text(content)),
                Text::Long(long) => long_pre(out, "file", long),
            }
            rest(out, others);
        }
        CallView::Json(json) => json_pre(out, json),
    }
    push(out, "</div>\n");
}

/// Whether a block of `len` bytes of JSON (a result, a call's input shown
/// as JSON) is rendered by the spooling thread ([`Out::defer`]) when the
/// body has one: large enough that
/// handing it over costs little beside rendering it, and not over
/// [`markdown::MARKDOWN_LIMIT`] (a longer one is written in pieces as it
/// is made, and its copy would wait in the queue). On the large
/// conversation a ninth of the tool results, those of 16 KiB and more,
/// hold nine tenths of their bytes. (A whole call is handed over whatever
/// its size: [`Html::call_later`].)
fn handed_over(len: usize) -> bool {
    (DEFER_AT..=markdown::MARKDOWN_LIMIT).contains(&len)
}

/// The fewest bytes [`handed_over`] hands over.
const DEFER_AT: usize = 16 << 10;

/// A relative URL naming the file `name` in the same directory: every byte
/// but unreserved ones percent-encoded, so a name can be neither a scheme
/// nor a path elsewhere.
pub fn file_href(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.starts_with('.') {
        out.insert_str(0, "./");
    }
    out
}

fn damage_note(out: &mut Vec<u8>, damage: &Option<Option<Cow<str>>>) {
    let Some(detail) = damage else { return };
    push(
        out,
        "<p class=\"warning\">Damaged step: only the part that could be read is shown",
    );
    if let Some(detail) = detail {
        push(out, " (");
        html_text(out, detail);
        push(out, ")");
    }
    push(out, ".</p>");
}

/// An edit as a diff, its lines unescaped one at a time from the line and
/// handed on as they are written.
fn diff(out: &mut Out, path: Option<&str>, diff: &Diff, replace_all: bool) {
    let (lines, added) = diff.counts();
    let collapsed = lines > LONG_LINES * 3;
    if collapsed {
        push(out, "<details class=\"more\"><summary>");
        html_text(
            out,
            &format!(
                "diff: {} lines added, {} removed",
                grouped(added as u64),
                grouped((lines - added) as u64)
            ),
        );
        push(out, "</summary>");
    }
    push(out, "<pre class=\"diff\">\n");
    let name = path.unwrap_or("file");
    push(out, "<span class=\"file\">--- ");
    html_text(out, name);
    push(out, "</span><span class=\"file\">+++ ");
    html_text(out, name);
    if replace_all {
        push(out, " (every occurrence)");
    }
    push(out, "</span>");
    if diff.hunks().is_empty() {
        push(
            out,
            "<span class=\"hunk\">(old and new text are the same)</span>",
        );
    }
    let mut text = String::new();
    for hunk in diff.hunks() {
        push(out, "<span class=\"hunk\">");
        html_text(out, &hunk.header);
        push(out, "</span>");
        for (kind, line) in diff.lines(hunk) {
            let (class, sign) = match kind {
                Line::Context => ("ctx", " "),
                Line::Removed => ("del", "-"),
                Line::Added => ("add", "+"),
            };
            push(out, "<span class=\"");
            push(out, class);
            push(out, "\">");
            push(out, sign);
            html_text(out, line.text(&mut text));
            push(out, "</span>");
            out.spill();
        }
    }
    push(out, "</pre>");
    if collapsed {
        push(out, "</details>");
    }
}

/// Extra arguments of an Edit or Write, collapsed.
fn rest(out: &mut Vec<u8>, rest: &Option<String>) {
    if let Some(rest) = rest {
        push(
            out,
            "<details class=\"more\"><summary>other arguments</summary>",
        );
        pre(out, "json", Source::Text(rest));
        push(out, "</details>");
    }
}

impl Page for Html {
    fn extension(&self) -> &'static str {
        "html"
    }

    fn document_start(&self, out: &mut Vec<u8>, title: &str) {
        push(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        );
        push(
            out,
            "<meta http-equiv=\"Content-Security-Policy\" content=\"",
        );
        html_attr(out, &self.policy);
        push(
            out,
            "\">\n<meta name=\"referrer\" content=\"no-referrer\">\n",
        );
        push(
            out,
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        );
        push(out, "<meta name=\"color-scheme\" content=\"light dark\">\n");
        push(
            out,
            "<meta name=\"generator\" content=\"agy-render\">\n<title>",
        );
        html_text(out, title);
        push(out, "</title>\n<style>");
        push(out, csp::STYLE);
        push(out, "</style>\n</head>\n<body>\n");
    }

    fn document_end(&self, out: &mut Vec<u8>) {
        push(out, "</body>\n</html>\n");
    }

    fn no_conversations(&self, out: &mut Vec<u8>) {
        push(out, "<article class=\"conversation\"><p class=\"note\">No conversations in the input.</p></article>\n");
    }

    fn conversation_start(&self, out: &mut Vec<u8>, s: &Summary, index_link: bool) {
        push(
            out,
            "<article class=\"conversation\">\n<header class=\"conversation\">\n",
        );
        if index_link {
            push(
                out,
                "<nav class=\"back\"><a href=\"index.html\">← All conversations</a></nav>\n",
            );
        }
        element(out, "h1", "", &s.title());
        push(out, "\n<dl class=\"facts\">\n");
        let fact = |out: &mut Vec<u8>, name: &str, value: &str, code: bool| {
            element(out, "dt", "", name);
            push(out, "<dd>");
            if code {
                element(out, "code", "", value);
            } else {
                html_text(out, value);
            }
            push(out, "</dd>\n");
        };
        fact(out, "Conversation", &s.id, true);
        if let Some(cwd) = &s.cwd {
            fact(out, "Directory", cwd, true);
        }
        if let Some(branch) = &s.branch {
            fact(out, "Branch", branch, true);
        }
        if !s.models.is_empty() {
            let name = if s.models.len() == 1 {
                "Model"
            } else {
                "Models"
            };
            fact(out, name, &s.models.join(", "), false);
        }
        for (name, at) in [("Started", s.started()), ("Last message", s.last)] {
            if let Some(at) = at {
                element(out, "dt", "", name);
                push(out, "<dd>");
                time(out, at);
                push(out, "</dd>\n");
            }
        }
        fact(out, "Turns", &s.turns_line(), false);
        fact(out, "Tokens", &s.tokens_line(), false);
        if let Some(parent) = &s.parent {
            fact(out, "Parent conversation", parent, true);
        }
        if let Some(fork) = &s.forked_from {
            fact(out, "Forked from", fork, true);
        }
        push(out, "</dl>\n");
        for warning in s.warnings() {
            element(out, "p", "warning", &warning);
            push(out, "\n");
        }
        push(out, "</header>\n<div class=\"messages\">\n");
    }

    fn conversation_end(&self, out: &mut Vec<u8>) {
        push(out, "</div>\n</article>\n");
    }

    fn turn_start(&self, out: &mut Vec<u8>, record: &Record, number: u64) {
        let assistant = record.role() == Some(Role::Assistant);
        let damage = record.damage();
        push(out, "<section class=\"turn ");
        push(out, if assistant { "assistant" } else { "user" });
        if damage.is_some() {
            push(out, " damaged");
        }
        push(out, "\" id=\"m");
        write_u64(out, number);
        push(out, "\">\n<div class=\"who\">");
        let role = match (assistant, record.is_implicit()) {
            (true, _) => "Assistant",
            (false, true) => "User (written by agy)",
            (false, false) => "User",
        };
        element(out, "span", "role", role);
        if let Some(model) = record.model() {
            element(out, "span", "model", &model);
        }
        if let Some(idx) = record.idx() {
            push(out, "<span>step ");
            write_u64(out, idx);
            push(out, "</span>");
        }
        if let Some(at) = record.timestamp() {
            stream_time_read(out, &at, record.message_time());
        }
        let tokens = record.tokens();
        if !tokens.is_zero() {
            // Digits, commas and words: nothing to escape.
            push(out, "<span class=\"usage\">in ");
            write_grouped(out, tokens.input);
            push(out, " · out ");
            write_grouped(out, tokens.output);
            if tokens.cache_read > 0 || tokens.cache_creation > 0 {
                push(out, " · cache ");
                write_grouped(out, tokens.cache_read);
                push(out, " read, ");
                write_grouped(out, tokens.cache_creation);
                push(out, " written");
            }
            push(out, "</span>");
        }
        if let Some(stop) = record.stop_reason() {
            if !matches!(&*stop, "end_turn" | "tool_use") {
                element(out, "span", "badge error", &format!("stopped: {stop}"));
            }
        }
        push(out, "</div>\n");
        damage_note(out, &damage);
    }

    fn turn_end(&self, out: &mut Vec<u8>) {
        push(out, "</section>\n");
    }

    fn text(&self, out: &mut Out, text: &Text, typed: bool) {
        match text {
            Text::Read(read) => {
                push(out, "<div class=\"md\">");
                markdown::to_html(out, read, typed);
                push(out, "</div>\n");
            }
            Text::Long(long) => {
                push(out, "<p class=\"note\">");
                html_text(out, &markdown::as_written_note(long.bytes()));
                push(out, "</p><div class=\"plain\">");
                plain_text(out, text);
                push(out, "</div>\n");
            }
        }
    }

    fn thinking(&self, out: &mut Out, text: &Text) {
        push(out, "<details class=\"thinking\"><summary>");
        html_text(out, &format!("Thinking ({})", size(text.bytes())));
        push(out, "</summary><div class=\"plain\">");
        plain_text(out, text);
        push(out, "</div></details>\n");
    }

    fn media(&self, out: &mut Vec<u8>, image: bool, source: &Media) {
        let media_type = source.media_type.as_deref().unwrap_or("unknown type");
        let what = if image { "image" } else { "document" };
        match (&source.data, &source.url) {
            (Some(data), _)
                if image && markdown::media_type_ok(media_type) && markdown::base64_ok(data) =>
            {
                push(out, "<figure class=\"image\"><img alt=\"");
                html_attr(out, &format!("attached image ({media_type})"));
                push(out, "\" src=\"data:");
                push(out, media_type);
                push(out, ";base64,");
                push(out, data);
                push(out, "\"><figcaption>");
                html_text(out, &format!("{media_type}, {}", size(data.len() / 4 * 3)));
                push(out, "</figcaption></figure>\n");
            }
            (Some(data), _) => {
                push(out, "<p class=\"note\">");
                html_text(
                    out,
                    &format!(
                        "Attached {what} ({media_type}, {}), not shown inline.",
                        size(data.len() / 4 * 3)
                    ),
                );
                push(out, "</p>\n");
            }
            (None, Some(url)) => {
                push(out, "<p class=\"note\">");
                html_text(
                    out,
                    &format!("Attached {what} ({media_type}) by reference, not loaded: "),
                );
                element(out, "code", "", url);
                push(out, "</p>\n");
            }
            (None, None) => {
                push(out, "<p class=\"note\">");
                html_text(
                    out,
                    &format!("Attached {what} ({media_type}) without data."),
                );
                push(out, "</p>\n");
            }
        }
    }

    fn other_block(&self, out: &mut Out, block: &Members) {
        let kind = block.string("type");
        push(out, "<details class=\"more\"><summary>");
        html_text(
            out,
            &format!("{} block", kind.as_deref().unwrap_or("untyped")),
        );
        push(out, "</summary>");
        json_pre(out, &Pretty::of_members(block));
        push(out, "</details>\n");
    }

    fn tool_start(&self, out: &mut Vec<u8>, number: Option<u64>) {
        match number {
            Some(number) => {
                push(out, "<div class=\"tool\" id=\"t");
                write_u64(out, number);
                push(out, "\">\n");
            }
            None => push(out, "<div class=\"tool\">\n"),
        }
    }

    fn call(&self, out: &mut Out, name: &str, input: Raw<'_>) {
        call(out, name, input);
    }

    /// Once `out` has a spooling thread, every call but one over
    /// [`markdown::MARKDOWN_LIMIT`] (written in pieces as it is made, and
    /// its copy would wait in the queue): the small ones too, unlike
    /// results ([`handed_over`]). A call is held
    /// until its result comes, so its copy is made either way (into the
    /// bytes rendered now, or of its input), and of the large
    /// conversation's 23,800 calls 22,000 are under 256 bytes: rendered
    /// here, they were a sixth of the rendering thread's time while the
    /// spooling thread had room. Handed over, the run took 0.81 -> 0.72x
    /// agy-decode's time. Handing over results under [`DEFER_AT`] too
    /// loaded that thread past the rendering one (0.74x).
    fn call_later(&self, out: &Out, name: &str, input: Raw<'_>) -> Option<Work> {
        if !out.defers() || input.get().len() > markdown::MARKDOWN_LIMIT {
            return None;
        }
        let (name, input) = (name.to_string(), input.to_owned_raw());
        Some(Box::new(move |buf| {
            call(&mut Out::memory(buf), &name, input.get())
        }))
    }

    fn result(&self, out: &mut Out, result: &ResultOf) {
        push(out, "<div class=\"result");
        if result.is_error {
            push(out, " error");
        }
        if result.damaged.is_some() {
            push(out, " damaged");
        }
        push(out, "\"><div class=\"tool-head\">");
        element(
            out,
            "span",
            "",
            if result.is_error { "Error" } else { "Result" },
        );
        if result.call.is_none() {
            if let Some(name) = result.name {
                element(out, "span", "", &format!("of {name}"));
            } else {
                element(out, "span", "", "of a call not in this conversation");
            }
        }
        push(out, "</div>");
        damage_note(out, &result.damaged);
        match &result.view {
            ResultView::Empty => push(out, "<p class=\"note\">(empty)</p>"),
            ResultView::JsonText(body) => match LongText::of_json_body(body) {
                Some(long) => long_pre(out, "", &long),
                None if handed_over(body.len()) && out.defers() => {
                    let body = body.to_string();
                    let size = body.len();
                    out.defer(size, Box::new(move |out| pre(out, "", Source::Json(&body))));
                }
                None => pre(out, "", Source::Json(body)),
            },
            ResultView::File { verb, path } => {
                push(out, "<p>");
                html_text(out, &format!("{verb} "));
                element(out, "code", "", path);
                push(out, "</p>");
            }
            ResultView::Blocks(blocks) => {
                for block in blocks {
                    match Block::of(block) {
                        Block::Text {
                            text: Text::Long(long),
                            ..
                        } => long_pre(out, "", &long),
                        Block::Text { text, .. } => pre(out, "", Source::Text(&text.read())),
                        Block::Media { image, source } => self.media(out, image, &source),
                        _ => self.other_block(out, block),
                    }
                }
            }
            ResultView::Json(json) => json_pre(out, json),
        }
        push(out, "</div>\n");
    }

    fn no_result(&self, out: &mut Vec<u8>) {
        push(
            out,
            "<div class=\"result\"><p class=\"note\">No result recorded.</p></div>\n",
        );
    }

    fn tool_end(&self, out: &mut Vec<u8>) {
        push(out, "</div>\n");
    }

    fn system(&self, out: &mut Out, record: &Record, number: u64) {
        let damage = record.damage();
        push(out, "<section class=\"system");
        if damage.is_some() {
            push(out, " damaged");
        }
        push(out, "\" id=\"m");
        write_u64(out, number);
        push(out, "\"><div class=\"who\">");
        element(out, "span", "role", "System");
        if let Some(step_type) = record.step_type() {
            element(out, "span", "mono", &step_type);
        }
        if let Some(idx) = record.idx() {
            push(out, "<span>step ");
            write_u64(out, idx);
            push(out, "</span>");
        }
        if let Some(at) = record.timestamp() {
            stream_time_read(out, &at, record.message_time());
        }
        push(out, "</div>");
        damage_note(out, &damage);
        let blocks = record.blocks();
        let texts: Vec<_> = blocks
            .iter()
            .filter_map(|block| match block {
                Block::Text { text, field } => Some((field, text)),
                _ => None,
            })
            .collect();
        if !texts.is_empty() {
            push(out, "<dl>");
            for (field, text) in texts {
                if let Some(field) = field {
                    element(out, "dt", "", field);
                }
                push(out, "<dd>");
                plain_text(out, text);
                push(out, "</dd>");
            }
            push(out, "</dl>");
        }
        for block in &blocks {
            if !matches!(block, Block::Text { .. }) {
                self.block(out, block, false);
            }
        }
        push(out, "</section>\n");
    }

    fn unreadable(&self, out: &mut Vec<u8>, place: &str, error: &str) {
        push(out, "<p class=\"warning\">");
        html_text(
            out,
            &format!("{place}: this input line could not be read: {error}"),
        );
        push(out, "</p>\n");
    }

    fn artifacts_start(&self, out: &mut Vec<u8>) {
        push(out, "<section class=\"artifacts\">\n<h2>Artifacts</h2>\n");
    }

    fn artifacts_end(&self, out: &mut Vec<u8>) {
        push(out, "</section>\n");
    }

    fn artifact(&self, out: &mut Out, name: &str, time: Option<&str>, text: &Text) {
        push(out, "<details class=\"artifact\" open><summary>");
        element(out, "span", "mono", name);
        if let Some(at) = time {
            push(out, " ");
            stream_time(out, at);
        }
        push(out, "</summary>");
        self.text(out, text, false);
        push(out, "</details>\n");
    }

    fn index(&self, out: &mut Vec<u8>, entries: &[Entry]) {
        self.document_start(out, "agy conversations");
        push(out, "<article class=\"conversation\">\n<header class=\"conversation\">\n<h1>Conversations</h1>\n<p class=\"note\">");
        html_text(
            out,
            &format!(
                "{}, newest first.",
                counted(entries.len() as u64, "conversation", "conversations")
            ),
        );
        push(out, "</p>\n</header>\n<table class=\"index\">\n<thead><tr><th>Title</th><th>Started</th><th>Last message</th><th class=\"num\">Turns</th><th class=\"num\">Tokens</th><th>Model</th></tr></thead>\n<tbody>\n");
        for entry in entries {
            push(out, "<tr><td class=\"title\"><a href=\"");
            html_attr(out, &file_href(&entry.file));
            push(out, "\">");
            html_text(out, &entry.title);
            push(out, "</a></td>");
            for at in [&entry.started, &entry.last] {
                push(out, "<td>");
                if let Some(at) = at.as_deref().and_then(|t| Timestamp::parse(t).ok()) {
                    time(out, at);
                }
                push(out, "</td>");
            }
            element(out, "td", "num", &grouped(entry.turns));
            element(out, "td", "num", &grouped(entry.usage.total()));
            element(out, "td", "", &entry.models.join(", "));
            push(out, "</tr>\n");
        }
        push(out, "</tbody>\n</table>\n</article>\n");
        self.document_end(out);
    }
}

#[cfg(test)]
mod tests;
