//! Message records read and parsed a batch ahead, on a thread of their
//! own, while the caller works on the ones before.
//!
//! agy-encode spends about a third of its time reading its input and
//! parsing each line into an [`InputRecord`] (finding the strings' ends,
//! unescaping them, checking UTF-8), and two thirds building steps and
//! writing rows; the two halves only meet at the record. Here the first
//! third runs on a second thread: it reads lines into buffers, a batch of
//! about [`BATCH_BYTES`] at a time, parses each line, and hands the batch
//! over with the records borrowing from its buffers (a [`mod@self_cell`]: the
//! text a record borrows is not copied again).
//!
//! A short input is read and parsed in place, with no thread: the first
//! batch is always read by the caller, and the thread starts only when the
//! input goes on past it. Most conversations end within it, and for them a
//! thread's start is a cost with nothing to overlap.
//!
//! Records come in input order, each with its [`Place`]; a line that does
//! not parse comes as its error, at its place, and what follows it is not
//! given, so the caller sees exactly what reading line by line would have
//! shown. What waits is bounded by bytes, not batches ([`IN_FLIGHT`]): a
//! line over a batch is a batch alone, and a batch that would pass the
//! bound waits until the caller has taken every one before it, so that
//! long lines are never more than the caller's and the next.

use std::ffi::OsStr;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use self_cell::self_cell;

use crate::error::{Error, Result};
use crate::stream::io::{Lines, Place};
use crate::stream::message::InputRecord;
use crate::stream::message_reader::read_line;

/// A batch ends once its lines hold this many bytes: a few hundred KiB is
/// what one read brings ([`Lines`]' cap), small enough to be in the cache
/// still when the line is parsed, large enough that handing batches over
/// costs nothing next to parsing them.
pub const BATCH_BYTES: usize = 256 << 10;

/// Bytes of lines handed over and not yet done with, at most; a batch
/// larger than this goes over only alone.
const IN_FLIGHT: usize = 4 * BATCH_BYTES;

/// Batches waiting for the caller, at most ([`IN_FLIGHT`] bounds them
/// first, unless the lines are very short).
const QUEUED: usize = 16;

/// A line buffer that a long line grew is let go, not reused.
const REUSE_AT_MOST: usize = 1 << 20;

/// Each line's own buffer, in input order.
type Texts = Vec<Vec<u8>>;
/// What each line of a batch parsed to.
type Parsed<'a> = Vec<Result<InputRecord<'a>>>;

self_cell!(
    /// Lines and the records parsed from them, which borrow their text.
    struct Cell {
        owner: Texts,
        #[covariant]
        dependent: Parsed,
    }
);

/// A batch of lines, parsed.
struct Batch {
    cell: Cell,
    /// The line number of each record.
    numbers: Vec<u64>,
    /// The bytes of its lines.
    bytes: usize,
}

/// A batch of lines, not yet parsed.
struct Unparsed {
    texts: Texts,
    numbers: Vec<u64>,
    /// The bytes of its lines.
    bytes: usize,
    /// True when the input ended within it, or failed.
    last: bool,
    /// Why the input could not be read on, when it could not.
    failed: Option<Error>,
}

impl Unparsed {
    /// Reads lines from `lines` until they hold [`BATCH_BYTES`] or the
    /// input ends, into `texts`' buffers (reused; one left over is
    /// dropped). An input that fails ends the batch: the lines before the
    /// failure are in it, the error beside them.
    fn fill(lines: &mut Lines, mut texts: Texts) -> Unparsed {
        let mut numbers = Vec::new();
        let mut bytes = 0;
        let mut used = 0;
        let mut failed = None;
        let last = loop {
            if bytes >= BATCH_BYTES {
                break false;
            }
            if used == texts.len() {
                texts.push(Vec::new());
            }
            match lines.next_line_into(&mut texts[used]) {
                Ok(true) => {}
                Ok(false) => break true,
                Err(err) => {
                    failed = Some(err);
                    break true;
                }
            }
            bytes += texts[used].len();
            numbers.push(lines.line_number());
            used += 1;
        };
        texts.truncate(used);
        Unparsed {
            texts,
            numbers,
            bytes,
            last,
            failed,
        }
    }

    /// The batch parsed, and the input's failure if it failed.
    fn parse(self) -> (Batch, Option<Error>) {
        let batch = Batch {
            bytes: self.bytes,
            cell: Cell::new(self.texts, |texts| {
                texts.iter().map(|text| read_line(text)).collect()
            }),
            numbers: self.numbers,
        };
        (batch, self.failed)
    }
}

/// What the reading thread hands over.
enum Piece {
    Batch(Batch),
    /// The input could not be read; nothing comes after.
    Failed(Error),
    /// The input ended; nothing comes after.
    End,
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
    /// does: agy-encode's allocator is told that blocks are about to go
    /// from thread to thread ([`crate::cli::heap`]).
    pub fn when_threading(mut self, threading: fn()) -> Records {
        self.threading = Some(threading);
        self
    }

    /// Calls `each` with every record (or the error its line gave) and its
    /// place, in input order, until the input ends or `each` returns an
    /// error, which is returned.
    pub fn for_each<F>(self, mut each: F) -> Result<()>
    where
        F: FnMut(Place<'_>, Result<InputRecord<'_>>) -> Result<()>,
    {
        let mut lines = self.lines;
        let name = lines.name().to_string();
        let first = Unparsed::fill(&mut lines, Texts::new());
        if first.last {
            let (batch, failed) = first.parse();
            give(&name, batch, &mut each)?;
            return failed.map_or(Ok(()), Err);
        }
        if let Some(threading) = self.threading {
            threading();
        }
        let ahead = Ahead::start(lines)?;
        // The first batch is parsed here while the thread reads the next;
        // it was never in flight.
        let mut texts = give(&name, first.parse().0, &mut each)?;
        let mut bytes = 0;
        loop {
            ahead.recycle(texts, bytes);
            match ahead.next()? {
                Piece::Batch(batch) => {
                    bytes = batch.bytes;
                    texts = give(&name, batch, &mut each)?;
                }
                Piece::Failed(err) => return Err(err),
                Piece::End => return ahead.finish(),
            }
        }
    }
}

/// Gives `batch`'s records, read from input `name`, to `each`; returns its
/// buffers for reuse.
fn give<F>(name: &str, mut batch: Batch, each: &mut F) -> Result<Texts>
where
    F: FnMut(Place<'_>, Result<InputRecord<'_>>) -> Result<()>,
{
    batch.cell.with_dependent_mut(|_, parsed| {
        for (record, &line) in parsed.drain(..).zip(&batch.numbers) {
            each(Place { name, line }, record)?;
        }
        Ok::<_, Error>(())
    })?;
    let mut texts = batch.cell.into_owner();
    for text in &mut texts {
        if text.capacity() > REUSE_AT_MOST {
            *text = Vec::new();
        }
    }
    Ok(texts)
}

/// The bytes of the batches handed over and not yet done with, which the
/// reading thread waits on before it hands over another.
#[derive(Default)]
struct Gate {
    /// The bytes in flight, and whether the caller has stopped.
    state: Mutex<(usize, bool)>,
    changed: Condvar,
}

impl Gate {
    fn state(&self) -> std::sync::MutexGuard<'_, (usize, bool)> {
        // Nothing panics while holding it: a poisoned lock's state is whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until `bytes` more may be in flight: at once when none are,
    /// else once they fit under [`IN_FLIGHT`]. False when the caller has
    /// stopped.
    fn enter(&self, bytes: usize) -> bool {
        let mut state = self.state();
        while !state.1 && state.0 > 0 && state.0 + bytes > IN_FLIGHT {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.0 += bytes;
        !state.1
    }

    /// The caller is done with `bytes`.
    fn leave(&self, bytes: usize) {
        self.state().0 -= bytes;
        self.changed.notify_one();
    }

    /// The caller has stopped: nothing more is waited for.
    fn close(&self) {
        self.state().1 = true;
        self.changed.notify_one();
    }
}

/// The reading thread and the channels to it.
struct Ahead {
    pieces: Receiver<Piece>,
    spare: SyncSender<Texts>,
    gate: Arc<Gate>,
    thread: Option<JoinHandle<()>>,
}

impl Ahead {
    fn start(mut lines: Lines) -> Result<Ahead> {
        let (send, pieces) = mpsc::sync_channel(QUEUED);
        let (spare, spares) = mpsc::sync_channel::<Texts>(QUEUED + 2);
        let gate = Arc::new(Gate::default());
        let entry = Arc::clone(&gate);
        let thread = std::thread::Builder::new()
            .name("read-ahead".to_string())
            .spawn(move || loop {
                let read = Unparsed::fill(&mut lines, spares.try_recv().unwrap_or_default());
                let last = read.last;
                let (batch, failed) = read.parse();
                // The gate is closed, and a send fails, when the caller
                // stopped (an error of its own): nobody is listening then.
                let handed = batch.numbers.is_empty()
                    || (entry.enter(batch.bytes) && send.send(Piece::Batch(batch)).is_ok());
                if !handed {
                    return;
                }
                if last {
                    let _ = send.send(failed.map_or(Piece::End, Piece::Failed));
                    return;
                }
            })
            .map_err(|e| Error::io("a thread to read ahead", e))?;
        Ok(Ahead {
            pieces,
            spare,
            gate,
            thread: Some(thread),
        })
    }

    /// Gives a batch's buffers back for the thread to read into, its bytes
    /// done with.
    fn recycle(&self, texts: Texts, bytes: usize) {
        self.gate.leave(bytes);
        let _ = self.spare.try_send(texts);
    }

    /// The next piece; the thread's end without [`Piece::End`] (it
    /// panicked) is an error, never the input's end.
    fn next(&self) -> Result<Piece> {
        self.pieces.recv().map_err(|_| stopped())
    }

    /// Waits for the thread, which has sent its last piece.
    fn finish(mut self) -> Result<()> {
        match self.thread.take().map(JoinHandle::join) {
            Some(Err(_)) => Err(stopped()),
            _ => Ok(()),
        }
    }
}

/// The reading thread ended before the input did (it panicked).
fn stopped() -> Error {
    Error::data("the thread reading ahead stopped before the input ended")
}

impl Drop for Ahead {
    /// A caller that stops early (an error of its own) leaves the thread
    /// nothing to wait for: it ends at its next batch.
    fn drop(&mut self) {
        self.gate.close();
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Read};

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
    /// than a batch among them.
    #[test]
    fn records_come_in_order_at_their_lines() {
        for (count, len) in [(3, 10), (400, 3000), (20, 3 * BATCH_BYTES)] {
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
        let text: String = (0..600).map(|n| record(n, 3000) + "\n").collect();
        let (got, end) = read(records(&text, Some(io::ErrorKind::Deadlock)));
        // The batch it was reading is lost with it; those before came.
        assert!(
            got.len() > BATCH_BYTES / 3100 && got.len() < 600,
            "{}",
            got.len()
        );
        let err = end.unwrap_err().to_string();
        assert!(err.contains("stopped before the input ended"), "{err}");
    }

    /// A batch goes over at once when nothing is in flight, however large;
    /// another waits until they fit together, or until the caller stops.
    #[test]
    fn the_gate_lets_one_large_batch_through_and_holds_the_next() {
        let gate = Arc::new(Gate::default());
        assert!(gate.enter(3 * IN_FLIGHT));
        let (entered, waits) = mpsc::channel();
        let next = {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || entered.send(gate.enter(BATCH_BYTES)).unwrap())
        };
        let wait = std::time::Duration::from_millis(100);
        assert!(
            waits.recv_timeout(wait).is_err(),
            "went over with a large batch in flight"
        );
        gate.leave(3 * IN_FLIGHT);
        assert_eq!(waits.recv_timeout(wait * 50), Ok(true));
        next.join().unwrap();
        // Two small ones together; then a third waits, and the caller stops.
        assert!(gate.enter(IN_FLIGHT - BATCH_BYTES));
        let stopped = {
            let gate = Arc::clone(&gate);
            std::thread::spawn(move || gate.enter(2 * BATCH_BYTES))
        };
        std::thread::sleep(wait);
        gate.close();
        assert!(
            !stopped.join().unwrap(),
            "a stopped caller lets the reader end"
        );
    }
}
