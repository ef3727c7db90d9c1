//! agy-edit's flags: where a fork or a rewind cuts, how far a move reaches.

use lexopt::ValueExt;

use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};
use crate::error::Error;

pub(super) static FLAGS: &[Flag] = &[
    // agy-edit: where a fork or a rewind cuts.
    Flag {
        long: "at",
        short: None,
        kind: Kind::Value {
            name: "STEP",
            complete: Complete::Text,
            update: |args, value| {
                once("--at", args.at.is_some())?;
                args.at = Some(step_number("--at", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "fork: keep the steps up to and with step STEP",
            man: r#"For
.BR fork :
the fork keeps the steps up to and with step
.I STEP
(the
.B idx
that
.BR agy\-decode (1)
shows on each message).
"#,
        }],
    },
    Flag {
        long: "turn",
        short: None,
        kind: Kind::Value {
            name: "N",
            complete: Complete::Text,
            update: |args, value| {
                once("--turn", args.turn.is_some())?;
                args.turn = Some(turn_count("--turn", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "fork: keep the first N user turns and their replies",
            man: r#"For
.BR fork :
the fork keeps the first
.I N
user turns, each with everything that followed it up to the next one (the
reply, its tool calls, bookkeeping steps).
"#,
        }],
    },
    Flag {
        long: "to",
        short: None,
        kind: Kind::Value {
            name: "STEP",
            complete: Complete::Text,
            update: |args, value| {
                once("--to", args.to.is_some())?;
                args.to = Some(step_number("--to", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "rewind: remove step STEP and every step after it",
            man: r#"For
.BR rewind :
remove step
.I STEP
and every step after it, as agy's
.B /rewind
to that message does.
"#,
        }],
    },
    Flag {
        long: "turns",
        short: None,
        kind: Kind::Value {
            name: "N",
            complete: Complete::Text,
            update: |args, value| {
                once("--turns", args.turns.is_some())?;
                args.turns = Some(turn_count("--turns", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "rewind: remove the last N user turns and what followed them",
            man: r#"For
.BR rewind :
remove the last
.I N
user turns and everything that followed them.
"#,
        }],
    },
    // agy-edit move: how far a move reaches.
    Flag {
        long: "everywhere",
        short: None,
        kind: Kind::Switch(|args| args.everywhere = true),
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "move: also move the paths inside steps, other rows and brain files",
            man: r#"For
.BR move :
also rewrite every path at or under
.I OLD
inside the conversations moved: in every blob of their steps (tool inputs and
results, user text, at every depth), their
.B gen_metadata
and
.B executor_metadata
rows, the whole trajectory metadata, the index row's title, preview and
summary, the sidecar, and the text of their brain files (transcripts with
their escaped forms).
Without it only the places where a conversation names its project move.
"#,
        }],
    },
];

/// Refuses a flag given a second time: a cut named twice is a mistake,
/// and taking the last would act on the one the user may not have meant.
pub(super) fn once(flag: &str, given: bool) -> Result<(), Error> {
    match given {
        true => Err(Error::usage(format!("{flag} is given twice"))),
        false => Ok(()),
    }
}

/// A step's idx from the command line.
fn step_number(flag: &str, value: std::ffi::OsString) -> Result<i64, Error> {
    let text = value.string()?;
    text.parse::<i64>().ok().filter(|&n| n >= 0).ok_or_else(|| {
        Error::usage(format!(
            "{flag} takes a step number (0 or more), not {text:?}"
        ))
    })
}

/// A count of user turns from the command line.
fn turn_count(flag: &str, value: std::ffi::OsString) -> Result<u64, Error> {
    let text = value.string()?;
    text.parse::<u64>().ok().filter(|&n| n >= 1).ok_or_else(|| {
        Error::usage(format!(
            "{flag} takes a number of turns (1 or more), not {text:?}"
        ))
    })
}
