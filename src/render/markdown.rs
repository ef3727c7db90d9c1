//! The text of a conversation read as Markdown, made safe for a page.
//!
//! Parsing is pulldown-cmark's; what is ours is the filter between its
//! parser and its HTML writer:
//! - raw HTML (blocks and inline) becomes text, so `<script>` shows as
//!   `<script>` and never runs; an HTML block is shown as a code block;
//! - a link whose URL has a scheme other than http, https or mailto
//!   (`javascript:`, `data:`, `vbscript:`, `file:` ...) loses its link and
//!   keeps its text, marked as a removed link;
//! - an image loads only from a `data:image/…` URL, the one source the
//!   page's Content-Security-Policy allows; any other image becomes a link
//!   to it (or, with a bad scheme, its alt text), so opening a page never
//!   fetches anything and never trips the policy;
//! - table alignment is dropped: the writer would put it in a `style`
//!   attribute, which the policy refuses.
//!
//! For Markdown output the same rules are applied to the source text itself
//! ([`sanitize_markdown`]), by escaping in place what the parser found, and
//! checked again by a second parse.

use std::ops::Range;

use pulldown_cmark::{
    Alignment, CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd,
};

use super::escape;

/// Texts (and, in Markdown output, thinking) longer than this are shown
/// as written, not read as Markdown.
/// pulldown-cmark keeps a node per run of text between special bytes, about
/// three times a text's size, so a 50 MB message would cost 150 MB more
/// than the message itself; shown as written (escaped), agy-render stays
/// within about twice its largest message. Nobody reads a megabyte of
/// Markdown as a page anyway.
pub const MARKDOWN_LIMIT: usize = 1 << 20;

/// The note put before a text over [`MARKDOWN_LIMIT`].
pub fn as_written_note(bytes: usize) -> String {
    format!(
        "This text is {:.1} MB: shown as it was written, not read as Markdown.",
        bytes as f64 / 1e6
    )
}

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Whether `url` may be a link's target: http, https and mailto, or no
/// scheme at all (a relative reference or a fragment). The scheme is found
/// the way a browser finds it: ASCII tab and newlines anywhere and C0
/// controls or spaces around it are ignored, and case does not matter.
pub fn link_allowed(url: &str) -> bool {
    match scheme(url) {
        None => true,
        Some(scheme) => matches!(scheme.as_str(), "http" | "https" | "mailto"),
    }
}

/// Whether `url` is an inline image the page may show: `data:image/…`
/// with base64 data.
pub fn image_allowed(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("data:") else {
        return false;
    };
    let Some((media_type, data)) = rest.split_once(";base64,") else {
        return false;
    };
    media_type_ok(media_type) && base64_ok(data)
}

/// An image media type that can go into a `data:` URL as it is.
pub fn media_type_ok(media_type: &str) -> bool {
    let Some(subtype) = media_type.strip_prefix("image/") else {
        return false;
    };
    !subtype.is_empty()
        && subtype
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
}

/// Base64 with nothing else in it (no spaces, no quotes).
pub fn base64_ok(data: &str) -> bool {
    data.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

/// The lowercased scheme of `url`, or `None` when it has none.
fn scheme(url: &str) -> Option<String> {
    let cleaned: String = url
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let end = cleaned.find([':', '/', '?', '#'])?;
    if cleaned.as_bytes()[end] != b':' {
        return None;
    }
    let scheme = &cleaned[..end];
    let mut bytes = scheme.bytes();
    let first_alpha = bytes.next().is_some_and(|b| b.is_ascii_alphabetic());
    if !first_alpha || !bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        // Not a scheme, so a browser reads it as a relative path.
        return None;
    }
    Some(scheme.to_ascii_lowercase())
}

/// What the end tag of a link or image becomes.
enum Close {
    Keep,
    /// The image was turned into a link.
    Link,
    /// The link was removed; its text stays inside a marked span.
    Span,
}

/// Appends `text` rendered as Markdown to `out` as HTML, with the rules of
/// the module documentation. `hard_breaks` keeps every line break (for
/// text a person typed, where a line break was meant as one).
pub fn to_html(out: &mut Vec<u8>, text: &str, hard_breaks: bool) {
    let mut closes: Vec<Close> = Vec::new();
    let events = Parser::new_ext(text, options()).map(|event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::HtmlBlock) => {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(CowStr::Borrowed(""))))
        }
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::CodeBlock),
        Event::SoftBreak if hard_breaks => Event::HardBreak,
        Event::Start(Tag::Table(alignments)) => {
            Event::Start(Tag::Table(vec![Alignment::None; alignments.len()]))
        }
        Event::Start(Tag::Link { dest_url, .. }) if !link_allowed(&dest_url) => {
            closes.push(Close::Span);
            removed_link_open(&dest_url)
        }
        Event::Start(Tag::Image { dest_url, .. })
            if !image_allowed(&dest_url) && !link_allowed(&dest_url) =>
        {
            closes.push(Close::Span);
            removed_link_open(&dest_url)
        }
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) if !image_allowed(&dest_url) => {
            closes.push(Close::Link);
            Event::Start(Tag::Link {
                link_type: LinkType::Inline,
                dest_url,
                title,
                id,
            })
        }
        Event::Start(tag @ (Tag::Link { .. } | Tag::Image { .. })) => {
            closes.push(Close::Keep);
            Event::Start(tag)
        }
        Event::End(end @ (TagEnd::Link | TagEnd::Image)) => match closes.pop() {
            Some(Close::Keep) | None => Event::End(end),
            Some(Close::Link) => Event::End(TagEnd::Link),
            Some(Close::Span) => Event::Html(CowStr::Borrowed("</span>")),
        },
        other => other,
    });
    let mut html = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut html, events);
    out.extend_from_slice(html.as_bytes());
}

/// The opening of a removed link: a span that says what was removed.
fn removed_link_open(url: &str) -> Event<'static> {
    let mut html = b"<span class=\"removed-link\" title=\"link removed: ".to_vec();
    escape::html_attr(&mut html, url);
    html.extend_from_slice(b"\">");
    Event::Html(CowStr::Boxed(
        String::from_utf8(html)
            .expect("escaped UTF-8 stays UTF-8")
            .into_boxed_str(),
    ))
}

/// One change to Markdown source: insert a backslash before `at`, or
/// replace the `<` at `at` by `&lt;`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Edit {
    Backslash(usize),
    Lt(usize),
}

impl Edit {
    fn at(self) -> usize {
        match self {
            Edit::Backslash(at) | Edit::Lt(at) => at,
        }
    }
}

/// `text` as Markdown that, rendered by any CommonMark renderer, holds no
/// raw HTML, no link with a disallowed scheme and no image from anywhere
/// but a `data:image/` URL. What the parser reports is escaped where it
/// starts (a backslash before `[`, `&lt;` for `<`), then the result is parsed
/// again; text that still is not clean after a few rounds is given back as
/// a fenced code block, which is inert.
pub fn sanitize_markdown(text: &str) -> String {
    let mut current = text.to_string();
    for _ in 0..4 {
        let edits = unsafe_spots(&current);
        if edits.is_empty() {
            return current;
        }
        current = apply(&current, &edits);
    }
    let mut out = String::new();
    escape::md_code_block(&mut out, text, "text");
    out
}

/// Where `text` has something [`sanitize_markdown`] must defuse.
fn unsafe_spots(text: &str) -> Vec<Edit> {
    let bytes = text.as_bytes();
    let mut edits = Vec::new();
    // The `[` or `<` that opens what starts at `start`, within `range`.
    let opener = |range: &Range<usize>, what: u8| {
        bytes[range.clone()]
            .iter()
            .position(|&b| b == what)
            .map(|i| range.start + i)
    };
    let lts = |range: Range<usize>, edits: &mut Vec<Edit>| {
        for (i, &b) in bytes[range.clone()].iter().enumerate() {
            if b == b'<' {
                edits.push(Edit::Lt(range.start + i));
            }
        }
    };
    let parser = Parser::new_ext(text, options());
    // A definition is only a target: a disallowed one is defused whatever
    // uses it. (Images are checked where they are used, below.)
    for (_, def) in parser.reference_definitions().iter() {
        if !link_allowed(&def.dest) {
            if let Some(at) = opener(&def.span, b'[') {
                edits.push(Edit::Backslash(at));
            }
        }
    }
    for (event, range) in parser.into_offset_iter() {
        match event {
            Event::Html(_) | Event::InlineHtml(_) => lts(range, &mut edits),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) if !link_allowed(&dest_url) => {
                if matches!(link_type, LinkType::Autolink | LinkType::Email) {
                    if let Some(at) = opener(&range, b'<') {
                        edits.push(Edit::Lt(at));
                    }
                } else if let Some(at) = opener(&range, b'[') {
                    edits.push(Edit::Backslash(at));
                }
            }
            Event::Start(Tag::Image { dest_url, .. }) if !image_allowed(&dest_url) => {
                // `\![alt](url)` is a link, which the next round checks;
                // `!\[alt](url)` is no link at all.
                let edit = if link_allowed(&dest_url) {
                    opener(&range, b'!').map(Edit::Backslash)
                } else {
                    opener(&range, b'[').map(Edit::Backslash)
                };
                edits.extend(edit);
            }
            _ => {}
        }
    }
    edits.sort_by_key(|e| e.at());
    edits.dedup_by_key(|e| e.at());
    edits
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(text.len() + edits.len() * 4);
    let mut from = 0;
    for edit in edits {
        let at = edit.at();
        out.push_str(&text[from..at]);
        match edit {
            Edit::Backslash(_) => {
                out.push('\\');
                from = at;
            }
            Edit::Lt(_) => {
                out.push_str("&lt;");
                from = at + 1;
            }
        }
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html(text: &str) -> String {
        let mut out = Vec::new();
        to_html(&mut out, text, false);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn schemes_are_found_as_browsers_find_them() {
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            " \u{1}javascript:x",
            "java\tscript:x",
            "jav\nascript:x",
            "data:text/html,<b>",
            "vbscript:x",
            "file:///etc/passwd",
        ] {
            assert!(!link_allowed(bad), "{bad:?}");
        }
        for good in [
            "https://example.org/a:b",
            "http://x",
            "mailto:a@b",
            "#m3",
            "src/main.rs",
            "./a:b",
            "?q=a:b",
            "java script:x",
        ] {
            assert!(link_allowed(good), "{good:?}");
        }
    }

    #[test]
    fn raw_html_is_text() {
        let out = html("a <script>alert(1)</script> b\n\n<div onclick=\"x()\">\n<img src=x onerror=alert(1)>\n</div>\n");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<img"), "{out}");
        assert!(!out.contains("<div"), "{out}");
        assert!(
            out.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{out}"
        );
        assert!(out.contains("<pre><code>&lt;div onclick="), "{out}");
    }

    #[test]
    fn bad_links_lose_their_target_and_keep_their_text() {
        let out = html("[click](javascript:alert(1)) and [ok](https://example.org) and <javascript:alert(2)>\n\n[ref]: javascript:alert(3)\n\n[r][ref]");
        assert!(!out.contains("href=\"javascript"), "{out}");
        assert!(out.contains("<span class=\"removed-link\" title=\"link removed: javascript:alert(1)\">click</span>"), "{out}");
        assert!(
            out.contains("<a href=\"https://example.org\">ok</a>"),
            "{out}"
        );
        assert_eq!(out.matches("removed-link").count(), 3, "{out}");
    }

    #[test]
    fn images_load_only_from_data_urls() {
        let out = html("![pixel](data:image/png;base64,iVBORw0KGgo=) ![remote](https://example.org/t.png) ![bad](javascript:x)");
        assert!(
            out.contains("<img src=\"data:image/png;base64,iVBORw0KGgo=\" alt=\"pixel\""),
            "{out}"
        );
        assert!(
            out.contains("<a href=\"https://example.org/t.png\">remote</a>"),
            "{out}"
        );
        assert_eq!(out.matches("<img").count(), 1, "{out}");
        assert!(out.contains("removed-link"), "{out}");
    }

    #[test]
    fn tables_carry_no_style() {
        let out = html("| a | b |\n|:--|--:|\n| 1 | 2 |\n");
        assert!(out.contains("<table>"), "{out}");
        assert!(!out.contains("style"), "{out}");
    }

    #[test]
    fn hard_breaks_keep_lines() {
        let mut out = Vec::new();
        to_html(&mut out, "one\ntwo", true);
        assert_eq!(String::from_utf8(out).unwrap(), "<p>one<br />\ntwo</p>\n");
    }

    /// Everything the sanitised Markdown renders to is free of raw HTML
    /// and bad targets, checked by rendering it with pulldown-cmark's own
    /// writer, unfiltered.
    #[test]
    fn sanitized_markdown_renders_clean() {
        let hostile = [
            "<script>alert(1)</script>",
            "text <img src=x onerror=alert(1)> text",
            "[a](javascript:alert(1))",
            "[a](<javascript:alert(1)>)",
            "<javascript:alert(1)>",
            "![x](javascript:alert(1))",
            "![x](https://example.org/t.png)",
            "[![x](https://e.org/i.png)](javascript:y)",
            "[x][r]\n\n[r]: javascript:alert(1)",
            "\\[x][r]\n\n[r]: javascript:alert(1)",
            "[r]\n\n[r]: javascript:alert(1)",
            "> <div>\n> </textarea></details>",
            "- [a](jav&#x61;script:alert(1))",
            "```\n<script>kept in code</script>\n```",
        ];
        for text in hostile {
            let clean = sanitize_markdown(text);
            let mut rendered = String::new();
            pulldown_cmark::html::push_html(&mut rendered, Parser::new_ext(&clean, options()));
            assert!(
                !rendered.contains("<script"),
                "{text:?} -> {clean:?} -> {rendered}"
            );
            assert!(!rendered.contains("<img src=\"h"), "{text:?} -> {rendered}");
            assert!(!rendered.contains("<img src=\"j"), "{text:?} -> {rendered}");
            assert!(!rendered.contains("<div"), "{text:?} -> {rendered}");
            assert!(!rendered.contains("</textarea"), "{text:?} -> {rendered}");
            assert!(
                !rendered.to_lowercase().contains("href=\"javascript"),
                "{text:?} -> {rendered}"
            );
        }
        assert_eq!(sanitize_markdown("plain *text*"), "plain *text*");
    }
}
