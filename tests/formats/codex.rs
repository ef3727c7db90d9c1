//! `agy-decode --format codex` and `agy-encode --format codex`, tried
//! against the real Codex CLI (`@openai/codex`, pinned by `.ci/run`)
//! resuming sessions against a fake Responses API on 127.0.0.1
//! ([`super::fake_responses`]), each test in a loopback-only network
//! namespace of its own.
//!
//! Codex runs with a `CODEX_HOME` of the test's own, whose `config.toml`
//! sets up a provider `fake` for the fake API (Responses over HTTP only,
//! no WebSocket) and turns off the update check, analytics and feedback
//! uploads. A session names its provider, and Codex refuses to resume it
//! under another: `agy-decode --out-dir` names the one `config.toml` names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use agy_tools::agy::tools;
use agy_tools::format::codex::TOOLS;
use serde_json::{json, Value};

use super::fake_responses::{FakeResponses, THOUGHT};
use crate::support::clients::{self, codex};
use crate::support::corpus::{into_agy, out_dir_args, rows, sample, stores};
use crate::support::holds::{assert_came_back, assert_kept, holds_of_stream, Holds};
use crate::support::store::json_lines;
use crate::support::{self, run_ok, Scratch};

/// What Codex writes when it repairs a history: the output it makes up
/// for a call that has none.
const ABORTED: &str = "aborted";

/// The openings of the messages Codex adds to every request itself.
const CODEX_CONTEXT: &[&str] = &[
    "<environment_context>",
    "<skills_instructions>",
    "<user_instructions>",
    "<permissions instructions>",
    "# AGENTS.md instructions",
];

/// A Codex installation of the test's own: `CODEX_HOME` with a config that
/// talks to `api` only, and a HOME beside it.
struct Home {
    home: PathBuf,
    codex_home: PathBuf,
}

impl Home {
    fn new(dir: PathBuf, api: &FakeResponses) -> Home {
        let codex_home = dir.join("codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        std::fs::write(
            codex_home.join("config.toml"),
            format!(
                r#"model = "gpt-fake"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.fake]
name = "the test's fake Responses API"
base_url = "{}"
env_key = "FAKE_RESPONSES_KEY"
wire_api = "responses"
supports_websockets = false
"#,
                api.base_url()
            ),
        )
        .unwrap();
        Home {
            home: dir,
            codex_home,
        }
    }

    /// The rollout file of `session` under `sessions/`.
    fn rollout(&self, session: &str) -> PathBuf {
        fn walk(dir: &Path, suffix: &str) -> Option<PathBuf> {
            for entry in std::fs::read_dir(dir).ok()?.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    if let Some(found) = walk(&path, suffix) {
                        return Some(found);
                    }
                } else if path.to_string_lossy().ends_with(suffix) {
                    return Some(path);
                }
            }
            None
        }
        walk(
            &self.codex_home.join("sessions"),
            &format!("-{session}.jsonl"),
        )
        .unwrap_or_else(|| panic!("no rollout of {session}"))
    }
}

/// Runs `codex exec --json ARGS` in `cwd`, with nothing of the machine's
/// environment but PATH; gives up (killing it) after two minutes. Returns
/// the id of the thread it ran.
fn run_codex(codex: &Path, home: &Home, cwd: &Path, args: &[&str]) -> String {
    let out = clients::run(
        Command::new(codex)
            .args(["exec", "--json", "--skip-git-repo-check"])
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &home.home)
            .env("CODEX_HOME", &home.codex_home)
            .env("FAKE_RESPONSES_KEY", "sk-test-not-a-key")
            .env("NO_COLOR", "1"),
        "codex",
        args,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "codex {args:?}: {:?}\n{stdout}\n{}",
        out.status,
        support::stderr(&out)
    );
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e.to_string().contains("\"pong\"") || e["type"] == "turn.completed"),
        "codex {args:?} did not finish its turn: {stdout}"
    );
    events
        .iter()
        .find(|e| e["type"] == "thread.started")
        .and_then(|e| e["thread_id"].as_str())
        .unwrap_or_else(|| panic!("codex {args:?} named no thread: {stdout}"))
        .to_string()
}

/// The items of a request (or a rollout's `response_item` payloads) that
/// are the conversation: without Codex's developer messages and the
/// context it adds itself.
fn conversation(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .filter(|item| {
            if item["type"] != "message" {
                return true;
            }
            if item["role"] == "developer" || item["role"] == "system" {
                return false;
            }
            let first = item["content"][0]["text"].as_str().unwrap_or("");
            !CODEX_CONTEXT.iter().any(|c| first.starts_with(c))
        })
        .cloned()
        .collect()
}

/// An item as what it says, without Codex's bookkeeping keys (ids,
/// statuses, metadata), for comparing orders.
fn shape(item: &Value) -> Value {
    let texts = |key: &str| -> Vec<Value> {
        item[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| match &p["text"] {
                Value::Null => p["image_url"].clone(),
                text => text.clone(),
            })
            .collect()
    };
    match item["type"].as_str().unwrap_or("") {
        "message" => json!({"message": item["role"], "content": texts("content")}),
        "function_call" => json!({"call": item["name"], "id": item["call_id"],
            "arguments": serde_json::from_str::<Value>(item["arguments"].as_str().unwrap()).unwrap()}),
        "custom_tool_call" => {
            json!({"call": item["name"], "id": item["call_id"], "input": item["input"]})
        }
        "reasoning" => json!({"reasoning": texts("summary")}),
        kind => json!({"item": kind, "id": item["call_id"], "output": item["output"]}),
    }
}

/// What a list of conversation items holds, calls by the stream's common
/// tool names.
fn holds_of_items(items: &[Value]) -> Holds {
    let mut holds = Holds::default();
    for item in items {
        match item["type"].as_str().unwrap_or("") {
            "message" => {
                if item["role"] == "assistant" {
                    holds.assistant_turns += 1;
                }
                for part in item["content"].as_array().into_iter().flatten() {
                    if let Some(text) = part["text"].as_str() {
                        holds.texts.insert(text.to_string());
                    }
                }
            }
            "function_call" => {
                let args =
                    serde_json::from_str::<Value>(item["arguments"].as_str().unwrap()).unwrap();
                let list: Option<Vec<(String, Value)>> = args
                    .as_object()
                    .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
                let (name, mapped) =
                    tools::to_common_by(TOOLS, item["name"].as_str().unwrap(), list.as_ref());
                let input = match mapped {
                    Some(mapped) => Value::Object(mapped.into_iter().collect()),
                    None => args,
                };
                holds.calls.insert((
                    item["call_id"].as_str().unwrap().to_string(),
                    name,
                    input.to_string(),
                ));
            }
            "custom_tool_call" => {
                holds.calls.insert((
                    item["call_id"].as_str().unwrap().to_string(),
                    item["name"].as_str().unwrap().to_string(),
                    item["input"].to_string(),
                ));
            }
            "function_call_output" | "custom_tool_call_output" => {
                holds.results.insert((
                    item["call_id"].as_str().unwrap().to_string(),
                    item["output"].as_str().unwrap_or("").to_string(),
                ));
            }
            _ => {}
        }
    }
    holds
}

/// The `response_item` payloads of a rollout file, in order.
fn response_items(rollout: &Path) -> Vec<Value> {
    json_lines(&std::fs::read(rollout).unwrap())
        .into_iter()
        .filter(|l| l["type"] == "response_item")
        .map(|l| l["payload"].clone())
        .collect()
}

/// Resumes each session (a few at a time) with the prompt "Resume check."
/// and returns the conversation items of the last request Codex sent for
/// it.
fn resume_all(
    codex: &Path,
    home: &Home,
    cwd: &Path,
    api: &FakeResponses,
    sessions: &[String],
) -> BTreeMap<String, Vec<Value>> {
    for chunk in sessions.chunks(4) {
        std::thread::scope(|scope| {
            for session in chunk {
                scope.spawn(move || {
                    let thread = run_codex(codex, home, cwd, &["resume", session, "Resume check."]);
                    assert_eq!(&thread, session);
                });
            }
        });
    }
    let mut requests = BTreeMap::new();
    for session in sessions {
        let logged = api.requests_of(session);
        let last = logged
            .last()
            .unwrap_or_else(|| panic!("no request for {session}"));
        let input = last.body["input"].as_array().unwrap();
        requests.insert(session.clone(), conversation(input));
    }
    requests
}

/// Checks that Codex's request for a session is the session's history as
/// written, item for item and in order, then the resume prompt; that it
/// holds everything `want` holds; and that Codex repaired nothing.
fn check_resumed(name: &str, request: &[Value], written: &[Value], want: &Holds) {
    let (prompt, history) = request.split_last().expect("an empty request");
    assert_eq!(
        shape(prompt),
        json!({"message": "user", "content": ["Resume check."]}),
        "{name}: the resume prompt is the last item"
    );
    let sent: Vec<Value> = history.iter().map(shape).collect();
    let wrote: Vec<Value> = conversation(written).iter().map(shape).collect();
    let same = |a: &Value, b: &Value| {
        a == b
            || (a["item"].is_string()
                && a["id"] == b["id"]
                && a["item"] == b["item"]
                && truncated_from(
                    a["output"].as_str().unwrap_or(""),
                    b["output"].as_str().unwrap_or(""),
                ))
    };
    if sent.len() != wrote.len() || sent.iter().zip(&wrote).any(|(a, b)| !same(a, b)) {
        let at = sent
            .iter()
            .zip(&wrote)
            .take_while(|(a, b)| same(a, b))
            .count();
        let cut = |v: Option<&Value>| -> String {
            v.map_or("(nothing)".into(), Value::to_string)
                .chars()
                .take(400)
                .collect()
        };
        panic!(
            "{name}: Codex sent another history than the file's ({} items sent, {} written); first difference at {at}:\nsent  {}\nwrote {}",
            sent.len(),
            wrote.len(),
            cut(sent.get(at)),
            cut(wrote.get(at)),
        );
    }
    let mut got = holds_of_items(history);
    // Codex sends a long output cut in the middle, as it does its own: a
    // result is there when what was sent is it, cut so.
    for (id, text) in &want.results {
        if let Some(sent) = got
            .results
            .iter()
            .find(|(i, t)| i == id && truncated_from(t, text))
            .cloned()
        {
            got.results.remove(&sent);
            got.results.insert((id.clone(), text.clone()));
        }
    }
    assert_kept(want, &got, name, "Codex's request");
    for (id, output) in &got.results {
        assert_ne!(output, ABORTED, "{name}: Codex made up the output of {id}");
    }
}

/// Whether `sent` is `text`, or `text` with its middle cut out the way
/// Codex cuts a long output before sending it: `HEAD…N chars truncated…TAIL`
/// where HEAD and TAIL are `text`'s own ends and N the characters between.
fn truncated_from(sent: &str, text: &str) -> bool {
    if sent == text {
        return true;
    }
    let Some((head, rest)) = sent.split_once('…') else {
        return false;
    };
    let Some((count, tail)) = rest.split_once(" chars truncated…") else {
        return false;
    };
    let Ok(count) = count.parse::<usize>() else {
        return false;
    };
    text.starts_with(head)
        && text.ends_with(tail)
        && text.chars().count() == head.chars().count() + count + tail.chars().count()
}

#[test]
fn codex_resumes_every_converted_conversation() {
    let Some(codex) = codex() else { return };
    if !support::netns::isolated() {
        return;
    }
    let scratch = Scratch::new("formats-codex");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let api = FakeResponses::start();
    let home = Home::new(scratch.join("home"), &api);
    let out_dir = home.codex_home.to_str().unwrap().to_string();
    let mut sessions = Vec::new();
    let mut wants = BTreeMap::new();
    for (i, root) in stores(&scratch).into_iter().enumerate() {
        let rows = rows(&root);
        let plain = json_lines(&run_ok("agy-decode", &[], &rows));
        // --thinking text for the last store, so thinking as text resumes too.
        let thinking = i == 2;
        let mut args = out_dir_args("codex", &home.codex_home, &work);
        if thinking {
            args.extend(["--thinking", "text"]);
        }
        let printed = String::from_utf8(run_ok("agy-decode", &args, &rows)).unwrap();
        for (id, holds) in holds_of_stream(&plain, thinking) {
            let path = home.rollout(&id);
            assert!(
                printed.lines().any(|l| Path::new(l) == path),
                "{path:?} not in {printed}"
            );
            let first = &json_lines(&std::fs::read(&path).unwrap())[0];
            assert_eq!(first["type"], "session_meta");
            assert_eq!(first["payload"]["id"], id.as_str());
            assert_eq!(first["payload"]["model_provider"], "fake");
            let items = response_items(&path);
            assert!(
                items.iter().all(|i| i["type"] != "reasoning"),
                "{id}: thinking written as a reasoning item"
            );
            sessions.push(id.clone());
            wants.insert(id, (items, holds));
        }
    }
    let requests = resume_all(&codex, &home, &work, &api, &sessions);
    for (id, (written, want)) in &wants {
        check_resumed(id, &requests[id], written, want);
    }
    eprintln!("Codex resumed {} converted conversations", sessions.len());

    // A session is never clobbered: Codex appends to a session it resumes.
    let rows = rows(&sample());
    let again = support::run(
        "agy-decode",
        &["--format", "codex", "--out-dir", &out_dir],
        &rows,
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(support::stderr(&again).contains("exists (--force replaces it)"));
}

#[test]
fn codex_sessions_go_to_agy_and_come_back() {
    let Some(codex) = codex() else { return };
    if !support::netns::isolated() {
        return;
    }
    let scratch = Scratch::new("formats-codex-roundtrip");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let api = FakeResponses::start();
    let home = Home::new(scratch.join("home"), &api);
    let here = |args: &[&str]| run_codex(&codex, &home, &work, args);
    // Paginated sessions, as 0.171 starts them: a plain turn, a shell call
    // and its result (then a second turn), reasoning.
    let plain = here(&["Say hello, plainly."]);
    let shell = here(&["RUN: echo agy-round-trip"]);
    here(&["resume", &shell, "And a second question."]);
    let think = here(&["THINK: what next?"]);
    // A legacy session: one agy-decode wrote, which Codex resumes (and
    // appends to) in its legacy mode, with a shell call of its own.
    let legacy_id = "3c1f4a52-9d0e-4b7a-8e21-5f6a7b8c9d0e";
    let stream = [
        json!({"conversation": legacy_id, "kind": "message", "role": "user",
               "timestamp": "2026-08-10T09:00:00Z",
               "content": [{"type": "text", "text": "Hello from agy."}]}),
        json!({"conversation": legacy_id, "kind": "message", "role": "assistant",
               "timestamp": "2026-08-10T09:00:05Z", "model": "gemini-3-flash",
               "content": [{"type": "text", "text": "Hello from Gemini."}]}),
        json!({"conversation": legacy_id, "kind": "meta", "id": legacy_id,
               "timestamp": "2026-08-10T09:00:00Z"}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect::<String>();
    let messages_file = scratch.join("legacy.ndjson");
    std::fs::write(&messages_file, &stream).unwrap();
    // agy-decode takes rows: encode the messages, then decode to Codex.
    let rows_of_stream = run_ok("agy-encode", &[messages_file.to_str().unwrap()], b"");
    run_ok(
        "agy-decode",
        &out_dir_args("codex", &home.codex_home, &work),
        &rows_of_stream,
    );
    here(&["resume", legacy_id, "RUN: echo legacy-shell"]);

    let back = Home::new(scratch.join("home-back"), &api);
    let mut sessions = Vec::new();
    let mut wants = BTreeMap::new();
    for id in [&plain, &shell, &think, &legacy_id.to_string()] {
        let file = home.rollout(id);
        let lines = json_lines(&std::fs::read(&file).unwrap());
        let paginated = lines.iter().all(|l| l.get("ordinal").is_some());
        assert_eq!(
            paginated,
            id != legacy_id,
            "{id}: {} history",
            if paginated { "paginated" } else { "legacy" }
        );
        let want = holds_of_items(&conversation(&response_items(&file)));
        assert!(!want.texts.is_empty());
        // Codex -> agy: encode, pack, and read back with agy-decode.
        let (rows, decoded) = into_agy(&scratch, "codex", &file, id);
        assert_came_back(&want, &holds_of_stream(&decoded, false)[id.as_str()], id);
        // ... and back to Codex, which resumes it.
        let written = run_ok(
            "agy-decode",
            &out_dir_args("codex", &back.codex_home, &work),
            &rows,
        );
        let path = PathBuf::from(String::from_utf8(written).unwrap().trim());
        let items = response_items(&path);
        assert!(items.iter().all(|i| i["type"] != "reasoning"));
        if id == &think {
            let lines = json_lines(&std::fs::read(&path).unwrap());
            assert!(
                lines
                    .iter()
                    .any(|l| l["payload"]["type"] == "agent_reasoning"
                        && l["payload"]["text"] == THOUGHT),
                "{id}: the reasoning is not kept for people"
            );
        }
        sessions.push(id.clone());
        wants.insert(id.clone(), (items, want));
    }
    let shell_want = &wants[&shell].1;
    assert!(shell_want
        .calls
        .iter()
        .any(|(_, name, input)| name == "Bash" && input.contains("echo agy-round-trip")));
    assert!(
        shell_want
            .results
            .iter()
            .any(|(_, text)| text.contains("agy-round-trip")),
        "{:?}",
        shell_want.results
    );
    assert!(
        wants[legacy_id]
            .1
            .results
            .iter()
            .any(|(_, text)| text.contains("legacy-shell")),
        "{:?}",
        wants[legacy_id].1.results
    );
    let requests = resume_all(&codex, &back, &work, &api, &sessions);
    for (id, (written, want)) in &wants {
        check_resumed(id, &requests[id], written, want);
    }
}

/// A conversation the way agy-decode is about to write it (issue 9's
/// future stream: signatures, a damaged step, a task_boundary call, a
/// result with no call, images, thinking) becomes a rollout Codex needs to
/// repair nothing in: every call answered right after its turn, no orphan
/// output, thinking only as events, images as data URLs, and the same
/// bytes every time.
#[test]
fn the_future_stream_as_a_rollout() {
    let stream = super::future_stream();
    let written = super::convert(
        &stream,
        agy_tools::format::Format::Codex,
        agy_tools::format::Options::default(),
    );
    assert_eq!(
        written,
        super::convert(
            &stream,
            agy_tools::format::Format::Codex,
            agy_tools::format::Options::default()
        ),
        "the same stream, other bytes"
    );
    let lines = json_lines(&written);
    for line in &lines {
        assert!(line["timestamp"].is_string(), "no timestamp: {line}");
    }
    assert_eq!(lines[0]["type"], "session_meta");
    for key in [
        "id",
        "timestamp",
        "cwd",
        "originator",
        "cli_version",
        "model_provider",
        "source",
    ] {
        assert!(
            lines[0]["payload"][key].is_string(),
            "session_meta has no {key}"
        );
    }
    let items: Vec<Value> = lines
        .iter()
        .filter(|l| l["type"] == "response_item")
        .map(|l| l["payload"].clone())
        .collect();
    assert!(items.iter().all(|i| i["type"] != "reasoning"));
    // Every call is answered, by the items right after its turn.
    let mut open: Vec<String> = Vec::new();
    for item in &items {
        match item["type"].as_str().unwrap() {
            "function_call" | "custom_tool_call" => {
                open.push(item["call_id"].as_str().unwrap().into())
            }
            "function_call_output" | "custom_tool_call_output" => {
                let id = item["call_id"].as_str().unwrap();
                let at = open.iter().position(|o| o == id);
                assert!(at.is_some(), "an output without its call: {item}");
                open.remove(at.unwrap());
            }
            _ => assert!(open.is_empty(), "calls {open:?} unanswered before {item}"),
        }
    }
    assert!(open.is_empty());
    let shapes: Vec<Value> = items.iter().map(shape).collect();
    assert!(
        shapes.contains(&json!({"call": "exec_command", "id": "call_ls",
                                    "arguments": {"cmd": "ls"}}))
    );
    assert!(shapes
        .contains(&json!({"item": "function_call_output", "id": "call_ls", "output": "a\nb"})));
    assert!(shapes.iter().any(|s| s["message"] == "user"
        && s["content"]
            .as_array()
            .unwrap()
            .contains(&json!("Tool result for ghost (error): from nowhere"))));
    let screen = items
        .iter()
        .flat_map(|i| i["content"].as_array().into_iter().flatten())
        .skip_while(|p| p["text"] != "Here is the screen.")
        .nth(1)
        .expect("the screen message");
    assert!(screen["image_url"]
        .as_str()
        .unwrap()
        .starts_with("data:image/png;base64,iVBOR"));
    assert!(lines.iter().any(
        |l| l["payload"]["type"] == "agent_reasoning" && l["payload"]["text"] == "List first."
    ));
}

/// A rollout agy-encode cannot read is an error naming the file and line,
/// with exit status 1.
#[test]
fn bad_rollouts_name_file_and_line() {
    let scratch = Scratch::new("formats-codex-bad");
    let meta = r#"{"timestamp":"2026-08-10T09:00:00Z","type":"session_meta","payload":{"id":"s","timestamp":"2026-08-10T09:00:00Z","cwd":"/w","originator":"x","cli_version":"1"}}"#;
    for (name, text, want) in [
        (
            "broken.jsonl",
            format!("{meta}\n{{\"timestamp\": \n"),
            "broken.jsonl:2: not a JSON line",
        ),
        (
            "headless.jsonl",
            r#"{"timestamp":"2026-08-10T09:00:00Z","type":"response_item","payload":{}}"#
                .to_string()
                + "\n",
            "headless.jsonl:1: the first line is \"response_item\", not session_meta",
        ),
        (
            "empty.jsonl",
            String::new(),
            "empty.jsonl: no session_meta line",
        ),
    ] {
        let path = scratch.join(name);
        std::fs::write(&path, text).unwrap();
        let out = support::run(
            "agy-encode",
            &["--format", "codex", path.to_str().unwrap()],
            b"",
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stderr = support::stderr(&out);
        assert!(stderr.contains(want), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}: wrote rows anyway");
    }
}

/// `--verbose` says what a conversion changed or left out.
#[test]
fn verbose_counts_what_codex_changes_and_leaves_out() {
    let rows = rows(&sample());
    let out = support::run("agy-decode", &["--format", "codex", "--verbose"], &rows);
    assert!(out.status.success());
    let stderr = support::stderr(&out);
    for what in [
        "thinking blocks kept for people only",
        "error flags of results not written",
        "3 conversations:",
    ] {
        assert!(stderr.contains(what), "no {what:?} in {stderr}");
    }
    let scratch = Scratch::new("formats-codex-verbose");
    let rollout = scratch.join("r.jsonl");
    let lines = [
        json!({"timestamp": "2026-08-10T09:00:00Z", "type": "session_meta",
               "payload": {"id": "s", "timestamp": "2026-08-10T09:00:00Z", "cwd": "/w",
                           "originator": "x", "cli_version": "1"}}),
        json!({"timestamp": "2026-08-10T09:00:01Z", "type": "response_item",
               "payload": {"type": "message", "role": "developer",
                           "content": [{"type": "input_text", "text": "rules"}]}}),
        json!({"timestamp": "2026-08-10T09:00:02Z", "type": "response_item",
               "payload": {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "hi"}]}}),
        json!({"type": "response_item",
               "payload": {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "lost"}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&rollout, text).unwrap();
    let path = rollout.to_str().unwrap();
    let out = support::run("agy-encode", &["--format", "codex", "--verbose", path], b"");
    assert!(out.status.success(), "{}", support::stderr(&out));
    let stderr = support::stderr(&out);
    assert!(
        stderr.contains("messages Codex writes itself left out: 1")
            && stderr.contains("lines without a timestamp left out (Codex drops them too): 1"),
        "{stderr}"
    );
}
