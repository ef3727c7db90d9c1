//! A `<pre>` of text for an HTML page, collapsed after a preview when the
//! text is long: tool output and input are most of a page's bytes, and a
//! page of them whole would be a wall.
//!
//! Where the collapsing markup goes depends on the whole text (its lines,
//! its size). A text of ordinary size is written once, counting as it
//! goes, and the markup inserted after ([`pre`]). A long one
//! ([`super::text::LongText`]) has its line breaks counted first, in the
//! JSON as it stands, and its start read to find the preview's end; then
//! it is written in pieces, each piece's page bytes handed on
//! ([`Out::spill`]) before the next, so neither the text nor its page
//! bytes are ever whole in memory ([`long_pre`]).

use std::ops::ControlFlow;

use super::body::Out;
use super::escape::{self, html_text};
use super::pretty::Pretty;
use super::summary::grouped;
use super::text::LongText;

fn push(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(s.as_bytes());
}

/// Text longer than this many lines, or bytes, is collapsed after a
/// preview of [`PREVIEW_LINES`].
pub const LONG_LINES: usize = 24;
const LONG_BYTES: usize = 4000;
pub const PREVIEW_LINES: usize = 10;

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
    let element_start = out.len();
    open_pre(out, class);
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
            rest_summary(&mut summary, class, lines, counted.bytes, preview_bytes);
            out.splice(end..end, summary);
        }
        _ => {
            whole_summary(&mut summary, lines, counted.bytes);
            out.splice(element_start..element_start, summary);
        }
    }
    push(out, "</details>");
}

fn open_pre(out: &mut Vec<u8>, class: &str) {
    push(out, "<pre");
    if !class.is_empty() {
        push(out, " class=\"");
        push(out, class);
        push(out, "\"");
    }
    push(out, ">\n");
}

/// What ends the preview and collapses the rest of a text of `lines`
/// lines and `bytes` bytes, `preview_bytes` of them in the preview.
fn rest_summary(out: &mut Vec<u8>, class: &str, lines: usize, bytes: usize, preview_bytes: usize) {
    push(out, "</pre><details class=\"more\"><summary>");
    html_text(
        out,
        &format!(
            "{} more lines ({} of {})",
            grouped((lines - PREVIEW_LINES) as u64),
            size(bytes - preview_bytes),
            size(bytes)
        ),
    );
    push(out, "</summary>");
    open_pre(out, class);
}

/// What comes before a `<pre>` collapsed whole.
fn whole_summary(out: &mut Vec<u8>, lines: usize, bytes: usize) {
    push(out, "<details class=\"more\"><summary>");
    html_text(
        out,
        &format!("{} lines ({})", grouped(lines as u64), size(bytes)),
    );
    push(out, "</summary>");
}

/// [`pre`] of a long text, read in pieces: the same bytes, never whole in
/// memory. Its line breaks are counted in the JSON as it stands and only
/// its start is unescaped to find the preview; it is written a slice of
/// the JSON at a time, unescaped and escaped in one pass.
pub fn long_pre(out: &mut Out, class: &str, text: &LongText) {
    let (newlines, ends_with_newline) = text.line_breaks();
    let counts = Counts {
        newlines,
        bytes: text.bytes(),
        ends_with_newline,
    };
    let mut first = Preview::default();
    text.pieces(|piece| first.feed(piece.as_bytes()));
    write_pre(out, class, &counts, first.end, &|each| {
        text.raw_slices(each)
    });
}

/// [`pre`] of indented JSON, made a piece at a time ([`Pretty`]): counted,
/// its start read for the preview, then written, each piece's page bytes
/// handed on before the next is made.
pub fn pretty_pre(out: &mut Out, class: &str, json: &Pretty) {
    let counted = json.counts();
    let counts = Counts {
        newlines: counted.newlines,
        bytes: counted.bytes,
        ends_with_newline: counted.ends_with_newline,
    };
    let mut first = Preview::default();
    json.pieces(&mut |piece| first.feed(piece.as_bytes()));
    write_pre(out, class, &counts, first.end, &|each| {
        json.pieces(&mut |piece| {
            each(piece, false);
            ControlFlow::Continue(())
        })
    });
}

/// The slices of a text as they stand, handed to `each` in order, with
/// whether they are JSON still to unescape.
type Slices<'a> = dyn Fn(&mut dyn FnMut(&str, bool)) + 'a;

/// A text's line breaks and size, known before it is written.
struct Counts {
    newlines: usize,
    bytes: usize,
    ends_with_newline: bool,
}

impl Counts {
    /// Lines, a last line without a line break included.
    fn lines(&self) -> usize {
        self.newlines + usize::from(self.bytes > 0 && !self.ends_with_newline)
    }
}

/// [`pre`] of the text `slices` hands over, of `counts`, whose preview (if
/// its first lines make one, [`Preview`]) ends after `preview` bytes: the
/// summary that ends the preview is put in after the slice that holds the
/// preview's last line break is written.
fn write_pre(out: &mut Out, class: &str, counts: &Counts, preview: Option<usize>, slices: &Slices) {
    let lines = counts.lines();
    let collapsed = lines > LONG_LINES || counts.bytes > LONG_BYTES;
    let preview = preview.filter(|_| collapsed && lines > PREVIEW_LINES);
    if collapsed && preview.is_none() {
        whole_summary(out, lines, counts.bytes);
    }
    open_pre(out, class);
    // Line breaks still to come before the preview ends.
    let mut to_come = preview.map(|_| PREVIEW_LINES);
    slices(&mut |slice, json| {
        let want = to_come.unwrap_or(usize::MAX);
        let counted = match json {
            true => escape::html_json_counted(out, slice, want),
            false => escape::html_text_counted(out, slice, want),
        };
        if let (Some(left), Some(bytes)) = (to_come, preview) {
            match counted.preview_end {
                Some((end, _)) => {
                    let mut summary = Vec::new();
                    rest_summary(&mut summary, class, lines, counts.bytes, bytes);
                    out.splice(end..end, summary);
                    to_come = None;
                }
                None => to_come = Some(left - counted.newlines),
            }
        }
        out.spill();
    });
    push(out, "</pre>");
    if collapsed {
        push(out, "</details>");
    }
}

/// The preview of a text read in pieces: its first [`PREVIEW_LINES`]
/// lines, if they take at most half of [`LONG_BYTES`] escaped, as [`pre`]
/// decides. Only the text's start is read, up to where that is known.
#[derive(Default)]
struct Preview {
    newlines: usize,
    bytes: usize,
    /// Escaped bytes of the preview's lines so far.
    escaped: usize,
    /// The text bytes of the preview, once it is found.
    end: Option<usize>,
}

impl Preview {
    /// Reads on into `piece`; breaks once the preview is found or cannot
    /// be.
    fn feed(&mut self, piece: &[u8]) -> ControlFlow<()> {
        let mut rest = piece;
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |at| at + 1);
            let (line, after) = rest.split_at(end);
            let entities: usize = memchr::memchr2_iter(b'&', b'<', line)
                .map(|at| if line[at] == b'&' { 4 } else { 3 })
                .sum();
            self.bytes += line.len();
            self.escaped += line.len() + entities;
            if self.escaped > LONG_BYTES / 2 {
                return ControlFlow::Break(());
            }
            if line.last() == Some(&b'\n') {
                self.newlines += 1;
                if self.newlines == PREVIEW_LINES {
                    self.end = Some(self.bytes);
                    return ControlFlow::Break(());
                }
            }
            rest = after;
        }
        ControlFlow::Continue(())
    }
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

    /// `text` handed over in the pieces that `cuts` (byte offsets at
    /// character boundaries, in order) make, to find the preview and to
    /// write.
    fn in_pieces(text: &str, cuts: &[usize]) -> Vec<u8> {
        let mut out = Vec::new();
        let pieces = |each: &mut dyn FnMut(&str) -> ControlFlow<()>| {
            let mut from = 0;
            for &at in cuts.iter().chain([&text.len()]) {
                if at > from {
                    if each(&text[from..at]).is_break() {
                        return;
                    }
                    from = at;
                }
            }
        };
        let counts = Counts {
            newlines: text.matches('\n').count(),
            bytes: text.len(),
            ends_with_newline: text.ends_with('\n'),
        };
        let mut first = Preview::default();
        pieces(&mut |piece| first.feed(piece.as_bytes()));
        let slices = |each: &mut dyn FnMut(&str, bool)| {
            pieces(&mut |piece| {
                each(piece, false);
                ControlFlow::Continue(())
            });
        };
        write_pre(&mut Out::memory(&mut out), "c", &counts, first.end, &slices);
        out
    }

    fn whole(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        pre(&mut out, "c", Source::Text(text));
        out
    }

    /// Wherever the pieces end (inside a line, just after the preview's
    /// last line break, beside a character that is escaped), the page
    /// bytes are those of the text written whole.
    #[test]
    fn a_text_in_pieces_is_written_as_the_whole_is() {
        let lines: String = (1..=30).map(|i| format!("é<{i}>&😀\n")).collect();
        let wide_preview: String = (1..=12).map(|_| format!("{}\n", "&".repeat(300))).collect();
        let texts = [
            lines.clone(),
            lines.trim_end().to_string(),
            lines[..lines.len() / 3].to_string(),
            "ü<&".repeat(1500),
            wide_preview,
            "\n".repeat(11),
            "short <b> & é".to_string(),
        ];
        for text in &texts {
            let want = whole(text);
            let bounds: Vec<usize> = (1..text.len())
                .filter(|&at| text.is_char_boundary(at))
                .collect();
            for &at in &bounds {
                assert!(in_pieces(text, &[at]) == want, "{text:?} cut at {at}");
            }
            for step in 1..=7 {
                let cuts: Vec<usize> = bounds.iter().copied().step_by(step).collect();
                assert!(in_pieces(text, &cuts) == want, "{text:?} by {step}");
            }
        }
    }

    /// Long indented JSON, made and written in pieces, is the `<pre>` of
    /// its text made whole.
    #[test]
    fn long_indented_json_is_written_as_the_whole_is() {
        use crate::render::markdown::MARKDOWN_LIMIT;
        let numbers: Vec<String> = (0..50_000).map(|i| i.to_string()).collect();
        let json = format!(
            "{{\"a\":[{}],\"b\":\"{}\",\"c\":{{}}}}",
            numbers.join(","),
            "x<&\\\"é".repeat(300_000)
        );
        let pretty = Pretty::of(&json);
        assert!(pretty.json_len() > MARKDOWN_LIMIT);
        let mut written = Vec::new();
        pretty_pre(&mut Out::memory(&mut written), "json", &pretty);
        let mut want = Vec::new();
        pre(&mut want, "json", Source::Text(&pretty.whole()));
        assert!(written == want, "the pieces differ from the whole");
        assert!(written.windows(10).take(2000).any(|w| w == b"</summary>"));
    }

    /// A long text from JSON, unescaped in pieces, is the `<pre>` of the
    /// JSON read whole.
    #[test]
    fn a_long_json_text_is_written_as_the_whole_is() {
        use crate::render::markdown::MARKDOWN_LIMIT;
        for head in ["", "one\ntwo <&>\n"] {
            let text = format!("{head}{}", "a\"é\\<😀\u{1}\n&".repeat(MARKDOWN_LIMIT / 12));
            let literal = serde_json::to_string(&text).unwrap();
            let body = &literal[1..literal.len() - 1];
            let long = LongText::of_json_body(body).expect("over the limit");
            let mut written = Vec::new();
            long_pre(&mut Out::memory(&mut written), "", &long);
            let mut want = Vec::new();
            pre(&mut want, "", Source::Json(body));
            assert!(written == want, "the pieces differ from the whole");
            assert!(written.windows(10).take(1000).any(|w| w == b"</summary>"));
        }
    }
}
