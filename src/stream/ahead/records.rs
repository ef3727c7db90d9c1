//! [`Records`]: message records parsed on the reading thread.

use std::ffi::OsStr;

use self_cell::self_cell;

use super::{Ahead, Piece, Returned, Unparsed};
use crate::error::{Error, Result};
use crate::stream::io::{LineBatch, Lines, Place};
use crate::stream::message::InputRecord;
use crate::stream::message_reader::read_line;

/// What each line of a batch parsed to.
type Parsed<'a> = Vec<Result<InputRecord<'a>>>;

self_cell!(
    /// A batch of lines and the records parsed from them, which borrow
    /// their text.
    pub(super) struct Batch {
        owner: LineBatch,
        #[covariant]
        dependent: Parsed,
    }
);

impl Unparsed {
    /// The batch parsed, and the input's failure if it failed.
    pub(super) fn parse(self) -> (Batch, Option<Error>) {
        let batch = Batch::new(self.lines, |lines| {
            (0..lines.spans.len())
                .map(|i| read_line(lines.line(i)))
                .collect()
        });
        (batch, self.failed)
    }
}

/// The message records of one input (`-` is stdin), read ahead.
pub struct Records {
    lines: Lines,
    /// Called just before the reading thread starts.
    threading: Option<fn()>,
}

impl Records {
    /// Opens `path`, or standard input for `-`.
    pub fn open(path: &OsStr) -> Result<Records> {
        Ok(Records::new(Lines::open(path)?))
    }

    /// The records of the lines `lines` reads.
    pub fn new(lines: Lines) -> Records {
        Records {
            lines,
            threading: None,
        }
    }

    /// Calls `threading` just before the reading thread starts, if it
    /// does: agy-encode's allocator is told that a second thread is about
    /// to allocate ([`crate::cli::heap`]).
    pub fn when_threading(mut self, threading: fn()) -> Records {
        self.threading = Some(threading);
        self
    }

    /// Calls `each` with every record (or the error its line gave) and its
    /// place, in input order, until the input ends or `each` returns an
    /// error, which is returned.
    ///
    /// A record is lent, not given: it stays in its batch, which goes back
    /// to the thread that parsed it and is freed there with everything the
    /// records own (unescaped strings, blocks, tool inputs). A block freed
    /// by another thread than the one that allocated it takes that
    /// thread's arena lock in glibc's malloc, and the two threads then
    /// wait on each other.
    pub fn for_each<F>(self, mut each: F) -> Result<()>
    where
        F: FnMut(Place<'_>, Result<&InputRecord<'_>>) -> Result<()>,
    {
        let mut lines = self.lines;
        let name = lines.name().to_string();
        let first = Unparsed::fill(&mut lines, LineBatch::default());
        if first.last {
            let (mut batch, failed) = first.parse();
            give(&name, &mut batch, &mut each)?;
            return failed.map_or(Ok(()), Err);
        }
        if let Some(threading) = self.threading {
            threading();
        }
        let ahead = Ahead::start(lines)?;
        // The first batch is parsed here while the thread reads the next;
        // it was never in flight, and what it holds was allocated here.
        let mut first = first.parse().0;
        give(&name, &mut first, &mut each)?;
        ahead.recycle(Returned::Here(first.into_owner()));
        loop {
            match ahead.next()? {
                Piece::Batch(mut batch) => {
                    give(&name, &mut batch, &mut each)?;
                    ahead.recycle(Returned::Parsed(batch));
                }
                Piece::Failed(err) => return Err(err),
                Piece::End => return ahead.finish(),
            }
        }
    }
}

/// Lends `batch`'s records, read from input `name`, to `each`; a line's
/// error is given by value, and the place it leaves is not read again.
fn give<F>(name: &str, batch: &mut Batch, each: &mut F) -> Result<()>
where
    F: FnMut(Place<'_>, Result<&InputRecord<'_>>) -> Result<()>,
{
    batch.with_dependent_mut(|lines, parsed| {
        for (record, &line) in parsed.iter_mut().zip(&lines.numbers) {
            let record = match record {
                Ok(record) => Ok(&*record),
                // The error itself is given; what stays in the batch is
                // never read again.
                Err(err) => Err(std::mem::replace(err, Error::data("(given)"))),
            };
            each(Place { name, line }, record)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::io::{self, Read};

    use super::super::{BATCH_BYTES, REUSE_AT_MOST};
    use super::*;

    /// A message record of about `len` bytes, its text `n`.
    fn record(n: usize, len: usize) -> String {
        let pad = "x".repeat(len);
        format!(
            r#"{{"conversation":"c","kind":"message","role":"user","content":[{{"type":"text","text":"{n} {pad}\n"}}]}}"#
        )
    }

    /// Reads `data`, then fails with `fail` when given one.
    struct Source {
        data: Vec<u8>,
        at: usize,
        fail: Option<io::ErrorKind>,
    }

    impl Read for Source {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.data.len() - self.at).min(4096);
            if n == 0 {
                match self.fail {
                    Some(io::ErrorKind::Deadlock) => panic!("the reader's own panic"),
                    Some(kind) => return Err(io::Error::new(kind, "gone")),
                    None => {}
                }
            }
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn records(text: &str, fail: Option<io::ErrorKind>) -> Records {
        let source = Source {
            data: text.as_bytes().to_vec(),
            at: 0,
            fail,
        };
        Records::new(Lines::from_reader("t", Box::new(source)))
    }

    /// What reading `records` gives: each record's place and text (or
    /// its error), then how it ended.
    fn read(records: Records) -> (Vec<(String, String)>, Result<()>) {
        let mut got = Vec::new();
        let end = records.for_each(|place, record| {
            let text = match record {
                Ok(record) => match &record.content.as_deref().unwrap()[0] {
                    crate::stream::message::Block::Text { text, .. } => {
                        text.split(' ').next().unwrap().to_string()
                    }
                    _ => unreachable!(),
                },
                Err(e) => format!("error: {e}"),
            };
            got.push((place.to_string(), text));
            Ok(())
        });
        (got, end)
    }

    /// Every record comes once, in order, at its line (blank lines
    /// counted, not given), whether the input ends in the first batch
    /// (read in place) or goes on for many (read ahead), with lines longer
    /// than a batch among them, and lines longer than a buffer is kept for
    /// (whose batches the caller frees instead of giving them back).
    #[test]
    fn records_come_in_order_at_their_lines() {
        for (count, len) in [
            (3, 10),
            (400, 3000),
            (20, 3 * BATCH_BYTES),
            (3, REUSE_AT_MOST + 1000),
        ] {
            let mut text = String::new();
            let mut expected = Vec::new();
            let mut line = 0;
            for n in 0..count {
                text.push_str(&record(n, len));
                text.push('\n');
                line += 1;
                expected.push((format!("t:{line}"), n.to_string()));
                if n % 7 == 0 {
                    text.push_str("  \n");
                    line += 1;
                }
            }
            let (got, end) = read(records(&text, None));
            end.unwrap();
            assert!(got == expected, "{count} records of {len} bytes");
        }
    }

    /// A line that does not parse comes as its error at its place, after
    /// every record before it; when the caller stops there, nothing after
    /// it is given, as reading line by line would have stopped.
    #[test]
    fn a_bad_line_comes_at_its_place_and_the_caller_can_stop_there() {
        let mut text = String::new();
        for n in 0..600 {
            match n {
                500 => text.push_str("{not json"),
                _ => text.push_str(&record(n, 3000)),
            }
            text.push('\n');
        }
        let (got, end) = read(records(&text, None));
        end.unwrap();
        assert_eq!(got.len(), 600);
        assert_eq!(got[500].0, "t:501");
        assert!(
            got[500].1.starts_with("error: bad message record"),
            "{}",
            got[500].1
        );
        let mut given = 0;
        let end = records(&text, None).for_each(|place, record| {
            given += 1;
            record.map(drop).map_err(|e| e.context(place))
        });
        assert_eq!(given, 501);
        assert!(end
            .unwrap_err()
            .to_string()
            .starts_with("t:501: bad message record"));
    }

    /// An input that fails part way ends the reading with its error, after
    /// the records read before it; never as if the input had ended.
    #[test]
    fn an_input_that_fails_is_an_error_not_an_end() {
        for count in [2, 600] {
            let text: String = (0..count).map(|n| record(n, 3000) + "\n").collect();
            let (got, end) = read(records(&text, Some(io::ErrorKind::Other)));
            assert_eq!(got.len(), count, "{count} records");
            let err = end.unwrap_err().to_string();
            assert!(err.contains("t") && err.contains("gone"), "{err}");
        }
    }

    /// The thread's end without a word of the input's end (it panicked)
    /// is an error, never the end of the records.
    #[test]
    fn a_reading_thread_that_dies_is_an_error() {
        // The last line has no newline: it cannot be given before the read
        // that would have said the input ended, which panics.
        let text: String = (0..600).map(|n| record(n, 3000) + "\n").collect();
        let (got, end) = read(records(text.trim_end(), Some(io::ErrorKind::Deadlock)));
        // The batch it was reading is lost with it; those before came.
        assert!(
            got.len() > BATCH_BYTES / 3100 && got.len() < 600,
            "{}",
            got.len()
        );
        let err = end.unwrap_err().to_string();
        assert!(err.contains("stopped before the input ended"), "{err}");
    }
}
