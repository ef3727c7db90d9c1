//! Conversation bodies on their way to a page, spooled by a second thread.
//!
//! The header of a page needs the meta record, which comes after the last
//! message, so each body waits in a [`Spool`] (a MiB in memory, then an
//! unlinked temporary file) until its conversation ends. Writing a large
//! body to the temporary file, and giving the file back to the system
//! after, costs about as much time in the kernel as parsing the stream
//! costs here; a second thread does it, so on two cores the two overlap.
//!
//! The rendering thread writes into a batch ([`Bodies::out`]) and hands
//! it over through a channel of `QUEUE` batches, so what waits in memory
//! stays bounded: the batches in the queue, each about `BATCH` bytes or
//! one message, or, for a message with a long text, about `BATCH` bytes
//! too: such a text is written in pieces, the batch handed over as they
//! fill it ([`Out::spill`]). Written batches come back to be filled again, so their
//! pages are not faulted in anew for every batch.
//!
//! The spooling thread also renders: a format hands it the rendering of a
//! large block whose page bytes depend on nothing but the block (a tool's
//! output as a `<pre>`), with the block's text copied ([`Out::defer`]),
//! and goes on with the next message. Each work goes with the batch it
//! was deferred into, at its place there, and the batch is handed over
//! once its bytes and the works' copies fill one, so one hand-over (a
//! wakeup of the other thread) carries many blocks: handed over one at a
//! time, the 550 large results of the bench's long conversation took 1,830
//! futex calls and 375 context switches a run, grouped 1,240 and 173, and
//! the run 5 % less time. The spooling thread runs the works in turn
//! among the batch's bytes, so the body's bytes keep their order.
//! Spooling alone left the second core mostly idle while the rendering
//! thread did everything else; a long tool result was the largest part of
//! that.
//!
//! The thread is started when a first batch fills. Before that (a page of
//! less than a MiB, as most conversations in a store are) everything is
//! rendered and spooled here: starting a thread and waiting for it to take
//! the body back cost agy-render about a tenth of a run on
//! examples/sample.

use std::ops::{Deref, DerefMut};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::stream::spool::Spool;

/// Bytes gathered before a batch is handed over. Each handover can wake
/// the other thread, an interrupt between cores that a virtual machine
/// makes costly (see [`crate::stream::io`]'s flush size): on the large
/// conversation (11 shuffled rounds) 1 MiB took 4 % less wall and 6 % less
/// CPU than 256 KiB, 2 MiB no less wall and more CPU, 64 KiB 6 % more.
const BATCH: usize = 1 << 20;
/// Batches (or blocks to render, each at most a MiB) that may wait in
/// the channel. The spooling thread is busy in bursts (a run of large tool
/// results) and idle between them: with 4 the rendering thread slept 31 ms
/// of a 0.23 s run on the large conversation waiting for room, with 16
/// 22 ms, and the run took 5-7 % less wall (8 did half of that, 32 no
/// more). Peak RSS was unchanged there (17.6-18.6 MB) and on the 50 MB
/// message (59.5 vs 62.2 MB): the queue is seldom full; at worst it holds
/// 16 batches and 16 blocks' copies.
const QUEUE: usize = 16;
/// The room a held call's bytes start with ([`Held::render`]).
const HELD_ROOM: usize = 4 << 10;

/// Rendering of a block, done by whichever thread [`Out::defer`] chooses:
/// it appends the block's page bytes to the buffer it is given.
pub type Work = Box<dyn FnOnce(&mut Vec<u8>) + Send>;

enum Job {
    /// The bytes, with what each work renders going in at its offset into
    /// them (in order; mostly none).
    Append(Vec<u8>, Vec<(usize, Work)>),
    /// Hand back the spool of the body so far and start a new one.
    Take(mpsc::Sender<Result<Spool>>),
    /// A spool that has been copied out: its file is closed there.
    Discard(Spool),
}

#[derive(Default)]
pub struct Bodies {
    handoff: Handoff,
    batch: Vec<u8>,
    /// Whether anything was appended since the last take.
    dirty: bool,
}

/// The rendering thread's end of the channel, and the spooling thread,
/// started when a first batch fills: a page shorter than a batch (a
/// conversation of a few dozen messages, most of a store) is rendered and
/// spooled here, without a thread whose start and wait cost a tenth of
/// such a run.
#[derive(Default)]
struct Handoff {
    started: Option<Started>,
    /// Work deferred into the batch being filled, at its offset there,
    /// handed over with it: one hand-over (a wakeup of the other thread)
    /// for many blocks, not one each.
    works: Vec<(usize, Work)>,
    /// The bytes the works in `works` read (their copies), which count
    /// toward filling the batch.
    work_bytes: usize,
    /// A batch could not be handed over: the other thread stopped (or
    /// could not be started).
    broken: bool,
    /// Why, until [`Bodies::filled`] says it.
    why: Option<Error>,
    /// Called just before the other thread starts ([`Bodies::new`]).
    threading: Option<fn()>,
}

struct Started {
    jobs: Option<SyncSender<Job>>,
    /// Batches the other thread has written, back for reuse.
    empties: Receiver<Vec<u8>>,
    writer: Option<JoinHandle<()>>,
}

fn gone() -> Error {
    Error::data("the spooling thread stopped")
}

impl Bodies {
    /// Bodies that call `threading`, if given, just before their spooling
    /// thread starts, if it does: agy-render's allocator is told that
    /// blocks are about to go from thread to thread ([`crate::cli::heap`]),
    /// as a call's copied input does, freed where it was rendered.
    pub fn new(threading: Option<fn()>) -> Bodies {
        let mut bodies = Bodies::default();
        bodies.handoff.threading = threading;
        bodies
    }

    /// Bodies whose spooling thread is started now, not at the first full
    /// batch: for tests that hold what it renders to what is rendered in
    /// place.
    #[cfg(test)]
    pub fn started() -> Result<Bodies> {
        let mut bodies = Bodies::default();
        bodies.handoff.started = Some(Started::new(None)?);
        Ok(bodies)
    }

    /// Where to render the conversation's next bytes; call
    /// [`Bodies::filled`] after.
    pub fn out(&mut self) -> Out<'_> {
        self.dirty = true;
        Out {
            batch: &mut self.batch,
            handoff: Some(&mut self.handoff),
        }
    }

    /// Hands the batch over once it is full.
    pub fn filled(&mut self) -> Result<()> {
        self.handoff.hand_over(&mut self.batch);
        if self.handoff.broken {
            return Err(self.handoff.why.take().unwrap_or_else(gone));
        }
        Ok(())
    }

    /// Appends rendered bytes to the body of the conversation in progress.
    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        self.out().extend_from_slice(bytes);
        self.filled()
    }

    /// The body so far, ending it: later appends start the next body. An
    /// error is the spool's (a full temporary directory).
    pub fn take(&mut self) -> Result<Spool> {
        if !self.dirty {
            return Ok(Spool::default());
        }
        self.dirty = false;
        let batch = std::mem::take(&mut self.batch);
        if self.handoff.started.is_none() {
            let mut spool = Spool::default();
            spool.append(&batch)?;
            self.batch = batch;
            self.batch.clear();
            return Ok(spool);
        }
        self.handoff.send_batch(batch)?;
        let (reply, answer) = mpsc::channel();
        self.handoff.send(Job::Take(reply))?;
        answer.recv().map_err(|_| gone())?
    }

    /// Gives a copied-out spool back, to be closed by the other thread.
    pub fn discard(&mut self, spool: Spool) {
        if spool.len() > Spool::IN_MEMORY as u64 && self.handoff.started.is_some() {
            let _ = self.handoff.send(Job::Discard(spool));
        }
    }
}

/// Where an [`Out`]'s batch goes when [`Out::spill`] says it may: the
/// body's spooling thread, or a held call's spool.
pub trait Spill {
    /// Takes `batch` when it is full, leaving it empty.
    fn hand_over(&mut self, batch: &mut Vec<u8>);

    /// Takes `work` to render on another thread after `batch`'s bytes so
    /// far (`size`: the bytes it reads, its copy); gives it back when
    /// there is no other thread (a held call's bytes are rendered where
    /// they are).
    fn defer(&mut self, _batch: &mut Vec<u8>, _size: usize, work: Work) -> Option<Work> {
        Some(work)
    }

    /// Whether [`Spill::defer`] hands work to another thread.
    fn defers(&self) -> bool {
        false
    }
}

impl Spill for Handoff {
    /// Hands `batch` over when it is full, leaving an empty one in its
    /// place (starting the other thread for the first); a failure is
    /// remembered in `broken`.
    fn hand_over(&mut self, batch: &mut Vec<u8>) {
        if batch.len() + self.work_bytes < BATCH {
            return;
        }
        let full = self.swap_out(batch);
        let sent = self.send_batch(full);
        self.note(sent);
    }

    /// Before the other thread is started, gives `work` back to be done
    /// here: a block of a page that has not yet filled a batch. After, the
    /// work goes with the batch, which is handed over once it and the
    /// works' copies fill one.
    fn defer(&mut self, batch: &mut Vec<u8>, size: usize, work: Work) -> Option<Work> {
        if self.started.is_none() {
            return Some(work);
        }
        self.works.push((batch.len(), work));
        self.work_bytes += size;
        self.hand_over(batch);
        None
    }

    fn defers(&self) -> bool {
        self.started.is_some()
    }
}

impl Handoff {
    /// `batch`'s bytes, an empty batch (a written one when one has come
    /// back) left in its place.
    fn swap_out(&mut self, batch: &mut Vec<u8>) -> Vec<u8> {
        let written = self
            .started
            .as_ref()
            .and_then(|started| started.empties.try_recv().ok());
        let empty = match written {
            Some(mut empty) => {
                empty.clear();
                empty
            }
            None => Vec::with_capacity(BATCH + BATCH / 4),
        };
        std::mem::replace(batch, empty)
    }

    /// Remembers the first failure to hand over, for [`Bodies::filled`].
    fn note(&mut self, sent: Result<()>) {
        if let Err(e) = sent {
            if !self.broken {
                self.why = Some(e);
            }
            self.broken = true;
        }
    }

    /// Sends `bytes` with the works deferred into them, unless there is
    /// neither.
    fn send_batch(&mut self, bytes: Vec<u8>) -> Result<()> {
        let works = std::mem::take(&mut self.works);
        self.work_bytes = 0;
        if bytes.is_empty() && works.is_empty() {
            return Ok(());
        }
        self.send(Job::Append(bytes, works))
    }

    fn send(&mut self, job: Job) -> Result<()> {
        let started = match &mut self.started {
            Some(started) => started,
            None => self.started.insert(Started::new(self.threading)?),
        };
        let jobs = started.jobs.as_ref().ok_or_else(gone)?;
        jobs.send(job).map_err(|_| gone())
    }
}

impl Started {
    /// Starts the spooling thread, calling `threading` first.
    fn new(threading: Option<fn()>) -> Result<Started> {
        if let Some(threading) = threading {
            threading();
        }
        let (jobs, queue) = mpsc::sync_channel(QUEUE);
        let (recycle, empties) = mpsc::sync_channel(QUEUE + 1);
        let writer = std::thread::Builder::new()
            .name("agy-render spool".to_string())
            .spawn(move || write_bodies(queue, recycle))
            .map_err(|e| Error::io("starting the spooling thread", e))?;
        Ok(Started {
            jobs: Some(jobs),
            empties,
            writer: Some(writer),
        })
    }
}

/// Where a page's bytes are rendered to: a buffer, the body's batch or
/// one held in memory (a call waiting for its result), and for the body
/// the way to the spool. A format writes a long text in pieces and calls
/// [`Out::spill`] after each, so the text's page bytes go on as they come
/// instead of all waiting in the batch.
pub struct Out<'a> {
    batch: &'a mut Vec<u8>,
    handoff: Option<&'a mut dyn Spill>,
}

impl<'a> Out<'a> {
    /// Bytes kept in `buf`: spilling leaves them there.
    pub fn memory(buf: &'a mut Vec<u8>) -> Out<'a> {
        Out {
            batch: buf,
            handoff: None,
        }
    }

    /// Bytes kept in `batch` until it is full, then handed to `spill`.
    pub fn spilling(batch: &'a mut Vec<u8>, spill: &'a mut dyn Spill) -> Out<'a> {
        Out {
            batch,
            handoff: Some(spill),
        }
    }

    /// Hands the bytes so far on when they fill a batch (for the body and
    /// a held call; nothing for a buffer in memory). The bytes after keep
    /// their order.
    pub fn spill(&mut self) {
        if let Some(handoff) = self.handoff.as_deref_mut() {
            handoff.hand_over(self.batch);
        }
    }

    /// Whether [`Out::defer`] would hand work to another thread, for a
    /// caller that must copy what the work reads to hand it over.
    pub fn defers(&self) -> bool {
        self.handoff
            .as_deref()
            .is_some_and(|handoff| handoff.defers())
    }

    /// Renders with `work` here, or has the body's spooling thread do it
    /// after the bytes so far: the page bytes are the same either way, and
    /// come in the same place. For a block that is large (so that handing
    /// it over costs little beside rendering it) and not larger than a few
    /// MiB, since its text waits copied in the queue.
    pub fn defer(&mut self, size: usize, work: Work) {
        let work = match self.handoff.as_deref_mut() {
            Some(handoff) => handoff.defer(self.batch, size, work),
            None => Some(work),
        };
        if let Some(work) = work {
            work(self.batch);
            self.spill();
        }
    }
}

/// The page bytes of a call held until its result comes: in memory while
/// they are fewer than a batch (most calls), else a batch at a time into a
/// [`Spool`] (a MiB in memory, then a temporary file), so that a call
/// about as long as its line (a large input, an Edit rewriting a large
/// file) does not wait whole in memory beside the line. Or, for a call
/// the format hands over ([`Held::later`]), its rendering still to do.
#[derive(Default)]
pub struct Held {
    /// The rendering itself, when it is left for the writing
    /// ([`Held::later`]), and the bytes it reads.
    later: Option<(usize, Work)>,
    /// The bytes, or the last of them when the others are in `spool`.
    memory: Vec<u8>,
    spool: Spool,
    /// The first failure to spool (a full temporary directory).
    error: Option<Error>,
}

impl Spill for Held {
    fn hand_over(&mut self, batch: &mut Vec<u8>) {
        if batch.len() < BATCH {
            return;
        }
        if self.error.is_none() {
            if let Err(e) = self.spool.append(batch) {
                self.error = Some(e);
            }
        }
        batch.clear();
    }
}

impl Held {
    /// The bytes `render` writes.
    pub fn render(render: impl FnOnce(&mut Out)) -> Held {
        let mut held = Held::default();
        // Most calls render to a few KiB: room for that at once, not a
        // reallocation (and a copy) at every doubling from nothing.
        let mut batch = Vec::with_capacity(HELD_ROOM);
        render(&mut Out::spilling(&mut batch, &mut held));
        held.memory = batch;
        held
    }

    /// Bytes that `work` renders when they are written: the body's
    /// spooling thread renders them there ([`Out::defer`]; `size` is the
    /// bytes it reads).
    pub fn later(size: usize, work: Work) -> Held {
        Held {
            later: Some((size, work)),
            ..Held::default()
        }
    }

    /// Writes the held bytes to `out`, handed on a batch at a time.
    pub fn write(mut self, out: &mut Out) -> Result<()> {
        if let Some((size, work)) = self.later.take() {
            out.defer(size, work);
            return Ok(());
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        let len = self.spool.len();
        let mut at = 0;
        while at < len {
            let end = (at + BATCH as u64).min(len);
            self.spool.read_range(at..end, out)?;
            out.spill();
            at = end;
        }
        out.extend_from_slice(&self.memory);
        out.spill();
        Ok(())
    }
}

impl Deref for Out<'_> {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        self.batch
    }
}

impl DerefMut for Out<'_> {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        self.batch
    }
}

impl Drop for Started {
    /// Lets the other thread write what it was given, and waits for it.
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
    // What deferred work renders, kept for the next.
    let mut rendered = Vec::new();
    for job in queue {
        match job {
            Job::Append(bytes, works) => {
                let mut append = |piece: &[u8]| {
                    if failed.is_none() {
                        if let Err(e) = spool.append(piece) {
                            failed = Some(e);
                        }
                    }
                };
                let mut at = 0;
                for (offset, work) in works {
                    rendered.clear();
                    work(&mut rendered);
                    append(&bytes[at..offset]);
                    append(&rendered);
                    at = offset;
                }
                append(&bytes[at..]);
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

    /// The hook is called once, as the thread starts at a first full
    /// batch, and not for a page that never fills one.
    #[test]
    fn threading_is_called_when_the_thread_starts() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        let threading = || {
            CALLS.fetch_add(1, Ordering::Relaxed);
        };
        let mut short = Bodies::new(Some(threading));
        short.append(&[b'x'; 1000]).unwrap();
        assert!(!short.out().defers());
        short.take().unwrap();
        assert_eq!(CALLS.load(Ordering::Relaxed), 0);
        let mut long = Bodies::new(Some(threading));
        for _ in 0..3 {
            long.append(&vec![b'x'; BATCH]).unwrap();
        }
        assert!(long.out().defers());
        assert_eq!(long.take().unwrap().len(), 3 * BATCH as u64);
        assert_eq!(CALLS.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn spilled_bytes_go_on_in_batches_and_come_back_in_order() {
        let mut bodies = Bodies::default();
        bodies.append(b"before").unwrap();
        let mut whole = b"before".to_vec();
        let mut out = bodies.out();
        for i in 0..3 * BATCH / 1000 {
            let piece = format!("{i:0999}\n");
            out.extend_from_slice(piece.as_bytes());
            whole.extend_from_slice(piece.as_bytes());
            out.spill();
            // What waits is the bytes after the last full batch.
            assert!(out.len() < BATCH);
        }
        let mut memory = Vec::new();
        let mut kept = Out::memory(&mut memory);
        kept.extend_from_slice(&whole);
        kept.spill();
        assert_eq!(kept.len(), whole.len());
        bodies.filled().unwrap();
        let mut spool = bodies.take().unwrap();
        assert_eq!(contents(&mut spool), whole);
    }

    #[test]
    fn a_held_call_waits_a_batch_at_a_time_and_comes_back_whole() {
        let mut whole = Vec::new();
        let mut most = 0;
        let held = Held::render(|out| {
            for i in 0..3 * Spool::IN_MEMORY / 1000 {
                let piece = format!("{i:0999}\n");
                out.extend_from_slice(piece.as_bytes());
                whole.extend_from_slice(piece.as_bytes());
                out.spill();
                most = most.max(out.len());
            }
            out.extend_from_slice(b"tail");
        });
        whole.extend_from_slice(b"tail");
        assert!(most < BATCH, "the batch is handed on as it fills");
        assert!(held.spool.len() > Spool::IN_MEMORY as u64);
        assert!(held.memory.len() < BATCH);
        let mut memory = b"before ".to_vec();
        held.write(&mut Out::memory(&mut memory)).unwrap();
        assert_eq!(&memory[..7], b"before ");
        assert!(memory[7..] == whole[..]);
    }

    #[test]
    fn bodies_come_back_whole_and_separate() {
        let mut bodies = Bodies::default();
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

    /// Work deferred to the spooling thread comes in its place among the
    /// bytes around it; with the thread started at the first full batch,
    /// the work before that is done here, and the bytes are the same.
    #[test]
    fn deferred_work_renders_in_its_place() {
        for started in [true, false] {
            let mut bodies = match started {
                true => Bodies::started().unwrap(),
                false => Bodies::default(),
            };
            let mut expected = Vec::new();
            let mut out = bodies.out();
            assert_eq!(out.defers(), started);
            for i in 0..40usize {
                let before = format!("<{i}>");
                out.extend_from_slice(before.as_bytes());
                expected.extend_from_slice(before.as_bytes());
                // Work of every size, some longer than a batch, the batch
                // before it empty or not.
                let len = (i * i * 7919) % (3 * BATCH);
                let byte = b'a' + (i % 26) as u8;
                expected.resize(expected.len() + len, byte);
                out.defer(len, Box::new(move |out| out.resize(out.len() + len, byte)));
                if i % 3 == 0 {
                    let len = out.len();
                    out.resize(len + BATCH, b'-');
                    expected.resize(expected.len() + BATCH, b'-');
                    out.spill();
                }
            }
            assert!(out.defers());
            bodies.filled().unwrap();
            let mut spool = bodies.take().unwrap();
            assert!(contents(&mut spool) == expected);
        }
    }

    /// A body shorter than a batch is spooled without the other thread.
    #[test]
    fn a_short_body_starts_no_thread() {
        let mut bodies = Bodies::default();
        for _ in 0..3 {
            bodies.append(b"short ").unwrap();
            let mut out = bodies.out();
            out.defer(5, Box::new(|out| out.extend_from_slice(b"work ")));
            bodies.filled().unwrap();
        }
        let mut spool = bodies.take().unwrap();
        assert_eq!(contents(&mut spool), b"short work ".repeat(3));
        bodies.discard(spool);
        assert!(bodies.handoff.started.is_none());
        bodies.append(b"next").unwrap();
        assert_eq!(contents(&mut bodies.take().unwrap()), b"next");
    }

    #[test]
    fn work_is_done_in_place_where_there_is_no_other_thread() {
        let mut buf = b"a".to_vec();
        let mut out = Out::memory(&mut buf);
        assert!(!out.defers());
        out.defer(1, Box::new(|out| out.extend_from_slice(b"b")));
        out.extend_from_slice(b"c");
        assert_eq!(buf, b"abc");
        let held = Held::render(|out| {
            assert!(!out.defers());
            out.extend_from_slice(b"x");
            out.defer(
                2 * BATCH,
                Box::new(|out| out.resize(out.len() + 2 * BATCH, b'y')),
            );
            out.extend_from_slice(b"z");
        });
        let mut written = Vec::new();
        held.write(&mut Out::memory(&mut written)).unwrap();
        assert_eq!(written.len(), 2 * BATCH + 2);
        assert_eq!(
            (written[0], written[1], written[2 * BATCH + 1]),
            (b'x', b'y', b'z')
        );
    }
}
