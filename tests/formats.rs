//! `agy-decode --format anthropic|claude-code|codex` and `agy-encode
//! --format claude-code|codex`, tried against the real clients: the
//! official `anthropic` Python SDK's request types, the real Claude Code
//! CLI resuming sessions against a fake Messages API on 127.0.0.1, and the
//! real Codex CLI against a fake Responses API (`formats/codex.rs`).
//!
//! `.ci/run` installs them under `target/ext/` (a venv with the pinned
//! SDK, the pinned `@anthropic-ai/claude-code` and `@openai/codex` from
//! npm). A test whose client is missing says so on stderr and passes,
//! unless `CI` is set, where it fails.
//!
//! Every conversation of the sample store and of the generator's stores
//! goes through every format. A test that starts a real CLI runs in a
//! loopback-only network namespace of its own (`support::netns`), so
//! nothing it starts can reach anything but the fake API, and nothing it
//! starts outlives it.

#[path = "formats/codex.rs"]
mod codex;
#[path = "formats/fake_api.rs"]
mod fake_api;
#[path = "formats/fake_responses.rs"]
mod fake_responses;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use agy_tools::format::claude_code::project_slug;
use agy_tools::format::{self, Converter, Format};
use agy_tools::stream::io::{Captured, Output};
use fake_api::FakeApi;
use serde_json::{json, Value};
use support::clients::{self, claude, python};
use support::corpus::{into_agy, out_dir_args, rows, sample, stores};
use support::holds::{
    assert_came_back, assert_kept, holds_of_stream, message_stream, missing, result_text, Holds,
};
use support::store::json_lines;
use support::{run, run_ok, Scratch};

/// What Claude Code writes when it repairs a history it cannot send: a
/// request holding any of these means the session needed repairing.
const REPAIR_TEXTS: &[&str] = &[
    "(no content)",
    "[Request interrupted by user]",
    "[Tool result missing due to internal error]",
    "No response requested.",
    "Continue from where you left off.",
];

/// A conversation in the message stream as agy-decode is about to write
/// it (issue 9): every message names its steps in `idx` (a number or a
/// list), system messages carry `raw`, a damaged step says so, tool calls
/// and thinking carry signatures, a task_boundary call has its result, and
/// a result whose call was never declared stays a tool_result block. The
/// converters must take it as it is.
const FUTURE_ID: &str = "5d1f0c2e-8a47-4b6e-9f31-2c7d4e8a9b10";

fn future_stream() -> String {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let records = [
        json!({"role": "user", "idx": 0, "timestamp": "2026-08-10T09:00:00Z",
               "content": [{"type": "text", "text": "Tidy the task list."}]}),
        json!({"role": "assistant", "idx": [1, 2], "model": "gemini-3-flash", "stop_reason": "tool_use",
               "usage": {"input_tokens": 10, "output_tokens": 2, "thoughts_tokens": 5},
               "content": [
                   {"type": "thinking", "thinking": "List first.", "signature": "c2ln"},
                   {"type": "text", "text": "Listing."},
                   {"type": "tool_use", "id": "call_ls", "name": "Bash",
                    "input": {"command": "ls"}, "signature": "0a1b2c"},
                   {"type": "tool_use", "id": "call_tb", "name": "task_boundary",
                    "input": {"TaskName": "Tidy"}, "signature": "0d0e"}]}),
        json!({"role": "user", "idx": 3, "damaged": true,
               "content": [{"type": "tool_result", "tool_use_id": "call_ls", "content": "a\nb"}]}),
        json!({"role": "system", "idx": 4, "step_type": "TASK_BOUNDARY", "raw": "0a04546964",
               "content": [{"type": "text", "text": "Tidy", "field": "task_name"}]}),
        json!({"role": "user", "idx": 4,
               "content": [{"type": "tool_result", "tool_use_id": "call_tb", "content": ""}]}),
        json!({"role": "user", "idx": 5,
               "content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "from nowhere", "is_error": true}]}),
        json!({"role": "user", "idx": 6, "implicit": true, "content": [
               {"type": "text", "text": "Here is the screen."},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
               {"type": "image", "source": {"type": "url", "media_type": "image/png", "url": "file:///tmp/shot.png"}}]}),
        json!({"role": "assistant", "idx": [7], "model": "gemini-3-flash",
               "content": [{"type": "thinking", "thinking": "", "signature": "c2ln"},
                           {"type": "text", "text": "Done: a and b.  \n"}]}),
    ];
    let meta = json!({"conversation": FUTURE_ID, "kind": "meta", "id": FUTURE_ID, "cwd": "/nowhere",
                      "title": "Tidy", "model": "gemini-3-flash", "lineage": {"future": true}});
    message_stream(FUTURE_ID, records, &meta)
}

/// Converts a message stream with the library's converter.
fn convert(stream: &str, format: Format, options: format::Options) -> Vec<u8> {
    let captured = Captured::default();
    let mut out = Output::captured(&captured);
    let mut converter = Converter::new(format, options);
    for line in stream.lines() {
        converter.line(line.as_bytes(), &mut out).unwrap();
    }
    converter.finish(&mut out).unwrap();
    out.flush().unwrap();
    captured.take()
}

/// What a Messages API request body holds.
fn holds_of_request(messages: &[Value]) -> Holds {
    let mut holds = Holds::default();
    for message in messages {
        if message["role"] == "assistant" {
            holds.assistant_turns += 1;
        }
        let blocks = match &message["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(blocks) => blocks.clone(),
            _ => Vec::new(),
        };
        for block in blocks {
            match block["type"].as_str().unwrap_or("") {
                "text" => {
                    holds
                        .texts
                        .insert(block["text"].as_str().unwrap().to_string());
                }
                "tool_use" => {
                    holds.calls.insert((
                        block["id"].as_str().unwrap().to_string(),
                        block["name"].as_str().unwrap().to_string(),
                        block["input"].to_string(),
                    ));
                }
                "tool_result" => {
                    holds.results.insert((
                        block["tool_use_id"].as_str().unwrap().to_string(),
                        result_text(&block["content"]),
                    ));
                }
                _ => {}
            }
        }
    }
    holds
}

#[test]
fn anthropic_requests_pass_the_sdk_types_and_the_sequencing_rules() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("formats-anthropic");
    let mut requests = Vec::new();
    let mut conversations = 0;
    for root in stores(&scratch) {
        let rows = rows(&root);
        for (all, thinking) in [(false, false), (true, false), (true, true)] {
            let mut plain_args = vec![];
            let mut args = vec!["--format", "anthropic"];
            if all {
                plain_args.push("--all");
                args.push("--all");
            }
            if thinking {
                args.extend(["--thinking", "text"]);
            }
            let plain = json_lines(&run_ok("agy-decode", &plain_args, &rows));
            let converted = run_ok("agy-decode", &args, &rows);
            let lines = json_lines(&converted);
            let want = holds_of_stream(&plain, thinking);
            assert_eq!(lines.len(), want.len(), "one request per conversation");
            for line in &lines {
                let id = line["conversation"].as_str().unwrap();
                let got = holds_of_request(line["messages"].as_array().unwrap());
                assert_kept(&want[id], &got, id, &format!("{args:?}"));
            }
            conversations += lines.len();
            requests.extend_from_slice(&converted);
        }
    }
    let future = json_lines(future_stream().as_bytes());
    for thinking in [format::Thinking::Drop, format::Thinking::Text] {
        let options = format::Options {
            thinking,
            ..format::Options::default()
        };
        let converted = convert(&future_stream(), Format::Anthropic, options);
        let lines = json_lines(&converted);
        let want = &holds_of_stream(&future, thinking == format::Thinking::Text)[FUTURE_ID];
        let got = holds_of_request(lines[0]["messages"].as_array().unwrap());
        let mut trimmed = Holds {
            texts: want.texts.clone(),
            ..Holds::default()
        };
        trimmed.texts.remove("Done: a and b.  \n");
        trimmed.texts.insert("Done: a and b.".into());
        assert!(
            missing(&trimmed, &got, FUTURE_ID).is_empty(),
            "{:#?}",
            missing(&trimmed, &got, FUTURE_ID)
        );
        assert!(missing(
            &Holds {
                calls: want.calls.clone(),
                results: want.results.clone(),
                ..Holds::default()
            },
            &got,
            FUTURE_ID
        )
        .is_empty());
        assert_eq!(lines[0]["system"], "[TASK_BOUNDARY] Tidy");
        conversations += 1;
        requests.extend_from_slice(&converted);
    }
    let file = scratch.join("requests.jsonl");
    std::fs::write(&file, &requests).unwrap();
    let checker = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/formats/anthropic_check.py");
    let out = Command::new(&python)
        .arg(&checker)
        .arg(&file)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}{}", support::stderr(&out));
    assert!(
        report.contains(&format!("{conversations} requests checked, 0 failed")),
        "{report}"
    );
    eprintln!("{}", report.trim());

    // The checker is not vacuous: the plain stream, taken as requests as it
    // is, breaks the rules the issue found it breaking.
    let mut naive = Vec::new();
    for root in stores(&scratch).into_iter().take(1) {
        let plain = json_lines(&run_ok("agy-decode", &["--all"], &rows(&root)));
        let mut by_conversation: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for record in plain.iter().filter(|r| r["kind"] == "message") {
            by_conversation
                .entry(record["conversation"].as_str().unwrap().into())
                .or_default()
                .push(json!({"role": record["role"], "content": record["content"]}));
        }
        for (id, messages) in by_conversation {
            naive.extend(
                json!({"conversation": id, "messages": messages})
                    .to_string()
                    .bytes(),
            );
            naive.push(b'\n');
        }
    }
    std::fs::write(&file, &naive).unwrap();
    let out = Command::new(&python)
        .arg(&checker)
        .arg(&file)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "the plain stream passed: {report}");
    for error in ["has thinking", "two user messages in a row", "unknown key"] {
        assert!(report.contains(error), "no {error:?} in {report}");
    }
}

/// Runs Claude Code headless, pointed at `api` only, in `cwd` with `home`
/// as its HOME (and its temporary files under it); gives up (killing it)
/// after two minutes.
fn run_claude(claude: &Path, home: &Path, cwd: &Path, api: &FakeApi, args: &[&str]) -> Value {
    let tmp = home.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = clients::run(
        Command::new(claude)
            .args(args)
            .args(["--output-format", "json"])
            .current_dir(cwd)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", home)
            .env("TMPDIR", &tmp)
            .env("CLAUDE_CODE_TMPDIR", &tmp)
            .env("ANTHROPIC_BASE_URL", api.base_url())
            .env("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        "claude",
        args,
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "claude {args:?}: {:?}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            support::stderr(&out)
        )
    });
    assert!(
        out.status.success() && result["is_error"] == false,
        "claude {args:?}: {result}"
    );
    result
}

/// The directory name Claude Code keeps `work`'s sessions under.
fn slug_of(work: &Path) -> String {
    project_slug(&std::fs::canonicalize(work).unwrap().to_string_lossy())
}

/// Resumes each session (in parallel, a few at a time) and returns the
/// last request Claude Code sent for it.
fn resume_all(
    claude: &Path,
    home: &Path,
    cwd: &Path,
    api: &FakeApi,
    sessions: &[String],
) -> BTreeMap<String, Vec<Value>> {
    let mut requests = BTreeMap::new();
    for chunk in sessions.chunks(4) {
        std::thread::scope(|scope| {
            for session in chunk {
                scope.spawn(move || {
                    let result = run_claude(
                        claude,
                        home,
                        cwd,
                        api,
                        &["-p", "Resume check.", "--resume", session],
                    );
                    assert_eq!(result["session_id"], session.as_str());
                    assert_eq!(result["result"], "pong", "{session}: {result}");
                });
            }
        });
    }
    for session in sessions {
        let logged = api.requests_of(session);
        let last = logged
            .last()
            .unwrap_or_else(|| panic!("no request for {session}"));
        assert!(last.path.starts_with("/v1/messages"));
        requests.insert(
            session.clone(),
            last.body["messages"].as_array().unwrap().clone(),
        );
    }
    requests
}

/// The assistant lines of a session file, before it is resumed (Claude
/// Code appends to it).
fn assistant_lines(session_file: &Path) -> usize {
    let lines = json_lines(&std::fs::read(session_file).unwrap());
    lines.iter().filter(|l| l["type"] == "assistant").count()
}

/// Checks that Claude Code's request for a session carries everything
/// `want` holds, one assistant turn per assistant line the file had, and
/// none of its repair texts.
fn check_resumed(name: &str, request: &[Value], want: &Holds, assistant_lines: usize) {
    let got = holds_of_request(request);
    assert_kept(want, &got, name, "Claude Code's request");
    assert_eq!(
        got.assistant_turns, assistant_lines,
        "{name}: assistant turns merged or dropped"
    );
    for text in &got.texts {
        for repair in REPAIR_TEXTS {
            assert!(
                !text.contains(repair),
                "{name}: Claude Code repaired the session: {text:?}"
            );
        }
    }
    let last = request.iter().rfind(|m| m["role"] != "system").unwrap();
    let texts: Vec<String> = holds_of_request(std::slice::from_ref(last))
        .texts
        .into_iter()
        .collect();
    assert_eq!(
        texts,
        ["Resume check."],
        "{name}: the resume prompt is the last turn"
    );
}

#[test]
fn claude_code_resumes_every_converted_conversation() {
    let Some(claude) = claude() else { return };
    if !support::netns::isolated() {
        return;
    }
    let scratch = Scratch::new("formats-claude");
    let home = scratch.join("home");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let projects = home.join(".claude/projects");
    let api = FakeApi::start();
    let mut sessions = Vec::new();
    let mut wants = BTreeMap::new();
    for (i, root) in stores(&scratch).into_iter().enumerate() {
        let rows = rows(&root);
        let plain = json_lines(&run_ok("agy-decode", &[], &rows));
        // --thinking text for the last store, so thinking as text resumes too.
        let thinking = i == 2;
        let mut args = out_dir_args("claude-code", &projects, &work);
        if thinking {
            args.extend(["--thinking", "text"]);
        }
        let written = String::from_utf8(run_ok("agy-decode", &args, &rows)).unwrap();
        for (id, holds) in holds_of_stream(&plain, thinking) {
            let path = projects.join(slug_of(&work)).join(format!("{id}.jsonl"));
            assert!(
                written.lines().any(|l| Path::new(l) == path),
                "{path:?} not in {written}"
            );
            sessions.push(id.clone());
            wants.insert(id, (assistant_lines(&path), holds));
        }
    }
    let requests = resume_all(&claude, &home, &work, &api, &sessions);
    for (id, (lines, want)) in &wants {
        check_resumed(id, &requests[id], want, *lines);
    }
    eprintln!(
        "Claude Code resumed {} converted conversations",
        sessions.len()
    );

    // A session is never clobbered: its file may hold turns Claude Code
    // added since it was converted.
    let rows = rows(&sample());
    let again = run(
        "agy-decode",
        &out_dir_args("claude-code", &projects, &work),
        &rows,
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(support::stderr(&again).contains("exists (--force replaces it)"));
}

/// What a session file Claude Code wrote holds, read plainly: every text
/// of a user line a person typed and of an assistant line, every call and
/// every result.
fn holds_of_session(path: &Path) -> Holds {
    let mut holds = Holds::default();
    for line in json_lines(&std::fs::read(path).unwrap()) {
        let kind = line["type"].as_str().unwrap_or("");
        if !matches!(kind, "user" | "assistant") || line["isMeta"] == true {
            continue;
        }
        let request = holds_of_request(&[line["message"].clone()]);
        holds.texts.extend(request.texts);
        holds.calls.extend(request.calls);
        holds.results.extend(request.results);
    }
    holds
}

#[test]
fn claude_code_sessions_go_to_agy_and_come_back() {
    let Some(claude) = claude() else { return };
    if !support::netns::isolated() {
        return;
    }
    let scratch = Scratch::new("formats-roundtrip");
    let home = scratch.join("home");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let api = FakeApi::start();
    let allow = ["--allowedTools", "Bash"];
    let claude_here = |args: &[&str]| run_claude(&claude, &home, &work, &api, args);
    let session = |result: Value| result["session_id"].as_str().unwrap().to_string();
    let plain = session(claude_here(&["-p", "Say hello, plainly."]));
    let bash = session(claude_here(&[
        "-p",
        "RUN: echo agy-round-trip",
        allow[0],
        allow[1],
    ]));
    claude_here(&["-p", "And a second question.", "--resume", &bash]);
    let parallel = session(claude_here(&[
        "-p",
        "PAR: echo one ;; echo two",
        allow[0],
        allow[1],
    ]));
    let slug = slug_of(&work);
    let back_home = scratch.join("home-back");
    let back_projects = back_home.join(".claude/projects");
    let mut sessions = Vec::new();
    let mut wants = BTreeMap::new();
    for id in [&plain, &bash, &parallel] {
        let file = home
            .join(".claude/projects")
            .join(&slug)
            .join(format!("{id}.jsonl"));
        let want = holds_of_session(&file);
        assert!(!want.texts.is_empty());
        // Claude Code -> agy: encode, pack, and read back with agy-decode.
        let (rows, decoded) = into_agy(&scratch, "claude-code", &file, id);
        assert_came_back(&want, &holds_of_stream(&decoded, false)[id.as_str()], id);
        // ... and back to Claude Code, which resumes it.
        let args = out_dir_args("claude-code", &back_projects, &work);
        let written = run_ok("agy-decode", &args, &rows);
        let path = PathBuf::from(String::from_utf8(written).unwrap().trim());
        sessions.push(id.clone());
        wants.insert(id.clone(), (assistant_lines(&path), want));
    }
    assert!(wants[&bash]
        .1
        .calls
        .iter()
        .any(|(_, name, input)| name == "Bash" && input.contains("echo agy-round-trip")));
    assert!(wants[&bash]
        .1
        .results
        .iter()
        .any(|(_, text)| text == "agy-round-trip"));
    assert_eq!(wants[&parallel].1.calls.len(), 2);
    let requests = resume_all(&claude, &back_home, &work, &api, &sessions);
    for (id, (lines, want)) in &wants {
        check_resumed(id, &requests[id], want, *lines);
    }
}
