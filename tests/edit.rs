//! agy-edit's fork, rewind and settle on conversations in the shape agy 1.2.0
//! leaves them (tests/support/agy12.rs): what each must not touch stays byte
//! for byte, row by row and blob by blob; what it must change says what agy's
//! own fork, rewind and resume say (FORMAT.md 15); agy-decode of the result
//! is what a user expects; and agy-ls agrees with the index after agy-pack.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use support::agy12::{self, A, CHILD, T_NOW, T_OLD};
use support::index::{self, Shape};
use support::pb::Msg;
use support::{run, run_ok, stderr, Scratch};

/// A store with conversation A (its index row in the 21-column form) and
/// its subagent.
fn store(name: &str) -> Scratch {
    let s = Scratch::new(name);
    agy12::conversation_a(&s.path, Some(Shape::V3));
    agy12::child(&s.path);
    s
}

fn dump(args: &[&str]) -> Vec<u8> {
    run_ok("agy-dump", args, b"")
}

fn dump_a(root: &Path) -> Vec<u8> {
    dump(&["--id", A, root.to_str().unwrap()])
}

fn edit(args: &[&str], rows: &[u8]) -> Vec<u8> {
    run_ok("agy-edit", args, rows)
}

fn records(stream: &[u8]) -> Vec<Value> {
    stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

/// The lines of a stream by what they are: (kind, table or path, idx).
fn keyed(stream: &[u8]) -> BTreeMap<(String, String, i64), Vec<u8>> {
    let mut out = BTreeMap::new();
    for line in stream.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: Value = serde_json::from_slice(line).unwrap();
        let kind = v["kind"].as_str().unwrap().to_string();
        let (what, n) = match kind.as_str() {
            "row" => (
                v["table"].as_str().unwrap().to_string(),
                v["row"]["idx"].as_i64().unwrap_or(-1),
            ),
            "file" => (
                v["path"].as_str().unwrap().to_string(),
                i64::from(v["append"].as_bool().unwrap_or(false)),
            ),
            "schema" => (v["name"].as_str().unwrap().to_string(), 0),
            _ => (String::new(), 0),
        };
        assert!(
            out.insert((kind, what, n), line.to_vec()).is_none(),
            "two lines of one key"
        );
    }
    out
}

/// [`keyed`] of one conversation's lines.
fn keyed_of(stream: &[u8], conversation: &str) -> BTreeMap<(String, String, i64), Vec<u8>> {
    let head = format!("{{\"conversation\":\"{conversation}\"");
    let lines: Vec<&[u8]> = stream
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(head.as_bytes()))
        .collect();
    keyed(&lines.join(&b'\n'))
}

/// A line with its conversation id replaced, as a fork writes it.
fn as_of(line: &[u8], from: &str, to: &str) -> Vec<u8> {
    let head = format!("{{\"conversation\":\"{from}\"");
    assert!(line.starts_with(head.as_bytes()));
    let mut out = format!("{{\"conversation\":\"{to}\"").into_bytes();
    out.extend_from_slice(&line[head.len()..]);
    out
}

fn blob(v: &Value, column: &str) -> Vec<u8> {
    hex::decode(v["row"][column].as_str().unwrap()).unwrap()
}

/// A protobuf field's values, read with the library's reader.
fn field_str(bytes: &[u8], number: u32) -> Option<String> {
    agy_tools::agy::wire::Message::new(bytes)
        .get_str(number)
        .map(|s| s.into_owned())
}

fn field_u64(bytes: &[u8], number: u32) -> Option<u64> {
    agy_tools::agy::wire::Message::new(bytes).get_u64(number)
}

/// The message records of a conversation's decoded stream (`--all`),
/// without the conversation key.
/// The stream with its index rows' `raw_summary` emptied.
fn without_raw_summary(stream: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in stream.split_inclusive(|b| *b == b'\n') {
        let mut record: Value = serde_json::from_slice(line).unwrap();
        if record["kind"] == "index" {
            record["row"]["raw_summary"] = Value::Null;
            out.extend_from_slice(serde_json::to_string(&record).unwrap().as_bytes());
            out.push(b'\n');
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

fn messages(stream: &[u8], through: Option<i64>) -> Vec<Value> {
    let decoded = run_ok("agy-decode", &["--all"], stream);
    records(&decoded)
        .into_iter()
        .filter(|m| m["kind"] == "message")
        .filter(|m| through.is_none_or(|k| m["idx"].as_i64().is_some_and(|i| i <= k)))
        .map(|mut m| {
            m.as_object_mut().unwrap().remove("conversation");
            m
        })
        .collect()
}

fn the_only(stream: &[u8], kind: &str, table: Option<&str>) -> Vec<Value> {
    records(stream)
        .into_iter()
        .filter(|r| r["kind"] == kind && table.is_none_or(|t| r["table"] == t))
        .collect()
}

fn transcript_steps(stream: &[u8], path: &str) -> Vec<i64> {
    let mut text = String::new();
    for r in records(stream) {
        if r["kind"] == "file" && r["path"] == path {
            text.push_str(r["text"].as_str().unwrap());
        }
    }
    text.lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["step_index"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

const CHUNK: &str = ".system_generated/logs/chunks/transcript/00000000.jsonl";
const CHUNK_FULL: &str = ".system_generated/logs/chunks/transcript_full/00000000.jsonl";

#[test]
fn a_fork_copies_the_steps_up_to_the_cut_and_is_its_own() {
    let s = store("fork");
    let parent = dump_a(&s.path);
    let out = run("agy-edit", &["fork", "--at", "5"], &parent);
    assert!(out.status.success(), "{}", stderr(&out));
    let fork_stream = out.stdout.clone();
    let fork = fork_id(&fork_stream);
    assert_ne!(fork, A);
    assert!(
        stderr(&out).contains(&format!(
            "{A}: forked after step 5 as {fork}: kept 6 of 11 steps"
        )),
        "{}",
        stderr(&out)
    );
    // The same fork of the same input is the same bytes.
    assert_eq!(edit(&["fork", "--at", "5"], &parent), fork_stream);

    let before = keyed(&parent);
    let after = keyed(&fork_stream);
    // Steps 0..=5, the kept generations, the executor's row, the parent's
    // reference, the schema: the parent's bytes under the fork's id.
    for (key, line) in &before {
        let (kind, what, n) = key;
        let kept = match (kind.as_str(), what.as_str()) {
            ("row", "steps") => *n <= 5,
            ("row", "gen_metadata") => *n <= 1,
            ("row", "trajectory_meta" | "trajectory_metadata_blob") => false,
            ("index", _) | ("file", _) | ("end", _) => false,
            _ => true,
        };
        if kept {
            assert_eq!(
                after.get(key).map(Vec::as_slice),
                Some(as_of(line, A, &fork).as_slice()),
                "{key:?}"
            );
        }
    }
    for idx in 6..=10 {
        assert!(!after.contains_key(&("row".into(), "steps".into(), idx)));
    }
    for idx in 2..=3 {
        assert!(!after.contains_key(&("row".into(), "gen_metadata".into(), idx)));
    }

    // Its own trajectory and root; the parent's workspace and project.
    let meta = &the_only(&fork_stream, "row", Some("trajectory_meta"))[0];
    assert_eq!(meta["row"]["cascade_id"], fork.as_str());
    assert_ne!(meta["row"]["trajectory_id"], T_NOW);
    assert_eq!(meta["row"]["source"], 17);
    let blob_row = &the_only(&fork_stream, "row", Some("trajectory_metadata_blob"))[0];
    let data = blob(blob_row, "data");
    assert_eq!(field_str(&data, 6).as_deref(), Some(fork.as_str()));
    let original = agy12::root_metadata(A).build();
    let expected = Msg(original.clone()).0.len();
    assert_eq!(
        data.len(),
        expected,
        "only the root id changed, same length"
    );
    assert_eq!(field_str(&data, 18), field_str(&original, 18));

    // The parent's reference, then the FORK naming the parent's step 5 in
    // the trajectory that step names.
    let references = the_only(&fork_stream, "row", Some("parent_references"));
    assert_eq!(references.len(), 2);
    let inherited = blob(&references[0], "data");
    assert_eq!(field_str(&inherited, 6).as_deref(), Some(A));
    assert_eq!(references[1]["row"]["idx"], 1);
    let cut = blob(&references[1], "data");
    assert_eq!(field_str(&cut, 1).as_deref(), Some(T_NOW));
    assert_eq!(field_u64(&cut, 2), Some(5));
    assert_eq!(field_u64(&cut, 5), Some(2));
    assert_eq!(field_str(&cut, 6).as_deref(), Some(A));

    // Its index row: the parent's, made the fork's.
    let index = &the_only(&fork_stream, "index", None)[0]["row"];
    let parent_index = &the_only(&parent, "index", None)[0]["row"];
    assert_eq!(index["conversation_id"], fork.as_str());
    assert_eq!(index["step_count"], 6);
    assert_eq!(index["last_user_input_step_index"], 0);
    for same in [
        "title",
        "workspace_uris",
        "group_id",
        "project_id",
        "source",
    ] {
        assert_eq!(index[same], parent_index[same], "{same}");
    }
    // The parent's summary does not summarize the fork: emptied, for
    // agy-pack to make from the fork's own steps.
    assert_ne!(parent_index["raw_summary"], Value::Null);
    assert_eq!(index["raw_summary"], Value::Null);

    // Its brain: the kept steps' transcript lines and spilled output.
    assert_eq!(transcript_steps(&fork_stream, CHUNK), [0, 2, 2, 3, 4, 5]);
    assert_eq!(
        transcript_steps(&fork_stream, CHUNK_FULL),
        [0, 2, 2, 3, 4, 5]
    );
    let files: Vec<String> = the_only(&fork_stream, "file", None)
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert!(files.contains(&".system_generated/steps/3/output.txt".to_string()));
    assert!(files.contains(&"task.md".to_string()));

    // What a user reads: the parent's messages up to the cut, the spilled
    // output included.
    assert_eq!(messages(&fork_stream, None), messages(&parent, Some(5)));

    // Packed beside its parent, which stays as it was; agy-ls agrees.
    let before_files = support::store::files_under(&s.path.join("conversations"));
    run_ok(
        "agy-pack",
        &["--root", s.path.to_str().unwrap()],
        &fork_stream,
    );
    let after_files = support::store::files_under(&s.path.join("conversations"));
    for (path, bytes) in &before_files {
        let now = after_files.iter().find(|(p, _)| p == path).map(|(_, b)| b);
        assert_eq!(now, Some(bytes), "{} changed", path.display());
    }
    let dumped = dump(&["--id", &fork, s.path.to_str().unwrap()]);
    let raw = blob(&the_only(&dumped, "index", None)[0], "raw_summary");
    assert_eq!(field_str(&raw, 1).as_deref(), index["title"].as_str());
    assert_eq!(
        field_u64(&raw, 2),
        Some(6),
        "the fork's summary counts its steps"
    );
    assert_eq!(without_raw_summary(&dumped), fork_stream);
    let listed = run_ok("agy-ls", &[s.path.to_str().unwrap()], b"");
    let row = records(&listed)
        .into_iter()
        .find(|r| r["id"] == fork.as_str())
        .expect("agy-ls lists the fork");
    assert_eq!(row["index"], "agrees", "{row}");
}

fn fork_id(stream: &[u8]) -> String {
    records(stream)[0]["conversation"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_fork_of_a_fork_names_both_ancestors() {
    let s = store("fork2");
    let parent = dump_a(&s.path);
    let first = edit(&["fork", "--turn", "1"], &parent);
    assert_eq!(the_only(&first, "row", Some("steps")).len(), 6);
    let second = edit(
        &[
            "fork",
            "--at",
            "3",
            "--id",
            "6f1c2e3d-0000-4000-8000-000000000002",
        ],
        &first,
    );
    assert_eq!(fork_id(&second), "6f1c2e3d-0000-4000-8000-000000000002");
    let references: Vec<Vec<u8>> = the_only(&second, "row", Some("parent_references"))
        .iter()
        .map(|r| blob(r, "data"))
        .collect();
    let named: Vec<(Option<String>, Option<u64>)> = references
        .iter()
        .map(|r| (field_str(r, 6), field_u64(r, 2)))
        .collect();
    let first_id = fork_id(&first);
    assert_eq!(
        named,
        [
            (Some(A.to_string()), Some(1)),
            (Some(A.to_string()), Some(5)),
            (Some(first_id), Some(3)),
        ]
    );
    assert_eq!(messages(&second, None), messages(&parent, Some(3)));
}

#[test]
fn a_cut_inside_a_tool_call_is_refused_with_the_nearest_cuts() {
    let s = store("cut");
    let parent = dump_a(&s.path);
    let out = run("agy-edit", &["fork", "--at", "9"], &parent);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "nothing of a refused conversation is written"
    );
    let err = stderr(&out);
    assert!(err.contains(&format!("conversation {A} not edited: fork: --at 9 would part tool call \"call_3\", made at step 9, from its result at step 10; the nearest cuts that part nothing are --at 8 and --at 10")), "{err}");
    let out = run("agy-edit", &["rewind", "--to", "3"], &parent);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--to 2 and --to 4"),
        "{}",
        stderr(&out)
    );
    // With the subagent in the stream: it is edited, A is named.
    let both = dump(&[s.path.to_str().unwrap()]);
    let out = run("agy-edit", &["rewind", "--to", "3"], &both);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("1 of 2 conversations not edited"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        records(&out.stdout)
            .iter()
            .map(|r| r["conversation"].as_str().unwrap())
            .collect::<std::collections::BTreeSet<_>>(),
        [CHILD].into()
    );
}

#[test]
fn a_rewind_removes_the_turns_and_rotates_the_trajectory() {
    let s = store("rewind");
    let parent = dump_a(&s.path);
    let out = run("agy-edit", &["rewind", "--turns", "1"], &parent);
    assert!(out.status.success(), "{}", stderr(&out));
    let rewound = out.stdout.clone();
    assert!(
        stderr(&out).contains("rewound: removed 5 steps (6..=10)"),
        "{}",
        stderr(&out)
    );
    let before = keyed(&parent);
    let after = keyed(&rewound);
    for (key, line) in &before {
        let (kind, what, n) = key;
        let same = match (kind.as_str(), what.as_str()) {
            ("row", "steps") => *n <= 5,
            ("row", "gen_metadata") => *n <= 1,
            ("row", "trajectory_meta") | ("index", _) | ("end", _) => false,
            ("file", path) => !path.contains("/logs/"),
            _ => true,
        };
        if same {
            assert_eq!(after.get(key), Some(line), "{key:?}");
        }
    }
    assert_eq!(the_only(&rewound, "row", Some("steps")).len(), 6);
    assert_eq!(the_only(&rewound, "row", Some("gen_metadata")).len(), 2);
    // Its end record counts what the rewind wrote, not what came in.
    let end = &the_only(&rewound, "end", None)[0];
    assert_eq!(end["whole"], true);
    assert_eq!(end["rows"]["steps"], 6);
    assert_eq!(end["rows"]["gen_metadata"], 2);
    let trajectory = the_only(&rewound, "row", Some("trajectory_meta"))[0]["row"]["trajectory_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(trajectory, T_NOW);
    let references = the_only(&rewound, "row", Some("parent_references"));
    assert_eq!(references.len(), 2);
    let new = blob(&references[1], "data");
    assert_eq!(references[1]["row"]["idx"], 1);
    assert_eq!(
        field_str(&new, 1).as_deref(),
        Some(T_NOW),
        "names the trajectory it left"
    );
    assert_eq!(field_u64(&new, 2), Some(5));
    assert_eq!(field_u64(&new, 5), Some(2));
    assert_eq!(field_str(&new, 6).as_deref(), Some(A), "names itself");
    let index = &the_only(&rewound, "index", None)[0]["row"];
    assert_eq!(index["step_count"], 6);
    assert_eq!(index["last_user_input_step_index"], 0);
    assert_eq!(
        index["title"], "Speed up the index",
        "agy's own title is kept"
    );
    assert_eq!(transcript_steps(&rewound, CHUNK), [0, 2, 2, 3, 4, 5]);
    assert_eq!(messages(&rewound, None), messages(&parent, Some(5)));

    // In place: agy-pack --force, and agy-ls agrees with the index.
    let root = s.path.to_str().unwrap();
    run_ok("agy-pack", &["--force", "--root", root], &rewound);
    // As it went, but for the index row's summary, which the rewind
    // emptied and agy-pack made from the steps that are left.
    assert_eq!(
        the_only(&rewound, "index", None)[0]["row"]["raw_summary"],
        Value::Null
    );
    let dumped = dump_a(&s.path);
    let raw = blob(&the_only(&dumped, "index", None)[0], "raw_summary");
    assert_eq!(
        field_u64(&raw, 2),
        Some(6),
        "the summary counts the steps left"
    );
    assert_eq!(field_str(&raw, 4).as_deref(), Some(trajectory.as_str()));
    assert_eq!(without_raw_summary(&dumped), rewound);
    let listed = records(&run_ok("agy-ls", &[root], b""));
    let row = listed.iter().find(|r| r["id"] == A).unwrap();
    assert_eq!(row["index"], "agrees", "{row}");
    assert_eq!(
        index::cell(&index::row(&s.path, A).unwrap(), "step_count"),
        rusqlite::types::Value::Integer(6)
    );

    // A rewind after a rewind: another reference, another trajectory.
    let again = edit(&["rewind", "--to", "2"], &rewound);
    let references = the_only(&again, "row", Some("parent_references"));
    assert_eq!(references.len(), 3);
    let last = blob(&references[2], "data");
    assert_eq!(field_str(&last, 1), Some(trajectory.clone()));
    assert_eq!(field_u64(&last, 2), Some(1));
    let third = the_only(&again, "row", Some("trajectory_meta"))[0]["row"]["trajectory_id"].clone();
    assert_ne!(third, trajectory.as_str());
    assert_ne!(third, T_OLD);
    assert_eq!(the_only(&again, "row", Some("steps")).len(), 2);
    assert!(the_only(&again, "file", None)
        .iter()
        .all(|f| f["path"] != ".system_generated/steps/3/output.txt"));
    assert_eq!(transcript_steps(&again, CHUNK), [0]);
}

#[test]
fn settle_cancels_what_a_crash_left_running_and_nothing_else() {
    let s = store("settle");
    let root = s.path.to_str().unwrap();
    let whole = dump(&[root]);
    let out = run("agy-edit", &["settle"], &whole);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("{A}: settled 1 step (1 RUNNING) as CANCELED")),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("changed 1 of 2 conversations"),
        "{}",
        stderr(&out)
    );
    let settled = out.stdout.clone();
    // The subagent had nothing in flight: byte for byte.
    assert_eq!(keyed_of(&settled, CHILD), keyed_of(&whole, CHILD));
    let before = keyed_of(&whole, A);
    let after = keyed_of(&settled, A);
    assert_eq!(before.len(), after.len());
    let running = ("row".to_string(), "steps".to_string(), 10);
    for (key, line) in &before {
        if *key != running && key.0 != "index" {
            assert_eq!(after.get(key), Some(line), "{key:?}");
        }
    }
    // Step 10: its status column and field 4 say CANCELED; every other
    // column and every other byte of its Step are the same.
    let was: Value = serde_json::from_slice(&before[&running]).unwrap();
    let now: Value = serde_json::from_slice(&after[&running]).unwrap();
    assert_eq!(now["row"]["status"], 6);
    for column in [
        "idx",
        "step_type",
        "metadata",
        "task_details",
        "error_details",
        "permissions",
    ] {
        assert_eq!(now["row"][column], was["row"][column], "{column}");
    }
    let (a, b) = (blob(&was, "step_payload"), blob(&now, "step_payload"));
    assert_eq!(field_u64(&a, 4), Some(2));
    assert_eq!(field_u64(&b, 4), Some(6));
    assert_eq!(a.len(), b.len());
    assert_eq!(a.iter().zip(&b).filter(|(x, y)| x != y).count(), 1);
    // The index row's in-flight flag agrees; nothing else of it changed.
    let (i0, i1) = (
        &the_only(&whole, "index", None)[0],
        &the_only(&settled, "index", None)[0],
    );
    assert_eq!(i0["row"]["not_fully_idle"], 1);
    assert_eq!(i1["row"]["not_fully_idle"], 0);
    let mut i1 = i1.clone();
    i1["row"]["not_fully_idle"] = 1.into();
    assert_eq!(&i1, i0);

    // Settling what is settled changes nothing, byte for byte.
    let out = run("agy-edit", &["settle"], &settled);
    assert!(out.status.success());
    assert_eq!(out.stdout, settled);
    assert!(
        stderr(&out).contains("nothing to change in 2 conversations"),
        "{}",
        stderr(&out)
    );

    // Written back, agy's rewind past the step works: a rewind to step 10
    // is no longer a cut inside a call left running (it never was one for
    // agy-edit, which parts nothing there), and agy-ls agrees.
    run_ok("agy-pack", &["--force", "--root", root], &settled);
    assert_eq!(dump(&[root]), settled);
    let listed = records(&run_ok("agy-ls", &[root], b""));
    assert!(listed.iter().all(|r| r["index"] != "stale"), "{listed:?}");
}

#[test]
fn a_subagents_fork_keeps_its_root_and_parent() {
    let s = store("child");
    let child = dump(&["--id", CHILD, s.path.to_str().unwrap()]);
    let fork = edit(&["fork", "--at", "3"], &child);
    let data = blob(
        &the_only(&fork, "row", Some("trajectory_metadata_blob"))[0],
        "data",
    );
    let original = blob(
        &the_only(&child, "row", Some("trajectory_metadata_blob"))[0],
        "data",
    );
    assert_eq!(
        data, original,
        "a child's metadata names its root and parent, not itself"
    );
    assert_eq!(messages(&fork, None), messages(&child, None));
}

#[test]
fn usage_and_bad_input_are_told_apart() {
    for (args, words) in [
        (&[][..], "an operation is needed"),
        (&["graft"][..], "unknown operation \"graft\""),
        (&["fork"][..], "fork needs one of --at STEP and --turn N"),
        (
            &["fork", "--at", "1", "--turn", "1"][..],
            "fork needs one of",
        ),
        (
            &["rewind", "--at", "1"][..],
            "--at and --turn is for fork, not rewind",
        ),
        (
            &["settle", "--to", "1"][..],
            "--to and --turns is for rewind, not settle",
        ),
        (&["fork", "--at", "x"][..], "--at takes a step number"),
        (
            &["rewind", "--turns", "0"][..],
            "--turns takes a number of turns",
        ),
    ] {
        let out = run("agy-edit", args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(words), "{args:?}: {}", stderr(&out));
    }
    let out = run(
        "agy-edit",
        &["settle"],
        b"{\"conversation\":\"c\",\"kind\":\"db\",\"user_version\":1}\nnot json\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("stdin:2: bad JSON"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_acp_conversation_forks_with_its_sidecar_and_is_not_rewound() {
    let s = Scratch::new("acp");
    let id = "85732767-bcd9-46ac-8e31-08d986363857";
    let db = support::AgyDb::create(&s.path, id);
    // The ACP lane names the trajectory by the conversation's id and
    // writes the metadata blob empty; the cwd lives in the sidecar.
    db.conn
        .execute("UPDATE trajectory_meta SET trajectory_id = ?1", [id])
        .unwrap();
    db.trajectory_metadata(&[]);
    db.user_step(0, "first");
    db.user_step(1, "second");
    db.close();
    std::fs::write(
        s.join(format!("conversations/{id}.meta")),
        br#"{"cwd":"/tmp/agy-fixture/project","mode_id":"default"}"#,
    )
    .unwrap();
    let rows = dump(&[s.path.to_str().unwrap()]);
    let fork = edit(&["fork", "--at", "0"], &rows);
    let fid = fork_id(&fork);
    let meta = &the_only(&fork, "row", Some("trajectory_meta"))[0]["row"];
    assert_eq!(meta["trajectory_id"], fid.as_str());
    assert_eq!(meta["cascade_id"], fid.as_str());
    let files = the_only(&fork, "file", None);
    assert_eq!(files[0]["dir"], "conversations");
    assert_eq!(files[0]["path"], format!("{fid}.meta"));
    assert_eq!(
        files[0]["text"],
        r#"{"cwd":"/tmp/agy-fixture/project","mode_id":"default"}"#
    );
    run_ok("agy-pack", &["--root", s.path.to_str().unwrap()], &fork);
    assert!(s.join(format!("conversations/{fid}.meta")).exists());
    let out = run("agy-edit", &["rewind", "--to", "1"], &rows);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("ACP lane"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_fork_of_a_desktop_conversation_without_an_index_row_gets_the_desktops_marks() {
    let s = Scratch::new("desktop-fork");
    agy12::conversation_a(&s.path, None);
    let conn = rusqlite::Connection::open(s.join(format!("conversations/{A}.db"))).unwrap();
    conn.execute("UPDATE trajectory_meta SET source = 1", [])
        .unwrap();
    drop(conn);
    let fork = edit(&["fork", "--at", "5"], &dump_a(&s.path));
    let row = &the_only(&fork, "index", None)[0]["row"];
    assert_eq!(row["app_data_dir"], "antigravity", "{row}");
    assert_eq!(row["source"], "");
    assert_eq!(row["status"], "CASCADE_RUN_STATUS_IDLE");
    assert_eq!(row["step_count"], 6);
}
