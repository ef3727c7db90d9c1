//! What every writer of `agy-decode --format` shares, so that a format is
//! one file that says only what its output looks like.
//!
//! A [`Writer`] names its turn rules and its shape; [`write()`] does the
//! rest, the same way for every format: it sequences the conversation by
//! [`super::turns`] (with the `--thinking` of the command line), and for a
//! session of another CLI it settles the session id, the project directory
//! and the start time ([`Session`]), writes the session to standard output
//! or, with `--out-dir`, hands its bytes to the format to put where that
//! CLI looks ([`SessionWriter::place`]) and prints the path.
//! `--verbose` counting is the [`Report`] every step adds to, which
//! [`super::Converter`] prints.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use uuid::Uuid;

use super::turns::{self, Rules, Sequenced};
use super::{Conversation, Options, Report};
use crate::error::{Error, Result};
use crate::stream::io::Output;
use crate::time::Timestamp;

/// How one format is written.
pub struct Writer {
    /// The turn rules of the format; `thinking` is taken from the options.
    pub rules: Rules,
    /// What a conversation becomes ("request", "session"), for the warning
    /// when none of it is left.
    pub what: &'static str,
    pub shape: Shape,
}

/// What a format writes per conversation.
pub enum Shape {
    /// A line on standard output (a Messages API request): no session, no
    /// `--out-dir`.
    Line(fn(&Conversation, Sequenced, &mut Report, &mut Vec<u8>)),
    /// A session another CLI resumes.
    Session(SessionWriter),
}

/// A format that is another CLI's session.
pub struct SessionWriter {
    /// The session id of a conversation id.
    pub id: fn(&str) -> String,
    /// Writes the session into the buffer; returns the time of its last
    /// entry, as [`millis`] writes it.
    pub write: fn(&Session<'_>, Sequenced, &mut Report, &mut Vec<u8>) -> String,
    /// With `--out-dir ROOT`: writes the session's bytes where the CLI
    /// looks under ROOT (`last` being what `write` returned) and returns
    /// the path written.
    pub place: fn(session: &Session<'_>, root: &Path, bytes: &[u8], last: &str) -> Result<PathBuf>,
}

/// A conversation on its way to being a session, with what every session
/// format needs of it.
pub struct Session<'a> {
    pub conv: &'a Conversation,
    pub options: &'a Options,
    /// The session id ([`SessionWriter::id`] of the conversation's).
    pub id: String,
    /// The project directory ([`project_dir`]).
    pub cwd: String,
    /// When the session starts ([`start_millis`]).
    pub start: String,
}

/// Writes `conv` with `writer`: a line, or a session to `out` or, with
/// `--out-dir`, to its file (whose path then goes to `out`). Nothing is
/// written, and it is said on stderr, when no turn is left.
pub fn write(
    writer: &Writer,
    conv: &mut Conversation,
    options: &Options,
    report: &mut Report,
    out: &mut Output,
) -> Result<()> {
    let rules = Rules {
        thinking: options.thinking,
        ..writer.rules
    };
    let Some(sequenced) = turns::sequence_conversation(conv, rules, report, writer.what) else {
        return Ok(());
    };
    let session_writer = match &writer.shape {
        Shape::Line(line) => {
            line(conv, sequenced, report, out.buf());
            return Ok(());
        }
        Shape::Session(session_writer) => session_writer,
    };
    let session = Session {
        id: (session_writer.id)(&conv.id),
        cwd: project_dir(conv, options)?,
        start: start_millis(conv, &sequenced.turns),
        conv,
        options,
    };
    let Some(root) = &options.out_dir else {
        (session_writer.write)(&session, sequenced, report, out.buf());
        return Ok(());
    };
    let mut bytes = Vec::new();
    let last = (session_writer.write)(&session, sequenced, report, &mut bytes);
    let path = (session_writer.place)(&session, root, &bytes, &last)?;
    let buf = out.buf();
    buf.extend_from_slice(path.to_string_lossy().as_bytes());
    buf.push(b'\n');
    Ok(())
}

/// The namespace of the session ids derived here, and of the ids in a
/// Claude Code session.
pub(super) const NAMESPACE: Uuid = Uuid::from_u128(0x2b8e_41d6_7c0a_4f93_b5e2_19d4_a6c3_8f71);

/// The session id for a conversation: its id when that is a UUID (as
/// Claude Code, Codex and Gemini CLI require), else a UUID derived from it.
pub fn session_id(conversation: &str) -> String {
    match Uuid::parse_str(conversation) {
        Ok(uuid) if uuid.hyphenated().to_string() == conversation => conversation.to_string(),
        _ => crate::id::v5(&NAMESPACE, conversation.as_bytes()).to_string(),
    }
}

/// The directory the session belongs to, as a real path when it exists
/// here (Claude Code resolves symbolic links before making the slug).
pub fn project_dir(conv: &Conversation, options: &Options) -> Result<String> {
    let dir = match options.cwd.as_ref().or(conv.meta.cwd.as_ref()) {
        Some(dir) => dir.clone(),
        None => {
            let here = std::env::current_dir()
                .map_err(|e| Error::io("the current directory", e))?
                .to_string_lossy()
                .into_owned();
            crate::error::warn(
                "agy-decode",
                format_args!(
                    "conversation {} names no working directory; its session goes with {here}",
                    conv.id
                ),
            );
            here
        }
    };
    Ok(match fs::canonicalize(&dir) {
        Ok(real) => real.to_string_lossy().into_owned(),
        Err(_) => dir,
    })
}

/// When a session starts, as its lines write times: the meta record's
/// time, else the first turn's, else the epoch (so equal input gives equal
/// bytes). Every session format starts so.
pub fn start_millis(conv: &Conversation, turns: &[turns::Turn]) -> String {
    conv.meta
        .timestamp
        .as_deref()
        .and_then(millis)
        .or_else(|| {
            turns
                .iter()
                .find_map(|t| t.timestamp.as_deref().and_then(millis))
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".to_string())
}

/// A timestamp as the sessions write them, `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn millis(text: &str) -> Option<String> {
    let t = Timestamp::parse(text).ok()?;
    let seconds = Timestamp { nanos: 0, ..t }.format_seconds()?;
    Some(format!(
        "{}.{:03}Z",
        seconds.trim_end_matches('Z'),
        t.nanos / 1_000_000
    ))
}

/// Writes `bytes` to `path` through a temporary file in the same directory,
/// so a session is never half written; an existing session is replaced
/// only with `force` (it may hold turns its CLI added since).
pub fn write_file(dir: &Path, path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    if !force && path.exists() {
        return Err(Error::data(format!(
            "{}: a session with this id exists (--force replaces it)",
            path.display()
        )));
    }
    let temporary: PathBuf = dir.join(format!(
        ".{}.agy-decode-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let written = fs::File::create(&temporary)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| fs::rename(&temporary, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&temporary);
        return Err(Error::io(path.display(), e));
    }
    Ok(())
}

/// What `writer` writes for `conv` with `options`, and what it counted,
/// for tests to look into.
#[cfg(test)]
pub fn written(writer: &Writer, conv: &mut Conversation, options: &Options) -> (Vec<u8>, Report) {
    let captured = crate::stream::io::Captured::default();
    let mut out = Output::captured(&captured);
    let mut report = Report::default();
    write(writer, conv, options, &mut report, &mut out).expect("written");
    out.flush().expect("flushed");
    (captured.take(), report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_uuids() {
        let id = "77559890-5f01-4d48-a336-db3155aede22";
        assert_eq!(session_id(id), id);
        let derived = session_id("not-a-uuid");
        assert!(Uuid::parse_str(&derived).is_ok());
        assert_eq!(derived, session_id("not-a-uuid"));
        assert_ne!(session_id("77559890-5F01-4D48-A336-DB3155AEDE22"), id);
    }
}
