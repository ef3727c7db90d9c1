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
use support::shapes::{real_shaped, signed_bytes, REAL_ID as ID};
use support::{run_ok, Scratch};

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
    // The new root had no index: agy-pack made one, deriving the rows the
    // original had none of.
    support::without_derived_index_rows(&dump(&root), original)
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

/// The db and schema records of `stream`'s conversation and an end record
/// that says so: a database agy made and wrote nothing into.
fn without_rows(stream: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut schema = 0;
    for line in stream.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut record: Value = serde_json::from_slice(line).unwrap();
        match record["kind"].as_str().unwrap() {
            "db" | "schema" => {
                schema += u64::from(record["kind"] == "schema");
                out.extend_from_slice(line);
                out.push(b'\n');
            }
            "end" => {
                record["schema"] = schema.into();
                record["rows"] = serde_json::json!({});
                record["index"] = 0.into();
                record["files"] = 0.into();
                serde_json::to_writer(&mut out, &record).unwrap();
                out.push(b'\n');
            }
            _ => {}
        }
    }
    out
}

/// A conversation with no rows decodes to its meta record alone, which
/// `--onto` writes back as it was; with another conversation's record
/// among its own, it is refused, named.
#[test]
fn a_conversation_with_no_rows_is_given_back_whole() {
    let scratch = Scratch::new("onto-no-rows");
    let root = scratch.join("real");
    real_shaped(&root);
    let original = without_rows(&dump(&root));
    let messages = run_ok("agy-decode", &[], &original);
    assert_eq!(messages.iter().filter(|&&b| b == b'\n').count(), 1);
    let meta: Value = serde_json::from_slice(&messages).unwrap();
    assert_eq!(meta["kind"], "meta", "{meta}");
    let onto = scratch.join("empty.rows");
    std::fs::write(&onto, &original).unwrap();
    let back = run_ok("agy-encode", &["--onto", onto.to_str().unwrap()], &messages);
    assert!(back == original, "{}", String::from_utf8_lossy(&back));

    // Another conversation's schema record among this one's: the rest of
    // this one is not reached, so what is written says it is not whole
    // (no end record: agy-pack will not put it in place), and why.
    let mut lines: Vec<&[u8]> = original.split_inclusive(|&b| b == b'\n').collect();
    let other = String::from_utf8(lines[2].to_vec())
        .unwrap()
        .replace(ID, "00000000-0000-4000-8000-000000000000");
    lines.insert(3, other.as_bytes());
    let split = scratch.join("split.rows");
    std::fs::write(&split, lines.concat()).unwrap();
    let out = support::run(
        "agy-encode",
        &["--onto", split.to_str().unwrap()],
        &messages,
    );
    let err = support::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("no end record"), "{err}");
    assert!(!out.stdout.windows(12).any(|w| w == b"\"kind\":\"end\""));
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
