//! Reading what each generation consumed, from a conversation's databases
//! or its row stream, each generation once.
//!
//! Per conversation, two sources: its `gen_metadata` rows (the
//! ChatModelMetadata at field 1: usage at 4, the model's name at 19; the
//! steps it made at field 2) and its steps' metadata (usage at 9, the time
//! at 1). A generation is counted from its row; its steps' own usage must
//! agree with it, and a disagreement is said (it is the row's that is
//! counted, as agy's own `/stats`-like readers count). A step whose usage
//! no row covers (a conversation agy-encode made before it wrote rows, a
//! row lost) is counted from the step. A generation's time is its first
//! step's; without one, the row's own start time (agy up to 1.1.17), else
//! none (counted, and said).
//!
//! Once: a fork, a lane copy and an edited copy carry their parent's rows
//! byte for byte, so each generation is known by the response id agy gives
//! it (usage field 11), else by the SHA-256 of what it was read from; a
//! second sight of one is counted in [`Collected::repeated`], not in the
//! totals.

use std::collections::{BTreeMap, HashMap, HashSet};

use sha2::{Digest, Sha256};

use crate::agy::steps::field::{self, generator, metadata, usage};
use crate::agy::wire::{self, Message, Value};
use crate::decode::read_timestamp;
use crate::error::Result;
use crate::store::dump::Target;
use crate::store::index::Reader;
use crate::store::sqlite::{agy_columns, open_tables, OpenError, Tables};
use crate::stream::io::Lines;
use crate::stream::record::{Cell, Column, JsonCell, Record};
use crate::time::Timestamp;

use super::{Conversation, Generation, Tokens};

/// ChatModelMetadata's start time (field 9, its field 4), which agy wrote
/// up to 1.1.17 (agy-store(5), USAGE).
const CHAT_MODEL_TIMING: u32 = 9;
const TIMING_START: u32 = 4;

/// What was read.
#[derive(Debug, Default)]
pub struct Collected {
    /// Each generation once, in the order met.
    pub generations: Vec<Generation>,
    /// Each conversation read, in the order met.
    pub conversations: Vec<Conversation>,
    /// Generations met again (in a fork, a copy): not counted again.
    pub repeated: u64,
    /// Generations whose row and steps disagree on what they consumed.
    pub disagreements: u64,
    /// Usage that could not be read (a damaged row): not counted.
    pub unreadable: u64,
    /// Generations with no time: counted in totals, in no day.
    pub undated: u64,
    /// Conversations that could not be read at all.
    pub failed: u64,
}

/// Reads conversations into a [`Collected`], each generation once.
pub struct Collector<'w> {
    seen: HashSet<[u8; 32]>,
    pub collected: Collected,
    warn: &'w mut dyn FnMut(String),
}

/// What one conversation holds that usage is read from.
#[derive(Default)]
struct Rows {
    id: String,
    /// `gen_metadata` rows: idx and data.
    generations: Vec<(i64, Vec<u8>)>,
    /// Each step's metadata, by idx.
    steps: BTreeMap<i64, Vec<u8>>,
    /// The trajectory metadata's creation time.
    created: Option<Timestamp>,
    title: Option<String>,
    project: Option<String>,
}

impl<'w> Collector<'w> {
    pub fn new(warn: &'w mut dyn FnMut(String)) -> Collector<'w> {
        Collector {
            seen: HashSet::new(),
            collected: Collected::default(),
            warn,
        }
    }

    /// Reads the database of `target`: its `gen_metadata` rows and its
    /// steps' metadata, nothing more; the title and project from the
    /// root's index row when `index` has one, else from the metadata.
    pub fn database(&mut self, target: &Target, index: Option<&Reader>) {
        let read = || -> std::result::Result<Rows, OpenError> {
            let source = open_tables(&target.db)?;
            rows_of_database(&*source, index).map_err(OpenError::Failed)
        };
        match read() {
            Ok(rows) => self.conversation(rows),
            Err(OpenError::NotAgy(why)) => (self.warn)(format!(
                "{}: skipped, not an agy conversation database ({why})",
                target.db.display()
            )),
            Err(OpenError::Failed(e)) => {
                self.collected.failed += 1;
                (self.warn)(format!(
                    "{}: {e} (its usage is not counted)",
                    target.db.display()
                ));
            }
        }
    }

    /// Reads a row stream: the records usage is read from, the others
    /// passed over. A conversation the stream does not show whole is still
    /// counted, and said.
    pub fn stream(&mut self, lines: &mut Lines) -> Result<()> {
        let mut current: Option<Rows> = None;
        let mut line = Vec::new();
        while lines.next_line_into(&mut line)? {
            let place = lines.place();
            let record = Record::parse(&line).map_err(|e| e.context(&place))?;
            if current
                .as_ref()
                .is_some_and(|c| c.id != record.conversation())
            {
                self.conversation(current.take().expect("just checked"));
            }
            let rows = current.get_or_insert_with(|| Rows {
                id: record.conversation().to_string(),
                ..Rows::default()
            });
            match &record {
                Record::Row { table, row, .. } => {
                    let blob = |column: &str| -> Result<Option<Vec<u8>>> {
                        match row.get(column) {
                            Some(cell) => cell
                                .blob_bytes()
                                .map_err(|e| e.context(format!("{place}: column {column}"))),
                            None => Ok(None),
                        }
                    };
                    let idx = row.get("idx").and_then(JsonCell::as_i64);
                    match (&**table, idx) {
                        ("gen_metadata", Some(idx)) => {
                            if let Some(data) = blob("data")? {
                                rows.generations.push((idx, data));
                            }
                        }
                        ("steps", Some(idx)) => {
                            rows.steps.insert(idx, blob("metadata")?.unwrap_or_default());
                        }
                        ("trajectory_metadata_blob", _) => {
                            let main = row.get("id").and_then(JsonCell::as_text).is_none_or(|i| i == "main");
                            if let (true, Some(data)) = (main, blob("data")?) {
                                trajectory(&mut *rows, &data);
                            }
                        }
                        _ => {}
                    }
                }
                Record::Index { row, .. } => {
                    if let Some(title) = row.get("title").and_then(JsonCell::as_text) {
                        rows.title = Some(title.to_string()).filter(|t| !t.is_empty());
                    }
                }
                Record::End { end, .. } if !end.is_whole() => (self.warn)(format!(
                    "{place}: conversation {} could not all be read ({}); its usage is counted from what was",
                    rows.id,
                    end.error.as_deref().unwrap_or("")
                )),
                _ => {}
            }
        }
        if let Some(rows) = current {
            self.conversation(rows);
        }
        Ok(())
    }

    /// Counts one conversation's generations.
    fn conversation(&mut self, rows: Rows) {
        // The steps that carry each response id's usage.
        let mut by_response: HashMap<String, Vec<i64>> = HashMap::new();
        for (idx, meta) in &rows.steps {
            let id = Message::new(meta)
                .get_message(metadata::MODEL_USAGE)
                .and_then(|u| u.get_nonempty_str(usage::RESPONSE_ID));
            if let Some(id) = id {
                by_response.entry(id.into_owned()).or_default().push(*idx);
            }
        }
        let mut covered: HashSet<i64> = HashSet::new();
        for (idx, data) in &rows.generations {
            let Some(read) = self.generation_row(&rows, &by_response, *idx, data) else {
                continue;
            };
            covered.extend(read.steps.iter().copied());
            self.count(
                read.key,
                Generation {
                    conversation: rows.id.clone(),
                    time: read.time,
                    model: read.model,
                    tokens: read.tokens,
                },
            );
        }
        // Steps whose usage no row covers.
        for (idx, meta) in &rows.steps {
            if covered.contains(idx) {
                continue;
            }
            let meta_message = Message::new(meta);
            let Some(usage_bytes) = meta_message.get_bytes(metadata::MODEL_USAGE) else {
                continue;
            };
            let Some((tokens, response_id, model_enum)) = read_usage(usage_bytes) else {
                self.unreadable(&rows.id, format!("step {idx}'s usage"));
                continue;
            };
            let model = meta_message
                .get_message(metadata::MODEL_INFO)
                .and_then(|info| info.get_nonempty_str(metadata::MODEL_INFO_NAME))
                .map(|name| name.into_owned())
                .unwrap_or_else(|| model_name(model_enum));
            let time = step_time(meta).or(rows.created);
            self.count(
                key_of(response_id.as_deref(), usage_bytes),
                Generation {
                    conversation: rows.id.clone(),
                    time,
                    model,
                    tokens,
                },
            );
        }
        self.collected.conversations.push(Conversation {
            id: rows.id,
            title: rows.title,
            project: rows.project,
        });
    }

    /// Reads one `gen_metadata` row, reconciled with its steps' usage;
    /// `None` when it holds no usage (or none that reads).
    fn generation_row(
        &mut self,
        rows: &Rows,
        by_response: &HashMap<String, Vec<i64>>,
        idx: i64,
        data: &[u8],
    ) -> Option<Read> {
        let row = Message::new(data);
        let chat = row.get_message(generator::CHAT_MODEL);
        let usage_bytes = chat.and_then(|c| c.get_bytes(generator::USAGE));
        let (chat, usage_bytes) = match (chat, usage_bytes) {
            (Some(chat), Some(bytes)) => (chat, bytes),
            _ if wire::damage(data).is_some() => {
                self.unreadable(&rows.id, format!("gen_metadata row {idx}"));
                return None;
            }
            // A generation that says nothing of what it consumed.
            _ => return None,
        };
        let Some((tokens, response_id, model_enum)) = read_usage(usage_bytes) else {
            self.unreadable(&rows.id, format!("gen_metadata row {idx}'s usage"));
            return None;
        };
        // Its steps: those the row names, and those whose usage carries
        // its response id (a row need not name them).
        let mut steps: Vec<i64> = row
            .repeated_varints(generator::STEP_INDICES)
            .into_iter()
            .filter_map(|i| i64::try_from(i).ok())
            .collect();
        for idx in response_id
            .as_ref()
            .and_then(|id| by_response.get(id))
            .into_iter()
            .flatten()
        {
            if !steps.contains(idx) {
                steps.push(*idx);
            }
        }
        // The steps' own usage, where they carry one, is the same.
        for step in &steps {
            let step_usage = rows
                .steps
                .get(step)
                .and_then(|meta| Message::new(meta).get_bytes(metadata::MODEL_USAGE))
                .and_then(read_usage);
            if let Some((said, said_id, _)) = step_usage {
                let differs = counted(&said) != counted(&tokens)
                    || (said_id.is_some() && response_id.is_some() && said_id != response_id);
                if differs {
                    self.collected.disagreements += 1;
                    (self.warn)(format!(
                        "conversation {}: gen_metadata row {idx} and step {step} disagree on what the generation consumed \
                         (row: {}; step: {}); the row's is counted",
                        rows.id,
                        describe(&tokens),
                        describe(&said)
                    ));
                }
            }
        }
        let time = steps
            .iter()
            .filter_map(|s| rows.steps.get(s).and_then(|m| step_time(m)))
            .min_by_key(|t| (t.seconds, t.nanos))
            .or_else(|| {
                chat.get_message(CHAT_MODEL_TIMING)
                    .and_then(|t| t.get_message(TIMING_START))
                    .and_then(read_timestamp)
            })
            .or(rows.created);
        let model = chat
            .get_nonempty_str(generator::RESPONSE_MODEL)
            .map(|m| m.into_owned())
            .unwrap_or_else(|| model_name(model_enum));
        Some(Read {
            key: key_of(response_id.as_deref(), data),
            steps,
            time,
            model,
            tokens,
        })
    }

    fn count(&mut self, key: [u8; 32], generation: Generation) {
        if !self.seen.insert(key) {
            self.collected.repeated += 1;
            return;
        }
        if generation.time.is_none() {
            self.collected.undated += 1;
            (self.warn)(format!(
                "conversation {}: a generation of {} has no time; it is in the totals, in no period",
                generation.conversation, generation.model
            ));
        }
        self.collected.generations.push(generation);
    }

    fn unreadable(&mut self, conversation: &str, what: String) {
        self.collected.unreadable += 1;
        (self.warn)(format!(
            "conversation {conversation}: {what} cannot be read; not counted"
        ));
    }
}

/// A generation row read.
struct Read {
    key: [u8; 32],
    steps: Vec<i64>,
    time: Option<Timestamp>,
    model: String,
    tokens: Tokens,
}

/// The rows usage is read from: `gen_metadata`, the steps' first columns
/// up to their metadata (from the database's files, agy-dump's reader,
/// where it takes them: no step's payload is read), the trajectory
/// metadata.
fn rows_of_database(source: &dyn Tables, index: Option<&Reader>) -> Result<Rows> {
    let mut rows = Rows {
        id: source.cascade_id()?.unwrap_or_default(),
        ..Rows::default()
    };
    let has = |table: &str| {
        source
            .schema()
            .iter()
            .any(|o| o.object_type == "table" && o.name == table)
    };
    let at = |columns: &[Column], name: &str| columns.iter().position(|c| c.name == name);
    if has("gen_metadata") {
        source.each_row("gen_metadata", &mut |columns, cells| {
            if let (Some(Cell::Integer(idx)), Some(Cell::Blob(data))) = (
                at(columns, "idx").map(|i| &cells[i]),
                at(columns, "data").map(|i| &cells[i]),
            ) {
                rows.generations.push((*idx, data.to_vec()));
            }
            Ok(())
        })?;
    }
    // agy's steps table holds its metadata fifth, its payload after it.
    let prefix = agy_columns("steps")
        .iter()
        .position(|c| c.name == "metadata")
        .map_or(usize::MAX, |i| i + 1);
    rows.steps = match steps_metadata(source, prefix)? {
        Some(steps) => steps,
        // Not agy's column order: the whole rows, then.
        None => steps_metadata(source, usize::MAX)?.unwrap_or_default(),
    };
    if has("trajectory_metadata_blob") {
        let mut main = None;
        source.each_row("trajectory_metadata_blob", &mut |columns, cells| {
            let id = at(columns, "id").map(|i| &cells[i]);
            let is_main = match id {
                Some(Cell::Text(t)) => &**t == b"main",
                _ => true,
            };
            if let (true, None, Some(Cell::Blob(data))) =
                (is_main, &main, at(columns, "data").map(|i| &cells[i]))
            {
                main = Some(data.to_vec());
            }
            Ok(())
        })?;
        if let Some(data) = main {
            trajectory(&mut rows, &data);
        }
    }
    if let Some(index) = index {
        if let Some(row) = index.row(&rows.id)? {
            rows.title = row
                .get("title")
                .and_then(JsonCell::as_text)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
        }
    }
    source.check_unchanged()?;
    Ok(rows)
}

/// Each step's metadata, by idx, from the steps' first `columns`
/// columns; `None` when those do not hold the metadata.
fn steps_metadata(source: &dyn Tables, columns: usize) -> Result<Option<BTreeMap<i64, Vec<u8>>>> {
    let mut steps = BTreeMap::new();
    let mut found = true;
    source.each_row_prefix("steps", columns, &mut |names, cells| {
        let at = |name: &str| names.iter().position(|c| c.name == name).map(|i| &cells[i]);
        let Some(Cell::Integer(idx)) = at("idx") else {
            return Ok(());
        };
        let meta = match at("metadata") {
            Some(Cell::Blob(meta)) => meta.to_vec(),
            Some(_) => Vec::new(),
            None => {
                found = false;
                Vec::new()
            }
        };
        steps.insert(*idx, meta);
        Ok(())
    })?;
    Ok(found.then_some(steps))
}

/// The trajectory metadata's creation time and first workspace.
fn trajectory(rows: &mut Rows, data: &[u8]) {
    let meta = Message::new(data);
    rows.created = meta
        .get_message(field::trajectory::CREATED_AT)
        .and_then(read_timestamp);
    rows.project = crate::agy::project::workspace_uris(data)
        .into_iter()
        .next()
        .map(|uri| crate::agy::uri::uri_to_path(&uri));
}

/// A step's time, from its metadata.
fn step_time(meta: &[u8]) -> Option<Timestamp> {
    Message::new(meta)
        .get_message(metadata::CREATED_AT)
        .and_then(read_timestamp)
}

/// A ModelUsageStats: its counts, its response id and its model enum;
/// `None` when it does not read whole.
fn read_usage(bytes: &[u8]) -> Option<(Tokens, Option<String>, Option<u64>)> {
    if wire::damage(bytes).is_some() {
        return None;
    }
    // Every field in one pass (a pass a field was eight walks of each
    // usage, read for each step and each generation row).
    let [model, input, output, cache_write, cache_read, thinking, response, response_id] =
        Message::new(bytes).last_of([
            usage::MODEL,
            usage::INPUT_TOKENS,
            usage::OUTPUT_TOKENS,
            usage::CACHE_WRITE_TOKENS,
            usage::CACHE_READ_TOKENS,
            usage::THINKING_TOKENS,
            usage::RESPONSE_TOKENS,
            usage::RESPONSE_ID,
        ]);
    let varint = |value: Option<Value>| match value {
        Some(Value::Varint(v)) => Some(v),
        _ => None,
    };
    let n = |value| varint(value).unwrap_or(0);
    let tokens = Tokens {
        input: n(input),
        output: n(output),
        cache_write: n(cache_write),
        cache_read: n(cache_read),
        thinking: n(thinking),
        response: n(response),
    };
    let response_id = response_id
        .and_then(|v| v.str())
        .filter(|id| !id.is_empty())
        .map(|id| id.into_owned());
    let model = varint(model);
    Some((tokens, response_id, model))
}

/// The counts a report sums, compared between a row and its steps.
fn counted(t: &Tokens) -> [u64; 4] {
    [t.input, t.output, t.cache_write, t.cache_read]
}

fn describe(t: &Tokens) -> String {
    format!(
        "input {}, output {}, cache write {}, cache read {}",
        t.input, t.output, t.cache_write, t.cache_read
    )
}

/// A model known only by its enum.
fn model_name(model: Option<u64>) -> String {
    match model {
        Some(n) => format!("model-{n}"),
        None => "unknown".to_string(),
    }
}

/// What a generation is known by: its response id, else its bytes.
fn key_of(response_id: Option<&str>, bytes: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    match response_id {
        Some(id) => {
            hash.update(b"response id\0");
            hash.update(id.as_bytes());
        }
        None => {
            hash.update(b"bytes\0");
            hash.update(bytes);
        }
    }
    hash.finalize().into()
}
