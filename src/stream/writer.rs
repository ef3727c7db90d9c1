//! Standard output written on a thread of its own, when it is a pipe.
//!
//! In `agy-dump | agy-decode` each side waits for the other in turn: while
//! agy-decode turns steps into messages agy-dump has little to do, and
//! while agy-dump escapes the brain files agy-decode drops them faster than
//! they come. A `write` into a pipe is the kernel copying every byte and
//! finding pages for it, a third of agy-dump's time; on a thread of its own
//! it overlaps the formatting of the next records instead of stopping it,
//! and the whole pipeline on big.db's store with its brain files took 11 %
//! less time (0.45 -> 0.40 s) for 4 % more CPU.
//!
//! What waits for the thread is bounded: the buffer being written and one
//! more, each about [`Output`](super::io::Output)'s flush size; a record
//! larger than [`WRITE_HERE_OVER`] is written by the caller itself once the
//! thread has caught up, so that a large record is never held twice.

use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

/// A buffer this large is written by the caller, not handed over.
pub const WRITE_HERE_OVER: usize = 4 << 20;
/// Buffers kept for reuse are at most this large.
const REUSE_AT_MOST: usize = 1 << 20;

enum Job {
    Write(Vec<u8>),
    /// Answer once everything before is written.
    Settle(SyncSender<()>),
}

/// The writing thread and the channels to it.
pub struct Writer {
    jobs: Option<SyncSender<Job>>,
    /// Written buffers, emptied, back for reuse.
    empties: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Writer {
    /// Starts a thread writing to `file`.
    pub fn start(mut file: File) -> io::Result<Writer> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(1);
        let (recycle, empties) = mpsc::sync_channel(2);
        let thread = std::thread::Builder::new()
            .name("stdout".to_string())
            .spawn(move || {
                for job in queue {
                    match job {
                        Job::Write(mut buf) => {
                            file.write_all(&buf)?;
                            // One that a large record grew is let go.
                            if buf.capacity() <= REUSE_AT_MOST {
                                buf.clear();
                                let _ = recycle.try_send(buf);
                            }
                        }
                        Job::Settle(done) => {
                            let _ = done.send(());
                        }
                    }
                }
                Ok(())
            })?;
        Ok(Writer {
            jobs: Some(jobs),
            empties,
            thread: Some(thread),
        })
    }

    /// Hands `buf` to the thread to write; returns an empty buffer to fill
    /// next (one the thread has written, when there is one).
    pub fn hand_over(&mut self, buf: Vec<u8>) -> io::Result<Vec<u8>> {
        let capacity = buf.capacity().min(REUSE_AT_MOST);
        self.send(Job::Write(buf))?;
        Ok(self
            .empties
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(capacity)))
    }

    /// Waits until everything handed over is written.
    pub fn settle(&mut self) -> io::Result<()> {
        let (done, answer) = mpsc::sync_channel(1);
        self.send(Job::Settle(done))?;
        // No answer: the thread stopped on an error before it came to this.
        answer.recv().map_err(|_| self.failure())
    }

    fn send(&mut self, job: Job) -> io::Result<()> {
        match &self.jobs {
            Some(jobs) if jobs.send(job).is_ok() => Ok(()),
            _ => Err(self.failure()),
        }
    }

    /// Why the thread stopped: the error it met writing.
    fn failure(&mut self) -> io::Error {
        self.jobs = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            _ => io::Error::other("the thread writing standard output stopped"),
        }
    }
}

impl Drop for Writer {
    /// Lets the thread write what it was given, and waits for it: what was
    /// handed over is not lost when the output goes out of scope.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
