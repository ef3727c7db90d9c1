//! `agy-decode --format opencode` and `agy-encode --format opencode`, tried
//! against the real OpenCode (`opencode-ai`, pinned by `.ci/run`):
//! sessions written by agy-decode are taken in by `opencode import` and
//! continued by `opencode run --session` against a fake OpenAI-compatible
//! API on 127.0.0.1 ([`fake_openai`]), each test in a loopback-only network
//! namespace of its own (`support::netns`); sessions OpenCode wrote itself
//! go `opencode export` → agy and back.
//!
//! OpenCode runs with a HOME and XDG directories of the test's own, whose
//! `opencode.json` names one provider, `fake` (the bundled
//! `@ai-sdk/openai-compatible` with its `baseURL` on the fake), with
//! automatic updates and sharing off. What else 1.18.33 reaches for
//! (measured with strace and a logging DNS server): the models.dev
//! catalogue, which the environment turns off, and, on its first start,
//! the npm registry for a package of its config directory, which
//! `npm_config_registry` points at the fake (it answers 404, and OpenCode
//! goes on); the tests check that nothing else was asked. The environment
//! also turns off LSP downloads, default plugins, and what OpenCode would
//! read of Claude Code's and other tools' skills. The checks that need no
//! client (bad input, --verbose) run without it.

#[path = "opencode/fake_openai.rs"]
mod fake_openai;
#[path = "opencode/said.rs"]
mod said;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use agy_tools::format::opencode::conversation_id;
use fake_openai::{FakeOpenAi, REGISTRY, THOUGHT, TITLE};
use said::{check_sent, said_by_export, said_by_request, said_by_stream};
use serde_json::{json, Value};
use support::clients::{self, opencode};
use support::corpus::{into_agy, out_dir_args, rows, sample, stores};
use support::holds::{message_stream, ToolRow};
use support::store::json_lines;
use support::{run, run_ok, stderr, Scratch};

/// What OpenCode sends in place of what it had to repair or leave out: a
/// call without a result, a result cleared by compaction, and the
/// stand-ins of a compaction request and of a subtask.
pub const REPAIR_TEXTS: &[&str] = &[
    "[Tool execution was interrupted]",
    "[Old tool result content cleared]",
    "What did we do so far?",
    "The following tool was executed by the user",
];

/// OpenCode's names and keys for the common tools of agy-decode's stream
/// (the table in the man page, written out again here so that a mistake
/// there cannot hide here).
pub const TOOLS: &[ToolRow] = &[
    ("Bash", "bash", &[]),
    ("Read", "read", &[("file_path", "filePath")]),
    ("Write", "write", &[("file_path", "filePath")]),
    (
        "Edit",
        "edit",
        &[
            ("file_path", "filePath"),
            ("old_string", "oldString"),
            ("new_string", "newString"),
            ("replace_all", "replaceAll"),
        ],
    ),
];

/// The model every run is given (the written sessions name agy's).
const MODEL: &str = "fake/fake-model";

/// An OpenCode installation of the test's own, talking to `api` only.
struct Home {
    dir: PathBuf,
    registry: String,
}

impl Home {
    fn new(dir: PathBuf, api: &FakeOpenAi) -> Home {
        let config = dir.join(".config/opencode");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let settings = json!({
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": false,
            "share": "disabled",
            "model": MODEL,
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "the test's fake API",
                "options": {"baseURL": api.base_url(), "apiKey": "sk-test-not-a-key"},
                "models": {"fake-model": {
                    "name": "Fake model",
                    "attachment": true,
                    "tool_call": true,
                    "modalities": {"input": ["text", "image", "pdf"], "output": ["text"]},
                    "limit": {"context": 1_000_000, "output": 32_000}
                }}
            }}
        });
        std::fs::write(config.join("opencode.json"), settings.to_string()).unwrap();
        Home {
            dir,
            registry: api.registry_url(),
        }
    }

    /// Runs `opencode ARGS` in `cwd` with nothing of the machine's
    /// environment but PATH; kills it after two minutes. Returns stdout.
    fn run(&self, bin: &Path, cwd: &Path, args: &[&str]) -> String {
        let dir = &self.dir;
        let out = clients::run(
            Command::new(bin)
                .args(args)
                .current_dir(cwd)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("HOME", dir)
                .env("XDG_CONFIG_HOME", dir.join(".config"))
                .env("XDG_DATA_HOME", dir.join(".local/share"))
                .env("XDG_CACHE_HOME", dir.join(".cache"))
                .env("XDG_STATE_HOME", dir.join(".local/state"))
                .env("TMPDIR", dir.join("tmp"))
                .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
                .env("OPENCODE_DISABLE_SHARE", "1")
                .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
                .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
                .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
                .env("OPENCODE_DISABLE_CLAUDE_CODE", "1")
                .env("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1")
                .env("OPENCODE_DISABLE_PROJECT_CONFIG", "1")
                .env("npm_config_registry", &self.registry),
            "opencode",
            args,
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "opencode {args:?}: {:?}\n{stdout}\n{}",
            out.status,
            stderr(&out)
        );
        stdout
    }

    /// `opencode import FILE`, which must take it.
    fn import(&self, bin: &Path, cwd: &Path, file: &Path) -> String {
        let printed = self.run(bin, cwd, &["import", file.to_str().unwrap()]);
        let session = printed
            .trim()
            .strip_prefix("Imported session: ")
            .unwrap_or_else(|| panic!("opencode import {file:?}: {printed}"));
        session.to_string()
    }

    /// `opencode run PROMPT` (continuing `session` when given), its words
    /// as separate arguments (OpenCode quotes an argument with a space in
    /// it); returns the session it ran, which must have answered "pong".
    fn prompt(&self, bin: &Path, cwd: &Path, session: Option<&str>, prompt: &str) -> String {
        let mut args = vec!["run", "--format", "json", "--model", MODEL];
        if let Some(session) = session {
            args.extend(["--session", session]);
        }
        args.extend(prompt.split(' '));
        let printed = self.run(bin, cwd, &args);
        let events: Vec<Value> = printed
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert!(
            events.iter().any(|e| e["part"]["text"] == "pong"),
            "opencode {args:?} did not answer: {printed}"
        );
        events
            .iter()
            .find_map(|e| e["sessionID"].as_str())
            .unwrap_or_else(|| panic!("opencode {args:?} named no session: {printed}"))
            .to_string()
    }

    /// `opencode export SESSION`, as JSON.
    fn export(&self, bin: &Path, cwd: &Path, session: &str) -> Value {
        let printed = self.run(bin, cwd, &["export", session]);
        serde_json::from_str(&printed).unwrap_or_else(|e| panic!("export {session}: {e}"))
    }
}

/// Fails unless OpenCode asked the fake for nothing but completions and
/// packages (which it did not get).
fn check_nothing_else(api: &FakeOpenAi) {
    let registry = format!("GET {REGISTRY}");
    let others = api.others();
    for other in &others {
        assert!(other.starts_with(&registry), "OpenCode asked for {other}");
    }
    eprintln!("OpenCode's other requests: {others:?}");
}

/// Continues `session` with "Resume check." and returns the messages of the
/// last model request OpenCode sent for it.
fn resume(home: &Home, bin: &Path, cwd: &Path, api: &FakeOpenAi, session: &str) -> Vec<Value> {
    let ran = home.prompt(bin, cwd, Some(session), "Resume check.");
    assert_eq!(ran, session);
    let requests = api.requests_of(session);
    let last = requests
        .last()
        .unwrap_or_else(|| panic!("no model request for {session}"));
    assert_eq!(last.body["model"], "fake-model");
    last.body["messages"].as_array().unwrap().clone()
}

/// Writes each conversation of `rows` with `args`, takes each file in with
/// `opencode import`, continues it, and checks what OpenCode sent against
/// what the plain stream says. Returns how many were checked.
fn import_and_resume(
    bin: &Path,
    home: &Home,
    work: &Path,
    api: &FakeOpenAi,
    rows: &[u8],
    args: &[&str],
    thinking_as_text: bool,
) -> usize {
    let plain = json_lines(&run_ok("agy-decode", &[], rows));
    let printed = String::from_utf8(run_ok("agy-decode", args, rows)).unwrap();
    let ids: Vec<String> = plain
        .iter()
        .filter(|r| r["kind"] == "meta")
        .map(|r| r["conversation"].as_str().unwrap().to_string())
        .collect();
    let files: Vec<&str> = printed.lines().collect();
    assert_eq!(
        files.len(),
        ids.len(),
        "one file per conversation: {printed}"
    );
    for (id, file) in ids.iter().zip(&files) {
        let session = home.import(bin, work, Path::new(file));
        assert!(file.ends_with(&format!("/{session}.json")), "{file}");
        assert_eq!(conversation_id(&session), *id, "the session id holds {id}");
        let messages = resume(home, bin, work, api, &session);
        let sent = said_by_request(id, &messages, "Resume check.");
        check_sent(id, &sent, &said_by_stream(&plain, id, thinking_as_text));
    }
    ids.len()
}

#[test]
fn opencode_continues_every_converted_conversation() {
    let Some(bin) = opencode() else { return };
    if !support::netns::isolated() {
        return;
    }
    let scratch = Scratch::new("opencode-resume");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let api = FakeOpenAi::start();
    let home = Home::new(scratch.join("home"), &api);
    let sessions = scratch.join("sessions");
    let mut checked = 0;
    for (i, root) in stores(&scratch).into_iter().enumerate() {
        // --thinking text for the last store, so thinking as text goes too.
        let thinking = i == 2;
        let mut args = out_dir_args("opencode", &sessions, &work);
        if thinking {
            args.extend(["--thinking", "text"]);
        }
        checked += import_and_resume(&bin, &home, &work, &api, &rows(&root), &args, thinking);
    }
    assert!(checked >= 11, "{checked} sessions");
    // The stores hold no image, no orphan result, no call left without a
    // result, no implicit message: this conversation does.
    let root = scratch.join("rich");
    let encoded = run_ok("agy-encode", &[], rich_stream().as_bytes());
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &encoded);
    let args = out_dir_args("opencode", &sessions, &work);
    checked += import_and_resume(&bin, &home, &work, &api, &rows(&root), &args, false);
    eprintln!("OpenCode continued {checked} converted conversations");
    check_nothing_else(&api);

    // A session file is never clobbered.
    let again = run("agy-decode", &args, &rows(&sample()));
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("exists (--force replaces it)"));
}

const RICH_ID: &str = "6a0e2c4f-1b3d-4e5f-8a9b-0c1d2e3f4a5b";

/// A conversation with what the stores lack: an image, thinking with a
/// signature, a call of each mapped tool and of another, an error result,
/// a call never answered, a result without a call, and a message the
/// system wrote.
fn rich_stream() -> String {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let records = [
        json!({"role": "user", "timestamp": "2026-11-01T09:00:00Z", "content": [
            {"type": "text", "text": "What is on the screen? Fix it."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}]}),
        json!({"role": "assistant", "model": "gemini-3-flash", "timestamp": "2026-11-01T09:00:01Z",
               "content": [
                   {"type": "thinking", "thinking": "A pixel; look at the files.", "signature": "0a0b0c"},
                   {"type": "text", "text": "Looking."},
                   {"type": "tool_use", "id": "call_ls", "name": "Bash",
                    "input": {"command": "ls", "workdir": "/w"}, "signature": "01020304"},
                   {"type": "tool_use", "id": "call_read", "name": "Read",
                    "input": {"file_path": "/w/a.rs", "offset": 3, "limit": 2}},
                   {"type": "tool_use", "id": "call_grep", "name": "grep_search",
                    "input": {"Query": "TODO", "SearchPath": "/w"}}]}),
        json!({"role": "user", "timestamp": "2026-11-01T09:00:02Z", "content": [
            {"type": "tool_result", "tool_use_id": "call_ls", "content": "a.rs\nb.rs"},
            {"type": "tool_result", "tool_use_id": "call_read", "content": "no such line",
             "is_error": true}]}),
        json!({"role": "assistant", "model": "gemini-3-flash", "timestamp": "2026-11-01T09:00:03Z",
               "content": [
                   {"type": "tool_use", "id": "call_edit", "name": "Edit",
                    "input": {"file_path": "/w/a.rs", "old_string": "x", "new_string": "y",
                              "replace_all": false}},
                   {"type": "tool_use", "id": "call_write", "name": "Write",
                    "input": {"file_path": "/w/c.rs", "content": "fn main() {}\n"}}]}),
        json!({"role": "user", "timestamp": "2026-11-01T09:00:04Z", "content": [
            {"type": "tool_result", "tool_use_id": "call_edit", "content": "edited"},
            {"type": "tool_result", "tool_use_id": "call_write", "content": ""},
            {"type": "tool_result", "tool_use_id": "ghost", "content": "from nowhere",
             "is_error": true}]}),
        json!({"role": "assistant", "model": "gemini-3-flash", "timestamp": "2026-11-01T09:00:05Z",
               "content": [{"type": "text", "text": "Done: a and b."}]}),
        json!({"role": "user", "implicit": true, "timestamp": "2026-11-01T09:00:06Z",
               "content": [{"type": "text", "text": "The user stepped away."}]}),
    ];
    let meta = json!({"conversation": RICH_ID, "kind": "meta", "id": RICH_ID,
                      "timestamp": "2026-11-01T09:00:00Z", "cwd": "/w", "title": "Rich"});
    message_stream(RICH_ID, records, &meta)
}

/// Sessions OpenCode wrote itself (a plain turn; a real bash call against
/// the fake, then a second turn; reasoning) go `opencode export` →
/// agy-encode → agy-pack → agy-dump | agy-decode with everything they say,
/// and from there into a fresh OpenCode, which continues them.
#[test]
fn opencode_sessions_go_to_agy_and_come_back() {
    let Some(bin) = opencode() else { return };
    if !support::netns::isolated() {
        return;
    }
    let scratch = Scratch::new("opencode-roundtrip");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let api = FakeOpenAi::start();
    let home = Home::new(scratch.join("home"), &api);
    let plain = home.prompt(&bin, &work, None, "Say hello, plainly.");
    let shell = home.prompt(&bin, &work, None, "RUN: echo agy-round-trip");
    home.prompt(&bin, &work, Some(&shell), "And a second question.");
    let think = home.prompt(&bin, &work, None, "THINK: what next?");
    let back = Home::new(scratch.join("home-back"), &api);
    let sessions = scratch.join("sessions");
    let real_work = std::fs::canonicalize(&work).unwrap();
    for session in [&plain, &shell, &think] {
        let export = home.export(&bin, &work, session);
        let want = said_by_export(&export);
        assert!(!want.texts.is_empty(), "{export}");
        let file = scratch.join(format!("{session}.json"));
        std::fs::write(&file, export.to_string()).unwrap();
        // OpenCode -> agy: encode, pack, and read back with agy-decode.
        let (rows, decoded) = into_agy(&scratch, "opencode", &file, session);
        let id = conversation_id(session);
        assert_eq!(said_by_stream(&decoded, &id, false), want, "{session}");
        let meta = decoded.iter().find(|r| r["kind"] == "meta").unwrap();
        assert_eq!(meta["title"], TITLE, "{meta}");
        assert_eq!(
            meta["cwd"].as_str().map(PathBuf::from),
            Some(real_work.clone())
        );
        if session == &shell {
            assert!(want
                .calls
                .iter()
                .any(|(_, name, input)| name == "bash" && input.contains("echo agy-round-trip")));
            assert!(want
                .results
                .iter()
                .any(|(_, text)| text == "agy-round-trip\n"));
            assert!(want.texts.contains(&"And a second question.".to_string()));
        }
        if session == &think {
            assert!(
                want.texts.contains(&THOUGHT.to_string()),
                "{:?}",
                want.texts
            );
        }
        // ... and back to OpenCode, which continues it.
        let args = out_dir_args("opencode", &sessions, &work);
        let n = import_and_resume(&bin, &back, &work, &api, &rows, &args, false);
        assert_eq!(n, 1);
    }
    check_nothing_else(&api);
}

/// An export agy-encode cannot read is an error naming the file (and the
/// line, when it is not JSON), with exit status 1 and nothing written.
#[test]
fn bad_exports_name_file_and_line() {
    let scratch = Scratch::new("opencode-bad");
    for (name, text, want) in [
        (
            "broken.json",
            "{\n  \"info\": {\n    \"id\": \n".to_string(),
            "broken.json:4: not an OpenCode export: EOF",
        ),
        (
            "rollout.json",
            "{\"timestamp\":\"2026-08-10T09:00:00Z\",\"type\":\"session_meta\"}\n".to_string(),
            "rollout.json: not an OpenCode export: no \"info\" object",
        ),
        (
            "empty.json",
            String::new(),
            "empty.json:1: not an OpenCode export",
        ),
    ] {
        let path = scratch.join(name);
        std::fs::write(&path, text).unwrap();
        let out = run(
            "agy-encode",
            &["--format", "opencode", path.to_str().unwrap()],
            b"",
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stderr = stderr(&out);
        assert!(stderr.contains(want), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}: wrote rows anyway");
    }
}

/// `--verbose` says what a conversion changed or left out, and the same
/// conversation always gives the same bytes.
#[test]
fn verbose_counts_what_opencode_changes_and_leaves_out() {
    let rows = rows(&sample());
    let out = run("agy-decode", &["--format", "opencode", "--verbose"], &rows);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    for what in [
        "thinking blocks kept as reasoning",
        "user messages merged into the turn before",
        "3 conversations:",
    ] {
        assert!(err.contains(what), "no {what:?} in {err}");
    }
    assert_eq!(json_lines(&out.stdout).len(), 3, "one document a line");
    let again = run_ok("agy-decode", &["--format", "opencode"], &rows);
    assert_eq!(again, out.stdout, "the same stream, other bytes");
    let scratch = Scratch::new("opencode-verbose");
    let export = json!({"info": {"id": "ses_dcc1506f0ffeEmGm4kxyJ2tU07", "title": "t",
                                 "directory": "/w", "time": {"created": 1_796_167_366_927i64}},
        "messages": [
            {"info": {"id": "msg_1", "role": "user", "time": {"created": 1_796_167_367_195i64}},
             "parts": [{"type": "text", "text": "hi"}, {"type": "agent", "name": "general"}]},
            {"info": {"id": "msg_2", "role": "assistant", "time": {"created": 1_796_167_369_265i64}},
             "parts": [{"type": "step-start"}, {"type": "text", "text": "pong"},
                       {"type": "step-finish", "reason": "stop"}]}]});
    let file = scratch.join("s.json");
    std::fs::write(&file, serde_json::to_string_pretty(&export).unwrap()).unwrap();
    let out = run(
        "agy-encode",
        &["--format", "opencode", "--verbose", file.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("agent mentions left out: 1")
            && err.contains("step, snapshot, patch and retry parts left out: 2"),
        "{err}"
    );
}
