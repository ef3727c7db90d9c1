//! The first bytes of each line an [`Output`](super::io::Output) writes,
//! handed to a [`Tally`] as soon as the line ends, so that a writer can
//! count the records it wrote (the row stream's `end` record) whatever way
//! each record reached the output: built in the buffer, copied from a
//! spool, written through in pieces.
//!
//! Only the head of the line in progress is held: what this keeps does not
//! grow with the conversation (a 52,000-step conversation's heads, kept
//! until its end, once took 200 MB), and a line whose first bytes already
//! say what it is (every line the writers build) is not copied further.

use std::any::Any;

/// Bytes kept of a line at most: enough for any record's head, and for a
/// line not in the writers' own shape, all of a usual one.
pub const HEAD_MAX: usize = 64 << 10;

/// Bytes of a line after which its [`Tally`] is asked whether they say
/// enough: a record's head in the writers' shape (conversation id, kind,
/// table) fits in far fewer.
const HEAD_ASK: usize = 256;

/// What takes each line's head as soon as the line ends.
pub trait Tally: Any {
    /// Whether `head`, the first bytes of a line not yet ended, already
    /// says all [`Tally::line`] needs of it; the rest is then not kept.
    fn enough(&self, head: &[u8]) -> bool;
    /// One ended line: its head, and whether that is the whole line.
    fn line(&mut self, head: &[u8], whole: bool);
    /// The tally itself, for its owner to take back its own type.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// The head of the line in progress, and the tally its lines go to.
pub struct LineHeads {
    tally: Box<dyn Tally>,
    /// The line in progress: its first bytes, up to [`HEAD_MAX`].
    current: Vec<u8>,
    /// Whether the line in progress has more than `current` keeps.
    current_cut: bool,
    /// Whether `current` was found to say enough (nothing more is kept).
    settled: bool,
}

impl LineHeads {
    pub fn new(tally: Box<dyn Tally>) -> LineHeads {
        LineHeads {
            tally,
            current: Vec::new(),
            current_cut: false,
            settled: false,
        }
    }

    /// Hands later lines to `tally` instead, and gives back the one that
    /// had them. The line in progress goes on (its head so far is kept).
    pub fn replace(&mut self, tally: Box<dyn Tally>) -> Box<dyn Tally> {
        std::mem::replace(&mut self.tally, tally)
    }

    /// Takes bytes as they go out.
    pub fn see(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (piece, ended) = match memchr::memchr(b'\n', bytes) {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            self.keep(piece);
            if !ended {
                return;
            }
            self.end_line();
            bytes = &bytes[piece.len() + 1..];
        }
    }

    /// Takes one whole line, its `\n` last, that the writer built whole and
    /// knows has no other (a record the writers format: JSON escapes every
    /// line break inside a string): its head is taken without looking
    /// through the rest for line ends, the memchr that was a twentieth of
    /// agy-encode. Anything else is looked through as [`LineHeads::see`]
    /// does.
    pub fn see_line(&mut self, line: &[u8]) {
        let in_progress = !self.current.is_empty() || self.current_cut || self.settled;
        match line.split_last() {
            Some((b'\n', body)) if !in_progress => {
                debug_assert!(
                    !body.contains(&b'\n'),
                    "a line said to be one holds another"
                );
                self.keep(body);
                self.end_line();
            }
            _ => self.see(line),
        }
    }

    /// Takes bytes in the middle of a line, which the writer knows hold no
    /// line end (escaped JSON text), without looking through them for one.
    pub fn see_within(&mut self, bytes: &[u8]) {
        debug_assert!(
            !bytes.contains(&b'\n'),
            "bytes said to be within a line end one"
        );
        self.keep(bytes);
    }

    /// Hands the line in progress to the tally, and starts the next.
    fn end_line(&mut self) {
        self.tally
            .line(&self.current, !self.current_cut && !self.settled);
        self.current.clear();
        self.current_cut = false;
        self.settled = false;
    }

    /// Adds part of the line in progress to its head, as far as the head
    /// still wants it.
    fn keep(&mut self, mut piece: &[u8]) {
        if self.settled {
            return;
        }
        if self.current.len() < HEAD_ASK {
            let take = piece.len().min(HEAD_ASK - self.current.len());
            self.current.extend_from_slice(&piece[..take]);
            piece = &piece[take..];
            if self.current.len() == HEAD_ASK && self.tally.enough(&self.current) {
                self.settled = true;
                return;
            }
        }
        let room = HEAD_MAX - self.current.len();
        self.current
            .extend_from_slice(&piece[..piece.len().min(room)]);
        self.current_cut |= piece.len() > room;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps every head; says the head is enough once it starts with `!`.
    #[derive(Default)]
    struct Keep(Vec<(Vec<u8>, bool)>);

    impl Tally for Keep {
        fn enough(&self, head: &[u8]) -> bool {
            head.starts_with(b"!")
        }
        fn line(&mut self, head: &[u8], whole: bool) {
            self.0.push((head.to_vec(), whole));
        }
        fn into_any(self: Box<Self>) -> Box<dyn Any> {
            self
        }
    }

    fn heads(pieces: &[&[u8]]) -> Vec<(Vec<u8>, bool)> {
        let mut heads = LineHeads::new(Box::<Keep>::default());
        for piece in pieces {
            heads.see(piece);
        }
        let tally = heads.replace(Box::<Keep>::default());
        tally.into_any().downcast::<Keep>().unwrap().0
    }

    #[test]
    fn lines_are_found_across_pieces() {
        let got = heads(&[b"ab", b"c\nd", b"\n\nef"]);
        assert_eq!(
            got,
            vec![
                (b"abc".to_vec(), true),
                (b"d".to_vec(), true),
                (Vec::new(), true),
            ]
        );
    }

    #[test]
    fn a_long_line_keeps_its_head() {
        let long = vec![b'x'; HEAD_MAX + 10];
        let got = heads(&[&long[..5], &long[5..], b"\nz\n"]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0.len(), HEAD_MAX);
        assert!(!got[0].1);
        assert_eq!(got[1], (b"z".to_vec(), true));
    }

    #[test]
    fn a_line_said_whole_counts_as_one_looked_through() {
        let long = [vec![b'!'; HEAD_ASK + 10], b"\n".to_vec()].concat();
        let lines: [&[u8]; 4] = [b"ab\n", &long, b"\n", b"c\n"];
        let mut said = LineHeads::new(Box::<Keep>::default());
        let mut seen = LineHeads::new(Box::<Keep>::default());
        for line in lines {
            said.see_line(line);
            seen.see(line);
        }
        // A line in progress is finished as see() would finish it.
        said.see(b"d");
        said.see_line(b"e\n");
        seen.see(b"de\n");
        let take = |mut heads: LineHeads| {
            let tally = heads.replace(Box::<Keep>::default());
            tally.into_any().downcast::<Keep>().unwrap().0
        };
        assert_eq!(take(said), take(seen));
    }

    #[test]
    fn a_head_that_says_enough_is_not_kept_further() {
        let mut line = vec![b'!'; HEAD_ASK + 1000];
        line.push(b'\n');
        let short = vec![b'!'; HEAD_ASK - 1];
        let got = heads(&[&line[..10], &line[10..], &short, b"\n"]);
        assert_eq!(got[0].0, line[..HEAD_ASK]);
        assert!(!got[0].1, "a head cut short is not the whole line");
        assert_eq!(got[1], (short, true));
    }
}
