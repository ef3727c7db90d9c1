//! Finding the forms of a moved directory in text, on component
//! boundaries, and rewriting them: in a whole text ([`Move`] as a
//! [`Rewrite`]) or in one that comes in parts ([`Stream`]).
//!
//! A form is found where its bytes are (the drive letter in either case)
//! and the bytes around it end a path there:
//! - before it, nothing that continues a path (a name's byte or `/`), or
//!   the end of a JSON escape (`\n`, `\u003e`), at any depth;
//! - after it, a separator, an escape, or anything that is not a name's
//!   byte; a `.` counts as an end when nothing of a name follows it (a
//!   sentence's full stop, not `/a/b.txt`).
//!
//! Names are made of ASCII letters and digits, `.`, `_`, `-`, `~`, `%` and
//! every non-ASCII byte; anything else (a space, a quote, `:`, `=`, `,`)
//! ends a path. A path with a space in its last component is found whole
//! only when the directory moved names it whole.
//!
//! Every form shares one stretch of bytes (an anchor: the directory's
//! last components, as a rule), so a text is searched once, with memchr's
//! memmem, and each place the anchor is found is checked against the
//! forms that hold it.

use memchr::memmem::Finder;

use crate::agy::patch::Rewrite;

use super::{Form, Move};

/// The stretches of bytes searched for, each with the forms that hold it
/// and where.
pub(super) struct Anchors(Vec<(Finder<'static>, Vec<(usize, usize)>)>);

/// The shortest common stretch worth one search for every form.
const SHARED: usize = 3;

impl Anchors {
    pub(super) fn of(forms: &[Form]) -> Anchors {
        // A drive letter is matched in either case: no anchor holds it.
        fn region(f: &Form) -> &[u8] {
            match f.drive_at {
                Some(at) => &f.needle[at + 1..],
                None => &f.needle[..],
            }
        }
        let shared = forms
            .iter()
            .map(region)
            .min_by_key(|r| r.len())
            .map(|shortest| longest_common(shortest, forms.iter().map(region)))
            .filter(|s| s.len() >= SHARED);
        let anchors: Vec<Vec<u8>> = match shared {
            Some(shared) => vec![shared],
            None => {
                let mut each: Vec<Vec<u8>> = forms.iter().map(|f| region(f).to_vec()).collect();
                each.dedup();
                each
            }
        };
        Anchors(
            anchors
                .into_iter()
                .map(|anchor| {
                    let finder = Finder::new(&anchor).into_owned();
                    let mut places = Vec::new();
                    for (i, form) in forms.iter().enumerate() {
                        for at in finder.find_iter(&form.needle) {
                            places.push((i, at));
                        }
                    }
                    (finder, places)
                })
                .collect(),
        )
    }

    fn any_in(&self, bytes: &[u8]) -> bool {
        self.0
            .iter()
            .any(|(finder, _)| finder.find(bytes).is_some())
    }
}

/// The longest stretch of `shortest` that each of `all` holds.
fn longest_common<'a>(shortest: &[u8], all: impl Iterator<Item = &'a [u8]> + Clone) -> Vec<u8> {
    for len in (1..=shortest.len()).rev() {
        for start in 0..=shortest.len() - len {
            let candidate = &shortest[start..start + len];
            if all
                .clone()
                .all(|r| memchr::memmem::find(r, candidate).is_some())
            {
                return candidate.to_vec();
            }
        }
    }
    Vec::new()
}

/// A place found: where it is, which form, and whether its drive letter
/// is lower-case.
#[derive(Clone, Copy, Debug)]
struct Found {
    start: usize,
    end: usize,
    form: usize,
    lower: bool,
}

/// Whether a byte is part of a name (it continues a path).
fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'~' | b'%') || b >= 0x80
}

/// Whether `text[..at]` ends with a JSON escape (at any depth): a letter
/// after a backslash, or `\uXXXX`.
fn escape_ends_at(text: &[u8], at: usize) -> bool {
    let letter = at >= 2
        && text[at - 2] == b'\\'
        && matches!(text[at - 1], b'n' | b'r' | b't' | b'b' | b'f');
    let unicode = at >= 6
        && text[at - 6] == b'\\'
        && text[at - 5] == b'u'
        && text[at - 4..at].iter().all(u8::is_ascii_hexdigit);
    letter || unicode
}

fn starts_a_path(text: &[u8], start: usize) -> bool {
    match start.checked_sub(1).map(|i| text[i]) {
        None => true,
        Some(b) if !name_byte(b) && b != b'/' => true,
        Some(_) => escape_ends_at(text, start),
    }
}

fn ends_a_path(text: &[u8], end: usize) -> bool {
    match text.get(end) {
        None => true,
        Some(&b) if !name_byte(b) => true,
        Some(b'.') => text
            .get(end + 1)
            .is_none_or(|&c| !name_byte(c) && c != b'/'),
        Some(_) => false,
    }
}

impl Move {
    /// The places in `text` whose start is in `from..upto`, in order and
    /// apart, the leftmost (then longest) first.
    fn find(&self, text: &[u8], from: usize, upto: usize) -> Vec<Found> {
        let mut found = Vec::new();
        for (finder, places) in &self.anchors.0 {
            for hit in finder.find_iter(text) {
                for &(form, at) in places {
                    let Some(start) = hit.checked_sub(at) else {
                        continue;
                    };
                    if start < from || start >= upto {
                        continue;
                    }
                    if let Some(place) = self.matches(text, start, form) {
                        found.push(place);
                    }
                }
            }
        }
        found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
        let mut apart = Vec::with_capacity(found.len());
        let mut at = from;
        for place in found {
            if place.start >= at {
                at = place.end;
                apart.push(place);
            }
        }
        apart
    }

    /// The place form `form` makes at `start`, if its bytes are there and
    /// a path starts and ends with them.
    fn matches(&self, text: &[u8], start: usize, form: usize) -> Option<Found> {
        let f = &self.forms[form];
        let end = start + f.needle.len();
        let there = text.get(start..end)?;
        let mut lower = false;
        let same = match f.drive_at {
            None => there == f.needle.as_slice(),
            Some(d) => {
                lower = there[d].is_ascii_lowercase();
                there[..d] == f.needle[..d]
                    && there[d].eq_ignore_ascii_case(&f.needle[d])
                    && there[d + 1..] == f.needle[d + 1..]
            }
        };
        (same && starts_a_path(text, start) && ends_a_path(text, end)).then_some(Found {
            start,
            end,
            form,
            lower,
        })
    }

    fn written(&self, place: &Found) -> &[u8] {
        let form = &self.forms[place.form];
        match place.lower {
            true => &form.lower,
            false => &form.upper,
        }
    }

    /// `text[from..upto]` rewritten at `places` (all inside it), appended to
    /// `out`.
    fn write(&self, out: &mut Vec<u8>, text: &[u8], from: usize, upto: usize, places: &[Found]) {
        let mut at = from;
        for place in places {
            out.extend_from_slice(&text[at..place.start]);
            out.extend_from_slice(self.written(place));
            at = place.end;
        }
        out.extend_from_slice(&text[at..upto]);
        self.count.set(self.count.get() + places.len());
    }
}

impl Rewrite for Move {
    fn may_hold(&self, bytes: &[u8]) -> bool {
        self.anchors.any_in(bytes)
    }

    fn rewrite_into(&self, out: &mut Vec<u8>, text: &[u8]) {
        let places = self.find(text, 0, text.len());
        self.write(out, text, 0, text.len(), &places);
    }

    fn rewritten_len(&self, text: &[u8]) -> usize {
        self.find(text, 0, text.len())
            .iter()
            .map(|p| self.written(p).len() as isize - (p.end - p.start) as isize)
            .sum::<isize>()
            .saturating_add(text.len() as isize) as usize
    }

    /// A move's output holds the new directory, which may be under the
    /// old one: it is never looked at again.
    fn again_as_text(&self) -> bool {
        false
    }
}

/// A text that comes in parts (a brain file), rewritten as it comes: the
/// same as the whole text rewritten at once, each part's end held back
/// until the next part says whether a place runs across it.
pub struct Stream<'m> {
    mv: &'m Move,
    /// Text not yet written, after `context` bytes that were (kept for
    /// what comes before a place).
    held: Vec<u8>,
    context: usize,
}

/// Bytes kept before the held text: enough for a `\uXXXX` escape.
const CONTEXT: usize = 8;

impl<'m> Stream<'m> {
    pub fn new(mv: &'m Move) -> Stream<'m> {
        Stream {
            mv,
            held: Vec::new(),
            context: 0,
        }
    }

    /// Takes the next part of the text (UTF-8, as is every part of a text
    /// file); appends to `out` what can be written of it already.
    pub fn push(&mut self, part: &[u8], out: &mut Vec<u8>) {
        self.held.extend_from_slice(part);
        // A place starting before `safe` is whole, with the two bytes that
        // say where it ends.
        let safe = self.held.len().saturating_sub(self.mv.longest + 2);
        if safe <= self.context {
            return;
        }
        let places = self.mv.find(&self.held, self.context, safe);
        let mut cut = places.last().map_or(safe, |p| p.end.max(safe));
        while cut > self.context && cut < self.held.len() && self.held[cut] & 0xc0 == 0x80 {
            cut -= 1;
        }
        self.mv.write(out, &self.held, self.context, cut, &places);
        let keep_from = cut.saturating_sub(CONTEXT);
        self.held.drain(..keep_from);
        self.context = cut - keep_from;
    }

    /// Ends the text: appends the rest of it to `out`.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let len = self.held.len();
        let places = self.mv.find(&self.held, self.context, len);
        self.mv.write(out, &self.held, self.context, len, &places);
        self.held.clear();
        self.context = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::patch::rewrite_text;

    #[test]
    fn a_text_in_parts_is_rewritten_as_it_would_be_whole() {
        let m = Move::new("/home/me/app", "/srv/x").unwrap();
        let mut text = String::new();
        for i in 0..200 {
            text.push_str(&format!(
                "line {i}: /home/me/app/{i} /home/me/apple file:///home/me/app é\\n/home/me/app.\n"
            ));
        }
        let whole = rewrite_text(text.as_bytes(), &m).unwrap();
        let places = m.take_count();
        assert_eq!(places, 600);
        for part in [1, 2, 7, 13, 64, 1000] {
            let mut out = Vec::new();
            let mut stream = Stream::new(&m);
            // Parts cut at char boundaries, as file parts are.
            let mut at = 0;
            while at < text.len() {
                let mut end = (at + part).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                stream.push(&text.as_bytes()[at..end], &mut out);
                at = end;
            }
            stream.finish(&mut out);
            assert_eq!(m.take_count(), places, "parts of {part}");
            assert!(out == whole, "parts of {part}");
        }
    }

    #[test]
    fn the_longest_of_two_places_at_one_start_wins() {
        // `file:///a/b` and `/a/b` start at different bytes; a needle that
        // holds another (here the URI form) is found at its own start.
        let m = Move::new("/a/b", "/c").unwrap();
        assert_eq!(
            rewrite_text(b"file:///a/b /a/b", &m).unwrap(),
            b"file:///c /c"
        );
    }
}
