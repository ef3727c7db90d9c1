//! A data root of many conversations read two at a time: on a store of
//! thousands of small conversations the work is each one's own (open the
//! database and its `-wal`, read its pages, decode its steps), so two
//! threads each take every other conversation, each with a decoder of its
//! own, and this thread writes what they made in the root's order.
//!
//! The output is the same bytes as one thread's: a conversation's
//! messages depend on nothing before it, and a decoder ends each
//! conversation (its held messages, artifacts and meta record) before it
//! says the conversation is done. What a thread made waits in a bounded
//! queue of pieces of at most [`PIECE`] bytes, so memory stays a few MiB
//! beyond what each conversation needs; warnings wait in the same queue
//! and are said in the same order as by one thread. The one thing a
//! single decoder saw that two do not is a conversation met twice (two
//! databases holding one id): that is checked here, as each begins.

use std::sync::mpsc::{self, Receiver, SyncSender};

use crate::error::{Error, Result};
use crate::store::dump::{Outcome, Target};
use crate::stream::io::Output;

use super::{read_targets, Messages, StoreRead};
use crate::decode::Decoder;

/// The threads that read conversations.
const THREADS: usize = 2;
/// A thread's output goes over in pieces of at most this many bytes...
const PIECE: usize = 1 << 20;
/// ...and at most this many wait for this thread to take them.
const WAITING: usize = 8;

/// What a reading thread hands over, in the order it was made.
enum Piece {
    /// The conversation of the next target is `id`: its bytes follow.
    Begin(String),
    /// Message lines (a piece may end inside a line).
    Bytes(Vec<u8>),
    /// A warning, to be said in its place.
    Warning(String),
    /// The conversation (target) is done: every byte of it came before.
    Done(Done),
}

/// The end of one target.
struct Done {
    /// Conversations whose messages are not whole (0 or 1).
    incomplete: usize,
    outcome: Result<Outcome>,
}

/// Reads `targets` on [`THREADS`] threads, writing their messages into
/// `messages` in order; the same as [`read_targets`] on them all.
pub(super) fn read<M: Messages + 'static>(
    targets: Vec<Target>,
    place: String,
    mut decoder: Decoder,
    mut messages: M,
    mut warn: Box<dyn FnMut(String)>,
) -> StoreRead<M> {
    // What the decoder holds open from an input before ends first, as a
    // single decoder would end it on the first conversation here.
    let finished = decoder.finish(messages.output()).and_then(|()| {
        for warning in decoder.take_warnings() {
            warn(warning);
        }
        messages.end_record()
    });
    let outcome = finished.and_then(|()| {
        std::thread::scope(|scope| {
            let mut queues = Vec::new();
            for first in 0..THREADS {
                let (sender, queue) = mpsc::sync_channel(WAITING);
                let mine: Vec<Target> = targets
                    .iter()
                    .skip(first)
                    .step_by(THREADS)
                    .cloned()
                    .collect();
                let options = decoder.options;
                let place = place.clone();
                std::thread::Builder::new()
                    .name(format!("read {first}"))
                    .spawn_scoped(scope, move || read_every(mine, options, place, sender))
                    .map_err(|e| Error::io("starting a reading thread", e))?;
                queues.push(queue);
            }
            write_in_order(
                &queues,
                targets.len(),
                &mut decoder,
                &mut messages,
                &mut warn,
            )
        })
    });
    StoreRead {
        decoder,
        messages,
        outcome,
    }
}

/// The reading thread: each of its targets in turn, ended and said done.
/// Stops when this thread no longer takes what it hands over.
fn read_every(
    targets: Vec<Target>,
    options: crate::decode::Options,
    place: String,
    sender: SyncSender<Piece>,
) {
    let mut decoder = Decoder::new(options);
    for target in targets {
        let warn = {
            let sender = sender.clone();
            Box::new(move |message| {
                let _ = sender.send(Piece::Warning(message));
            })
        };
        let out = ToWriter {
            out: Output::to(Box::new(Pieces(sender.clone()))),
            sender: sender.clone(),
        };
        let read = read_targets(
            std::slice::from_ref(&target),
            place.clone(),
            decoder,
            out,
            warn,
        );
        decoder = read.decoder;
        let mut out = read.messages.out;
        let outcome = read
            .outcome
            .and_then(|outcome| decoder.finish(&mut out).map(|()| outcome))
            .and_then(|outcome| out.flush().map(|()| outcome));
        drop(out);
        for warning in decoder.take_warnings() {
            let _ = sender.send(Piece::Warning(warning));
        }
        let incomplete = std::mem::take(&mut decoder.incomplete);
        let failed = outcome.is_err();
        let done = Done {
            incomplete,
            outcome,
        };
        if sender.send(Piece::Done(done)).is_err() || failed {
            return;
        }
    }
}

/// What a reading thread's decoder writes into: its output, and the
/// beginning of each conversation said before any byte of it.
struct ToWriter {
    out: Output,
    sender: SyncSender<Piece>,
}

impl Messages for ToWriter {
    fn output(&mut self) -> &mut Output {
        &mut self.out
    }

    fn end_record(&mut self) -> Result<()> {
        self.out.end_record()
    }

    fn begin(&mut self, id: &str) -> Result<()> {
        self.out.flush()?;
        self.sender
            .send(Piece::Begin(id.to_string()))
            .map_err(|_| Error::output(std::io::Error::other("the writing thread stopped")))
    }
}

/// A reading thread's output: its bytes handed over a piece at a time.
struct Pieces(SyncSender<Piece>);

impl std::io::Write for Pieces {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for piece in bytes.chunks(PIECE) {
            self.0
                .send(Piece::Bytes(piece.to_vec()))
                .map_err(|_| std::io::Error::other("the writing thread stopped"))?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Takes the targets' pieces in order (target `i` from queue `i %
/// THREADS`), writing their bytes and warnings; the outcomes summed.
fn write_in_order<M: Messages>(
    queues: &[Receiver<Piece>],
    targets: usize,
    decoder: &mut Decoder,
    messages: &mut M,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    let mut total = Outcome::default();
    for i in 0..targets {
        let done = loop {
            match queues[i % THREADS].recv() {
                Ok(Piece::Bytes(bytes)) => {
                    messages.output().buf().extend_from_slice(&bytes);
                    messages.end_record()?;
                }
                Ok(Piece::Warning(warning)) => warn(warning),
                Ok(Piece::Begin(id)) => {
                    if !decoder.finished.insert(id.clone()) {
                        return Err(super::met_again(&id));
                    }
                }
                Ok(Piece::Done(done)) => break done,
                Err(_) => return Err(Error::data("a thread reading conversations stopped")),
            }
        };
        let outcome = done.outcome?;
        decoder.incomplete += done.incomplete;
        total.dumped += outcome.dumped;
        total.unchanged += outcome.unchanged;
        total.failed += outcome.failed;
        total.cut_short += outcome.cut_short;
        total.damaged += outcome.damaged;
        total.index_failed += outcome.index_failed;
    }
    Ok(total)
}
