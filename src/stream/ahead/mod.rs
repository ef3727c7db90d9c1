//! Message records read and parsed a batch ahead, on a thread of their
//! own, while the caller works on the ones before.
//!
//! agy-encode spends about a third of its time reading its input and
//! parsing each line into an
//! [`InputRecord`](crate::stream::message::InputRecord) (finding the
//! strings' ends, unescaping them, checking UTF-8), and two thirds building
//! steps and writing rows; the two halves only meet at the record. Here the
//! first third runs on a second thread: it reads whole lines into a buffer,
//! a batch of about [`BATCH_BYTES`] at a time ([`Lines::next_batch`]),
//! parses each line, and hands the batch over with the records borrowing
//! from that buffer (a [`self_cell`](mod@self_cell)): a line is read into
//! memory once and not copied again. The caller is lent each record and
//! gives its batch back: the thread frees the records, which it allocated,
//! and reads into the buffer again.
//!
//! A short input is read and parsed in place, with no thread: the first
//! batch is always read by the caller, and the thread starts only when the
//! input goes on past it. Most conversations end within it, and for them a
//! thread's start is a cost with nothing to overlap.
//!
//! Records come in input order, each with its
//! [`Place`](crate::stream::io::Place); a line that does not parse comes as
//! its error, at its place, and what follows it is not given, so the caller
//! sees exactly what reading line by line would have shown. What waits is
//! bounded by the memory it holds, not by batches ([`IN_FLIGHT`]): a line
//! over a batch is a batch alone, and a batch that would pass the bound
//! waits until the caller has taken every one before it, so that long
//! lines are never more than the caller's and the next.

mod records;

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::stream::io::{LineBatch, Lines};
use records::Batch;
pub use records::Records;

/// A batch ends once its lines hold this many bytes: a few hundred KiB is
/// what one read brings ([`Lines`]' cap), small enough to be in the cache
/// still when the line is parsed, large enough that handing batches over
/// costs nothing next to parsing them.
pub const BATCH_BYTES: usize = 256 << 10;

/// The memory of the batches handed over and not yet done with, at most
/// (see [`held`]); a batch larger than this goes over only alone.
const IN_FLIGHT: usize = 8 * BATCH_BYTES;

/// Batches waiting for the caller, at most ([`IN_FLIGHT`] bounds them
/// first, unless the lines are very short).
const QUEUED: usize = 16;

/// Batches' buffers given back and kept for the thread to read into, at
/// most: it takes one per batch, and the caller gives one back per batch.
const SPARE: usize = 2;

/// Batches given back and not yet freed by the thread, at most: it frees
/// them before it reads each batch, so more wait only while it waits to
/// hand one over. One given back past these is freed by the caller.
const RETURNED: usize = QUEUED + SPARE;

/// A batch's buffer that a long line grew is let go, not read into again
/// (a buffer is a batch and one read otherwise): [`Ahead::recycle`]
/// frees it instead of giving it back.
const REUSE_AT_MOST: usize = 4 << 20;

/// A batch of lines, not yet parsed.
struct Unparsed {
    lines: LineBatch,
    /// True when the input ended within it, or failed.
    last: bool,
    /// Why the input could not be read on, when it could not.
    failed: Option<Error>,
}

impl Unparsed {
    /// Reads whole lines from `lines` until they hold [`BATCH_BYTES`] or
    /// the input ends, into a buffer of their own (`spare`'s buffers are
    /// read into next). An input that fails ends the batch: the lines
    /// before the failure are in it, the error beside them.
    fn fill(lines: &mut Lines, mut spare: LineBatch) -> Unparsed {
        let (last, failed) = match lines.next_batch(BATCH_BYTES, &mut spare) {
            Ok(more) => (!more, None),
            Err(err) => (true, Some(err)),
        };
        Unparsed {
            lines: spare,
            last,
            failed,
        }
    }
}

/// The memory a batch holds, which is what the [`Gate`] counts: its
/// buffer's size (a buffer is read into until its lines hold
/// [`BATCH_BYTES`], and holds one read more, or a long line). Nothing
/// changes it between the thread's entry and the caller's leaving.
fn held(lines: &LineBatch) -> usize {
    lines.text.capacity()
}

/// A batch the caller is done with, given back to be read into again.
enum Returned {
    /// Parsed by the reading thread, its records still in it: the thread
    /// frees them, as it allocated them.
    Parsed(Batch),
    /// The first batch, which the caller read and parsed (and freed).
    Here(LineBatch),
}

/// What the reading thread hands over.
enum Piece {
    Batch(Batch),
    /// The input could not be read; nothing comes after.
    Failed(Error),
    /// The input ended; nothing comes after.
    End,
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
    returned: SyncSender<Returned>,
    gate: Arc<Gate>,
    thread: Option<JoinHandle<()>>,
}

impl Ahead {
    fn start(mut lines: Lines) -> Result<Ahead> {
        let (send, pieces) = mpsc::sync_channel(QUEUED);
        let (returned, given_back) = mpsc::sync_channel::<Returned>(RETURNED);
        let gate = Arc::new(Gate::default());
        let entry = Arc::clone(&gate);
        let thread = std::thread::Builder::new()
            .name("read-ahead".to_string())
            .spawn(move || {
                let mut spares = Vec::with_capacity(SPARE);
                loop {
                    // What the caller is done with is freed here, where it
                    // was allocated, before more is read.
                    for back in given_back.try_iter() {
                        let lines = match back {
                            Returned::Parsed(batch) => batch.into_owner(),
                            Returned::Here(lines) => lines,
                        };
                        if spares.len() < SPARE {
                            spares.push(lines);
                        }
                    }
                    if !read_one(&mut lines, spares.pop().unwrap_or_default(), &entry, &send) {
                        return;
                    }
                }
            })
            .map_err(|e| Error::io("a thread to read ahead", e))?;
        Ok(Ahead {
            pieces,
            returned,
            gate,
            thread: Some(thread),
        })
    }

    /// Gives a batch back for the thread to free and read into again, its
    /// memory done with when it came through the gate (all but the first,
    /// which the caller read). One the thread has no room for is freed
    /// here, and so is one whose buffer a long line grew past reuse: the
    /// thread may be reading the next long line, and what a long line's
    /// record holds (its text, unescaped) is a few blocks, not the many a
    /// batch of short ones holds.
    fn recycle(&self, back: Returned) {
        let bytes = match &back {
            Returned::Parsed(batch) => {
                let bytes = held(batch.borrow_owner());
                self.gate.leave(bytes);
                bytes
            }
            Returned::Here(lines) => held(lines),
        };
        if bytes <= REUSE_AT_MOST {
            let _ = self.returned.try_send(back);
        }
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

/// The reading thread's work for one batch: reads it into `spare`'s
/// buffers, parses it and hands it over. False once there is nothing more
/// to do: the input ended or failed (and the caller was told), or the
/// caller stopped.
fn read_one(lines: &mut Lines, spare: LineBatch, gate: &Gate, send: &SyncSender<Piece>) -> bool {
    let read = Unparsed::fill(lines, spare);
    let last = read.last;
    let (batch, failed) = read.parse();
    // The gate is closed, and a send fails, when the caller stopped (an
    // error of its own): nobody is listening then.
    let batch_lines = batch.borrow_owner();
    let handed = batch_lines.spans.is_empty()
        || (gate.enter(held(batch_lines)) && send.send(Piece::Batch(batch)).is_ok());
    if !handed {
        return false;
    }
    if last {
        let _ = send.send(failed.map_or(Piece::End, Piece::Failed));
        return false;
    }
    true
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
    use super::*;

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
