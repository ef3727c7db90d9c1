//! `agy-encode --format claude-code`: a Claude Code session file as message
//! records for the ordinary encoder.
//!
//! A session file is a tree, not a list: every line names its parent, a
//! rewind starts a branch, and the conversation is the branch that ends at
//! the last user or assistant line. Claude Code also writes what is not a
//! turn at all. What is read, and how (see also the man page):
//! * The branch is followed from that last line up through `parentUuid`;
//!   at a compact boundary (whose parent is null) it goes on through
//!   `logicalParentUuid`, so the turns before a compaction are kept, and
//!   the summary Claude Code wrote comes after them as an implicit user
//!   message.
//! * Parallel calls are one assistant message written as one line per
//!   block, all with the same `message.id`, and their results hang off
//!   different lines, so some of them are off the branch. Lines of a
//!   message the branch holds, and results that answer its calls, are
//!   taken in too, and lines of one `message.id` are one assistant message
//!   however they interleave with results.
//! * User lines Claude Code wrote itself (`isMeta`, the compaction
//!   summary) are implicit; a prompt queued while the agent worked (an
//!   attachment) is a user message; other attachments (tool and skill
//!   listings, files and reminders Claude Code injects) and system lines
//!   are left out, as are sidechains (subagent transcripts).
//! * Assistant API errors that Claude Code wrote as assistant text become
//!   ERROR_MESSAGE system messages; thinking keeps its text but not its
//!   signature, which only Anthropic can verify.
//! * The title is the last `custom-title`, else `ai-title`, else `summary`.
//!
//! Tool names stay as Claude Code wrote them; the encoder maps Bash, Read,
//! Write, Edit and MultiEdit back to agy's tools (`crate::agy::tools`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{Conversation, MetaInfo, Msg, Report};
use crate::error::{Error, Result};
use crate::stream::io::Lines;
use crate::stream::message::{self, Block, ImageSource, ResultContent, Role, ToolInput, Usage};

/// Labels of what reading leaves out.
pub mod dropped {
    pub const ATTACHMENTS: &str = "attachments left out";
    pub const SYSTEM_LINES: &str = "system lines left out";
    pub const SIDECHAIN: &str = "sidechain (subagent) lines left out";
    pub const OFF_BRANCH: &str = "lines of abandoned branches left out";
    pub const BLOCKS: &str = "content blocks of other kinds left out";
    pub const SIGNATURES: &str = "thinking signatures left out";
}

/// One line of the session with where it was.
struct Entry {
    line: u64,
    value: Value,
}

impl Entry {
    fn str(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Value::as_str)
    }

    fn kind(&self) -> &str {
        self.str("type").unwrap_or("")
    }

    fn is_sidechain(&self) -> bool {
        self.value.get("isSidechain").and_then(Value::as_bool) == Some(true)
    }

    fn flag(&self, key: &str) -> bool {
        self.value.get(key).and_then(Value::as_bool) == Some(true)
    }

    fn is_turn(&self) -> bool {
        matches!(self.kind(), "user" | "assistant") && !self.is_sidechain()
    }

    fn message(&self) -> Option<&Value> {
        self.value.get("message")
    }

    fn message_id(&self) -> Option<&str> {
        self.message()?.get("id")?.as_str()
    }

    fn content(&self) -> Vec<&Value> {
        match self.message().and_then(|m| m.get("content")) {
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            Some(other @ Value::String(_)) => vec![other],
            _ => Vec::new(),
        }
    }
}

/// Reads one session from `lines`; the conversation id is the session
/// id. Warnings (a broken chain) go to stderr.
pub fn read(lines: &mut Lines, report: &mut Report) -> Result<Conversation> {
    let name = lines.name().to_string();
    let mut entries = Vec::new();
    while let Some(line) = lines.next_line()? {
        let parsed = serde_json::from_slice::<Value>(line);
        let value =
            parsed.map_err(|e| Error::data(format!("{}: not a JSON line: {e}", lines.place())))?;
        if !value.is_object() {
            return Err(Error::data(format!(
                "{}: a session line is a JSON object",
                lines.place()
            )));
        }
        entries.push(Entry {
            line: lines.line_number(),
            value,
        });
    }
    conversation(&entries, &name, report)
}

/// The conversation of the session in `entries`.
fn conversation(entries: &[Entry], name: &str, report: &mut Report) -> Result<Conversation> {
    let Some(leaf) = entries.iter().rposition(Entry::is_turn) else {
        return Err(Error::data(format!(
            "{name}: no user or assistant line outside sidechains"
        )));
    };
    let session = entries[leaf]
        .str("sessionId")
        .map(str::to_string)
        .or_else(|| {
            std::path::Path::new(name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "claude-code".to_string());
    let included = branch(entries, leaf, name);
    let mut messages: Vec<Msg> = Vec::new();
    // message.id → the index of that assistant message.
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, entry) in entries.iter().enumerate() {
        if !included.contains(&i) {
            if entry.is_sidechain() {
                report.add(dropped::SIDECHAIN, 1);
            } else if entry.is_turn() || entry.kind() == "attachment" {
                report.add(dropped::OFF_BRANCH, 1);
            }
            continue;
        }
        match entry.kind() {
            "user" => messages.push(user_message(entry, report)),
            "assistant" if entry.flag("isApiErrorMessage") => {
                messages.push(api_error_message(entry))
            }
            "assistant" => {
                let blocks = assistant_blocks(entry, report);
                match entry.message_id().and_then(|id| by_id.get(id)) {
                    Some(&at) => messages[at].content.extend(blocks),
                    None => {
                        if let Some(id) = entry.message_id() {
                            by_id.insert(id, messages.len());
                        }
                        messages.push(assistant_message(entry, blocks));
                    }
                }
            }
            "attachment" => match queued_prompt(entry) {
                Some(text) => messages.push(Msg {
                    role: Role::User,
                    timestamp: entry.str("timestamp").map(str::to_string),
                    content: vec![Block::text(Cow::Owned(text))],
                    ..Msg::default()
                }),
                None => report.add(dropped::ATTACHMENTS, 1),
            },
            "system" if entry.str("subtype") != Some("compact_boundary") => {
                report.add(dropped::SYSTEM_LINES, 1);
            }
            _ => {}
        }
    }
    let mut order: Vec<usize> = included.iter().copied().collect();
    order.sort_unstable();
    let first = |key: &str| {
        order
            .iter()
            .find_map(|&i| entries[i].str(key))
            .map(str::to_string)
    };
    let meta = MetaInfo {
        timestamp: first("timestamp"),
        cwd: first("cwd"),
        git_branch: first("gitBranch"),
        title: title(entries),
        ..MetaInfo::default()
    };
    Ok(Conversation {
        id: session,
        messages,
        meta,
    })
}

/// The lines of the conversation that ends at `leaf`, by index.
fn branch(entries: &[Entry], leaf: usize, name: &str) -> HashSet<usize> {
    let by_uuid: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((e.str("uuid")?, i)))
        .collect();
    let mut included = HashSet::new();
    let mut at = Some(leaf);
    while let Some(i) = at {
        if !included.insert(i) {
            break;
        }
        let entry = &entries[i];
        let parent = entry
            .str("parentUuid")
            .or_else(|| entry.str("logicalParentUuid"));
        at = match parent {
            None => None,
            Some(uuid) => match by_uuid.get(uuid) {
                Some(&p) => Some(p),
                None => {
                    crate::error::warn(
                        "agy-encode",
                        format_args!(
                            "{name}:{}: parent {uuid} is not in the file; the conversation starts here",
                            entry.line
                        ),
                    );
                    None
                }
            },
        };
    }
    // Parallel calls: the other lines of each assistant message on the
    // branch, then the results answering any call of those messages.
    let ids: HashSet<&str> = included
        .iter()
        .filter(|&&i| entries[i].kind() == "assistant")
        .filter_map(|&i| entries[i].message_id())
        .collect();
    for (i, entry) in entries.iter().enumerate() {
        if entry.is_turn()
            && entry.kind() == "assistant"
            && entry.message_id().is_some_and(|id| ids.contains(id))
        {
            included.insert(i);
        }
    }
    let calls: HashSet<&str> = included
        .iter()
        .filter(|&&i| entries[i].kind() == "assistant")
        .flat_map(|&i| entries[i].content())
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|b| b.get("id")?.as_str())
        .collect();
    for (i, entry) in entries.iter().enumerate() {
        if entry.is_turn()
            && entry.kind() == "user"
            && !included.contains(&i)
            && entry.content().iter().any(|b| {
                b.get("type").and_then(Value::as_str) == Some("tool_result")
                    && b.get("tool_use_id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| calls.contains(id))
            })
        {
            included.insert(i);
        }
    }
    included
}

/// The session's title: the last `custom-title`, else `ai-title`, else
/// `summary` line.
fn title(entries: &[Entry]) -> Option<String> {
    for (kind, key) in [
        ("custom-title", "customTitle"),
        ("ai-title", "aiTitle"),
        ("summary", "summary"),
    ] {
        let found = entries
            .iter()
            .rev()
            .filter(|e| e.kind() == kind)
            .find_map(|e| e.str(key))
            .filter(|t| !t.trim().is_empty());
        if let Some(title) = found {
            return Some(title.to_string());
        }
    }
    None
}

/// The prompt of a `queued_command` attachment: text the person typed
/// while the agent was busy.
fn queued_prompt(entry: &Entry) -> Option<String> {
    let attachment = entry.value.get("attachment")?;
    if attachment.get("type")?.as_str()? != "queued_command" {
        return None;
    }
    match attachment.get("prompt")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter_map(|b| b.get("text")?.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// A user line as a message.
fn user_message(entry: &Entry, report: &mut Report) -> Msg {
    let mut content = Vec::new();
    for block in entry.content() {
        if let Some(text) = block.as_str() {
            content.push(Block::text(Cow::Owned(text.to_string())));
            continue;
        }
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                content.push(Block::text(Cow::Owned(text.to_string())));
            }
            Some("tool_result") => content.push(Block::ToolResult {
                tool_use_id: Cow::Owned(
                    block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                ),
                content: result_content(block.get("content")),
                is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
            }),
            Some("image") => match source(block) {
                Some(source) => content.push(Block::Image { source }),
                None => report.add(dropped::BLOCKS, 1),
            },
            Some("document") => match source(block) {
                Some(source) => content.push(Block::Document { source }),
                None => report.add(dropped::BLOCKS, 1),
            },
            _ => report.add(dropped::BLOCKS, 1),
        }
    }
    Msg {
        role: Role::User,
        implicit: entry.flag("isMeta") || entry.flag("isCompactSummary"),
        timestamp: entry.str("timestamp").map(str::to_string),
        content,
        ..Msg::default()
    }
}

/// An assistant line as a message holding `content`.
fn assistant_message(entry: &Entry, content: Vec<Block<'static>>) -> Msg {
    let message = entry.message();
    let field = |key: &str| {
        message
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let usage = message.and_then(|m| m.get("usage")).map(|u| {
        let n = |key: &str| u.get(key).and_then(Value::as_u64);
        Usage {
            input_tokens: n("input_tokens"),
            output_tokens: n("output_tokens"),
            cache_creation_input_tokens: n("cache_creation_input_tokens"),
            cache_read_input_tokens: n("cache_read_input_tokens"),
        }
    });
    Msg {
        role: Role::Assistant,
        timestamp: entry.str("timestamp").map(str::to_string),
        // Claude Code's own texts ("No response requested.") name no
        // model anyone ran.
        model: field("model").filter(|m| m != "<synthetic>"),
        stop_reason: field("stop_reason"),
        usage: usage.filter(|u| !u.is_empty()),
        content,
        ..Msg::default()
    }
}

/// An API error Claude Code wrote as assistant text, as a system message.
fn api_error_message(entry: &Entry) -> Msg {
    let text: Vec<&str> = entry
        .content()
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str).or(b.as_str()))
        .collect();
    Msg {
        role: Role::System,
        step_type: Some("ERROR_MESSAGE".to_string()),
        timestamp: entry.str("timestamp").map(str::to_string),
        content: vec![Block::Text {
            text: Cow::Owned(text.join("\n")),
            field: Some(Cow::Borrowed("full_error")),
        }],
        ..Msg::default()
    }
}

fn assistant_blocks(entry: &Entry, report: &mut Report) -> Vec<Block<'static>> {
    let mut blocks = Vec::new();
    for block in entry.content() {
        if let Some(text) = block.as_str() {
            blocks.push(Block::text(Cow::Owned(text.to_string())));
            continue;
        }
        let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
        match block.get("type").and_then(Value::as_str) {
            Some("text") => blocks.push(Block::text(Cow::Owned(text("text").to_string()))),
            Some("thinking") => {
                if block.get("signature").is_some() {
                    report.add(dropped::SIGNATURES, 1);
                }
                if text("thinking").is_empty() {
                    continue;
                }
                blocks.push(Block::Thinking {
                    thinking: Cow::Owned(text("thinking").to_string()),
                    signature: None,
                });
            }
            Some("tool_use") => {
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                let input = match input {
                    Value::Object(map) => ToolInput::Object(map.into_iter().collect()),
                    other => ToolInput::Other(other),
                };
                blocks.push(Block::ToolUse {
                    id: Cow::Owned(text("id").to_string()),
                    name: Cow::Owned(text("name").to_string()),
                    input,
                    signature: None,
                });
            }
            _ => report.add(dropped::BLOCKS, 1),
        }
    }
    blocks
}

/// A result's content: a string as it is, a list of text blocks as their
/// text, anything else as JSON.
fn result_content(content: Option<&Value>) -> ResultContent<'static> {
    match content {
        None | Some(Value::Null) => ResultContent::default(),
        Some(Value::String(s)) => ResultContent::Text(Cow::Owned(s.clone())),
        Some(Value::Array(blocks))
            if blocks
                .iter()
                .all(|b| b.get("type").and_then(Value::as_str) == Some("text")) =>
        {
            let texts = blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str));
            ResultContent::Text(Cow::Owned(message::join_result_texts(texts)))
        }
        Some(other) => ResultContent::from_value(other.clone()),
    }
}

fn source(block: &Value) -> Option<ImageSource<'static>> {
    let source = block.get("source")?;
    let text = |key: &str| {
        source
            .get(key)
            .and_then(Value::as_str)
            .map(|s| Cow::Owned(s.to_string()))
    };
    Some(ImageSource {
        source_type: text("type")?,
        media_type: text("media_type"),
        data: text("data"),
        url: text("url"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A result of several text blocks is one text, joined by the message
    /// stream's rule (nothing between the parts), as agy-encode joins the
    /// same blocks in a message stream.
    #[test]
    fn text_blocks_of_a_result_join_as_the_message_stream_joins_them() {
        let blocks = json!([{"type": "text", "text": "x\n"}, {"type": "text", "text": "y"}]);
        let ours = result_content(Some(&blocks));
        assert_eq!(ours.to_text(), "x\ny");
        assert_eq!(ours.to_text(), ResultContent::from_value(blocks).to_text());
    }

    fn entries(lines: &[Value]) -> Vec<Entry> {
        lines
            .iter()
            .enumerate()
            .map(|(i, v)| Entry {
                line: i as u64 + 1,
                value: v.clone(),
            })
            .collect()
    }

    fn read(lines: &[Value]) -> (Vec<Value>, Report) {
        let mut report = Report::default();
        let conv = conversation(&entries(lines), "s.jsonl", &mut report).unwrap();
        (crate::format::read::record_values(conv), report)
    }

    fn user(uuid: &str, parent: Option<&str>, content: Value) -> Value {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s1",
               "timestamp": "2026-11-30T15:42:05.580Z", "cwd": "/w",
               "message": {"role": "user", "content": content}})
    }

    fn assistant(uuid: &str, parent: &str, id: &str, content: Value) -> Value {
        json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s1",
               "timestamp": "2026-11-30T15:42:06Z",
               "message": {"id": id, "role": "assistant", "model": "claude-x", "content": content}})
    }

    #[test]
    fn parallel_calls_off_the_branch_are_one_message() {
        // As Claude Code 2.1.197 wrote two parallel Bash calls: one line per
        // block, each result hanging off its own call's line, the next turn
        // off the first result only.
        let call = |id: &str| json!([{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": id}}]);
        let result = |id: &str| json!([{"type": "tool_result", "tool_use_id": id, "content": id}]);
        let lines = [
            user("u1", None, json!("PAR")),
            json!({"type": "attachment", "uuid": "t1", "parentUuid": "u1", "attachment": {"type": "skill_listing"}}),
            assistant(
                "a1",
                "t1",
                "m1",
                json!([{"type": "thinking", "thinking": "two", "signature": "x"}]),
            ),
            assistant(
                "a2",
                "a1",
                "m1",
                json!([{"type": "text", "text": "Running both."}]),
            ),
            assistant("a3", "a2", "m1", call("one")),
            assistant("a4", "a3", "m1", call("two")),
            user("r2", Some("a4"), result("two")),
            user("r1", Some("a3"), result("one")),
            assistant("a5", "r1", "m2", json!([{"type": "text", "text": "pong"}])),
        ];
        let (records, report) = read(&lines);
        assert_eq!(
            crate::format::read::shapes(&records),
            [
                json!(["user", ["text"]]),
                json!(["assistant", ["thinking", "text", "tool_use", "tool_use"]]),
                json!(["user", ["tool_result"]]),
                json!(["user", ["tool_result"]]),
                json!(["assistant", ["text"]]),
                json!([null, null]),
            ]
        );
        assert_eq!(records[2]["content"][0]["tool_use_id"], "two");
        assert_eq!(records[5]["kind"], "meta");
        assert_eq!(records[5]["id"], "s1");
        assert_eq!(records[5]["cwd"], "/w");
        assert_eq!(report.count(dropped::ATTACHMENTS), 1);
        assert_eq!(report.count(dropped::SIGNATURES), 1);
    }

    #[test]
    fn compaction_branches_sidechains_and_errors() {
        let lines = [
            user("u1", None, json!("first")),
            assistant("a1", "u1", "m1", json!([{"type": "text", "text": "one"}])),
            // An abandoned branch: a rewind went back to u1's answer.
            user("x1", Some("a1"), json!("abandoned")),
            json!({"type": "user", "uuid": "s1", "parentUuid": "a1", "isSidechain": true,
                   "message": {"role": "user", "content": "subagent"}}),
            json!({"type": "system", "subtype": "compact_boundary", "uuid": "b1",
                   "parentUuid": null, "logicalParentUuid": "a1"}),
            json!({"type": "user", "uuid": "c1", "parentUuid": "b1", "isCompactSummary": true,
                   "message": {"role": "user", "content": "summary of it"}}),
            json!({"type": "attachment", "uuid": "q1", "parentUuid": "c1",
                   "attachment": {"type": "queued_command", "prompt": "typed while busy"}}),
            json!({"type": "assistant", "uuid": "e1", "parentUuid": "q1", "isApiErrorMessage": true,
                   "message": {"id": "m9", "model": "<synthetic>", "role": "assistant",
                               "content": [{"type": "text", "text": "API Error: 500"}]}}),
            user("u2", Some("e1"), json!([{"type": "text", "text": "again"}])),
            json!({"type": "custom-title", "customTitle": "My title", "sessionId": "s1"}),
        ];
        let (records, report) = read(&lines);
        let texts: Vec<String> = records
            .iter()
            .filter(|r| r["kind"] == "message")
            .map(|r| {
                format!(
                    "{}{}:{}",
                    r["role"].as_str().unwrap(),
                    if r["implicit"] == true { "*" } else { "" },
                    r["content"][0]["text"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            texts,
            [
                "user:first",
                "assistant:one",
                "user*:summary of it",
                "user:typed while busy",
                "system:API Error: 500",
                "user:again"
            ]
        );
        assert_eq!(records.last().unwrap()["title"], "My title");
        assert_eq!(report.count(dropped::OFF_BRANCH), 1);
        assert_eq!(report.count(dropped::SIDECHAIN), 1);
    }
}
