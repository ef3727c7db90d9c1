//! `agy-encode --format gemini-cli` and `agy-decode --format gemini-cli`
//! on files, without the real client: a session log replayed as Gemini CLI
//! replays it, bad session files refused with their file and line, and
//! `--out-dir`'s project registry and its refusal to clobber. The real
//! Gemini CLI's own checks are in tests/gemini_cli.rs.

mod support;

use serde_json::{json, Value};
use support::corpus::{out_dir_args, rows, sample};
use support::store::json_lines;
use support::{run, run_ok, Scratch};

/// A session log with every kind of line the reader replays.
fn replayed_session() -> String {
    let lines = [
        json!({"sessionId": "9d3f5a6e-1c2b-4e8f-9a7d-0b1c2d3e4f50", "projectHash": "ab", "startTime": "2026-11-30T10:00:00.000Z",
               "lastUpdated": "2026-11-30T10:05:00.000Z", "kind": "main"}),
        json!({"$set": {"messages": [{"id": "ctx", "type": "user", "content": [{"text": "<session_context>\nhi\n</session_context>"}]}]}}),
        json!({"id": "u1", "timestamp": "2026-11-30T10:00:01.000Z", "type": "user", "content": [{"text": "first draft"}]}),
        json!({"id": "u1", "timestamp": "2026-11-30T10:00:01.000Z", "type": "user", "content": [{"text": "List the files."}]}),
        json!({"id": "g1", "timestamp": "2026-11-30T10:00:02.000Z", "type": "gemini", "content": "Listing.",
               "thoughts": [{"subject": "Plan", "description": "ls first", "timestamp": "2026-11-30T10:00:02.000Z"}],
               "model": "gemini-2.5-flash", "tokens": {"input": 10, "output": 2, "cached": 3, "thoughts": 0, "tool": 0, "total": 12}}),
        json!({"id": "g1", "timestamp": "2026-11-30T10:00:02.000Z", "type": "gemini", "content": "Listing.",
               "thoughts": [{"subject": "Plan", "description": "ls first", "timestamp": "2026-11-30T10:00:02.000Z"}],
               "model": "gemini-2.5-flash",
               "toolCalls": [{"id": "c1", "name": "run_shell_command", "args": {"command": "ls", "dir_path": "/w"},
                              "result": [{"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "a\nb"}}}],
                              "status": "success"},
                             {"id": "c2", "name": "read_file", "args": {"file_path": "/w/x"},
                              "result": [{"functionResponse": {"id": "c2", "name": "read_file", "response": {"error": "no such file"}}}],
                              "status": "error"}]}),
        json!({"id": "r1", "type": "user", "content": [{"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "a\nb"}}}]}),
        json!({"id": "i1", "type": "info", "content": "Switched model."}),
        json!({"id": "u2", "type": "user", "content": [{"text": "/stats"}]}),
        json!({"id": "u3", "type": "user", "content": [{"text": "Delete b."}]}),
        json!({"id": "g3", "type": "gemini", "content": "Deleting b."}),
        json!({"$rewindTo": "u3"}),
        json!({"id": "u4", "type": "user", "content": [{"text": "\u{200B}/etc is where?"}]}),
        json!({"id": "g4", "type": "gemini", "content": [{"text": "There.", "thoughtSignature": "AP8="},
                                                        {"functionCall": {"id": "c4", "name": "glob", "args": {"pattern": "*"}}, "thoughtSignature": "c2ln"}],
               "toolCalls": [{"id": "c4", "name": "glob", "args": {"pattern": "*"}, "result": "x", "status": "success"}]}),
        json!({"$set": {"summary": "Files", "lastUpdated": "2026-11-30T10:06:00.000Z"}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_session_log_is_replayed_as_gemini_cli_replays_it() {
    let scratch = Scratch::new("gemini-replay");
    let dir = scratch.join("tmp/w/chats");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(scratch.join("tmp/w/.project_root"), "/w\n").unwrap();
    let file = dir.join("session-2026-11-30T10-00-9d3f5a6e.jsonl");
    std::fs::write(&file, replayed_session()).unwrap();
    let out = run(
        "agy-encode",
        &[
            "--format",
            "gemini-cli",
            "--verbose",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success(), "{}", support::stderr(&out));
    assert!(
        support::stderr(&out).contains(
            "records replaced by a later one: 2, records dropped by a rewind: 2, \
             user records Gemini CLI does not send left out: 2, results written twice read once: 1, \
             info and warning records left out: 1"
        ),
        "{}",
        support::stderr(&out)
    );
    let root = scratch.join("agy");
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &out.stdout);
    let decoded = json_lines(&run_ok("agy-decode", &[], &rows(&root)));
    let messages: Vec<Value> = decoded
        .iter()
        .filter(|r| r["kind"] == "message")
        .map(|r| json!([r["role"], r["content"]]))
        .collect();
    assert_eq!(
        messages,
        [
            json!(["user", [{"type": "text", "text": "List the files."}]]),
            json!(["assistant", [
                {"type": "thinking", "thinking": "**Plan** ls first"},
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "ls", "workdir": "/w"}},
                {"type": "tool_use", "id": "c2", "name": "Read", "input": {"file_path": "/w/x"}}]]),
            // agy keeps each result as a step of its own.
            json!(["user", [{"type": "tool_result", "tool_use_id": "c1", "content": "a\nb"}]]),
            json!(["user", [{"type": "tool_result", "tool_use_id": "c2", "content": "no such file", "is_error": true}]]),
            json!(["user", [{"type": "text", "text": "/etc is where?"}]]),
            json!(["assistant", [
                {"type": "thinking", "thinking": "", "signature": "00ff"},
                {"type": "text", "text": "There."},
                {"type": "tool_use", "id": "c4", "name": "glob", "input": {"pattern": "*"}, "signature": "736967"}]]),
            json!(["user", [{"type": "tool_result", "tool_use_id": "c4", "content": "x"}]]),
        ]
    );
    let meta = decoded.iter().find(|r| r["kind"] == "meta").unwrap();
    assert_eq!(meta["id"], "9d3f5a6e-1c2b-4e8f-9a7d-0b1c2d3e4f50");
    assert_eq!(meta["cwd"], "/w");
    assert_eq!(meta["title"], "Files");
    // Written back, the session is the same conversation: the texts, the
    // shield before "/etc", the signatures as base64 on the parts.
    let back = json_lines(&run_ok(
        "agy-decode",
        &["--format", "gemini-cli", "--cwd", "/w"],
        &rows(&root),
    ));
    assert_eq!(back[0]["summary"], "Files");
    let texts: Vec<&Value> = back
        .iter()
        .flat_map(|r| r["content"].as_array().into_iter().flatten())
        .collect();
    assert!(
        texts.iter().any(|p| p["text"] == "\u{200B}/etc is where?"),
        "{back:?}"
    );
    assert!(
        texts
            .iter()
            .any(|p| p["text"] == "There." && p["thoughtSignature"] == "AP8="),
        "{back:?}"
    );
    assert!(
        texts
            .iter()
            .any(|p| p["functionCall"]["id"] == "c4" && p["thoughtSignature"] == "c2ln"),
        "{back:?}"
    );
}

#[test]
fn bad_session_files_are_refused_with_file_and_line() {
    let scratch = Scratch::new("gemini-bad");
    let cases: &[(&str, &str, &str)] = &[
        (
            "broken.jsonl",
            "{\"sessionId\":\"s\",\"projectHash\":\"h\"}\n{not json\n",
            "broken.jsonl:2: not a JSON line",
        ),
        (
            "array.jsonl",
            "{\"sessionId\":\"s\",\"projectHash\":\"h\"}\n[1]\n",
            "array.jsonl:2: a session line is a JSON object",
        ),
        (
            "headless.jsonl",
            "{\"id\":\"u\",\"type\":\"user\",\"content\":\"hi\"}\n",
            "headless.jsonl: not a Gemini CLI session",
        ),
    ];
    for (name, text, error) in cases {
        let path = scratch.join(name);
        std::fs::write(&path, text).unwrap();
        let out = run(
            "agy-encode",
            &["--format", "gemini-cli", path.to_str().unwrap()],
            b"",
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(
            support::stderr(&out).contains(error),
            "{name}: {}",
            support::stderr(&out)
        );
        assert!(
            out.stdout.is_empty(),
            "{name}: wrote {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // A legacy session (one JSON object over many lines) is read.
    let legacy = scratch.join("legacy.json");
    let object = json!({"sessionId": "4b1e8a2c-3d5f-4a6b-8c7d-9e0f1a2b3c4d", "projectHash": "h",
                        "startTime": "2025-09-01T08:00:00.000Z", "lastUpdated": "2025-09-01T08:01:00.000Z",
                        "messages": [{"id": "a", "type": "user", "content": "Old times."},
                                     {"id": "b", "type": "gemini", "content": "Indeed."}]});
    std::fs::write(&legacy, serde_json::to_string_pretty(&object).unwrap()).unwrap();
    let out = run_ok(
        "agy-encode",
        &["--format", "gemini-cli", legacy.to_str().unwrap()],
        b"",
    );
    let root = scratch.join("agy");
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &out);
    let decoded = json_lines(&run_ok("agy-decode", &[], &rows(&root)));
    let texts: Vec<&str> = decoded
        .iter()
        .filter_map(|r| r["content"][0]["text"].as_str())
        .collect();
    assert_eq!(texts, ["Old times.", "Indeed."]);
}

#[test]
fn out_dir_registers_the_project_and_never_clobbers() {
    let scratch = Scratch::new("gemini-outdir");
    let home = scratch.join(".gemini");
    let work = scratch.join("My Work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    // Another project already holds the slug "my-work".
    std::fs::write(
        home.join("projects.json"),
        r#"{"projects": {"/elsewhere/my-work": "my-work"}}"#,
    )
    .unwrap();
    let rows = rows(&sample());
    let args = out_dir_args("gemini-cli", &home, &work);
    let written = String::from_utf8(run_ok("agy-decode", &args, &rows)).unwrap();
    let real = std::fs::canonicalize(&work)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let registry: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("projects.json")).unwrap())
            .unwrap();
    assert_eq!(
        registry,
        json!({"projects": {"/elsewhere/my-work": "my-work", real.clone(): "my-work-1"}})
    );
    assert_eq!(
        std::fs::read_to_string(home.join("tmp/my-work-1/.project_root")).unwrap(),
        real
    );
    let files: Vec<&str> = written.lines().collect();
    assert_eq!(files.len(), 3, "{written}");
    for file in &files {
        assert!(
            file.starts_with(home.join("tmp/my-work-1/chats/session-").to_str().unwrap()),
            "{file}"
        );
        let header = &json_lines(&std::fs::read(file).unwrap())[0];
        assert_eq!(header["kind"], "main");
        assert_eq!(header["projectHash"].as_str().unwrap().len(), 64);
        assert!(file.ends_with(&format!(
            "-{}.jsonl",
            &header["sessionId"].as_str().unwrap()[..8]
        )));
    }
    // Same input, same bytes; an existing session is not replaced...
    let first = std::fs::read(files[0]).unwrap();
    let again = run("agy-decode", &args, &rows);
    assert_eq!(again.status.code(), Some(1));
    assert!(support::stderr(&again).contains("exists (--force replaces it)"));
    // ... unless --force says so.
    let mut forced = args.to_vec();
    forced.push("--force");
    assert_eq!(
        String::from_utf8(run_ok("agy-decode", &forced, &rows)).unwrap(),
        written
    );
    assert_eq!(std::fs::read(files[0]).unwrap(), first);
    let stdout = run_ok(
        "agy-decode",
        &["--format", "gemini-cli", "--cwd", &real],
        &rows,
    );
    assert_eq!(
        stdout,
        run_ok(
            "agy-decode",
            &["--format", "gemini-cli", "--cwd", &real],
            &rows
        )
    );
    // A registry Gemini CLI could not read is an error, and left as it is.
    let other = scratch.join(".gemini-bad");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("projects.json"), "{\"projects\": [").unwrap();
    let mut bad = args.to_vec();
    bad[3] = other.to_str().unwrap();
    let out = run("agy-decode", &bad, &rows);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        support::stderr(&out).contains("not a Gemini CLI project registry"),
        "{}",
        support::stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(other.join("projects.json")).unwrap(),
        "{\"projects\": ["
    );
}
