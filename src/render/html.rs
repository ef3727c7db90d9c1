//! The HTML format: one self-contained page, readable offline, light and
//! dark by `prefers-color-scheme`.
//!
//! Every string from the stream is written through [`escape`] (text or
//! attribute), Markdown through [`markdown::to_html`]. The page has no
//! script, no `style` attribute and no URL but `data:` images, links and
//! its own index, and its Content-Security-Policy says so ([`csp`]), so a
//! browser refuses whatever escaping might have missed.

use serde_json::Value;

use super::calls::{self, CallView, ResultView};
use super::csp;
use super::diff::{Hunk, Line};
use super::escape::{html_attr, html_text};
use super::markdown;
use super::page::{Page, ResultOf};
use super::site::Entry;
use super::stream::{Block, Blocks, Record, Role};
use super::summary::{display_time, grouped, iso_time, Summary};
use crate::time::Timestamp;

/// Text longer than this many lines, or bytes, is collapsed after a
/// preview of [`PREVIEW_LINES`].
const LONG_LINES: usize = 24;
const LONG_BYTES: usize = 4000;
const PREVIEW_LINES: usize = 10;

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

/// A `<pre>` of `text`; long text shows its first lines and collapses the
/// rest. The newline after `<pre>` is the one HTML drops, so text that
/// starts with a newline keeps it.
fn pre(out: &mut Vec<u8>, class: &str, text: &str) {
    let open = |out: &mut Vec<u8>| {
        push(out, "<pre");
        if !class.is_empty() {
            push(out, " class=\"");
            push(out, class);
            push(out, "\"");
        }
        push(out, ">\n");
    };
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
    if lines <= LONG_LINES && text.len() <= LONG_BYTES {
        open(out);
        html_text(out, text);
        push(out, "</pre>");
        return;
    }
    // The preview ends after PREVIEW_LINES lines, or at a character
    // boundary near LONG_BYTES / 4 for text of few, long lines.
    let mut cut = memchr::memchr_iter(b'\n', text.as_bytes())
        .nth(PREVIEW_LINES - 1)
        .map_or(text.len(), |at| at + 1);
    if cut > LONG_BYTES / 4 {
        cut = LONG_BYTES / 4;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
    }
    let (head, rest) = text.split_at(cut);
    open(out);
    html_text(out, head);
    push(out, "</pre><details class=\"more\"><summary>");
    let rest_lines = memchr::memchr_iter(b'\n', rest.as_bytes()).count() + 1;
    html_text(
        out,
        &format!(
            "{} more lines ({} of {})",
            grouped(rest_lines as u64),
            size(rest.len()),
            size(text.len())
        ),
    );
    push(out, "</summary>");
    open(out);
    html_text(out, rest);
    push(out, "</pre></details>");
}

/// `1.2 KB`, `3.4 MB`: decimal units.
fn size(bytes: usize) -> String {
    match bytes {
        0..=999 => format!("{bytes} B"),
        1_000..=999_999 => format!("{:.1} KB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

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

fn damage_note(out: &mut Vec<u8>, damage: Option<Option<&str>>) {
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

fn diff(out: &mut Vec<u8>, path: Option<&str>, hunks: &[Hunk], replace_all: bool) {
    let lines: usize = hunks.iter().map(|h| h.lines.len()).sum();
    let collapsed = lines > LONG_LINES * 3;
    if collapsed {
        let added = hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|(k, _)| *k == Line::Added)
            .count();
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
    if hunks.is_empty() {
        push(
            out,
            "<span class=\"hunk\">(old and new text are the same)</span>",
        );
    }
    for hunk in hunks {
        push(out, "<span class=\"hunk\">");
        html_text(out, &hunk.header);
        push(out, "</span>");
        for (kind, line) in &hunk.lines {
            let (class, sign) = match kind {
                Line::Context => ("ctx", " "),
                Line::Removed => ("del", "-"),
                Line::Added => ("add", "+"),
            };
            push(out, "<span class=\"");
            push(out, class);
            push(out, "\">");
            push(out, sign);
            html_text(out, line);
            push(out, "</span>");
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
        pre(out, "json", rest);
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
        let mut turns = format!(
            "{} user, {} assistant; {} tool calls",
            grouped(s.user_turns),
            grouped(s.assistant_turns),
            grouped(s.tool_calls)
        );
        if s.tool_errors > 0 {
            turns.push_str(&format!(", {} failed", grouped(s.tool_errors)));
        }
        if s.system_messages > 0 {
            turns.push_str(&format!("; {} system messages", grouped(s.system_messages)));
        }
        fact(out, "Turns", &turns, false);
        let t = &s.tokens;
        fact(
            out,
            "Tokens",
            &format!(
                "{} in total: input {}, output {}, cache write {}, cache read {}",
                grouped(t.total()),
                grouped(t.input),
                grouped(t.output),
                grouped(t.cache_creation),
                grouped(t.cache_read)
            ),
            false,
        );
        if let Some(parent) = &s.parent {
            fact(out, "Parent conversation", parent, true);
        }
        if let Some(fork) = &s.forked_from {
            fact(out, "Forked from", fork, true);
        }
        push(out, "</dl>\n");
        if !s.meta_seen {
            push(out, "<p class=\"warning\">The stream held no meta record for this conversation: title, directory and branch are unknown.</p>\n");
        }
        if s.damaged > 0 {
            push(out, "<p class=\"warning\">");
            html_text(
                out,
                &format!("{} damaged steps are marked below.", grouped(s.damaged)),
            );
            push(out, "</p>\n");
        }
        if s.unreadable > 0 {
            push(out, "<p class=\"warning\">");
            html_text(
                out,
                &format!(
                    "{} input lines could not be read; each is marked where it was.",
                    grouped(s.unreadable)
                ),
            );
            push(out, "</p>\n");
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
        push(out, &format!("\" id=\"m{number}\">\n<div class=\"who\">"));
        let role = match (assistant, record.is_implicit()) {
            (true, _) => "Assistant",
            (false, true) => "User (written by agy)",
            (false, false) => "User",
        };
        element(out, "span", "role", role);
        if let Some(model) = record.model() {
            element(out, "span", "model", model);
        }
        if let Some(at) = record.timestamp().and_then(|t| Timestamp::parse(t).ok()) {
            time(out, at);
        }
        let tokens = record.tokens();
        if !tokens.is_zero() {
            let mut usage = format!(
                "in {} · out {}",
                grouped(tokens.input),
                grouped(tokens.output)
            );
            if tokens.cache_read > 0 || tokens.cache_creation > 0 {
                usage.push_str(&format!(
                    " · cache {} read, {} written",
                    grouped(tokens.cache_read),
                    grouped(tokens.cache_creation)
                ));
            }
            element(out, "span", "usage", &usage);
        }
        if let Some(stop) = super::stream::text(&record.stop_reason) {
            if !matches!(stop, "end_turn" | "tool_use") {
                element(out, "span", "badge error", &format!("stopped: {stop}"));
            }
        }
        push(out, "</div>\n");
        damage_note(out, damage);
    }

    fn turn_end(&self, out: &mut Vec<u8>) {
        push(out, "</section>\n");
    }

    fn text(&self, out: &mut Vec<u8>, text: &str, typed: bool) {
        push(out, "<div class=\"md\">");
        markdown::to_html(out, text, typed);
        push(out, "</div>\n");
    }

    fn thinking(&self, out: &mut Vec<u8>, text: &str) {
        let words = text.split_whitespace().count();
        push(out, "<details class=\"thinking\"><summary>");
        html_text(out, &format!("Thinking ({} words)", grouped(words as u64)));
        push(out, "</summary><div class=\"md\">");
        markdown::to_html(out, text, false);
        push(out, "</div></details>\n");
    }

    fn media(&self, out: &mut Vec<u8>, image: bool, source: &Value) {
        let get = |key: &str| source.get(key).and_then(Value::as_str);
        let media_type = get("media_type").unwrap_or("unknown type");
        match (get("type"), get("data"), get("url")) {
            (Some("base64"), Some(data), _)
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
            (Some("base64"), Some(data), _) => {
                let what = if image { "image" } else { "document" };
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
            (_, _, Some(url)) => {
                push(out, "<p class=\"note\">");
                html_text(
                    out,
                    &format!("Attached {media_type} by reference, not loaded: "),
                );
                element(out, "code", "", url);
                push(out, "</p>\n");
            }
            _ => self.other_block(out, source),
        }
    }

    fn other_block(&self, out: &mut Vec<u8>, block: &Value) {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        push(out, "<details class=\"more\"><summary>");
        html_text(out, &format!("{kind} block"));
        push(out, "</summary>");
        pre(out, "json", &calls::pretty(block));
        push(out, "</details>\n");
    }

    fn tool_start(&self, out: &mut Vec<u8>, number: Option<u64>) {
        match number {
            Some(number) => push(out, &format!("<div class=\"tool\" id=\"t{number}\">\n")),
            None => push(out, "<div class=\"tool\">\n"),
        }
    }

    fn call(&self, out: &mut Vec<u8>, name: &str, input: &Value, _number: u64) {
        push(out, "<div class=\"call\"><div class=\"tool-head\">");
        element(out, "span", "tool-name", name);
        let view = calls::view(name, input);
        let path = match &view {
            CallView::Edit { path, .. } | CallView::Write { path, .. } => *path,
            CallView::Json(_) => None,
        };
        if let Some(summary) = path.map(str::to_string).or_else(|| calls::summary(input)) {
            element(out, "code", "", &summary);
        }
        push(out, "</div>");
        match &view {
            CallView::Edit {
                path,
                edits,
                rest: others,
            } => {
                for edit in edits {
                    diff(out, *path, &edit.hunks, edit.replace_all);
                }
                rest(out, others);
            }
            CallView::Write {
                content,
                rest: others,
                ..
            } => {
                pre(out, "file", content);
                rest(out, others);
            }
            CallView::Json(json) => pre(out, "json", json),
        }
        push(out, "</div>\n");
    }

    fn result(&self, out: &mut Vec<u8>, result: &ResultOf) {
        push(out, "<div class=\"result");
        if result.is_error {
            push(out, " error");
        }
        if result.damaged.is_some() {
            push(out, " damaged");
        }
        push(out, "\"><div class=\"tool-head\">");
        let label = match (result.is_error, result.call) {
            (true, _) => "Error",
            (false, _) => "Result",
        };
        element(out, "span", "", label);
        if result.call.is_none() {
            if let Some(name) = result.name {
                element(out, "span", "", &format!("of {name}"));
            } else {
                element(out, "span", "", "of a call not in this conversation");
            }
        }
        push(out, "</div>");
        damage_note(out, result.damaged);
        match calls::result_view(result.content) {
            ResultView::Empty => push(out, "<p class=\"note\">(empty)</p>"),
            ResultView::Text(text) => pre(out, "", text),
            ResultView::File { verb, path } => {
                push(out, "<p>");
                html_text(out, &format!("{verb} "));
                element(out, "code", "", path);
                push(out, "</p>");
            }
            ResultView::Blocks(blocks) => {
                for block in blocks {
                    match Block::of(block) {
                        Block::Text(text) => pre(out, "", text),
                        Block::Media { image, source } => self.media(out, image, source),
                        _ => self.other_block(out, block),
                    }
                }
            }
            ResultView::Json(json) => pre(out, "json", &json),
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

    fn system(&self, out: &mut Vec<u8>, record: &Record, number: u64) {
        let damage = record.damage();
        push(out, "<section class=\"system");
        if damage.is_some() {
            push(out, " damaged");
        }
        push(out, &format!("\" id=\"m{number}\"><div class=\"who\">"));
        element(out, "span", "role", "System");
        if let Some(step_type) = record.step_type() {
            element(out, "span", "mono", &step_type);
        }
        if let Some(idx) = record.idx() {
            element(out, "span", "", &format!("step {idx}"));
        }
        if let Some(at) = record.timestamp().and_then(|t| Timestamp::parse(t).ok()) {
            time(out, at);
        }
        push(out, "</div>");
        damage_note(out, damage);
        let mut texts = Vec::new();
        let mut others = Vec::new();
        match record.blocks() {
            Blocks::Text(text) => texts.push((None, text)),
            Blocks::Array(items) => {
                for item in items {
                    match Block::of(item) {
                        Block::Text(text) => {
                            texts.push((item.get("field").and_then(Value::as_str), text))
                        }
                        _ => others.push(item),
                    }
                }
            }
        }
        if !texts.is_empty() {
            push(out, "<dl>");
            for (field, text) in texts {
                if let Some(field) = field {
                    element(out, "dt", "", field);
                }
                element(out, "dd", "", text);
            }
            push(out, "</dl>");
        }
        for item in others {
            self.other_block(out, item);
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

    fn index(&self, out: &mut Vec<u8>, entries: &[Entry]) {
        self.document_start(out, "agy conversations");
        push(out, "<article class=\"conversation\">\n<header class=\"conversation\">\n<h1>Conversations</h1>\n<p class=\"note\">");
        html_text(
            out,
            &format!(
                "{} conversations, newest first.",
                grouped(entries.len() as u64)
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
mod tests {
    use super::*;

    #[test]
    fn long_text_is_previewed_then_collapsed() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let mut out = Vec::new();
        pre(&mut out, "", &text);
        let html = String::from_utf8(out).unwrap();
        assert!(html.starts_with("<pre>\nline 1\n"), "{html}");
        assert!(
            html.contains("line 10\n</pre><details class=\"more\"><summary>91 more lines"),
            "{html}"
        );
        assert!(html.ends_with("line 100\n</pre></details>"), "{html}");
        let mut short = Vec::new();
        pre(&mut short, "x", "\nstarts with a newline <b>");
        assert_eq!(
            String::from_utf8(short).unwrap(),
            "<pre class=\"x\">\n\nstarts with a newline &lt;b&gt;</pre>"
        );
    }

    #[test]
    fn file_links_stay_in_the_directory() {
        assert_eq!(file_href("abc-1.html"), "abc-1.html");
        assert_eq!(file_href("a b#?/.html"), "a%20b%23%3F%2F.html");
        assert_eq!(file_href("javascript:x"), "javascript%3Ax");
    }
}
