//! `agy-decode --format opencode`: each conversation as the JSON document
//! that `opencode import FILE` takes, which is what `opencode export ID`
//! prints: `{"info": SESSION, "messages": [{"info": MESSAGE, "parts":
//! [PART, …]}, …]}`.
//!
//! What OpenCode needs of it (tried on 1.18.33, see the man page):
//! * The session has an `id` that starts with `ses`, a `slug`, a `title`, a
//!   `version` and `time` (`created`, `updated`, in milliseconds); `import`
//!   puts it under the project of the directory it runs in, whatever the
//!   file says.
//! * Each message has an `id` that starts with `msg`, its role and its
//!   `time.created`; a user message names its `agent` and `model`, an
//!   assistant message its `parentID` (the user message it answers), model,
//!   `mode`, `agent`, `path`, `cost` and `tokens`. OpenCode orders messages
//!   by their time, then their id, and a message's parts by their id, so
//!   ids here count up in the order written ([`Ids`]).
//! * A call and its result are one `tool` part of the assistant message,
//!   `completed` with its output or `error` with its text; the turns of
//!   [`super::turns`] give every call its result, so OpenCode finds no
//!   call it would call interrupted.
//! * Thinking is a `reasoning` part of its assistant message (or, with
//!   `--thinking text`, text); images and PDFs of a user turn are `file`
//!   parts with `data:` URLs, a user turn the system wrote has `synthetic`
//!   texts.
//!
//! The model that made each turn is named under the provider `agy`, which
//! no OpenCode has: `opencode run --session ID --model PROVIDER/MODEL`
//! continues the session with one of the user's own.
//!
//! Tool calls under the common names of `crate::agy::tools` are written
//! under OpenCode's own names and keys ([`TOOLS`]); every other call keeps
//! its name.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

mod ids;

use ids::Ids;
pub use ids::{conversation_id, session_id};

use super::turns::{object, Kept, Rules, Sequenced, Stop, Turn};
use super::write::{self, write_file, Session, SessionWriter, Shape, Writer};
use super::Report;
use crate::agy::tools::{self, rename, ArgList, ToolMapping};
use crate::error::Result;
use crate::stream::message::{self, Role};
use crate::time::Timestamp;

/// OpenCode's tools that agy has too, by the common names of the message
/// stream: the same tools, with camel-case keys.
pub const TOOLS: &[ToolMapping] = &[
    ToolMapping {
        native: "bash",
        common: "Bash",
        rules: &[],
    },
    ToolMapping {
        native: "read",
        common: "Read",
        rules: &[rename("filePath", "file_path")],
    },
    ToolMapping {
        native: "write",
        common: "Write",
        rules: &[rename("filePath", "file_path")],
    },
    ToolMapping {
        native: "edit",
        common: "Edit",
        rules: &[
            rename("filePath", "file_path"),
            rename("oldString", "old_string"),
            rename("newString", "new_string"),
            rename("replaceAll", "replace_all"),
        ],
    },
];

/// The version of OpenCode whose export this writes, which the session
/// says wrote it.
pub const OPENCODE_VERSION: &str = "1.18.33";

/// The provider the turns' models are named under.
pub const PROVIDER: &str = "agy";

/// The agent and mode every message names: OpenCode's default agent.
pub const AGENT: &str = "build";

/// Labels of what writing changes, for `--verbose`.
pub mod change {
    pub const MEDIA_NOTES: &str = "images and documents by URL replaced by a note";
}

/// How `--format opencode` is written.
pub const WRITER: Writer = Writer {
    rules: Rules {
        kept: Kept::Reasoning,
        ..Rules::DEFAULT
    },
    what: "session",
    shape: Shape::Session(SessionWriter {
        id: session_id,
        write: write_session,
        place,
    }),
};

/// A time as the milliseconds OpenCode keeps.
fn epoch_millis(text: &str) -> i64 {
    Timestamp::parse(text).map_or(0, |t| t.epoch_millis())
}

/// `DIR/<session id>.json`.
fn place(session: &Session<'_>, root: &Path, bytes: &[u8], _last: &str) -> Result<PathBuf> {
    let path = root.join(format!("{}.json", session.id));
    write_file(root, &path, bytes, session.options.force)?;
    Ok(path)
}

/// Writes the session as one line; returns the time of its last turn.
/// Each message is written once the turn after it (which may hold its
/// results) is read, and dropped, so the session is not held twice.
fn write_session(
    session: &Session<'_>,
    sequenced: Sequenced,
    report: &mut Report,
    out: &mut Vec<u8>,
) -> String {
    let conv = session.conv;
    // The title and the last time are the session's, which comes first.
    let title = conv
        .meta
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| {
            sequenced
                .turns
                .iter()
                .filter(|t| t.role == Role::User)
                .find_map(|t| {
                    t.blocks
                        .iter()
                        .find_map(|b| b.get("text").and_then(Value::as_str))
                })
                .map(message::title_from_text)
        });
    let last = sequenced
        .turns
        .iter()
        .rev()
        .find_map(|t| t.timestamp.as_deref().and_then(write::millis))
        .unwrap_or_else(|| session.start.clone());
    let uuid = write::session_id(&conv.id);
    let info = object([
        ("id", session.id.as_str().into()),
        ("slug", format!("agy-{}", &uuid[..8]).into()),
        ("projectID", "global".into()),
        ("directory", session.cwd.as_str().into()),
        ("title", title.unwrap_or_default().trim().into()),
        ("version", OPENCODE_VERSION.into()),
        (
            "time",
            object([
                ("created", epoch_millis(&session.start).into()),
                ("updated", epoch_millis(&last).into()),
            ]),
        ),
    ]);
    out.extend_from_slice(b"{\"info\":");
    serde_json::to_writer(&mut *out, &info).expect("serializing to a Vec cannot fail");
    out.extend_from_slice(b",\"messages\":[");
    let mut doc = Document {
        session,
        ids: Ids {
            session: session.id.clone(),
            count: 0,
        },
        last: None,
        written: 0,
        out,
        calls: Vec::new(),
        parent: None,
        report,
    };
    let mut clock = session.start.clone();
    for turn in sequenced.turns {
        if let Some(t) = turn.timestamp.as_deref().and_then(write::millis) {
            clock = t;
        }
        match turn.role {
            Role::Assistant => doc.assistant(turn, epoch_millis(&clock)),
            _ => doc.user(turn, epoch_millis(&clock)),
        }
    }
    doc.flush();
    doc.out.extend_from_slice(b"]}\n");
    clock
}

/// The session's messages as they are made.
struct Document<'s, 'r> {
    session: &'s Session<'s>,
    ids: Ids,
    /// The last message made, which the next turn's results complete.
    last: Option<Value>,
    /// How many messages are written.
    written: usize,
    out: &'r mut Vec<u8>,
    /// Where each call of the last assistant message is: (call id, part).
    calls: Vec<(String, usize)>,
    /// The id of the last user message, which assistant messages answer.
    parent: Option<String>,
    report: &'r mut Report,
}

impl Document<'_, '_> {
    /// Writes the last message made, if any.
    fn flush(&mut self) {
        let Some(message) = self.last.take() else {
            return;
        };
        if self.written > 0 {
            self.out.push(b',');
        }
        serde_json::to_writer(&mut *self.out, &message).expect("serializing to a Vec cannot fail");
        self.written += 1;
    }

    /// A message made: the one before it is complete.
    fn push(&mut self, message: Value) {
        self.flush();
        self.last = Some(message);
    }

    fn model(&self, turn: &Turn) -> String {
        turn.model
            .clone()
            .or_else(|| self.session.conv.meta.model.clone())
            .unwrap_or_else(|| PROVIDER.to_string())
    }

    fn part(&mut self, message: &str, kind: &str, fields: Map<String, Value>) -> Value {
        let mut part = Map::new();
        part.insert("id".into(), self.ids.next("prt").into());
        part.insert("sessionID".into(), self.session.id.as_str().into());
        part.insert("messageID".into(), message.into());
        part.insert("type".into(), kind.into());
        part.extend(fields);
        Value::Object(part)
    }

    fn assistant(&mut self, mut turn: Turn, time: i64) {
        let id = self.ids.next("msg");
        let model = self.model(&turn);
        let usage = turn.usage.take().unwrap_or_default();
        let finish = match turn.stop() {
            Stop::Calls => "tool-calls",
            Stop::MaxTokens => "length",
            Stop::End => "stop",
        };
        let mut info = Map::new();
        info.insert("id".into(), id.as_str().into());
        info.insert("sessionID".into(), self.session.id.as_str().into());
        info.insert("role".into(), "assistant".into());
        info.insert(
            "time".into(),
            object([("created", time.into()), ("completed", time.into())]),
        );
        // The opening turn that turns adds makes a parent for any
        // conversation; the id is only ever missing for an empty one.
        info.insert(
            "parentID".into(),
            self.parent.clone().unwrap_or_default().into(),
        );
        info.insert("modelID".into(), model.into());
        info.insert("providerID".into(), PROVIDER.into());
        info.insert("mode".into(), AGENT.into());
        info.insert("agent".into(), AGENT.into());
        let cwd = self.session.cwd.as_str();
        info.insert(
            "path".into(),
            object([("cwd", cwd.into()), ("root", cwd.into())]),
        );
        info.insert("cost".into(), 0.into());
        info.insert(
            "tokens".into(),
            object([
                ("input", usage.input_tokens.unwrap_or(0).into()),
                ("output", usage.output_tokens.unwrap_or(0).into()),
                ("reasoning", 0.into()),
                (
                    "cache",
                    object([
                        ("read", usage.cache_read_input_tokens.unwrap_or(0).into()),
                        (
                            "write",
                            usage.cache_creation_input_tokens.unwrap_or(0).into(),
                        ),
                    ]),
                ),
            ]),
        );
        info.insert("finish".into(), finish.into());
        self.calls.clear();
        let mut parts = Vec::new();
        for block in turn.into_content() {
            let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
            let mut fields = Map::new();
            let kind = match text("type") {
                "thinking" => {
                    fields.insert("text".into(), text("thinking").into());
                    fields.insert(
                        "time".into(),
                        object([("start", time.into()), ("end", time.into())]),
                    );
                    "reasoning"
                }
                "tool_use" => {
                    let call = text("id").to_string();
                    let input = block.get("input").cloned().unwrap_or_default();
                    let (name, input) = native_call(text("name"), input);
                    self.calls.push((call.clone(), parts.len()));
                    fields.insert("callID".into(), call.into());
                    fields.insert("tool".into(), name.into());
                    // The state comes with the result, in the next turn.
                    fields.insert("state".into(), object([("input", input)]));
                    "tool"
                }
                // Text, and what the turns made text of.
                _ => {
                    fields.insert("text".into(), text("text").into());
                    "text"
                }
            };
            parts.push(self.part(&id, kind, fields));
        }
        self.push(object([
            ("info", Value::Object(info)),
            ("parts", Value::Array(parts)),
        ]));
    }

    /// A user turn: its results complete the calls of the assistant
    /// message before it; what else it holds is a user message.
    fn user(&mut self, turn: Turn, time: i64) {
        for result in &turn.results {
            self.result(result, time);
        }
        if turn.blocks.is_empty() {
            return;
        }
        let id = self.ids.next("msg");
        let model = self.model(&turn);
        let mut parts = Vec::new();
        for block in &turn.blocks {
            let field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
            let source = |key: &str| {
                block
                    .get("source")
                    .and_then(|s| s.get(key))
                    .and_then(Value::as_str)
                    .unwrap_or("")
            };
            let mut fields = Map::new();
            let kind = match (field("type"), source("type")) {
                ("image" | "document", "base64") => {
                    let mime = source("media_type");
                    let url = format!("data:{mime};base64,{}", source("data"));
                    fields.insert("mime".into(), mime.into());
                    fields.insert("url".into(), url.into());
                    "file"
                }
                ("document", "text") => {
                    fields.insert("text".into(), source("data").into());
                    "text"
                }
                // A file by URL would be fetched when OpenCode sends it.
                (kind @ ("image" | "document"), _) => {
                    self.report.add(change::MEDIA_NOTES, 1);
                    let note = format!("[{kind} not included: {}]", source("url"));
                    fields.insert("text".into(), note.into());
                    "text"
                }
                ("thinking", _) => {
                    fields.insert("text".into(), field("thinking").into());
                    fields.insert(
                        "time".into(),
                        object([("start", time.into()), ("end", time.into())]),
                    );
                    "reasoning"
                }
                _ => {
                    fields.insert("text".into(), field("text").into());
                    "text"
                }
            };
            if kind == "text" && turn.implicit {
                fields.insert("synthetic".into(), true.into());
            }
            parts.push(self.part(&id, kind, fields));
        }
        let info = object([
            ("id", id.as_str().into()),
            ("sessionID", self.session.id.as_str().into()),
            ("role", "user".into()),
            ("time", object([("created", time.into())])),
            ("agent", AGENT.into()),
            (
                "model",
                object([("providerID", PROVIDER.into()), ("modelID", model.into())]),
            ),
        ]);
        self.push(object([("info", info), ("parts", Value::Array(parts))]));
        self.parent = Some(id);
    }

    /// Completes the tool part of the call a result answers.
    fn result(&mut self, result: &Value, time: i64) {
        let call = result
            .get("tool_use_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        let Some(&(_, at)) = self.calls.iter().find(|(id, _)| id == call) else {
            unreachable!("a result of the turns answers a call of the turn before")
        };
        let text = result.get("content").and_then(Value::as_str).unwrap_or("");
        let error = result.get("is_error").and_then(Value::as_bool) == Some(true);
        let message = self.last.as_mut().expect("the call's message");
        let started = message["info"]["time"]["created"].clone();
        let state = &mut message["parts"][at]["state"];
        let input = state["input"].take();
        let times = object([("start", started), ("end", time.into())]);
        *state = if error {
            object([
                ("status", "error".into()),
                ("input", input),
                ("error", text.into()),
                ("time", times),
            ])
        } else {
            object([
                ("status", "completed".into()),
                ("input", input),
                ("output", text.into()),
                ("title", "".into()),
                ("metadata", Value::Object(Map::new())),
                ("time", times),
            ])
        };
    }
}

/// A call of the turns under OpenCode's name and keys, when the table
/// maps it.
fn native_call(name: &str, input: Value) -> (String, Value) {
    let args: Option<ArgList> = input
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
    let (name, mapped) = tools::to_native_by(TOOLS, name, args.as_ref());
    match mapped {
        Some(args) => (name, Value::Object(args.into_iter().collect())),
        None => (name, input),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::turns::{change as turn_change, NO_RESULT};
    use crate::format::{write, Conversation, MetaInfo, Msg, Options, Thinking};
    use crate::stream::message::{Block, ImageSource, ResultContent, ToolInput};
    use serde_json::json;
    use std::borrow::Cow;

    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

    fn msg(role: Role, second: u32, content: Vec<Block<'static>>) -> Msg {
        Msg {
            role,
            timestamp: Some(format!("2026-11-02T08:00:{second:02}Z")),
            model: (role == Role::Assistant).then(|| "gemini-3-flash".to_string()),
            content,
            ..Msg::default()
        }
    }

    fn call(id: &str, name: &str, input: Value) -> Block<'static> {
        Block::ToolUse {
            id: Cow::Owned(id.into()),
            name: Cow::Owned(name.into()),
            input: ToolInput::Object(input.as_object().unwrap().clone().into_iter().collect()),
            signature: Some("0a0b".into()),
        }
    }

    fn result(id: &str, text: &str, is_error: bool) -> Block<'static> {
        Block::ToolResult {
            tool_use_id: Cow::Owned(id.into()),
            content: ResultContent::Text(Cow::Owned(text.into())),
            is_error,
        }
    }

    fn image(source_type: &str, data: Option<&str>, url: Option<&str>) -> Block<'static> {
        Block::Image {
            source: ImageSource {
                source_type: Cow::Owned(source_type.into()),
                media_type: Some("image/png".into()),
                data: data.map(|d| Cow::Owned(d.into())),
                url: url.map(|u| Cow::Owned(u.into())),
            },
        }
    }

    /// The document written for `messages`, and what was counted.
    fn document(messages: Vec<Msg>, thinking: Thinking) -> (Value, Report) {
        let mut conv = Conversation {
            id: "a1b2c3d4-0000-4000-8000-000000000001".into(),
            messages,
            meta: MetaInfo {
                cwd: Some("/nowhere/project".into()),
                timestamp: Some("2026-11-02T08:00:00Z".into()),
                title: Some("Listing".into()),
                ..Default::default()
            },
        };
        let options = Options {
            thinking,
            ..Options::default()
        };
        let (bytes, report) = write::written(&WRITER, &mut conv, &options);
        assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
        (serde_json::from_slice(&bytes).unwrap(), report)
    }

    fn conversation() -> Vec<Msg> {
        vec![
            msg(
                Role::User,
                0,
                vec![
                    Block::text("List it, and see the screen.".into()),
                    image("base64", Some(PNG), None),
                    image("url", None, Some("https://example.com/a.png")),
                ],
            ),
            msg(
                Role::Assistant,
                1,
                vec![
                    Block::Thinking {
                        thinking: "ls first.".into(),
                        signature: Some("0c0d".into()),
                    },
                    Block::text("Listing.".into()),
                    call("c1", "Bash", json!({"command": "ls"})),
                    call("c2", "Read", json!({"file_path": "/a", "offset": 2})),
                    call("c3", "grep_search", json!({"Query": "x"})),
                ],
            ),
            msg(
                Role::User,
                2,
                vec![
                    result("c1", "a\nb", false),
                    result("c2", "no such file", true),
                ],
            ),
            msg(Role::Assistant, 3, vec![Block::text("Two files.".into())]),
            Msg {
                implicit: true,
                ..msg(
                    Role::User,
                    4,
                    vec![Block::text("The user stepped away.".into())],
                )
            },
            msg(Role::Assistant, 5, vec![Block::text("Back.".into())]),
        ]
    }

    #[test]
    fn a_conversation_as_opencode_keeps_it() {
        let (doc, report) = document(conversation(), Thinking::Drop);
        let session = doc["info"]["id"].as_str().unwrap();
        assert_eq!(session, session_id("a1b2c3d4-0000-4000-8000-000000000001"));
        assert_eq!(doc["info"]["title"], "Listing");
        assert_eq!(doc["info"]["directory"], "/nowhere/project");
        assert_eq!(doc["info"]["time"]["created"], 1_793_606_400_000i64);
        assert_eq!(doc["info"]["time"]["updated"], 1_793_606_405_000i64);
        let messages = doc["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["info"]["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            ["user", "assistant", "assistant", "user", "assistant"]
        );
        let kinds = |m: &Value| -> Vec<String> {
            m["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["type"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(kinds(&messages[0]), ["text", "file", "text"]);
        assert_eq!(
            messages[0]["parts"][1]["url"],
            format!("data:image/png;base64,{PNG}")
        );
        assert_eq!(
            messages[0]["parts"][2]["text"],
            "[image not included: https://example.com/a.png]"
        );
        assert_eq!(
            kinds(&messages[1]),
            ["reasoning", "text", "tool", "tool", "tool"]
        );
        let tools: Vec<&Value> = messages[1]["parts"].as_array().unwrap()[2..]
            .iter()
            .collect();
        assert_eq!(tools[0]["tool"], "bash");
        assert_eq!(
            tools[0]["state"],
            json!({"status": "completed", "input": {"command": "ls"}, "output": "a\nb",
                   "title": "", "metadata": {},
                   "time": {"start": 1_793_606_401_000i64, "end": 1_793_606_402_000i64}})
        );
        assert_eq!(tools[1]["tool"], "read");
        assert_eq!(
            tools[1]["state"]["input"],
            json!({"filePath": "/a", "offset": 2})
        );
        assert_eq!(tools[1]["state"]["status"], "error");
        assert_eq!(tools[1]["state"]["error"], "no such file");
        // A call left without a result gets the error result every format
        // gives it.
        assert_eq!(tools[2]["tool"], "grep_search");
        assert_eq!(tools[2]["state"]["error"], NO_RESULT);
        assert_eq!(messages[1]["info"]["finish"], "tool-calls");
        assert_eq!(messages[1]["info"]["parentID"], messages[0]["info"]["id"]);
        assert_eq!(messages[1]["info"]["modelID"], "gemini-3-flash");
        assert_eq!(messages[1]["info"]["providerID"], PROVIDER);
        // The results need no message of their own: the next assistant
        // message answers the same user message.
        assert_eq!(messages[2]["info"]["parentID"], messages[0]["info"]["id"]);
        assert_eq!(messages[2]["info"]["finish"], "stop");
        // A user turn the system wrote has synthetic texts.
        assert_eq!(messages[3]["parts"][0]["synthetic"], true);
        assert_eq!(messages[0]["parts"][0].get("synthetic"), None);
        assert_eq!(messages[4]["info"]["parentID"], messages[3]["info"]["id"]);
        // Every id is OpenCode's shape, and they count up in file order.
        let mut ids = Vec::new();
        for message in messages {
            ids.push(message["info"]["id"].as_str().unwrap());
            assert_eq!(message["info"]["sessionID"], session);
            for part in message["parts"].as_array().unwrap() {
                assert_eq!(part["messageID"], message["info"]["id"]);
                ids.push(part["id"].as_str().unwrap());
            }
        }
        assert!(ids.iter().all(|id| id.len() == 30));
        assert!(ids.windows(2).all(|w| w[0][4..] < w[1][4..]), "{ids:?}");
        assert_eq!(report.count(turn_change::REASONING), 1);
        assert_eq!(report.count(turn_change::THINKING_SIGNATURES_DROPPED), 1);
        assert_eq!(report.count(turn_change::UNANSWERED), 1);
        assert_eq!(report.count(turn_change::SIGNATURES_DROPPED), 3);
        assert_eq!(report.count(change::MEDIA_NOTES), 1);
        // Same conversation, same bytes.
        assert_eq!(document(conversation(), Thinking::Drop).0, doc);
    }

    #[test]
    fn thinking_as_text_is_text() {
        let (doc, report) = document(conversation(), Thinking::Text);
        let parts = &doc["messages"][1]["parts"];
        assert_eq!(parts[0]["type"], "text");
        assert_eq!(parts[0]["text"], "<thinking>\nls first.\n</thinking>");
        assert_eq!(report.count(turn_change::THINKING_TEXT), 1);
        assert_eq!(report.count(turn_change::REASONING), 0);
    }

    #[test]
    fn tools_take_opencode_names_and_keys() {
        let (name, input) = native_call(
            "Edit",
            serde_json::json!({"file_path": "/a", "old_string": "x", "new_string": "y"}),
        );
        assert_eq!(name, "edit");
        assert_eq!(
            input,
            serde_json::json!({"filePath": "/a", "oldString": "x", "newString": "y"})
        );
        let (name, input) = native_call("grep_search", serde_json::json!({"Query": "x"}));
        assert_eq!(
            (name.as_str(), input),
            ("grep_search", serde_json::json!({"Query": "x"}))
        );
    }
}
