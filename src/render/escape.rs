//! Escaping for HTML text and attribute values, and for Markdown.
//!
//! Everything from a conversation goes through one of these before it
//! reaches a page: text nodes escape `&`, `<` and `>`; attribute values (always
//! written double-quoted) also `"` and `'`. Tool output is most of a page's
//! bytes, so text escaping jumps between the bytes that need it with
//! `memchr3` instead of looking at every byte.

/// Appends `text` escaped for an HTML text node (also inside `<pre>`).
pub fn html_text(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(at) = memchr::memchr3(b'&', b'<', b'>', &bytes[start..]) {
        let at = start + at;
        out.extend_from_slice(&bytes[start..at]);
        out.extend_from_slice(entity(bytes[at]));
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// Appends `text` escaped for a double-quoted HTML attribute value.
pub fn html_attr(out: &mut Vec<u8>, text: &str) {
    for &b in text.as_bytes() {
        match b {
            b'&' | b'<' | b'>' | b'"' | b'\'' => out.extend_from_slice(entity(b)),
            _ => out.push(b),
        }
    }
}

fn entity(b: u8) -> &'static [u8] {
    match b {
        b'&' => b"&amp;",
        b'<' => b"&lt;",
        b'>' => b"&gt;",
        b'"' => b"&quot;",
        b'\'' => b"&#39;",
        _ => unreachable!("only the escaped bytes have entities"),
    }
}

/// Appends `text` as Markdown inline text that means exactly these
/// characters: every ASCII punctuation character is backslash-escaped (which
/// CommonMark allows for all of them), so nothing in it can start emphasis,
/// a link, a code span or raw HTML; line breaks become spaces, so it cannot
/// end the line it is on (a heading, a table cell).
pub fn md_inline(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            c if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
}

/// The fence for a fenced code block holding `text`: three backticks, or
/// one more than the longest run of backticks in it, so the text cannot
/// close the block early.
pub fn md_fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for b in text.bytes() {
        if b == b'`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Appends a fenced code block holding `text` verbatim, with `info` (made
/// of letters and digits only) as its language.
pub fn md_code_block(out: &mut String, text: &str, info: &str) {
    let fence = md_fence(text);
    out.push_str(&fence);
    out.extend(info.chars().filter(char::is_ascii_alphanumeric));
    out.push('\n');
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> String {
        let mut out = Vec::new();
        html_text(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    fn attr(s: &str) -> String {
        let mut out = Vec::new();
        html_attr(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn html_escapes_what_could_open_markup() {
        assert_eq!(
            text("<script>a && b</script>\"'"),
            "&lt;script&gt;a &amp;&amp; b&lt;/script&gt;\"'"
        );
        assert_eq!(text("plain ünïcode"), "plain ünïcode");
        assert_eq!(text(""), "");
        assert_eq!(
            attr("x\" onerror='y' <&>"),
            "x&quot; onerror=&#39;y&#39; &lt;&amp;&gt;"
        );
    }

    #[test]
    fn markdown_inline_text_is_inert() {
        let mut out = String::new();
        md_inline(&mut out, "# <b>[x](javascript:y)</b>\n*é*");
        assert_eq!(
            out,
            "\\# \\<b\\>\\[x\\]\\(javascript\\:y\\)\\<\\/b\\> \\*é\\*"
        );
    }

    #[test]
    fn fences_outlast_the_backticks_inside() {
        assert_eq!(md_fence("no ticks"), "```");
        assert_eq!(md_fence("a ```` b ` c"), "`````");
        let mut out = String::new();
        md_code_block(&mut out, "```\nx", "rs\"`");
        assert_eq!(out, "````rs\n```\nx\n````\n");
    }
}
