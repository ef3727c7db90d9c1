//! A text block's (or thinking block's) text: read whole, or, when it is
//! long, read a piece at a time where it is written.
//!
//! A text over [`MARKDOWN_LIMIT`] is shown as written, escaped and nothing
//! else, so it never needs to be whole in memory. Read whole it would be:
//! a text of 50 MB unescaped beside the line it came from, and its page
//! bytes beside both, put agy-render at three times its longest line. So
//! a long text stays borrowed from the line, as JSON, and is unescaped in
//! pieces of [`PIECE`] bytes; the writer hands each piece's page bytes on
//! ([`super::body::Out::spill`]) before the next, and memory stays at
//! about the line.
//!
//! Written in pieces: a text block's text, thinking and a system message's
//! text, in either format (long thinking and system text, like long text,
//! are not read as Markdown); a tool's text output, in either format (HTML
//! counts the pieces first, to place the collapsing markup,
//! [`super::pre`]). No long text is read whole ([`Text::read`] is for short
//! ones).

use std::borrow::Cow;
use std::ops::ControlFlow;

use super::escape::{json_body_text, json_escape};
use super::markdown::MARKDOWN_LIMIT;
use super::raw::Raw;

/// Bytes of a long text unescaped at a time.
const PIECE: usize = 64 << 10;

/// The text of a text block.
#[derive(Debug)]
pub enum Text<'a> {
    /// At most [`MARKDOWN_LIMIT`] bytes, read.
    Read(Cow<'a, str>),
    /// More than [`MARKDOWN_LIMIT`] bytes, left as it stands in the line.
    Long(LongText<'a>),
}

/// A text over [`MARKDOWN_LIMIT`], read only in pieces.
#[derive(Clone, Copy, Debug)]
pub struct LongText<'a> {
    /// The text, or the body of the JSON string literal holding it.
    source: &'a str,
    /// Whether `source` is JSON with escapes still in it.
    escaped: bool,
    /// The text's length in bytes.
    bytes: usize,
    /// Its line breaks and whether it ends with one, when they were counted
    /// with its length (in JSON with escapes).
    breaks: Option<(usize, bool)>,
}

impl<'a> Text<'a> {
    /// The text held by the JSON string literal `raw`; `None` when it is
    /// not a string or has a bad escape.
    pub fn of_json(raw: Raw<'a>) -> Option<Text<'a>> {
        Text::of_json_body(raw.get().strip_prefix('"')?.strip_suffix('"')?)
    }

    /// [`Text::of_json`] of a string literal's body, without its quotes.
    pub fn of_json_body(body: &'a str) -> Option<Text<'a>> {
        if let Some(long) = LongText::of_json_body(body) {
            return Some(Text::Long(long));
        }
        json_body_text(body).map(Text::Read)
    }

    /// A text that is read already.
    pub fn of_str(text: &'a str) -> Text<'a> {
        if text.len() <= MARKDOWN_LIMIT {
            return Text::Read(Cow::Borrowed(text));
        }
        Text::Long(LongText {
            source: text,
            escaped: false,
            bytes: text.len(),
            breaks: None,
        })
    }

    /// The text's length in bytes.
    pub fn bytes(&self) -> usize {
        match self {
            Text::Read(text) => text.len(),
            Text::Long(long) => long.bytes,
        }
    }

    /// The whole text: a short one as it was read, a long one unescaped
    /// into one string (every writer of a long text takes it in pieces).
    pub fn read(&self) -> Cow<'_, str> {
        match self {
            Text::Read(text) => Cow::Borrowed(text),
            Text::Long(long) => {
                let mut whole = String::with_capacity(long.bytes);
                long.pieces(|piece| {
                    whole.push_str(piece);
                    ControlFlow::Continue(())
                });
                Cow::Owned(whole)
            }
        }
    }
}

impl<'a> LongText<'a> {
    /// The text of a string literal's body when it is over the limit;
    /// `None` for a shorter one, which is left unread, or a bad escape.
    pub fn of_json_body(body: &'a str) -> Option<LongText<'a>> {
        // Unescaping only shortens: a literal within the limit holds a
        // text within it.
        if body.len() <= MARKDOWN_LIMIT {
            return None;
        }
        let measured = unescaped_len(body)?;
        (measured.bytes > MARKDOWN_LIMIT).then_some(LongText {
            source: body,
            escaped: measured.escaped,
            bytes: measured.bytes,
            breaks: Some((measured.newlines, measured.ends_with_newline)),
        })
    }

    /// The text's length in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The text's line breaks, and whether it ends with one: counted in
    /// the JSON as it stands, with its length, or in the text.
    pub fn line_breaks(&self) -> (usize, bool) {
        if let Some(breaks) = self.breaks {
            return breaks;
        }
        let bytes = self.source.as_bytes();
        let count = memchr::memchr_iter(b'\n', bytes).count();
        (count, bytes.last() == Some(&b'\n'))
    }

    /// Hands the text to `each` as it stands in the line, in slices of
    /// about [`PIECE`] bytes cut between characters and never inside an
    /// escape, with whether they are JSON still to unescape: for a writer
    /// that unescapes and escapes in one pass.
    pub fn raw_slices(&self, mut each: impl FnMut(&str, bool)) {
        slices(self.source, self.escaped, PIECE, &mut |slice| {
            each(slice, self.escaped)
        });
    }

    /// Hands the text to `each` in order, in pieces of whole characters
    /// of about [`PIECE`] bytes, none empty, until `each` breaks.
    pub fn pieces(&self, mut each: impl FnMut(&str) -> ControlFlow<()>) {
        if self.escaped {
            let _ = unescape_in_pieces(self.source, PIECE, &mut each);
        } else {
            let mut rest = self.source;
            while !rest.is_empty() {
                let (piece, after) = rest.split_at(char_floor(rest, PIECE));
                if each(piece).is_break() {
                    return;
                }
                rest = after;
            }
        }
    }
}

/// The characters of a JSON string literal's body, unescaped as they are
/// read (as [`json_body_text`] unescapes them), for a reader that needs
/// only some of them or one at a time.
pub(super) fn json_chars(body: &str) -> impl Iterator<Item = char> + '_ {
    let mut rest = body;
    std::iter::from_fn(move || {
        let c = rest.chars().next()?;
        if c != '\\' {
            rest = &rest[c.len_utf8()..];
            return Some(c);
        }
        let (c, used) = json_escape(rest).unwrap_or(('\\', 1));
        rest = &rest[used..];
        Some(c)
    })
}

/// Cuts `source` into slices of about `size` bytes at character
/// boundaries, and, when it is `escaped` JSON, never inside an escape.
fn slices(source: &str, escaped: bool, size: usize, each: &mut dyn FnMut(&str)) {
    let mut start = 0;
    while start < source.len() {
        let at = (start + size.max(1)).min(source.len());
        let mut cut = if escaped {
            escape_free_cut(source, start, at)
        } else {
            at
        };
        // Past the bytes that go on a character: never those of an escape.
        while !source.is_char_boundary(cut) {
            cut += 1;
        }
        each(&source[start..cut]);
        start = cut;
    }
}

/// A place at or after `at` where the JSON `source` can be cut, `start`
/// being one: the first with no backslash in the twelve bytes before it,
/// so that no escape (a surrogate pair is the longest) spans it. Looked for
/// in a few KiB, so that a slice is not read twice; in JSON dense with
/// escapes, found by reading them from `start`.
fn escape_free_cut(source: &str, start: usize, at: usize) -> usize {
    const LONGEST_ESCAPE: usize = 12;
    let bytes = source.as_bytes();
    let give_up = (at + (4 << 10)).min(bytes.len());
    let mut cut = at;
    while cut < give_up {
        let from = cut.saturating_sub(LONGEST_ESCAPE).max(start);
        match memchr::memrchr(b'\\', &bytes[from..cut]) {
            None => return cut,
            Some(backslash) => cut = from + backslash + LONGEST_ESCAPE + 1,
        }
    }
    if cut >= bytes.len() {
        return bytes.len();
    }
    let mut walked = start;
    while walked < at {
        let Some(backslash) = memchr::memchr(b'\\', &bytes[walked..at]) else {
            break;
        };
        let escape = walked + backslash;
        walked = escape + json_escape(&source[escape..]).map_or(2, |(_, used)| used);
    }
    walked.max(at).min(bytes.len())
}

/// The largest char boundary of `text` at or before `at` that is past its
/// start (a piece is never empty), or its end.
fn char_floor(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    let mut at = at.max(1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    if at == 0 {
        // `at` was inside the first character: the piece is that one.
        at = text.chars().next().map_or(0, char::len_utf8);
    }
    at
}

/// The length of the text the string literal body `body` holds, whether
/// it has escapes, and its line breaks; `None` at a bad escape.
fn unescaped_len(body: &str) -> Option<Measured> {
    let bytes = body.as_bytes();
    let mut len = 0;
    let mut start = 0;
    let (mut newlines, mut last) = (0, false);
    while let Some(at) = memchr::memchr(b'\\', &bytes[start..]) {
        let at = start + at;
        let (c, used) = json_escape(&body[at..])?;
        len += at - start + c.len_utf8();
        start = at + used;
        newlines += usize::from(c == '\n');
        last = c == '\n';
    }
    Some(Measured {
        bytes: len + bytes.len() - start,
        escaped: start > 0,
        newlines,
        // Plain bytes after the last escape leave `start` short of the end.
        ends_with_newline: last && start == bytes.len(),
    })
}

/// What [`unescaped_len`] finds of a string literal's body in one pass.
#[derive(Debug, PartialEq, Eq)]
struct Measured {
    /// The length of the text it holds.
    bytes: usize,
    /// Whether it has escapes.
    escaped: bool,
    /// The text's line breaks, and whether it ends with one.
    newlines: usize,
    ends_with_newline: bool,
}

/// Unescapes the string literal body `body` into pieces of about `size`
/// bytes, handing each to `each` until it breaks. The body is valid
/// (checked by [`unescaped_len`]); a bad escape would end the text there.
fn unescape_in_pieces(
    body: &str,
    size: usize,
    each: &mut dyn FnMut(&str) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let bytes = body.as_bytes();
    let mut piece = String::with_capacity(size + 4);
    let mut full = |piece: &mut String| {
        if piece.len() >= size {
            each(piece)?;
            piece.clear();
        }
        ControlFlow::Continue(())
    };
    let mut start = 0;
    loop {
        let at = memchr::memchr(b'\\', &bytes[start..]).map_or(bytes.len(), |at| start + at);
        let mut plain = &body[start..at];
        while !plain.is_empty() {
            let (head, tail) = plain.split_at(char_floor(plain, size - piece.len()));
            piece.push_str(head);
            plain = tail;
            full(&mut piece)?;
        }
        let Some((c, used)) = body.get(at..).and_then(json_escape) else {
            break;
        };
        piece.push(c);
        start = at + used;
        full(&mut piece)?;
    }
    if piece.is_empty() {
        return ControlFlow::Continue(());
    }
    each(&piece)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(source: &str, escaped: bool) -> LongText<'_> {
        let Some(measured) = unescaped_len(source).filter(|_| escaped) else {
            return LongText {
                source,
                escaped,
                bytes: source.len(),
                breaks: None,
            };
        };
        LongText {
            source,
            escaped,
            bytes: measured.bytes,
            breaks: Some((measured.newlines, measured.ends_with_newline)),
        }
    }

    /// The pieces of `body` unescaped `size` bytes at a time.
    fn pieces(body: &str, size: usize) -> Vec<String> {
        let mut all = Vec::new();
        let _ = unescape_in_pieces(body, size, &mut |piece| {
            all.push(piece.to_string());
            ControlFlow::Continue(())
        });
        all
    }

    const SAMPLES: [&str; 5] = [
        "plain ascii text",
        "line\nbreak\ttab \"quoted\" back\\slash / <&>",
        "é😀\u{2028}\u{1}ü—x",
        "😀😀😀😀",
        "\\\\\\\"\"",
    ];

    /// `text` as the body of a JSON string literal, as serde_json writes
    /// it and in `\u` escapes only (a surrogate pair too), as other writers
    /// may.
    fn bodies(text: &str) -> [String; 2] {
        let literal = serde_json::to_string(text).unwrap();
        let ascii = text
            .encode_utf16()
            .map(|unit| format!("\\u{unit:04x}"))
            .collect();
        [literal[1..literal.len() - 1].to_string(), ascii]
    }

    #[test]
    fn pieces_join_to_the_text_at_every_size() {
        for text in SAMPLES {
            let [body, ascii] = bodies(text);
            for body in [&body, &ascii] {
                assert_eq!(unescaped_len(body).unwrap().bytes, text.len(), "{body}");
                for size in 1..=text.len() + 2 {
                    let all = pieces(body, size);
                    assert_eq!(all.concat(), text, "{body} by {size}");
                    assert!(all.iter().all(|p| !p.is_empty()), "{body} by {size}");
                    // A piece ends where a character ends: longer than
                    // `size` only by the character that filled it.
                    assert!(all.iter().all(|p| p.len() < size + 4), "{body} by {size}");
                }
            }
        }
    }

    #[test]
    fn text_read_whole_or_in_pieces_is_the_same() {
        let text: String = SAMPLES.concat().repeat(MARKDOWN_LIMIT / 40);
        let literal = serde_json::to_string(&text).unwrap();
        let raw = Raw::of(&literal).unwrap();
        let Some(Text::Long(long)) = Text::of_json(raw) else {
            panic!("a text over the limit is long");
        };
        assert!(long.escaped);
        assert_eq!(long.bytes(), text.len());
        assert_eq!(Text::Long(long).read(), text);
        let Text::Long(plain) = Text::of_str(&text) else {
            panic!("a text over the limit is long");
        };
        let mut joined = String::new();
        let mut count = 0;
        plain.pieces(|piece| {
            assert!(!piece.is_empty() && piece.len() <= PIECE);
            joined.push_str(piece);
            count += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(joined, text);
        assert!(count > 1);
    }

    #[test]
    fn line_breaks_are_counted_without_unescaping() {
        for text in SAMPLES
            .iter()
            .flat_map(|s| [s.to_string(), format!("{s}\n"), format!("\n{s}\n\\")])
        {
            let literal = serde_json::to_string(&text).unwrap();
            let ascii: String = text
                .encode_utf16()
                .map(|unit| format!("\\u{unit:04x}"))
                .collect();
            let want = (text.matches('\n').count(), text.ends_with('\n'));
            for (source, escaped) in [
                (&literal[1..literal.len() - 1], true),
                (&ascii[..], true),
                (&text[..], false),
            ] {
                assert_eq!(long(source, escaped).line_breaks(), want, "{source:?}");
            }
        }
    }

    /// Slices of the JSON as it stands end between escapes and
    /// characters, so each unescapes on its own to its part of the text.
    #[test]
    fn raw_slices_never_cut_an_escape() {
        for text in SAMPLES {
            let [body, ascii] = bodies(text);
            // Escapes too dense for a cut near where a slice would end.
            let dense = "\\\"".repeat(5000);
            let dense_body = dense.replace('\\', "\\\\").replace('"', "\\\"");
            let sources = [
                (&body[..], true),
                (&ascii[..], true),
                (text, false),
                (&dense_body[..], true),
            ];
            for (source, escaped) in sources {
                let text = if source == dense_body {
                    &dense[..]
                } else {
                    text
                };
                let sizes = (1..=source.len().min(64) + 1).chain([100, 4097, 7000]);
                for size in sizes {
                    let mut all = Vec::new();
                    slices(source, escaped, size, &mut |slice| {
                        all.push(slice.to_string())
                    });
                    assert_eq!(all.concat(), source, "{source} by {size}");
                    assert!(all.iter().all(|s| !s.is_empty()), "{source} by {size}");
                    if escaped {
                        let unescaped: String = all
                            .iter()
                            .map(|s| json_body_text(s).expect("a whole escape").into_owned())
                            .collect();
                        assert_eq!(unescaped, text, "{source} by {size}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_break_stops_the_pieces() {
        let text = "x".repeat(3 * PIECE);
        for escaped in [false, true] {
            let mut count = 0;
            long(&text, escaped).pieces(|_| {
                count += 1;
                ControlFlow::Break(())
            });
            assert_eq!(count, 1);
        }
    }

    #[test]
    fn short_text_is_read_and_bad_escapes_are_refused() {
        let raw = Raw::of(r#""a\nb""#).unwrap();
        assert!(matches!(Text::of_json(raw), Some(Text::Read(t)) if t == "a\nb"));
        let number = Raw::of("3").unwrap();
        assert!(Text::of_json(number).is_none());
        assert_eq!(unescaped_len(r"a\x"), None);
        assert_eq!(unescaped_len("a\\"), None);
        // Escapes that shrink a long literal under the limit: read whole.
        let literal = format!("\"{}\"", "\\n".repeat(MARKDOWN_LIMIT / 2 + 1));
        let raw = Raw::of(&literal).unwrap();
        assert!(matches!(Text::of_json(raw), Some(Text::Read(_))));
    }
}
