//! `agy-decode --format gemini-cli` and `agy-encode --format gemini-cli`,
//! tried against the real Gemini CLI resuming sessions against a fake
//! Gemini API on 127.0.0.1, in a loopback-only network namespace
//! (`support::netns`). The checks that need no client (the replay of a
//! session's log, bad input, the project registry, determinism) are in
//! tests/gemini_cli_files.rs.
//!
//! `.ci/run` installs the pinned `@google/gemini-cli` under
//! `target/ext/gemini-cli/`. A test whose client is missing says so on
//! stderr and passes, unless `CI` is set, where it fails.

#[path = "gemini_cli/fake_gemini.rs"]
mod fake_gemini;
#[path = "gemini_cli/holds.rs"]
mod holds;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use fake_gemini::FakeGemini;
use holds::{
    check_order, check_resumed, holds_of_session, holds_of_stream, order_of_stream, sent_ids,
    signatures_of_session,
};
use serde_json::{json, Value};
use support::clients::{self, gemini};
use support::corpus::{into_agy, out_dir_args, rows, stores};
use support::holds::{assert_kept, message_stream, ToolRow};
use support::store::json_lines;
use support::{run_ok, Scratch};

/// What Gemini CLI writes when it repairs a history it was given: a
/// request holding any of these needed repairing.
const REPAIR_TEXTS: &[&str] = &[
    "The tool execution result was lost due to context management truncation.",
    "[Continuing from previous AI thoughts...]",
    "Please continue.",
];

/// The model named on every run, so the CLI's model router (which would
/// ask the fake for a JSON verdict first) stays out of the way.
const MODEL: &str = "gemini-2.5-flash";

/// Gemini CLI's names for the common tools of agy-decode's stream, and the
/// argument keys they rename (the table in the man page, written out again
/// here so that a mistake there cannot hide here).
const TOOLS: &[ToolRow] = &[
    ("Bash", "run_shell_command", &[("workdir", "dir_path")]),
    ("Read", "read_file", &[]),
    ("Write", "write_file", &[]),
    ("Edit", "replace", &[]),
];

/// A home for Gemini CLI with the settings it needs offline: the API key
/// method (else "Invalid auth method selected"), and no update checks,
/// usage statistics, telemetry or session cleanup (which deletes sessions
/// last updated more than 30 days ago when the CLI starts).
fn gemini_home(home: &Path) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
                    "sessionRetention": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false}
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// Runs Gemini CLI headless in `cwd` with `home` as its HOME, pointed at
/// `api` only, and returns its JSON result; kills it after two minutes.
fn run_gemini(
    client: &(PathBuf, PathBuf),
    home: &Path,
    cwd: &Path,
    api: &FakeGemini,
    args: &[&str],
) -> Value {
    let tmp = home.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = clients::run(
        Command::new(&client.0)
            .arg(&client.1)
            .args(["--model", MODEL, "--output-format", "json"])
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", home)
            .env("TMPDIR", &tmp)
            .env("GEMINI_API_KEY", "test-key-not-a-key")
            .env("GOOGLE_GEMINI_BASE_URL", api.base_url())
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        "gemini",
        args,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "gemini {args:?}: {:?}\n{stdout}\n{}",
            out.status,
            support::stderr(&out)
        )
    });
    assert!(
        out.status.success(),
        "gemini {args:?}: {:?} {result}\n{}",
        out.status,
        support::stderr(&out)
    );
    result
}

/// Resumes `session` with the prompt "Resume check." and returns the
/// contents of the last model request it sent.
fn resume(
    client: &(PathBuf, PathBuf),
    home: &Path,
    cwd: &Path,
    api: &FakeGemini,
    session: &str,
) -> Vec<Value> {
    let from = api.count();
    let result = run_gemini(
        client,
        home,
        cwd,
        api,
        &["--resume", session, "-p", "Resume check."],
    );
    assert_eq!(result["session_id"], session, "{result}");
    assert_eq!(result["response"], "pong", "{session}: {result}");
    let requests = api.since(from);
    let last = requests
        .iter()
        .rfind(|r| r.path.contains(":streamGenerateContent"))
        .unwrap_or_else(|| panic!("no model request for {session}: {requests:?}"));
    assert!(
        last.path.contains(&format!("/models/{MODEL}:")),
        "{}",
        last.path
    );
    last.body["contents"].as_array().unwrap().clone()
}

#[test]
fn gemini_cli_resumes_every_converted_conversation() {
    let Some(client) = gemini() else { return };
    if !support::netns::isolated() {
        return;
    }
    let scratch = Scratch::new("gemini-resume");
    let home = scratch.join("home");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    gemini_home(&home);
    let gemini_dir = home.join(".gemini");
    let api = FakeGemini::start();
    let mut checked = 0;
    let mut signed = 0;
    for (i, root) in stores(&scratch).into_iter().enumerate() {
        let rows = rows(&root);
        let plain = json_lines(&run_ok("agy-decode", &[], &rows));
        let thinking = i == 2;
        let mut args = out_dir_args("gemini-cli", &gemini_dir, &work);
        if thinking {
            args.extend(["--thinking", "text"]);
        }
        let written = String::from_utf8(run_ok("agy-decode", &args, &rows)).unwrap();
        let files: Vec<&str> = written.lines().collect();
        for (id, want) in holds_of_stream(&plain, thinking) {
            let file = files
                .iter()
                .find(|f| f.ends_with(&format!("-{}.jsonl", &id[..8])))
                .unwrap_or_else(|| panic!("no session file for {id} in {written}"));
            let signatures = signatures_of_session(Path::new(file));
            signed += signatures.len();
            let contents = resume(&client, &home, &work, &api, &id);
            check_resumed(&id, &contents, &want, &signatures);
            check_order(&id, &contents, &order_of_stream(&plain, &id, thinking));
            checked += 1;
        }
    }
    assert!(checked >= 11, "{checked} sessions");
    // The stores' calls carry no signature; this conversation's do (hex
    // in the stream, as agy-decode reads them from agy's steps).
    let stream = signed_stream();
    let rows = {
        let encoded = run_ok("agy-encode", &[], stream.as_bytes());
        let root = scratch.join("signed");
        run_ok("agy-pack", &["--root", root.to_str().unwrap()], &encoded);
        rows(&root)
    };
    let plain = json_lines(&run_ok("agy-decode", &[], &rows));
    let args = out_dir_args("gemini-cli", &gemini_dir, &work);
    let file = PathBuf::from(
        String::from_utf8(run_ok("agy-decode", &args, &rows))
            .unwrap()
            .trim(),
    );
    let signatures = signatures_of_session(&file);
    assert_eq!(
        signatures.into_iter().collect::<Vec<_>>(),
        [("call_sig".to_string(), "AQIDBA==".to_string())]
    );
    let contents = resume(&client, &home, &work, &api, SIGNED_ID);
    let want = &holds_of_stream(&plain, false)[SIGNED_ID];
    check_resumed(SIGNED_ID, &contents, want, &signatures_of_session(&file));
    check_order(
        SIGNED_ID,
        &contents,
        &order_of_stream(&plain, SIGNED_ID, false),
    );
    let signed_text = contents
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap())
        .find(|p| p["text"] == "Listing.")
        .unwrap();
    assert_eq!(signed_text["thoughtSignature"], "CgsM", "{signed_text}");
    signed += 1;
    eprintln!(
        "Gemini CLI resumed {} converted conversations ({signed} signed calls)",
        checked + 1
    );
}

const SIGNED_ID: &str = "3c9e1f20-5b7a-4d8e-9f10-2a3b4c5d6e7f";

/// A conversation whose thinking and call carry signatures.
fn signed_stream() -> String {
    let records = [
        json!({"role": "user", "timestamp": "2026-11-01T09:00:00Z",
               "content": [{"type": "text", "text": "List the files."}]}),
        json!({"role": "assistant", "model": "gemini-3-flash", "timestamp": "2026-11-01T09:00:01Z",
               "content": [
                   {"type": "thinking", "thinking": "ls will do.", "signature": "0a0b0c"},
                   {"type": "text", "text": "Listing."},
                   {"type": "tool_use", "id": "call_sig", "name": "Bash",
                    "input": {"command": "ls"}, "signature": "01020304"}]}),
        json!({"role": "user", "timestamp": "2026-11-01T09:00:02Z",
               "content": [{"type": "tool_result", "tool_use_id": "call_sig", "content": "a\nb"}]}),
        json!({"role": "assistant", "model": "gemini-3-flash", "timestamp": "2026-11-01T09:00:03Z",
               "content": [{"type": "text", "text": "Two files: a and b."}]}),
    ];
    let meta = json!({"conversation": SIGNED_ID, "kind": "meta", "id": SIGNED_ID,
                      "timestamp": "2026-11-01T09:00:00Z", "title": "Signed"});
    message_stream(SIGNED_ID, records, &meta)
}

/// What a session file the real Gemini CLI wrote holds, read plainly: the
/// text of user records a person typed and of gemini records, every call
/// and every result, wherever in the log they are.
#[test]
fn gemini_cli_sessions_go_to_agy_and_come_back() {
    let Some(client) = gemini() else { return };
    if !support::netns::isolated() {
        return;
    }
    let scratch = Scratch::new("gemini-roundtrip");
    let home = scratch.join("home");
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    gemini_home(&home);
    let api = FakeGemini::start();
    let here = |args: &[&str]| run_gemini(&client, &home, &work, &api, args);
    let session = |result: Value| result["session_id"].as_str().unwrap().to_string();
    let plain = session(here(&["-p", "Say hello, plainly."]));
    let shell = session(here(&[
        "--approval-mode",
        "yolo",
        "-p",
        "RUN: echo agy-round-trip",
    ]));
    // A second turn: the CLI rewrites its log ($set.messages) on resume.
    here(&["--resume", &shell, "-p", "And a second question."]);
    let chats = home.join(".gemini/tmp/work/chats");
    let file_of = |id: &str| -> PathBuf {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&chats)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let text = std::fs::read_to_string(p).unwrap();
                p.to_string_lossy()
                    .ends_with(&format!("-{}.jsonl", &id[..8]))
                    && text.contains("\"type\":\"gemini\"")
            })
            .collect();
        found.sort();
        found
            .pop()
            .unwrap_or_else(|| panic!("no session file of {id} in {chats:?}"))
    };
    let back_home = scratch.join("home-back");
    gemini_home(&back_home);
    let back_dir = back_home.join(".gemini");
    let mut wants = BTreeMap::new();
    for id in [&plain, &shell] {
        let file = file_of(id);
        let want = holds_of_session(&file);
        assert!(!want.texts.is_empty(), "{file:?}");
        // Gemini CLI -> agy: encode, pack, and read back with agy-decode.
        let (rows, decoded) = into_agy(&scratch, "gemini-cli", &file, id);
        let got = &holds_of_stream(&decoded, false)[id.as_str()];
        assert_kept(&want, got, id, "agy");
        assert_eq!(got.texts, want.texts, "{id}");
        assert_eq!(
            got.results.len(),
            want.results.len(),
            "{id}: results read more than once"
        );
        let meta = decoded.iter().find(|r| r["kind"] == "meta").unwrap();
        assert_eq!(
            meta["cwd"].as_str().map(PathBuf::from),
            Some(std::fs::canonicalize(&work).unwrap()),
            "{meta}"
        );
        // ... and back to Gemini CLI, which resumes it.
        let args = out_dir_args("gemini-cli", &back_dir, &work);
        let written = run_ok("agy-decode", &args, &rows);
        let path = PathBuf::from(String::from_utf8(written).unwrap().trim());
        wants.insert(id.clone(), (want, signatures_of_session(&path)));
    }
    let shell_want = &wants[&shell].0;
    assert!(
        shell_want
            .calls
            .iter()
            .any(|(_, name, args)| name == "run_shell_command"
                && args.contains("echo agy-round-trip"))
    );
    assert!(shell_want
        .results
        .iter()
        .any(|(_, text)| text.contains("agy-round-trip")));
    assert!(shell_want.texts.contains("And a second question."));
    for (id, (want, signatures)) in &wants {
        let contents = resume(&client, &back_home, &work, &api, id);
        check_resumed(id, &contents, &sent_ids(want), signatures);
    }
}
