//! lane: a conversation made one of another agy surface's, the CLI's or
//! the desktop app's, so it can be copied from one store into the other
//! (FORMAT.md 15 rows 9-10).
//!
//! The two lanes keep conversations in the same database schema, and say
//! which lane wrote one in a few places only ([`Lane::marks`]): the
//! `trajectory_meta.source` column (17 the CLI, 1 the desktop app), the
//! trajectory metadata's project id (`default-cli-project` in the CLI;
//! `outside-of-project` or a project's UUID in the desktop app) and the
//! index row's `source`, `app_data_dir`, `status` and `project_id`. Those
//! are rewritten, nothing else: each lane's "no project" becomes the
//! other's, and a project's UUID is kept both ways (a real CLI
//! conversation names one, FORMAT.md 16 row 11). A conversation already of
//! the target lane (by its trajectory source) goes out byte for byte. One
//! of the ACP lane is refused: no fact says what else makes it one.
//!
//! agy-edit reads a stream and writes one: the store a conversation came
//! from is never written (agy's own import of a desktop conversation
//! modified the desktop's index, row 10).

use crate::agy::{project, wire};
use crate::error::{Error, Result};
use crate::store::index::{IndexRow, RAW_SUMMARY};
use crate::store::root::{Lane, CLI, DESKTOP};
use crate::stream::io::Output;
use crate::stream::record::{
    edit_row, line_head, line_table, write_line, CellEdit, JsonCell, Record, Side,
};

use super::survey::Held;

/// The summary's copy of the trajectory metadata (agy-store(5)).
const SUMMARY_METADATA: u32 = 17;

/// What making `held` a conversation of `to` changes, said before any of
/// it is written; `None` when it is of that lane already.
pub(super) struct Relane {
    /// The trajectory source, when it changes.
    source: Option<i64>,
    /// The trajectory metadata, when its project id changes.
    metadata: Option<Vec<u8>>,
    /// The index row, when it changes.
    index: Option<IndexRow>,
    /// What changed, for the line on stderr.
    pub said: Vec<String>,
}

/// What making `held` a conversation of `lane` changes.
pub(super) fn plan(held: &Held, lane: Lane) -> Result<Option<Relane>> {
    let facts = &held.facts;
    let Some(to) = lane.marks() else {
        return Err(Error::usage(format!(
            "agy-edit makes conversations of the cli or desktop lane, not {}",
            lane.name()
        )));
    };
    if facts.acp_meta || facts.trajectory_id.as_deref() == Some(held.id.as_str()) {
        return Err(Error::data(
            "it is a conversation of the ACP lane (it has an <id>.meta sidecar, or its trajectory is named by its own id); no fact says what else makes one of the CLI or the desktop app",
        ));
    }
    let source = facts
        .source
        .ok_or_else(|| Error::data("it has no trajectory_meta row whose source says its lane"))?;
    let from = Lane::of_trajectory_source(source).ok_or_else(|| {
        Error::data(format!(
            "its trajectory source is {source}, neither the CLI's (17) nor the desktop app's (1)"
        ))
    })?;
    if from == lane {
        // Of that lane already: it goes out byte for byte, whatever project
        // it names (a CLI conversation may name a project's UUID).
        return Ok(None);
    }
    let mut plan = Relane {
        source: None,
        metadata: None,
        index: None,
        said: Vec::new(),
    };
    if source != to.trajectory_source {
        plan.source = Some(to.trajectory_source);
        plan.said.push(format!(
            "trajectory source {source} -> {}",
            to.trajectory_source
        ));
    }
    if let Some(metadata) = &facts.metadata {
        if let Some(old) = project::project_id(metadata) {
            if let Some(new) = project_id(&old, lane) {
                plan.metadata = project::set_project_id(metadata, new);
                plan.said.push(project_said(&old, new));
            }
        }
    }
    if let Some(row) = &facts.index {
        let mut index = row.clone();
        let mut columns = Vec::new();
        for (column, value) in [
            ("source", to.index_source),
            ("app_data_dir", to.app_data_dir),
        ] {
            set(&mut index, column, |_| Some(value), &mut columns);
        }
        // The desktop app's status of a conversation at rest; one it was
        // running keeps its own.
        set(
            &mut index,
            "status",
            |old| match lane {
                Lane::Desktop => old.is_empty().then_some(to.status),
                _ => Some(to.status),
            },
            &mut columns,
        );
        set(
            &mut index,
            "project_id",
            |old| project_id(old, lane),
            &mut columns,
        );
        // Its summary's copy of the trajectory metadata (17) names the
        // project as the metadata does: changed as it is, so that a round
        // trip gives back its bytes.
        if let Some(new) = index
            .get(RAW_SUMMARY)
            .is_some()
            .then(|| {
                facts
                    .metadata
                    .as_deref()
                    .and_then(project::project_id)
                    .and_then(|old| project_id(&old, lane))
            })
            .flatten()
        {
            let summary_metadata = |raw: &[u8]| {
                wire::edit_field(raw, SUMMARY_METADATA, |m| project::set_project_id(m, new))
            };
            if index.edit_blob(RAW_SUMMARY, summary_metadata)? {
                columns.push(RAW_SUMMARY);
            }
        }
        if !columns.is_empty() {
            plan.said.push(format!("index row {}", columns.join(", ")));
            plan.index = Some(index);
        }
    }
    Ok((!plan.said.is_empty()).then_some(plan))
}

/// The project id a conversation whose project id is `old` has in `to`,
/// when it changes: each lane's "no project of its own" becomes the
/// other's (`default-cli-project`, `outside-of-project`), and a project's
/// UUID is kept both ways (a real CLI conversation names one, FORMAT.md 16
/// row 11), so a lane copy and its way back give every byte back.
fn project_id(old: &str, to: Lane) -> Option<&'static str> {
    let (from, to) = match to {
        Lane::Desktop => (CLI.project_id, DESKTOP.project_id),
        Lane::Cli => (DESKTOP.project_id, CLI.project_id),
        Lane::Acp => return None,
    };
    (old == from).then_some(to)
}

fn project_said(old: &str, new: &str) -> String {
    format!("project {old} -> {new}")
}

/// Sets the text column `column` of `index` to what `value` makes of its
/// old text (`None` keeps it), noting the column when it changed.
fn set(
    index: &mut IndexRow,
    column: &'static str,
    value: impl FnOnce(&str) -> Option<&'static str>,
    changed: &mut Vec<&'static str>,
) {
    let Some(old) = index.get(column).and_then(JsonCell::as_text) else {
        return;
    };
    let Some(new) = value(old).filter(|new| *new != old) else {
        return;
    };
    index.set(column, JsonCell::Plain(new.to_string().into()));
    changed.push(column);
}

impl Relane {
    /// Writes `held` as a conversation of the lane.
    pub fn write(&self, held: &mut Held, out: &mut Output) -> Result<()> {
        held.replay(|line| {
            // Brain files and steps, the bulk of a conversation, are not
            // even read.
            let other_table = line_table(line)
                .is_some_and(|t| !matches!(t, b"trajectory_meta" | b"trajectory_metadata_blob"));
            if other_table
                || !matches!(
                    line_head(line),
                    None | Some((_, b"row" | b"index" | b"side"))
                )
            {
                return write_line(out, line);
            }
            let record = Record::parse(line)?;
            match &record {
                // The other lane's list and `agy -c` map are not this
                // lane's: agy-pack makes the summary entries of the root
                // it writes into.
                Record::Side {
                    side: Side::Summary { .. } | Side::Last { .. },
                    ..
                } => Ok(()),
                Record::Row { table, row, .. } => match (&**table, &self.source, &self.metadata) {
                    ("trajectory_meta", Some(source), _) => write_line(
                        out,
                        &edit_row(line, &[("source", CellEdit::Integer(*source))])?,
                    ),
                    ("trajectory_metadata_blob", _, Some(metadata))
                        if row
                            .get("id")
                            .and_then(|c| c.as_text())
                            .is_none_or(|id| id == "main") =>
                    {
                        write_line(
                            out,
                            &edit_row(line, &[("data", CellEdit::Blob(metadata.clone()))])?,
                        )
                    }
                    _ => write_line(out, line),
                },
                Record::Index { conversation, .. } => match &self.index {
                    Some(index) => {
                        index.write(out.buf(), conversation);
                        out.end_record()
                    }
                    None => write_line(out, line),
                },
                _ => write_line(out, line),
            }
        })
    }
}
