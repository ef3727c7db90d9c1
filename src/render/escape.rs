//! Escaping for HTML text and attribute values, and for Markdown.
//!
//! Everything from a conversation goes through one of these before it
//! reaches a page: text nodes escape `&`, `<` and `>`; attribute values (always
//! written double-quoted) also `"` and `'`. Tool output is most of a page's
//! bytes, so text escaping jumps between the bytes that need it with
//! `memchr3` instead of looking at every byte.
//!
//! JSON's string escapes are read by the stream's reader
//! ([`json::read_escape`], through [`json_escape`]), one reading whether a
//! string from the stream is read whole or in pieces.

use std::borrow::Cow;

use crate::stream::json::{self, LoneSurrogate};
use crate::stream::simd::{self, Level};

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

/// Finds the bytes of a set of three, a block of 64 at a time (two AVX2
/// or four SSE2 compares, SSE2 being the x86-64 baseline), keeping the
/// other hits of a block for the next call. Tool output has a line break
/// every few dozen bytes, and starting a fresh search from each one (as
/// `memchr3` does) cost more than the escaping; blocks of sixteen, a call
/// each, were still 6 % of agy-render on the large conversation.
struct Finder<'a> {
    bytes: &'a [u8],
    needles: [u8; 3],
    /// Whose routine classes a block.
    level: Level,
    /// Where the block of `mask` starts; one bit per byte of it that is a
    /// needle and has not been returned.
    block: usize,
    mask: u64,
}

/// The bytes of a [`Finder`]'s block.
const BLOCK: usize = 64;

impl<'a> Finder<'a> {
    fn new(bytes: &'a [u8], needles: [u8; 3]) -> Finder<'a> {
        Finder::at(simd::level(), bytes, needles)
    }

    /// A finder with the routines of `level`, which this CPU must run.
    fn at(level: Level, bytes: &'a [u8], needles: [u8; 3]) -> Finder<'a> {
        let mut finder = Finder {
            bytes,
            needles,
            level,
            block: 0,
            mask: 0,
        };
        finder.mask = finder.mask_at(0);
        finder
    }

    /// The first needle at or after `from`.
    #[inline]
    fn next(&mut self, from: usize) -> Option<usize> {
        if from >= self.block + BLOCK {
            self.block = from;
            self.mask = self.mask_at(from);
        } else if from > self.block {
            self.mask &= !((1u64 << (from - self.block)) - 1);
        }
        loop {
            if self.mask != 0 {
                return Some(self.block + self.mask.trailing_zeros() as usize);
            }
            self.block += BLOCK;
            if self.block >= self.bytes.len() {
                return None;
            }
            self.mask = self.mask_at(self.block);
        }
    }

    fn mask_at(&self, start: usize) -> u64 {
        let Some(block) = self.bytes.get(start..start + BLOCK) else {
            let tail = self.bytes.get(start..).unwrap_or_default();
            return mask_scalar(tail, self.needles);
        };
        block_mask(
            self.level,
            block.try_into().expect("a whole block"),
            self.needles,
        )
    }
}

/// One bit per byte of `bytes` (at most 64) that is one of `needles`.
fn mask_scalar(bytes: &[u8], needles: [u8; 3]) -> u64 {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| needles.contains(b))
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// [`mask_scalar`] of a whole block, with the routine of `level`.
#[cfg(target_arch = "x86_64")]
fn block_mask(level: Level, block: &[u8; BLOCK], needles: [u8; 3]) -> u64 {
    match level {
        Level::Scalar => mask_scalar(block, needles),
        // SAFETY (both): `level` is never above what the CPU has, and SSE2
        // is part of the x86-64 baseline; the functions read only their
        // arguments.
        Level::Sse2 | Level::Ssse3 => unsafe { block_mask_sse2(block, needles) },
        Level::Avx2 => unsafe { block_mask_avx2(block, needles) },
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn block_mask(_level: Level, block: &[u8; BLOCK], needles: [u8; 3]) -> u64 {
    mask_scalar(block, needles)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn block_mask_sse2(block: &[u8; BLOCK], needles: [u8; 3]) -> u64 {
    use std::arch::x86_64::*;
    (0..BLOCK / 16).fold(0, |mask, i| {
        let part: &[u8; 16] = block[i * 16..i * 16 + 16].try_into().expect("16 bytes");
        // SAFETY: the part is 16 bytes; the load is unaligned.
        let v = unsafe { _mm_loadu_si128(part.as_ptr().cast()) };
        let hit = |needle: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(needle as i8));
        let any = _mm_or_si128(
            hit(needles[0]),
            _mm_or_si128(hit(needles[1]), hit(needles[2])),
        );
        mask | u64::from(_mm_movemask_epi8(any) as u16) << (i * 16)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn block_mask_avx2(block: &[u8; BLOCK], needles: [u8; 3]) -> u64 {
    use std::arch::x86_64::*;
    (0..BLOCK / 32).fold(0, |mask, i| {
        let half: &[u8; 32] = block[i * 32..i * 32 + 32].try_into().expect("32 bytes");
        // SAFETY: the half is 32 bytes; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(half.as_ptr().cast()) };
        let hit = |needle: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(needle as i8));
        let any = _mm256_or_si256(
            hit(needles[0]),
            _mm256_or_si256(hit(needles[1]), hit(needles[2])),
        );
        mask | u64::from(_mm256_movemask_epi8(any) as u32) << (i * 32)
    })
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

    /// Appends `run`, text that needs no escape, counting its line breaks
    /// as [`Counted::newline`] would one by one.
    fn run(&mut self, out: &mut Vec<u8>, run: &[u8], preview_lines: usize) {
        let at = out.len();
        out.extend_from_slice(run);
        let breaks = memchr::memchr_iter(b'\n', run).count();
        if self.newlines < preview_lines && self.newlines + breaks >= preview_lines {
            let last = memchr::memchr_iter(b'\n', run)
                .nth(preview_lines - self.newlines - 1)
                .expect("the run holds that many line breaks");
            self.preview_end = Some((at + last + 1, self.bytes + last + 1));
        }
        self.newlines += breaks;
        self.bytes += run.len();
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
    // Line breaks need counting, not escaping: the runs between escapes
    // are copied whole and their breaks counted at once. Stopping at each
    // break (a copy and a count per line) was most of writing indented
    // JSON, a line every twenty bytes. (The finder looks for three bytes;
    // `&` stands in twice.)
    let mut finder = Finder::new(bytes, [b'&', b'<', b'&']);
    let mut start = 0;
    while let Some(at) = finder.next(start) {
        counted.run(out, &bytes[start..at], preview_lines);
        counted.escaped(out, bytes[at] as char);
        start = at + 1;
    }
    counted.run(out, &bytes[start..], preview_lines);
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
/// once and never held decoded. A bad escape, which valid JSON does not
/// hold, shows as U+FFFD in place of its backslash.
pub fn html_json_counted(out: &mut Vec<u8>, body: &str, preview_lines: usize) -> Counted {
    html_json_counted_at(simd::level(), out, body, preview_lines)
}

/// [`html_json_counted`] with the routines of `level` (which this CPU must
/// run: see [`Level::supported`]), for the tests and fuzz targets.
pub fn html_json_counted_at(
    level: Level,
    out: &mut Vec<u8>,
    body: &str,
    preview_lines: usize,
) -> Counted {
    let bytes = body.as_bytes();
    let mut counted = Counted::default();
    let mut last = 0u8;
    // What the vectored loop leaves (the last 32 to 63 bytes at least) is
    // taken a stop at a time; `last` comes from there, as it always holds
    // bytes.
    let mut start = html_json_vectored(level, out, body, preview_lines, &mut counted);
    let mut finder = Finder::at(level, bytes, [b'\\', b'&', b'<']);
    while let Some(at) = finder.next(start) {
        out.extend_from_slice(&bytes[start..at]);
        counted.bytes += at - start;
        (start, last) = html_json_stop(body, at, out, &mut counted, preview_lines);
    }
    out.extend_from_slice(&bytes[start..]);
    counted.bytes += bytes.len() - start;
    if start < bytes.len() {
        last = bytes[bytes.len() - 1];
    }
    counted.ends_with_newline = last == b'\n';
    counted
}

/// Writes what stands at `at` in `body` (a backslash, `&` or `<`) for
/// [`html_json_counted_at`]; returns where the text goes on and the last
/// byte written of the text (0 for a character beyond ASCII).
#[inline(always)]
fn html_json_stop(
    body: &str,
    at: usize,
    out: &mut Vec<u8>,
    counted: &mut Counted,
    preview_lines: usize,
) -> (usize, u8) {
    let bytes = body.as_bytes();
    if bytes[at] != b'\\' {
        counted.escaped(out, bytes[at] as char);
        return (at + 1, bytes[at]);
    }
    // A two-letter escape (most are `\n` and `\"`) is its byte, which
    // needs no HTML escape; a call each to read it and to write it was
    // 3 % of agy-render's instructions.
    if let Some(byte) = bytes
        .get(at + 1)
        .and_then(|&letter| json::simple_escape(letter))
    {
        if byte == b'\n' {
            counted.newline(out, preview_lines);
        } else {
            out.push(byte);
            counted.bytes += 1;
        }
        return (at + 2, byte);
    }
    let (c, used) = json_escape(&body[at..]).unwrap_or(('\u{FFFD}', 1));
    if c == '\n' {
        counted.newline(out, preview_lines);
    } else {
        counted.escaped(out, c);
    }
    (at + used, if c.is_ascii() { c as u8 } else { 0 })
}

/// The start of [`html_json_counted_at`]'s work done by `level`'s
/// vectored routine, if it has one; returns where it stopped (0 when it
/// has none: the scalar level, SSE2 and SSSE3, other architectures).
#[cfg(target_arch = "x86_64")]
fn html_json_vectored(
    level: Level,
    out: &mut Vec<u8>,
    body: &str,
    preview_lines: usize,
    counted: &mut Counted,
) -> usize {
    match level {
        // SAFETY: `level` is never above what the CPU has
        // (crate::stream::simd); the function touches memory only through
        // slices and `out`'s spare capacity, as it says.
        Level::Avx2 => unsafe { html_json_avx2(out, body, preview_lines, counted) },
        _ => 0,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn html_json_vectored(
    _level: Level,
    _out: &mut Vec<u8>,
    _body: &str,
    _preview_lines: usize,
    _counted: &mut Counted,
) -> usize {
    0
}

/// Each round stores thirty-two bytes of the body into `out`'s spare
/// capacity and keeps those before the first backslash, `&` or `<` (all
/// of them when there is none), then writes what stands there
/// ([`html_json_stop`]). Tool output has an escaped line break every forty
/// bytes or so; a stop through the finder, a copy call and the pushes was
/// some ninety instructions, a seventh of agy-render. Stops while 64 bytes
/// are left, so that a round's load and an escape's letters are within
/// the body.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn html_json_avx2(
    out: &mut Vec<u8>,
    body: &str,
    preview_lines: usize,
    counted: &mut Counted,
) -> usize {
    use std::arch::x86_64::*;
    let bytes = body.as_bytes();
    let mut i = 0;
    while i + 64 <= bytes.len() {
        // Room for the 32 bytes and what a stop writes after them.
        out.reserve(64);
        let chunk: &[u8; 32] = bytes[i..i + 32].try_into().expect("32 bytes");
        // SAFETY: 32 bytes are there; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
        let hit = |needle: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(needle as i8));
        let stops = _mm256_or_si256(hit(b'\\'), _mm256_or_si256(hit(b'&'), hit(b'<')));
        let mask = _mm256_movemask_epi8(stops) as u32;
        let len = out.len();
        let room = &mut out.spare_capacity_mut()[..33];
        // SAFETY: 33 bytes of spare capacity are there; the store is
        // unaligned.
        unsafe { _mm256_storeu_si256(room.as_mut_ptr().cast(), v) };
        if mask == 0 {
            // SAFETY: the store above wrote these 32 bytes.
            unsafe { out.set_len(len + 32) };
            counted.bytes += 32;
            i += 32;
            continue;
        }
        let kept = mask.trailing_zeros() as usize;
        let at = i + kept;
        // A two-letter escape's byte is written after the kept bytes here;
        // anything else goes through the stop.
        let byte = match bytes[at] {
            b'\\' => json::simple_escape(bytes[at + 1]).unwrap_or(0),
            _ => 0,
        };
        if byte == 0 {
            // SAFETY: the store above wrote these `kept` bytes (under 32).
            unsafe { out.set_len(len + kept) };
            counted.bytes += kept;
            i = html_json_stop(body, at, out, counted, preview_lines).0;
            continue;
        }
        room[kept].write(byte);
        // SAFETY: the store wrote the `kept` bytes, and the byte after
        // them was just written.
        unsafe { out.set_len(len + kept + 1) };
        counted.bytes += kept + 1;
        i = at + 2;
        if byte == b'\n' {
            counted.newlines += 1;
            if counted.newlines == preview_lines {
                counted.preview_end = Some((out.len(), counted.bytes));
            }
        }
    }
    i
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
    json::unescape_text_at(simd::level(), body, LoneSurrogate::Replace, out)
}

/// The character of the escape `escape` starts with (a backslash and what
/// follows), and the bytes it took; `None` for a bad escape. A lone
/// surrogate is shown as U+FFFD. The renderer's reading of escapes, whether
/// a string is read whole or in pieces (a long text): the stream's, with
/// the one leniency a page can afford.
pub(super) fn json_escape(escape: &str) -> Option<(char, usize)> {
    json::read_escape(escape, LoneSurrogate::Replace)
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

    /// What html_json_counted must write for `body`: serde_json's reading
    /// of the string, then `&` and `<` escaped.
    fn decoded_then_escaped(body: &str) -> Vec<u8> {
        let text: String = serde_json::from_str(&format!("\"{body}\"")).unwrap();
        let mut out = Vec::new();
        html_pre_text(&mut out, &text);
        out
    }

    #[test]
    fn each_level_unescapes_and_escapes_as_serde_json_and_html_text() {
        let pieces = [
            "plain",
            "&",
            "<",
            ">",
            "\\n",
            "\\\\",
            "\\\"",
            "\\/",
            "\\t",
            "\\u0026",
            "\\u003c",
            "\\ud83d\\ude00",
            "é",
            "\n",
        ];
        for len in 0..80 {
            for seed in 0..pieces.len() {
                let body: String = (0..len)
                    .map(|i| pieces[(i * 7 + seed * 3 + i * i) % pieces.len()].replace('\n', "x"))
                    .collect();
                let expected = decoded_then_escaped(&body);
                let text: String = serde_json::from_str(&format!("\"{body}\"")).unwrap();
                let mut plain = Vec::new();
                let counted_plain = html_text_counted(&mut plain, &text, 3);
                for level in Level::supported_levels() {
                    let mut out = Vec::new();
                    let counted = html_json_counted_at(level, &mut out, &body, 3);
                    assert_eq!(out, expected, "{level:?} {body:?}");
                    assert_eq!(counted, counted_plain, "{level:?} {body:?}");
                }
            }
        }
    }

    #[test]
    fn a_body_ending_in_a_lone_backslash_is_written_whole() {
        for body in ["a\\", "\\", &("x".repeat(40) + "\\")] {
            for level in Level::supported_levels() {
                let mut out = Vec::new();
                let counted = html_json_counted_at(level, &mut out, body, 10);
                let shown = String::from_utf8(out).unwrap();
                assert_eq!(shown, body.replace('\\', "\u{FFFD}"));
                assert_eq!(counted.bytes, shown.len());
            }
        }
    }

    #[test]
    fn a_unicode_escape_takes_four_hex_digits_only() {
        let mut out = Vec::new();
        html_json_counted(&mut out, "\\u+041\\u0041", 10);
        assert_eq!(String::from_utf8(out).unwrap(), "\u{FFFD}u+041A");
        assert_eq!(json_body_text("\\u+041"), None);
        assert_eq!(json_escape("\\u-041"), None);
    }

    #[test]
    fn the_finder_finds_every_needle_once() {
        // Needles every few bytes, and needles only about the edges of
        // the 64-byte blocks, with long runs of none between.
        let dense: Vec<u8> = (0..200u32)
            .map(|i| match i % 7 {
                0 => b'&',
                3 if i % 2 == 0 => b'<',
                _ => b'a' + (i % 26) as u8,
            })
            .collect();
        let mut sparse = vec![b'x'; 300];
        for at in [0, 62, 63, 64, 127, 128, 129, 255, 299] {
            sparse[at] = b'\n';
        }
        for text in [dense, sparse] {
            finds_every_needle_once(&text);
        }
    }

    fn finds_every_needle_once(text: &[u8]) {
        let expected: Vec<usize> = (0..text.len())
            .filter(|&i| matches!(text[i], b'&' | b'<' | b'\n'))
            .collect();
        for (step, level) in [1, 2, 5, 17, 70]
            .into_iter()
            .flat_map(|step| Level::supported_levels().map(move |level| (step, level)))
        {
            let mut finder = Finder::at(level, text, [b'&', b'<', b'\n']);
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
            assert_eq!(got, want, "step {step} {level:?}");
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
