//! A JSON object's members by where their bytes are, and edits to them
//! that keep every other byte: agy's JSON side files are changed one entry
//! at a time, and a move and its reverse must give back the file they
//! started from.
//!
//! agy writes these files with Go's `encoding/json` (agy-store(5)): objects
//! indented by two spaces with keys sorted (`MarshalIndent`), strings with
//! `<`, `>` and `&` escaped. A member added here is written the same way,
//! at its sorted place when the object's keys are sorted, and indented as
//! its neighbours are.

use std::ops::Range;

use crate::stream::json::Cursor;

/// One member of an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub key: String,
    /// The key's string, quotes included.
    pub key_at: Range<usize>,
    /// The value's text.
    pub value: Range<usize>,
}

/// An object of `text`, between its braces.
#[derive(Clone, Debug)]
pub struct Object {
    /// Where `{` and `}` are.
    pub open: usize,
    pub close: usize,
    pub members: Vec<Member>,
}

impl Object {
    /// The object whose `{` is the first non-space byte of `text` from
    /// `at`; `None` when there is none there or it is malformed.
    pub fn parse(text: &str, at: usize) -> Option<Object> {
        let mut cursor = Cursor::new(text);
        cursor.pos = at;
        cursor.skip_space();
        let open = cursor.pos;
        cursor.eat(b'{')?;
        let mut members = Vec::new();
        if cursor.eat(b'}').is_none() {
            loop {
                cursor.skip_space();
                let key_start = cursor.pos;
                let key = cursor.string()?.into_owned();
                let key_at = key_start..cursor.pos;
                cursor.eat(b':')?;
                cursor.skip_space();
                let start = cursor.pos;
                cursor.value()?;
                members.push(Member {
                    key,
                    key_at,
                    value: start..cursor.pos,
                });
                if !cursor.more(b'}')? {
                    break;
                }
            }
        }
        Some(Object {
            open,
            close: cursor.pos - 1,
            members,
        })
    }

    /// The whole of `text` as one object, nothing after it.
    pub fn parse_whole(text: &str) -> Option<Object> {
        let object = Object::parse(text, 0)?;
        text[object.close + 1..]
            .bytes()
            .all(|b| b.is_ascii_whitespace())
            .then_some(object)
    }

    pub fn get(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

/// Replacements of byte ranges of one text, applied together.
#[derive(Debug, Default)]
pub struct Edits(Vec<(Range<usize>, String)>);

impl Edits {
    pub fn replace(&mut self, range: Range<usize>, with: String) {
        self.0.push((range, with));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with every replacement made; ranges may not overlap (an
    /// insertion is an empty range, and two at one place keep their order).
    pub fn apply(mut self, text: &str) -> String {
        self.0.sort_by_key(|(range, _)| (range.start, range.end));
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (range, with) in self.0 {
            debug_assert!(range.start >= at, "overlapping edits");
            out.push_str(&text[at..range.start]);
            out.push_str(&with);
            at = range.end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// Renames a member, its value and place kept.
    pub fn rename(&mut self, member: &Member, key: &str) {
        self.replace(member.key_at.clone(), go_string(key));
    }

    /// Replaces a member's value with the JSON text `value`.
    pub fn set(&mut self, member: &Member, value: &str) {
        self.replace(member.value.clone(), value.to_string());
    }

    /// Removes member `i` of `object` with the separator before it (or,
    /// for the first, after it).
    pub fn remove(&mut self, object: &Object, i: usize) {
        let members = &object.members;
        let range = if i > 0 {
            members[i - 1].value.end..members[i].value.end
        } else if members.len() > 1 {
            members[0].key_at.start..members[1].key_at.start
        } else {
            // The only member: the object becomes `{}`.
            object.open + 1..object.close
        };
        self.replace(range, String::new());
    }

    /// Adds a member to `object` (which has no member `key`): at its
    /// sorted place when the keys are sorted, else last; laid out as its
    /// neighbours are, or for an empty object indented under `{` by two
    /// spaces more than the line the object opens on (on one line when the
    /// text has no line breaks).
    pub fn insert(&mut self, text: &str, object: &Object, key: &str, value: &str) {
        let member = |colon: &str| format!("{}{colon}{value}", go_string(key));
        let members = &object.members;
        if members.is_empty() {
            if !text.contains('\n') {
                self.replace(object.open + 1..object.close, member(":"));
                return;
            }
            let line_start = text[..object.open].rfind('\n').map_or(0, |at| at + 1);
            let indent: String = text[line_start..object.open]
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            self.replace(
                object.open + 1..object.close,
                format!("\n{indent}  {}\n{indent}", member(": ")),
            );
            return;
        }
        // The layout of the members already there.
        let first = &members[0];
        let lead = &text[object.open + 1..first.key_at.start];
        let colon = &text[first.key_at.end..first.value.start];
        // What separates member `j` from the next, after its comma.
        let sep_after = |j: usize| {
            let end = members[j].value.end;
            let comma = end + text[end..].find(',').expect("members are comma-separated");
            &text[comma + 1..members[j + 1].key_at.start]
        };
        let sorted = members.windows(2).all(|w| w[0].key <= w[1].key);
        let before = sorted
            .then(|| members.iter().position(|m| m.key.as_str() > key))
            .flatten();
        match before {
            // First: the new member takes the first one's place and lead,
            // and the old one follows after a comma.
            Some(0) => {
                let at = first.key_at.start;
                self.replace(at..at, format!("{},{lead}", member(colon)));
            }
            // Right after member `p`'s value, so that removing it again
            // takes away exactly what was added.
            at => {
                let p = at.map_or(members.len() - 1, |i| i - 1);
                let sep = match members.len() {
                    1 => lead,
                    n if p + 1 < n => sep_after(p),
                    _ => sep_after(p - 1),
                };
                let end = members[p].value.end;
                self.replace(end..end, format!(",{sep}{}", member(colon)));
            }
        }
    }
}

/// `s` as a JSON string the way Go's `encoding/json` writes one: `<`, `>`,
/// `&`, U+2028 and U+2029 as `\u` escapes, control characters as `\n`,
/// `\r`, `\t` or `\u00XX`.
pub fn go_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(text: &str, change: impl FnOnce(&mut Edits, &Object)) -> String {
        let object = Object::parse_whole(text).unwrap();
        let mut edits = Edits::default();
        change(&mut edits, &object);
        edits.apply(text)
    }

    #[test]
    fn members_are_found_where_they_are() {
        let text = "{\n  \"/a\": \"x\",\n  \"b\\\"c\": {\"d\": [1, 2]}\n}";
        let object = Object::parse_whole(text).unwrap();
        let keys: Vec<&str> = object.members.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["/a", "b\"c"]);
        assert_eq!(&text[object.members[1].value.clone()], "{\"d\": [1, 2]}");
        assert_eq!(&text[object.members[0].key_at.clone()], "\"/a\"");
        assert!(Object::parse_whole("{} x").is_none());
        assert!(Object::parse_whole("{\"a\" 1}").is_none());
        assert!(Object::parse_whole("[]").is_none());
    }

    #[test]
    fn inserts_are_laid_out_as_go_would() {
        // Go's MarshalIndent, sorted keys, no newline at the end.
        let text = "{\n  \"/b\": \"2\",\n  \"/d\": \"4\"\n}";
        let first = edit(text, |e, o| e.insert(text, o, "/a", "\"1\""));
        assert_eq!(
            first,
            "{\n  \"/a\": \"1\",\n  \"/b\": \"2\",\n  \"/d\": \"4\"\n}"
        );
        let middle = edit(text, |e, o| e.insert(text, o, "/c", "\"3\""));
        assert_eq!(
            middle,
            "{\n  \"/b\": \"2\",\n  \"/c\": \"3\",\n  \"/d\": \"4\"\n}"
        );
        let last = edit(text, |e, o| e.insert(text, o, "/e", "\"5\""));
        assert_eq!(
            last,
            "{\n  \"/b\": \"2\",\n  \"/d\": \"4\",\n  \"/e\": \"5\"\n}"
        );
        let empty = edit("{}", |e, o| e.insert("{}", o, "/a", "\"1\""));
        assert_eq!(empty, "{\"/a\":\"1\"}");
        let nested = "{\n  \"conversations\": {}\n}\n";
        let inner = Object::parse(nested, nested.find(": {").unwrap() + 1).unwrap();
        let mut edits = Edits::default();
        edits.insert(nested, &inner, "c", "{}");
        assert_eq!(
            edits.apply(nested),
            "{\n  \"conversations\": {\n    \"c\": {}\n  }\n}\n"
        );
        let compact = "{\"b\":1}";
        assert_eq!(
            edit(compact, |e, o| e.insert(compact, o, "a<", "0")),
            "{\"a\\u003c\":0,\"b\":1}"
        );
    }

    #[test]
    fn a_remove_undoes_an_insert() {
        let texts = [
            "{\n  \"/b\": \"2\",\n  \"/d\": \"4\"\n}",
            "{\"b\":1}",
            "{}",
            "{\n  \"/b\": \"2\"\n}",
        ];
        for text in texts {
            for key in ["/a", "/c", "/e"] {
                let added = edit(text, |e, o| e.insert(text, o, key, "\"x\""));
                let object = Object::parse_whole(&added).unwrap();
                let i = object.members.iter().position(|m| m.key == key).unwrap();
                let back = edit(&added, |e, o| e.remove(o, i));
                if text == "{}" {
                    assert_eq!(back, "{}");
                } else {
                    assert_eq!(back, text, "{key} into {text:?}");
                }
            }
        }
    }

    #[test]
    fn whitespace_before_a_comma_is_kept_where_it_is() {
        // fuzz/side found this: a separator that is not only after the comma.
        let text = "{\n  \"/a\": \"1\"\r\r,\n  \"/c\": \"3\" ,\n  \"/e\": \"5\"\n}";
        for key in ["/0", "/b", "/d", "/f"] {
            let added = edit(text, |e, o| e.insert(text, o, key, "\"x\""));
            let parsed: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&added).unwrap();
            assert_eq!(parsed[key], "x", "{added:?}");
            let object = Object::parse_whole(&added).unwrap();
            let i = object.members.iter().position(|m| m.key == key).unwrap();
            assert_eq!(edit(&added, |e, o| e.remove(o, i)), text, "{key}");
        }
    }

    #[test]
    fn strings_are_escaped_as_go_escapes_them() {
        assert_eq!(go_string("C:\\Users\\me"), "\"C:\\\\Users\\\\me\"");
        assert_eq!(go_string("a>b&c"), "\"a\\u003eb\\u0026c\"");
        assert_eq!(go_string("\u{1}\n"), "\"\\u0001\\n\"");
    }
}
