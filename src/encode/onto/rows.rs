//! The rows and brain files around the steps: written after them, with
//! the new numbering and the edits applied.

use std::borrow::Cow;
use std::collections::HashSet;

use super::{Merge, Merger};
use crate::agy::brain;
use crate::agy::patch::{self, Generation};
use crate::agy::steps::field;
use crate::agy::wire;
use crate::error::{Error, Result};
use crate::store::index::IndexRow;
use crate::stream::io::Output;
use crate::stream::message::ToolInput;
use crate::stream::record::{data_cells, edit_row, write_line, CellEdit, FileContent, Record};

impl Merger {
    /// The held rows of other tables, with the step numbering applied.
    pub(super) fn write_held(&mut self, conv: &mut Merge, out: &mut Output) -> Result<()> {
        let identity = conv.is_identity();
        let mut line = Vec::new();
        let mut generation = 0i64;
        for range in std::mem::take(&mut conv.held_lines) {
            line.clear();
            conv.held.read_range(range, &mut line)?;
            if identity && conv.meta_edit.is_none() {
                write_line(out, &line)?;
                continue;
            }
            let record = Record::parse(&line).map_err(|e| self.original_error(e))?;
            let Record::Row { table, row, .. } = &record else {
                unreachable!("only rows are held")
            };
            match &**table {
                "trajectory_metadata_blob" if conv.meta_edit.is_some() => {
                    let main = row
                        .get("id")
                        .and_then(|c| c.as_text())
                        .is_none_or(|id| id == "main");
                    let edit = conv.meta_edit.as_ref().expect("checked above");
                    let edited = data_blob(row)?
                        .filter(|_| main)
                        .and_then(|data| edit.metadata(&data));
                    match edited {
                        Some(data) => {
                            write_line(out, &edit_row(&line, &[("data", CellEdit::Blob(data))])?)?
                        }
                        None => write_line(out, &line)?,
                    }
                }
                _ if identity => write_line(out, &line)?,
                "gen_metadata" => {
                    let Some(data) = data_blob(row)? else {
                        write_line(out, &line)?;
                        continue;
                    };
                    let data = match patch::generation_steps(&data, |i| conv.new_idx(i)) {
                        // Every step of this generation was deleted.
                        Generation::Gone => continue,
                        Generation::Unchanged => data,
                        Generation::Changed(data) => data,
                    };
                    let mut edits = data_cells(row, data);
                    edits.push(("idx", CellEdit::Integer(generation)));
                    generation += 1;
                    write_line(out, &edit_row(&line, &edits)?)?;
                }
                "parent_references" => {
                    let data = data_blob(row)?.unwrap_or_default();
                    let reference = wire::Message::new(&data);
                    let own = reference
                        .get_str(field::reference::CONVERSATION_ID)
                        .as_deref()
                        == Some(conv.id.as_str());
                    let step = reference.get_i64(field::reference::STEP_INDEX);
                    match (own, step) {
                        (true, Some(step)) => {
                            let new = conv.new_idx_at_or_before(step);
                            let data =
                                wire::set_varint(&data, field::reference::STEP_INDEX, new as u64);
                            write_line(out, &edit_row(&line, &[("data", CellEdit::Blob(data))])?)?;
                        }
                        _ => write_line(out, &line)?,
                    }
                }
                _ => write_line(out, &line)?,
            }
        }
        Ok(())
    }

    /// The original's index row, carried onto the edited conversation: a
    /// column whose derived value the edit changed (step count, last user
    /// input, preview, title, times) takes the new one, every other keeps
    /// its bytes, so an unedited conversation's row is the original's.
    fn write_index_row(
        &mut self,
        conv: &mut Merge,
        original: IndexRow,
        out: &mut Output,
    ) -> Result<()> {
        let before = self
            .decoder
            .summary()
            .ok_or_else(|| Error::data("an index record before the conversation's rows"))?;
        let after = conv.after.clone().summary_like(&before);
        let mut row = after.carry_into(&before, original);
        if !conv.is_identity() || !conv.text_edits.is_empty() {
            // Made anew by agy-pack from the edited steps.
            row.forget_raw_summary();
        }
        if let Some(edit) = &conv.meta_edit {
            edit.index_row(&mut row)?;
        }
        row.write(out.buf(), &conv.id);
        out.end_record()
    }

    /// The original's brain files, `steps/<idx>/` renumbered (dropped with
    /// a deleted step), spilled outputs replaced where their text was
    /// edited, and transcripts' `step_index` renumbered.
    pub(super) fn copy_files(&mut self, conv: &mut Merge, out: &mut Output) -> Result<()> {
        let identity = conv.is_identity() && conv.text_edits.is_empty();
        let mut replaced: HashSet<String> = HashSet::new();
        // A transcript being rewritten: its path and the start of a line
        // that the next part continues.
        let mut transcript: Option<(String, Vec<u8>)> = None;
        while let Some(line) = self.next_original()? {
            match crate::stream::record::line_head(&line) {
                Some((id, _)) if id != conv.id => {
                    self.peeked = Some(line);
                    break;
                }
                // Nothing to change in any file: copied unparsed (but for
                // a sidecar whose cwd an edit changes).
                Some((_, b"file"))
                    if identity
                        && conv.spill_texts.is_empty()
                        && !(conv.meta_edit.as_ref().is_some_and(|e| e.edits_sidecar())
                            && is_sidecar_line(&line)) =>
                {
                    write_line(out, &line)?;
                    continue;
                }
                _ => {}
            }
            let record = Record::parse(&line).map_err(|e| self.original_error(e))?;
            if record.conversation() != conv.id {
                self.peeked = Some(line);
                break;
            }
            if let Record::End { end, .. } = &record {
                conv.original_end = Some(self.check_original_end(end)?);
                continue;
            }
            let record = match record {
                Record::Index {
                    user_version, row, ..
                } => {
                    let original = IndexRow::from_record_owned(user_version, row);
                    drop(line);
                    self.write_index_row(conv, original, out)?;
                    continue;
                }
                // A summary counts steps the edit may have changed:
                // dropped, and agy-pack makes it anew from the steps.
                Record::Side { side, .. } => {
                    let summary = matches!(side, crate::stream::record::Side::Summary { .. });
                    let edit = conv.meta_edit.as_ref();
                    if summary && (!identity || edit.is_some_and(|e| e.adds_workspace())) {
                        continue;
                    }
                    match edit.and_then(|e| e.side(&side)) {
                        Some(moved) => {
                            moved.write(out.buf(), &conv.id);
                            out.end_record()?;
                        }
                        None => write_line(out, &line)?,
                    }
                    continue;
                }
                record => record,
            };
            let Record::File {
                path,
                append,
                content,
                dir,
                ..
            } = &record
            else {
                return Err(self.original_error(Error::data(
                    "a row after the conversation's files (the --onto stream must be agy-dump's order)",
                )));
            };
            if replaced.contains(&**path) {
                continue;
            }
            if *dir == crate::stream::record::FileDir::Conversations {
                let edited = match conv.meta_edit.as_mut() {
                    Some(edit) if !*append => edit.sidecar(&content.to_bytes()?),
                    _ => None,
                };
                if let Some(json) = edited {
                    crate::stream::record::write_file_part(
                        out.buf(),
                        &conv.id,
                        *dir,
                        path,
                        false,
                        &json,
                    );
                    out.end_record()?;
                    replaced.insert(path.to_string());
                    continue;
                }
            }
            if let Some((open, carry)) = transcript.take() {
                if *append && open == **path {
                    transcript = Some((open, carry));
                } else if !carry.is_empty() {
                    conv.write_transcript_part(out, &open, true, &carry)?;
                }
            }
            if brain::is_transcript(path) && !identity {
                if let FileContent::Text(text) = content {
                    let mut carry = match transcript.take() {
                        Some((_, carry)) => carry,
                        None => Vec::new(),
                    };
                    carry.extend_from_slice(text.as_bytes());
                    let end = memchr::memrchr(b'\n', &carry).map_or(0, |i| i + 1);
                    conv.write_transcript_part(out, path, *append, &carry[..end])?;
                    // The start of a line the next part continues, kept
                    // where it is: moving it to a new buffer at every part
                    // copied a line of tens of MB (a pasted text) once
                    // per megabyte of it.
                    carry.drain(..end);
                    transcript = Some((path.to_string(), carry));
                    continue;
                }
            }
            if let Some(text) = conv.spill_texts.remove(&**path) {
                // The edited stream's text for a spilled result: written
                // whole, if it differs from the file's.
                let original = match content {
                    FileContent::Text(t) => {
                        let mut escaped = Vec::new();
                        crate::stream::json::write_str_body(&mut escaped, t);
                        escaped
                    }
                    FileContent::Hex(_) => Vec::new(),
                };
                if *append || original != text {
                    let mut quoted = b"\"".to_vec();
                    quoted.extend_from_slice(&text);
                    quoted.push(b'"');
                    let text: String = serde_json::from_slice(&quoted)
                        .map_err(|e| Error::data(format!("spilled result text: {e}")))?;
                    let new_path = conv.renumber_path(path).unwrap_or(path.to_string());
                    let mut rest = text.as_bytes();
                    let mut first = true;
                    while first || !rest.is_empty() {
                        let n = crate::stream::record::file_part_len(rest);
                        crate::stream::record::write_file_part(
                            out.buf(),
                            &conv.id,
                            *dir,
                            &new_path,
                            !first,
                            &rest[..n],
                        );
                        out.end_record()?;
                        rest = &rest[n..];
                        first = false;
                    }
                    replaced.insert(path.to_string());
                    continue;
                }
            }
            if identity {
                write_line(out, &line)?;
                continue;
            }
            // A step's own files (a spilled output) get its text edits.
            let edits = brain::step_of_path(path).and_then(|old| conv.text_edits.get(&old));
            let edited = match (edits, content) {
                (Some(edits), FileContent::Text(text)) => {
                    let mut bytes = text.as_bytes().to_vec();
                    for (o, n) in edits {
                        bytes = patch::replace_bytes(&bytes, o.as_bytes(), n.as_bytes());
                    }
                    (bytes != text.as_bytes()).then_some(bytes)
                }
                _ => None,
            };
            match conv.renumber_path(path) {
                Some(new_path) if new_path == **path && edited.is_none() => write_line(out, &line)?,
                Some(new_path) => {
                    let bytes = match edited {
                        Some(bytes) => bytes,
                        None => content.to_bytes()?,
                    };
                    crate::stream::record::write_file_part(
                        out.buf(),
                        &conv.id,
                        *dir,
                        &new_path,
                        *append,
                        &bytes,
                    );
                    out.end_record()?;
                }
                None => {}
            }
        }
        if let Some((open, carry)) = transcript.take() {
            if !carry.is_empty() {
                conv.write_transcript_part(out, &open, true, &carry)?;
            }
        }
        match &conv.meta_edit {
            Some(edit) => edit.check_done(),
            None => Ok(()),
        }
    }
}

/// Whether a `file` record in agy-dump's shape is of the ACP sidecar.
fn is_sidecar_line(line: &[u8]) -> bool {
    let head = &line[..line.len().min(256)];
    memchr::memmem::find(head, b"\"dir\":\"conversations\"").is_some()
}

impl Merge {
    /// Writes transcript text as a part of the file at `path`, each line
    /// for the new numbering.
    pub(super) fn write_transcript_part(
        &self,
        out: &mut Output,
        path: &str,
        append: bool,
        text: &[u8],
    ) -> Result<()> {
        // Grown as lines are kept, not sized for `text` first: a pasted
        // text's line is tens of MB, and its edit makes copies of it before
        // the line is kept (see `transcript_line`).
        let mut kept = Vec::new();
        for line in text.split_inclusive(|&b| b == b'\n') {
            let (body, newline) = match line.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (line, false),
            };
            if self.transcript_line(body, &mut kept) && newline {
                kept.push(b'\n');
            }
        }
        crate::stream::record::write_file_part(
            out.buf(),
            &self.id,
            crate::stream::record::FileDir::Brain,
            path,
            append,
            &kept,
        );
        out.end_record()
    }

    /// Appends a brain transcript line (FORMAT.md 10) for the new
    /// numbering to `out`: false, and nothing, when its step was deleted;
    /// an edited step's line with the edits made in its escaped text too.
    /// A line is copied only as an edit changes it (a pasted text's line is
    /// tens of MB, and so is each escaped form of the edit).
    pub(super) fn transcript_line(&self, line: &[u8], out: &mut Vec<u8>) -> bool {
        let Some((old, at)) = brain::line_step(line) else {
            out.extend_from_slice(line);
            return true;
        };
        let Some(new) = self.new_idx(old) else {
            return false;
        };
        let mut tail = Cow::Borrowed(&line[at..]);
        for (o, n) in self.text_edits.get(&old).into_iter().flatten() {
            // Texts sit in the line as JSON strings; tool arguments as JSON
            // text inside those, escaped twice. Each form is made only while
            // it is needed, and the new text's only where the old one is:
            // with a text of tens of MB, each is as large.
            let eo = escaped(o);
            if eo.is_empty() {
                continue;
            }
            if memchr::memmem::find(&tail, &eo).is_some() {
                let replaced = patch::replace_bytes(&tail, &eo, &escaped(n));
                tail = Cow::Owned(replaced);
            }
            // Escaping the escaped text changes it only where it has a
            // quote or a backslash.
            if memchr::memchr2(b'"', b'\\', &eo).is_none() {
                continue;
            }
            let eo2 = escaped(&String::from_utf8_lossy(&eo));
            drop(eo);
            if memchr::memmem::find(&tail, &eo2).is_some() {
                let en2 = escaped(&String::from_utf8_lossy(&escaped(n)));
                let replaced = patch::replace_bytes(&tail, &eo2, &en2);
                tail = Cow::Owned(replaced);
            }
        }
        out.extend_from_slice(brain::LINE_HEAD);
        out.extend_from_slice(new.to_string().as_bytes());
        out.extend_from_slice(&tail);
        true
    }

    /// A brain path with its `steps/<idx>/` renumbered; `None` when that
    /// step was deleted.
    pub(super) fn renumber_path(&self, path: &str) -> Option<String> {
        let Some(old) = brain::step_of_path(path) else {
            return Some(path.to_string());
        };
        brain::path_for_step(path, self.new_idx(old)?)
    }
}

/// `text` as the inside of a JSON string.
fn escaped(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    crate::stream::json::write_str_body(&mut out, text);
    out
}

/// The GENERIC args map entries `{1 key, 2 value}` of a ChatToolCall's
/// arguments, string values as they are and others as JSON text.
pub(super) fn generic_args(call: &[u8]) -> Vec<Vec<u8>> {
    let json = wire::Message::new(call)
        .get_str(field::tool_call::ARGUMENTS_JSON)
        .unwrap_or_default();
    let ToolInput::Object(args) = ToolInput::from_arguments_json(&json) else {
        return Vec::new();
    };
    args.iter()
        .map(|(key, value)| {
            let mut entry = wire::Writer::new();
            entry.string(field::generic::ENTRY_KEY, key);
            match value {
                serde_json::Value::String(s) => entry.string(field::generic::ENTRY_VALUE, s),
                other => entry.string(
                    field::generic::ENTRY_VALUE,
                    &crate::stream::json::value_to_string(other),
                ),
            };
            entry.into_bytes()
        })
        .collect()
}

/// The `data` blob of a held row (gen_metadata, parent_references).
fn data_blob(row: &crate::stream::record::RowCells<'_>) -> Result<Option<Vec<u8>>> {
    Ok(row
        .get("data")
        .map(|c| c.blob_bytes())
        .transpose()?
        .flatten())
}

/// The Step blob of a `steps` row line.
pub(super) fn step_bytes_of(line: &[u8]) -> Result<Vec<u8>> {
    let record = Record::parse(line)?;
    let Record::Row { row, .. } = &record else {
        return Err(Error::data("not a row"));
    };
    Ok(row
        .get("step_payload")
        .map(|c| c.blob_bytes())
        .transpose()?
        .flatten()
        .unwrap_or_default())
}

/// A steps row with its Step blob `old` replaced by `step` and its idx by
/// `idx`; the columns that mirror Step fields (metadata 5, error_details
/// 31) follow the Step where those fields changed.
pub(super) fn row_with_step(
    line: &[u8],
    old: &[u8],
    step: &[u8],
    idx: Option<i64>,
) -> Result<Vec<u8>> {
    if old == step && idx.is_none() {
        return Ok(line.to_vec());
    }
    let mut edits = Vec::new();
    if old != step {
        edits.push(("step_payload", CellEdit::Blob(step.to_vec())));
    }
    edits.extend(side_column_edits(old, step, idx));
    edit_row(line, &edits)
}

/// The edits of a steps row's cells besides `step_payload` when its Step
/// blob `old` becomes `step` and its idx `idx`: the columns that mirror
/// Step fields, where those changed, then the idx.
pub(super) fn side_column_edits(
    old: &[u8],
    step: &[u8],
    idx: Option<i64>,
) -> Vec<(&'static str, CellEdit)> {
    let mut edits = Vec::new();
    if old != step {
        let (was, now) = (wire::Message::new(old), wire::Message::new(step));
        for (column, number) in [
            ("metadata", field::step::METADATA),
            ("error_details", field::step::ERROR),
        ] {
            let value = now.get_bytes(number);
            if was.get_bytes(number) != value {
                edits.push((
                    column,
                    value.map_or(CellEdit::Null, |b| CellEdit::Blob(b.to_vec())),
                ));
            }
        }
    }
    if let Some(idx) = idx {
        edits.push(("idx", CellEdit::Integer(idx)));
    }
    edits
}
