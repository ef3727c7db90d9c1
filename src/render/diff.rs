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
//! The line numbers in the hunk headers count from the start of the old and
//! new strings, not of the file: the call does not say where in the file
//! they are.

use similar::{Algorithm, DiffOp, DiffTag};

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

/// One hunk: its `@@ -a,b +c,d @@` header and its lines (each without its
/// line ending).
#[derive(Debug, PartialEq, Eq)]
pub struct Hunk<'a> {
    pub header: String,
    pub lines: Vec<(Line, &'a str)>,
}

/// The hunks that turn `old` into `new`; none when they are equal.
pub fn hunks<'a>(old: &'a str, new: &'a str) -> Vec<Hunk<'a>> {
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
    let (old_mid, new_mid) = (old_lines.len() - head - tail, new_lines.len() - head - tail);
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
        similar::capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines)
    };
    let mut out = Vec::new();
    for group in similar::group_diff_ops(ops, CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            let removed = old_range
                .clone()
                .map(|i| (Line::Removed, trim_eol(old_lines[i])));
            let added = new_range.map(|i| (Line::Added, trim_eol(new_lines[i])));
            match tag {
                DiffTag::Equal => {
                    lines.extend(old_range.map(|i| (Line::Context, trim_eol(old_lines[i]))))
                }
                DiffTag::Delete => lines.extend(removed),
                DiffTag::Insert => lines.extend(added),
                DiffTag::Replace => {
                    lines.extend(removed);
                    lines.extend(added);
                }
            }
        }
        out.push(Hunk {
            header: header(old_range, new_range),
            lines,
        });
    }
    out
}

fn trim_eol(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
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

    #[test]
    fn a_changed_line_in_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let hunks = hunks(old, new);
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].header, "@@ -2,7 +2,7 @@");
        let text: Vec<String> = hunks[0]
            .lines
            .iter()
            .map(|(k, l)| {
                let sign = match k {
                    Line::Context => ' ',
                    Line::Removed => '-',
                    Line::Added => '+',
                };
                format!("{sign}{l}")
            })
            .collect();
        assert_eq!(text, [" b", " c", " d", "-e", "+E", " f", " g", " h"]);
    }

    #[test]
    fn pure_insertions_and_equal_strings() {
        assert!(hunks("same", "same").is_empty());
        let h = hunks("", "new line\n");
        assert_eq!(h[0].header, "@@ -0,0 +1,1 @@");
        assert_eq!(h[0].lines, [(Line::Added, "new line")]);
    }

    #[test]
    fn wholly_different_long_strings_are_not_searched() {
        let lines =
            |word: &str, n: usize| -> String { (0..n).map(|i| format!("{word} {i}\n")).collect() };
        let old = format!("same\n{}end\n", lines("old", 300));
        let new = format!("same\n{}end\n", lines("new", 200));
        let h = hunks(&old, &new);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].header, "@@ -1,302 +1,202 @@");
        assert_eq!(h[0].lines[0], (Line::Context, "same"));
        assert_eq!(h[0].lines[1], (Line::Removed, "old 0"));
        assert_eq!(h[0].lines[301], (Line::Added, "new 0"));
        assert_eq!(h[0].lines.last(), Some(&(Line::Context, "end")));
        // A long string with one line changed is still searched.
        let original = lines("x", 5000);
        let mut changed = original.clone();
        changed.replace_range(0..3, "X 0");
        let h = hunks(&original, &changed);
        assert_eq!(h[0].lines.len(), 5);
    }
}
