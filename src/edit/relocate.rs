//! move: a conversation re-bound to its project's new directory, after the
//! folder was moved or renamed, or the store moved to another machine
//! (FORMAT.md 15 rows 7-8).
//!
//! A conversation is moved when its project is at or under OLD: when a
//! place where it names its project (its trajectory metadata's workspace
//! folders, git roots and workspace_uris, its index row's workspace_uris,
//! the ACP sidecar's `cwd`) names a path at or under OLD, by component
//! ([`crate::agy::paths::Dir`]). That is decided before anything is
//! written, and every such place is checked to be in a form the move can
//! rewrite: a place it could not would leave the conversation half moved,
//! so the conversation is refused instead.
//!
//! Those places are rewritten ([`crate::agy::project`]), and nothing else.
//! With `--everywhere` so is every path under OLD inside the conversation:
//! in every blob of its steps (tool inputs and results, user text, at
//! every depth, each length around a changed string written anew) and of
//! its other tables (`gen_metadata`, `executor_metadata`, the whole
//! trajectory metadata; the blob columns agy's schema declares),
//! the index row's text and summary, the sidecar, and its brain files'
//! text (transcripts with their escaped and twice-escaped forms). A
//! conversation not under OLD goes out byte for byte.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use crate::agy::paths::{Move, Stream};
use crate::agy::{self, patch};
use crate::error::{Error, Result};
use crate::store::index::IndexRow;
use crate::store::project;
use crate::store::sqlite::agy_columns;
use crate::stream::io::Output;
use crate::stream::record::{
    data_cells, decode_hex, edit_row, file_part_len, line_head, line_table, write_file_part,
    write_line, CellEdit, FileContent, FileDir, JsonCell, Record, RowCells, Side, SideFile,
    FILE_PART,
};
use crate::stream::spool::Spool;

use super::plural;
use super::survey::Held;

/// What a move rewrote in one conversation, for its line on stderr: the
/// places rewritten in the trajectory metadata, the index row and the
/// sidecar; then, with `--everywhere`, (places, records changed) in steps,
/// other rows and brain files.
#[derive(Debug, Default)]
pub(super) struct Moved {
    pub metadata: usize,
    pub index: usize,
    pub sidecar: usize,
    pub steps: (usize, usize),
    pub rows: (usize, usize),
    pub files: (usize, usize),
}

impl Moved {
    fn total(&self) -> usize {
        self.metadata + self.index + self.sidecar + self.steps.0 + self.rows.0 + self.files.0
    }

    /// The line said on stderr.
    pub fn note(&self, mv: &Move) -> String {
        let mut parts = Vec::new();
        for (n, what) in [
            (self.metadata, "trajectory metadata"),
            (self.index, "index row"),
            (self.sidecar, "sidecar"),
        ] {
            if n > 0 {
                parts.push(format!("{what} {n}"));
            }
        }
        for ((n, of), what) in [
            (self.steps, "step"),
            (self.rows, "other row"),
            (self.files, "brain file"),
        ] {
            if n > 0 {
                parts.push(format!("{n} in {of} {what}{}", plural(of)));
            }
        }
        let total = self.total();
        format!(
            "moved {} to {}: {total} place{} rewritten ({}); {} step{} changed",
            mv.from().as_str(),
            mv.to().as_str(),
            plural(total),
            parts.join(", "),
            self.steps.1,
            plural(self.steps.1)
        )
    }
}

/// Whether `held`'s project is at or under the move's OLD: some place
/// where it names its project names a path there. Each such place must be
/// one the move rewrites, else the conversation is refused.
pub(super) fn selected(held: &Held, mv: &Move) -> Result<bool> {
    let facts = &held.facts;
    let places = project::places(
        facts.metadata.as_deref(),
        facts.index.as_ref(),
        facts.sidecar.as_deref(),
    );
    if !project::is_under(&places, mv.from()) {
        return Ok(false);
    }
    for (place, path) in places {
        if mv.from().contains(&path) && mv.path(&path).is_none() {
            return Err(Error::data(format!(
                "its {} names {path:?}, under {} but written in a form agy-edit does not know how to rewrite",
                place.name(),
                mv.from().as_str()
            )));
        }
    }
    Ok(true)
}

/// Writes `held` moved; what was rewritten.
pub(super) fn write(
    held: &mut Held,
    mv: &Move,
    everywhere: bool,
    out: &mut Output,
) -> Result<Moved> {
    if !everywhere {
        return Writer::new(held, mv, false, out).run(held);
    }
    // Everything is rewritten, so a bad blob or file line can come up
    // halfway through: the conversation is written aside first, and only
    // a whole one goes out.
    let staged = Staged::default();
    let mut aside = Output::to(Box::new(staged.clone()));
    let moved = Writer::new(held, mv, true, &mut aside).run(held)?;
    aside.flush()?;
    drop(aside);
    let mut spool = staged.0.borrow_mut();
    let len = spool.len();
    spool.copy_range(0..len, out)?;
    out.end_record()?;
    Ok(moved)
}

/// A [`Spool`] to write an [`Output`] into.
#[derive(Clone, Default)]
struct Staged(Rc<RefCell<Spool>>);

impl std::io::Write for Staged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .borrow_mut()
            .append(buf)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The writing of one moved conversation.
struct Writer<'a> {
    id: String,
    mv: &'a Move,
    everywhere: bool,
    out: &'a mut Output,
    moved: Moved,
    /// The brain file being rewritten, if any.
    file: Option<OpenFile<'a>>,
    /// Brain files begun: a later part of one continues it.
    begun: HashSet<String>,
    /// The sidecar's text, until it is written (whole, moved, with its
    /// first part), and whether it went as it came.
    sidecar: Option<Vec<u8>>,
    sidecar_as_it_came: bool,
    /// The side files' move is asked for.
    told: bool,
    /// Side files whose move an earlier move's request now says.
    composed: Vec<SideFile>,
}

/// A brain text file being rewritten: its text goes out in parts of
/// [`FILE_PART`], as agy-dump cuts a file, so an unchanged file's records
/// come out as they went in.
struct OpenFile<'m> {
    path: String,
    stream: Stream<'m>,
    pending: Vec<u8>,
    /// Its first record is written.
    begun: bool,
    places: usize,
}

impl<'a> Writer<'a> {
    fn new(held: &Held, mv: &'a Move, everywhere: bool, out: &'a mut Output) -> Writer<'a> {
        Writer {
            id: held.id.clone(),
            mv,
            everywhere,
            out,
            moved: Moved::default(),
            file: None,
            begun: HashSet::new(),
            sidecar: held.facts.sidecar.clone(),
            sidecar_as_it_came: false,
            told: false,
            composed: Vec::new(),
        }
    }

    fn run(mut self, held: &mut Held) -> Result<Moved> {
        held.replay(|line| self.line(line))?;
        self.close_file()?;
        self.tell_side_files()?;
        Ok(self.moved)
    }

    fn line(&mut self, line: &[u8]) -> Result<()> {
        let kind = line_head(line).map(|(_, kind)| kind);
        // The rows a move leaves are not even read.
        let kept_table = match line_table(line) {
            Some(b"trajectory_metadata_blob") | None => false,
            Some(_) => !self.everywhere,
        };
        if kept_table {
            self.close_file()?;
            return self.pass(line);
        }
        if kind == Some(b"file") {
            self.tell_side_files()?;
        }
        match kind {
            Some(b"db" | b"schema") => return self.pass(line),
            Some(b"file") if !self.everywhere => {
                let head = &line[..line.len().min(256)];
                if memchr::memmem::find(head, b"\"dir\":\"conversations\"").is_none() {
                    return self.pass(line);
                }
            }
            _ => {}
        }
        let record = Record::parse(line)?;
        match &record {
            Record::File {
                dir: FileDir::Brain,
                path,
                append,
                content,
                ..
            } => return self.brain_file(line, path, *append, content),
            _ => self.close_file()?,
        }
        match &record {
            Record::Row { table, row, .. } => self.row(line, table, row),
            Record::Index {
                user_version, row, ..
            } => self.index(line, *user_version, row),
            Record::File { path, .. } => self.sidecar_part(line, path),
            Record::Side { side, .. } => self.side(line, side),
            Record::Db { .. } | Record::Schema { .. } => self.pass(line),
            // Not held (survey.rs): agy-edit writes its own.
            Record::End { .. } => Ok(()),
        }
    }

    /// Asks agy-pack, once per conversation moved, to move the paths of
    /// `history.jsonl` and `settings.json`'s `trustedWorkspaces` too:
    /// those name directories, not conversations, so no entry of the
    /// conversation carries them (see [`Side::Moved`]).
    fn tell_side_files(&mut self) -> Result<()> {
        if self.told {
            return Ok(());
        }
        self.told = true;
        for file in [SideFile::History, SideFile::Settings] {
            if self.composed.contains(&file) {
                continue;
            }
            let moved = Side::Moved {
                file,
                from: self.mv.from().as_str().into(),
                to: self.mv.to().as_str().into(),
            };
            moved.write(self.out.buf(), &self.id);
            self.out.end_record()?;
        }
        Ok(())
    }

    /// A side entry, its project moved: the workspace `agy -c` knows it
    /// by, the summaries' workspace (9) and trajectory metadata (17), the
    /// metadata file's summary. With `--everywhere`, every path in them.
    fn side(&mut self, line: &[u8], side: &Side<'_>) -> Result<()> {
        let moved = match side {
            // An earlier move's request, which this move continues (A to
            // B, then B to C: A to C) or undoes (B back to A: none).
            Side::Moved { file, from, to } if same_dir(to, self.mv.from()) => {
                self.composed.push(*file);
                if same_dir(from, self.mv.to()) {
                    return Ok(());
                }
                Some(Side::Moved {
                    file: *file,
                    from: from.clone().into_owned().into(),
                    to: self.mv.to().as_str().to_string().into(),
                })
            }
            side => crate::store::side::moved(side, self.mv, self.everywhere),
        };
        self.moved.index += self.mv.take_count();
        match moved {
            Some(side) => {
                side.write(self.out.buf(), &self.id);
                self.out.end_record()
            }
            None => self.pass(line),
        }
    }

    fn pass(&mut self, line: &[u8]) -> Result<()> {
        write_line(self.out, line)
    }

    fn row(&mut self, line: &[u8], table: &str, row: &RowCells<'_>) -> Result<()> {
        let metadata = table == "trajectory_metadata_blob";
        // Every blob of agy's tables with --everywhere, as agy's schema
        // says which columns hold blobs; else the trajectory metadata.
        let columns: Vec<String> = match self.everywhere || metadata {
            true => agy_columns(table)
                .into_iter()
                .filter(|c| c.blob_affinity)
                .map(|c| c.name)
                .collect(),
            false => Vec::new(),
        };
        if columns.is_empty() {
            return self.pass(line);
        }
        if metadata && !self.everywhere {
            let main = row
                .get("id")
                .and_then(|c| c.as_text())
                .is_none_or(|id| id == "main");
            if !main {
                return self.pass(line);
            }
        }
        let mut edits = Vec::new();
        for column in &columns {
            let column = column.as_str();
            let Some(bytes) = blob(row, column)? else {
                continue;
            };
            let moved = match metadata && !self.everywhere {
                true => agy::project::rewrite_workspaces(&bytes, self.mv),
                false => patch::rewrite(&bytes, self.mv),
            };
            if let Some(moved) = moved {
                match column {
                    "data" => edits.extend(data_cells(row, moved)),
                    _ => edits.push((column, CellEdit::Blob(moved))),
                }
            }
        }
        let places = self.mv.take_count();
        if edits.is_empty() {
            return self.pass(line);
        }
        match table {
            "trajectory_metadata_blob" => self.moved.metadata += places,
            "steps" => self.moved.steps = (self.moved.steps.0 + places, self.moved.steps.1 + 1),
            _ => self.moved.rows = (self.moved.rows.0 + places, self.moved.rows.1 + 1),
        }
        let edited = edit_row(line, &edits)?;
        self.pass(&edited)
    }

    fn index(&mut self, line: &[u8], user_version: i64, row: &RowCells<'_>) -> Result<()> {
        let mut index = IndexRow::from_record(user_version, row);
        let mut changed = index.rewrite_text("workspace_uris", self.mv);
        if self.everywhere {
            for column in ["title", "preview"] {
                changed |= index.rewrite_text(column, self.mv);
            }
            changed |= index.rewrite_blob("raw_summary", self.mv)?;
        } else {
            changed |= index.edit_blob("raw_summary", |summary| {
                agy::project::rewrite_summary(summary, self.mv)
            })?;
        }
        self.moved.index += self.mv.take_count();
        if !changed {
            return self.pass(line);
        }
        index.write(self.out.buf(), &self.id);
        self.out.end_record()
    }

    /// A part of the sidecar: the whole of it, moved, goes out with its
    /// first part (unmoved, each part as it came).
    fn sidecar_part(&mut self, line: &[u8], path: &str) -> Result<()> {
        let Some(json) = self.sidecar.take() else {
            return match self.sidecar_as_it_came {
                true => self.pass(line),
                false => Ok(()),
            };
        };
        let moved = match self.everywhere {
            true => patch::rewrite_text(&json, self.mv),
            false => agy::project::rewrite_sidecar_cwd(&json, self.mv),
        };
        self.moved.sidecar += self.mv.take_count();
        match moved {
            Some(json) => self.write_parts(FileDir::Conversations, path, false, &json),
            None => {
                self.sidecar_as_it_came = true;
                self.pass(line)
            }
        }
    }

    /// A part of a brain file: with `--everywhere` its text is rewritten
    /// (a binary file goes as it is).
    fn brain_file(
        &mut self,
        line: &[u8],
        path: &str,
        append: bool,
        content: &FileContent<'_>,
    ) -> Result<()> {
        let continues = append && self.file.as_ref().is_some_and(|f| f.path == path);
        if !continues {
            self.close_file()?;
        }
        let text = match content {
            FileContent::Text(text) if self.everywhere => text,
            _ => {
                self.close_file()?;
                return self.pass(line);
            }
        };
        if self.file.is_none() {
            let begun = append && self.begun.contains(path);
            self.file = Some(OpenFile {
                path: path.to_string(),
                stream: Stream::new(self.mv),
                pending: Vec::new(),
                begun,
                places: 0,
            });
            self.begun.insert(path.to_string());
        }
        let mut file = self.file.take().expect("just opened");
        file.stream.push(text.as_bytes(), &mut file.pending);
        file.places += self.mv.take_count();
        let result = self.write_pending(&mut file, false);
        self.file = Some(file);
        result
    }

    /// Ends the brain file being rewritten: the rest of its text goes out.
    fn close_file(&mut self) -> Result<()> {
        let Some(mut file) = self.file.take() else {
            return Ok(());
        };
        file.stream.finish(&mut file.pending);
        file.places += self.mv.take_count();
        if file.places > 0 {
            self.moved.files.0 += file.places;
            self.moved.files.1 += 1;
        }
        self.write_pending(&mut file, true)
    }

    /// Writes the parts of a brain file's rewritten text that are whole
    /// (all of it at its end).
    fn write_pending(&mut self, file: &mut OpenFile<'_>, end: bool) -> Result<()> {
        if !end && file.pending.len() <= FILE_PART {
            return Ok(());
        }
        let keep = match end {
            true => 0,
            // What may still grow into a part with the next text.
            false => {
                let mut whole = 0;
                while file.pending.len() - whole > FILE_PART {
                    whole += file_part_len(&file.pending[whole..]);
                }
                file.pending.len() - whole
            }
        };
        let upto = file.pending.len() - keep;
        let text = file.pending.drain(..upto).collect::<Vec<u8>>();
        if !text.is_empty() || (end && !file.begun) {
            self.write_parts(FileDir::Brain, &file.path, file.begun, &text)?;
            file.begun = true;
        }
        Ok(())
    }

    /// Writes `content` as records of at most [`FILE_PART`] each (one, for
    /// empty content, unless `append`).
    fn write_parts(
        &mut self,
        dir: FileDir,
        path: &str,
        append: bool,
        content: &[u8],
    ) -> Result<()> {
        let mut rest = content;
        let mut append = append;
        loop {
            let n = file_part_len(rest);
            if n == 0 && append {
                return Ok(());
            }
            write_file_part(self.out.buf(), &self.id, dir, path, append, &rest[..n]);
            self.out.end_record()?;
            rest = &rest[n..];
            append = true;
            if rest.is_empty() {
                return Ok(());
            }
        }
    }
}

/// The bytes of a blob cell (plain hex in a BLOB column, or `{"blob":…}`).
fn blob(row: &RowCells<'_>, column: &str) -> Result<Option<Vec<u8>>> {
    match row.get(column) {
        Some(JsonCell::Plain(hex) | JsonCell::Blob(hex)) => decode_hex(hex)
            .map(Some)
            .map_err(|e| e.context(format!("column {column}"))),
        _ => Ok(None),
    }
}

/// Whether `path` names the directory `dir`.
fn same_dir(path: &str, dir: &crate::agy::paths::Dir) -> bool {
    crate::agy::paths::Dir::parse(path).is_ok_and(|p| p.is_same(dir))
}
