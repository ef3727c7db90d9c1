//! `agy-decode --format gemini-cli`: each conversation as a Gemini CLI
//! session file, one JSON object per line, that `gemini --resume <id>`
//! takes up.
//!
//! What Gemini CLI (0.61.0, see the man page) needs of a session file:
//! * Line 1 is a header with `sessionId` and `projectHash` (the SHA-256 of
//!   the project directory, [`project_hash`]); without either the file is
//!   not a session at all. `startTime`, `lastUpdated` and `kind: "main"`
//!   complete it, and `summary` is the title the session list shows.
//! * Then one record per turn, `{id, timestamp, type, content}`, `type`
//!   being `user` or `gemini`. The CLI drops a user record that is empty
//!   or starts with `/`, `?`, `<session_context>` or `<hook_context>`
//!   (its own commands and context), so such a text gets a zero-width
//!   space (U+200B) before it ([`SHIELD`]); the model sees it, people do
//!   not.
//! * A `gemini` record holds its calls in `toolCalls`, each with its
//!   result, and the CLI sends every result it finds there. The CLI itself
//!   also writes each result again as a user record and then sends it
//!   twice; here it is written once, in `toolCalls`. A call without a
//!   result would be sent as it is and refused by the API, so the turns of
//!   [`super::turns`] give every call a result.
//! * Thoughts are kept (`thoughts`) but never sent. A tool call's thought
//!   signature reaches the API only when the call is also written as a
//!   content part `{"functionCall": …, "thoughtSignature": …}`, so a turn
//!   whose calls carry agy's signatures has its calls in `content` too
//!   (the CLI then takes the calls from there, and only the results from
//!   `toolCalls`). A thinking signature goes on the turn's first text part.
//!   agy's models are Gemini models, so these may still be valid.
//!
//! Tool calls under the common names of `crate::agy::tools` (Bash, Read, Write,
//! Edit) are written under Gemini CLI's own names ([`TOOLS`]), so that the
//! model and the CLI recognise them; every other call keeps its name.
//!
//! Gemini CLI looks for a project's sessions in
//! `~/.gemini/tmp/<slug>/chats/`, the slug registered for the directory in
//! `~/.gemini/projects.json`; `--out-dir` writes there and registers the
//! project when it is new ([`super::gemini_cli_project`]).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::turns::{object, Kept, Rules, Sequenced, Turn};
use super::write::{millis, session_id, Session, SessionWriter, Shape, Writer};
use super::{gemini_cli_project, Conversation, Report};
use crate::error::Result;
use crate::stream::message::{self, Role};

/// The namespace of the record ids written here.
const NAMESPACE: Uuid = Uuid::from_u128(0x6f0d_29a4_b1e3_4c57_8a9e_2d71_c05b_3e68);

/// Put before a user text that Gemini CLI would otherwise skip on resume.
pub const SHIELD: char = '\u{200B}';

/// Labels `--verbose` counts under.
pub mod change {
    pub const SHIELDED: &str = "user texts Gemini CLI would skip, given a leading U+200B";
    pub const RENAMED: &str = "tool calls renamed to Gemini CLI's tools";
    pub const SIGNATURES_DROPPED: &str = "signatures that are not hex or base64 dropped";
    pub const THINKING_SIGNATURES_DROPPED: &str =
        "thinking signatures of turns without text dropped";
    pub const MEDIA_NOTES: &str = "images and documents by URL replaced by a note";
}

/// A tool Gemini CLI has under another name than agy's common one, and
/// the argument keys that differ.
pub struct GeminiTool {
    pub gemini: &'static str,
    pub common: &'static str,
    /// (Gemini CLI's key, the common key).
    pub keys: &'static [(&'static str, &'static str)],
}

/// Gemini CLI's shell, read, write and edit tools. A call is renamed only
/// when none of the keys it would get exists already, so the mapping is
/// exactly invertible; `gemini_cli_read` maps back with the same table.
pub const TOOLS: &[GeminiTool] = &[
    GeminiTool {
        gemini: "run_shell_command",
        common: "Bash",
        keys: &[("dir_path", "workdir")],
    },
    GeminiTool {
        gemini: "read_file",
        common: "Read",
        keys: &[],
    },
    GeminiTool {
        gemini: "write_file",
        common: "Write",
        keys: &[],
    },
    GeminiTool {
        gemini: "replace",
        common: "Edit",
        keys: &[],
    },
];

/// Renames a call from one side of [`TOOLS`] to the other:
/// `to_gemini` from the common name, else from Gemini CLI's. `None` when
/// the tool is not in the table or a renamed key would collide.
pub fn rename_call(
    name: &str,
    args: &Map<String, Value>,
    to_gemini: bool,
) -> Option<(String, Map<String, Value>)> {
    let tool = TOOLS.iter().find(|t| {
        if to_gemini {
            t.common == name
        } else {
            t.gemini == name
        }
    })?;
    let key_map = |key: &str| {
        tool.keys.iter().find_map(|&(g, c)| {
            let (from, to) = if to_gemini { (c, g) } else { (g, c) };
            (from == key).then_some(to)
        })
    };
    let mut out = Map::new();
    for (key, value) in args {
        let new_key = key_map(key).unwrap_or(key);
        if new_key != key && args.contains_key(new_key) {
            return None;
        }
        if out.insert(new_key.to_string(), value.clone()).is_some() {
            return None;
        }
    }
    let new_name = if to_gemini { tool.gemini } else { tool.common };
    Some((new_name.to_string(), out))
}

/// The `projectHash` of a project directory: the SHA-256 of its path, as
/// lowercase hex (Gemini CLI's `getProjectHash`).
pub fn project_hash(dir: &str) -> String {
    hex::encode(Sha256::digest(dir.as_bytes()))
}

/// A signature of the message stream (hex of the signed bytes) as Gemini's
/// `thoughtSignature` (base64 of them). A value that is not hex (the
/// string form older agy versions kept) is taken as base64 already when it
/// is that, padded or not, and written padded; else `None`.
pub fn signature_to_base64(signature: &str) -> Option<String> {
    if let Ok(bytes) = hex::decode(signature) {
        return Some(message::base64_encode(&bytes));
    }
    let mut padded = signature.to_string();
    while !padded.len().is_multiple_of(4) {
        padded.push('=');
    }
    message::base64_decode(&padded).map(|bytes| message::base64_encode(&bytes))
}

/// True when Gemini CLI would skip a user record whose text starts so
/// (its `isIgnoredUserContent`, on the trimmed text).
pub fn is_skipped_text(text: &str) -> bool {
    let trimmed = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    trimmed.is_empty()
        || trimmed.starts_with('/')
        || trimmed.starts_with('?')
        || trimmed.starts_with("<session_context>")
        || trimmed.starts_with("<hook_context>")
}

/// How `--format gemini-cli` is written.
pub const WRITER: Writer = Writer {
    rules: Rules {
        kept: Kept::Thoughts,
        ..Rules::DEFAULT
    },
    what: "session",
    shape: Shape::Session(SessionWriter {
        id: session_id,
        write: write_session,
        place,
    }),
};

/// `DIR/tmp/<slug>/chats/session-….jsonl`, the project registered; says
/// on stderr when Gemini CLI would delete the session at its next start.
fn place(session: &Session<'_>, home: &Path, bytes: &[u8], last: &str) -> Result<PathBuf> {
    let path = gemini_cli_project::write_session(
        home,
        &session.cwd,
        &session.id,
        &session.start,
        bytes,
        session.options.force,
    )?;
    gemini_cli_project::warn_if_expiring(home, &path, last);
    Ok(path)
}

/// The session's lines; returns its last time, as written in the header.
fn write_session(
    session: &Session<'_>,
    sequenced: Sequenced,
    report: &mut Report,
    lines: &mut Vec<u8>,
) -> String {
    let (conv, project) = (session.conv, session.cwd.as_str());
    let start = &session.start;
    let mut clock = start.clone();
    let mut records: Vec<Map<String, Value>> = Vec::new();
    // Where each call went: its id → (record, call) in `records`.
    let mut calls: Vec<(String, usize, usize)> = Vec::new();
    for (i, turn) in sequenced.turns.into_iter().enumerate() {
        if let Some(t) = turn.timestamp.as_deref().and_then(millis) {
            clock = t;
        }
        let id =
            crate::id::v5(&NAMESPACE, format!("{}/record/{i}", session.id).as_bytes()).to_string();
        match turn.role {
            Role::Assistant => {
                let record =
                    gemini_record(turn, &id, &clock, conv, report, &mut calls, records.len());
                records.push(record);
            }
            _ => {
                for result in &turn.results {
                    attach_result(result, &mut records, &calls, &clock);
                }
                if let Some(record) = user_record(&turn.blocks, &id, &clock, report) {
                    records.push(record);
                }
            }
        }
    }
    let mut header = Map::new();
    header.insert("sessionId".into(), session.id.as_str().into());
    header.insert("projectHash".into(), project_hash(project).into());
    header.insert("startTime".into(), start.as_str().into());
    header.insert("lastUpdated".into(), clock.as_str().into());
    if let Some(title) = conv.meta.title.as_deref().filter(|t| !t.trim().is_empty()) {
        header.insert("summary".into(), title.trim().into());
    }
    header.insert("kind".into(), "main".into());
    for line in std::iter::once(header).chain(records) {
        serde_json::to_writer(&mut *lines, &Value::Object(line))
            .expect("serializing to a Vec cannot fail");
        lines.push(b'\n');
    }
    clock
}

/// An assistant turn as a `gemini` record; its calls are noted in
/// `calls` so that the results of the next user turn can join them.
fn gemini_record(
    turn: Turn,
    id: &str,
    clock: &str,
    conv: &Conversation,
    report: &mut Report,
    calls: &mut Vec<(String, usize, usize)>,
    at: usize,
) -> Map<String, Value> {
    let model = turn.model.clone().or_else(|| conv.meta.model.clone());
    let usage = turn.usage.clone();
    let mut thoughts = Vec::new();
    let mut thinking_signature = None;
    let mut texts: Vec<Value> = Vec::new();
    let mut call_parts: Vec<Value> = Vec::new();
    let mut tool_calls: Vec<Value> = Vec::new();
    let mut signed_calls = false;
    for block in turn.into_content() {
        let text = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_string);
        match block.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                let thinking = text("thinking").unwrap_or_default();
                if !thinking.trim().is_empty() {
                    thoughts.push(object([
                        ("subject", "".into()),
                        ("description", thinking.into()),
                        ("timestamp", clock.into()),
                    ]));
                }
                if let Some(signature) = text("signature") {
                    match signature_to_base64(&signature) {
                        Some(s) => thinking_signature = Some(s),
                        None => report.add(change::SIGNATURES_DROPPED, 1),
                    }
                }
            }
            Some("tool_use") => {
                let call_id = text("id").unwrap_or_default();
                let name = text("name").unwrap_or_default();
                let input = block.get("input").cloned().unwrap_or_default();
                let (name, args) = match input.as_object().and_then(|a| rename_call(&name, a, true))
                {
                    Some((renamed, args)) => {
                        report.add(change::RENAMED, 1);
                        (renamed, Value::Object(args))
                    }
                    None => (name, input),
                };
                let mut part = Map::new();
                part.insert(
                    "functionCall".into(),
                    object([
                        ("id", call_id.as_str().into()),
                        ("name", name.as_str().into()),
                        ("args", args.clone()),
                    ]),
                );
                if let Some(signature) = text("signature") {
                    match signature_to_base64(&signature) {
                        Some(s) => {
                            part.insert("thoughtSignature".into(), s.into());
                            signed_calls = true;
                        }
                        None => report.add(change::SIGNATURES_DROPPED, 1),
                    }
                }
                call_parts.push(Value::Object(part));
                calls.push((call_id.clone(), at, tool_calls.len()));
                tool_calls.push(object([
                    ("id", call_id.into()),
                    ("name", name.into()),
                    ("args", args),
                ]));
            }
            // Text, and what turns made text of.
            _ => texts.push(object([("text", text("text").unwrap_or_default().into())])),
        }
    }
    if let Some(signature) = thinking_signature {
        match texts.first_mut().and_then(Value::as_object_mut) {
            Some(first) => {
                first.insert("thoughtSignature".into(), signature.into());
            }
            None => report.add(change::THINKING_SIGNATURES_DROPPED, 1),
        }
    }
    let plain_text = texts.len() == 1 && texts[0].as_object().is_some_and(|t| t.len() == 1);
    let content = if signed_calls {
        texts.extend(call_parts);
        Value::Array(texts)
    } else if plain_text {
        texts[0]["text"].clone()
    } else if texts.is_empty() {
        "".into()
    } else {
        Value::Array(texts)
    };
    let mut record = Map::new();
    record.insert("id".into(), id.into());
    record.insert("timestamp".into(), clock.into());
    record.insert("type".into(), "gemini".into());
    record.insert("content".into(), content);
    record.insert("thoughts".into(), Value::Array(thoughts));
    if let Some(usage) = usage {
        // Gemini's prompt count holds the cached tokens, which agy's input
        // count leaves out (agy-store(5), USAGE); its output count leaves
        // out the thoughts, which agy's holds, and how many of those there
        // were is not known here: all of it goes to `output`.
        let cached = usage.cache_read_input_tokens.unwrap_or(0);
        let input = usage.input_tokens.unwrap_or(0) + cached;
        let output = usage.output_tokens.unwrap_or(0);
        record.insert(
            "tokens".into(),
            object([
                ("input", input.into()),
                ("output", output.into()),
                ("cached", cached.into()),
                ("thoughts", 0.into()),
                ("tool", 0.into()),
                ("total", (input + output).into()),
            ]),
        );
    }
    if let Some(model) = model {
        record.insert("model".into(), model.into());
    }
    if !tool_calls.is_empty() {
        record.insert("toolCalls".into(), Value::Array(tool_calls));
    }
    record
}

/// Puts a `tool_result` block of the turns into the `toolCalls` entry of
/// its call, as Gemini CLI writes a result.
fn attach_result(
    result: &Value,
    records: &mut [Map<String, Value>],
    calls: &[(String, usize, usize)],
    clock: &str,
) {
    let id = result
        .get("tool_use_id")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(&(_, at, index)) = calls.iter().rev().find(|(call, _, _)| call == id) else {
        // The turns answer only calls of the turn before.
        unreachable!("a result of the turns answers a call of the turn before")
    };
    let text = result.get("content").and_then(Value::as_str).unwrap_or("");
    let error = result.get("is_error").and_then(Value::as_bool) == Some(true);
    let Some(call) = records[at]
        .get_mut("toolCalls")
        .and_then(|c| c.get_mut(index))
        .and_then(Value::as_object_mut)
    else {
        unreachable!("each call noted has its toolCalls entry")
    };
    let name = call.get("name").cloned().unwrap_or_default();
    let response = if error {
        object([("error", text.into())])
    } else {
        object([("output", text.into())])
    };
    let part = object([(
        "functionResponse",
        object([("id", id.into()), ("name", name), ("response", response)]),
    )]);
    call.insert("result".into(), Value::Array(vec![part]));
    call.insert(
        "status".into(),
        if error { "error" } else { "success" }.into(),
    );
    call.insert("timestamp".into(), clock.into());
}

/// A user turn's blocks (its results are in the calls already) as a `user`
/// record, or `None` when nothing is left.
fn user_record(
    blocks: &[Value],
    id: &str,
    clock: &str,
    report: &mut Report,
) -> Option<Map<String, Value>> {
    let mut parts = Vec::new();
    for block in blocks {
        let field = |key: &str| block.get(key).and_then(Value::as_str);
        let source = |key: &str| {
            block
                .get("source")
                .and_then(|s| s.get(key))
                .and_then(Value::as_str)
        };
        match (field("type"), source("type")) {
            (Some("image" | "document"), Some("base64")) => {
                parts.push(object([(
                    "inlineData",
                    object([
                        ("mimeType", source("media_type").unwrap_or("").into()),
                        ("data", source("data").unwrap_or("").into()),
                    ]),
                )]));
            }
            (Some("document"), Some("text")) => {
                parts.push(object([("text", source("data").unwrap_or("").into())]));
            }
            (Some(kind @ ("image" | "document")), _) => {
                report.add(change::MEDIA_NOTES, 1);
                let note = format!(
                    "[{kind} not included: {}]",
                    source("url").unwrap_or("no data")
                );
                parts.push(object([("text", note.into())]));
            }
            _ => parts.push(object([("text", field("text").unwrap_or("").into())])),
        }
    }
    let first = parts.first_mut()?.as_object_mut().expect("an object");
    if let Some(Value::String(text)) = first.get_mut("text") {
        if is_skipped_text(text) {
            text.insert(0, SHIELD);
            report.add(change::SHIELDED, 1);
        }
    }
    let mut record = Map::new();
    record.insert("id".into(), id.into());
    record.insert("timestamp".into(), clock.into());
    record.insert("type".into(), "user".into());
    record.insert("content".into(), Value::Array(parts));
    Some(record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::turns::{change as turn_change, NO_RESULT};
    use crate::format::{write, MetaInfo, Msg, Options};
    use crate::stream::message::{Block, ResultContent, ToolInput};
    use serde_json::json;
    use std::borrow::Cow;

    fn msg(role: Role, content: Vec<Block<'static>>) -> Msg {
        Msg {
            role,
            timestamp: Some("2026-11-02T08:00:00Z".into()),
            content,
            ..Msg::default()
        }
    }

    /// The session lines written for `messages`, and what was counted.
    fn session(messages: Vec<Msg>) -> (Vec<Value>, Report) {
        let mut conv = Conversation {
            id: "a1b2c3d4-0000-4000-8000-000000000001".into(),
            messages,
            meta: MetaInfo {
                cwd: Some("/nowhere/project".into()),
                ..Default::default()
            },
        };
        let (bytes, report) = write::written(&WRITER, &mut conv, &Options::default());
        let lines = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        (lines, report)
    }

    #[test]
    fn results_are_written_once_and_every_call_has_one() {
        let call = |id: &str, signature: Option<&str>| Block::ToolUse {
            id: Cow::Owned(id.into()),
            name: "Bash".into(),
            input: ToolInput::Object(vec![("command".into(), json!("ls"))]),
            signature: signature.map(|s| Cow::Owned(s.into())),
        };
        let (lines, report) = session(vec![
            msg(Role::User, vec![Block::text("/tmp is full".into())]),
            msg(
                Role::Assistant,
                vec![
                    Block::Thinking {
                        thinking: "Look first.".into(),
                        signature: Some("0a0b".into()),
                    },
                    Block::text("Looking.".into()),
                    call("c1", Some("01ff")),
                    call("c2", None),
                ],
            ),
            msg(
                Role::User,
                vec![Block::ToolResult {
                    tool_use_id: "c1".into(),
                    content: ResultContent::Text("a".into()),
                    is_error: false,
                }],
            ),
            msg(Role::Assistant, vec![Block::text("Done.".into())]),
        ]);
        assert_eq!(lines.len(), 4, "{lines:#?}");
        assert_eq!(lines[0]["projectHash"], project_hash("/nowhere/project"));
        assert_eq!(
            lines[1]["content"],
            json!([{"text": "\u{200B}/tmp is full"}])
        );
        let gemini = &lines[2];
        assert_eq!(
            gemini["content"],
            json!([
                {"text": "Looking.", "thoughtSignature": "Cgs="},
                {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {"command": "ls"}},
                 "thoughtSignature": "Af8="},
                {"functionCall": {"id": "c2", "name": "run_shell_command", "args": {"command": "ls"}}}
            ])
        );
        assert_eq!(gemini["thoughts"][0]["description"], "Look first.");
        let results: Vec<&Value> = gemini["toolCalls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["result"][0]["functionResponse"]["response"])
            .collect();
        assert_eq!(
            results,
            [&json!({"output": "a"}), &json!({"error": NO_RESULT})]
        );
        assert_eq!(gemini["toolCalls"][1]["status"], "error");
        // No user record repeats the results.
        assert_eq!(lines[3]["type"], "gemini");
        assert_eq!(report.count(change::SHIELDED), 1);
        assert_eq!(report.count(turn_change::UNANSWERED), 1);
        assert_eq!(report.count(turn_change::THOUGHTS), 1);
        assert_eq!(report.count(change::RENAMED), 2);
        // Same conversation, same bytes.
        assert_eq!(
            session(vec![msg(Role::User, vec![Block::text("hi".into())])]).0,
            session(vec![msg(Role::User, vec![Block::text("hi".into())])]).0
        );
    }

    #[test]
    fn project_hash_is_sha256_of_the_path() {
        // The header of a session the real Gemini CLI 0.61.0 wrote in
        // /tmp/gi/work.
        assert_eq!(
            project_hash("/tmp/gi/work"),
            "1059799c6af35b355a5fd23382719b7324ac83c8b77d96c6dbebdc86292fd734"
        );
    }

    #[test]
    fn calls_rename_both_ways_or_not_at_all() {
        let args = json!({"command": "ls", "workdir": "/w"});
        let (name, gemini) = rename_call("Bash", args.as_object().unwrap(), true).unwrap();
        assert_eq!(name, "run_shell_command");
        assert_eq!(
            Value::Object(gemini.clone()),
            json!({"command": "ls", "dir_path": "/w"})
        );
        let (back, common) = rename_call(&name, &gemini, false).unwrap();
        assert_eq!((back.as_str(), Value::Object(common)), ("Bash", args));
        // A key that would collide leaves the call as it is.
        let both = json!({"workdir": "/a", "dir_path": "/b"});
        assert!(rename_call("Bash", both.as_object().unwrap(), true).is_none());
        assert!(rename_call("Grep", &Map::new(), true).is_none());
    }

    #[test]
    fn signatures_and_skipped_texts() {
        assert_eq!(signature_to_base64("00ff").as_deref(), Some("AP8="));
        assert_eq!(
            signature_to_base64("c2lnbmF0dXJl").as_deref(),
            Some("c2lnbmF0dXJl")
        );
        assert_eq!(
            signature_to_base64("c2lnbmF0dXJlcw").as_deref(),
            Some("c2lnbmF0dXJlcw==")
        );
        assert_eq!(signature_to_base64("not base64!"), None);
        for text in [
            "/help",
            "  ?x",
            "<session_context>",
            "\u{feff}<hook_context>a",
            " \n",
        ] {
            assert!(is_skipped_text(text), "{text:?}");
        }
        assert!(!is_skipped_text("a/b"));
        assert!(!is_skipped_text("\u{200B}/help"));
    }
}
