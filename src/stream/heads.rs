//! The first bytes of each line an [`Output`](super::io::Output) writes,
//! kept so that a writer can count the records it wrote (the row stream's
//! `end` record) whatever way each record reached the output: built in the
//! buffer, copied from a spool, written through in pieces.

/// Bytes kept of each line: enough for any record's head, and for a line
/// not in the writers' own shape, all of a usual one.
pub const HEAD_MAX: usize = 64 << 10;

/// The heads of the lines seen so far, and the start of the line not yet
/// ended.
#[derive(Debug, Default)]
pub struct LineHeads {
    /// The line in progress: its first [`HEAD_MAX`] bytes.
    current: Vec<u8>,
    /// Whether the line in progress was longer than what `current` keeps.
    current_cut: bool,
    /// Ended lines' heads, one after another, and where each ends and
    /// whether it is the whole line.
    done: Vec<u8>,
    ends: Vec<(usize, bool)>,
}

impl LineHeads {
    /// Takes bytes as they go out.
    pub fn see(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (piece, ended) = match memchr::memchr(b'\n', bytes) {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            let room = HEAD_MAX - self.current.len();
            self.current
                .extend_from_slice(&piece[..piece.len().min(room)]);
            self.current_cut |= piece.len() > room;
            if !ended {
                return;
            }
            self.done.extend_from_slice(&self.current);
            self.ends.push((self.done.len(), !self.current_cut));
            self.current.clear();
            self.current_cut = false;
            bytes = &bytes[piece.len() + 1..];
        }
    }

    /// Calls `each` with the head of every line ended since the last call
    /// (and whether it is the whole line), in order, and forgets them.
    pub fn drain(&mut self, mut each: impl FnMut(&[u8], bool)) {
        let mut start = 0;
        for &(end, whole) in &self.ends {
            each(&self.done[start..end], whole);
            start = end;
        }
        self.done.clear();
        self.ends.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heads(pieces: &[&[u8]]) -> Vec<(Vec<u8>, bool)> {
        let mut heads = LineHeads::default();
        for piece in pieces {
            heads.see(piece);
        }
        let mut got = Vec::new();
        heads.drain(|head, whole| got.push((head.to_vec(), whole)));
        got
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
}
