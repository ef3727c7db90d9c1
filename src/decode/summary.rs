//! What a conversation says of itself for its index row: a
//! [`Summary`] by the rules of agy-decode's `meta` record (title, workspace,
//! lineage), plus what only the index keeps (step count, the last user
//! input, the last step's time).
//!
//! What each step adds is its [`StepFacts`], gathered in a [`Tally`] by
//! idx rather than by arrival, so tallies of steps written in different
//! places (agy-encode `--onto` keeps some steps and writes new ones) add up
//! to what one pass over the steps in order would give. [`Summarizer`] is
//! fed whole steps (agy-encode); the [`super::Decoder`] keeps a tally of
//! the steps it decodes ([`super::Decoder::summary`]); [`of_database`]
//! reads a database's metadata and only the steps that decide something
//! (agy-pack `--reindex`, agy-ls), not every step: the USER_INPUT and
//! CHECKPOINT steps through agy's `step_type` index, and the last steps.

use std::collections::btree_map::{BTreeMap, Entry};
use std::sync::Arc;

use crate::agy::steps::{field, kind};
use crate::agy::wire;
use crate::error::Result;
use crate::store::index::Summary;
use crate::store::sqlite::Source;
use crate::time::Timestamp;

use super::conversation::Conversation;
use super::step::{user_text, StepView};
use crate::stream::message::title_from_text;

/// What one step tells the index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepFacts {
    /// The step's kind, as agy-decode reads it.
    pub kind: u64,
    pub time: Option<Timestamp>,
    /// A USER_INPUT step's text, when it has one: shared, not copied, by
    /// the tallies that keep it (a user text may be tens of MB, and
    /// agy-encode --onto keeps the original's tally and the edited one).
    pub user_text: Option<Arc<str>>,
    /// A CHECKPOINT step's conversation title (or user intent).
    pub title: Option<String>,
}

impl StepFacts {
    pub(super) fn of(view: &StepView<'_>) -> StepFacts {
        let mut facts = StepFacts {
            kind: view.kind,
            time: view.timestamp(),
            ..StepFacts::default()
        };
        match view.kind {
            kind::USER_INPUT => {
                let text = user_text(view.payload());
                facts.user_text = (!text.is_empty()).then(|| Arc::from(text));
            }
            kind::CHECKPOINT => {
                let checkpoint = view.payload();
                facts.title = checkpoint
                    .get_nonempty_str(field::checkpoint::CONVERSATION_TITLE)
                    .or_else(|| checkpoint.get_nonempty_str(field::checkpoint::USER_INTENT))
                    .map(|t| t.into_owned());
            }
            _ => {}
        }
        facts
    }

    /// The facts of a step its writer built as `kind`, one that says
    /// nothing more than its kind and time (not a USER_INPUT or a
    /// CHECKPOINT): the time from its `metadata`, as [`StepFacts::of_step`]
    /// reads it, without walking the step.
    pub fn of_built(kind: u64, metadata: &[u8]) -> StepFacts {
        debug_assert!(!matches!(kind, kind::USER_INPUT | kind::CHECKPOINT));
        StepFacts {
            kind,
            time: wire::Message::new(metadata)
                .get_message(field::metadata::CREATED_AT)
                .and_then(super::read_timestamp),
            ..StepFacts::default()
        }
    }

    /// The facts of a Step blob, with the `step_type` and `metadata`
    /// columns for a blob that lacks those fields.
    pub fn of_step(step: &[u8], type_column: Option<i64>, metadata: &[u8]) -> StepFacts {
        let step = wire::Message::new(step);
        let metadata = step
            .get_message(field::step::METADATA)
            .unwrap_or(wire::Message::new(metadata));
        StepFacts::of(&StepView::new(step, metadata, None, type_column, None))
    }
}

/// The facts of a conversation's steps, each kept with the idx of the step
/// it came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub count: i64,
    /// The first user text (by idx).
    first_text: Option<(i64, Arc<str>)>,
    /// The last USER_INPUT step and its time.
    last_input: Option<(i64, Option<Timestamp>)>,
    /// The last step that has a time, and the time.
    last_time: Option<(i64, Timestamp)>,
    /// The last checkpoint that names the conversation.
    title: Option<(i64, String)>,
}

/// Puts step `idx`'s value in `slot` when there is nothing yet, or when
/// `later` says it wins; the value is made only then, so a user text that
/// loses is never copied.
fn keep<T>(slot: &mut Option<(i64, T)>, idx: i64, later: bool, value: impl FnOnce() -> T) {
    let wins = match slot {
        None => true,
        Some((at, _)) if later => idx >= *at,
        Some((at, _)) => idx < *at,
    };
    if wins {
        *slot = Some((idx, value()));
    }
}

impl Tally {
    /// Counts step `idx` and keeps what it decides.
    pub fn note(&mut self, idx: i64, facts: &StepFacts) {
        self.count += 1;
        self.look(idx, facts);
    }

    fn look(&mut self, idx: i64, facts: &StepFacts) {
        if let Some(time) = facts.time {
            keep(&mut self.last_time, idx, true, || time);
        }
        if facts.kind == kind::USER_INPUT {
            keep(&mut self.last_input, idx, true, || facts.time);
            if let Some(text) = &facts.user_text {
                keep(&mut self.first_text, idx, false, || text.clone());
            }
        }
        if let Some(title) = &facts.title {
            keep(&mut self.title, idx, true, || title.clone());
        }
    }

    /// Adds the steps another tally counted (none of them counted here).
    pub fn absorb(&mut self, other: Tally) {
        self.count += other.count;
        if let Some((idx, text)) = other.first_text {
            keep(&mut self.first_text, idx, false, || text);
        }
        if let Some((idx, time)) = other.last_input {
            keep(&mut self.last_input, idx, true, || time);
        }
        if let Some((idx, time)) = other.last_time {
            keep(&mut self.last_time, idx, true, || time);
        }
        if let Some((idx, title)) = other.title {
            keep(&mut self.title, idx, true, || title);
        }
    }

    /// The summary of these steps in a conversation whose trajectory
    /// metadata `conv` read.
    pub(super) fn summary(self, conv: &Conversation) -> Summary {
        let preview = self.first_text.map(|(_, t)| t.to_string());
        Summary {
            title: self
                .title
                .map(|(_, t)| t)
                .or_else(|| preview.as_deref().map(title_from_text)),
            preview,
            step_count: self.count,
            created: conv.created_at,
            last_step_time: self.last_time.map(|(_, t)| t),
            cwd: conv.cwd.clone(),
            branch: conv.git_branch.clone(),
            parent_conversation_id: conv.parent_conversation_id.clone(),
            project_id: conv.project_id.clone(),
            last_user_input: self.last_input,
            trajectory_source: None,
            raw_summary: None,
        }
    }

    /// This tally's summary with what a conversation's trajectory says
    /// (workspace, creation, lineage) taken from `other`.
    pub fn summary_like(self, other: &Summary) -> Summary {
        let conv = Conversation {
            created_at: other.created,
            cwd: other.cwd.clone(),
            git_branch: other.branch.clone(),
            parent_conversation_id: other.parent_conversation_id.clone(),
            project_id: other.project_id.clone(),
            ..Conversation::default()
        };
        self.summary(&conv)
    }
}

/// Builds a [`Summary`] from a conversation's steps and its trajectory
/// metadata.
#[derive(Default)]
pub struct Summarizer {
    /// The trajectory metadata's fields, read by agy-decode's own reader.
    conv: Conversation,
    tally: Tally,
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
        self.tally
            .note(idx, &StepFacts::of_step(step, type_column, metadata));
    }

    /// One step, by facts already read from it. Counts it.
    pub fn note(&mut self, idx: i64, facts: &StepFacts) {
        self.tally.note(idx, facts);
    }

    /// The facts of the steps so far, leaving none here.
    pub fn take_tally(&mut self) -> Tally {
        std::mem::take(&mut self.tally)
    }

    pub fn finish(self) -> Summary {
        self.tally.summary(&self.conv)
    }
}

/// The summary of a conversation database, from its metadata and the
/// steps that decide something (see the module documentation).
///
/// Each step's facts are read from its row where SQLite holds it, and only
/// they are kept: a copy of each chosen step's blob, kept to the end, was
/// the peak of agy-pack's memory on a conversation whose first user text
/// was 50 MB (the 100 MB step copied once more as the index row was made).
pub fn of_database(source: &Source) -> Result<Summary> {
    let conn = source.connection();
    let mut summarizer = Summarizer::new();
    if let Some(blob) = source.trajectory_metadata() {
        summarizer.trajectory_metadata(&blob);
    }
    // By idx: in step order, and a step two queries choose is read once.
    let mut chosen: BTreeMap<i64, StepFacts> = BTreeMap::new();
    let columns = "idx, step_payload, step_type, metadata";
    fn blob_or_empty<'r>(row: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r [u8]> {
        Ok(match row.get_ref(i)? {
            rusqlite::types::ValueRef::Blob(b) => b,
            _ => &[],
        })
    }
    let mut read = |sql: &str, limit: Option<usize>| -> Result<()> {
        let mut stmt = conn.prepare(sql)?;
        let mut rows = stmt.query([])?;
        let mut n = 0;
        while let Some(row) = rows.next()? {
            let idx: Option<i64> = row.get(0).ok();
            let Some(idx) = idx else { continue };
            if let Entry::Vacant(slot) = chosen.entry(idx) {
                let (step, metadata) = (blob_or_empty(row, 1)?, blob_or_empty(row, 3)?);
                slot.insert(StepFacts::of_step(step, row.get(2).ok(), metadata));
            }
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
    for (idx, facts) in &chosen {
        summarizer.tally.look(*idx, facts);
    }
    summarizer.tally.count = conn.query_row("SELECT count(*) FROM steps", [], |r| r.get(0))?;
    Ok(Summary {
        trajectory_source: source.trajectory_source().ok().flatten(),
        ..summarizer.finish()
    })
}

/// [`of_database`] with the `raw_summary` an index at `user_version` 3
/// holds (`crate::store::side::derive`), for the writers of index rows
/// (agy-ls, which only reads rows, does not pay for it).
pub fn of_database_with_raw(source: &Source) -> Result<Summary> {
    let mut summary = of_database(source)?;
    let raw = crate::store::side::derive::Facts::of_database(source).summary(&summary);
    summary.raw_summary = Some(raw);
    Ok(summary)
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

/// The conversation `id` was forked from, as agy-decode's `forked_from`
/// names it: the newest FORK or SUBAGENT_FORK reference of its
/// `parent_references` that names another conversation.
pub fn forked_from(source: &Source, id: &str) -> Result<Option<String>> {
    let has = source
        .schema()
        .iter()
        .any(|o| o.object_type == "table" && o.name == "parent_references");
    if !has {
        return Ok(None);
    }
    let mut conv = Conversation {
        id: id.to_string(),
        cascade_id: Some(id.to_string()),
        ..Conversation::default()
    };
    let mut stmt = source
        .connection()
        .prepare("SELECT data FROM parent_references ORDER BY idx")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        if let rusqlite::types::ValueRef::Blob(data) = row.get_ref(0)? {
            conv.read_reference(data);
        }
    }
    Ok(conv.forked_from().and_then(|fork| fork.conversation_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(kind: u64, seconds: i64, text: Option<&str>, title: Option<&str>) -> StepFacts {
        StepFacts {
            kind,
            time: Some(Timestamp { seconds, nanos: 0 }),
            user_text: text.map(Arc::from),
            title: title.map(str::to_owned),
        }
    }

    #[test]
    fn tallies_in_any_order_add_up_to_one_in_order() {
        let steps = [
            (0, facts(kind::USER_INPUT, 10, Some("first"), None)),
            (1, facts(kind::PLANNER_RESPONSE, 11, None, None)),
            (2, facts(kind::CHECKPOINT, 12, None, Some("Named"))),
            (3, facts(kind::USER_INPUT, 13, Some("second"), None)),
            (4, facts(kind::PLANNER_RESPONSE, 14, None, None)),
        ];
        let mut in_order = Tally::default();
        for (idx, f) in &steps {
            in_order.note(*idx, f);
        }
        let (mut odd, mut even) = (Tally::default(), Tally::default());
        for (idx, f) in steps.iter().rev() {
            match idx % 2 {
                0 => even.note(*idx, f),
                _ => odd.note(*idx, f),
            }
        }
        even.absorb(odd);
        assert_eq!(even, in_order);
        let summary = in_order.summary_like(&Summary::default());
        assert_eq!(summary.preview.as_deref(), Some("first"));
        assert_eq!(summary.title.as_deref(), Some("Named"));
        assert_eq!(summary.step_count, 5);
        assert_eq!(
            summary.last_user_input,
            Some((
                3,
                Some(Timestamp {
                    seconds: 13,
                    nanos: 0
                })
            ))
        );
        assert_eq!(
            summary.last_step_time,
            Some(Timestamp {
                seconds: 14,
                nanos: 0
            })
        );
    }
}
