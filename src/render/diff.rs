//! Edit and MultiEdit calls as unified diffs of their old and new strings.
//!
//! The diff is `similar`'s (Myers) rather than ours: a diff is easy to get
//! subtly wrong, and `similar` is maintained, small and has no required
//! dependencies. Myers takes time in proportion to the lines times the
//! differences, so two long, wholly different strings would stall a render;
//! `similar` bounds that with a deadline, which is not used here because a
//! time limit makes the output depend on the machine's speed. Instead the
//! lines common to both ends are set aside, and when what is left has more
//! than [`BUDGET`] line pairs it is shown as all removed and all added:
//! still a correct diff, found in linear time, the same on every machine.
//!
//! The strings are read where they stand in the line, as the bodies of
//! their JSON literals: an Edit of a large file is two strings about as
//! long as its line, and unescaped copies of them beside the line put
//! agy-render at over twice the line. Lines are told apart by where their
//! line-break escapes end, compared by what they unescape to (equal JSON
//! makes equal text; otherwise the characters are compared as they are
//! unescaped), and unescaped one at a time only to be written
//! ([`DiffLine::text`]).
//!
//! The line numbers in the hunk headers count from the start of the old and
//! new strings, not of the file: the call does not say where in the file
//! they are.

use std::hash::{Hash, Hasher};

use similar::{Algorithm, DiffOp, DiffTag};

use super::escape::{json_escape, unescape_body_into};
use super::text::json_chars as chars;

/// Old lines times new lines (after the common ends are set aside) above
/// which the difference is not searched: 200 by 200 lines, a few
/// milliseconds at worst.
pub const BUDGET: usize = 40_000;

/// Lines of context around each change.
const CONTEXT: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    Context,
    Removed,
    Added,
}

/// The diff of two strings, each the body of a JSON string literal.
pub struct Diff<'a> {
    old: Side<'a>,
    new: Side<'a>,
    hunks: Vec<Hunk>,
}

/// One hunk: its `@@ -a,b +c,d @@` header and what it shows of each side.
pub struct Hunk {
    pub header: String,
    ops: Vec<DiffOp>,
}

/// A string's lines as they stand in its JSON body, each up to the end of
/// its line break's escape (the last one to the end).
struct Side<'a> {
    lines: Vec<JsonLine<'a>>,
}

impl<'a> Side<'a> {
    fn of(body: &'a str) -> Side<'a> {
        let bytes = body.as_bytes();
        let mut lines = Vec::new();
        let (mut start, mut at) = (0, 0);
        let mut canonical = true;
        while let Some(found) = memchr::memchr(b'\\', &bytes[at..]) {
            let escape = at + found;
            let (c, used) = json_escape(&body[escape..]).unwrap_or(('\\', 1));
            canonical &= is_canonical(&bytes[escape..escape + used], c);
            at = escape + used;
            if c == '\n' {
                lines.push(JsonLine {
                    json: &body[start..at],
                    canonical,
                });
                start = at;
                canonical = true;
            }
        }
        if start < body.len() {
            lines.push(JsonLine {
                json: &body[start..],
                canonical,
            });
        }
        Side { lines }
    }

    fn len(&self) -> usize {
        self.lines.len()
    }

    fn line(&self, i: usize) -> JsonLine<'a> {
        self.lines[i]
    }
}

/// Whether `escape` (for `c`) is the one way JSON writers (serde_json,
/// agy-decode) spell `c`: then two lines of such escapes are equal text
/// exactly when they are equal JSON.
fn is_canonical(escape: &[u8], c: char) -> bool {
    match escape {
        [b'\\', b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f'] => true,
        [b'\\', b'u', b'0', b'0', high, low] => {
            (c as u32) < 0x20
                && !matches!(c, '\u{8}' | '\t' | '\n' | '\u{c}' | '\r')
                && !high.is_ascii_uppercase()
                && !low.is_ascii_uppercase()
        }
        _ => false,
    }
}

/// A line as it stands in JSON; equal (and hashed) by its text.
#[derive(Clone, Copy, Debug)]
struct JsonLine<'a> {
    json: &'a str,
    /// Every escape in it is [`is_canonical`].
    canonical: bool,
}

impl JsonLine<'_> {
    fn has_escape(&self) -> bool {
        memchr::memchr(b'\\', self.json.as_bytes()).is_some()
    }
}

impl PartialEq for JsonLine<'_> {
    fn eq(&self, other: &Self) -> bool {
        if self.json == other.json {
            return true;
        }
        // Different JSON is different text, unless an escape spells a
        // character another way.
        !(self.canonical && other.canonical) && chars(self.json).eq(chars(other.json))
    }
}

impl Eq for JsonLine<'_> {}

/// The text's bytes in one write, so that lines equal as text hash alike
/// whatever their escapes.
impl Hash for JsonLine<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if !self.has_escape() {
            state.write(self.json.as_bytes());
            return;
        }
        thread_local! {
            static TEXT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        TEXT.with_borrow_mut(|text| {
            text.clear();
            unescape_body_into(self.json, text);
            state.write(text.as_bytes());
        });
    }
}

impl<'a> Diff<'a> {
    /// The hunks that turn `old` into `new`, both JSON string bodies (as
    /// valid JSON holds them); none when their texts are equal.
    pub fn of(old: &'a str, new: &'a str) -> Diff<'a> {
        let whole = |json| JsonLine {
            json,
            canonical: false,
        };
        if whole(old) == whole(new) {
            return Diff {
                old: Side { lines: Vec::new() },
                new: Side { lines: Vec::new() },
                hunks: Vec::new(),
            };
        }
        let old = Side::of(old);
        let new = Side::of(new);
        let head = (0..old.len().min(new.len()))
            .take_while(|&i| old.line(i) == new.line(i))
            .count();
        let tail = (0..(old.len() - head).min(new.len() - head))
            .take_while(|&i| old.line(old.len() - 1 - i) == new.line(new.len() - 1 - i))
            .count();
        let (old_mid, new_mid) = (old.len() - head - tail, new.len() - head - tail);
        let ops = if old_mid.saturating_mul(new_mid) > BUDGET {
            vec![
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: head,
                },
                DiffOp::Delete {
                    old_index: head,
                    old_len: old_mid,
                    new_index: head,
                },
                DiffOp::Insert {
                    old_index: head + old_mid,
                    new_index: head,
                    new_len: new_mid,
                },
                DiffOp::Equal {
                    old_index: head + old_mid,
                    new_index: head + new_mid,
                    len: tail,
                },
            ]
        } else {
            similar::capture_diff_slices(Algorithm::Myers, &old.lines, &new.lines)
        };
        let hunks = similar::group_diff_ops(ops, CONTEXT)
            .into_iter()
            .filter_map(|group| {
                let (first, last) = (group.first()?, group.last()?);
                let old_range = first.old_range().start..last.old_range().end;
                let new_range = first.new_range().start..last.new_range().end;
                Some(Hunk {
                    header: header(old_range, new_range),
                    ops: group,
                })
            })
            .collect();
        Diff { old, new, hunks }
    }

    pub fn hunks(&self) -> &[Hunk] {
        &self.hunks
    }

    /// The lines of `hunk` in order, each with the range of its side it
    /// is read from: context and removed lines from the old, added from the
    /// new.
    pub fn lines<'h>(&'h self, hunk: &'h Hunk) -> impl Iterator<Item = (Line, DiffLine<'a>)> + 'h {
        hunk.ops.iter().flat_map(move |op| {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            // An equal range shows its old lines only; the others' old
            // lines are removed, their new ones added.
            let (kind, new_range) = match tag {
                DiffTag::Equal => (Line::Context, 0..0),
                _ => (Line::Removed, new_range),
            };
            let old = old_range.map(move |i| (kind, DiffLine(self.old.line(i).json)));
            let new = new_range.map(move |i| (Line::Added, DiffLine(self.new.line(i).json)));
            old.chain(new)
        })
    }

    /// Lines shown in all, and how many of them are added.
    pub fn counts(&self) -> (usize, usize) {
        let mut lines = 0;
        let mut added = 0;
        for op in self.hunks.iter().flat_map(|hunk| &hunk.ops) {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal | DiffTag::Delete => lines += old_range.len(),
                DiffTag::Insert => {
                    lines += new_range.len();
                    added += new_range.len();
                }
                DiffTag::Replace => {
                    lines += old_range.len() + new_range.len();
                    added += new_range.len();
                }
            }
        }
        (lines, added)
    }
}

/// A line of a diff as it stands in JSON, its line break included.
#[derive(Clone, Copy, Debug)]
pub struct DiffLine<'a>(&'a str);

impl DiffLine<'_> {
    /// The line's text without its line ending (`\n`, `\r\n`), unescaped
    /// into `buf`.
    pub fn text<'b>(&'b self, buf: &'b mut String) -> &'b str {
        let line = match memchr::memchr(b'\\', self.0.as_bytes()).is_some() {
            false => self.0,
            true => {
                buf.clear();
                unescape_body_into(self.0, buf);
                buf.as_str()
            }
        };
        let line = line.strip_suffix('\n').unwrap_or(line);
        line.strip_suffix('\r').unwrap_or(line)
    }
}

/// `@@ -start,len +start,len @@`, one-based as in `diff -u` (an empty
/// range names the line before it).
fn header(old: std::ops::Range<usize>, new: std::ops::Range<usize>) -> String {
    let side = |r: std::ops::Range<usize>| {
        let len = r.end - r.start;
        let start = if len == 0 { r.start } else { r.start + 1 };
        format!("{start},{len}")
    };
    format!("@@ -{} +{} @@", side(old), side(new))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body of `text`'s JSON literal.
    fn body(text: &str) -> String {
        let literal = serde_json::to_string(text).unwrap();
        literal[1..literal.len() - 1].to_string()
    }

    /// Each hunk as its header and `diff -u` lines.
    fn shown(old: &str, new: &str) -> Vec<(String, Vec<String>)> {
        let (old, new) = (body(old), body(new));
        let diff = Diff::of(&old, &new);
        let mut buf = String::new();
        diff.hunks()
            .iter()
            .map(|hunk| {
                let lines = diff
                    .lines(hunk)
                    .map(|(kind, line)| {
                        let sign = match kind {
                            Line::Context => ' ',
                            Line::Removed => '-',
                            Line::Added => '+',
                        };
                        format!("{sign}{}", line.text(&mut buf))
                    })
                    .collect();
                (hunk.header.clone(), lines)
            })
            .collect()
    }

    #[test]
    fn a_changed_line_in_context() {
        let hunks = shown("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nE\nf\ng\nh\n");
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].0, "@@ -2,7 +2,7 @@");
        assert_eq!(hunks[0].1, [" b", " c", " d", "-e", "+E", " f", " g", " h"]);
    }

    #[test]
    fn pure_insertions_and_equal_strings() {
        assert!(shown("same", "same").is_empty());
        let h = shown("", "new line\n");
        assert_eq!(h[0].0, "@@ -0,0 +1,1 @@");
        assert_eq!(h[0].1, ["+new line"]);
        // Equal text written with other escapes is the same text.
        assert!(Diff::of(r"a\nb", r"\u0061\u000ab").hunks().is_empty());
        let d = Diff::of(r"x\ny\r\nz", r"x\u000ay\r\nZ");
        assert_eq!(d.hunks().len(), 1);
        assert_eq!(d.hunks()[0].header, "@@ -1,3 +1,3 @@");
        let mut buf = String::new();
        let lines: Vec<(Line, String)> = d
            .lines(&d.hunks()[0])
            .map(|(kind, l)| (kind, l.text(&mut buf).to_string()))
            .collect();
        // A line spelled another way in the middle is still the same line.
        let d = Diff::of(r"a\nb\nc\nd\n", r"a\n\u0062\nC\nd\n");
        let kinds: Vec<Line> = d.lines(&d.hunks()[0]).map(|(kind, _)| kind).collect();
        assert_eq!(
            kinds,
            [
                Line::Context,
                Line::Context,
                Line::Removed,
                Line::Added,
                Line::Context
            ]
        );
        assert_eq!(
            lines,
            [
                (Line::Context, "x".to_string()),
                (Line::Context, "y".to_string()),
                (Line::Removed, "z".to_string()),
                (Line::Added, "Z".to_string())
            ]
        );
    }

    #[test]
    fn wholly_different_long_strings_are_not_searched() {
        let lines =
            |word: &str, n: usize| -> String { (0..n).map(|i| format!("{word} {i}\n")).collect() };
        let old = format!("same\n{}end\n", lines("old", 300));
        let new = format!("same\n{}end\n", lines("new", 200));
        let h = shown(&old, &new);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].0, "@@ -1,302 +1,202 @@");
        assert_eq!(h[0].1[0], " same");
        assert_eq!(h[0].1[1], "-old 0");
        assert_eq!(h[0].1[301], "+new 0");
        assert_eq!(h[0].1.last().map(String::as_str), Some(" end"));
        // A long string with one line changed is still searched.
        let original = lines("x", 5000);
        let mut changed = original.clone();
        changed.replace_range(0..3, "X 0");
        assert_eq!(shown(&original, &changed)[0].1.len(), 5);
    }

    /// The diff `similar` makes of the strings' lines whole, as this
    /// module made it before it read them in JSON: hunks of (kind, line).
    fn whole(old: &str, new: &str) -> Vec<(String, Vec<String>)> {
        if old == new {
            return Vec::new();
        }
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        let head = old_lines
            .iter()
            .zip(&new_lines)
            .take_while(|(a, b)| a == b)
            .count();
        let tail = old_lines[head..]
            .iter()
            .rev()
            .zip(new_lines[head..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let (om, nm) = (old_lines.len() - head - tail, new_lines.len() - head - tail);
        let ops = if om.saturating_mul(nm) > BUDGET {
            vec![
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: head,
                },
                DiffOp::Delete {
                    old_index: head,
                    old_len: om,
                    new_index: head,
                },
                DiffOp::Insert {
                    old_index: head + om,
                    new_index: head,
                    new_len: nm,
                },
                DiffOp::Equal {
                    old_index: head + om,
                    new_index: head + nm,
                    len: tail,
                },
            ]
        } else {
            similar::capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines)
        };
        let trim = |l: &str| {
            let l = l.strip_suffix('\n').unwrap_or(l);
            l.strip_suffix('\r').unwrap_or(l).to_string()
        };
        similar::group_diff_ops(ops, CONTEXT)
            .into_iter()
            .filter_map(|group| {
                let (first, last) = (group.first()?, group.last()?);
                let header = header(
                    first.old_range().start..last.old_range().end,
                    first.new_range().start..last.new_range().end,
                );
                let mut lines = Vec::new();
                for op in &group {
                    let (tag, o, n) = op.as_tag_tuple();
                    let removed = o.clone().map(|i| format!("-{}", trim(old_lines[i])));
                    let added = n.map(|i| format!("+{}", trim(new_lines[i])));
                    match tag {
                        DiffTag::Equal => {
                            lines.extend(o.map(|i| format!(" {}", trim(old_lines[i]))))
                        }
                        DiffTag::Delete => lines.extend(removed),
                        DiffTag::Insert => lines.extend(added),
                        DiffTag::Replace => {
                            lines.extend(removed);
                            lines.extend(added);
                        }
                    }
                }
                Some((header, lines))
            })
            .collect()
    }

    /// Random edits of random texts (escapes, CRLF, no final line break,
    /// repeated lines, within and over the budget): the same hunks as
    /// `similar` on the lines whole.
    #[test]
    fn hunks_are_those_of_the_lines_whole() {
        let mut state: u64 = 5;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let words = ["a", "b\r", "é\"\\", "\u{1}<&>", "", "😀 x", "tab\t"];
        for round in 0..400 {
            let count = 1 + next(if round % 10 == 0 { 400 } else { 30 }) as usize;
            let old: Vec<String> = (0..count)
                .map(|_| words[next(words.len() as u64) as usize].to_string())
                .collect();
            let mut new = old.clone();
            for _ in 0..1 + next(if round % 7 == 0 { 300 } else { 4 }) {
                let at = next(new.len() as u64 + 1) as usize;
                match next(3) {
                    0 if at < new.len() => {
                        new.remove(at);
                    }
                    1 if at < new.len() => new[at] = format!("changed {round}"),
                    _ => new.insert(at, words[next(words.len() as u64) as usize].to_string()),
                }
            }
            let end = |v: &Vec<String>, nl: bool| {
                let mut s = v.join("\n");
                if nl {
                    s.push('\n');
                }
                s
            };
            let (old, new) = (end(&old, next(2) == 0), end(&new, next(2) == 0));
            assert_eq!(shown(&old, &new), whole(&old, &new), "{old:?} -> {new:?}");
        }
    }
}
