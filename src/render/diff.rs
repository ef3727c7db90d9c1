//! Edit and MultiEdit calls as unified diffs of their old and new strings.
//!
//! The diff is `similar`'s (Myers) rather than ours: a diff is easy to get
//! subtly wrong, and `similar` is maintained, small and has no required
//! dependencies. Its deadline is not used, since a time limit would make the
//! output depend on the machine's speed; instead a pair of strings too long
//! for a quick diff (more than [`MAX_LINES`] lines together) is shown as all
//! of the old lines removed and all of the new ones added, which is still a
//! correct diff.
//!
//! The line numbers in the hunk headers count from the start of the old and
//! new strings, not of the file: the call does not say where in the file
//! they are.

use similar::{Algorithm, DiffTag};

/// Above this many lines (old and new together) the diff is not searched.
pub const MAX_LINES: usize = 20_000;

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
    if old.lines().count() + new.lines().count() > MAX_LINES {
        return vec![whole(old, new)];
    }
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = similar::capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines);
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

/// Every old line removed, every new line added.
fn whole<'a>(old: &'a str, new: &'a str) -> Hunk<'a> {
    let removed: Vec<_> = old.lines().map(|l| (Line::Removed, l)).collect();
    let added: Vec<_> = new.lines().map(|l| (Line::Added, l)).collect();
    Hunk {
        header: header(0..removed.len(), 0..added.len()),
        lines: removed.into_iter().chain(added).collect(),
    }
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
    fn huge_inputs_are_not_searched() {
        let old = "x\n".repeat(MAX_LINES);
        let new = "y\n".repeat(3);
        let h = hunks(&old, &new);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].header, format!("@@ -1,{MAX_LINES} +1,3 @@"));
        assert_eq!(h[0].lines.len(), MAX_LINES + 3);
    }
}
