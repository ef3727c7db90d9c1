//! Other agents' formats: the message stream as an Anthropic Messages API
//! request, a Claude Code session, a Codex CLI rollout, a Gemini CLI
//! session or an OpenCode session, and each of those sessions back into
//! the message stream.
//!
//! The converters never look inside decode or encode: `agy-decode --format`
//! runs the ordinary decoder into an in-process buffer ([`Sink`]) and
//! converts each finished conversation's message records, and
//! `agy-encode --format claude-code|codex|gemini-cli|opencode` turns a
//! session into message records for the ordinary encoder
//! ([`claude_code_read`], [`codex_read`], [`gemini_cli_read`],
//! [`opencode_read`]). Every target format shares one sequencing pass
//! ([`turns`]), so what the Messages API would accept is also what Claude
//! Code, Codex, Gemini CLI and OpenCode resume without repairing it.
//!
//! Each format is a line in one table ([`Format`]) and a [`write::Writer`]
//! that says only what its output looks like: [`mod@write`] does what every
//! format does alike (the turn rules, the session id, project directory
//! and start time, `--out-dir`). Likewise each reader says only how a
//! session reads ([`read::Reader`]), and [`read`] writes the records.

pub mod anthropic;
pub mod claude_code;
pub mod claude_code_read;
pub mod codex;
pub mod codex_read;
pub mod gemini_cli;
pub mod gemini_cli_project;
pub mod gemini_cli_read;
pub mod opencode;
pub mod opencode_read;
pub mod read;
pub mod turns;
pub mod write;

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::stream::carry::LineCarry;
use crate::stream::io::{Captured, Output};
use crate::stream::message::{Block, Role, Usage};

/// What a tool reads or writes besides the message stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// The message stream itself (agy-decode's default).
    #[default]
    Messages,
    /// One Messages API request body per conversation.
    Anthropic,
    /// Claude Code session JSONL.
    ClaudeCode,
    /// Codex CLI rollout JSONL.
    Codex,
    /// Gemini CLI session JSONL.
    GeminiCli,
    /// OpenCode's session export (one JSON document).
    OpenCode,
}

/// A format's name and what the tools do with it: agy-decode writes the
/// formats with a writer, agy-encode reads those with a reader. A new
/// format is a line here, its writer and its reader.
struct Spec {
    format: Format,
    name: &'static str,
    writer: Option<&'static write::Writer>,
    reader: Option<read::Reader>,
}

const FORMATS: &[Spec] = &[
    Spec {
        format: Format::Messages,
        name: "messages",
        writer: None,
        reader: None,
    },
    Spec {
        format: Format::Anthropic,
        name: "anthropic",
        writer: Some(&anthropic::WRITER),
        reader: None,
    },
    Spec {
        format: Format::ClaudeCode,
        name: "claude-code",
        writer: Some(&claude_code::WRITER),
        reader: Some(claude_code_read::read),
    },
    Spec {
        format: Format::Codex,
        name: "codex",
        writer: Some(&codex::WRITER),
        reader: Some(codex_read::read),
    },
    Spec {
        format: Format::GeminiCli,
        name: "gemini-cli",
        writer: Some(&gemini_cli::WRITER),
        reader: Some(gemini_cli_read::read),
    },
    Spec {
        format: Format::OpenCode,
        name: "opencode",
        writer: Some(&opencode::WRITER),
        reader: Some(opencode_read::read),
    },
];

impl Format {
    fn spec(self) -> &'static Spec {
        FORMATS
            .iter()
            .find(|s| s.format == self)
            .expect("every format is in the table")
    }

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// How agy-decode writes it (`None`: the message stream itself, or a
    /// format it does not write).
    pub fn writer(self) -> Option<&'static write::Writer> {
        self.spec().writer
    }

    /// How agy-encode reads it (`None`: the message stream itself, or a
    /// format it does not read).
    pub fn reader(self) -> Option<read::Reader> {
        self.spec().reader
    }

    /// Whether agy-decode writes it as another CLI's session (which
    /// `--out-dir`, `--cwd` and `--force` are for).
    pub fn is_session(self) -> bool {
        self.writer()
            .is_some_and(|w| matches!(w.shape, write::Shape::Session(_)))
    }

    /// Every format, in the table's order.
    pub fn all() -> impl Iterator<Item = Format> {
        FORMATS.iter().map(|s| s.format)
    }

    /// Reads a `--format` value; `allowed` lists the formats the tool
    /// offers.
    pub fn parse(name: &str, allowed: &[Format]) -> Result<Format> {
        let Some(spec) = FORMATS.iter().find(|s| s.name == name) else {
            return Err(Error::usage(format!("unknown format {name:?}")));
        };
        if !allowed.contains(&spec.format) {
            return Err(Error::usage(format!("--format {name} is not offered here")));
        }
        Ok(spec.format)
    }

    /// The names of `formats` as a sentence lists them: "a, b or c".
    pub fn names(formats: impl IntoIterator<Item = Format>) -> String {
        let names: Vec<&str> = formats.into_iter().map(Format::name).collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }
}

/// What becomes of thinking blocks. Gemini's thought signatures cannot be
/// verified by Anthropic, and the API refuses a thinking block whose
/// signature it did not make, so thinking never goes out as thinking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Thinking {
    #[default]
    Drop,
    /// `<thinking>…</thinking>` text at the thinking block's place.
    Text,
}

impl Thinking {
    pub fn parse(name: &str) -> Result<Thinking> {
        match name {
            "drop" => Ok(Thinking::Drop),
            "text" => Ok(Thinking::Text),
            _ => Err(Error::usage(format!(
                "--thinking takes drop or text, not {name:?}"
            ))),
        }
    }
}

/// Settings of `agy-decode --format`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub thinking: Thinking,
    /// Say on stderr what was changed or dropped, per conversation.
    pub verbose: bool,
    /// Claude Code: write `DIR/<slug>/<id>.jsonl` instead of stdout;
    /// Codex: `DIR/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.
    /// Gemini CLI: `DIR/tmp/<slug>/chats/session-….jsonl`; OpenCode:
    /// `DIR/<id>.json`.
    pub out_dir: Option<PathBuf>,
    /// The session formats: the project directory, instead of each
    /// conversation's.
    pub cwd: Option<String>,
    /// The session formats: replace session files that exist.
    pub force: bool,
}

/// Counts of what a conversion changed or dropped, in the order first
/// counted; `--verbose` prints them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    counts: Vec<(&'static str, u64)>,
}

impl Report {
    pub fn add(&mut self, what: &'static str, n: u64) {
        if n == 0 {
            return;
        }
        match self.counts.iter_mut().find(|(w, _)| *w == what) {
            Some((_, count)) => *count += n,
            None => self.counts.push((what, n)),
        }
    }

    pub fn count(&self, what: &str) -> u64 {
        self.counts
            .iter()
            .find(|(w, _)| *w == what)
            .map_or(0, |(_, n)| *n)
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn merge(&mut self, other: &Report) {
        for &(what, n) in &other.counts {
            self.add(what, n);
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.counts.is_empty() {
            return f.write_str("nothing changed");
        }
        for (i, (what, n)) in self.counts.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{what}: {n}")?;
        }
        Ok(())
    }
}

/// One message of a conversation as the converters see it.
#[derive(Clone, Debug)]
pub struct Msg {
    pub role: Role,
    pub timestamp: Option<String>,
    pub model: Option<String>,
    pub stop_reason: Option<String>,
    pub usage: Option<Usage>,
    pub implicit: bool,
    pub step_type: Option<String>,
    pub content: Vec<Block<'static>>,
}

impl Default for Msg {
    fn default() -> Msg {
        Msg {
            role: Role::User,
            timestamp: None,
            model: None,
            stop_reason: None,
            usage: None,
            implicit: false,
            step_type: None,
            content: Vec::new(),
        }
    }
}

/// A conversation's `meta` record.
#[derive(Clone, Debug, Default)]
pub struct MetaInfo {
    pub id: Option<String>,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub title: Option<String>,
    pub model: Option<String>,
}

/// A whole conversation: its messages in order, then its meta record.
#[derive(Clone, Debug, Default)]
pub struct Conversation {
    pub id: String,
    pub messages: Vec<Msg>,
    pub meta: MetaInfo,
}

/// A record of the message stream with only the keys the converters use.
/// Every other key (`idx` in whatever shape, `damaged`, `raw`, ...) is
/// ignored, so the stream may grow without breaking them.
#[derive(Deserialize)]
struct StreamRecord {
    conversation: Option<String>,
    kind: Option<String>,
    role: Option<Role>,
    timestamp: Option<String>,
    model: Option<String>,
    stop_reason: Option<String>,
    usage: Option<Usage>,
    content: Option<Vec<Block<'static>>>,
    implicit: Option<bool>,
    step_type: Option<String>,
    id: Option<String>,
    cwd: Option<String>,
    git_branch: Option<String>,
    title: Option<String>,
}

/// Collects message records into conversations and writes each, once its
/// meta record has come, in the chosen format.
pub struct Converter {
    format: Format,
    options: Options,
    current: Option<Conversation>,
    total: Report,
    conversations: u64,
}

impl Converter {
    pub fn new(format: Format, options: Options) -> Converter {
        Converter {
            format,
            options,
            current: None,
            total: Report::default(),
            conversations: 0,
        }
    }

    /// Takes one line of the message stream.
    pub fn line(&mut self, line: &[u8], out: &mut Output) -> Result<()> {
        let record: StreamRecord = serde_json::from_slice(line)
            .map_err(|e| Error::data(format!("message stream: {e}")))?;
        let id = record
            .conversation
            .clone()
            .ok_or_else(|| Error::data("message stream record has no \"conversation\""))?;
        if self.current.as_ref().is_some_and(|c| c.id != id) {
            self.write_current(out)?;
        }
        let conv = self.current.get_or_insert_with(|| Conversation {
            id,
            ..Conversation::default()
        });
        match record.kind.as_deref() {
            Some("message") => conv.messages.push(Msg {
                role: record
                    .role
                    .ok_or_else(|| Error::data("message record has no \"role\""))?,
                timestamp: record.timestamp,
                model: record.model,
                stop_reason: record.stop_reason,
                usage: record.usage,
                implicit: record.implicit == Some(true),
                step_type: record.step_type,
                content: record.content.unwrap_or_default(),
            }),
            Some("meta") => {
                conv.meta = MetaInfo {
                    id: record.id,
                    timestamp: record.timestamp,
                    cwd: record.cwd,
                    git_branch: record.git_branch,
                    title: record.title,
                    model: record.model,
                };
                self.write_current(out)?;
            }
            // A brain artifact (a plan, a task list) is no turn of the
            // conversation: neither a Messages API request nor a Claude
            // Code session has a place for it.
            Some("artifact") => {}
            other => {
                return Err(Error::data(format!(
                    "message stream record of kind {other:?}"
                )))
            }
        }
        Ok(())
    }

    fn write_current(&mut self, out: &mut Output) -> Result<()> {
        let Some(mut conv) = self.current.take() else {
            return Ok(());
        };
        let mut report = Report::default();
        let writer = self
            .format
            .writer()
            .expect("only formats with a writer are converted");
        write::write(writer, &mut conv, &self.options, &mut report, out)?;
        out.end_record()?;
        if self.options.verbose {
            eprintln!("agy-decode: conversation {}: {report}", conv.id);
        }
        self.total.merge(&report);
        self.conversations += 1;
        Ok(())
    }

    /// Writes the conversation still open (a stream cut before its meta
    /// record) and, with `--verbose`, the totals.
    pub fn finish(&mut self, out: &mut Output) -> Result<()> {
        self.write_current(out)?;
        if self.options.verbose && self.conversations > 1 {
            eprintln!(
                "agy-decode: {} conversations: {}",
                self.conversations, self.total
            );
        }
        Ok(())
    }
}

/// Where agy-decode writes: standard output for the plain stream, or an
/// in-process buffer whose message lines a [`Converter`] turns into the
/// chosen format after each input record.
pub struct Sink {
    out: Output,
    conversion: Option<Box<Conversion>>,
}

struct Conversion {
    tap: Output,
    /// What the decoder wrote into `tap`.
    captured: Captured,
    /// The start of a line whose end has not come yet.
    carry: LineCarry,
    converter: Converter,
}

impl crate::decode::store::Messages for Sink {
    fn output(&mut self) -> &mut Output {
        Sink::output(self)
    }

    fn end_record(&mut self) -> Result<()> {
        Sink::end_record(self)
    }
}

impl Sink {
    pub fn new(format: Format, options: Options, out: Output) -> Sink {
        let conversion = (format != Format::Messages).then(|| {
            let captured = Captured::default();
            Box::new(Conversion {
                tap: Output::captured(&captured),
                captured,
                carry: LineCarry::default(),
                converter: Converter::new(format, options),
            })
        });
        Sink { out, conversion }
    }

    /// What the decoder writes to.
    pub fn output(&mut self) -> &mut Output {
        match &mut self.conversion {
            None => &mut self.out,
            Some(conversion) => &mut conversion.tap,
        }
    }

    /// Call after each input record.
    pub fn end_record(&mut self) -> Result<()> {
        let Some(c) = &mut self.conversion else {
            return self.out.end_record();
        };
        c.tap.flush()?;
        let bytes = c.captured.take();
        let (converter, out) = (&mut c.converter, &mut self.out);
        c.carry
            .push(&bytes, &mut |line| converter.line(line, out))?;
        // Hand the allocation back for the next record.
        c.captured.give_back(bytes);
        Ok(())
    }

    /// Writes everything that is left.
    pub fn finish(&mut self) -> Result<()> {
        self.end_record()?;
        if let Some(c) = &mut self.conversion {
            if let Some(line) = c.carry.take_rest() {
                c.converter.line(&line, &mut self.out)?;
            }
            c.converter.finish(&mut self.out)?;
        }
        self.out.flush()
    }
}
