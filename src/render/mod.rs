//! agy-render: the message stream as pages for people.
//!
//! Reads agy-decode's stream (plain or `--all`) and writes each
//! conversation as one self-contained HTML page or as Markdown: to standard
//! output (every conversation in one document), or with `--out DIR` one
//! file per conversation plus an index.
//!
//! Memory is bounded by the largest message: a conversation's body goes to
//! a spool as it is read ([`body`], on a second thread, which also renders
//! the large tool calls and results handed to it), and the header,
//! which needs the meta record that comes last, is written before it at the
//! end. The alternative, writing the header last and lifting it into place
//! with CSS, would save writing the body twice, but leaves the header last
//! in the document for screen readers, text browsers and copying, leaves the
//! page's `<title>` without the title, and cannot work for Markdown at all;
//! the copy is done by the kernel where it can be, and the spooling thread
//! keeps it off the rendering's time.
//!
//! A conversation that cannot be rendered does not stop the others: each
//! failure is named on stderr, and the run's [`Outcome`] counts them so the
//! binary can exit 1 after writing everything it could.
//!
//! The parts: [`stream`] reads records leniently, [`conversation`] walks a
//! conversation, [`body`] spools its bytes (and renders what is handed
//! over), [`page`] is what a format
//! writes, [`html`] and [`md`] are the formats ([`pre`] the HTML `<pre>`
//! that collapses), [`markdown`] renders and sanitises Markdown text,
//! [`text`] is a text block's text (a long one read in pieces), [`raw`] a
//! JSON value kept as its text, [`escape`]
//! escapes, [`calls`] and [`diff`] say how tool calls show ([`pretty`]
//! re-indents JSON a piece at a time), [`summary`] is
//! the header's facts, [`site`] the `--out` directory and its index,
//! [`csp`] the pages' Content-Security-Policy.

pub mod body;
pub mod calls;
pub mod conversation;
pub mod csp;
pub mod diff;
pub mod entry;
pub mod escape;
pub mod html;
pub mod markdown;
pub mod md;
pub mod page;
pub mod pre;
pub mod pretty;
pub mod raw;
pub mod site;
pub mod stream;
pub mod summary;
pub mod text;

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;

use body::Bodies;
use conversation::Conversation;
use entry::Entry;
use page::Page;
use site::{Pending, Site};
use stream::Record;

use crate::error::{Error, ErrorKind, Result};
use crate::stream::io::{Lines, Output, Place};
use crate::stream::spool::Spool;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Html,
    Markdown,
}

impl Format {
    pub fn parse(name: &str) -> Result<Format> {
        match name {
            "html" => Ok(Format::Html),
            "markdown" | "md" => Ok(Format::Markdown),
            other => Err(Error::usage(format!(
                "unknown format {other:?} (expected html or markdown)"
            ))),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct RenderOptions {
    pub format: Format,
    /// Write a page per conversation and an index here, instead of one
    /// document to standard output.
    pub out_dir: Option<PathBuf>,
    /// Called just before a second thread starts, if one does
    /// ([`body::Bodies::new`]).
    pub threading: Option<fn()>,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Conversations in the input.
    pub conversations: u64,
    /// Conversations written (including those written with problems).
    pub written: u64,
    /// Conversations that failed: not written, or written with input lines
    /// that could not be read.
    pub failed: u64,
    /// Input lines that could not be read, in or outside a conversation.
    pub unreadable_lines: u64,
}

impl Outcome {
    pub fn is_clean(&self) -> bool {
        self.failed == 0 && self.unreadable_lines == 0
    }
}

enum Target {
    Stdout { out: Output, started: bool },
    Dir(Site),
}

struct Current {
    conversation: Conversation,
    /// Why it cannot be written, once something failed.
    failure: Option<String>,
    /// Its records are skipped: it came again after it had ended.
    skip: bool,
}

struct Run<'w> {
    page: Box<dyn Page>,
    target: Target,
    bodies: Bodies,
    current: Option<Current>,
    /// Conversations that ended, so one that comes again is noticed.
    done: HashSet<String>,
    unknown_kinds: HashSet<String>,
    outcome: Outcome,
    warn: &'w mut dyn FnMut(String),
}

/// Renders every input (`-` is stdin) as one stream.
pub fn render(
    inputs: &[OsString],
    options: &RenderOptions,
    warn: &mut dyn FnMut(String),
) -> Result<Outcome> {
    let page: Box<dyn Page> = match options.format {
        Format::Html => Box::new(html::Html::new()),
        Format::Markdown => Box::new(md::Markdown),
    };
    let target = match &options.out_dir {
        Some(dir) => Target::Dir(Site::open(dir, warn)?),
        None => Target::Stdout {
            out: Output::stdout(),
            started: false,
        },
    };
    let mut run = Run {
        page,
        target,
        bodies: Bodies::new(options.threading),
        current: None,
        done: HashSet::new(),
        unknown_kinds: HashSet::new(),
        outcome: Outcome::default(),
        warn,
    };
    for input in inputs {
        let mut lines = Lines::open(input)?;
        let name = lines.name().to_string();
        while let Some((number, line)) = lines.next_numbered_line()? {
            let place = Place {
                name: &name,
                line: number,
            };
            match Record::parse(line) {
                Ok(record) => run.record(record, place)?,
                Err(error) => run.unreadable(place, &error)?,
            }
        }
    }
    run.end_conversation()?;
    run.finish()?;
    Ok(run.outcome)
}

impl Run<'_> {
    fn record(&mut self, record: Record, place: Place) -> Result<()> {
        if self
            .current
            .as_ref()
            .is_some_and(|c| c.conversation.summary.id != record.conversation)
        {
            self.end_conversation()?;
        }
        let current = match &mut self.current {
            Some(current) => current,
            None => {
                let skip = self.done.contains(&*record.conversation);
                if skip {
                    (self.warn)(format!(
                        "{place}: conversation {} comes again after its meta record; these records are skipped",
                        record.conversation
                    ));
                }
                self.current.insert(Current {
                    conversation: Conversation::new(&record.conversation),
                    failure: None,
                    skip,
                })
            }
        };
        if current.skip || current.failure.is_some() {
            if record.kind == "meta" {
                self.end_conversation()?;
            }
            return Ok(());
        }
        match &*record.kind {
            "message" => {
                let mut out = self.bodies.out();
                current.conversation.message(&*self.page, &record, &mut out);
                if let Err(e) = self.bodies.filled() {
                    current.failure = Some(e.context(place).to_string());
                }
                if let Some(e) = current.conversation.take_error() {
                    current.failure = Some(e.context(place).to_string());
                }
            }
            "artifact" => {
                let mut out = self.bodies.out();
                current
                    .conversation
                    .artifact(&*self.page, &record, &mut out);
                if let Err(e) = self.bodies.filled() {
                    current.failure = Some(e.context(place).to_string());
                }
                if let Some(e) = current.conversation.take_error() {
                    current.failure = Some(e.context(place).to_string());
                }
            }
            "meta" => {
                current.conversation.summary.meta(&record);
                self.end_conversation()?;
            }
            other => {
                if self.unknown_kinds.insert(other.to_string()) {
                    (self.warn)(format!(
                        "{place}: records of kind {other:?} are not rendered (said once)"
                    ));
                }
            }
        }
        Ok(())
    }

    /// A line that is not a record: said on stderr, and marked in the
    /// conversation it is in (the one of the line before).
    fn unreadable(&mut self, place: Place, error: &str) -> Result<()> {
        (self.warn)(format!("{place}: {error}"));
        self.outcome.unreadable_lines += 1;
        if let Some(current) = &mut self.current {
            if current.failure.is_none() && !current.skip {
                let place = place.to_string();
                let mut out = self.bodies.out();
                current
                    .conversation
                    .unreadable(&*self.page, &place, error, &mut out);
                if let Err(e) = self.bodies.filled() {
                    current.failure = Some(e.to_string());
                }
            }
        }
        Ok(())
    }

    /// Writes the conversation in progress, if any. Only an error that
    /// stops the whole run (standard output gone) is returned.
    fn end_conversation(&mut self) -> Result<()> {
        let Some(current) = self.current.take() else {
            return Ok(());
        };
        let mut current = current;
        let id = current.conversation.summary.id.clone();
        self.done.insert(id.clone());
        self.outcome.conversations += 1;
        if !current.skip && current.failure.is_none() {
            // Calls still held go to the body, a batch at a time.
            current
                .conversation
                .settle(&*self.page, &mut self.bodies.out());
            if let Err(e) = self.bodies.filled() {
                current.failure = Some(e.to_string());
            }
        }
        if let Some(e) = current.conversation.take_error() {
            current.failure.get_or_insert(e.to_string());
        }
        let body = self.bodies.take();
        if current.skip {
            self.outcome.failed += 1;
            return Ok(());
        }
        let written = match (current.failure, body) {
            (Some(failure), _) => Err(Error::data(failure)),
            (None, Err(e)) => Err(e),
            (None, Ok(body)) => self.write(current.conversation, body),
        };
        match written {
            Ok(problems) => {
                self.outcome.written += 1;
                self.outcome.failed += u64::from(problems);
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(e),
            Err(e) if matches!(self.target, Target::Stdout { .. }) => Err(e),
            Err(e) => {
                (self.warn)(format!("conversation {id}: {e}; not written"));
                self.outcome.failed += 1;
                Ok(())
            }
        }
    }

    /// Writes one conversation; `true` when it was written with lines
    /// that could not be read.
    fn write(&mut self, conversation: Conversation, mut body: Spool) -> Result<bool> {
        let page = &*self.page;
        let (summary, tail) = conversation.finish(page);
        let title = summary.title();
        match &mut self.target {
            Target::Stdout { out, started } => {
                if !*started {
                    page.document_start(out.buf(), &title);
                    *started = true;
                }
                page.conversation_start(out.buf(), &summary, false);
                body.copy_range(0..body.len(), out)?;
                out.buf().extend_from_slice(&tail);
                page.conversation_end(out.buf());
                out.end_record()?;
            }
            Target::Dir(site) => {
                crate::store::root::check_id(&summary.id)?;
                if summary.id == "index" {
                    return Err(Error::data(
                        "conversation id \"index\" would take the index's file name",
                    ));
                }
                let file = format!("{}.{}", summary.id, page.extension());
                let path = site.dir.join(&file);
                let (pending, sink) = Pending::create(&path)?;
                let mut out = Output::file(sink);
                page.document_start(out.buf(), &title);
                page.conversation_start(out.buf(), &summary, true);
                body.copy_range(0..body.len(), &mut out)?;
                out.buf().extend_from_slice(&tail);
                page.conversation_end(out.buf());
                page.document_end(out.buf());
                out.flush().map_err(|e| e.context(path.display()))?;
                drop(out);
                pending.commit()?;
                site.add(Entry::new(&summary, file));
            }
        }
        self.bodies.discard(body);
        Ok(summary.unreadable > 0)
    }

    fn finish(&mut self) -> Result<()> {
        match &mut self.target {
            Target::Stdout { out, started } => {
                if !*started {
                    self.page.document_start(out.buf(), "agy conversations");
                    self.page.no_conversations(out.buf());
                }
                self.page.document_end(out.buf());
                out.flush()
            }
            Target::Dir(site) => site.write_index(&*self.page),
        }
    }
}
