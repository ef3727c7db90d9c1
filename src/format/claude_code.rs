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

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::turns::{self, object, Rules, Sequenced, Stop};
use super::write::{
    millis, session_id, write_file, Session, SessionWriter, Shape, Writer, NAMESPACE,
};
use super::Report;
use crate::error::Result;
use crate::stream::message::Role;

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

/// How `--format claude-code` is written.
pub const WRITER: Writer = Writer {
    rules: Rules::DEFAULT,
    what: "session",
    shape: Shape::Session(SessionWriter {
        id: session_id,
        write: write_session,
        place,
    }),
};

/// Writes the session's lines; a conversation that ends with the user
/// gets a closing assistant turn first.
fn write_session(
    session: &Session<'_>,
    mut sequenced: Sequenced,
    report: &mut Report,
    out: &mut Vec<u8>,
) -> String {
    if sequenced.turns.last().is_some_and(|t| t.role == Role::User) {
        // Claude Code takes a session that ends with the user for an
        // interrupted turn and answers it with texts of its own.
        let mut closing = turns::Turn::new(Role::Assistant, None);
        closing.blocks.push(turns::text_block(CLOSING));
        sequenced.turns.push(closing);
        report.add(CLOSING_ADDED, 1);
    }
    write_lines(session, sequenced.turns, out)
}

/// `DIR/<slug>/<id>.jsonl`, the slug made from the project directory.
fn place(session: &Session<'_>, root: &Path, bytes: &[u8], _last: &str) -> Result<PathBuf> {
    let dir = root.join(project_slug(&session.cwd));
    let path = dir.join(format!("{}.jsonl", session.id));
    write_file(&dir, &path, bytes, session.options.force)?;
    Ok(path)
}

/// Writes the session's lines to `out`, dropping each turn once written;
/// returns the time of the last.
fn write_lines(session: &Session<'_>, turns: Vec<turns::Turn>, out: &mut Vec<u8>) -> String {
    let (conv, cwd) = (session.conv, session.cwd.as_str());
    let mut clock = session.start.clone();
    let session = session.id.as_str();
    let default_model = conv.meta.model.as_deref().unwrap_or("agy");
    let mut parent = Value::Null;
    for (i, mut turn) in turns.into_iter().enumerate() {
        if let Some(t) = turn.timestamp.as_deref().and_then(millis) {
            clock = t;
        }
        let uuid = crate::id::v5(&NAMESPACE, format!("{session}/line/{i}").as_bytes()).to_string();
        let (role, implicit) = (turn.role, turn.implicit);
        let message = match role {
            Role::Assistant => {
                let usage = turn.usage.take().unwrap_or_default();
                let model: Value = turn.model.as_deref().unwrap_or(default_model).into();
                let stop = match turn.stop() {
                    Stop::Calls => "tool_use",
                    Stop::MaxTokens => "max_tokens",
                    Stop::End => "end_turn",
                };
                let id = crate::id::v5(&NAMESPACE, format!("{session}/message/{i}").as_bytes());
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
    clock
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
}
