//! `agy-encode --onto`: an edited message stream written back onto the rows
//! it was decoded from. Unedited, `agy-dump X | agy-decode | agy-encode
//! --onto <(agy-dump X) | agy-pack` gives back `agy-dump X` byte for byte;
//! edited with jq, only the touched steps' rows change (plus the
//! renumbering a deletion or insertion makes), and every reference to a
//! step by idx stays consistent.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agy_tools::agy::wire;
use serde_json::Value;
use support::pb::Msg;
use support::steps::*;
use support::{brain_file, run_ok, AgyDb, Scratch};

const ID: &str = "3b7e2c1a-9f4d-4c8b-a6e5-1d2f3a4b5c6d";
const T0: i64 = 1_795_000_000;

/// 101 and 556 signed bytes, as in FORMAT.md 13 rows 1-2.
fn signed_bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// CortexStepMetadata as agy 1.1.23 fills it (FORMAT.md 13 row 4): every
/// field the message stream does not show, so a rewrite that drops one
/// shows up.
fn rich_metadata(idx: u64, seconds: i64, source: u64) -> Msg {
    Msg::new()
        .ts(1, seconds, 120_000_000)
        .varint(3, source)
        .ts(6, seconds, 130_000_000)
        .ts(7, seconds, 140_000_000)
        .ts(8, seconds + 1, 0)
        .varint(11, 1318)
        .str(12, "5d0c43a2-7e61-4f3b-9a8c-2b1e0f9d8c7b")
        .msg(20, Msg::new().str(1, "traj-1").varint(2, idx).str(4, ID))
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
fn real_shaped(root: &Path) {
    let db = AgyDb::create(root, ID);
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
            .str(6, ID)
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
    let wrapped = Msg::new().varint(1, RUN_COMMAND).varint(4, DONE).msg(
        28,
        Msg::new()
            .str(23, "ls -la")
            .msg(21, Msg::new().str(1, output)),
    );
    let any = Msg::new()
        .str(1, "type.googleapis.com/gemini_coder.Step")
        .bytes(2, &wrapped.0);
    let mut generic = Msg::new();
    // Go map order, not the arguments' order.
    for (k, v) in [
        ("WaitMsBeforeAsync", "500"),
        ("toolSummary", "Files"),
        ("CommandLine", "ls -la"),
        ("Cwd", "/work/app"),
        ("toolAction", "Listing"),
    ] {
        generic = generic.msg(1, Msg::new().str(1, k).str(2, v));
    }
    let generic = generic.msg(
        2,
        Msg::new()
            .str(1, &format!("\nThe command exited with code 0.\nOutput:\n{}", &output[..20]))
            .msg(6, any)
            .str(7, &format!("file:///home/dev/.gemini/antigravity-cli/brain/{ID}/.system_generated/steps/3/output.txt")),
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
        ID,
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
    db.conn
        .execute(
            "INSERT INTO parent_references (idx, data) VALUES (0, ?1)",
            [Msg::new()
                .str(1, "traj-parent")
                .varint(2, 4)
                .varint(5, 2)
                .str(6, "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4")
                .build()],
        )
        .unwrap();
    db.close();
    // The ACP lane's sidecar.
    std::fs::write(
        root.join("conversations").join(format!("{ID}.meta")),
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
        ID,
        ".system_generated/logs/transcript.jsonl",
        transcript.as_bytes(),
    );
    brain_file(root, ID, "task.md", b"- [x] list files\n");
}

/// The stores every check runs over: the sample store, generated ones of
/// both eras with spills, and the real-shaped conversation.
fn stores(scratch: &Scratch) -> Vec<PathBuf> {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sample");
    let mut roots = vec![sample];
    let generator = support::exe("examples/gen-store");
    for (seed, steps, max) in [("3", "90", "200000"), ("11", "140", "3000000")] {
        let root = scratch.join(format!("gen-{seed}"));
        let status = Command::new(&generator)
            .args(["--root", root.to_str().unwrap(), "--conversations", "5"])
            .args(["--steps", steps, "--max-output", max, "--seed", seed])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        roots.push(root);
    }
    let real = scratch.join("real");
    real_shaped(&real);
    roots.push(real);
    roots
}

fn dump(root: &Path) -> Vec<u8> {
    run_ok("agy-dump", &[root.to_str().unwrap()], b"")
}

/// `agy-encode --onto ORIGINAL [args]` of `messages`, packed into a fresh
/// root and dumped again.
fn write_back(
    scratch: &Scratch,
    name: &str,
    original: &[u8],
    messages: &[u8],
    args: &[&str],
) -> Vec<u8> {
    let onto = scratch.join(format!("{name}.rows"));
    std::fs::write(&onto, original).unwrap();
    let mut encode_args = vec!["--onto", onto.to_str().unwrap()];
    encode_args.extend_from_slice(args);
    let rows = run_ok("agy-encode", &encode_args, messages);
    let root = scratch.join(format!("{name}.root"));
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &rows);
    dump(&root)
}

/// Runs jq with `program` over `input` (jq is what users edit with).
fn jq(program: &str, input: &[u8]) -> Vec<u8> {
    let mut child = Command::new("jq")
        .args(["-c", program])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("jq is installed (.ci/run installs it)");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(&input).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "jq {program}");
    out.stdout
}

#[test]
fn unedited_messages_give_back_every_byte() {
    let scratch = Scratch::new("onto-identity");
    for (n, root) in stores(&scratch).iter().enumerate() {
        let original = dump(root);
        for decode_args in [&[][..], &["--all"][..]] {
            let messages = run_ok("agy-decode", decode_args, &original);
            let name = format!("{n}{}", decode_args.len());
            let back = write_back(&scratch, &name, &original, &messages, decode_args);
            assert!(
                back == original,
                "{} {decode_args:?}: the round trip changed bytes",
                root.display()
            );
        }
    }
}

/// The rows of a dump by (conversation, table, key), key being idx where
/// the table has one.
fn rows(stream: &[u8]) -> BTreeMap<(String, String, String), Value> {
    let mut out = BTreeMap::new();
    for (n, line) in stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let record: Value = serde_json::from_slice(line).unwrap();
        if record["kind"] != "row" {
            continue;
        }
        let key = match record["row"].get("idx") {
            Some(idx) => idx.to_string(),
            None => format!("#{n}"),
        };
        out.insert(
            (
                record["conversation"].as_str().unwrap().to_string(),
                record["table"].as_str().unwrap().to_string(),
                key,
            ),
            record,
        );
    }
    out
}

fn blob(row: &Value, column: &str) -> Vec<u8> {
    row["row"][column]
        .as_str()
        .map(|h| hex::decode(h).unwrap())
        .unwrap_or_default()
}

/// Every reference to a step by idx names a step, and says its own idx.
fn assert_consistent(stream: &[u8]) {
    let mut idx_by_conversation: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    let records: Vec<Value> = stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    for r in &records {
        if r["kind"] == "row" && r["table"] == "steps" {
            let idx = r["row"]["idx"].as_i64().unwrap();
            idx_by_conversation
                .entry(r["conversation"].as_str().unwrap().to_string())
                .or_default()
                .insert(idx);
            let step = blob(r, "step_payload");
            let step = wire::Message::new(&step);
            for metadata in [
                step.get_bytes(5).unwrap_or_default().to_vec(),
                blob(r, "metadata"),
            ] {
                let info = wire::Message::new(&metadata).get_message(20);
                if let Some(own) = info.and_then(|i| i.get_u64(2)) {
                    assert_eq!(own as i64, idx, "step {idx} says it is step {own}");
                }
            }
        }
    }
    for (conversation, set) in &idx_by_conversation {
        let expected: BTreeSet<i64> = (0..set.len() as i64).collect();
        assert_eq!(set, &expected, "{conversation}: idx is contiguous from 0");
    }
    for r in &records {
        let conversation = r["conversation"].as_str().unwrap();
        let known = &idx_by_conversation[conversation];
        if r["kind"] == "row" && r["table"] == "gen_metadata" {
            let data = blob(r, "data");
            for i in wire::Message::new(&data).repeated_varints(2) {
                assert!(known.contains(&(i as i64)), "gen_metadata names step {i}");
            }
        }
        if r["kind"] == "file" {
            let path = r["path"].as_str().unwrap();
            for prefix in ["steps/", ".system_generated/steps/"] {
                if let Some(n) = path.strip_prefix(prefix).and_then(|p| p.split('/').next()) {
                    let n: i64 = n.parse().unwrap();
                    assert!(known.contains(&n), "{path} names no step");
                }
            }
            if path.ends_with("transcript.jsonl") || path.ends_with("transcript_full.jsonl") {
                for line in r["text"].as_str().unwrap_or_default().lines() {
                    if let Some(rest) = line.strip_prefix("{\"step_index\":") {
                        let n: i64 = rest.split(',').next().unwrap().parse().unwrap();
                        assert!(known.contains(&n), "{path}: a line for step {n}");
                    }
                }
            }
        }
    }
}

/// The keys of the rows that differ between two dumps.
fn changed_rows(before: &[u8], after: &[u8]) -> BTreeSet<(String, String, String)> {
    let (a, b) = (rows(before), rows(after));
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

fn steps_key(idx: i64) -> (String, String, String) {
    (ID.to_string(), "steps".to_string(), idx.to_string())
}

#[test]
fn jq_edits_change_only_the_steps_they_touch() {
    let scratch = Scratch::new("onto-edits");
    let root = scratch.join("real");
    real_shaped(&root);
    let original = dump(&root);
    let messages = run_ok("agy-decode", &[], &original);

    // Change one text: only that step's row.
    let edited = jq(
        r#"if .idx == 10 then .content[0].text = "Thanks a lot." else . end"#,
        &messages,
    );
    let back = write_back(&scratch, "text", &original, &edited, &[]);
    assert_eq!(
        changed_rows(&original, &back),
        BTreeSet::from([steps_key(10)])
    );
    assert_consistent(&back);
    let again = run_ok("agy-decode", &[], &back);
    assert_eq!(
        again, edited,
        "the edited stream decodes back as it was written"
    );

    // Redact a string everywhere: the user input and the command's output
    // (in the wrapped Step, the spilled file and the transcript).
    let edited = jq(
        r#"walk(if type == "string" then gsub("s3cr3t-t0ken"; "[REDACTED]") else . end)"#,
        &messages,
    );
    let back = write_back(&scratch, "redact", &original, &edited, &[]);
    assert_eq!(
        changed_rows(&original, &back),
        BTreeSet::from([steps_key(0), steps_key(3)]),
    );
    assert_consistent(&back);
    let secret = b"s3cr3t-t0ken";
    let text = String::from_utf8(back.clone()).unwrap();
    let hex_secret = hex::encode(secret);
    assert!(
        !text.contains("s3cr3t-t0ken"),
        "no brain file keeps the secret"
    );
    assert!(!text.contains(&hex_secret), "no row keeps the secret");
    assert_eq!(run_ok("agy-decode", &[], &back), edited);

    // Append a user turn: one new step at the end, nothing else.
    let new_turn = format!(
        r#"{{"conversation":"{ID}","kind":"message","role":"user","content":[{{"type":"text","text":"One more thing."}}]}}"#
    );
    let mut edited = Vec::new();
    for line in messages.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(format!("{{\"conversation\":\"{ID}\",\"kind\":\"meta\"").as_bytes()) {
            edited.extend_from_slice(new_turn.as_bytes());
            edited.push(b'\n');
        }
        edited.extend_from_slice(line);
    }
    let back = write_back(&scratch, "append", &original, &edited, &[]);
    assert_eq!(
        changed_rows(&original, &back),
        BTreeSet::from([steps_key(13)])
    );
    assert_consistent(&back);

    // Delete a message: its step goes, later steps move down one, and
    // nothing else of theirs changes.
    let edited = jq(r#"select(.idx != 10)"#, &messages);
    let back = write_back(&scratch, "delete", &original, &edited, &[]);
    assert_consistent(&back);
    let (before, after) = (rows(&original), rows(&back));
    for old in 11..=12 {
        let moved = &after[&steps_key(old - 1)];
        let was = &before[&steps_key(old)];
        let step = agy_tools::agy::patch::renumber_step(&blob(moved, "step_payload"), old - 1, old)
            .unwrap();
        assert_eq!(
            step,
            blob(was, "step_payload"),
            "step {old} only renumbered"
        );
    }
    assert!(!after.contains_key(&steps_key(12)));
    let gen: Vec<u64> = wire::Message::new(&blob(
        &after[&(ID.into(), "gen_metadata".into(), "2".into())],
        "data",
    ))
    .repeated_varints(2);
    assert_eq!(gen, [8, 9, 10], "the generation's step list follows");

    // Remove a call with its result: the reply loses the call, the step
    // that executed it goes.
    let edited = jq(
        r#"if .idx == 2 then .content |= map(select(.id != "call_1")) else . end | select(.idx != 3)"#,
        &messages,
    );
    let back = write_back(&scratch, "uncall", &original, &edited, &[]);
    assert_consistent(&back);
    let decoded = run_ok("agy-decode", &[], &back);
    let decoded = String::from_utf8(decoded).unwrap();
    assert!(!decoded.contains("call_1"));
    assert!(decoded.contains("call_2"));
    let after = rows(&back);
    let planner = blob(&after[&steps_key(2)], "step_payload");
    let planner = wire::Message::new(&planner).get_message(20).unwrap();
    assert_eq!(planner.repeated_messages(7).count(), 1);
    assert!(planner.has(14), "the reply keeps its signature");
}

#[test]
fn signatures_survive_without_onto() {
    let scratch = Scratch::new("onto-signatures");
    let root = scratch.join("real");
    real_shaped(&root);
    let original = dump(&root);
    let messages = run_ok("agy-decode", &[], &original);
    let rows_out = run_ok("agy-encode", &[], &messages);
    let packed = scratch.join("packed");
    run_ok("agy-pack", &["--root", packed.to_str().unwrap()], &rows_out);
    let back = dump(&packed);
    let strip = |stream: &[u8]| jq("del(.idx)", &run_ok("agy-decode", &[], stream));
    assert_eq!(strip(&back), strip(&original), "the fixpoint holds");
    let signatures = |stream: &[u8]| -> Vec<Vec<u8>> {
        let mut found = Vec::new();
        for row in rows(stream).values() {
            if row["table"] != "steps" || row["row"]["step_type"] != 15 {
                continue;
            }
            let step = blob(row, "step_payload");
            let planner = wire::Message::new(&step).get_message(20).unwrap();
            if let Some(sig) = planner.get_message(14) {
                found.push(sig.get_message(2).unwrap().get_bytes(1).unwrap().to_vec());
            }
            for call in planner.repeated_messages(7) {
                if let Some(sig) = call.get_message(7) {
                    found.push(sig.get_message(2).unwrap().get_bytes(1).unwrap().to_vec());
                }
            }
        }
        found
    };
    let before = signatures(&original);
    assert_eq!(before, [signed_bytes(101, 3), signed_bytes(556, 7)]);
    assert_eq!(signatures(&back), before);
}

#[test]
fn bad_input_is_named_and_refused() {
    let scratch = Scratch::new("onto-bad");
    let root = scratch.join("real");
    real_shaped(&root);
    let original = dump(&root);
    let messages = run_ok("agy-decode", &[], &original);
    let onto = scratch.join("orig.rows");
    std::fs::write(&onto, &original).unwrap();
    let onto = onto.to_str().unwrap();

    let out = support::run("agy-encode", &["--onto", "-"], &messages);
    assert_eq!(out.status.code(), Some(2), "{}", support::stderr(&out));
    let out = support::run("agy-encode", &["--all"], &messages);
    assert_eq!(out.status.code(), Some(2));

    // Messages out of step order: named by line.
    let swapped = jq(r#"if .idx == 2 then .idx = 11 else . end"#, &messages);
    let out = support::run("agy-encode", &["--onto", onto], &swapped);
    assert_eq!(out.status.code(), Some(1));
    let err = support::stderr(&out);
    assert!(err.contains("stdin:") && err.contains("idx"), "{err}");

    // A damaged original: named as the --onto input and its line.
    let mut damaged = original.clone();
    let at = damaged.windows(8).position(|w| w == b"\"steps\",").unwrap();
    damaged.insert(at, b'{');
    let bad = scratch.join("bad.rows");
    std::fs::write(&bad, &damaged).unwrap();
    let out = support::run("agy-encode", &["--onto", bad.to_str().unwrap()], &messages);
    assert_eq!(out.status.code(), Some(1));
    let err = support::stderr(&out);
    assert!(err.contains("--onto") && err.contains("bad.rows:"), "{err}");

    // A conversation the original does not hold.
    let other = jq(r#".conversation = "not-there""#, &messages);
    let out = support::run("agy-encode", &["--onto", onto], &other);
    assert_eq!(out.status.code(), Some(1));
    assert!(support::stderr(&out).contains("not in the --onto stream"));
}
