//! A stream of many conversations: one that cannot be written is reported,
//! its remaining records are passed over, and the others are still written.
//!
//! A record that is valid JSON names its conversation even when it is
//! wrong, so exactly that conversation fails. A line that is not JSON (or
//! an input that cannot be read) names none. The conversation in progress
//! fails, since the rest of it can no longer be trusted; so does the next
//! conversation, unless it begins with its `db` record, because the lost
//! line may have been its first. A conversation that begins with `db` can
//! have lost nothing before it: `db` must be first.

use std::borrow::Cow;
use std::path::Path;

use super::{Packer, Placed};
use crate::error::{Error, Result};
use crate::stream::io::{Lines, Output};
use crate::stream::record::Record;

/// What became of a stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Conversations written (with `--dry-run`: checked).
    pub written: usize,
    /// Conversations left as they were: the one in place was the same to
    /// the byte.
    pub unchanged: usize,
    /// Failures reported: conversations not written, and lines or inputs
    /// that could not be read.
    pub failed: usize,
    /// The side files changed, by path under the root.
    pub side_files: Vec<String>,
}

/// Feeds inputs to a [`Packer`], reporting each failure through `report`
/// and printing the path of each database written to `out`.
pub struct Batch<'a> {
    packer: Packer,
    out: &'a mut Output,
    report: &'a mut dyn FnMut(String),
    summary: Summary,
    /// `input:line` of the last record of the conversation in progress.
    last_place: String,
    /// A conversation that failed: the rest of its records are passed over.
    skipping: Option<String>,
    /// Where input was lost since a conversation last began.
    lost: Option<String>,
    /// The run of unreadable lines this line continues, if any.
    unreadable: Option<Unreadable>,
}

/// Consecutive unreadable lines are reported once, with their count.
struct Unreadable {
    first: String,
    last: String,
    count: u64,
}

/// What one line did.
enum Outcome {
    /// The record went into its conversation.
    Added,
    /// A record of a conversation that had already failed.
    Passed,
    /// The conversation failed at this line.
    Failed(String, Error),
    /// The line is not a record of any conversation we can name.
    Unreadable(Error),
}

impl<'a> Batch<'a> {
    pub fn new(
        packer: Packer,
        out: &'a mut Output,
        report: &'a mut dyn FnMut(String),
    ) -> Batch<'a> {
        Batch {
            packer,
            out,
            report,
            summary: Summary::default(),
            last_place: String::new(),
            skipping: None,
            lost: None,
            unreadable: None,
        }
    }

    /// Packs every record of one input. Only a failure to write standard
    /// output is returned: everything else is reported and passed over.
    pub fn read(&mut self, lines: &mut Lines) -> Result<()> {
        loop {
            let outcome = match lines.next_line() {
                Ok(Some(line)) => self.take(line)?,
                Ok(None) => return Ok(()),
                Err(e) => {
                    let input = lines.name().to_string();
                    self.lost_input(&input, e);
                    return Ok(());
                }
            };
            self.settle(outcome, &lines.place());
        }
    }

    /// Reports an input that cannot be opened or read any further; `err`
    /// names it.
    pub fn lost_input(&mut self, input: &str, err: Error) {
        self.end_unreadable();
        self.lose(err, format!("the rest of {input}"), "input");
    }

    /// Writes the last conversation and says how the stream went.
    pub fn end(mut self) -> Result<Summary> {
        self.end_unreadable();
        self.finish_pending()?;
        match self.packer.write_side_files() {
            Ok(files) => self.summary.side_files = files,
            Err(e) => {
                (self.report)(format!(
                    "the side files were not brought up to date: {e} (the conversations are written; \
                     packing the same stream again puts their entries in place)"
                ));
                self.summary.failed += 1;
            }
        }
        Ok(self.summary)
    }

    /// Does what can be done with a line before its place is known (the
    /// line borrows the reader that knows it).
    fn take(&mut self, line: &[u8]) -> Result<Outcome> {
        let record = match Record::parse(line) {
            Ok(record) => record,
            Err(err) => {
                let Some(id) = owner(line) else {
                    return Ok(Outcome::Unreadable(err));
                };
                if self.skipping.as_deref() == Some(id.as_ref()) {
                    return Ok(Outcome::Passed);
                }
                self.switch_to(&id)?;
                return Ok(Outcome::Failed(id.into_owned(), err));
            }
        };
        let id = record.conversation();
        if self.skipping.as_deref() == Some(id) {
            // Records of the failed conversation go on after the lost
            // line, so that line was not the next conversation's.
            self.lost = None;
            return Ok(Outcome::Passed);
        }
        if let Some(lost) = self.switch_to(id)? {
            if !matches!(record, Record::Db { .. }) {
                return Ok(Outcome::Failed(
                    id.to_string(),
                    Error::data(format!(
                        "its records begin after {lost}, which could not be read and may \
                         have held the first of them (a conversation that begins with its \
                         db record is trusted)"
                    )),
                ));
            }
        }
        let id = id.to_string();
        Ok(match self.packer.add(record, line) {
            Ok(()) => Outcome::Added,
            Err(e) => Outcome::Failed(id, e),
        })
    }

    /// Makes `id` the conversation of the records that follow: finishes
    /// the one in progress when it is another. When `id` begins here after
    /// input was lost, returns where.
    fn switch_to(&mut self, id: &str) -> Result<Option<String>> {
        if self.packer.pending_id() == Some(id) {
            return Ok(None);
        }
        self.skipping = None;
        self.finish_pending()?;
        Ok(self.lost.take())
    }

    /// Reports what a line did, now that its place is known.
    fn settle(&mut self, outcome: Outcome, place: &str) {
        if let Outcome::Unreadable(err) = outcome {
            match &mut self.unreadable {
                Some(run) => {
                    run.count += 1;
                    run.last = place.to_string();
                }
                None => {
                    self.unreadable = Some(Unreadable {
                        first: place.to_string(),
                        last: place.to_string(),
                        count: 1,
                    });
                    self.lose(err.context(place), format!("line {place}"), "line");
                }
            }
            return;
        }
        self.end_unreadable();
        match outcome {
            Outcome::Added => self.last_place = place.to_string(),
            Outcome::Passed | Outcome::Unreadable(_) => {}
            Outcome::Failed(id, err) => self.fail(&id, err.context(place)),
        }
    }

    /// Input was lost at `place` (a `line` or an `input`): the
    /// conversation in progress fails, and the next must prove it lost
    /// nothing.
    fn lose(&mut self, err: Error, place: String, what: &str) {
        match self.packer.pending_id() {
            Some(id) => {
                let id = id.to_string();
                self.fail(&id, err);
            }
            None => {
                (self.report)(format!("{err} ({what} skipped)"));
                self.summary.failed += 1;
            }
        }
        self.lost = Some(place);
    }

    fn fail(&mut self, id: &str, err: Error) {
        self.packer.fail(id);
        (self.report)(format!("{err} (conversation {id:?} not written)"));
        self.summary.failed += 1;
        self.skipping = Some(id.to_string());
    }

    /// Closes a run of unreadable lines, reporting the ones after its first.
    fn end_unreadable(&mut self) {
        if let Some(run) = self.unreadable.take() {
            if run.count > 1 {
                (self.report)(format!(
                    "{}: {} more unreadable lines after {} skipped",
                    run.last,
                    run.count - 1,
                    run.first
                ));
            }
        }
    }

    /// Writes the conversation in progress, printing its path.
    fn finish_pending(&mut self) -> Result<()> {
        match self.packer.finish() {
            Ok(Some(Placed::Written(path))) => {
                self.summary.written += 1;
                self.print(&path)
            }
            Ok(Some(Placed::Unchanged(_))) => {
                self.summary.unchanged += 1;
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => {
                (self.report)(e.context(&self.last_place).to_string());
                self.summary.failed += 1;
                Ok(())
            }
        }
    }

    fn print(&mut self, path: &Path) -> Result<()> {
        let buf = self.out.buf();
        buf.extend_from_slice(path.as_os_str().as_encoded_bytes());
        buf.push(b'\n');
        self.out.flush()
    }
}

/// The conversation a line that is JSON but not a good record belongs to.
fn owner(line: &[u8]) -> Option<Cow<'_, str>> {
    #[derive(serde::Deserialize)]
    struct Owner<'a> {
        #[serde(borrow)]
        conversation: Option<Cow<'a, str>>,
    }
    serde_json::from_slice::<Owner<'_>>(line).ok()?.conversation
}
