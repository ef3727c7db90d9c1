//! [`Lines`]: newline-delimited records read from one input.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::ops::Range;

use super::{grow_pipe, KEEP_AT_MOST};
use crate::error::{Error, Result};

/// Reads newline-delimited records from one input (`-` is stdin).
///
/// Lines are returned as slices of one buffer, found with `memchr`: a line
/// is copied only when it straddles two reads (and then once), not into a
/// second buffer as `BufRead::read_until` would. The buffer grows to the
/// longest line and no further.
pub struct Lines {
    reader: Box<dyn Read + Send>,
    name: String,
    line_number: u64,
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
}

/// Room made in the buffer: [`FIRST_READ`] at first, so that a small
/// input touches (and zero-fills) little memory, then, whenever less than
/// `FIRST_READ` is left, as much again as the buffer holds, up to a MiB (a
/// pipe's whole buffer); each read asks for at most [`READ_CAP`] of it.
/// Growing by a MiB at once zero-filled (and faulted in) a MiB for an input
/// of a few hundred KiB: a tenth of agy-decode's run on examples/sample.
const READ_SIZE: usize = 1 << 20;
const FIRST_READ: usize = 1 << 16;

/// The most one read asks for, however much room the buffer has. A buffer
/// grown to a long line (megabytes) was filled whole by each read: the
/// kernel's copy then went out to memory and the parse read it back from
/// there. A read of a few hundred KiB stays in the cache until it is
/// parsed: agy-decode on BIGW's rows, from a file, took 0.65 s CPU and
/// then 0.60 s (64, 128 and 256 KiB did alike); agy-encode and agy-render
/// on its messages 4 % less.
const READ_CAP: usize = 256 << 10;

impl Lines {
    /// Opens `path`, or standard input for `-`.
    pub fn open(path: &OsStr) -> Result<Lines> {
        if path == "-" {
            grow_pipe(0);
            return Ok(Lines::from_reader("stdin", Box::new(io::stdin())));
        }
        let name = path.to_string_lossy().into_owned();
        let file = File::open(path).map_err(|e| Error::io(&name, e))?;
        Ok(Lines::from_reader(&name, Box::new(file)))
    }

    pub fn from_reader(name: &str, reader: Box<dyn Read + Send>) -> Lines {
        Lines {
            reader,
            name: name.to_string(),
            line_number: 0,
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
        }
    }

    /// The next non-blank line without its line ending, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>> {
        Ok(self.next_line_span()?.map(|span| &self.buf[span]))
    }

    /// [`Lines::next_line`] with its line number, for a reader that keeps
    /// the line while it may still have to say where it was: the place is
    /// [`Lines::name`] and the number, formatted only when needed.
    pub fn next_numbered_line(&mut self) -> Result<Option<(u64, &[u8])>> {
        Ok(self
            .next_line_span()?
            .map(|span| (self.line_number, &self.buf[span])))
    }

    /// Where in `buf` the next non-blank line is, without its line ending.
    fn next_line_span(&mut self) -> Result<Option<Range<usize>>> {
        loop {
            let Some(span) = self.next_span()? else {
                return Ok(None);
            };
            self.line_number += 1;
            if let Some(line) = self.trimmed(span) {
                return Ok(Some(line));
            }
        }
    }

    /// The line at `span` in `buf` without its line ending; `None` when it
    /// is blank.
    fn trimmed(&self, span: Range<usize>) -> Option<Range<usize>> {
        let mut line = &self.buf[span.clone()];
        while let [rest @ .., b'\n' | b'\r'] = line {
            line = rest;
        }
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return None;
        }
        Some(span.start..span.start + line.len())
    }

    /// The span of the next line in `buf`, reading more as needed; the last
    /// line may lack its newline.
    fn next_span(&mut self) -> Result<Option<Range<usize>>> {
        let mut searched = self.start;
        loop {
            if let Some(at) = memchr::memchr(b'\n', &self.buf[searched..self.end]) {
                let span = self.start..searched + at + 1;
                self.start = span.end;
                return Ok(Some(span));
            }
            searched = self.end;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let span = self.start..self.end;
                self.start = self.end;
                return Ok(Some(span));
            }
            searched -= self.make_room();
            self.read_more()?;
        }
    }

    /// Makes room to read into: moves the partial line to the front, then
    /// grows the buffer if little is left. Returns how far it moved.
    fn make_room(&mut self) -> usize {
        let moved = self.start;
        if moved > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= moved;
            self.start = 0;
        }
        if self.buf.len() - self.end < FIRST_READ {
            let room = self.buf.len().clamp(FIRST_READ, READ_SIZE);
            self.buf.resize(self.end + room, 0);
        }
        moved
    }

    /// Reads into the room after `end` (at most [`READ_CAP`]); nothing read
    /// is the end of the input.
    fn read_more(&mut self) -> Result<()> {
        let n = loop {
            let room = self.buf.len().min(self.end + READ_CAP);
            match self.reader.read(&mut self.buf[self.end..room]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::io(&self.name, e)),
            }
        };
        if n == 0 {
            self.eof = true;
        }
        self.end += n;
        Ok(())
    }

    /// Reads whole lines until they hold `want` bytes, the buffer is full
    /// or the input ends, and hands over the buffer they were read into as
    /// `batch.text`, with where each line is in it, for a reader that works
    /// on them elsewhere ([`crate::stream::ahead`]). The lines are the ones
    /// [`Lines::next_line`] would give. `batch`'s old buffer becomes the
    /// one the next lines are read into, so a reader that hands its batches
    /// back reads with no new allocation and nothing copied but a line
    /// that straddles two batches.
    ///
    /// False when the input ended: `batch` holds its last lines. An input
    /// that fails is its error, with the lines read before it in `batch`.
    pub fn next_batch(&mut self, want: usize, batch: &mut LineBatch) -> Result<bool> {
        batch.spans.clear();
        batch.numbers.clear();
        // A buffer grows to hold the batch and one read past it, once it is
        // full and the input goes on (so a short input fills few pages with
        // zeros); with less it would be handed over with far less in it
        // (more batches, each a hand-over between threads). A buffer given
        // back keeps its size.
        let room = want.min(READ_SIZE) + READ_CAP;
        let mut bytes = 0;
        let mut searched = self.start;
        let read = loop {
            if let Some(at) = memchr::memchr(b'\n', &self.buf[searched..self.end]) {
                let span = self.start..searched + at + 1;
                (self.start, searched) = (span.end, span.end);
                bytes += self.add_line(span, batch);
                if bytes >= want {
                    break Ok(true);
                }
                continue;
            }
            searched = self.end;
            if self.eof {
                if self.start < self.end {
                    self.add_line(self.start..self.end, batch);
                    self.start = self.end;
                }
                break Ok(false);
            }
            if batch.spans.is_empty() {
                // Nothing in the buffer to keep where it is.
                searched -= self.make_room();
            } else if self.end == self.buf.len() {
                if self.buf.len() >= room {
                    break Ok(true);
                }
                // Grown in place: the lines in it stay where they are.
                let more = self.buf.len().clamp(FIRST_READ, READ_SIZE);
                self.buf.resize(self.buf.len() + more, 0);
            }
            if let Err(err) = self.read_more() {
                break Err(err);
            }
        };
        // The partial line goes to the front of the buffer read into next.
        let tail = self.start..self.end;
        let mut next = std::mem::take(&mut batch.text);
        if next.len() < tail.len() {
            next.resize(tail.len(), 0);
        }
        next[..tail.len()].copy_from_slice(&self.buf[tail]);
        batch.text = std::mem::replace(&mut self.buf, next);
        self.end -= self.start;
        self.start = 0;
        read
    }

    /// Counts the line at `span` in `buf`, and adds it to `batch` unless it
    /// is blank; returns its length there.
    fn add_line(&mut self, span: Range<usize>, batch: &mut LineBatch) -> usize {
        self.line_number += 1;
        let Some(line) = self.trimmed(span) else {
            return 0;
        };
        let len = line.len();
        batch.spans.push(line);
        batch.numbers.push(self.line_number);
        len
    }

    /// [`Lines::next_line`] into `line`, owned, for a reader that keeps it:
    /// a line over [`KEEP_AT_MOST`] is not copied but takes the buffer it
    /// was read into (the few bytes read after it move to a new one), so
    /// that the row is never in memory twice. False at the end.
    pub fn next_line_into(&mut self, line: &mut Vec<u8>) -> Result<bool> {
        let Some(span) = self.next_line_span()? else {
            return Ok(false);
        };
        if span.len() <= KEEP_AT_MOST {
            line.clear();
            line.extend_from_slice(&self.buf[span]);
            return Ok(true);
        }
        let rest = self.buf[self.start..self.end].to_vec();
        let mut taken = std::mem::replace(&mut self.buf, rest);
        self.end -= self.start;
        self.start = 0;
        taken.truncate(span.end);
        // A line longer than a read was moved to the front to grow.
        taken.drain(..span.start);
        *line = taken;
        Ok(true)
    }

    /// Gives back a buffer that a line over [`KEEP_AT_MOST`] grew, keeping
    /// the bytes not yet returned: for a reader that has copied that line
    /// out (agy-encode --onto keeps the original row while it merges), so
    /// the row is not held twice.
    pub fn shed(&mut self) {
        if self.buf.capacity() > KEEP_AT_MOST {
            self.buf = self.buf[self.start..self.end].to_vec();
            self.end -= self.start;
            self.start = 0;
        }
    }

    /// `name:line` of the line last returned.
    pub fn place(&self) -> String {
        Place {
            name: &self.name,
            line: self.line_number,
        }
        .to_string()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn line_number(&self) -> u64 {
        self.line_number
    }
}

/// `name:line`, where a record was read, formatted only when something
/// is said about it (for a reader that keeps records past the next line:
/// [`Lines::next_numbered_line`]).
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    pub name: &'a str,
    pub line: u64,
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.name, self.line)
    }
}

/// Whole lines in the buffer they were read into ([`Lines::next_batch`]).
#[derive(Default)]
pub struct LineBatch {
    /// The buffer; the lines are where `spans` say, and anything else in
    /// it is left over from earlier reads.
    pub text: Vec<u8>,
    /// Each non-blank line's bytes in `text`, without its line ending.
    pub spans: Vec<Range<usize>>,
    /// Each line's number in the input.
    pub numbers: Vec<u64>,
}

impl LineBatch {
    /// The `i`th line.
    pub fn line(&self, i: usize) -> &[u8] {
        &self.text[self.spans[i].clone()]
    }
}

/// The inputs named on a command line; none means stdin.
pub fn input_paths(paths: Vec<OsString>) -> Vec<OsString> {
    if paths.is_empty() {
        vec![OsString::from("-")]
    } else {
        paths
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read, so lines
    /// straddle reads.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn a_long_line_is_taken_with_its_buffer() {
        let long = "y".repeat(KEEP_AT_MOST + 3);
        let text = format!("short\n{long}\nnext\nlast");
        let reader = Trickle {
            data: text.into_bytes(),
            at: 0,
            step: usize::MAX,
        };
        let mut lines = Lines::from_reader("t", Box::new(reader));
        let mut line = Vec::new();
        let mut got = Vec::new();
        while lines.next_line_into(&mut line).unwrap() {
            got.push(String::from_utf8(line.clone()).unwrap());
        }
        assert_eq!(got, ["short", long.as_str(), "next", "last"]);
        assert!(
            lines.buf.capacity() <= KEEP_AT_MOST,
            "the buffer went with the line"
        );
    }

    #[test]
    fn lines_survive_any_read_size() {
        let long = "x".repeat(3 * READ_SIZE + 7);
        let text = format!("a\r\n\n  \n{long}\nb\nlast");
        for step in [1, 2, 7, 4096, READ_SIZE, usize::MAX] {
            let reader = Trickle {
                data: text.clone().into_bytes(),
                at: 0,
                step,
            };
            let mut lines = Lines::from_reader("t", Box::new(reader));
            let mut got = Vec::new();
            while let Some(line) = lines.next_line().unwrap() {
                got.push((String::from_utf8(line.to_vec()).unwrap(), lines.place()));
            }
            let expected = vec![
                ("a".to_string(), "t:1".to_string()),
                (long.clone(), "t:4".to_string()),
                ("b".to_string(), "t:5".to_string()),
                ("last".to_string(), "t:6".to_string()),
            ];
            assert_eq!(got, expected, "step {step}");
        }
    }

    /// Batches give the lines, at their numbers, that reading line by line
    /// gives, however the input comes (read sizes, lines over a buffer,
    /// blank lines, no final newline) and whatever a batch is to hold;
    /// and no line is split between two.
    #[test]
    fn batches_give_the_lines_line_by_line_gives() {
        let long = "x".repeat(3 * READ_SIZE + 7);
        let mut text = format!("a\r\n\n  \n{long}\nb\n");
        for n in 0..5000 {
            text.push_str(&format!("{n} {}\n", "z".repeat(n % 300)));
            if n % 11 == 0 {
                text.push_str("\r\n");
            }
        }
        text.push_str("last");
        let trickle = |step| {
            let reader = Trickle {
                data: text.clone().into_bytes(),
                at: 0,
                step,
            };
            Lines::from_reader("t", Box::new(reader))
        };
        let mut expected = Vec::new();
        let mut lines = trickle(usize::MAX);
        while let Some(line) = lines.next_line().unwrap() {
            expected.push((line.to_vec(), lines.line_number()));
        }
        for step in [1, 7, 4096, READ_SIZE, usize::MAX] {
            for want in [1, 5000, 256 << 10, usize::MAX] {
                let mut lines = trickle(step);
                let mut batch = LineBatch::default();
                let mut got = Vec::new();
                loop {
                    let more = lines.next_batch(want, &mut batch).unwrap();
                    for (i, &number) in batch.numbers.iter().enumerate() {
                        got.push((batch.line(i).to_vec(), number));
                    }
                    if !more {
                        break;
                    }
                }
                assert!(got == expected, "step {step}, want {want}");
            }
        }
    }

    /// An input that fails is an error, with the lines read before the
    /// failure in the batch.
    #[test]
    fn a_batch_cut_by_a_failure_holds_the_lines_before_it() {
        struct Failing(Option<Vec<u8>>);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                match self.0.take() {
                    Some(data) => {
                        buf[..data.len()].copy_from_slice(&data);
                        Ok(data.len())
                    }
                    None => Err(io::Error::other("gone")),
                }
            }
        }
        let mut lines = Lines::from_reader("t", Box::new(Failing(Some(b"one\ntwo\nthr".to_vec()))));
        let mut batch = LineBatch::default();
        let mut got = Vec::new();
        let err = loop {
            let read = lines.next_batch(usize::MAX, &mut batch);
            for (i, &number) in batch.numbers.iter().enumerate() {
                got.push((batch.line(i).to_vec(), number));
            }
            match read {
                Ok(more) => assert!(more, "ended without its failure"),
                Err(err) => break err,
            }
        };
        assert!(err.to_string().contains("gone"), "{err}");
        assert_eq!(got, [(b"one".to_vec(), 1), (b"two".to_vec(), 2)]);
    }
}
