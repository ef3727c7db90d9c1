//! agy-decode given a database or a data root: the store read in this
//! process, as `agy-dump PATH | agy-decode` would read it, with the same
//! messages for every conversation that reads whole.
//!
//! The dump ([`dump::dump_taken`]) runs as ever, and every record it writes
//! is decoded as a line of the row stream, in order; what differs is the
//! bulk of a conversation, which never takes the row stream's form:
//!
//! - each `steps` row is decoded from its cells ([`Decoder::step_cells`]),
//!   so its blobs are never written as hex and read back (two thirds of
//!   the bytes of `agy-dump | agy-decode` on a long conversation);
//! - of the brain files only those the messages take text from are read:
//!   a spilled tool result's, the artifacts'. The transcripts agy keeps
//!   beside them (a long conversation's are as large as its database) are
//!   read by nothing here, so they are not read at all; a transcript that
//!   cannot be read fails no conversation, since none of its messages
//!   came from it;
//! - the records about a conversation rather than of it (its index row, its
//!   side-file records, the ACP lane's `.meta` file) are not read: no
//!   message comes from them.
//!
//! Anything the dump cannot read is said and marked as for the pipeline: a
//! conversation cut short ends with an end record that says so, and its
//! meta record is marked incomplete.

use std::cell::RefCell;
use std::io::Read as _;
use std::path::Path;
use std::rc::Rc;

use crate::error::{Error, Result};
use crate::store::dump::{self, DumpOptions, Outcome, Taker, Target};
use crate::stream::carry::LineCarry;
use crate::stream::io::Output;
use crate::stream::record::{Cell, Column};

use super::rows::{Blob, StepColumns};
use super::Decoder;

mod parallel;

/// What decoded messages are written into: an [`Output`], and what is done
/// once a record's messages are in it (a format's conversion).
pub trait Messages {
    fn output(&mut self) -> &mut Output;
    /// Called after each record of the input.
    fn end_record(&mut self) -> Result<()>;
    /// Called before the first record of conversation `id` read from a
    /// database (its messages, if any, come next).
    fn begin(&mut self, id: &str) -> Result<()> {
        let _ = id;
        Ok(())
    }
}

impl Messages for Output {
    fn output(&mut self) -> &mut Output {
        self
    }

    fn end_record(&mut self) -> Result<()> {
        Output::end_record(self)
    }
}

/// Whether `path` is a store to read (a directory, taken as a data root, or
/// an SQLite database) rather than a row stream.
pub fn is_store(path: &Path) -> bool {
    const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => true,
        Ok(meta) if meta.is_file() => {
            let mut head = [0u8; 16];
            let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
            read.is_ok() && &head == SQLITE_HEADER
        }
        _ => false,
    }
}

/// What [`read`] gives back: the decoder and the messages' sink, to go on
/// with, and what the dump came to.
pub struct StoreRead<M> {
    pub decoder: Decoder,
    pub messages: M,
    /// Conversations read, and those that could not be (each said through
    /// `warn`; one cut short is also marked in its meta record).
    pub outcome: Result<Outcome>,
}

/// Decodes the database or data root `path` into `messages`, each of its
/// conversations as the row stream of agy-dump would give it. `warn` hears
/// what could not be read, each named. A root of many conversations is
/// read two at a time ([`parallel`]).
pub fn read<M: Messages + 'static>(
    path: &Path,
    decoder: Decoder,
    messages: M,
    warn: Box<dyn FnMut(String)>,
) -> StoreRead<M> {
    let place = path.display().to_string();
    match dump::targets(&[path.to_path_buf()]) {
        Ok(targets) if targets.len() >= 2 => {
            parallel::read(targets, place, decoder, messages, warn)
        }
        Ok(targets) => read_targets(&targets, place, decoder, messages, warn),
        Err(e) => StoreRead {
            decoder,
            messages,
            outcome: Err(e),
        },
    }
}

/// [`read`] of `targets`, one after another, in this thread.
fn read_targets<M: Messages + 'static>(
    targets: &[Target],
    place: String,
    decoder: Decoder,
    messages: M,
    warn: Box<dyn FnMut(String)>,
) -> StoreRead<M> {
    let shared = Rc::new(RefCell::new(Shared {
        decoder,
        messages,
        carry: LineCarry::default(),
        failure: None,
        place,
        warn,
    }));
    let outcome = dump_into(targets, &shared);
    let shared = Rc::into_inner(shared)
        .expect("the dump's output is dropped")
        .into_inner();
    let outcome = match (outcome, shared.failure) {
        // The dump stopped because decoding did: that is what went wrong.
        (_, Some(failure)) => Err(failure),
        (outcome, None) => outcome,
    };
    StoreRead {
        decoder: shared.decoder,
        messages: shared.messages,
        outcome,
    }
}

fn dump_into<M: Messages + 'static>(
    targets: &[Target],
    shared: &Rc<RefCell<Shared<M>>>,
) -> Result<Outcome> {
    let options = DumpOptions {
        brain: true,
        ..DumpOptions::default()
    };
    let mut out = Output::to(Box::new(Feed(shared.clone())));
    let mut taker = Steps(shared.clone());
    let mut warn = |message: String| (shared.borrow_mut().warn)(message);
    let outcome = dump::dump_taken(targets, &options, &mut out, &mut taker, &mut warn)?;
    out.flush()?;
    let mut shared = shared.borrow_mut();
    if let Some(rest) = shared.carry.take_rest() {
        shared.line(&rest).map_err(|e| e.context(&shared.place))?;
    }
    Ok(outcome)
}

/// What the dump's output and its taker both reach.
struct Shared<M> {
    decoder: Decoder,
    messages: M,
    /// A record the dump has written only the start of.
    carry: LineCarry,
    /// Why decoding stopped, when it did: the dump is stopped with an
    /// output error, and this is what the caller is told.
    failure: Option<Error>,
    /// The path read, for errors and warnings.
    place: String,
    warn: Box<dyn FnMut(String)>,
}

impl<M: Messages> Shared<M> {
    /// Decodes one record of the dump, given as its line.
    fn line(&mut self, line: &[u8]) -> Result<()> {
        let done = self.decoder.line(line, self.messages.output());
        self.after_record(done)
    }

    /// Ends a record's messages and says what the decoder could not read.
    fn after_record(&mut self, done: Result<()>) -> Result<()> {
        let done = done.and_then(|()| self.messages.end_record());
        for warning in self.decoder.take_warnings() {
            (self.warn)(format!("{}: {warning}", self.place));
        }
        done
    }

    /// Keeps `e` as why decoding stopped, and gives the error that stops
    /// the dump: one the dump takes for its output failing, so that it
    /// ends there rather than go on to the next conversation.
    fn stop(&mut self, e: Error) -> Error {
        let e = e.context(&self.place);
        self.failure.get_or_insert(e);
        Error::output(std::io::Error::other("decoding stopped"))
    }
}

/// The dump's output: each whole line it writes is decoded.
struct Feed<M>(Rc<RefCell<Shared<M>>>);

impl<M: Messages> std::io::Write for Feed<M> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut guard = self.0.borrow_mut();
        let shared = &mut *guard;
        let mut carry = std::mem::take(&mut shared.carry);
        let done = carry.push(bytes, &mut |line| shared.line(line));
        shared.carry = carry;
        match done {
            Ok(()) => Ok(bytes.len()),
            Err(e) => {
                shared.stop(e);
                Err(std::io::Error::other("decoding stopped"))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The dump's taker: `steps` rows decoded from their cells, brain files
/// read when the decoder reads them.
struct Steps<M>(Rc<RefCell<Shared<M>>>);

impl<M: Messages> Taker for Steps<M> {
    /// Refuses a conversation met before (two databases holding one id),
    /// as a stream's records of it after another's are refused; the one
    /// just read is refused too, where a stream would run the two on as
    /// one.
    fn begin(&mut self, id: &str) -> Result<()> {
        let mut guard = self.0.borrow_mut();
        let shared = &mut *guard;
        let decoder = &shared.decoder;
        let open = decoder.current.as_ref().is_some_and(|c| c.id == id);
        let begun = match open || decoder.finished.contains(id) {
            true => Err(met_again(id)),
            false => shared.messages.begin(id),
        };
        begun.map_err(|e| shared.stop(e))
    }

    fn steps_row(&mut self, id: &str, columns: &[Column], cells: &[Cell<'_>]) -> Result<bool> {
        let mut guard = self.0.borrow_mut();
        let shared = &mut *guard;
        let taken = shared
            .decoder
            .step_cells(id, columns, cells, shared.messages.output());
        match taken {
            Ok(false) => Ok(false),
            Ok(true) => shared.after_record(Ok(())).map(|()| true),
            Err(e) => Err(e),
        }
        .map_err(|e| shared.stop(e))
    }

    fn reads_file(&mut self, id: &str, rel: &str) -> Result<bool> {
        let mut guard = self.0.borrow_mut();
        let shared = &mut *guard;
        let reads = shared.decoder.reads_file(id, rel, shared.messages.output());
        reads.map_err(|e| shared.stop(e))
    }

    fn reads_side_records(&self) -> bool {
        false
    }
}

/// The error for a conversation two databases hold.
fn met_again(id: &str) -> Error {
    Error::data(format!(
        "conversation {id:?} appears again after another one (two databases hold it)"
    ))
}

impl Decoder {
    /// A `steps` row of conversation `id` given as its cells, decoded as
    /// its line would be ([`Decoder::canonical_step_line`]). False, having
    /// done nothing, for a row whose cells are not all of the kinds that
    /// line's reading takes straight (an integer or NULL in `idx`,
    /// `step_type` and `status`, a blob or NULL in the blob columns): the
    /// caller writes that row as a line, and it is read as any other.
    fn step_cells(
        &mut self,
        id: &str,
        columns: &[Column],
        cells: &[Cell<'_>],
        out: &mut Output,
    ) -> Result<bool> {
        let mut step = StepColumns::default();
        let mut payload = None;
        for (column, cell) in columns.iter().zip(cells) {
            let integer = match (column.name.as_str(), cell) {
                ("idx" | "step_type" | "status", Cell::Integer(v)) => Some(*v),
                ("idx" | "step_type" | "status", Cell::Null) => None,
                ("idx" | "step_type" | "status", _) => return Ok(false),
                ("step_payload" | "metadata" | "error_details", Cell::Null) => continue,
                ("step_payload", Cell::Blob(bytes)) => {
                    payload = Some(&**bytes);
                    continue;
                }
                ("metadata", Cell::Blob(bytes)) => {
                    step.metadata = Some(Blob::Bytes(bytes));
                    continue;
                }
                ("error_details", Cell::Blob(bytes)) => {
                    step.error_details = Some(Blob::Bytes(bytes));
                    continue;
                }
                ("step_payload" | "metadata" | "error_details", _) => return Ok(false),
                // Read by nothing here.
                _ => continue,
            };
            match column.name.as_str() {
                "idx" => step.idx = integer,
                "step_type" => step.step_type = integer,
                _ => step.status = integer,
            }
        }
        self.enter(id, out)?;
        let done = self.step_decoded(&step, payload.unwrap_or_default(), out);
        self.shed();
        done.map(|()| true)
    }

    /// Whether the brain file `path` of conversation `id` is read here: a
    /// result waits for its text, or it is an artifact's. When it is
    /// neither, what its record would have done here is done (end the
    /// artifact metadata file being read), and it need not come.
    fn reads_file(&mut self, id: &str, path: &str, out: &mut Output) -> Result<bool> {
        self.enter(id, out)?;
        let conv = self.current.as_mut().expect("a conversation is open");
        let wanted = conv.wants_file(path);
        // Asked whatever `wanted` says, as a line of the file would ask it.
        let artifact = conv.artifacts.needs(path, false);
        Ok(wanted || artifact)
    }
}
