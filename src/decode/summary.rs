//! What a conversation says of itself for its index row: a
//! [`Summary`] by the rules of agy-decode's `meta` record (title, workspace,
//! lineage), plus what only the index keeps (step count, the last user
//! input, the last step's time).
//!
//! [`Summarizer`] is fed steps as they go by (agy-encode, which writes
//! them); [`of_database`] reads a database's metadata and only the steps
//! that decide something (agy-pack `--reindex`, agy-ls), not every step:
//! the USER_INPUT and CHECKPOINT steps through agy's `step_type` index, and
//! the last step.

use crate::agy::steps::{field, kind};
use crate::agy::wire;
use crate::error::Result;
use crate::store::index::Summary;
use crate::store::sqlite::Source;

use super::conversation::Conversation;
use super::step::{user_text, StepView};
use super::title_from_text;

/// Builds a [`Summary`] from a conversation's steps, given in idx order.
#[derive(Default)]
pub struct Summarizer {
    /// The trajectory metadata's fields, read by agy-decode's own reader.
    conv: Conversation,
    checkpoint_title: Option<String>,
    summary: Summary,
}

impl Summarizer {
    pub fn new() -> Summarizer {
        Summarizer::default()
    }

    /// The "main" `trajectory_metadata_blob` (CortexTrajectoryMetadata).
    pub fn trajectory_metadata(&mut self, data: &[u8]) {
        self.conv.read_trajectory_metadata(data);
    }

    /// One step: its Step blob (`step_payload`), and the `step_type` and
    /// `metadata` columns for a blob that lacks those fields. Counts it.
    pub fn step(&mut self, idx: i64, step: &[u8], type_column: Option<i64>, metadata: &[u8]) {
        self.summary.step_count += 1;
        self.look_at(idx, step, type_column, metadata);
    }

    /// Reads what a step decides without counting it ([`of_database`]
    /// counts with SQL).
    fn look_at(&mut self, idx: i64, step: &[u8], type_column: Option<i64>, metadata: &[u8]) {
        let step = wire::Message::new(step);
        let metadata = step
            .get_message(field::step::METADATA)
            .unwrap_or(wire::Message::new(metadata));
        let view = StepView::new(step, metadata, None, type_column, None);
        let time = view.timestamp();
        if time.is_some() {
            self.summary.last_step_time = time;
        }
        match view.kind {
            kind::USER_INPUT => {
                let text = user_text(view.payload());
                if !text.is_empty() && self.summary.preview.is_none() {
                    self.summary.preview = Some(text.into_owned());
                }
                self.summary.last_user_input = Some((idx, time));
            }
            kind::CHECKPOINT => {
                let checkpoint = view.payload();
                if let Some(title) = checkpoint
                    .get_nonempty_str(field::checkpoint::CONVERSATION_TITLE)
                    .or_else(|| checkpoint.get_nonempty_str(field::checkpoint::USER_INTENT))
                {
                    self.checkpoint_title = Some(title.into_owned());
                }
            }
            _ => {}
        }
    }

    /// The summary; `title` is the meta record's title when the stream
    /// says one (agy-encode writes it as a checkpoint).
    pub fn finish(self) -> Summary {
        let Summarizer {
            conv,
            checkpoint_title,
            mut summary,
        } = self;
        summary.title =
            checkpoint_title.or_else(|| summary.preview.as_deref().map(title_from_text));
        summary.created = conv.created_at;
        summary.cwd = conv.cwd;
        summary.branch = conv.git_branch;
        summary.parent_conversation_id = conv.parent_conversation_id;
        summary
    }
}

/// A step read for what it decides: idx, Step blob, `step_type` column,
/// `metadata` column.
type ChosenStep = (i64, Vec<u8>, Option<i64>, Vec<u8>);

/// The summary of a conversation database, from its metadata and the
/// steps that decide something (see the module documentation).
pub fn of_database(source: &Source) -> Result<Summary> {
    let conn = source.connection();
    let mut summarizer = Summarizer::new();
    let has = |table: &str| {
        source
            .schema()
            .iter()
            .any(|o| o.object_type == "table" && o.name == table)
    };
    if has("trajectory_metadata_blob") {
        let blob: Option<Vec<u8>> = conn
            .query_row(
                "SELECT data FROM trajectory_metadata_blob WHERE id = 'main' AND typeof(data) = 'blob'",
                [],
                |r| r.get(0),
            )
            .ok();
        if let Some(blob) = blob {
            summarizer.trajectory_metadata(&blob);
        }
    }
    // Each selected step as (idx, step blob, step_type, metadata), then
    // looked at in idx order, which gives what every step in order would.
    let mut chosen: Vec<ChosenStep> = Vec::new();
    let columns = "idx, step_payload, step_type, metadata";
    let blob_or_empty = |row: &rusqlite::Row<'_>, i: usize| -> rusqlite::Result<Vec<u8>> {
        Ok(match row.get_ref(i)? {
            rusqlite::types::ValueRef::Blob(b) => b.to_vec(),
            _ => Vec::new(),
        })
    };
    let mut read = |sql: &str, limit: Option<usize>| -> Result<()> {
        let mut stmt = conn.prepare(sql)?;
        let mut rows = stmt.query([])?;
        let mut n = 0;
        while let Some(row) = rows.next()? {
            let idx: Option<i64> = row.get(0).ok();
            let Some(idx) = idx else { continue };
            chosen.push((
                idx,
                blob_or_empty(row, 1)?,
                row.get(2).ok(),
                blob_or_empty(row, 3)?,
            ));
            n += 1;
            if limit.is_some_and(|l| n >= l) {
                break;
            }
        }
        Ok(())
    };
    read(
        &format!(
            "SELECT {columns} FROM steps WHERE step_type = {} ORDER BY idx",
            kind::USER_INPUT
        ),
        None,
    )?;
    // The latest checkpoint that names the conversation: a few at most.
    read(
        &format!(
            "SELECT {columns} FROM steps WHERE step_type = {} ORDER BY idx DESC",
            kind::CHECKPOINT
        ),
        Some(8),
    )?;
    read(
        &format!("SELECT {columns} FROM steps ORDER BY idx DESC"),
        Some(4),
    )?;
    chosen.sort_by_key(|(idx, ..)| *idx);
    chosen.dedup_by_key(|(idx, ..)| *idx);
    for (idx, step, type_column, metadata) in &chosen {
        summarizer.look_at(*idx, step, *type_column, metadata);
    }
    summarizer.summary.step_count =
        conn.query_row("SELECT count(*) FROM steps", [], |r| r.get(0))?;
    Ok(summarizer.finish())
}

/// The models that answered in a conversation, from its `gen_metadata`
/// rows (agy-decode's rule: ChatModelMetadata's response model), each
/// once, in the order they first answered.
pub fn models(source: &Source) -> Result<Vec<String>> {
    let has = source
        .schema()
        .iter()
        .any(|o| o.object_type == "table" && o.name == "gen_metadata");
    if !has {
        return Ok(Vec::new());
    }
    let mut stmt = source
        .connection()
        .prepare("SELECT data FROM gen_metadata ORDER BY idx")?;
    let mut rows = stmt.query([])?;
    let mut models: Vec<String> = Vec::new();
    while let Some(row) = rows.next()? {
        let rusqlite::types::ValueRef::Blob(data) = row.get_ref(0)? else {
            continue;
        };
        let name = wire::Message::new(data)
            .get_message(field::generator::CHAT_MODEL)
            .and_then(|m| m.get_nonempty_str(field::generator::RESPONSE_MODEL));
        if let Some(name) = name {
            if !models.iter().any(|m| *m == name) {
                models.push(name.into_owned());
            }
        }
    }
    Ok(models)
}
