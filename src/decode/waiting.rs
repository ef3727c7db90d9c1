//! Output that must wait: once a tool result's full text is spilled to a
//! brain file, which the stream carries only after the last step, the
//! conversation's messages are held back with a hole for each such text,
//! and written with the holes filled when the conversation ends.

use std::collections::HashMap;
use std::ops::Range;

use crate::error::Result;
use crate::stream::io::Output;
use crate::stream::spool::Spool;

/// A conversation's output held back until the files it needs have come.
#[derive(Default)]
pub(super) struct Waiting {
    /// The messages since the first result that waits, with a hole (no
    /// bytes) where each waiting result's text goes.
    pub(super) output: Spool,
    /// JSON-escaped texts: each hole's fallback, then each file that came.
    pub(super) texts: Spool,
    pub(super) holes: Vec<Hole>,
    /// Brain path → its escaped content in `texts`, a range per part of
    /// the file, for the paths a hole names (none until the file comes).
    pub(super) files: HashMap<String, Vec<Range<u64>>>,
}

/// Where a spilled text goes in [`Waiting::output`].
pub(super) struct Hole {
    pub(super) at: u64,
    pub(super) path: String,
    /// The step's own (truncated) text in [`Waiting::texts`], used when the
    /// file never comes.
    pub(super) fallback: Range<u64>,
}

impl Waiting {
    /// The held-back messages with each hole filled: the file's text when
    /// it came, else the step's own.
    pub(super) fn write(self, out: &mut Output) -> Result<()> {
        let Waiting {
            mut output,
            mut texts,
            holes,
            files,
        } = self;
        let mut at = 0;
        for hole in &holes {
            output.copy_range(at..hole.at, out)?;
            match files.get(&hole.path).filter(|parts| !parts.is_empty()) {
                Some(parts) => {
                    for part in parts {
                        texts.copy_range(part.clone(), out)?;
                    }
                }
                None => texts.copy_range(hole.fallback.clone(), out)?,
            }
            at = hole.at;
        }
        output.copy_range(at..output.len(), out)?;
        out.end_record()
    }
}
