//! A `<pre>` of text for an HTML page, collapsed after a preview when the
//! text is long: tool output and input are most of a page's bytes, and a
//! page of them whole would be a wall.

use super::escape::{self, html_text};
use super::summary::grouped;

fn push(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
}

/// Text longer than this many lines, or bytes, is collapsed after a
/// preview of [`PREVIEW_LINES`].
pub const LONG_LINES: usize = 24;
const LONG_BYTES: usize = 4000;
const PREVIEW_LINES: usize = 10;

/// What a `<pre>` holds: text, or the body of a JSON string literal that
/// is unescaped on the way in.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    Text(&'a str),
    Json(&'a str),
}

/// A `<pre>` of `source`. Long text shows its first [`PREVIEW_LINES`]
/// lines and collapses the rest; long text of few lines collapses whole.
/// The text is written once, counting as it goes, and the collapsing markup
/// is inserted afterwards where the count says. The newline after `<pre>`
/// is the one HTML drops, so text that starts with a newline keeps it.
pub fn pre(out: &mut Vec<u8>, class: &str, source: Source) {
    let open = |out: &mut Vec<u8>| {
        push(out, "<pre");
        if !class.is_empty() {
            push(out, " class=\"");
            push(out, class);
            push(out, "\"");
        }
        push(out, ">\n");
    };
    let element_start = out.len();
    open(out);
    let text_start = out.len();
    let counted = match source {
        Source::Text(text) => escape::html_text_counted(out, text, PREVIEW_LINES),
        Source::Json(body) => escape::html_json_counted(out, body, PREVIEW_LINES),
    };
    push(out, "</pre>");
    let lines = counted.lines();
    if lines <= LONG_LINES && counted.bytes <= LONG_BYTES {
        return;
    }
    let mut summary = Vec::new();
    match counted.preview_end {
        Some((end, preview_bytes))
            if lines > PREVIEW_LINES && end - text_start <= LONG_BYTES / 2 =>
        {
            push(&mut summary, "</pre><details class=\"more\"><summary>");
            html_text(
                &mut summary,
                &format!(
                    "{} more lines ({} of {})",
                    grouped((lines - PREVIEW_LINES) as u64),
                    size(counted.bytes - preview_bytes),
                    size(counted.bytes)
                ),
            );
            push(&mut summary, "</summary>");
            open(&mut summary);
            out.splice(end..end, summary);
        }
        _ => {
            push(&mut summary, "<details class=\"more\"><summary>");
            html_text(
                &mut summary,
                &format!("{} lines ({})", grouped(lines as u64), size(counted.bytes)),
            );
            push(&mut summary, "</summary>");
            out.splice(element_start..element_start, summary);
        }
    }
    push(out, "</details>");
}

/// `1.2 KB`, `3.4 MB`: decimal units.
pub fn size(bytes: usize) -> String {
    match bytes {
        0..=999 => format!("{bytes} B"),
        1_000..=999_999 => format!("{:.1} KB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_previewed_then_collapsed() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let mut out = Vec::new();
        pre(&mut out, "", Source::Text(&text));
        let html = String::from_utf8(out).unwrap();
        assert!(html.starts_with("<pre>\nline 1\n"), "{html}");
        assert!(
            html.contains("line 10\n</pre><details class=\"more\"><summary>90 more lines (721 B of 792 B)</summary><pre>\nline 11\n"),
            "{html}"
        );
        assert!(html.ends_with("line 100\n</pre></details>"), "{html}");
        let json = serde_json::to_string(&text).unwrap();
        let mut from_json = Vec::new();
        pre(&mut from_json, "", Source::Json(&json[1..json.len() - 1]));
        assert_eq!(String::from_utf8(from_json).unwrap(), html);
        let mut short = Vec::new();
        pre(&mut short, "x", Source::Text("\nstarts with a newline <b>"));
        assert_eq!(
            String::from_utf8(short).unwrap(),
            "<pre class=\"x\">\n\nstarts with a newline &lt;b></pre>"
        );
        let wide = "x".repeat(5000);
        let mut collapsed = Vec::new();
        pre(&mut collapsed, "", Source::Text(&wide));
        let collapsed = String::from_utf8(collapsed).unwrap();
        assert!(
            collapsed.starts_with(
                "<details class=\"more\"><summary>1 lines (5.0 KB)</summary><pre>\nxxx"
            ),
            "{collapsed}"
        );
        assert!(collapsed.ends_with("xxx</pre></details>"), "{collapsed}");
    }
}
