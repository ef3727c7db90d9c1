//! Lines out of bytes handed over in pieces that need not end where a line
//! does: what one process's [`Output`](super::io::Output) writes, read as
//! lines by another part of the same process (a format's converter after
//! the decoder, the decoder after a dump read in process).

use crate::error::Result;

/// The start of a line whose end has not come yet.
#[derive(Debug, Default)]
pub struct LineCarry {
    partial: Vec<u8>,
}

impl LineCarry {
    /// Calls `line` with each line that `bytes` ends (without its `\n`),
    /// the start of the first one carried over from the pieces before, and
    /// keeps what follows the last `\n`. A line is copied only when it
    /// spans pieces.
    pub fn push(&mut self, bytes: &[u8], line: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            if self.partial.is_empty() {
                line(&rest[..end])?;
            } else {
                self.partial.extend_from_slice(&rest[..end]);
                let whole = std::mem::take(&mut self.partial);
                let done = line(&whole);
                // The allocation is kept for the next line that spans.
                self.partial = whole;
                self.partial.clear();
                done?;
            }
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        Ok(())
    }

    /// What came after the last `\n`, taken: a last line without one.
    pub fn take_rest(&mut self) -> Option<Vec<u8>> {
        (!self.partial.is_empty()).then(|| std::mem::take(&mut self.partial))
    }

    /// Whether a line is under way.
    pub fn is_empty(&self) -> bool {
        self.partial.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way of cutting a text into two or three pieces gives its
    /// lines as they are, the last one (without its `\n`) left over.
    #[test]
    fn lines_come_whole_however_the_bytes_are_cut() {
        let text = b"one\n\ntwo words\nthree\nrest";
        let expected: Vec<&[u8]> = vec![b"one", b"", b"two words", b"three"];
        for a in 0..=text.len() {
            for b in a..=text.len() {
                let mut carry = LineCarry::default();
                let mut got: Vec<Vec<u8>> = Vec::new();
                for piece in [&text[..a], &text[a..b], &text[b..]] {
                    carry
                        .push(piece, &mut |line| {
                            got.push(line.to_vec());
                            Ok(())
                        })
                        .unwrap();
                }
                assert_eq!(got, expected, "cut at {a} and {b}");
                assert!(!carry.is_empty());
                assert_eq!(carry.take_rest().as_deref(), Some(&b"rest"[..]));
                assert!(carry.is_empty() && carry.take_rest().is_none());
            }
        }
    }

    #[test]
    fn a_failing_line_stops_the_piece_and_says_so() {
        let mut carry = LineCarry::default();
        let mut seen = 0;
        let result = carry.push(b"a\nb\nc\n", &mut |line| {
            seen += 1;
            match line {
                b"b" => Err(crate::error::Error::data("bad line")),
                _ => Ok(()),
            }
        });
        assert_eq!(result.unwrap_err().to_string(), "bad line");
        assert_eq!(seen, 2);
    }
}
