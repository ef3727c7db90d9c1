//! JSON re-indented for people, written a piece at a time.
//!
//! The layout is `serde_json::to_string_pretty`'s (two spaces, `"key":
//! value`, members in their order, strings and numbers as they were
//! written), made in one pass over the text instead of through a tree.
//! A tool call's input, a block of a type agy-render does not know, a
//! result that is JSON: any of them can be as long as its line, and its
//! indented text whole beside the line, then its page bytes beside both,
//! put agy-render at three times the line. So the indented text is never
//! made whole: [`Pretty::pieces`] hands it on in pieces of about [`PIECE`]
//! bytes, as often as a writer needs (once to count, once to write), and
//! the JSON it comes from stays where it is.

use std::borrow::Cow;
use std::ops::ControlFlow;

use super::stream::Members;

/// Bytes of indented text handed on at a time.
pub const PIECE: usize = 64 << 10;

/// Valid JSON text to re-indent, in parts that follow each other; a value
/// is never cut between parts (an object's members may be in parts of
/// their own), so a string is always within one.
pub struct Pretty<'a> {
    parts: Vec<Cow<'a, str>>,
}

/// The size of the indented text and its line breaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub bytes: usize,
    pub newlines: usize,
    pub ends_with_newline: bool,
}

/// A writer asked for no more.
struct Stopped;

impl<'a> Pretty<'a> {
    pub fn of(json: &'a str) -> Pretty<'a> {
        Pretty {
            parts: vec![Cow::Borrowed(json)],
        }
    }

    /// An object of `members`, each value as it stands in the line: the
    /// text of [`Members::to_json`] without making it.
    pub fn of_members(members: &Members<'a>) -> Pretty<'a> {
        let mut parts = Vec::with_capacity(2 * members.0.len() + 2);
        let mut key = Vec::new();
        for (i, (name, value)) in members.0.iter().enumerate() {
            key.clear();
            key.push(if i == 0 { b'{' } else { b',' });
            crate::stream::json::write_str(&mut key, name);
            key.push(b':');
            parts.push(Cow::Owned(
                String::from_utf8(key.clone()).expect("JSON of a string is UTF-8"),
            ));
            parts.push(Cow::Borrowed(value.get()));
        }
        parts.push(Cow::Borrowed(if members.0.is_empty() { "{}" } else { "}" }));
        Pretty { parts }
    }

    /// The same text, owning its parts: for rendering on another thread.
    pub fn to_owned_parts(&self) -> Pretty<'static> {
        Pretty {
            parts: self
                .parts
                .iter()
                .map(|part| Cow::Owned(part.to_string()))
                .collect(),
        }
    }

    /// Bytes of JSON to re-indent.
    pub fn json_len(&self) -> usize {
        self.parts.iter().map(|part| part.len()).sum()
    }

    /// Hands the indented text to `each` in order, in pieces of [`PIECE`]
    /// to twice that many bytes (more only for one line's indentation) cut
    /// between characters, none empty, until `each` breaks.
    pub fn pieces(&self, each: &mut dyn FnMut(&str) -> ControlFlow<()>) {
        let mut out = Pieces::<true> {
            buf: Vec::with_capacity(PIECE.min(self.json_len() * 2) + 64),
            each,
        };
        if self.indent(&mut out).is_ok() {
            let _ = out.flush(true);
        }
    }

    /// The indented text's size and line breaks, counted as it is made.
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        self.pieces(&mut |piece| {
            counts.bytes += piece.len();
            counts.newlines += memchr::memchr_iter(b'\n', piece.as_bytes()).count();
            counts.ends_with_newline = piece.ends_with('\n');
            ControlFlow::Continue(())
        });
        counts
    }

    /// The indented text whole, for one that is short: made in one
    /// buffer, never handed on in pieces. Its room is twice the JSON's:
    /// a quarter more, as it was, was outgrown (and the text copied) by
    /// many a tool input whose values are short and nested.
    pub fn whole(&self) -> String {
        let mut out = Pieces::<false> {
            buf: Vec::with_capacity(2 * self.json_len() + 64),
            each: &mut |_| ControlFlow::Continue(()),
        };
        let _ = self.indent(&mut out);
        String::from_utf8(out.buf).expect("JSON text with white space changed is UTF-8")
    }

    /// The byte after `at` (in part `part`) that is not white space, and
    /// where it is.
    fn next_non_space(&self, mut part: usize, mut at: usize) -> Option<(usize, usize, u8)> {
        while part < self.parts.len() {
            let bytes = self.parts[part].as_bytes();
            if let Some(skip) = bytes[at.min(bytes.len())..]
                .iter()
                .position(|c| !c.is_ascii_whitespace())
            {
                return Some((part, at + skip, bytes[at + skip]));
            }
            part += 1;
            at = 0;
        }
        None
    }

    fn indent<const CHUNKED: bool>(&self, out: &mut Pieces<CHUNKED>) -> Result<(), Stopped> {
        let mut depth = 0usize;
        let (mut part, mut i) = (0, 0);
        'parts: while part < self.parts.len() {
            let bytes = self.parts[part].as_bytes();
            while i < bytes.len() {
                let b = bytes[i];
                match b {
                    b'"' => {
                        let start = i;
                        i = string_end(bytes, i + 1);
                        match bytes.get(start..start + SHORT) {
                            Some(from) if i - start <= SHORT => out.push_short(from, i - start)?,
                            _ => {
                                for chunk in bytes[start..i].chunks(PIECE) {
                                    out.push(chunk)?;
                                }
                            }
                        }
                        continue;
                    }
                    b'{' | b'[' => {
                        let close = if b == b'{' { b'}' } else { b']' };
                        match self.next_non_space(part, i + 1) {
                            Some((at_part, at, next)) if next == close => {
                                out.push(&[b, close])?;
                                i = at + 1;
                                if at_part != part {
                                    part = at_part;
                                    continue 'parts;
                                }
                                continue;
                            }
                            _ => {}
                        }
                        out.push_byte(b)?;
                        depth += 1;
                        out.newline(depth)?;
                    }
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        out.newline(depth)?;
                        out.push_byte(b)?;
                    }
                    b',' => {
                        out.push_byte(b',')?;
                        out.newline(depth)?;
                    }
                    b':' => out.push(b": ")?,
                    b' ' | b'\t' | b'\n' | b'\r' => {}
                    _ => out.push_byte(b)?,
                }
                i += 1;
            }
            part += 1;
            i = 0;
        }
        Ok(())
    }
}

/// Where the string whose body starts at `bytes[i]` ends: after its
/// closing quote, or at the end of `bytes`.
fn string_end(bytes: &[u8], mut i: usize) -> usize {
    // Most strings are keys and names of a few bytes: looked at eight
    // bytes at a time here, as memchr2's setup costs more than they do.
    let short = i + 4 * 8;
    while i < short {
        let Some(word) = bytes.get(i..i + 8) else {
            break;
        };
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let found = zero_bytes(word ^ QUOTES) | zero_bytes(word ^ BACKSLASHES);
        if found == 0 {
            i += 8;
            continue;
        }
        // The lowest flag is exact (a false one only follows a true one).
        let at = i + (found.trailing_zeros() / 8) as usize;
        if bytes[at] == b'"' {
            return at + 1;
        }
        i = at + 2;
    }
    while i < bytes.len() {
        match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
            Some(at) if bytes[i + at] == b'\\' => i += at + 2,
            Some(at) => return i + at + 1,
            None => return bytes.len(),
        }
    }
    i.min(bytes.len())
}

const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);

/// The high bit of each byte of `word` that is zero set, and possibly of
/// bytes above such a one (a borrow), never below the lowest.
fn zero_bytes(word: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    word.wrapping_sub(ONES) & !word & HIGHS
}

/// A line break and the indentation of up to [`INDENT_LEVELS`] levels, to
/// be cut from: one copy per line break instead of a push and a fill.
const BREAK: [u8; 1 + 2 * INDENT_LEVELS] = {
    let mut line = [b' '; 1 + 2 * INDENT_LEVELS];
    line[0] = b'\n';
    line
};
const INDENT_LEVELS: usize = 32;

/// Runs up to this long are copied by [`Pieces::push_short`].
const SHORT: usize = 32;

/// The indented text on its way to a writer: gathered, and handed on a
/// piece at a time.
/// `CHUNKED`: handed on a piece at a time; else gathered whole (and the
/// checks for a full piece compiled out).
struct Pieces<'e, const CHUNKED: bool> {
    buf: Vec<u8>,
    each: &'e mut dyn FnMut(&str) -> ControlFlow<()>,
}

impl<const CHUNKED: bool> Pieces<'_, CHUNKED> {
    #[inline]
    fn full(&self) -> bool {
        CHUNKED && self.buf.len() >= PIECE
    }

    #[inline]
    fn push(&mut self, bytes: &[u8]) -> Result<(), Stopped> {
        self.buf.extend_from_slice(bytes);
        if self.full() {
            self.flush(false)?;
        }
        Ok(())
    }

    #[inline]
    fn push_byte(&mut self, b: u8) -> Result<(), Stopped> {
        self.buf.push(b);
        if self.full() {
            self.flush(false)?;
        }
        Ok(())
    }

    /// The first `len` bytes of `from` (at most [`SHORT`]): all of `from`
    /// copied, a move of known size, and the rest cut off again. Most of
    /// what is indented is short (keys, names, line breaks), and a call to
    /// copy each was a fifth of indenting a long listing.
    #[inline]
    fn push_short(&mut self, from: &[u8], len: usize) -> Result<(), Stopped> {
        let from: &[u8; SHORT] = from.try_into().expect("SHORT bytes");
        let at = self.buf.len();
        self.buf.extend_from_slice(from);
        self.buf.truncate(at + len);
        if self.full() {
            self.flush(false)?;
        }
        Ok(())
    }

    /// A line break, then two spaces per level.
    #[inline]
    fn newline(&mut self, depth: usize) -> Result<(), Stopped> {
        let len = 1 + 2 * depth;
        if len <= SHORT {
            return self.push_short(&BREAK[..SHORT], len);
        }
        match BREAK.get(..len) {
            Some(line) => self.buf.extend_from_slice(line),
            None => {
                self.buf.push(b'\n');
                self.buf.resize(self.buf.len() + 2 * depth, b' ');
            }
        }
        if self.full() {
            self.flush(false)?;
        }
        Ok(())
    }

    /// Hands on what is gathered, up to its last whole character (all of
    /// it at the `end`).
    fn flush(&mut self, end: bool) -> Result<(), Stopped> {
        let mut cut = self.buf.len();
        if !end {
            // A string's chunk may end inside a character: its last bytes
            // wait for the rest of it.
            while cut > 0 && (self.buf[cut - 1] as i8) < -0x40 {
                cut -= 1;
            }
            if cut > 0 && self.buf[cut - 1] >= 0xc0 {
                cut -= 1;
            }
        }
        if cut == 0 {
            return Ok(());
        }
        let piece = std::str::from_utf8(&self.buf[..cut])
            .expect("JSON text with white space changed is UTF-8 between characters");
        let flow = (self.each)(piece);
        self.buf.drain(..cut);
        match flow {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(()) => Err(Stopped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass, whole-string re-indenter this replaced.
    fn reference(json: &str) -> String {
        let bytes = json.as_bytes();
        let mut out = Vec::new();
        let mut depth = 0usize;
        let newline = |out: &mut Vec<u8>, depth: usize| {
            out.push(b'\n');
            out.resize(out.len() + 2 * depth, b' ');
        };
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match b {
                b'"' => {
                    let start = i;
                    i += 1;
                    while i < bytes.len() {
                        match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                            Some(at) if bytes[i + at] == b'\\' => i += at + 2,
                            Some(at) => {
                                i += at + 1;
                                break;
                            }
                            None => i = bytes.len(),
                        }
                    }
                    out.extend_from_slice(&bytes[start..i.min(bytes.len())]);
                    continue;
                }
                b'{' | b'[' => {
                    let close = if b == b'{' { b'}' } else { b']' };
                    let next = bytes[i + 1..]
                        .iter()
                        .position(|c| !c.is_ascii_whitespace())
                        .map(|at| i + 1 + at);
                    if next.is_some_and(|at| bytes[at] == close) {
                        out.extend_from_slice(&[b, close]);
                        i = next.unwrap_or(i) + 1;
                        continue;
                    }
                    out.push(b);
                    depth += 1;
                    newline(&mut out, depth);
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                    out.push(b);
                }
                b',' => {
                    out.push(b',');
                    newline(&mut out, depth);
                }
                b':' => out.extend_from_slice(b": "),
                b' ' | b'\t' | b'\n' | b'\r' => {}
                _ => out.push(b),
            }
            i += 1;
        }
        String::from_utf8(out).unwrap()
    }

    const SAMPLES: &[&str] = &[
        r#"{"a":1,"b":[1,2,{"c":"x, y: {z}"}],"d":{},"e":[],"f":"q\"uo\\te","g":null,"h":[[]],"i":{"j":{"k":true}}}"#,
        r#"[]"#,
        r#""just a string""#,
        r#"{ "spaced" : [ 1 , 2 ] , "empty" : { } }"#,
    ];
    /// Strings and numbers stay as written (serde_json would rewrite them).
    const AS_WRITTEN: &str = r#"{"é":"😀\u00e9","n":-1.5e3}"#;

    #[test]
    fn the_layout_is_serde_json_s() {
        for json in SAMPLES {
            let value: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(
                Pretty::of(json).whole(),
                serde_json::to_string_pretty(&value).unwrap(),
                "{json}"
            );
        }
    }

    /// Strings of every length around the word and short-string bounds,
    /// with an escaped quote or backslash at every place, and indentation
    /// around the short-copy bound: as the reference indents them.
    #[test]
    fn strings_and_breaks_of_every_length() {
        for len in 0..80 {
            for place in 0..=len {
                for escape in [r#"\""#, r#"\\"#, "é"] {
                    let body: String = (0..len)
                        .map(|i| if i == place { escape } else { "x" })
                        .collect();
                    let json = format!(r#"{{"k":["{body}",{{"{body}":1}}],"n":false}}"#);
                    assert_eq!(Pretty::of(&json).whole(), reference(&json), "{json}");
                }
            }
        }
        for depth in 0..40 {
            let json = format!("{}\"x\"{}", "[".repeat(depth), "]".repeat(depth));
            assert_eq!(Pretty::of(&json).whole(), reference(&json), "{depth}");
        }
    }

    /// Long strings (cut inside characters), deep nesting, many members:
    /// the pieces join up to the reference's text, each is whole
    /// characters, and the counts are the text's.
    #[test]
    fn pieces_make_the_whole_text() {
        let long = "é😀\\\"x".repeat(PIECE / 3);
        let deep = format!("{}1{}", "[".repeat(3000), "]".repeat(3000));
        let wide: String = format!(
            "{{{}}}",
            (0..20_000)
                .map(|i| format!("\"k{i}\":[{i},\"v\"]"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let texts = [
            format!("{{\"a\":\"{long}\",\"b\":[\"{long}\",{{}}]}}"),
            deep,
            wide,
        ];
        for json in texts
            .iter()
            .map(String::as_str)
            .chain(SAMPLES.iter().copied())
            .chain([AS_WRITTEN])
        {
            let want = reference(json);
            let pretty = Pretty::of(json);
            let mut got = String::new();
            pretty.pieces(&mut |piece| {
                assert!(!piece.is_empty());
                assert!(piece.len() <= 2 * PIECE, "{}", piece.len());
                got.push_str(piece);
                ControlFlow::Continue(())
            });
            assert!(got == want, "{}", &json[..json.len().min(80)]);
            assert_eq!(
                pretty.counts(),
                Counts {
                    bytes: want.len(),
                    newlines: want.matches('\n').count(),
                    ends_with_newline: want.ends_with('\n'),
                }
            );
            // A writer that stops early gets no more.
            let mut calls = 0;
            pretty.pieces(&mut |_| {
                calls += 1;
                ControlFlow::Break(())
            });
            assert_eq!(calls, 1);
        }
    }

    #[test]
    fn members_are_indented_as_their_object_is() {
        for json in [
            r#"{"type":"mystery","data":{"x":[1,{}],"y":"z"},"empty":{},"list":[]}"#,
            r#"{}"#,
            r#"{"only":{ }}"#,
        ] {
            let raw = crate::render::stream::Raw::of(json).unwrap();
            let members = Members::of(raw).unwrap();
            assert_eq!(
                Pretty::of_members(&members).whole(),
                reference(&members.to_json())
            );
            assert_eq!(Pretty::of_members(&members).whole(), reference(json));
        }
    }
}
