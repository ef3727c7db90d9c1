//! A conversation of the row stream held for an edit: its lines, spooled as
//! they come, and what the edit must know of it before it writes anything,
//! gathered on the way in: its tables, its trajectory, its references, its
//! steps' kinds, statuses and tool calls, its index row.
//!
//! Nothing of a conversation goes out before its last line is read, so an
//! edit that cannot be made (a cut inside a tool call, a conversation
//! without the table an edit writes to) is refused before any of it is
//! written: the output never holds a half-edited conversation. The lines
//! wait in a [`Spool`] (memory up to a megabyte, a temporary file beyond),
//! so what is held in memory is bounded by the largest line, not by the
//! conversation.

use std::ops::Range;
use std::sync::Arc;

use crate::agy::steps::{field, kind};
use crate::agy::wire::Message;
use crate::decode::summary::{StepFacts, Summarizer};
use crate::error::{Error, Result};
use crate::store::index::{IndexRow, Summary};
use crate::stream::io::Output;
use crate::stream::record::{is_hex_digits, line_head, Counts, End, JsonCell, Record, RowCells};
use crate::stream::spool::Spool;
use crate::time::Timestamp;

/// A conversation's lines and what was learnt of them.
pub(super) struct Held {
    pub id: String,
    spool: Spool,
    lines: Vec<Range<u64>>,
    pub facts: Facts,
    /// Whether each step's payload is read (for its tool calls and index
    /// facts) and each brain file record, or only the steps' columns.
    payloads: bool,
    /// The records taken, counted as an end record counts them.
    counts: Counts,
    /// Its end record, checked against `counts`, once it came. It is not
    /// held with the lines: what agy-edit writes gets an end record of its
    /// own.
    pub end: Option<End>,
}

/// What an edit needs to know of a conversation.
#[derive(Default)]
pub(super) struct Facts {
    /// The tables, in schema order.
    pub tables: Vec<String>,
    /// `trajectory_meta`'s one row.
    pub trajectory_id: Option<String>,
    pub cascade_id: Option<String>,
    /// Its `source` column: the lane that wrote it (17 CLI, 1 desktop).
    pub source: Option<i64>,
    /// `trajectory_metadata_blob` "main" (CortexTrajectoryMetadata).
    pub metadata: Option<Vec<u8>>,
    /// The highest `parent_references.idx` (a row counter).
    pub last_reference: Option<i64>,
    pub steps: Vec<StepInfo>,
    /// The first USER_INPUT step with text, and the text: the index row's
    /// preview, kept once rather than with every step.
    pub first_user_text: Option<(i64, Arc<str>)>,
    /// The conversation's row of agy's index, when the stream has one.
    pub index: Option<IndexRow>,
    /// The ACP lane's `<id>.meta` sidecar is among its files.
    pub acp_meta: bool,
    /// The sidecar's text (a few bytes of JSON: `cwd`, `mode_id`).
    pub sidecar: Option<Vec<u8>>,
}

/// What one step is, for a cut and for the index row.
#[derive(Clone, Debug, Default)]
pub(super) struct StepInfo {
    pub idx: i64,
    pub kind: u64,
    /// The `status` column.
    pub status: Option<i64>,
    pub time: Option<Timestamp>,
    /// A checkpoint's title.
    pub title: Option<String>,
    /// The ids of the tool calls a planner step makes.
    pub declared: Vec<String>,
    /// The id of the tool call this step carries out.
    pub executes: Option<String>,
    /// The trajectory the step was made in (metadata 20.1).
    pub trajectory: Option<String>,
}

impl Held {
    pub fn new(id: &str, payloads: bool) -> Held {
        Held {
            id: id.to_string(),
            spool: Spool::default(),
            lines: Vec::new(),
            facts: Facts::default(),
            payloads,
            counts: Counts::default(),
            end: None,
        }
    }

    /// That the conversation arrived whole: its end record came (which
    /// [`Held::take`] checked when it came).
    pub fn check_whole(&self) -> Result<&End> {
        self.end.as_ref().ok_or_else(|| {
            Error::data(
                "it has no end record, so the stream may have been cut short (agy-dump closes each conversation with one)",
            )
        })
    }

    /// Takes one line of this conversation.
    pub fn take(&mut self, line: &[u8]) -> Result<()> {
        if self.end.is_some() {
            return Err(Error::data("a record after the conversation's end record"));
        }
        if !self.counts.note_head(line, true) {
            return Err(Error::data("not a record of the row stream"));
        }
        if let Some((_, b"end")) = line_head(line) {
            return self.take_end(&Record::parse(line)?);
        }
        // An edit that writes only steps and the index row (settle) only
        // looks at a brain file, whose text can be large: it goes out as it
        // came. One that rewrites files reads each one now, so that no
        // line it cannot read turns up halfway through writing them.
        match line_head(line) {
            Some((_, b"file")) if !self.payloads => {
                let head = &line[..line.len().min(256)];
                if memchr::memmem::find(head, b"\"dir\":\"conversations\"").is_some() {
                    // The sidecar: small, and read (agy-edit move, lane).
                    self.learn(&Record::parse(line)?)?;
                }
            }
            _ => {
                let record = Record::parse(line)?;
                if let Record::End { .. } = record {
                    return self.take_end(&record);
                }
                self.learn(&record)?;
            }
        }
        let start = self.spool.len();
        self.spool.append(line)?;
        self.spool.append(b"\n")?;
        self.lines.push(start..self.spool.len() - 1);
        Ok(())
    }

    /// Takes the end record (see [`Held::end`]).
    fn take_end(&mut self, record: &Record<'_>) -> Result<()> {
        let Record::End { end, .. } = record else {
            return Ok(());
        };
        end.check(&self.counts)?;
        self.end = Some(end.clone());
        Ok(())
    }

    fn learn(&mut self, record: &Record<'_>) -> Result<()> {
        let facts = &mut self.facts;
        match record {
            Record::Schema {
                object_type, name, ..
            } if object_type == "table" => facts.tables.push(name.to_string()),
            Record::Row { table, row, .. } => match &**table {
                "trajectory_meta" => {
                    facts.trajectory_id = text(row, "trajectory_id");
                    facts.cascade_id = text(row, "cascade_id");
                    facts.source = row.get("source").and_then(|c| c.as_i64());
                }
                "trajectory_metadata_blob" => {
                    let main = text(row, "id").is_none_or(|id| id == "main");
                    if main {
                        facts.metadata = blob(row, "data")?;
                    }
                }
                "parent_references" => {
                    if let Some(idx) = row.get("idx").and_then(|c| c.as_i64()) {
                        facts.last_reference =
                            Some(facts.last_reference.map_or(idx, |l| l.max(idx)));
                    }
                }
                "steps" => {
                    let step = self.step(row)?;
                    let facts = &mut self.facts;
                    if let Some(last) = facts.steps.last() {
                        if step.idx <= last.idx {
                            return Err(Error::data(format!(
                                "step {} comes after step {}: a row stream holds a conversation's steps in idx order",
                                step.idx, last.idx
                            )));
                        }
                    }
                    facts.steps.push(step);
                }
                _ => {}
            },
            Record::Index {
                user_version, row, ..
            } => facts.index = Some(IndexRow::from_record(*user_version, row)),
            Record::File { dir, content, .. }
                if *dir == crate::stream::record::FileDir::Conversations =>
            {
                facts.acp_meta = true;
                facts
                    .sidecar
                    .get_or_insert_with(Vec::new)
                    .extend_from_slice(&content.to_bytes()?);
            }
            _ => {}
        }
        Ok(())
    }

    /// What a steps row says: its columns, and with `payloads` what its
    /// Step blob says too.
    fn step(&mut self, row: &RowCells<'_>) -> Result<StepInfo> {
        let idx = row
            .get("idx")
            .and_then(|c| c.as_i64())
            .ok_or_else(|| Error::data("steps row has no integer idx"))?;
        let mut info = StepInfo {
            idx,
            status: row.get("status").and_then(|c| c.as_i64()),
            ..StepInfo::default()
        };
        if !self.payloads {
            // A step settle will rewrite is read now, so that one it cannot
            // read is refused before any of the conversation is written.
            if info
                .status
                .and_then(|s| u64::try_from(s).ok())
                .is_some_and(crate::agy::steps::is_in_flight)
            {
                let readable = match row.get("step_payload") {
                    Some(JsonCell::Plain(hex) | JsonCell::Blob(hex)) => {
                        hex.len() % 2 == 0 && is_hex_digits(hex.as_bytes())
                    }
                    _ => true,
                };
                if !readable {
                    return Err(Error::data(format!(
                        "step {idx}: column step_payload: bad hex"
                    )));
                }
            }
            return Ok(info);
        }
        let in_step = |e: Error| e.context(format!("step {idx}"));
        let payload = blob(row, "step_payload")
            .map_err(in_step)?
            .unwrap_or_default();
        let metadata_column = blob(row, "metadata").map_err(in_step)?.unwrap_or_default();
        let type_column = row.get("step_type").and_then(|c| c.as_i64());
        let facts = StepFacts::of_step(&payload, type_column, &metadata_column);
        info.kind = facts.kind;
        info.time = facts.time;
        info.title = facts.title;
        if let Some(text) = facts.user_text {
            if self.facts.first_user_text.is_none() {
                self.facts.first_user_text = Some((idx, text));
            }
        }
        let step = Message::new(&payload);
        let metadata = step
            .get_message(field::step::METADATA)
            .unwrap_or(Message::new(&metadata_column));
        if info.kind == kind::PLANNER_RESPONSE {
            if let Some(planner) = step.get_message(field::step::PLANNER_RESPONSE) {
                info.declared = planner
                    .repeated_messages(field::planner::TOOL_CALLS)
                    .filter_map(|call| call.get_nonempty_str(field::tool_call::ID))
                    .map(|id| id.into_owned())
                    .collect();
            }
        }
        info.executes = metadata
            .get_message(field::metadata::TOOL_CALL)
            .and_then(|call| call.get_nonempty_str(field::tool_call::ID))
            .map(|id| id.into_owned());
        info.trajectory = metadata
            .get_message(field::metadata::SOURCE_STEP_INFO)
            .and_then(|s| s.get_nonempty_str(field::metadata::SOURCE_TRAJECTORY_ID))
            .map(|id| id.into_owned());
        Ok(info)
    }

    /// The lines, in order, one at a time.
    pub fn replay(&mut self, mut each: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let mut line = Vec::new();
        for range in std::mem::take(&mut self.lines) {
            line.clear();
            self.spool.read_range(range, &mut line)?;
            each(&line)?;
        }
        Ok(())
    }

    /// Writes every line as it came.
    pub fn copy(&mut self, out: &mut Output) -> Result<()> {
        let Some(first) = self.lines.first() else {
            return Ok(());
        };
        let whole = first.start..self.spool.len();
        self.lines.clear();
        self.spool.copy_range(whole, out)?;
        out.end_record()
    }

    /// The index summary of the steps up to `keep_through` (all of them
    /// when `None`), by agy-decode's rules.
    pub fn summary(&self, keep_through: Option<i64>) -> Summary {
        let facts = &self.facts;
        let mut summarizer = Summarizer::new();
        if let Some(metadata) = &facts.metadata {
            summarizer.trajectory_metadata(metadata);
        }
        for step in &facts.steps {
            if keep_through.is_some_and(|k| step.idx > k) {
                break;
            }
            let user_text = facts
                .first_user_text
                .as_ref()
                .filter(|(idx, _)| *idx == step.idx)
                .map(|(_, text)| text.clone());
            summarizer.note(
                step.idx,
                &StepFacts {
                    kind: step.kind,
                    time: step.time,
                    user_text,
                    title: step.title.clone(),
                },
            );
        }
        Summary {
            trajectory_source: facts.source,
            ..summarizer.finish()
        }
    }
}

fn text(row: &RowCells<'_>, column: &str) -> Option<String> {
    row.get(column)
        .and_then(|c| c.as_text())
        .map(str::to_string)
}

fn blob(row: &RowCells<'_>, column: &str) -> Result<Option<Vec<u8>>> {
    row.get(column)
        .map(|c| c.blob_bytes())
        .transpose()
        .map(Option::flatten)
        .map_err(|e| e.context(format!("column {column}")))
}
