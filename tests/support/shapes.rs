//! Conversations in the shapes of real agy bytes (FORMAT.md 13-15), shared
//! by the tests of the tools that edit them: a conversation as agy 1.1.23
//! writes one ([`real_shaped`]).

use std::path::Path;

use super::pb::Msg;
use super::steps::*;
use super::{brain_file, AgyDb};

pub const REAL_ID: &str = "3b7e2c1a-9f4d-4c8b-a6e5-1d2f3a4b5c6d";
/// The ids the edit and --onto tests give a [`subagent_child`] and an
/// [`acp_conversation`].
pub const CHILD_ID: &str = "4c8f3d2b-0a1e-4f5d-b7c6-2e3f4a5b6c7d";
pub const ACP_ID: &str = "5d9a4e3c-1b2f-4a6e-c8d7-3f4a5b6c7d8e";
pub const T0: i64 = 1_795_000_000;

/// 101 and 556 signed bytes, as in FORMAT.md 13 rows 1-2.
pub fn signed_bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// CortexStepMetadata as agy 1.1.23 fills it (FORMAT.md 13 row 4): every
/// field the message stream does not show, so a rewrite that drops one
/// shows up.
pub fn rich_metadata(idx: u64, seconds: i64, source: u64) -> Msg {
    Msg::new()
        .ts(1, seconds, 120_000_000)
        .varint(3, source)
        .ts(6, seconds, 130_000_000)
        .ts(7, seconds, 140_000_000)
        .ts(8, seconds + 1, 0)
        .varint(11, 1318)
        .str(12, "5d0c43a2-7e61-4f3b-9a8c-2b1e0f9d8c7b")
        .msg(
            20,
            Msg::new().str(1, "traj-1").varint(2, idx).str(4, REAL_ID),
        )
        .msg(
            26,
            Msg::new().msg(1, Msg::new().varint(1, 3).ts(2, seconds, 0)),
        )
        .ts(32, seconds, 100_000_000)
        .msg(34, Msg::new().str(4, "allow"))
}

/// A conversation in the shape real agy 1.1.23 bytes have: the user input's
/// planner configuration with the model name, a planner reply with no
/// thinking text but a signature at 20.14, a GENERIC run_command whose
/// result wraps the typed Step in an Any and spills to a brain file, a
/// history step (hidden without --all), a task boundary answering a call,
/// a call still pending, an unknown kind, a failed call, an image, a
/// checkpoint, transcripts, a fork reference and the ACP lane's sidecar.
pub fn real_shaped(root: &Path) {
    let db = AgyDb::create(root, REAL_ID);
    db.trajectory_metadata(
        &Msg::new()
            .msg(
                1,
                Msg::new()
                    .str(1, "file:///work/app")
                    .str(2, "file:///work")
                    .str(4, "main"),
            )
            .ts(2, T0, 0)
            .str(6, REAL_ID)
            .str(7, "file:///work/app")
            .str(18, "default-cli-project")
            .build(),
    );
    let put = |idx: i64, step_type: u64, status: u64, meta: &Msg, field: u32, payload: Msg| {
        let s = step(step_type, status, meta, field, payload);
        db.step(idx, step_type as i64, status as i64, &meta.0, &s.0);
    };
    let user = Msg::new()
        .str(2, "List the files, please. The token is s3cr3t-t0ken.")
        .msg(
            3,
            Msg::new().str(1, "List the files, please. The token is s3cr3t-t0ken."),
        )
        .str(4, "")
        .msg(
            12,
            Msg::new()
                .msg(
                    1,
                    Msg::new()
                        .msg(15, Msg::new().varint(1, 1318))
                        .str(28, "gemini-3.8-flash-low"),
                )
                .msg(2, Msg::new().varint(1, 140_000).varint(5, 256_000)),
        )
        .str(16, "cli");
    put(0, USER_INPUT, DONE, &rich_metadata(0, T0, 4), 19, user);
    put(
        1,
        CONVERSATION_HISTORY,
        DONE,
        &rich_metadata(1, T0, 5),
        111,
        Msg::new(),
    );
    let bash_args = r#"{"CommandLine":"ls -la","Cwd":"/work/app","WaitMsBeforeAsync":500,"toolAction":"Listing","toolSummary":"Files"}"#;
    let bash = call("call_1", "run_command", bash_args)
        .msg(7, signature(&signed_bytes(556, 7)))
        .str(9, "run_command");
    let boundary = call("call_2", "task_boundary", r#"{"TaskName":"Listing"}"#);
    let planner = Msg::new()
        .str(1, "Listing the files.")
        .str(6, "bot-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
        .msg(7, bash.clone())
        .msg(7, boundary.clone())
        .str(8, "Listing the files.")
        .varint(12, 10)
        .msg(14, signature(&signed_bytes(101, 3)));
    let planner_meta = rich_metadata(2, T0 + 2, 2).msg(
        9,
        Msg::new()
            .varint(1, 1318)
            .varint(2, 1200)
            .varint(3, 80)
            .varint(6, 3)
            .str(7, "bot-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
            .msg(8, Msg::new().str(1, "sessionID").str(2, "s-1"))
            .varint(10, 80)
            .str(11, "resp-1"),
    );
    put(2, PLANNER_RESPONSE, DONE, &planner_meta, 20, planner);
    let output =
        "total 8\ndrwxr-xr-x 2 dev dev 4096 .\n-rw-r--r-- 1 dev dev  12 s3cr3t-t0ken.txt\n";
    let any = run_command_any("ls -la", DONE, output);
    // Go map order, not the arguments' order.
    let generic = generic_args(&[
        ("WaitMsBeforeAsync", "500"),
        ("toolSummary", "Files"),
        ("CommandLine", "ls -la"),
        ("Cwd", "/work/app"),
        ("toolAction", "Listing"),
    ]);
    let generic = generic.msg(
        2,
        Msg::new()
            .str(1, &format!("\nThe command exited with code 0.\nOutput:\n{}", &output[..20]))
            .msg(6, any)
            .str(7, &format!("file:///home/dev/.gemini/antigravity-cli/brain/{REAL_ID}/.system_generated/steps/3/output.txt")),
    );
    put(
        3,
        GENERIC,
        DONE,
        &rich_metadata(3, T0 + 3, 2).msg(4, bash),
        140,
        generic,
    );
    brain_file(
        root,
        REAL_ID,
        ".system_generated/steps/3/output.txt",
        output.as_bytes(),
    );
    let task = Msg::new()
        .str(1, "Listing")
        .str(2, "started")
        .str(3, "Listing the app");
    put(
        4,
        TASK_BOUNDARY,
        DONE,
        &rich_metadata(4, T0 + 4, 2).msg(4, boundary),
        93,
        task,
    );
    let pending = call("call_3", "grep_search", r#"{"Query":"todo"}"#);
    let planner2 = Msg::new().msg(7, pending.clone()).str(6, "bot-2");
    put(
        5,
        PLANNER_RESPONSE,
        DONE,
        &rich_metadata(5, T0 + 5, 2),
        20,
        planner2,
    );
    put(
        6,
        GENERIC,
        PENDING,
        &rich_metadata(6, T0 + 6, 2).msg(4, pending),
        140,
        Msg::new(),
    );
    // A kind nothing here reads.
    let unknown = Msg::new()
        .varint(1, 250)
        .varint(4, DONE)
        .msg(5, rich_metadata(7, T0 + 7, 5))
        .msg(199, Msg::new().str(1, "future"));
    db.step(
        7,
        250,
        DONE as i64,
        &rich_metadata(7, T0 + 7, 5).0,
        &unknown.0,
    );
    let view = call(
        "call_4",
        "view_file",
        r#"{"AbsolutePath":"/work/app/missing.rs","StartLine":9,"EndLine":2}"#,
    );
    let planner3 = Msg::new().str(1, "Reading it.").msg(7, view.clone());
    put(
        8,
        PLANNER_RESPONSE,
        DONE,
        &rich_metadata(8, T0 + 8, 2),
        20,
        planner3,
    );
    let failed_meta = rich_metadata(9, T0 + 9, 2).msg(4, view);
    let failed = step(
        VIEW_FILE,
        ERROR,
        &failed_meta,
        14,
        Msg::new().str(1, "file:///work/app/missing.rs"),
    )
    .msg(
        31,
        Msg::new()
            .str(1, "no such file: missing.rs")
            .str(3, "ENOENT"),
    );
    db.step(9, VIEW_FILE as i64, ERROR as i64, &failed_meta.0, &failed.0);
    db.conn
        .execute(
            "UPDATE steps SET error_details = ?1 WHERE idx = 9",
            [Msg::new()
                .str(1, "no such file: missing.rs")
                .str(3, "ENOENT")
                .0],
        )
        .unwrap();
    put(
        10,
        USER_INPUT,
        DONE,
        &rich_metadata(10, T0 + 10, 4),
        19,
        Msg::new()
            .str(2, "Thanks. Bye.")
            .msg(5, Msg::new().str(1, "aGVsbG8=").str(2, "image/png")),
    );
    put(
        11,
        PLANNER_RESPONSE,
        DONE,
        &rich_metadata(11, T0 + 11, 2),
        20,
        Msg::new().str(1, "Bye.").str(8, "Bye."),
    );
    let checkpoint = Msg::new()
        .str(4, "List files")
        .varint(9, 1)
        .str(10, "List files");
    put(
        12,
        CHECKPOINT,
        DONE,
        &rich_metadata(12, T0 + 12, 5),
        30,
        checkpoint,
    );
    for (idx, steps) in [(0, vec![2u64, 3]), (1, vec![5, 6]), (2, vec![8, 9, 11])] {
        let packed: Vec<u8> = steps.iter().map(|&s| s as u8).collect();
        db.gen_metadata(
            idx,
            &Msg::new()
                .msg(1, Msg::new().str(19, "gemini-3.8-flash-low"))
                .bytes(2, &packed)
                .build(),
        );
    }
    // Lineage: forked from another conversation at its step 4.
    reference(&db, 2, "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4");
    db.close();
    // The ACP lane's sidecar.
    std::fs::write(
        root.join("conversations").join(format!("{REAL_ID}.meta")),
        br#"{"cwd":"/work/app","mode_id":"default"}"#,
    )
    .unwrap();
    let mut transcript = String::new();
    for (idx, kind, text) in [
        (
            0,
            "USER_INPUT",
            "<USER_REQUEST>\\nList the files, please. The token is s3cr3t-t0ken.\\n</USER_REQUEST>",
        ),
        (2, "PLANNER_RESPONSE", "Listing the files."),
        (3, "RUN_COMMAND", "total 8"),
        (
            10,
            "USER_INPUT",
            "<USER_REQUEST>\\nThanks. Bye.\\n</USER_REQUEST>",
        ),
        (11, "PLANNER_RESPONSE", "Bye."),
    ] {
        transcript.push_str(&format!(
            "{{\"step_index\":{idx},\"source\":\"MODEL\",\"type\":\"{kind}\",\"status\":\"DONE\",\"content\":\"{text}\"}}\n"
        ));
    }
    brain_file(
        root,
        REAL_ID,
        ".system_generated/logs/transcript.jsonl",
        transcript.as_bytes(),
    );
    brain_file(root, REAL_ID, "task.md", b"- [x] list files\n");
}

/// A `parent_references` row (idx 0) naming `parent`'s trajectory
/// `traj-parent` at its step 4, of `reference_type` (2 FORK, 6
/// SUBAGENT_FORK; FORMAT.md 8).
fn reference(db: &AgyDb, reference_type: u64, parent: &str) {
    db.conn
        .execute(
            "INSERT INTO parent_references (idx, data) VALUES (0, ?1)",
            [Msg::new()
                .str(1, "traj-parent")
                .varint(2, 4)
                .varint(5, reference_type)
                .str(6, parent)
                .build()],
        )
        .unwrap();
}

/// Leaves `db` as agy leaves a conversation at rest (FORMAT.md 15 row 6):
/// the `.db` and a `-wal` holding everything written since it was created,
/// nothing checkpointed, no `-shm`.
pub fn leave_wal(db: AgyDb) -> std::path::PathBuf {
    let path = db.path.clone();
    // Closing would checkpoint the WAL into the file and remove it.
    std::mem::forget(db.conn);
    let wal = path.with_extension("db-wal");
    assert!(wal.exists(), "{} holds the rows", wal.display());
    let _ = std::fs::remove_file(path.with_extension("db-shm"));
    path
}

/// A GENERIC run_command step as agy 1.1.23 writes one (FORMAT.md 13
/// row 3): the call's arguments as map entries in Go's order, the result
/// text, the typed RUN_COMMAND step wrapped in an Any, the spill URI.
pub fn generic_run_command(command: &str, cwd: &str, output: &str, spill: &str) -> Msg {
    let any = run_command_any(command, DONE, output);
    let generic = generic_args(&[
        ("WaitMsBeforeAsync", "500"),
        ("CommandLine", command),
        ("Cwd", cwd),
    ]);
    let head: String = output.chars().take(40).collect();
    generic.msg(
        2,
        Msg::new()
            .str(
                1,
                &format!("\nThe command exited with code 0.\nOutput:\n{head}"),
            )
            .msg(6, any)
            .str(7, spill),
    )
}

/// A subagent's conversation (FORMAT.md 8, 15 row 4): its metadata names
/// its parent and root and has nesting depth 1 and an agent script, a
/// SUBAGENT_FORK reference names the parent, it runs a command in `cwd`
/// whose output (over two megabytes, so the row stream carries it in
/// parts) spills to a brain file, and its transcript holds the call's
/// arguments as JSON inside JSON. Left with its WAL beside it.
pub fn subagent_child(root: &Path, id: &str, parent: &str, cwd: &str) {
    let db = AgyDb::create(root, id);
    let uri = format!("file://{cwd}");
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, &uri).str(2, &uri).str(4, "main"))
            .ts(2, T0 + 100, 0)
            .msg(4, Msg::new().str(1, "research"))
            .str(5, parent)
            .str(6, parent)
            .str(7, &uri)
            .varint(17, 1)
            .str(18, "default-cli-project")
            .build(),
    );
    reference(&db, 6, parent);
    let put = |idx: i64, step_type: u64, meta: &Msg, field: u32, payload: Msg| {
        let s = step(step_type, DONE, meta, field, payload);
        db.step(idx, step_type as i64, DONE as i64, &meta.0, &s.0);
    };
    let text = format!("Find what in {cwd}/src is slow.");
    put(
        0,
        USER_INPUT,
        &metadata(T0 + 100, 4),
        19,
        Msg::new().str(2, &text).msg(3, Msg::new().str(1, &text)),
    );
    let args = format!(r#"{{"CommandLine":"cargo test","Cwd":"{cwd}"}}"#);
    let run = call("call_a", "run_command", &args).str(9, "run_command");
    put(
        1,
        PLANNER_RESPONSE,
        &metadata(T0 + 101, 2),
        20,
        Msg::new().str(1, "Running the tests.").msg(7, run.clone()),
    );
    let mut output = String::new();
    let mut n = 0;
    while output.len() < 2_500_000 {
        output.push_str(&format!("test {cwd}/src/file_{n}.rs ... ok\n"));
        n += 1;
    }
    let spill = format!("file://{cwd}/.gemini/brain/{id}/.system_generated/steps/2/output.txt");
    put(
        2,
        GENERIC,
        &tool_metadata(T0 + 102, run),
        140,
        generic_run_command("cargo test", cwd, &output, &spill),
    );
    brain_file(
        root,
        id,
        ".system_generated/steps/2/output.txt",
        output.as_bytes(),
    );
    put(
        3,
        PLANNER_RESPONSE,
        &metadata(T0 + 103, 2),
        20,
        Msg::new().str(1, &format!("All tests pass in {cwd}.")),
    );
    db.gen_metadata(
        0,
        &Msg::new()
            .msg(1, Msg::new().str(19, "gemini-3.8-flash"))
            .bytes(2, &[1, 3])
            .build(),
    );
    db.conn
        .execute(
            "INSERT INTO executor_metadata (idx, data) VALUES (0, ?1)",
            [Msg::new()
                .msg(
                    10,
                    Msg::new().msg(1, Msg::new().str(28, "gemini-3.8-flash")),
                )
                .str(99, &format!("ran in {cwd}"))
                .build()],
        )
        .unwrap();
    let escaped_args = args.replace('"', "\\\"");
    let transcript = format!(
        concat!(
            "{{\"step_index\":0,\"source\":\"USER_EXPLICIT\",\"type\":\"USER_INPUT\",\"content\":\"<USER_REQUEST>\\n{text}\\n</USER_REQUEST>\"}}\n",
            "{{\"step_index\":1,\"source\":\"MODEL\",\"type\":\"PLANNER_RESPONSE\",\"content\":\"Running the tests.\",\"tool_calls\":[{{\"name\":\"run_command\",\"args\":\"{args}\"}}]}}\n",
            "{{\"step_index\":3,\"source\":\"MODEL\",\"type\":\"PLANNER_RESPONSE\",\"content\":\"All tests pass in {cwd}.\"}}\n",
        ),
        text = text,
        args = escaped_args,
        cwd = cwd,
    );
    brain_file(
        root,
        id,
        ".system_generated/logs/transcript.jsonl",
        transcript.as_bytes(),
    );
    leave_wal(db);
}

/// A conversation of the ACP lane (FORMAT.md 1, 2.2, 15 row 7): its
/// trajectory is named by its own id, its metadata blob is empty, and its
/// `<id>.meta` sidecar holds the working directory.
pub fn acp_conversation(root: &Path, id: &str, cwd: &str) {
    let db = AgyDb::create(root, id);
    db.conn
        .execute("UPDATE trajectory_meta SET trajectory_id = ?1", [id])
        .unwrap();
    db.trajectory_metadata(b"");
    db.user_step(0, &format!("Look at {cwd}/notes.md"));
    db.close();
    std::fs::write(
        root.join("conversations").join(format!("{id}.meta")),
        format!(r#"{{"cwd":"{cwd}","mode_id":"default"}}"#),
    )
    .unwrap();
}

/// A conversation started on Windows: the workspace folder written as VS
/// Code writes it (`file:///c%3A/…`), workspace_uris as agy does
/// (`file:///C:/…`), the path in the user's text, in a call's JSON
/// arguments (backslashes escaped), in a view_file URI and in the
/// transcript (escaped again).
pub fn windows_conversation(root: &Path, id: &str) {
    let db = AgyDb::create(root, id);
    db.trajectory_metadata(
        &Msg::new()
            .msg(
                1,
                Msg::new()
                    .str(1, "file:///c%3A/Users/dev/app")
                    .str(2, "file:///c%3A/Users/dev/app")
                    .str(4, "main"),
            )
            .ts(2, T0 + 300, 0)
            .str(6, id)
            .str(7, "file:///C:/Users/dev/app")
            .str(18, "default-cli-project")
            .build(),
    );
    let text = r"Open C:\Users\dev\app\src\main.rs please";
    db.step(
        0,
        USER_INPUT as i64,
        DONE as i64,
        &metadata(T0 + 300, 4).0,
        &step(
            USER_INPUT,
            DONE,
            &metadata(T0 + 300, 4),
            19,
            Msg::new().str(2, text).msg(3, Msg::new().str(1, text)),
        )
        .0,
    );
    let view = call(
        "call_w",
        "view_file",
        r#"{"AbsolutePath":"C:\\Users\\dev\\app\\src\\main.rs"}"#,
    );
    let planner = step(
        PLANNER_RESPONSE,
        DONE,
        &metadata(T0 + 301, 2),
        20,
        Msg::new().str(1, "Reading it.").msg(7, view.clone()),
    );
    db.step(
        1,
        PLANNER_RESPONSE as i64,
        DONE as i64,
        &metadata(T0 + 301, 2).0,
        &planner.0,
    );
    let meta = tool_metadata(T0 + 302, view);
    let viewed = step(
        VIEW_FILE,
        DONE,
        &meta,
        14,
        Msg::new()
            .str(1, "file:///C:/Users/dev/app/src/main.rs")
            .str(2, "fn main() {}\n"),
    );
    db.step(2, VIEW_FILE as i64, DONE as i64, &meta.0, &viewed.0);
    db.close();
    brain_file(
        root,
        id,
        ".system_generated/logs/transcript.jsonl",
        br#"{"step_index":0,"type":"USER_INPUT","content":"Open C:\\Users\\dev\\app\\src\\main.rs please","tool_calls":[{"args":"{\"AbsolutePath\":\"C:\\\\Users\\\\dev\\\\app\\\\src\\\\main.rs\"}"}]}
"#,
    );
}
