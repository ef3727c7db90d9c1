//! Row stream → row stream: conversation surgery the way agy does it
//! (agy-edit).
//!
//! Each operation is one of agy's own, done to the rows as agy does it
//! (FORMAT.md section 15), and everything it need not change passes through
//! byte for byte:
//!
//! - [`Operation::Fork`]: a new conversation whose steps up to a cut are
//!   byte copies of the parent's, with a FORK reference to the parent, its
//!   own trajectory, metadata and index row, as `/fork` writes one;
//! - [`Operation::Rewind`]: the same conversation without the steps from
//!   the cut on, rotated to a new trajectory with a reference to the old
//!   one, as `/rewind` leaves it;
//! - [`Operation::Settle`]: the steps a crash left in flight made CANCELED,
//!   as agy's resume makes them;
//! - [`Operation::Move`]: the conversations of a project whose directory
//!   moved, re-bound to the new one ([`relocate`]);
//! - [`Operation::Lane`]: a conversation made one of the CLI's or the
//!   desktop app's ([`lane`]).
//!
//! A conversation is held until its last line is read ([`survey`]), so an
//! edit is decided, and refused when it cannot be made faithfully, before
//! any of it is written; then it is written in one pass over the held
//! lines. [`cut`] says where a fork or rewind cuts, [`trim`] writes a cut
//! conversation, [`settle`] settles one, and [`choices`] holds what agy-edit
//! writes where no fact says what agy writes.
//!
//! Imports: [`crate::decode`] (the index row's facts) and the layers below.

mod choices;
mod cut;
mod lane;
mod relocate;
mod settle;
mod survey;
mod trim;

use std::collections::HashSet;

pub use cut::Cut;

use crate::error::{Error, ErrorKind, Result};
use crate::store::root::check_id;
use crate::stream::io::Output;
use crate::stream::record::{self, line_head, Record};

use survey::Held;
use trim::Trim;

/// What agy-edit does to each conversation of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A new conversation from the steps up to the cut; `id` names it
    /// (else one is derived from the parent and the cut).
    Fork { cut: Cut, id: Option<String> },
    /// The conversation without the steps after the cut.
    Rewind { cut: Cut },
    /// Every step in flight made CANCELED.
    Settle,
    /// The conversations whose project is at or under `from` re-bound to
    /// `to`; with `everywhere`, every path under `from` in them moved too.
    Move {
        from: String,
        to: String,
        everywhere: bool,
    },
    /// Each conversation made one of this lane (the CLI's or the desktop
    /// app's).
    Lane(crate::store::root::Lane),
}

impl Operation {
    /// The operation's word on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Fork { .. } => "fork",
            Operation::Rewind { .. } => "rewind",
            Operation::Settle => "settle",
            Operation::Move { .. } => "move",
            Operation::Lane(_) => "lane",
        }
    }

    /// Whether deciding it needs each step's payload, or only its columns.
    fn reads_payloads(&self) -> bool {
        matches!(self, Operation::Fork { .. } | Operation::Rewind { .. })
    }
}

/// Edits a row stream, one conversation at a time.
pub struct Editor {
    op: Operation,
    held: Option<Held>,
    /// A conversation whose lines are dropped: it could not be read, and
    /// the error was said when its first bad line came.
    refused: Option<String>,
    finished: HashSet<String>,
    notes: Vec<String>,
    /// Conversations seen, changed and refused.
    pub seen: usize,
    pub changed: usize,
    pub failed: usize,
    /// Fork ids given out, so a second fork cannot take one twice.
    forks: HashSet<String>,
}

impl Editor {
    pub fn new(op: Operation) -> Editor {
        Editor {
            op,
            held: None,
            refused: None,
            finished: HashSet::new(),
            notes: Vec::new(),
            seen: 0,
            changed: 0,
            failed: 0,
            forks: HashSet::new(),
        }
    }

    /// Takes one line of the row stream. `place` names it (`file:line`)
    /// for an error about the line itself.
    ///
    /// A conversation that cannot be edited is left out of the output
    /// whole, and its error comes back as `Ok(Some(error))` for the caller
    /// to say; the next conversation is edited as if it had not been there.
    /// An error that stops the edit comes back as `Err`: one of the output
    /// itself ([`ErrorKind::Output`], a closed pipe), or a line that belongs
    /// to no conversation.
    pub fn line(
        &mut self,
        line: &[u8],
        place: impl Fn() -> String,
        out: &mut Output,
    ) -> Result<Option<Error>> {
        let id = match line_head(line) {
            Some((id, _)) => id.to_string(),
            None => Record::parse(line)
                .map_err(|e| e.context(place()))?
                .conversation()
                .to_string(),
        };
        if self.refused.as_deref() == Some(id.as_str()) {
            return Ok(None);
        }
        let mut refusal = None;
        if self.held.as_ref().map(|h| h.id.as_str()) != Some(id.as_str()) {
            self.refused = None;
            refusal = self.end_conversation(out)?;
            if !self.finished.insert(id.clone()) {
                return Err(Error::data(format!(
                    "conversation {id:?} appears again after another one; a row stream keeps each conversation's records together"
                ))
                .context(place()));
            }
            self.seen += 1;
            self.held = Some(Held::new(&id, self.op.reads_payloads()));
        }
        let held = self.held.as_mut().expect("a conversation is held");
        if let Err(e) = held.take(line) {
            self.held = None;
            self.refused = Some(id.clone());
            self.failed += 1;
            // The one before it was written (or refused) already: at most
            // one refusal comes back per line.
            return Ok(Some(
                e.context(place())
                    .context(format!("conversation {id} not edited")),
            ));
        }
        Ok(refusal)
    }

    /// Ends the input: edits the conversation still held. `Ok(Some(_))`
    /// when it was refused, as [`Editor::line`] says.
    pub fn finish(&mut self, out: &mut Output) -> Result<Option<Error>> {
        self.end_conversation(out)
    }

    /// What was done to each conversation since the last call, a line each.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// Edits and writes the conversation held, if any.
    fn end_conversation(&mut self, out: &mut Output) -> Result<Option<Error>> {
        let Some(mut held) = self.held.take() else {
            return Ok(None);
        };
        let id = held.id.clone();
        // The heads of what the edit writes count its end record's records.
        record::count_from_here(out);
        let edited = held
            .check_whole()
            .map(|end| end.brain_read)
            .and_then(|brain_read| {
                let note = self.edit(&mut held, out)?;
                record::close(out, &id, brain_read, None)?;
                Ok(note)
            });
        match edited {
            Ok(Some(note)) => {
                self.changed += 1;
                self.notes.push(format!("{id}: {note}"));
                Ok(None)
            }
            Ok(None) => Ok(None),
            Err(e) if matches!(e.kind(), ErrorKind::Output | ErrorKind::BrokenPipe) => Err(e),
            Err(e) => {
                self.failed += 1;
                Ok(Some(e.context(format!(
                    "conversation {id} not edited: {}",
                    self.op.name()
                ))))
            }
        }
    }

    /// Edits one conversation; what changed, or `None` when nothing did.
    fn edit(&mut self, held: &mut Held, out: &mut Output) -> Result<Option<String>> {
        match &self.op {
            Operation::Settle => {
                let settled = settle::write(held, out)?;
                if settled.is_empty() {
                    return Ok(None);
                }
                let total: usize = settled.iter().map(|(_, n)| n).sum();
                let each: Vec<String> = settled
                    .iter()
                    .map(|(status, n)| {
                        let name = crate::agy::steps::status_name(*status as u64).unwrap_or("?");
                        format!("{n} {name}")
                    })
                    .collect();
                Ok(Some(format!(
                    "settled {total} step{} ({}) as CANCELED",
                    plural(total),
                    each.join(", ")
                )))
            }
            Operation::Fork { cut, id } => {
                let cut = *cut;
                let given = id.clone();
                let trim = self.fork(held, cut, given)?;
                let left = trim.write(held, out)?;
                let fork = trim.fork.as_deref().expect("a fork has an id");
                let total = held.facts.steps.len();
                Ok(Some(format!(
                    "forked after step {} as {fork}: kept {} of {total} step{}{}",
                    trim.keep_through,
                    total - left.steps,
                    plural(total),
                    left_behind(&Left { steps: 0, ..left })
                )))
            }
            Operation::Move {
                from,
                to,
                everywhere,
            } => {
                let mv = crate::agy::paths::Move::new(from, to)?;
                if !relocate::selected(held, &mv)? {
                    held.copy(out)?;
                    return Ok(None);
                }
                let moved = relocate::write(held, &mv, *everywhere, out)?;
                Ok(Some(moved.note(&mv)))
            }
            Operation::Lane(to) => {
                let Some(plan) = lane::plan(held, *to)? else {
                    held.copy(out)?;
                    return Ok(None);
                };
                plan.write(held, out)?;
                Ok(Some(format!(
                    "made a conversation of the {} lane: {}",
                    to.name(),
                    plan.said.join(", ")
                )))
            }
            Operation::Rewind { cut } => {
                let trim = rewind(held, *cut)?;
                let left = trim.write(held, out)?;
                let last = held.facts.steps.last().map_or(trim.keep_through, |s| s.idx);
                Ok(Some(format!(
                    "rewound: removed {} step{} ({}..={last}), trajectory now {}{}",
                    left.steps,
                    plural(left.steps),
                    trim.keep_through + 1,
                    trim.trajectory_id,
                    left_behind(&Left { steps: 0, ..left })
                )))
            }
        }
    }

    /// What a fork of `held` at `cut` writes.
    fn fork(&mut self, held: &Held, cut: Cut, id: Option<String>) -> Result<Trim> {
        let facts = &held.facts;
        let keep_through = cut.keep_through(&facts.steps)?;
        let parent = held.id.clone();
        let fork = match id {
            Some(id) => id,
            None => choices::fork_id(&parent, keep_through),
        };
        check_id(&fork)?;
        if fork == parent || !self.forks.insert(fork.clone()) {
            return Err(Error::data(format!(
                "the fork's id {fork} is taken (give each fork its own --id)"
            )));
        }
        let parent_trajectory = facts.trajectory_id.clone().ok_or_else(no_trajectory)?;
        let cut_step = facts
            .steps
            .iter()
            .find(|s| s.idx == keep_through)
            .expect("the cut is a step");
        let cut_trajectory = cut_step
            .trajectory
            .clone()
            .unwrap_or_else(|| parent_trajectory.clone());
        let reference = choices::reference(
            &cut_trajectory,
            keep_through,
            choices::FORK_REFERENCE_TYPE,
            &parent,
        );
        let before = held.summary(None);
        let after = held.summary(Some(keep_through));
        let index = match &facts.index {
            Some(row) => {
                let mut row = after.carry(&before, row);
                row.set(
                    "conversation_id",
                    crate::stream::record::JsonCell::Plain(fork.clone().into()),
                );
                // Made anew by agy-pack from the fork's own steps.
                row.forget_raw_summary();
                row
            }
            None => after.row(&fork),
        };
        Ok(Trim {
            keep_through,
            trajectory_id: choices::fork_trajectory_id(&parent_trajectory, &parent, &fork),
            fork: Some(fork),
            reference: (next_reference(held), reference),
            index: Some(index),
        })
    }
}

/// What a rewind of `held` at `cut` writes.
fn rewind(held: &Held, cut: Cut) -> Result<Trim> {
    let facts = &held.facts;
    let old = facts.trajectory_id.clone().ok_or_else(no_trajectory)?;
    if old == held.id || facts.acp_meta {
        return Err(Error::data(
            "it is a conversation of the ACP lane (its trajectory is named by its own id), whose rewind no fact describes",
        ));
    }
    let keep_through = cut.keep_through(&facts.steps)?;
    let reference =
        choices::reference(&old, keep_through, choices::REWIND_REFERENCE_TYPE, &held.id);
    let index = facts.index.as_ref().map(|row| {
        let mut row = held
            .summary(Some(keep_through))
            .carry(&held.summary(None), row);
        // Made anew by agy-pack from the steps that are left.
        row.forget_raw_summary();
        row
    });
    Ok(Trim {
        keep_through,
        fork: None,
        trajectory_id: choices::rewind_trajectory_id(&old, keep_through),
        reference: (next_reference(held), reference),
        index,
    })
}

use trim::Left;

/// The `parent_references.idx` of a new row: a row counter.
fn next_reference(held: &Held) -> i64 {
    held.facts.last_reference.map_or(0, |last| last + 1)
}

fn no_trajectory() -> Error {
    Error::data("it has no trajectory_meta row to name its trajectory")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// What a cut left behind besides steps, for a note.
fn left_behind(left: &Left) -> String {
    let parts: Vec<String> = [
        (left.steps, "step"),
        (left.generations, "gen_metadata row"),
        (left.files, "brain file"),
        (left.transcript_lines, "transcript line"),
    ]
    .into_iter()
    .filter(|&(n, _)| n > 0)
    .map(|(n, what)| format!("{n} {what}{}", plural(n)))
    .collect();
    match parts.len() {
        0 => String::new(),
        _ => format!("; left out {}", parts.join(", ")),
    }
}
