//! Whether the conversation a stream brings is the one in place: the same
//! conversation (its lineage), and the same bytes (nothing to write).
//!
//! `--force` replaces a conversation, but only with itself: a later state
//! of the same trajectory, or one rewound from it. A fork given another
//! conversation's id, or a conversation encoded anew, has a trajectory of
//! its own and would put a different conversation under the old one's id;
//! that takes `--replace-other`.
//!
//! A conversation whose stream is exactly what agy-dump makes of the one
//! in place (rows, index row, side entries, sidecar, brain files) is not
//! written again:
//! its files keep their inodes and times, so backups, `--changed-since` and
//! peers that date conversations by their files see nothing change. The
//! stream is hashed as it comes; the one in place is dumped into the same
//! hash only when it is needed, at the end.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use rusqlite::Connection;
use sha2::{Digest, Sha256};

use crate::agy::wire::Message;
use crate::error::{Error, Result};
use crate::store::dump::{self, DumpOptions, Target};
use crate::store::sqlite;
use crate::stream::io::Output;
use crate::stream::record::Cell;

/// `parent_references.data` field 1: the trajectory a reference names.
const REFERENCE_TRAJECTORY_ID: u32 = 1;

/// The hash of a conversation's lines, as they came.
#[derive(Clone, Default)]
pub(super) struct Lines(Sha256);

impl Lines {
    /// Takes one line (without its newline).
    pub fn take(&mut self, line: &[u8]) {
        self.0.update(line);
        self.0.update(b"\n");
    }

    /// Whether the conversation at `db` (its brain at `brain`) dumps to
    /// exactly these lines, `with_brain` saying whether its brain files are
    /// dumped too. A conversation that cannot be dumped whole is not the
    /// same.
    pub fn same_as_in_place(
        &self,
        db: &Path,
        brain: &Path,
        with_brain: bool,
        sides: std::sync::Arc<crate::store::side::Sides>,
    ) -> bool {
        let hash = Rc::new(RefCell::new(Sha256::new()));
        let mut out = Output::to(Box::new(HashWriter(hash.clone())));
        let target = Target {
            db: db.to_path_buf(),
            brain: Some(brain.to_path_buf()),
            explicit: true,
        };
        let options = DumpOptions {
            ids: Vec::new(),
            brain: with_brain,
            changed_since: None,
            sides: Some(sides),
        };
        // A warning (a link in the brain, damaged blobs) is in the stream
        // too, as its end record or its bytes: the hash says the rest.
        let dumped = dump::dump(&[target], &options, &mut out, &mut |_| {});
        let whole = matches!(dumped, Ok(outcome) if outcome.dumped == 1 && outcome.failed == 0);
        if !whole || out.flush().is_err() {
            return false;
        }
        drop(out);
        let in_place = hash.borrow().clone().finalize();
        in_place == self.0.clone().finalize()
    }
}

/// A hash that bytes are written into.
struct HashWriter(Rc<RefCell<Sha256>>);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Refuses to put the conversation built in `conn` in place of the one at
/// `db` when it is not the same conversation: when the trajectory in place
/// is neither its trajectory nor one its references name (a rewind names
/// the trajectory it rotated from). A database in place whose trajectory
/// cannot be read is not refused for that: replacing it is what `--force`
/// is for.
pub(super) fn check_lineage(conn: &Connection, db: &Path, id: &str) -> Result<()> {
    let Some(in_place) = trajectory_in_place(db) else {
        return Ok(());
    };
    let mut known: Vec<String> = Vec::new();
    let mut stmt = conn.prepare("SELECT trajectory_id FROM trajectory_meta")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        if let rusqlite::types::ValueRef::Text(text) = row.get_ref(0)? {
            known.push(String::from_utf8_lossy(text).into_owned());
        }
    }
    let has_references = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'parent_references'",
            [],
            |_| Ok(()),
        )
        .is_ok();
    if has_references {
        let mut stmt = conn.prepare("SELECT data FROM parent_references")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            if let rusqlite::types::ValueRef::Blob(data) = row.get_ref(0)? {
                if let Some(trajectory) =
                    Message::new(data).get_nonempty_str(REFERENCE_TRAJECTORY_ID)
                {
                    known.push(trajectory.into_owned());
                }
            }
        }
    }
    if known.contains(&in_place) {
        return Ok(());
    }
    let new = known.first().map_or("none", String::as_str);
    Err(Error::data(format!(
        "it is not the conversation in place at {}: that one's trajectory is {in_place}, and this one's ({new}) \
         neither continues it nor was rewound from it (a fork, or a conversation encoded anew, \
         given the id {id}); the conversation in place is kept (--replace-other replaces it all the same)",
        db.display()
    )))
}

/// The `trajectory_meta.trajectory_id` of the database at `db`, read as
/// agy-dump reads it (its `-wal` included); `None` when it cannot be read.
fn trajectory_in_place(db: &Path) -> Option<String> {
    let tables = sqlite::open_tables(db).ok()?;
    let mut found = None;
    tables
        .each_row("trajectory_meta", &mut |columns, cells| {
            if found.is_none() {
                let at = columns.iter().position(|c| c.name == "trajectory_id");
                if let Some(Cell::Text(text)) = at.map(|i| &cells[i]) {
                    found = Some(String::from_utf8_lossy(text).into_owned());
                }
            }
            Ok(())
        })
        .ok()?;
    found.filter(|t| !t.is_empty())
}
