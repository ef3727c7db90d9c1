//! Conversation bodies on their way to a page, spooled by a second thread.
//!
//! The header of a page needs the meta record, which comes after the last
//! message, so each body waits in a [`Spool`] (a MiB in memory, then an
//! unlinked temporary file) until its conversation ends. Writing a large
//! body to the temporary file, and giving the file back to the system
//! after, costs about as much time in the kernel as parsing the stream
//! costs here; a second thread does it, so on two cores the two overlap.
//!
//! The rendering thread writes into a batch ([`Bodies::batch`]) and hands
//! it over through a channel of `QUEUE` batches, so what waits in memory
//! stays bounded: the batches in the queue, each about `BATCH` bytes or
//! one message. Written batches come back to be filled again, so their
//! pages are not faulted in anew for every quarter MiB.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::stream::spool::Spool;

/// Bytes gathered before a batch is handed over.
const BATCH: usize = 256 << 10;
/// Batches that may wait in the channel.
const QUEUE: usize = 4;

enum Job {
    Append(Vec<u8>),
    /// Hand back the spool of the body so far and start a new one.
    Take(mpsc::Sender<Result<Spool>>),
    /// A spool that has been copied out: its file is closed there.
    Discard(Spool),
}

pub struct Bodies {
    jobs: Option<SyncSender<Job>>,
    writer: Option<JoinHandle<()>>,
    batch: Vec<u8>,
    /// Batches the other thread has written, back for reuse.
    empties: Receiver<Vec<u8>>,
    /// Whether anything was appended since the last take.
    dirty: bool,
}

fn gone() -> Error {
    Error::data("the spooling thread stopped")
}

impl Bodies {
    pub fn new() -> Result<Bodies> {
        let (jobs, queue) = mpsc::sync_channel(QUEUE);
        let (recycle, empties) = mpsc::sync_channel(QUEUE + 1);
        let writer = std::thread::Builder::new()
            .name("agy-render spool".to_string())
            .spawn(move || write_bodies(queue, recycle))
            .map_err(|e| Error::io("starting the spooling thread", e))?;
        Ok(Bodies {
            jobs: Some(jobs),
            writer: Some(writer),
            batch: Vec::new(),
            empties,
            dirty: false,
        })
    }

    /// The batch to render the conversation's next bytes into; call
    /// [`Bodies::filled`] after.
    pub fn batch(&mut self) -> &mut Vec<u8> {
        self.dirty = true;
        &mut self.batch
    }

    /// Hands the batch over once it is full.
    pub fn filled(&mut self) -> Result<()> {
        if self.batch.len() < BATCH {
            return Ok(());
        }
        let empty = match self.empties.try_recv() {
            Ok(mut empty) => {
                empty.clear();
                empty
            }
            Err(_) => Vec::with_capacity(BATCH + BATCH / 4),
        };
        let batch = std::mem::replace(&mut self.batch, empty);
        self.send(Job::Append(batch))
    }

    /// Appends rendered bytes to the body of the conversation in progress.
    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.batch().extend_from_slice(bytes);
        self.filled()
    }

    /// The body so far, ending it: later appends start the next body. An
    /// error is the spool's (a full temporary directory).
    pub fn take(&mut self) -> Result<Spool> {
        if !self.dirty {
            return Ok(Spool::default());
        }
        self.dirty = false;
        if !self.batch.is_empty() {
            let batch = std::mem::take(&mut self.batch);
            self.send(Job::Append(batch))?;
        }
        let (reply, answer) = mpsc::channel();
        self.send(Job::Take(reply))?;
        answer.recv().map_err(|_| gone())?
    }

    /// Gives a copied-out spool back, to be closed by the other thread.
    pub fn discard(&mut self, spool: Spool) {
        if spool.len() > Spool::IN_MEMORY as u64 {
            let _ = self.send(Job::Discard(spool));
        }
    }

    fn send(&mut self, job: Job) -> Result<()> {
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send(job).map_err(|_| gone())
    }
}

impl Drop for Bodies {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// The other thread: appends to the current spool until asked for it. The
/// first error of a body is kept and given back instead of the spool.
fn write_bodies(queue: Receiver<Job>, recycle: SyncSender<Vec<u8>>) {
    let mut spool = Spool::default();
    let mut failed: Option<Error> = None;
    for job in queue {
        match job {
            Job::Append(bytes) => {
                if failed.is_none() {
                    if let Err(e) = spool.append(&bytes) {
                        failed = Some(e);
                    }
                }
                // Kept only while the other side has room for it.
                let _ = recycle.try_send(bytes);
            }
            Job::Take(reply) => {
                let body = std::mem::take(&mut spool);
                let _ = reply.send(match failed.take() {
                    Some(e) => Err(e),
                    None => Ok(body),
                });
            }
            Job::Discard(spool) => drop(spool),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::io::{Captured, Output};

    fn contents(spool: &mut Spool) -> Vec<u8> {
        let sink = Captured::default();
        let mut out = Output::captured(&sink);
        spool.copy_range(0..spool.len(), &mut out).unwrap();
        out.flush().unwrap();
        sink.take()
    }

    #[test]
    fn bodies_come_back_whole_and_separate() {
        let mut bodies = Bodies::new().unwrap();
        let first: Vec<u8> = (0..3 * Spool::IN_MEMORY).map(|i| (i % 251) as u8).collect();
        for piece in first.chunks(10_007) {
            bodies.append(piece).unwrap();
        }
        let mut spool = bodies.take().unwrap();
        assert_eq!(contents(&mut spool), first);
        bodies.discard(spool);
        bodies.append(b"second").unwrap();
        let mut spool = bodies.take().unwrap();
        assert_eq!(contents(&mut spool), b"second");
        assert_eq!(bodies.take().unwrap().len(), 0);
    }
}
