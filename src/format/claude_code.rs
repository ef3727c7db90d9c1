//! `agy-decode --format claude-code`: each conversation as a Claude Code
//! session, one JSON object per line, that `claude --resume <id>` takes up.
//!
//! What Claude Code needs of a session file (measured on 2.1.197, see the
//! man page): every line a `uuid`, a `parentUuid` naming the line before
//! (a broken chain resumes with only the last line), a timestamp; every
//! assistant turn a `message.id` of its own (equal ids are merged and
//! their content reordered) and a `message.model` (without one on the last
//! assistant line the CLI hangs); content as a list. The turns are those of
//! [`super::turns`], so Claude Code finds nothing to repair: it would drop
//! an assistant turn that holds only thinking or whose call is unanswered,
//! turn a result without a call into "(no content)", and merge
//! consecutive user lines; and a session that ends with the user is an
//! interrupted turn to it, which it answers with texts of its own, so such
//! a conversation gets a closing assistant turn ([`CLOSING`]).
//! `entrypoint` is never written: "sdk-cli" hides
//! a session from the `--resume` picker.
//!
//! Claude Code looks for a session in `~/.claude/projects/<slug>/` where
//! the slug is made from the real path of the directory it runs in
//! ([`project_slug`]); `--out-dir` writes there.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use uuid::Uuid;

use super::turns::{self, object, Rules};
use super::{Conversation, Options, Report};
use crate::error::{Error, Result};
use crate::stream::io::Output;
use crate::stream::message::Role;
use crate::time::Timestamp;

/// The namespace of the uuids and message ids written here.
const NAMESPACE: Uuid = Uuid::from_u128(0x2b8e_41d6_7c0a_4f93_b5e2_19d4_a6c3_8f71);

/// The assistant turn that closes a conversation ending with the user.
pub const CLOSING: &str = "(The agy conversation ends here, before the assistant answered.)";

const CLOSING_ADDED: &str = "closing assistant turns added";

/// Claude Code cuts slugs to this many UTF-16 units before adding a hash.
const SLUG_LIMIT: usize = 200;

/// Claude Code's project directory name for `path` (a real path): every
/// UTF-16 unit outside `[A-Za-z0-9]` becomes `-`; past 200 units the name
/// is cut to 200 and `-` plus the base-36 absolute value of the path's
/// Java `hashCode` is added.
pub fn project_slug(path: &str) -> String {
    let units: Vec<u16> = path.encode_utf16().collect();
    let slug: String = units
        .iter()
        .map(|&u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => b as char,
            _ => '-',
        })
        .collect();
    if units.len() <= SLUG_LIMIT {
        return slug;
    }
    let hash = units
        .iter()
        .fold(0i32, |h, &u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
    format!("{}-{}", &slug[..SLUG_LIMIT], base36(hash.unsigned_abs()))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// The session id for a conversation: its id when that is a UUID (as
/// Claude Code requires), else a UUID derived from it.
pub fn session_id(conversation: &str) -> String {
    match Uuid::parse_str(conversation) {
        Ok(uuid) if uuid.hyphenated().to_string() == conversation => conversation.to_string(),
        _ => Uuid::new_v5(&NAMESPACE, conversation.as_bytes()).to_string(),
    }
}

/// Writes `conv` as a session: to `out`, or with `--out-dir` to its file
/// (whose path then goes to `out`).
pub fn write(
    conv: &mut Conversation,
    options: &Options,
    report: &mut Report,
    out: &mut Output,
) -> Result<()> {
    let rules = Rules {
        thinking: options.thinking,
        keep_system: false,
        ..Rules::default()
    };
    let Some(mut sequenced) = turns::sequence_conversation(conv, rules, report, "session") else {
        return Ok(());
    };
    if sequenced.turns.last().is_some_and(|t| t.role == Role::User) {
        // Claude Code takes a session that ends with the user for an
        // interrupted turn and answers it with texts of its own.
        let mut closing = turns::Turn::new(Role::Assistant, None);
        closing.blocks.push(turns::text_block(CLOSING));
        sequenced.turns.push(closing);
        report.add(CLOSING_ADDED, 1);
    }
    let session = session_id(&conv.id);
    let cwd = project_dir(conv, options)?;
    let Some(root) = &options.out_dir else {
        write_lines(conv, &session, &cwd, sequenced.turns, out.buf());
        return Ok(());
    };
    let mut lines = Vec::new();
    write_lines(conv, &session, &cwd, sequenced.turns, &mut lines);
    let dir = root.join(project_slug(&cwd));
    let path = dir.join(format!("{session}.jsonl"));
    write_file(&dir, &path, &lines, options.force)?;
    let buf = out.buf();
    buf.extend_from_slice(path.to_string_lossy().as_bytes());
    buf.push(b'\n');
    Ok(())
}

/// The directory the session belongs to, as a real path when it exists
/// here (Claude Code resolves symbolic links before making the slug).
pub(super) fn project_dir(conv: &Conversation, options: &Options) -> Result<String> {
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

/// Writes the session's lines to `out`, dropping each turn once written.
fn write_lines(
    conv: &Conversation,
    session: &str,
    cwd: &str,
    turns: Vec<turns::Turn>,
    out: &mut Vec<u8>,
) {
    let mut clock = start_millis(conv, &turns);
    let default_model = conv.meta.model.as_deref().unwrap_or("agy");
    let mut parent = Value::Null;
    for (i, mut turn) in turns.into_iter().enumerate() {
        if let Some(t) = turn.timestamp.as_deref().and_then(millis) {
            clock = t;
        }
        let uuid = Uuid::new_v5(&NAMESPACE, format!("{session}/line/{i}").as_bytes()).to_string();
        let (role, implicit) = (turn.role, turn.implicit);
        let message = match role {
            Role::Assistant => {
                let usage = turn.usage.take().unwrap_or_default();
                let model: Value = turn.model.as_deref().unwrap_or(default_model).into();
                let stop = if turn.has_calls() {
                    "tool_use"
                } else if turn.stop_reason.as_deref() == Some("max_tokens") {
                    "max_tokens"
                } else {
                    "end_turn"
                };
                let id = Uuid::new_v5(&NAMESPACE, format!("{session}/message/{i}").as_bytes());
                object([
                    ("id", format!("msg_{}", id.simple()).into()),
                    ("type", "message".into()),
                    ("role", "assistant".into()),
                    ("model", model),
                    ("content", Value::Array(turn.into_content())),
                    ("stop_reason", stop.into()),
                    ("stop_sequence", Value::Null),
                    (
                        "usage",
                        object([
                            ("input_tokens", usage.input_tokens.unwrap_or(0).into()),
                            (
                                "cache_creation_input_tokens",
                                usage.cache_creation_input_tokens.unwrap_or(0).into(),
                            ),
                            (
                                "cache_read_input_tokens",
                                usage.cache_read_input_tokens.unwrap_or(0).into(),
                            ),
                            ("output_tokens", usage.output_tokens.unwrap_or(0).into()),
                        ]),
                    ),
                ])
            }
            _ => object([
                ("role", "user".into()),
                ("content", Value::Array(turn.into_content())),
            ]),
        };
        let mut line = serde_json::Map::new();
        line.insert("parentUuid".into(), parent);
        line.insert("isSidechain".into(), false.into());
        line.insert("userType".into(), "external".into());
        line.insert("cwd".into(), cwd.into());
        line.insert("sessionId".into(), session.into());
        if let Some(branch) = &conv.meta.git_branch {
            line.insert("gitBranch".into(), branch.as_str().into());
        }
        let kind = if role == Role::Assistant {
            "assistant"
        } else {
            "user"
        };
        line.insert("type".into(), kind.into());
        line.insert("message".into(), message);
        if role == Role::User && implicit {
            line.insert("isMeta".into(), true.into());
        }
        line.insert("uuid".into(), uuid.as_str().into());
        line.insert("timestamp".into(), clock.as_str().into());
        serde_json::to_writer(&mut *out, &Value::Object(line))
            .expect("serializing to a Vec cannot fail");
        out.push(b'\n');
        parent = Value::String(uuid);
    }
    if let Some(title) = conv.meta.title.as_deref().filter(|t| !t.trim().is_empty()) {
        let line = object([
            ("type", "custom-title".into()),
            ("customTitle", title.trim().into()),
            ("sessionId", session.into()),
        ]);
        serde_json::to_writer(&mut *out, &line).expect("serializing to a Vec cannot fail");
        out.push(b'\n');
    }
}

/// When a session starts, as its lines write times: the meta record's
/// time, else the first turn's, else the epoch (so equal input gives equal
/// bytes). Claude Code, Codex and Gemini CLI sessions all start so.
pub(super) fn start_millis(conv: &Conversation, turns: &[turns::Turn]) -> String {
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

/// A timestamp as Claude Code writes them, `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub(super) fn millis(text: &str) -> Option<String> {
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
/// only with `force` (it may hold turns Claude Code added since).
pub(super) fn write_file(dir: &Path, path: &Path, bytes: &[u8], force: bool) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_claude_code() {
        assert_eq!(project_slug("/tmp/ccx/work"), "-tmp-ccx-work");
        assert_eq!(project_slug("/home/me/my_repo.rs"), "-home-me-my-repo-rs");
        // One unit per UTF-16 unit: an astral character is two dashes.
        assert_eq!(project_slug("/é/😀"), "-----");
        // Past 200 units: cut, then "-" and the base 36 of |hashCode|; the
        // expected value is what Claude Code's own function gives (run
        // under node).
        let long = format!("/{}", "a".repeat(250));
        assert_eq!(project_slug(&long), format!("-{}-feo44x", "a".repeat(199)));
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
        assert_eq!(base36(i32::MIN.unsigned_abs()), "zik0zk");
    }

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
