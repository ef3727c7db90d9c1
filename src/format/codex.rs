//! `agy-decode --format codex`: each conversation as a Codex CLI session
//! ("rollout") file, one JSON object per line, that
//! `codex exec resume <id>` (and the `codex resume` picker) takes up.
//!
//! What Codex needs of a rollout (measured on 0.171.0, see the man page):
//! every line `{"timestamp", "type", "payload"}`, a line without its
//! timestamp string being dropped silently; a first line `session_meta`
//! whose payload has `id`, `timestamp`, `cwd`, `originator` and
//! `cli_version` (else the resume fails) and `model_provider` and `source`
//! (else the interactive resume stops at "Model provider unavailable").
//! What the model sees is exactly the `response_item` lines, in order;
//! `event_msg` lines are for people (the transcript, the picker's
//! preview). This writes the "legacy" history, which 0.171 resumes as it
//! is; its own new sessions are "paginated" ([`super::codex_read`] reads
//! both).
//!
//! The turns are those of [`super::turns`], so Codex finds nothing to
//! repair: on resume it would invent the output `"aborted"` for a call
//! without one and drop an output without a call; here every call has its
//! output right after its turn, and a result without a call is text.
//! Thinking is never a `reasoning` item: the API takes back only reasoning
//! it encrypted itself, so agy's thinking is an `agent_reasoning` event,
//! shown to people and never sent (or, with `--thinking text`, text the
//! model sees).
//!
//! Codex keeps sessions in `$CODEX_HOME/sessions/YYYY/MM/DD/` as
//! `rollout-<YYYY-MM-DDTHH-MM-SS>-<uuid>.jsonl`; resume finds them by the
//! uuid at the end of the name, so `--out-dir $CODEX_HOME` writes there,
//! dated by the conversation's start (UTC), naming the provider that
//! `$CODEX_HOME/config.toml` is set up for ([`configured_provider`]).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::turns::{object, Kept, Rules, Sequenced, Turn};
use super::write::{millis, session_id, write_file, Session, SessionWriter, Shape, Writer};
use super::{Conversation, Report};
use crate::agy::tools::{self, rename, ArgList, ToolMapping};
use crate::error::Result;
use crate::stream::message::{Role, Usage};

/// Codex's tools that agy has too, by the common names of the message
/// stream ([`crate::agy::tools`]): `exec_command {cmd, workdir, …}` is
/// `Bash {command, workdir, …}`. Every other tool keeps its name both ways.
pub const TOOLS: &[ToolMapping] = &[ToolMapping {
    native: "exec_command",
    common: "Bash",
    rules: &[rename("cmd", "command")],
}];

/// What `session_meta` says wrote the file.
pub const ORIGINATOR: &str = "agy-decode";

/// The provider a written session names when `--out-dir`'s `config.toml`
/// names none: the one every Codex knows. Codex refuses to resume a
/// session under another provider than the one it names.
pub const MODEL_PROVIDER: &str = "openai";

/// The `model_provider` that the Codex whose home is `dir` is set up for:
/// the top-level key of `dir/config.toml`, a basic or literal TOML string.
/// `None` when the file or the key is not there (Codex's default is then
/// [`MODEL_PROVIDER`]).
pub fn configured_provider(dir: &Path) -> Option<String> {
    let config = std::fs::read_to_string(dir.join("config.toml")).ok()?;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            // Tables begin: no top-level key comes after them.
            return None;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().trim_matches('"') != "model_provider" {
            continue;
        }
        let value = value.trim();
        let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let rest = &value[1..];
        let end = rest.find(quote)?;
        return Some(rest[..end].to_string()).filter(|p| !p.is_empty());
    }
    None
}

/// Labels of what writing changes, for `--verbose`.
pub mod change {
    pub const ERROR_FLAGS: &str = "error flags of results not written (Codex outputs have none)";
    pub const DOCUMENTS: &str = "documents written as text";
}

/// How `--format codex` is written.
pub const WRITER: Writer = Writer {
    rules: Rules {
        kept: Kept::ForPeople,
        string_inputs: true,
        ..Rules::DEFAULT
    },
    what: "session",
    shape: Shape::Session(SessionWriter {
        id: session_id,
        write: write_rollout,
        place,
    }),
};

/// Writes the rollout's lines; returns the time of the last.
fn write_rollout(
    session: &Session<'_>,
    sequenced: Sequenced,
    report: &mut Report,
    out: &mut Vec<u8>,
) -> String {
    let mut rollout = Rollout {
        lines: out,
        clock: session.start.clone(),
        report,
        custom_calls: Vec::new(),
    };
    let provider = session
        .options
        .out_dir
        .as_deref()
        .and_then(configured_provider)
        .unwrap_or_else(|| MODEL_PROVIDER.to_string());
    rollout.session_meta(
        session.conv,
        &session.id,
        &session.cwd,
        &session.start,
        &provider,
    );
    for turn in sequenced.turns {
        rollout.turn(turn);
    }
    rollout.clock
}

/// `DIR/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.
fn place(session: &Session<'_>, root: &Path, bytes: &[u8], _last: &str) -> Result<PathBuf> {
    let (dir, name) = rollout_path(&session.start, &session.id);
    let dir = root.join(dir);
    let path = dir.join(name);
    write_file(&dir, &path, bytes, session.options.force)?;
    Ok(path)
}

/// Where under `$CODEX_HOME` the session that started at `start` (as
/// [`millis`] writes it) goes: `sessions/YYYY/MM/DD` and the file name.
pub fn rollout_path(start: &str, session: &str) -> (PathBuf, String) {
    let (date, time) = start.split_once('T').unwrap_or(("1970-01-01", "00:00:00"));
    let mut parts = date.splitn(3, '-');
    let (year, month, day) = (
        parts.next().unwrap_or("1970"),
        parts.next().unwrap_or("01"),
        parts.next().unwrap_or("01"),
    );
    let time: String = time.chars().take(8).collect::<String>().replace(':', "-");
    let dir = PathBuf::from("sessions").join(year).join(month).join(day);
    (dir, format!("rollout-{date}T{time}-{session}.jsonl"))
}

struct Rollout<'r> {
    lines: &'r mut Vec<u8>,
    /// The time the next line says: its turn's, else the last one said.
    clock: String,
    report: &'r mut Report,
    /// Ids of the calls written as custom tool calls (a string input),
    /// whose outputs are custom outputs too.
    custom_calls: Vec<String>,
}

impl Rollout<'_> {
    fn line(&mut self, kind: &str, payload: Value) {
        let line = object([
            ("timestamp", self.clock.as_str().into()),
            ("type", kind.into()),
            ("payload", payload),
        ]);
        serde_json::to_writer(&mut *self.lines, &line).expect("serializing to a Vec cannot fail");
        self.lines.push(b'\n');
    }

    fn event(&mut self, kind: &str, fields: Map<String, Value>) {
        let mut payload = Map::new();
        payload.insert("type".into(), kind.into());
        payload.extend(fields);
        self.line("event_msg", Value::Object(payload));
    }

    fn item(&mut self, payload: Value) {
        self.line("response_item", payload);
    }

    fn session_meta(
        &mut self,
        conv: &Conversation,
        session: &str,
        cwd: &str,
        start: &str,
        provider: &str,
    ) {
        let mut meta = Map::new();
        meta.insert("id".into(), session.into());
        meta.insert("timestamp".into(), start.into());
        meta.insert("cwd".into(), cwd.into());
        meta.insert("originator".into(), ORIGINATOR.into());
        meta.insert("cli_version".into(), env!("CARGO_PKG_VERSION").into());
        meta.insert("source".into(), "cli".into());
        meta.insert("model_provider".into(), provider.into());
        if let Some(branch) = &conv.meta.git_branch {
            meta.insert("git".into(), object([("branch", branch.as_str().into())]));
        }
        self.line("session_meta", Value::Object(meta));
        if let Some(title) = conv.meta.title.as_deref().filter(|t| !t.trim().is_empty()) {
            let mut fields = Map::new();
            fields.insert("thread_id".into(), session.into());
            fields.insert("thread_name".into(), title.trim().into());
            self.event("thread_name_updated", fields);
        }
    }

    fn turn(&mut self, turn: Turn) {
        if let Some(t) = turn.timestamp.as_deref().and_then(millis) {
            self.clock = t;
        }
        match turn.role {
            Role::Assistant => self.assistant(turn),
            _ => self.user(turn),
        }
    }

    fn user(&mut self, turn: Turn) {
        let implicit = turn.implicit;
        for result in &turn.results {
            self.output(result);
        }
        let mut parts = Vec::new();
        let mut texts = Vec::new();
        let mut images = Vec::new();
        for block in &turn.blocks {
            match block_type(block) {
                "text" => {
                    let text = str_at(block, "text");
                    texts.push(text.to_string());
                    parts.push(object([
                        ("type", "input_text".into()),
                        ("text", text.into()),
                    ]));
                }
                "image" => {
                    let url = image_url(&block["source"]);
                    images.push(Value::String(url.clone()));
                    parts.push(object([
                        ("type", "input_image".into()),
                        ("image_url", url.into()),
                    ]));
                }
                "document" => {
                    self.report.add(change::DOCUMENTS, 1);
                    let text = document_text(&block["source"]);
                    texts.push(text.clone());
                    parts.push(object([
                        ("type", "input_text".into()),
                        ("text", text.into()),
                    ]));
                }
                "thinking" => self.reasoning(block),
                _ => {}
            }
        }
        if parts.is_empty() {
            return;
        }
        self.item(object([
            ("type", "message".into()),
            ("role", "user".into()),
            ("content", Value::Array(parts)),
        ]));
        if !implicit {
            let mut fields = Map::new();
            fields.insert("message".into(), texts.join("\n").into());
            fields.insert("images".into(), Value::Array(images));
            self.event("user_message", fields);
        }
    }

    fn assistant(&mut self, mut turn: Turn) {
        let usage = turn.usage.take();
        for block in &turn.blocks {
            match block_type(block) {
                "text" => {
                    let text = str_at(block, "text");
                    self.item(object([
                        ("type", "message".into()),
                        ("role", "assistant".into()),
                        (
                            "content",
                            Value::Array(vec![object([
                                ("type", "output_text".into()),
                                ("text", text.into()),
                            ])]),
                        ),
                    ]));
                    let mut fields = Map::new();
                    fields.insert("message".into(), text.into());
                    self.event("agent_message", fields);
                }
                "tool_use" => self.call(block),
                "thinking" => self.reasoning(block),
                _ => {}
            }
        }
        if let Some(usage) = usage.filter(|u| !u.is_empty()) {
            self.token_count(&usage);
        }
    }

    /// A call: a custom tool call when its input is a string (Codex's
    /// free-form tools, `apply_patch`), else a function call whose
    /// arguments are the input's JSON text.
    fn call(&mut self, block: &Value) {
        let id = str_at(block, "id").to_string();
        let name = str_at(block, "name");
        let input = &block["input"];
        if let Value::String(text) = input {
            self.custom_calls.push(id.clone());
            self.item(object([
                ("type", "custom_tool_call".into()),
                ("status", "completed".into()),
                ("call_id", id.into()),
                ("name", name.into()),
                ("input", text.as_str().into()),
            ]));
            return;
        }
        let args: Option<ArgList> = input
            .as_object()
            .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        let (name, mapped) = tools::to_native_by(TOOLS, name, args.as_ref());
        let arguments = match mapped.or(args) {
            Some(args) => Value::Object(args.into_iter().collect()).to_string(),
            None => input.to_string(),
        };
        self.item(object([
            ("type", "function_call".into()),
            ("name", name.into()),
            ("arguments", arguments.into()),
            ("call_id", id.into()),
        ]));
    }

    /// A `tool_result` block of the turns as the output of its call.
    fn output(&mut self, result: &Value) {
        let id = str_at(result, "tool_use_id").to_string();
        if result.get("is_error").and_then(Value::as_bool) == Some(true) {
            self.report.add(change::ERROR_FLAGS, 1);
        }
        let text = result.get("content").and_then(Value::as_str).unwrap_or("");
        let kind = if self.custom_calls.contains(&id) {
            "custom_tool_call_output"
        } else {
            "function_call_output"
        };
        self.item(object([
            ("type", kind.into()),
            ("call_id", id.into()),
            ("output", text.into()),
        ]));
    }

    fn reasoning(&mut self, block: &Value) {
        let mut fields = Map::new();
        fields.insert("text".into(), str_at(block, "thinking").into());
        self.event("agent_reasoning", fields);
    }

    /// A turn's token counts, as the `token_count` event Codex writes
    /// after each response.
    fn token_count(&mut self, usage: &Usage) {
        let input = usage.input_tokens.unwrap_or(0)
            + usage.cache_read_input_tokens.unwrap_or(0)
            + usage.cache_creation_input_tokens.unwrap_or(0);
        let output = usage.output_tokens.unwrap_or(0);
        let counts = object([
            ("input_tokens", input.into()),
            (
                "cached_input_tokens",
                usage.cache_read_input_tokens.unwrap_or(0).into(),
            ),
            ("output_tokens", output.into()),
            ("reasoning_output_tokens", 0.into()),
            ("total_tokens", (input + output).into()),
        ]);
        let mut fields = Map::new();
        fields.insert(
            "info".into(),
            object([
                ("total_token_usage", counts.clone()),
                ("last_token_usage", counts),
                ("model_context_window", Value::Null),
            ]),
        );
        fields.insert("rate_limits".into(), Value::Null);
        self.event("token_count", fields);
    }
}

fn block_type(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

fn str_at<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// An image source of the turns (base64 data or a web URL) as the
/// Responses API's `image_url`.
fn image_url(source: &Value) -> String {
    match str_at(source, "type") {
        "base64" => format!(
            "data:{};base64,{}",
            str_at(source, "media_type"),
            str_at(source, "data")
        ),
        _ => str_at(source, "url").to_string(),
    }
}

/// A document of the turns as text: a text document is its text; a PDF,
/// which Codex's history cannot hold, is a note.
fn document_text(source: &Value) -> String {
    match str_at(source, "type") {
        "text" => str_at(source, "data").to_string(),
        "url" => format!("[document not included: {}]", str_at(source, "url")),
        _ => format!(
            "[document not included: {}, inline data]",
            source
                .get("media_type")
                .and_then(Value::as_str)
                .unwrap_or("media type unknown")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollout_paths_are_dated_by_the_start() {
        let (dir, name) = rollout_path(
            "2026-08-10T09:05:07.123Z",
            "5d1f0c2e-8a47-4b6e-9f31-2c7d4e8a9b10",
        );
        assert_eq!(dir, PathBuf::from("sessions/2026/08/10"));
        assert_eq!(
            name,
            "rollout-2026-08-10T09-05-07-5d1f0c2e-8a47-4b6e-9f31-2c7d4e8a9b10.jsonl"
        );
    }

    #[test]
    fn the_provider_is_the_configured_one() {
        let dir = std::env::temp_dir().join(format!("agy-codex-provider-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(configured_provider(&dir), None);
        for (config, want) in [
            (
                "model = \"o3\"\nmodel_provider = \"azure\"\n",
                Some("azure"),
            ),
            ("model_provider='ollama' # local\n", Some("ollama")),
            ("\"model_provider\" = \"x\"\n", Some("x")),
            ("[model_providers.fake]\nmodel_provider = \"no\"\n", None),
            ("model_provider = \"\"\n", None),
            ("model_provider = azure\n", None),
        ] {
            std::fs::write(dir.join("config.toml"), config).unwrap();
            assert_eq!(configured_provider(&dir).as_deref(), want, "{config}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn exec_command_is_bash() {
        let args: ArgList = vec![
            ("command".into(), "ls".into()),
            ("workdir".into(), "/w".into()),
        ];
        let (name, mapped) = tools::to_native_by(TOOLS, "Bash", Some(&args));
        assert_eq!(name, "exec_command");
        assert_eq!(
            mapped.unwrap(),
            vec![
                ("cmd".to_string(), Value::from("ls")),
                ("workdir".to_string(), Value::from("/w"))
            ]
        );
        let (name, mapped) = tools::to_common_by(TOOLS, "shell", Some(&args));
        assert_eq!((name.as_str(), mapped), ("shell", None));
    }
}
