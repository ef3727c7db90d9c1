//! Reading a line of JSON in place: a cursor that borrows strings, skips
//! values and checks them, for the readers that must not build a tree.
//!
//! The message reader (agy-encode) and the renderer read lines whose
//! strings run to megabytes. serde_json reads them a byte, or eight, at a
//! time; the cursor finds the end of a string's clean run with
//! [`super::clean_prefix_len`], sixteen bytes at a time, and borrows
//! whatever holds no escape.
//!
//! Its readers are fast paths, not second definitions of JSON: every
//! method answers `None` for anything malformed and for what it leaves to
//! serde_json (a `\u` escape of a lone surrogate, nesting deeper than
//! [`MAX_DEPTH`]), and the caller then reads the line with serde_json,
//! whose result or error stands.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{clean_prefix_len_at, escape_len, simple_str_end_at, unescape_body_at, LoneSurrogate};
use crate::stream::simd::{self, Level};

/// How deep [`Cursor::value`] follows nested arrays and objects before it
/// leaves a value to serde_json (which refuses more than 128 levels).
pub const MAX_DEPTH: usize = 100;

/// The most a string with escapes reserves before it is read ([`Cursor::string`]):
/// a longer one grows from there.
const STRING_ROOM: usize = 64 << 10;

/// Room a string may keep unused past its end; more is given back.
const SLACK: usize = 256;

/// A position in a line of JSON text.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'a> {
    pub text: &'a str,
    pub pos: usize,
    /// [`simd::level`], asked once: a string of code or JSON has a clean
    /// run every few bytes, and asking at each was 4% of agy-render.
    level: Level,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            pos: 0,
            level: simd::level(),
        }
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Whether only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.skip_space();
        self.pos == self.text.len()
    }

    pub fn skip_space(&mut self) {
        let bytes = self.bytes();
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next byte that is not whitespace, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.bytes().get(self.pos).copied()
    }

    /// Consumes `byte` if it comes next.
    pub fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    pub fn literal(&mut self, word: &str) -> Option<()> {
        self.skip_space();
        self.text[self.pos..]
            .starts_with(word)
            .then(|| self.pos += word.len())
    }

    /// Consumes `null` if it comes next.
    pub fn null(&mut self) -> bool {
        self.literal("null").is_some()
    }

    pub fn bool(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal("true").map(|()| true),
            b'f' => self.literal("false").map(|()| false),
            _ => None,
        }
    }

    /// A JSON string: borrowed when it has no escape.
    pub fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let bytes = self.bytes();
        let start = self.pos;
        let end = self.clean_run(start)?;
        if bytes[end] == b'"' {
            self.pos = end + 1;
            return Some(Cow::Borrowed(&self.text[start..end]));
        }
        // Unescaped, the string is no longer than the rest of the line:
        // room for that, up to STRING_ROOM, so that a string of tool output
        // with an escape every few bytes is not grown (and copied) a dozen
        // times from a few bytes up; what is left over is given back below.
        let mut out = Vec::with_capacity((bytes.len() - start).min(STRING_ROOM));
        out.extend_from_slice(&bytes[start..end]);
        // `end` is at a backslash, so a character's boundary.
        let close = end + unescape_body_at(self.level, &self.text[end..], &mut out)?;
        self.pos = close + 1;
        // Shrinking where it stands: the allocator splits the block, no copy.
        if out.capacity() - out.len() > SLACK {
            out.shrink_to_fit();
        }
        debug_assert!(std::str::from_utf8(&out).is_ok());
        // SAFETY: `out` holds runs of the line (a &str) cut only at ASCII
        // bytes, a backslash or a quote, so at characters' boundaries, and
        // escapes written as whole characters (unescape_body_at).
        Some(Cow::Owned(unsafe { String::from_utf8_unchecked(out) }))
    }

    /// The end of the run of string bytes from `at` that need no
    /// unescaping: the position of the next `"` or `\`. `None` at the end
    /// of the line or at a raw control character, which JSON forbids.
    fn clean_run(&self, at: usize) -> Option<usize> {
        let bytes = self.bytes();
        let end = at + clean_prefix_len_at(self.level, bytes.get(at..)?);
        match *bytes.get(end)? {
            b'"' | b'\\' => Some(end),
            _ => None,
        }
    }

    /// Skips one JSON value, checking it, and returns its text (without
    /// the whitespace around it).
    pub fn value(&mut self) -> Option<&'a str> {
        self.skip_space();
        let start = self.pos;
        self.skip_value(0)?;
        Some(&self.text[start..self.pos])
    }

    /// Reads one JSON value into a [`Value`], as serde_json reads it: its
    /// strings unescaped by [`Cursor::string`], its numbers by serde_json's
    /// own parser, a repeated key's last value in the first one's place
    /// (serde_json's map with `preserve_order`). Tool inputs carry whole
    /// files: checking one with [`Cursor::value`] and then parsing its text
    /// with serde_json, a byte or eight at a time, was 7 % of agy-encode.
    pub fn tree(&mut self) -> Option<Value> {
        self.tree_at(0)
    }

    fn tree_at(&mut self, depth: usize) -> Option<Value> {
        Some(match self.peek()? {
            b'"' => Value::String(self.string()?.into_owned()),
            b'{' if depth < MAX_DEPTH => {
                let mut map = Map::new();
                self.members(|cursor, key| {
                    let value = cursor.tree_at(depth + 1)?;
                    map.insert(key.into_owned(), value);
                    Some(())
                })?;
                Value::Object(map)
            }
            b'[' if depth < MAX_DEPTH => {
                let mut items = Vec::new();
                self.array(|cursor| {
                    items.push(cursor.tree_at(depth + 1)?);
                    Some(())
                })?;
                Value::Array(items)
            }
            b'{' | b'[' => return None,
            b't' | b'f' => Value::Bool(self.bool()?),
            b'n' => self.literal("null").map(|()| Value::Null)?,
            _ => {
                let start = self.pos;
                self.skip_number()?;
                Value::Number(self.text[start..self.pos].parse().ok()?)
            }
        })
    }

    fn skip_value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' if depth < MAX_DEPTH => self.skip_object(depth + 1),
            b'[' if depth < MAX_DEPTH => self.array(|cursor| cursor.skip_value(depth + 1)),
            b'{' | b'[' => None,
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            _ => self.skip_number(),
        }
    }

    /// Skips an object whose members sit at `depth`. (Its keys are skipped
    /// like strings, not read as [`Cursor::members`] reads them: that cost
    /// agy-render 2% more instructions.)
    fn skip_object(&mut self, depth: usize) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            self.skip_string()?;
            self.eat(b':')?;
            self.skip_value(depth)?;
            if !self.more(b'}')? {
                return Some(());
            }
        }
    }

    /// Skips a string without unescaping it, checking its escapes: a
    /// simple body is judged a chunk at a time ([`simple_str_end_at`]),
    /// anything else (a `\u` escape, or something wrong) escape by escape.
    ///
    /// (Hopping from backslash to backslash with `memchr2` and checking for
    /// control characters once at the end cost agy-render more
    /// instructions on the large conversation's messages than clean runs;
    /// so did finding the closing quote first and judging the body whole.
    /// Clean runs cost more than the chunks.)
    fn skip_string(&mut self) -> Option<()> {
        // Most strings skipped (keys, names, paths, short values) have
        // no escape: their clean run ends at the closing quote, found a
        // block at a time, where a chunk of the body scan was some two
        // hundred instructions whatever the string's length.
        let mut at = self.clean_run(self.pos + 1)?;
        if self.bytes()[at] == b'"' {
            self.pos = at + 1;
            return Some(());
        }
        // At a backslash, after clean bytes: the body scan starts here.
        if let Some(end) = simple_str_end_at(self.level, self.bytes().get(at..)?) {
            self.pos = at + end + 1;
            return Some(());
        }
        loop {
            at = self.clean_run(at)?;
            if self.bytes()[at] == b'"' {
                self.pos = at + 1;
                return Some(());
            }
            at += escape_len(self.text.get(at..)?, LoneSurrogate::Refuse)?;
        }
    }

    /// Skips a number as JSON writes one:
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn skip_number(&mut self) -> Option<()> {
        let bytes = self.bytes();
        let digits = |at: usize| {
            let mut end = at;
            while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            (end > at).then_some(end)
        };
        let mut at = self.pos + usize::from(bytes.get(self.pos) == Some(&b'-'));
        at = match bytes.get(at)? {
            b'0' => at + 1,
            b'1'..=b'9' => digits(at)?,
            _ => return None,
        };
        if bytes.get(at) == Some(&b'.') {
            at = digits(at + 1)?;
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            at = digits(at)?;
        }
        self.pos = at;
        Some(())
    }

    /// Visits the members of an object; `field` reads each key's value.
    pub fn object(
        &mut self,
        mut field: impl FnMut(&mut Cursor<'a>, &str) -> Option<()>,
    ) -> Option<()> {
        self.members(|cursor, key| field(cursor, &key))
    }

    /// [`Cursor::object`], handing on each key as read (borrowed when it
    /// has no escape).
    pub fn members(
        &mut self,
        mut member: impl FnMut(&mut Cursor<'a>, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            member(self, key)?;
            if !self.more(b'}')? {
                return Some(());
            }
        }
    }

    /// After a member or item: `true` past a comma, `false` past `close`
    /// (the object's or array's end), `None` at anything else.
    pub fn more(&mut self, close: u8) -> Option<bool> {
        let next = self.peek()?;
        if next != b',' && next != close {
            return None;
        }
        self.pos += 1;
        Some(next == b',')
    }

    /// Visits the items of an array; `item` reads each.
    pub fn array(&mut self, mut item: impl FnMut(&mut Cursor<'a>) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.eat(b']').is_some() {
            return Some(());
        }
        loop {
            item(self)?;
            if !self.more(b']')? {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json makes of `text` as one value: its text, or `None`.
    fn serde_value(text: &str) -> Option<&str> {
        serde_json::from_str::<&serde_json::value::RawValue>(text)
            .ok()
            .map(|raw| raw.get())
    }

    fn cursor_value(text: &str) -> Option<&str> {
        let mut cursor = Cursor::new(text);
        let value = cursor.value()?;
        cursor.at_end().then_some(value)
    }

    #[test]
    fn values_are_checked_as_serde_checks_them() {
        let cases = [
            r#"{"a":[1,-2.5e+3,0,true,false,null,"x\ny\u00e9"],"b":{}}"#,
            " [ 1 , { \"k\" : \"v\" } ] ",
            "-0",
            "0.5",
            "1E9",
            r#""\ud83d\ude00""#,
            r#""tab	inside""#,
            "01",
            "1.",
            ".5",
            "-",
            "+1",
            "1e",
            "tru",
            "nul",
            "[1,]",
            "[1 2]",
            r#"{"a" 1}"#,
            r#"{"a":1,}"#,
            r#"{1:2}"#,
            r#"{"a":1]"#,
            r#""\x""#,
            r#""\u12g4""#,
            r#""open"#,
            "",
            "[",
        ];
        for text in cases {
            assert_eq!(cursor_value(text), serde_value(text), "{text:?}");
        }
    }

    /// A value read into a tree is serde_json's tree, key order, repeated
    /// keys and numbers' kinds included; what the cursor leaves to serde
    /// (`None`) is only what serde refuses too, or a lone surrogate.
    #[test]
    fn trees_are_serde_trees() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        let cases = [
            r#"{"a":[1,-2.5e+3,0,true,false,null,"x\ny\u00e9"],"b":{}}"#,
            r#" { "z" : 1 , "a" : { "k" : "v\"q\\" } , "z" : [ ] } "#,
            r#"{"k":1,"k":{"x":2},"j":3}"#,
            "-0",
            "0.5",
            "1E9",
            "1e400",
            "-1e-400",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "0.30000000000000004",
            "123456789012345678901234567890",
            r#""\ud83d\ude00""#,
            r#""\ud83d""#,
            r#""a\/b\b\f\n\r\t""#,
            r#""tab	inside""#,
            "01",
            "[1,]",
            r#"{"a":1,}"#,
            "truex",
            "[true,false,null]",
            &deep,
        ];
        for text in cases {
            let mut cursor = Cursor::new(text);
            let ours = cursor.tree().filter(|_| cursor.at_end());
            let theirs = serde_json::from_str::<Value>(text).ok();
            match (&ours, &theirs) {
                (Some(ours), Some(theirs)) => assert_eq!(
                    serde_json::to_string(ours).unwrap(),
                    serde_json::to_string(theirs).unwrap(),
                    "{text:?}"
                ),
                (None, _) => assert!(
                    theirs.is_none() || text.contains("\\ud83d\"") || text == deep,
                    "{text:?} is left to serde, which reads it"
                ),
                (Some(_), None) => panic!("{text:?}: serde refuses it"),
            }
        }
    }

    #[test]
    fn what_it_leaves_to_serde_it_refuses() {
        // A lone surrogate: serde_json decides.
        assert_eq!(cursor_value(r#""\ud800""#), None);
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(cursor_value(&deep), None);
        let allowed = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(cursor_value(&allowed), Some(allowed.as_str()));
    }

    #[test]
    fn strings_are_borrowed_unless_escaped() {
        let mut cursor = Cursor::new(r#""plain" "a\"b""#);
        assert!(matches!(cursor.string(), Some(Cow::Borrowed("plain"))));
        assert!(matches!(cursor.string(), Some(Cow::Owned(s)) if s == "a\"b"));
        assert!(cursor.at_end());
    }
}
