//! Escaping for HTML text and attribute values, and for Markdown.
//!
//! Everything from a conversation goes through one of these before it
//! reaches a page: text nodes escape `&`, `<` and `>`; attribute values (always
//! written double-quoted) also `"` and `'`. Tool output is most of a page's
//! bytes, so text escaping jumps between the bytes that need it with
//! `memchr3` instead of looking at every byte.
//!
//! JSON's string escapes are read here too ([`json_escape`]), one reading
//! whether a string from the stream is read whole or in pieces.

use std::borrow::Cow;

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

/// Finds the bytes of a set of three, sixteen at a time (with SSE2, the
/// x86-64 baseline), keeping the other hits of a block for the next call.
/// Tool output has a line break every few dozen bytes, and starting a fresh
/// search from each one (as `memchr3` does) cost more than the escaping.
struct Finder<'a> {
    bytes: &'a [u8],
    needles: [u8; 3],
    /// Where the block of `mask` starts; one bit per byte of it that is a
    /// needle and has not been returned.
    block: usize,
    mask: u32,
}

impl<'a> Finder<'a> {
    fn new(bytes: &'a [u8], needles: [u8; 3]) -> Finder<'a> {
        let mut finder = Finder {
            bytes,
            needles,
            block: 0,
            mask: 0,
        };
        finder.mask = finder.mask_at(0);
        finder
    }

    /// The first needle at or after `from`.
    #[inline]
    fn next(&mut self, from: usize) -> Option<usize> {
        if from >= self.block + 16 {
            self.block = from;
            self.mask = self.mask_at(from);
        } else if from > self.block {
            self.mask &= !((1u32 << (from - self.block)) - 1);
        }
        loop {
            if self.mask != 0 {
                return Some(self.block + self.mask.trailing_zeros() as usize);
            }
            self.block += 16;
            if self.block >= self.bytes.len() {
                return None;
            }
            self.mask = self.mask_at(self.block);
        }
    }

    fn mask_at(&self, start: usize) -> u32 {
        let Some(block) = self.bytes.get(start..start + 16) else {
            let tail = self.bytes.get(start..).unwrap_or_default();
            return tail
                .iter()
                .enumerate()
                .filter(|(_, b)| self.needles.contains(b))
                .fold(0, |mask, (i, _)| mask | 1 << i);
        };
        block_mask(block, self.needles)
    }
}

#[cfg(target_arch = "x86_64")]
fn block_mask(block: &[u8], needles: [u8; 3]) -> u32 {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function reads only its arguments.
    unsafe { block_mask_sse2(block, needles) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn block_mask_sse2(block: &[u8], needles: [u8; 3]) -> u32 {
    use std::arch::x86_64::*;
    let low = u64::from_le_bytes(block[..8].try_into().expect("eight bytes"));
    let high = u64::from_le_bytes(block[8..16].try_into().expect("eight bytes"));
    let v = _mm_set_epi64x(high as i64, low as i64);
    let hit = |needle: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(needle as i8));
    let any = _mm_or_si128(
        hit(needles[0]),
        _mm_or_si128(hit(needles[1]), hit(needles[2])),
    );
    _mm_movemask_epi8(any) as u32
}

#[cfg(not(target_arch = "x86_64"))]
fn block_mask(block: &[u8], needles: [u8; 3]) -> u32 {
    block
        .iter()
        .enumerate()
        .filter(|(_, b)| needles.contains(b))
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// What [`html_text_counted`] and [`html_json_counted`] saw of the text
/// they wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    /// Line breaks in the text.
    pub newlines: usize,
    /// Bytes of the text (not of its escaped form).
    pub bytes: usize,
    pub ends_with_newline: bool,
    /// Where in `out` the preview ends (just after its last line break),
    /// and how many bytes of the text it holds; `None` when the text has
    /// fewer line breaks than the preview's lines.
    pub preview_end: Option<(usize, usize)>,
}

impl Counted {
    /// Lines, a last line without a line break included.
    pub fn lines(&self) -> usize {
        self.newlines + usize::from(self.bytes > 0 && !self.ends_with_newline)
    }

    fn newline(&mut self, out: &mut Vec<u8>, preview_lines: usize) {
        out.push(b'\n');
        self.newlines += 1;
        self.bytes += 1;
        if self.newlines == preview_lines {
            self.preview_end = Some((out.len(), self.bytes));
        }
    }

    fn escaped(&mut self, out: &mut Vec<u8>, c: char) {
        match c {
            '&' => out.extend_from_slice(b"&amp;"),
            '<' => out.extend_from_slice(b"&lt;"),
            c => {
                let mut utf8 = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
        self.bytes += c.len_utf8();
    }
}

/// Appends `text` escaped for an HTML text node and counts its lines on
/// the way, for a `<pre>` that may collapse: one pass over the text, which
/// is what most of a page's bytes are. `>` is left as it is, which a text
/// node allows.
pub fn html_text_counted(out: &mut Vec<u8>, text: &str, preview_lines: usize) -> Counted {
    let bytes = text.as_bytes();
    let mut counted = Counted::default();
    let mut finder = Finder::new(bytes, [b'&', b'<', b'\n']);
    let mut start = 0;
    while let Some(at) = finder.next(start) {
        out.extend_from_slice(&bytes[start..at]);
        counted.bytes += at - start;
        match bytes[at] {
            b'\n' => counted.newline(out, preview_lines),
            other => counted.escaped(out, other as char),
        }
        start = at + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    counted.bytes += bytes.len() - start;
    counted.ends_with_newline = bytes.last() == Some(&b'\n');
    counted
}

/// Appends `text` escaped for a `<pre>` as [`html_text_counted`] writes
/// it (`&` and `<`), for a text written in pieces and counted before.
pub fn html_pre_text(out: &mut Vec<u8>, text: &str) {
    html_text_counted(out, text, usize::MAX);
}

/// [`html_text_counted`] of the string whose JSON form is `body` (a JSON
/// string literal without its quotes, as valid JSON holds it): unescaping
/// and escaping in the same pass, so a tool's output of megabytes is read
/// once and never held decoded.
pub fn html_json_counted(out: &mut Vec<u8>, body: &str, preview_lines: usize) -> Counted {
    let bytes = body.as_bytes();
    let mut counted = Counted::default();
    let mut last = 0u8;
    let mut finder = Finder::new(bytes, [b'\\', b'&', b'<']);
    let mut start = 0;
    while let Some(at) = finder.next(start) {
        out.extend_from_slice(&bytes[start..at]);
        counted.bytes += at - start;
        start = at + 1;
        if bytes[at] != b'\\' {
            counted.escaped(out, bytes[at] as char);
            last = bytes[at];
            continue;
        }
        let escape = bytes.get(at + 1).copied().unwrap_or(b'\\');
        start = at + 2;
        let c = match escape {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => {
                let (c, used) = unicode_escape(&body[at..]);
                start = at + used;
                c
            }
            other => other as char,
        };
        if c == '\n' {
            counted.newline(out, preview_lines);
        } else {
            counted.escaped(out, c);
        }
        last = if c.is_ascii() { c as u8 } else { 0 };
    }
    out.extend_from_slice(&bytes[start..]);
    counted.bytes += bytes.len() - start;
    if start < bytes.len() {
        last = bytes[bytes.len() - 1];
    }
    counted.ends_with_newline = last == b'\n';
    counted
}

/// The character of the `\uXXXX` escape (or surrogate pair) at the start
/// of `text`, and the bytes it took; U+FFFD for a lone surrogate.
pub(crate) fn unicode_escape(text: &str) -> (char, usize) {
    let unit = |at: usize| {
        text.get(at..at + 4)
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
    };
    let Some(first) = unit(2) else {
        return ('\u{FFFD}', 2);
    };
    if (0xD800..0xDC00).contains(&first) && text.get(6..8) == Some("\\u") {
        if let Some(second) = unit(8).filter(|s| (0xDC00..0xE000).contains(s)) {
            let c = char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00));
            return (c.unwrap_or('\u{FFFD}'), 12);
        }
    }
    (char::from_u32(first).unwrap_or('\u{FFFD}'), 6)
}

/// The text of a JSON string literal's body (without its quotes; valid
/// JSON), borrowed when it has no escapes; `None` at a bad escape.
pub fn json_body_text(body: &str) -> Option<Cow<'_, str>> {
    if memchr::memchr(b'\\', body.as_bytes()).is_none() {
        return Some(Cow::Borrowed(body));
    }
    let mut out = String::with_capacity(body.len());
    unescape_body_into(body, &mut out).then_some(Cow::Owned(out))
}

/// Appends the text of a JSON string literal's body (without its quotes,
/// as a tool result's JSON text is held) to `out`, unescaped; `false` at a
/// bad escape, with what came before it appended. For large tool output:
/// one pass, into a buffer that is reused.
pub fn unescape_body_into(body: &str, out: &mut String) -> bool {
    let bytes = body.as_bytes();
    let mut start = 0;
    while let Some(at) = memchr::memchr(b'\\', &bytes[start..]) {
        let at = start + at;
        out.push_str(&body[start..at]);
        let Some((c, used)) = json_escape(&body[at..]) else {
            return false;
        };
        out.push(c);
        start = at + used;
    }
    out.push_str(&body[start..]);
    true
}

/// The character of the escape `escape` starts with (a backslash and what
/// follows), and the bytes it took; `None` for a bad escape. The one
/// reading of escapes, whether a string is read whole or in pieces (a
/// long text).
pub(super) fn json_escape(escape: &str) -> Option<(char, usize)> {
    let c = match *escape.as_bytes().get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return Some(unicode_escape(escape)),
        _ => return None,
    };
    Some((c, 2))
}

/// Appends `text` as Markdown inline text that means exactly these
/// characters: the ones that can start emphasis, code, a link, raw HTML, an
/// entity, strikethrough or a table cell (`\\ ` * _ [ ] < > & ~ |`) are
/// backslash-escaped, as CommonMark allows for any ASCII punctuation, and
/// nothing else, so the text stays readable as text; line breaks become
/// spaces, so it cannot end the line it is on (a heading, a table cell).
pub fn md_inline(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' | '|' => {
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
    let mut fence = Fence::default();
    fence.feed(text);
    fence.fence()
}

/// The info string of a code block: `info`'s letters and digits.
pub fn md_info(info: &str) -> String {
    info.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// [`md_fence`] of a text read in pieces: a run of backticks may go on
/// from one piece into the next.
#[derive(Default)]
pub struct Fence {
    longest: usize,
    /// The backticks that end the pieces so far.
    run: usize,
}

impl Fence {
    pub fn feed(&mut self, piece: &str) {
        for b in piece.bytes() {
            if b == b'`' {
                self.run += 1;
                self.longest = self.longest.max(self.run);
            } else {
                self.run = 0;
            }
        }
    }

    pub fn fence(&self) -> String {
        "`".repeat((self.longest + 1).max(3))
    }
}

/// Appends a fenced code block holding `text` verbatim, with `info` (made
/// of letters and digits only) as its language.
pub fn md_code_block(out: &mut String, text: &str, info: &str) {
    let fence = md_fence(text);
    out.push_str(&fence);
    out.push_str(&md_info(info));
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
    fn counted_writes_escape_and_count_in_one_pass() {
        let text = "a<b & c>\nline 2\n\nline é4\n";
        let mut plain = Vec::new();
        let counted = html_text_counted(&mut plain, text, 2);
        assert_eq!(
            String::from_utf8(plain.clone()).unwrap(),
            "a&lt;b &amp; c>\nline 2\n\nline é4\n"
        );
        assert_eq!(counted.newlines, 4);
        assert_eq!(counted.lines(), 4);
        assert_eq!(counted.bytes, text.len());
        assert_eq!(counted.preview_end, Some((23, 16)));
        let json = serde_json::to_string(text).unwrap();
        let mut decoded = Vec::new();
        let from_json = html_json_counted(&mut decoded, &json[1..json.len() - 1], 2);
        assert_eq!(decoded, plain);
        assert_eq!(from_json, counted);
        let mut out = Vec::new();
        let c = html_json_counted(
            &mut out,
            r#"\u003cx\u0026\ud83d\ude00\"\\n\/ no newline"#,
            1,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "&lt;x&amp;😀\"\\n/ no newline"
        );
        assert_eq!((c.newlines, c.lines(), c.ends_with_newline), (0, 1, false));
        assert_eq!(c.bytes, "<x&😀\"\\n/ no newline".len());
    }

    #[test]
    fn the_finder_finds_every_needle_once() {
        let text: Vec<u8> = (0..200u32)
            .map(|i| match i % 7 {
                0 => b'&',
                3 if i % 2 == 0 => b'<',
                _ => b'a' + (i % 26) as u8,
            })
            .collect();
        let expected: Vec<usize> = (0..text.len())
            .filter(|&i| matches!(text[i], b'&' | b'<' | b'\n'))
            .collect();
        for step in [1, 2, 5, 17] {
            let mut finder = Finder::new(&text, [b'&', b'<', b'\n']);
            let mut got = Vec::new();
            let mut from = 0;
            while let Some(at) = finder.next(from) {
                got.push(at);
                from = at + 1;
                // Skipping ahead, as an escape does, drops what it passes.
                if at % step == 0 {
                    from += step;
                }
            }
            let mut want = Vec::new();
            let mut from = 0;
            for &at in &expected {
                if at >= from {
                    want.push(at);
                    from = at + 1 + if at % step == 0 { step } else { 0 };
                }
            }
            assert_eq!(got, want, "step {step}");
        }
    }

    #[test]
    fn markdown_inline_text_is_inert() {
        let mut out = String::new();
        md_inline(
            &mut out,
            "<b>[x](javascript:y)</b>\n*é* a|b ~~s~~ &amp; `c` /path-1.rs",
        );
        assert_eq!(
            out,
            "\\<b\\>\\[x\\](javascript:y)\\</b\\> \\*é\\* a\\|b \\~\\~s\\~\\~ \\&amp; \\`c\\` /path-1.rs"
        );
    }

    #[test]
    fn a_fence_fed_in_pieces_is_the_fence_of_the_whole() {
        let text = "a `` b ````` c ``` d`";
        for at in 0..=text.len() {
            let (head, tail) = text.split_at(at);
            let mut fence = Fence::default();
            fence.feed(head);
            fence.feed(tail);
            assert_eq!(fence.fence(), md_fence(text), "split at {at}");
        }
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
