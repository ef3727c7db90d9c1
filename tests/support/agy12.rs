//! Stores in the shape agy 1.2.0 leaves them (FORMAT.md 13-15, and a public
//! capture of agy 1.2.0 stores): steps carrying the metadata agy fills
//! (their trajectory at 20.1, status transitions, permissions), tool calls
//! as GENERIC steps that wrap the typed step in an Any and spill their
//! output to the brain directory, a reply's thinking signature, a
//! conversation rewound once (a FORK reference naming itself, two
//! trajectories among its steps, stale transcript lines), a step a crash
//! left RUNNING with its task details, brain transcripts in chunks, the
//! index in its 21-column form, and the database at rest as agy leaves it:
//! a small `.db` and a `-wal` holding the recent steps, no `-shm`.

use std::path::Path;

use rusqlite::params;

use super::index::{self, Shape};
use super::pb::Msg;
use super::steps::*;
use super::{brain_file, AgyDb};

/// A conversation worked in two turns, rewound once before them.
pub const A: &str = "5e1f0c2a-8b7d-4e36-9a41-0c2d3e4f5a6b";
/// A subagent A started.
pub const CHILD: &str = "b2c3d4e5-f607-4819-8a2b-3c4d5e6f7a8b";
/// A's first trajectory (before its rewind) and its current one.
pub const T_OLD: &str = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d";
pub const T_NOW: &str = "7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2918";
pub const CWD: &str = "/home/dev/src/quill";
pub const T0: i64 = 1_789_000_000;

/// CortexStepMetadata as agy fills it, naming trajectory `traj`.
pub fn meta12(conv: &str, traj: &str, idx: u64, seconds: i64, source: u64) -> Msg {
    Msg::new()
        .ts(1, seconds, 120_000_000)
        .varint(3, source)
        .ts(6, seconds, 130_000_000)
        .ts(7, seconds, 140_000_000)
        .ts(8, seconds + 1, 0)
        .varint(11, 1318)
        .str(12, "5d0c43a2-7e61-4f3b-9a8c-2b1e0f9d8c7b")
        .msg(20, Msg::new().str(1, traj).varint(2, idx).str(4, conv))
        .msg(
            26,
            Msg::new().msg(1, Msg::new().varint(1, 3).ts(2, seconds, 0)),
        )
        .ts(32, seconds, 100_000_000)
        .msg(34, Msg::new().str(4, "allow"))
}

/// One step of a conversation being built: the Step blob, its columns.
pub struct Built {
    pub idx: i64,
    pub kind: u64,
    pub status: u64,
    pub metadata: Msg,
    pub payload: Msg,
}

impl Built {
    pub fn new(idx: i64, kind: u64, status: u64, metadata: Msg, field: u32, body: Msg) -> Built {
        let payload = step(kind, status, &metadata, field, body);
        Built {
            idx,
            kind,
            status,
            metadata,
            payload,
        }
    }

    pub fn insert(&self, db: &AgyDb) {
        db.step(
            self.idx,
            self.kind as i64,
            self.status as i64,
            &self.metadata.0,
            &self.payload.0,
        );
    }
}

fn user(conv: &str, traj: &str, idx: i64, text: &str) -> Built {
    let body = Msg::new()
        .str(2, text)
        .msg(3, Msg::new().str(1, text))
        .str(4, "")
        .msg(
            12,
            Msg::new().msg(
                1,
                Msg::new()
                    .msg(15, Msg::new().varint(1, 1318))
                    .str(28, "gemini-3.8-flash"),
            ),
        )
        .str(16, "cli");
    Built::new(
        idx,
        USER_INPUT,
        DONE,
        meta12(conv, traj, idx as u64, T0 + idx * 10, 4),
        19,
        body,
    )
}

fn reply(conv: &str, traj: &str, idx: i64, text: &str, calls: &[Msg]) -> Built {
    let mut body = Msg::new();
    if !text.is_empty() {
        body = body.str(1, text);
    }
    body = body.str(6, &format!("bot-{idx:08}-0000-4000-8000-000000000000"));
    for c in calls {
        body = body.msg(7, c.clone());
    }
    if !text.is_empty() {
        body = body.str(8, text);
    }
    let sig: Vec<u8> = (0..101u8).map(|i| i.wrapping_mul(31) ^ idx as u8).collect();
    body = body.varint(12, 2).msg(14, signature(&sig));
    Built::new(
        idx,
        PLANNER_RESPONSE,
        DONE,
        meta12(conv, traj, idx as u64, T0 + idx * 10, 2),
        20,
        body,
    )
}

/// A GENERIC step carrying out `call` (run_command), its output spilled to
/// `steps/<idx>/output.txt` of `conv`'s brain; with `wrapped`, the typed
/// step is in its result too (agy 1.1.23's RUN_COMMAND shape), else the
/// result is the shortened text and the spilled file alone holds it all.
fn command(
    conv: &str,
    traj: &str,
    idx: i64,
    call: &Msg,
    status: u64,
    output: &str,
    wrapped: bool,
) -> Built {
    let any = run_command_any("cargo test", status, output);
    let body = generic_args(&[
        ("toolSummary", "Tests"),
        ("CommandLine", "cargo test"),
        ("Cwd", CWD),
        ("toolAction", "Running"),
    ]);
    let text = if status == DONE {
        format!(
            "\nThe command exited with code 0.\nOutput:\n{}",
            &output[..8]
        )
    } else {
        "Step is still running".to_string()
    };
    let mut result = Msg::new().str(1, &text);
    if wrapped {
        result = result.msg(6, any);
    }
    let body = body.msg(
        2,
        result.str(
            7,
            &format!("file:///home/dev/.gemini/antigravity-cli/brain/{conv}/.system_generated/steps/{idx}/output.txt"),
        ),
    );
    Built::new(
        idx,
        GENERIC,
        status,
        meta12(conv, traj, idx as u64, T0 + idx * 10, 2).msg(4, call.clone()),
        140,
        body,
    )
}

fn run_call(id: &str) -> Msg {
    call(
        id,
        "run_command",
        &format!(r#"{{"CommandLine":"cargo test","Cwd":"{CWD}","WaitMsBeforeAsync":500,"toolAction":"Running","toolSummary":"Tests"}}"#),
    )
    .str(9, "run_command")
}

/// The trajectory metadata of a CLI root in `CWD`.
pub fn root_metadata(id: &str) -> Msg {
    Msg::new()
        .msg(
            1,
            Msg::new()
                .str(1, &format!("file://{CWD}"))
                .str(2, &format!("file://{CWD}"))
                .str(4, "main"),
        )
        .ts(2, T0, 0)
        .str(6, id)
        .str(7, &format!("file://{CWD}"))
        .str(18, "default-cli-project")
}

/// A transcript line as agy writes one.
pub fn transcript_line(idx: i64, source: &str, kind: &str, status: &str, content: &str) -> String {
    format!(
        "{{\"step_index\":{idx},\"source\":\"{source}\",\"type\":\"{kind}\",\"status\":\"{status}\",\"created_at\":\"2026-09-10T15:17:{:02}Z\",\"content\":{}}}\n",
        idx.rem_euclid(60),
        serde_json::to_string(content).unwrap()
    )
}

/// Conversation A's steps, by idx:
///
/// 0 USER_INPUT, 1 CONVERSATION_HISTORY (made before the rewind, in
/// `T_OLD`), 2 PLANNER_RESPONSE calling call_1, 3 GENERIC DONE (spilled),
/// 4 PLANNER_RESPONSE, 5 CHECKPOINT, 6 USER_INPUT, 7 PLANNER_RESPONSE
/// calling call_2, 8 GENERIC ERROR (a view of a missing file), 9
/// PLANNER_RESPONSE calling call_3, 10 GENERIC RUNNING (a crash).
pub fn steps_of_a() -> Vec<Built> {
    let call_1 = run_call("call_1");
    let call_2 = call(
        "call_2",
        "view_file",
        r#"{"AbsolutePath":"/home/dev/src/quill/missing.rs","toolAction":"Reading","toolSummary":"File"}"#,
    );
    let call_3 = run_call("call_3");
    let history = Built::new(
        1,
        CONVERSATION_HISTORY,
        DONE,
        meta12(A, T_OLD, 1, T0 + 10, 5),
        111,
        Msg::new(),
    );
    let checkpoint = Built::new(
        5,
        CHECKPOINT,
        DONE,
        meta12(A, T_NOW, 5, T0 + 50, 5),
        30,
        Msg::new()
            .str(4, "Speed up the index")
            .varint(9, 1)
            .varint(12, 5)
            .str(15, &format!("file:///home/dev/.gemini/antigravity-cli/brain/{A}/.system_generated/logs/transcript.jsonl"))
            .str(19, "Make the index faster"),
    );
    let failed_meta = meta12(A, T_NOW, 8, T0 + 80, 2).msg(4, call_2.clone());
    let failed = Built {
        idx: 8,
        kind: GENERIC,
        status: ERROR,
        payload: step(GENERIC, ERROR, &failed_meta, 140, Msg::new()).msg(
            31,
            Msg::new()
                .str(1, "no such file: missing.rs")
                .str(3, "ENOENT"),
        ),
        metadata: failed_meta,
    };
    vec![
        user(A, T_OLD, 0, "Make the index faster"),
        history,
        reply(
            A,
            T_NOW,
            2,
            "Running the tests first.",
            std::slice::from_ref(&call_1),
        ),
        command(
            A,
            T_NOW,
            3,
            &call_1,
            DONE,
            "test result: ok. 12 passed\n",
            false,
        ),
        reply(A, T_NOW, 4, "All green.", &[]),
        checkpoint,
        user(A, T_NOW, 6, "Now look at missing.rs"),
        reply(A, T_NOW, 7, "", &[call_2]),
        failed,
        reply(
            A,
            T_NOW,
            9,
            "It is not there; running the slow test.",
            std::slice::from_ref(&call_3),
        ),
        command(A, T_NOW, 10, &call_3, RUNNING, "running 1 test", true),
    ]
}

/// Writes conversation A into `root`, with its brain files, its index row
/// (`index_shape`, none when `None`) and its last steps left in a `-wal`.
pub fn conversation_a(root: &Path, index_shape: Option<Shape>) {
    let db = AgyDb::create(root, A);
    db.conn
        .execute(
            "UPDATE trajectory_meta SET trajectory_id = ?1",
            params![T_NOW],
        )
        .unwrap();
    db.trajectory_metadata(&root_metadata(A).build());
    // The rewind before the turns below: a FORK reference naming A itself
    // and the trajectory it left, at the last step it kept.
    db.conn
        .execute(
            "INSERT INTO parent_references (idx, data) VALUES (0, ?1)",
            [Msg::new()
                .str(1, T_OLD)
                .varint(2, 1)
                .varint(5, 2)
                .str(6, A)
                .build()],
        )
        .unwrap();
    for (idx, steps) in [
        (0, vec![2u8, 3]),
        (1, vec![4]),
        (2, vec![7, 8]),
        (3, vec![9, 10]),
    ] {
        db.gen_metadata(
            idx,
            &Msg::new()
                .msg(1, Msg::new().str(19, "gemini-3.8-flash"))
                .bytes(2, &steps)
                .build(),
        );
    }
    db.conn
        .execute(
            "INSERT INTO executor_metadata (idx, data) VALUES (0, ?1)",
            [Msg::new()
                .msg(
                    10,
                    Msg::new().msg(1, Msg::new().str(28, "gemini-3.8-flash")),
                )
                .build()],
        )
        .unwrap();
    let steps = steps_of_a();
    let (early, late) = steps.split_at(6);
    for s in early {
        s.insert(&db);
    }
    // Checkpointed so far; the second turn stays in the -wal, as agy
    // leaves it at exit.
    db.conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    for s in late {
        s.insert(&db);
    }
    db.conn
        .execute(
            "UPDATE steps SET error_details = ?1 WHERE idx = 8",
            [Msg::new()
                .str(1, "no such file: missing.rs")
                .str(3, "ENOENT")
                .build()],
        )
        .unwrap();
    db.conn
        .execute(
            "UPDATE steps SET task_details = ?1 WHERE idx = 10",
            [Msg::new()
                .str(1, "task-7")
                .str(2, "cargo test slow")
                .build()],
        )
        .unwrap();
    super::shapes::leave_wal(db);
    brain_file(
        root,
        A,
        ".system_generated/steps/3/output.txt",
        b"test result: ok. 12 passed\n",
    );
    brain_file(
        root,
        A,
        "task.md",
        b"- [x] run the tests\n- [ ] missing.rs\n",
    );
    let lines = [
        transcript_line(
            0,
            "USER_EXPLICIT",
            "USER_INPUT",
            "DONE",
            "<USER_REQUEST>\nMake the index faster\n</USER_REQUEST>",
        ),
        // Written before the rewind; agy leaves such lines in place.
        transcript_line(
            2,
            "USER_EXPLICIT",
            "USER_INPUT",
            "DONE",
            "<USER_REQUEST>\nundone\n</USER_REQUEST>",
        ),
        transcript_line(
            2,
            "MODEL",
            "PLANNER_RESPONSE",
            "DONE",
            "Running the tests first.",
        ),
        transcript_line(
            3,
            "MODEL",
            "RUN_COMMAND",
            "DONE",
            "test result: ok. 12 passed",
        ),
        transcript_line(4, "MODEL", "PLANNER_RESPONSE", "DONE", "All green."),
        transcript_line(5, "SYSTEM", "CHECKPOINT", "DONE", "{{ CHECKPOINT 5 }}"),
        transcript_line(
            6,
            "USER_EXPLICIT",
            "USER_INPUT",
            "DONE",
            "<USER_REQUEST>\nNow look at missing.rs\n</USER_REQUEST>",
        ),
        transcript_line(7, "MODEL", "PLANNER_RESPONSE", "DONE", ""),
        transcript_line(8, "MODEL", "VIEW_FILE", "ERROR", "no such file: missing.rs"),
        transcript_line(
            9,
            "MODEL",
            "PLANNER_RESPONSE",
            "DONE",
            "It is not there; running the slow test.",
        ),
        transcript_line(10, "MODEL", "RUN_COMMAND", "RUNNING", ""),
    ]
    .concat();
    for dir in ["transcript", "transcript_full"] {
        brain_file(
            root,
            A,
            &format!(".system_generated/logs/chunks/{dir}/00000000.jsonl"),
            lines.as_bytes(),
        );
    }
    if let Some(shape) = index_shape {
        let conn = index::create(root, shape);
        index::agy_row(&conn, A, "Speed up the index", 11, 6);
    }
}

/// A subagent A started: its metadata names A as parent and root, at depth 1.
pub fn child(root: &Path) {
    let db = AgyDb::create(root, CHILD);
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, &format!("file://{CWD}")))
            .ts(2, T0 + 100, 0)
            .msg(4, Msg::new().str(1, "research"))
            .str(5, A)
            .str(6, A)
            .str(7, &format!("file://{CWD}"))
            .varint(17, 1)
            .str(18, "default-cli-project")
            .build(),
    );
    let traj = format!("traj-{CHILD}");
    let c = run_call("sub_1");
    for s in [
        user(CHILD, &traj, 0, "Find what makes the index slow"),
        reply(CHILD, &traj, 1, "", std::slice::from_ref(&c)),
        command(
            CHILD,
            &traj,
            2,
            &c,
            DONE,
            "index.rs:12 sorts on every insert\n",
            false,
        ),
        reply(CHILD, &traj, 3, "It sorts on every insert.", &[]),
    ] {
        s.insert(&db);
    }
    db.close();
    brain_file(
        root,
        CHILD,
        ".system_generated/steps/2/output.txt",
        b"index.rs:12 sorts on every insert\n",
    );
}
