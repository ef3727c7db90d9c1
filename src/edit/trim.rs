//! A conversation cut after a step, written: what a fork and a rewind both
//! do to the rows and files of the steps they leave behind.
//!
//! The kept steps go out byte for byte. The steps after the cut, the
//! `gen_metadata` rows of the generations that made only those steps, their
//! `steps/<idx>/` brain files and their brain transcript lines are left
//! out; `trajectory_meta` names the new trajectory, a `parent_references`
//! row says where it came from, and the index row is made true for the
//! steps kept. A fork also writes every record as its new conversation's.

use std::collections::HashSet;

use crate::agy::brain;
use crate::agy::patch::{self, Generation};
use crate::agy::steps::field;
use crate::agy::wire;
use crate::error::{Error, Result};
use crate::store::index::IndexRow;
use crate::stream::io::Output;
use crate::stream::record::{
    data_cells, edit_row, file_part_len, write_as, write_file_part, write_line, write_row, Cell,
    CellEdit, Column, FileContent, FileDir, Record, RowCells, Side,
};

use super::survey::Held;

/// What a cut conversation becomes.
pub(super) struct Trim {
    /// The idx of the last step kept.
    pub keep_through: i64,
    /// A fork's id: every record is written as this conversation's.
    pub fork: Option<String>,
    /// The trajectory id `trajectory_meta` gets.
    pub trajectory_id: String,
    /// The `parent_references` row added: its idx and its data.
    pub reference: (i64, Vec<u8>),
    /// The index row written, in place of the stream's (or after the
    /// steps when the stream has none); `None` writes no index record.
    pub index: Option<IndexRow>,
}

/// What a trim left out, for the report on stderr.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Left {
    pub steps: usize,
    pub generations: usize,
    pub files: usize,
    pub transcript_lines: usize,
}

impl Trim {
    /// Writes `held` cut as this says.
    pub fn write(&self, held: &mut Held, out: &mut Output) -> Result<Left> {
        let parent = held.id.clone();
        let references_at = held
            .facts
            .tables
            .iter()
            .position(|t| t == "parent_references")
            .ok_or_else(|| Error::data("it has no parent_references table to record the cut in"))?;
        let mut writer = Writer {
            trim: self,
            parent,
            tables: held.facts.tables.clone(),
            references_at,
            out,
            left: Left::default(),
            reference_written: false,
            index_written: false,
            transcript: None,
            dropped_files: HashSet::new(),
        };
        held.replay(|line| writer.line(line))?;
        writer.end()?;
        Ok(writer.left)
    }
}

/// The writing of one trimmed conversation.
struct Writer<'a> {
    trim: &'a Trim,
    /// The conversation's id in the stream (a fork's parent).
    parent: String,
    tables: Vec<String>,
    /// Where `parent_references` is among the tables.
    references_at: usize,
    out: &'a mut Output,
    left: Left,
    reference_written: bool,
    index_written: bool,
    /// A transcript being cut, and the start of a line the next part of
    /// its file continues.
    transcript: Option<(String, Vec<u8>)>,
    /// Step files left out, each counted once however many parts it has.
    dropped_files: HashSet<String>,
}

impl Writer<'_> {
    /// The conversation the records go out as.
    fn id(&self) -> &str {
        self.trim.fork.as_deref().unwrap_or(&self.parent)
    }

    /// Writes a line of the original as it was, but for its conversation.
    fn pass(&mut self, line: &[u8]) -> Result<()> {
        match &self.trim.fork {
            Some(id) => write_as(self.out, line, id),
            None => write_line(self.out, line),
        }
    }

    fn line(&mut self, line: &[u8]) -> Result<()> {
        let record = Record::parse(line)?;
        if !matches!(record, Record::File { .. }) {
            self.end_transcript()?;
        }
        match &record {
            Record::Db { .. } | Record::Schema { .. } => self.pass(line),
            Record::Row { table, row, .. } => self.row(line, table, row),
            Record::Index { .. } => {
                self.before_files()?;
                Ok(())
            }
            Record::File {
                dir,
                path,
                append,
                content,
                ..
            } => {
                self.before_files()?;
                self.file(line, *dir, path, *append, content)
            }
            Record::Side { side, .. } => {
                self.before_files()?;
                self.side(line, side)
            }
            // Not held (survey.rs): agy-edit writes its own.
            Record::End { .. } => Ok(()),
        }
    }

    /// A side entry: a summary is dropped (the steps it counts are not the
    /// conversation's now, and agy-pack makes one of those it has), an
    /// annotation follows a fork to its own file, the rest go as they came.
    fn side(&mut self, line: &[u8], side: &Side<'_>) -> Result<()> {
        match side {
            Side::Summary { .. } => Ok(()),
            Side::Annotation { .. } if self.trim.fork.is_some() => {
                let id = self.id().to_string();
                side.write(self.out.buf(), &id);
                self.out.end_record()
            }
            _ => self.pass(line),
        }
    }

    fn row(&mut self, line: &[u8], table: &str, row: &RowCells<'_>) -> Result<()> {
        let after_references = match self.tables.iter().position(|t| t == table) {
            Some(at) => at > self.references_at,
            None => true,
        };
        if table == "steps" || after_references {
            self.write_reference()?;
        }
        match table {
            "steps" => {
                let idx = row.get("idx").and_then(|c| c.as_i64());
                if idx.is_some_and(|idx| idx > self.trim.keep_through) {
                    self.left.steps += 1;
                    return Ok(());
                }
                self.pass(line)
            }
            "trajectory_meta" => {
                let mut edits = vec![(
                    "trajectory_id",
                    CellEdit::Text(self.trim.trajectory_id.clone()),
                )];
                if let Some(id) = &self.trim.fork {
                    edits.push(("cascade_id", CellEdit::Text(id.clone())));
                }
                let edited = edit_row(line, &edits)?;
                self.pass(&edited)
            }
            "trajectory_metadata_blob" => match (&self.trim.fork, data(row)?) {
                (Some(fork), Some(data)) => {
                    // A CLI root names itself as the root of its tree; a
                    // subagent's copy keeps the root it names.
                    let root =
                        wire::edit_field(&data, field::trajectory::ROOT_CONVERSATION_ID, |id| {
                            (id == self.parent.as_bytes()).then(|| fork.as_bytes().to_vec())
                        });
                    match root {
                        Some(data) => {
                            let edited = edit_row(line, &[("data", CellEdit::Blob(data))])?;
                            self.pass(&edited)
                        }
                        None => self.pass(line),
                    }
                }
                _ => self.pass(line),
            },
            "gen_metadata" => self.generation(line, row),
            _ => self.pass(line),
        }
    }

    /// A `gen_metadata` row: left out when every step its generation made
    /// is; its step list cut when some are.
    fn generation(&mut self, line: &[u8], row: &RowCells<'_>) -> Result<()> {
        let Some(data) = data(row)? else {
            return self.pass(line);
        };
        let keep_through = self.trim.keep_through;
        match patch::generation_steps(&data, |i| (i <= keep_through).then_some(i)) {
            Generation::Unchanged => self.pass(line),
            Generation::Gone => {
                self.left.generations += 1;
                Ok(())
            }
            Generation::Changed(data) => {
                let edited = edit_row(line, &data_cells(row, data))?;
                self.pass(&edited)
            }
        }
    }

    /// The `parent_references` row that records the cut, once, where agy-dump
    /// would list it: after the table's other rows.
    fn write_reference(&mut self) -> Result<()> {
        if self.reference_written {
            return Ok(());
        }
        self.reference_written = true;
        let (idx, data) = &self.trim.reference;
        let columns = [
            Column {
                name: "idx".into(),
                blob_affinity: false,
            },
            Column {
                name: "data".into(),
                blob_affinity: true,
            },
        ];
        let id = self.id().to_string();
        write_row(
            self.out.buf(),
            &id,
            "parent_references",
            &columns,
            [Cell::Integer(*idx), Cell::Blob(data.into())],
        );
        self.out.end_record()
    }

    /// What comes between the rows and the files: the reference (when no
    /// row came after it), then the index row.
    fn before_files(&mut self) -> Result<()> {
        self.write_reference()?;
        if self.index_written {
            return Ok(());
        }
        self.index_written = true;
        if let Some(row) = &self.trim.index {
            let id = self.id().to_string();
            row.write(self.out.buf(), &id);
            self.out.end_record()?;
        }
        Ok(())
    }

    fn file(
        &mut self,
        line: &[u8],
        dir: FileDir,
        path: &str,
        append: bool,
        content: &FileContent<'_>,
    ) -> Result<()> {
        if dir == FileDir::Conversations {
            // The ACP lane's `<id>.meta` sidecar goes with its database.
            return match &self.trim.fork {
                Some(fork) if path == format!("{}.meta", self.parent) => {
                    let bytes = content.to_bytes()?;
                    write_file_part(
                        self.out.buf(),
                        fork,
                        dir,
                        &format!("{fork}.meta"),
                        append,
                        &bytes,
                    );
                    self.out.end_record()
                }
                _ => self.pass(line),
            };
        }
        if brain::step_of_path(path).is_some_and(|idx| idx > self.trim.keep_through) {
            if self.dropped_files.insert(path.to_string()) {
                self.left.files += 1;
            }
            return Ok(());
        }
        let continues = append
            && self
                .transcript
                .as_ref()
                .is_some_and(|(open, _)| open == path);
        if !continues {
            self.end_transcript()?;
        }
        if !brain::is_transcript(path) {
            return self.pass(line);
        }
        let mut carry = match self.transcript.take() {
            Some((_, carry)) => carry,
            None => Vec::new(),
        };
        carry.extend_from_slice(&content.to_bytes()?);
        let end = memchr::memrchr(b'\n', &carry).map_or(0, |i| i + 1);
        let rest = carry.split_off(end);
        self.write_transcript(path, append, &carry)?;
        self.transcript = Some((path.to_string(), rest));
        Ok(())
    }

    /// Writes the last line of a transcript being cut, which had no newline.
    fn end_transcript(&mut self) -> Result<()> {
        if let Some((path, carry)) = self.transcript.take() {
            if !carry.is_empty() {
                self.write_transcript(&path, true, &carry)?;
            }
        }
        Ok(())
    }

    /// Writes the lines of `text` whose steps are kept as a part of the
    /// transcript at `path` (in parts of at most a megabyte). The first part
    /// of a file is written even when nothing of it is left, so the file
    /// is still there.
    fn write_transcript(&mut self, path: &str, append: bool, text: &[u8]) -> Result<()> {
        let mut kept = Vec::with_capacity(text.len());
        for line in text.split_inclusive(|&b| b == b'\n') {
            match brain::line_step(line) {
                Some((idx, _)) if idx > self.trim.keep_through => self.left.transcript_lines += 1,
                _ => kept.extend_from_slice(line),
            }
        }
        let id = self.id().to_string();
        let mut rest = kept.as_slice();
        let mut append = append;
        while !append || !rest.is_empty() {
            let n = file_part_len(rest);
            write_file_part(
                self.out.buf(),
                &id,
                FileDir::Brain,
                path,
                append,
                &rest[..n],
            );
            self.out.end_record()?;
            rest = &rest[n..];
            append = true;
        }
        Ok(())
    }

    /// After the conversation's last line.
    fn end(&mut self) -> Result<()> {
        self.end_transcript()?;
        self.before_files()
    }
}

/// The `data` blob of a row, when it has one.
fn data(row: &RowCells<'_>) -> Result<Option<Vec<u8>>> {
    Ok(row
        .get("data")
        .map(|c| c.blob_bytes())
        .transpose()?
        .flatten())
}
