//! `agy-pack --reindex`: the root's index rebuilt from its databases.
//!
//! Each conversation database of the root is summarized from its metadata
//! and the few steps that decide something ([`summary::of_database`]); a
//! conversation the index does not list gets the derived row, a row that
//! disagrees with its database (step count, last user input) is brought up
//! to date, keeping a title agy or the user gave it and every column the
//! database says nothing of, and a row that agrees keeps its bytes. All in
//! one transaction of the index, so a killed run changes nothing. Rows of
//! conversations that are not in the root are left alone: agy writes rows
//! lazily, and a row is not ours to drop.

use std::path::Path;

use crate::decode::summary;
use crate::error::{Error, Result};
use crate::store::dump;
use crate::store::index::{self, Applied, Change};
use crate::store::sqlite::{OpenError, Source};

/// What `--reindex` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reindexed {
    /// Conversations whose row was added, then those whose row was
    /// brought up to date, by id.
    pub added: Vec<String>,
    pub updated: Vec<String>,
    /// Rows that were right already.
    pub unchanged: usize,
    /// Databases that could not be read (each named through `warn`).
    pub failed: usize,
}

/// Rebuilds the missing and stale rows of the index of `root`.
pub fn reindex(root: &Path, warn: &mut dyn FnMut(String)) -> Result<Reindexed> {
    let mut done = Reindexed::default();
    let mut changes = Vec::new();
    for target in dump::root_targets(root)? {
        let db = &target.db;
        let Some(id) = db.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            warn(format!("{}: skipped, name is not UTF-8", db.display()));
            continue;
        };
        let source = match Source::open(db) {
            Ok(source) => source,
            Err(OpenError::NotAgy(why)) => {
                warn(format!(
                    "{}: skipped, not an agy conversation database ({why})",
                    db.display()
                ));
                continue;
            }
            Err(OpenError::Failed(e)) => {
                warn(format!("{}: {e} (not reindexed)", db.display()));
                done.failed += 1;
                continue;
            }
        };
        let summarized = source.cascade_id().and_then(|cascade| match cascade {
            Some(cascade) if cascade != id => Err(Error::data(format!(
                "trajectory_meta.cascade_id is {cascade:?}, not its file name's id: agy cannot open it"
            ))),
            _ => summary::of_database_with_raw(&source),
        });
        match summarized {
            Ok(summary) => changes.push((id, Change::Reindex(summary))),
            Err(e) => {
                warn(format!("{}: {e} (not reindexed)", db.display()));
                done.failed += 1;
            }
        }
    }
    let applied = index::apply(root, &changes, index::BUSY_TIMEOUT)?;
    for ((id, _), applied) in changes.into_iter().zip(applied) {
        match applied {
            Applied::Added => done.added.push(id),
            Applied::Updated => done.updated.push(id),
            Applied::Unchanged => done.unchanged += 1,
        }
    }
    Ok(done)
}
