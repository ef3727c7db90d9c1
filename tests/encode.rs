//! agy-encode: the steps it writes, and the fixpoint
//! `agy-decode(agy-encode(s)) == s` over streams that use every block type,
//! every tool mapping, non-ASCII text, errors, pending calls, images, usage
//! and stop reasons.

mod support;

use serde_json::Value;
use support::pb::Msg;
use support::steps::signature;
use support::{run, run_ok, stderr};

/// A message stream in the exact form agy-decode writes, each message at the
/// idx of the step agy-encode gives it.
const STREAM: &[&str] = &[
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":0,"timestamp":"2026-08-10T09:14:03Z","content":[{"type":"text","text":"Fix the flaky test ✓ — ünïcode\nsecond line"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGVsbG8="}},{"type":"image","source":{"type":"base64","data":"AAAA"}}]}"#,
    concat!(
        r#"{"conversation":"conv-1","kind":"message","role":"assistant","idx":1,"timestamp":"2026-08-10T09:14:04Z","model":"gemini-3-flash-agent","stop_reason":"tool_use","#,
        r#""usage":{"input_tokens":16870,"output_tokens":275,"cache_creation_input_tokens":0,"cache_read_input_tokens":12000},"content":["#,
        r#"{"type":"thinking","thinking":"Let me think… 思考","signature":"c2lnbmF0dXJl"},{"type":"text","text":"Running the tests."},"#,
        r#"{"type":"tool_use","id":"call_1","name":"Bash","input":{"command":"cargo test","workdir":"/r é","WaitMsBeforeAsync":5000,"toolAction":"Running"}},"#,
        r#"{"type":"tool_use","id":"call_2","name":"Read","input":{"file_path":"/r/src/lib.rs","offset":5,"limit":10}},"#,
        r#"{"type":"tool_use","id":"call_3","name":"Write","input":{"file_path":"/r/new.rs","content":"fn x() {}\n","Overwrite":true}},"#,
        r#"{"type":"tool_use","id":"call_4","name":"Edit","input":{"file_path":"/r/a.rs","old_string":"a","new_string":"b","replace_all":false}},"#,
        r#"{"type":"tool_use","id":"call_5","name":"list_dir","input":{"DirectoryPath":"/r"}},"#,
        r#"{"type":"tool_use","id":"call_6","name":"mcp_github_search","input":{"q":{"nested":[1,2.5,null]}},"signature":"deadbeef"},"#,
        r#"{"type":"tool_use","id":"call_7","name":"invoke_subagent","input":"raw args"},"#,
        r#"{"type":"tool_use","id":"call_8","name":"list_dir","input":{"DirectoryPath":"/r/src"}},"#,
        r#"{"type":"tool_use","id":"call_10","name":"grep_search","input":{"Query":"todo","SearchPath":"/r"}},"#,
        r#"{"type":"tool_use","id":"call_11","name":"call_mcp_tool","input":{"ServerName":"github","ToolName":"search","Arguments":{"q":"flaky"}}},"#,
        r#"{"type":"tool_use","id":"call_12","name":"task_boundary","input":{"TaskName":"Tests","TaskStatus":"running"}},"#,
        r#"{"type":"tool_use","id":"call_9","name":"Bash","input":{"command":"sleep 100"}}]}"#
    ),
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":2,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_1","content":"boom\n","is_error":true}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":3,"timestamp":"2026-08-10T09:14:05Z","content":[{"type":"tool_result","tool_use_id":"call_2","content":"5: fn main() {}"}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":4,"content":[{"type":"tool_result","tool_use_id":"call_3","content":{"file":"/r/new.rs","created":true}}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":5,"content":[{"type":"tool_result","tool_use_id":"call_4","content":"Edit applied to /r/a.rs"}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":6,"content":[{"type":"tool_result","tool_use_id":"call_5","content":[{"name":"src","is_dir":true,"num_children":4},{"name":"Cargo.toml","is_dir":false,"size_bytes":120},{}]}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":7,"content":[{"type":"tool_result","tool_use_id":"call_6","content":""}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":8,"content":[{"type":"tool_result","tool_use_id":"call_7","content":"","is_error":true}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":9,"content":[{"type":"tool_result","tool_use_id":"call_8","content":["lib.rs","main.rs"]}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":10,"content":[{"type":"tool_result","tool_use_id":"call_10","content":"src/lib.rs:3:// todo"}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":11,"content":[{"type":"tool_result","tool_use_id":"call_11","content":"[1 issue]"}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":12,"content":[{"type":"tool_result","tool_use_id":"call_12","content":"Tests\nrunning"}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"user","idx":13,"content":[{"type":"tool_result","tool_use_id":"ghost","content":"boo","is_error":true}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"assistant","idx":14,"timestamp":"2026-08-10T09:15:00.123456789Z","model":"model-1020","stop_reason":"stop-42","content":[{"type":"text","text":"Next."}]}"#,
    r#"{"conversation":"conv-1","kind":"message","role":"assistant","idx":15,"timestamp":"2026-08-10T09:16:00.120Z","stop_reason":"end_turn","usage":{"output_tokens":3},"content":[{"type":"thinking","thinking":"","signature":"5e1605"},{"type":"text","text":"\"quoted\" \\ \u0001 tab\t"}]}"#,
    r#"{"conversation":"conv-1","kind":"meta","id":"conv-1","timestamp":"2026-08-10T09:00:00Z","cwd":"/r é","git_branch":"feature/ü","title":"A title, not the first text","model":"model-1020"}"#,
    r#"{"conversation":"conv-2","kind":"message","role":"user","idx":0,"content":[{"type":"text","text":"hi"}]}"#,
    r#"{"conversation":"conv-2","kind":"message","role":"assistant","idx":1,"model":"other","stop_reason":"max_tokens","content":[{"type":"text","text":"hello"}]}"#,
    r#"{"conversation":"conv-2","kind":"meta","id":"conv-2","title":"hi","model":"other"}"#,
];

fn stream() -> String {
    STREAM.join("\n") + "\n"
}

fn encode(args: &[&str], input: &str) -> String {
    String::from_utf8(run_ok("agy-encode", args, input.as_bytes())).unwrap()
}

fn decode(rows: &str) -> String {
    String::from_utf8(run_ok("agy-decode", &[], rows.as_bytes())).unwrap()
}

fn assert_same_lines(actual: &str, expected: &str) {
    for (i, (a, e)) in actual.lines().zip(expected.lines()).enumerate() {
        assert_eq!(a, e, "line {} differs", i + 1);
    }
    assert_eq!(actual.lines().count(), expected.lines().count(), "{actual}");
}

/// `(step_type, status)` of every steps row of `conversation`.
fn step_kinds(rows: &str, conversation: &str) -> Vec<(i64, i64)> {
    rows.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["table"] == "steps" && r["conversation"] == conversation)
        .map(|r| {
            (
                r["row"]["step_type"].as_i64().unwrap(),
                r["row"]["status"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn decode_of_encode_is_the_identity() {
    let rows = encode(&[], &stream());
    assert_same_lines(&decode(&rows), &stream());
}

#[test]
fn decode_of_generic_encode_is_the_identity() {
    let rows = encode(&["--generic"], &stream());
    assert_same_lines(&decode(&rows), &stream());
}

#[test]
fn typed_kinds_as_agy_1_0_16_and_generic_as_1_1() {
    let rows = encode(&[], &stream());
    assert_eq!(
        step_kinds(&rows, "conv-1"),
        [
            (14, 3),  // user
            (15, 3),  // assistant
            (21, 7),  // Bash, failed
            (8, 3),   // Read
            (5, 3),   // Write with its canonical outcome
            (132, 3), // Edit with free text rides GENERIC
            (9, 3),   // list_dir, structured
            (132, 3), // MCP tool
            (132, 7), // subagent, failed
            (9, 3),   // list_dir, names
            (7, 3),   // grep_search, as its own kind
            (38, 3),  // call_mcp_tool, as its own kind
            (81, 3),  // task_boundary, as its own kind
            (132, 7), // orphan result: a tool step of its own
            (15, 3),
            (15, 3),
            (21, 1), // call_9 never answered: pending
            (23, 3), // checkpoint holding the title
        ]
    );
    let generic = encode(&["--generic"], &stream());
    let kinds: Vec<i64> = step_kinds(&generic, "conv-1").iter().map(|k| k.0).collect();
    assert_eq!(
        kinds,
        [14, 15, 132, 132, 5, 132, 9, 132, 132, 9, 132, 132, 132, 132, 15, 15, 132, 23]
    );
}

/// The metadata and step_payload of the steps row at `idx`.
fn step_at(rows: &str, conversation: &str, idx: i64) -> (Vec<u8>, Vec<u8>) {
    let record = rows
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| {
            r["table"] == "steps" && r["conversation"] == conversation && r["row"]["idx"] == idx
        })
        .unwrap();
    let column = |name: &str| hex::decode(record["row"][name].as_str().unwrap()).unwrap();
    (column("metadata"), column("step_payload"))
}

fn contains(haystack: &[u8], needle: &Msg) -> bool {
    haystack.windows(needle.0.len()).any(|w| w == needle.0)
}

#[test]
fn signatures_and_orphan_results_are_written_in_agy_shape() {
    for args in [&[][..], &["--generic"][..]] {
        let rows = encode(args, &stream());
        let (_, planner) = step_at(&rows, "conv-1", 1);
        // A signature that is not hex is TX's string form, at 20.4.
        assert!(contains(&planner, &Msg::new().str(4, "c2lnbmF0dXJl")));
        // A tool call's hex signature is ChatToolCall.7 {2 {1: bytes}}.
        let call_6 = Msg::new().msg(7, signature(&[0xde, 0xad, 0xbe, 0xef]));
        assert!(contains(&planner, &call_6));
        let (tool_meta, _) = step_at(&rows, "conv-1", 7);
        assert!(contains(&tool_meta, &call_6));
        // A reply with no thinking text keeps its signature at 20.14
        // {2 {1: bytes}}, as agy 1.1.23 writes it.
        let (_, quiet) = step_at(&rows, "conv-1", 15);
        assert!(contains(
            &quiet,
            &Msg::new().msg(14, signature(&[0x5e, 0x16, 0x05]))
        ));
        // The orphan result runs a call that has only its id.
        let (orphan_meta, _) = step_at(&rows, "conv-1", 13);
        assert!(contains(
            &orphan_meta,
            &Msg::new().msg(4, Msg::new().str(1, "ghost"))
        ));
    }
}

#[test]
fn rows_are_a_complete_conversation() {
    let rows = encode(&[], &stream());
    let records: Vec<Value> = rows
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["conversation"] == "conv-2")
        .collect();
    let shape: Vec<String> = records
        .iter()
        .map(|r| match r["kind"].as_str().unwrap() {
            "row" => format!("row {}", r["table"].as_str().unwrap()),
            "schema" => "schema".to_string(),
            "file" => format!("file {}", r["path"].as_str().unwrap()),
            other => other.to_string(),
        })
        .collect();
    let mut expected = vec!["db".to_string()];
    expected.extend(std::iter::repeat_n("schema".to_string(), 9));
    expected.extend(
        [
            "row trajectory_meta",
            "row steps",
            "row steps",
            "row trajectory_metadata_blob",
            "index",
            "file .system_generated/logs/transcript.jsonl",
            "file .system_generated/logs/transcript_full.jsonl",
            "end",
        ]
        .map(String::from),
    );
    let end = records.last().unwrap();
    assert_eq!(
        serde_json::to_string(end).unwrap(),
        r#"{"conversation":"conv-2","kind":"end","whole":true,"brain":"read","schema":9,"rows":{"steps":2,"trajectory_meta":1,"trajectory_metadata_blob":1},"index":1,"files":2}"#
    );
    // The title "hi" is what agy-decode derives from the first user text,
    // so it costs no checkpoint step.
    assert_eq!(shape, expected);
    let meta = &records[10]["row"];
    assert_eq!(meta["cascade_id"], "conv-2");
    assert_eq!(meta["trajectory_type"], 4);
    assert_eq!(meta["source"], 17);
    // The steps columns mirror Step fields 1, 4 and 5.
    let step = &records[11]["row"];
    let payload = hex::decode(step["step_payload"].as_str().unwrap()).unwrap();
    let metadata = hex::decode(step["metadata"].as_str().unwrap()).unwrap();
    assert_eq!(&payload[..4], [0x08, 14, 0x20, 3]);
    assert_eq!(payload[4], 0x2a);
    assert_eq!(&payload[6..6 + metadata.len()], &metadata[..]);
    let transcript = records[15]["text"].as_str().unwrap();
    let first: Value = serde_json::from_str(transcript.lines().next().unwrap()).unwrap();
    assert_eq!(
        first,
        serde_json::json!({"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","content":"<USER_REQUEST>\nhi\n</USER_REQUEST>"})
    );
}

#[test]
fn a_user_turn_encodes_to_the_seed_bytes() {
    // The step of seeds/antigravity.md, "Dissection of a transcript".
    let input = r#"{"conversation":"c","kind":"message","role":"user","timestamp":"2025-08-10T10:00:00Z","content":[{"type":"text","text":"Fix the flaky test"}]}"#;
    let rows = encode(&[], input);
    let step: Value = rows
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["table"] == "steps")
        .unwrap();
    assert_eq!(step["row"]["metadata"], "0a0608a0dbe1c4061804");
    assert_eq!(
        step["row"]["step_payload"],
        "080e20032a0a0a0608a0dbe1c40618049a012a12124669782074686520666c616b7920746573741a140a124669782074686520666c616b792074657374"
    );
}

#[test]
fn output_is_deterministic_and_ids_derive_from_the_conversation() {
    let a = encode(&[], &stream());
    assert_eq!(a, encode(&[], &stream()));
    let renamed = stream().replace("conv-1", "conv-x");
    let b = encode(&[], &renamed);
    let trajectory = |rows: &str, conv: &str| -> String {
        rows.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|r| r["table"] == "trajectory_meta" && r["conversation"] == conv)
            .unwrap()["row"]["trajectory_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_ne!(trajectory(&a, "conv-1"), trajectory(&b, "conv-x"));
    assert_eq!(trajectory(&a, "conv-1").len(), 36);
}

#[test]
fn foreign_input_is_normalised() {
    // No conversation (given by --id), nulls for absent values, several
    // text blocks, a result list of text blocks, a result with no call, an
    // offset timestamp and a foreign stop reason.
    let input = [
        r#"{"kind":"message","role":"user","timestamp":"2026-08-10T11:14:03+02:00","stop_reason":null,"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#,
        r#"{"kind":"message","role":"assistant","stop_reason":"stop_sequence","model":null,"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}"#,
        r#"{"kind":"message","role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"x"},{"type":"text","text":"y"}]},{"type":"tool_result","tool_use_id":"nope","content":"late"},{"type":"text","text":"more"}]}"#,
    ]
    .join("\n");
    let out = run("agy-encode", &[], input.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("stdin:1: record has no \"conversation\" (give one with --id)"),
        "{}",
        stderr(&out)
    );
    let rows = encode(&["--id", "f1"], &input);
    assert_same_lines(
        &decode(&rows),
        &[
            r#"{"conversation":"f1","kind":"message","role":"user","idx":0,"timestamp":"2026-08-10T09:14:03Z","content":[{"type":"text","text":"a\n\nb"}]}"#,
            r#"{"conversation":"f1","kind":"message","role":"assistant","idx":1,"stop_reason":"end_turn","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}"#,
            r#"{"conversation":"f1","kind":"message","role":"user","idx":2,"content":[{"type":"tool_result","tool_use_id":"t1","content":"xy"}]}"#,
            r#"{"conversation":"f1","kind":"message","role":"user","idx":3,"content":[{"type":"tool_result","tool_use_id":"nope","content":"late"}]}"#,
            r#"{"conversation":"f1","kind":"message","role":"user","idx":4,"content":[{"type":"text","text":"more"}]}"#,
            r#"{"conversation":"f1","kind":"meta","id":"f1","timestamp":"2026-08-10T09:14:03Z","title":"a"}"#,
        ]
        .join("\n"),
    );
}

#[test]
fn bad_records_are_errors_naming_the_line() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"conversation":"c","kind":"message","role":"assistant","stop_reason":"sideways","content":[]}"#,
            "unknown stop_reason \"sideways\"",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"user","timestamp":"yesterday","content":[]}"#,
            "bad timestamp",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"user","content":[{"type":"video"}]}"#,
            "bad message record",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"user","content":[{"type":"tool_use","id":"x","name":"y","input":{}}]}"#,
            "only text, image, document and tool_result",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"system","content":[]}"#,
            "system message has no \"step_type\"",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"operator","content":[]}"#,
            "bad message record",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"system","step_type":"NO_SUCH_KIND","content":[]}"#,
            "unknown step_type \"NO_SUCH_KIND\"",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"system","step_type":"VIEW_FILE","content":[]}"#,
            "system message of kind VIEW_FILE carries no \"raw\" step",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"system","step_type":"TASK_BOUNDARY","content":[{"type":"text","text":"x","field":"title"}]}"#,
            "TASK_BOUNDARY message: field \"title\" is not one of task_name, task_status, task_summary",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"system","step_type":"CHECKPOINT","content":[{"type":"thinking","thinking":"x"}]}"#,
            "a system message holds only text blocks",
        ),
        (
            r#"{"conversation":"c","kind":"meta","id":"c","forked_from":{"conversation_id":"p","reference_type":"PRUNE"}}"#,
            "neither FORK nor SUBAGENT_FORK",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"user","content":[{"type":"document","source":{"type":"base64","data":"not base64!"}}]}"#,
            "not padded standard base64",
        ),
        (
            r#"{"conversation":"c","kind":"nonsense"}"#,
            "unknown record kind",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"assistant","content":[{"type":"tool_use","id":"x","name":"y","input":{},"signature":"zz"}]}"#,
            "signature is not hex",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"user","content":[{"type":"image","source":{"type":"url","data":"http://x"}}]}"#,
            "image source of type \"url\" has no \"url\"",
        ),
        (
            r#"{"conversation":"c","kind":"message","role":"user","content":[{"type":"image","source":{"type":"file","data":"x"}}]}"#,
            "only base64 and url",
        ),
        ("not json", "bad message record"),
    ];
    for (line, why) in cases {
        let input = format!("{{\"conversation\":\"c\",\"kind\":\"message\",\"role\":\"user\",\"content\":[]}}\n{line}\n");
        let out = run("agy-encode", &[], input.as_bytes());
        assert_eq!(out.status.code(), Some(1), "{line}");
        let err = stderr(&out);
        assert!(
            err.contains("stdin:2: ") && err.contains(why),
            "{line}: {err}"
        );
    }
    let after_meta = "{\"conversation\":\"c\",\"kind\":\"meta\",\"id\":\"c\"}\n{\"conversation\":\"c\",\"kind\":\"message\",\"role\":\"user\",\"content\":[]}\n";
    let out = run("agy-encode", &[], after_meta.as_bytes());
    assert!(
        stderr(&out).contains("stdin:2: message after the conversation's meta record"),
        "{}",
        stderr(&out)
    );
    assert_eq!(run("agy-encode", &["--bogus"], b"").status.code(), Some(2));
    assert_eq!(run("agy-encode", &["--id"], b"").status.code(), Some(2));
    assert!(run("agy-encode", &["--help"], b"").status.success());
}

#[test]
fn long_transcripts_go_out_in_parts_and_come_back_whole() {
    // Six user turns of 400 KB: the full transcript passes a record's
    // megabyte twice, the compact one (cut at 4 KB a value) never does.
    let texts: Vec<String> = (0..6).map(|i| format!("{i}é").repeat(100_000)).collect();
    let input: String = texts
        .iter()
        .map(|t| {
            format!(
                "{{\"conversation\":\"big\",\"kind\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"{t}\"}}]}}\n"
            )
        })
        .collect();
    let rows = encode(&[], &input);
    let records: Vec<Value> = rows
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let parts = |path: &str| -> Vec<(usize, &Value)> {
        records
            .iter()
            .enumerate()
            .filter(|(_, r)| r["kind"] == "file" && r["path"] == path)
            .collect()
    };
    let full_parts = parts(".system_generated/logs/transcript_full.jsonl");
    assert_eq!(full_parts.len(), 2, "two parts of the full transcript");
    assert_eq!(full_parts[0].1.get("append"), None);
    assert_eq!(full_parts[1].1["append"], true);
    // The first part goes out between the step rows, not after them all.
    let last_step = records.iter().rposition(|r| r["table"] == "steps").unwrap();
    assert!(full_parts[0].0 < last_step);
    let full: String = full_parts
        .iter()
        .map(|(_, r)| r["text"].as_str().unwrap())
        .collect();
    let contents: Vec<String> = full
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let expected: Vec<String> = texts
        .iter()
        .map(|t| format!("<USER_REQUEST>\n{t}\n</USER_REQUEST>"))
        .collect();
    assert_eq!(contents, expected);
    let compact_parts = parts(".system_generated/logs/transcript.jsonl");
    assert_eq!(compact_parts.len(), 1);
    let compact = compact_parts[0].1["text"].as_str().unwrap();
    assert!(compact.len() < 60_000 && compact.contains("<truncated "));
    assert!(
        rows.lines().all(|l| l.len() < 2 << 20),
        "no record holds the whole transcript"
    );

    // agy-pack puts the parts together into one file.
    let scratch = support::Scratch::new("encode-parts");
    let root = scratch.path.join("root");
    run_ok(
        "agy-pack",
        &["--root", root.to_str().unwrap()],
        rows.as_bytes(),
    );
    let packed = std::fs::read_to_string(
        root.join("brain/big/.system_generated/logs/transcript_full.jsonl"),
    )
    .unwrap();
    assert_eq!(packed, full);
    let decoded = decode(&rows);
    for (line, text) in decoded.lines().zip(&texts) {
        assert!(line.contains(text.as_str()));
    }
}

/// A failed call whose result is structured (found by fuzz/roundtrip):
/// its typed step with status ERROR, so decoding gives the same result.
#[test]
fn a_failed_edit_with_a_structured_result_round_trips() {
    let stream = [
        r#"{"conversation":"c","kind":"message","role":"user","idx":0,"content":[{"type":"text","text":"edit it"}]}"#,
        r#"{"conversation":"c","kind":"message","role":"assistant","idx":1,"content":[{"type":"tool_use","id":"e1","name":"Edit","input":{"file_path":"/r/a.rs","old_string":"a","new_string":"b"}}]}"#,
        r#"{"conversation":"c","kind":"message","role":"user","idx":2,"content":[{"type":"tool_result","tool_use_id":"e1","content":{"file":"/r/a.rs","edited":true},"is_error":true}]}"#,
        r#"{"conversation":"c","kind":"message","role":"user","idx":3,"content":[{"type":"tool_result","tool_use_id":"e2","content":["a","b"],"is_error":true}]}"#,
        r#"{"conversation":"c","kind":"meta","id":"c","title":"edit it"}"#,
    ]
    .join("\n")
        + "\n";
    for args in [&[][..], &["--generic"][..]] {
        assert_same_lines(&decode(&encode(args, &stream)), &stream);
    }
}

/// Found by the roundtrip fuzz target (fuzz/RESULTS.md): a tool_use whose
/// input is a string went into arguments_json as its raw text, which read
/// back as `{}` when blank and as another value when it was JSON text
/// itself (`"5"` came back as 5). Every input now comes back as it went in.
#[test]
fn tool_inputs_that_are_strings_round_trip() {
    let inputs = [
        r#""""#,
        r#"" ""#,
        r#""x""#,
        r#""5""#,
        r#""[1]""#,
        r#""{\"a\":1}""#,
        r#"5"#,
        r#"[1,2]"#,
        r#"{}"#,
    ];
    let mut lines =
        vec![r#"{"conversation":"c","kind":"message","role":"user","idx":0,"content":[{"type":"text","text":"go"}]}"#.to_string()];
    for (i, input) in inputs.iter().enumerate() {
        lines.push(format!(
            r#"{{"conversation":"c","kind":"message","role":"assistant","idx":{},"content":[{{"type":"tool_use","id":"t{i}","name":"invoke_subagent","input":{input}}}]}}"#,
            i + 1
        ));
    }
    lines.push(r#"{"conversation":"c","kind":"meta","id":"c","title":"go"}"#.to_string());
    let stream = lines.join("\n") + "\n";
    for args in [&[][..], &["--generic"][..]] {
        assert_same_lines(&decode(&encode(args, &stream)), &stream);
    }
}

/// A key the message stream does not define changes nothing, so agy-encode
/// says so: once per key and conversation, naming the line, and the rows
/// are those of the stream without it. The same with `--onto`.
#[test]
fn keys_nothing_reads_are_warned_about_once_per_conversation() {
    let plain = stream();
    // `.text` set on the thinking block (idx 15), twice in conv-1 (the
    // second time on a copy of the line), and a record key on conv-2.
    let thinking = STREAM
        .iter()
        .position(|l| l.contains("\"thinking\":\"\""))
        .unwrap();
    let edited_line = STREAM[thinking].replace(
        r#"{"type":"thinking","thinking":"""#,
        r#"{"type":"thinking","text":"edited","thinking":"""#,
    );
    assert_ne!(edited_line, STREAM[thinking]);
    let mut lines: Vec<String> = STREAM.iter().map(|l| l.to_string()).collect();
    lines[thinking] = edited_line.clone();
    let conv2 = lines
        .iter()
        .position(|l| l.contains(r#""conversation":"conv-2""#))
        .unwrap();
    lines[conv2] =
        lines[conv2].replacen(r#""role":"user","#, r#""role":"user","colour":"red","#, 1);
    let edited = lines.join("\n") + "\n";

    let out = run("agy-encode", &[], edited.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let warnings = stderr(&out);
    let want = [
        format!(
            "agy-encode: warning: stdin:{}: conversation \"conv-1\": key \"text\" of a thinking block is not part of the message stream; ignored",
            thinking + 1
        ),
        format!(
            "agy-encode: warning: stdin:{}: conversation \"conv-2\": key \"colour\" of a message record is not part of the message stream; ignored",
            conv2 + 1
        ),
    ];
    assert_eq!(warnings.lines().collect::<Vec<_>>(), want, "{warnings}");
    assert_eq!(out.stdout, run_ok("agy-encode", &[], plain.as_bytes()));

    // --onto: the edited stream written back onto the rows of the plain
    // one, packed and dumped as a user's would be.
    let scratch = support::Scratch::new("unread-onto");
    let root = scratch.path.join("root");
    let root = root.to_str().unwrap();
    let packed = run_ok("agy-encode", &[], plain.as_bytes());
    run_ok("agy-pack", &["--root", root], &packed);
    let rows = scratch.path.join("rows.ndjson");
    std::fs::write(&rows, run_ok("agy-dump", &[root], b"")).unwrap();
    let messages = String::from_utf8(run_ok(
        "agy-decode",
        &["--all"],
        &std::fs::read(&rows).unwrap(),
    ))
    .unwrap();
    let edited_messages: String = messages
        .lines()
        .map(|l| match l.contains(r#""type":"thinking""#) {
            true => {
                l.replacen(
                    r#"{"type":"thinking","#,
                    r#"{"type":"thinking","text":"edited","#,
                    1,
                ) + "\n"
            }
            false => format!("{l}\n"),
        })
        .collect();
    assert_ne!(edited_messages, messages);
    let out = run(
        "agy-encode",
        &["--onto", rows.to_str().unwrap()],
        edited_messages.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let warnings = stderr(&out);
    assert_eq!(warnings.lines().count(), 1, "{warnings}");
    assert!(
        warnings.contains("conversation \"conv-1\": key \"text\" of a thinking block is not part of the message stream; ignored"),
        "{warnings}"
    );
}

/// A stream longer than one batch of stream::ahead (256 KiB) is parsed on
/// a second thread: every record still comes once and in order (decode
/// gives the stream back), and a bad line far into it is named at its
/// line, after the rows of the lines before it, as in a short one.
#[test]
fn a_long_stream_is_read_ahead_in_order_and_a_bad_line_is_named() {
    let text = "lorem ipsum \"quoted\"\n".repeat(150);
    let lines: Vec<String> = (0..1200)
        .map(|idx| {
            format!(
                r#"{{"conversation":"long","kind":"message","role":"user","idx":{idx},"timestamp":"2026-08-10T09:14:03Z","content":[{{"type":"text","text":"{idx} {}"}}]}}"#,
                text.replace('"', "\\\"").replace('\n', "\\n")
            )
        })
        .collect();
    let stream = lines.join("\n") + "\n";
    assert!(stream.len() > 4 << 20, "{} bytes", stream.len());
    let meta = r#"{"conversation":"long","kind":"meta","id":"long","timestamp":"2026-08-10T09:14:03Z","title":"0 lorem ipsum \"quoted\""}"#;
    let full = encode(&[], &stream);
    assert_same_lines(&decode(&full), &format!("{stream}{meta}\n"));

    let mut bad = lines.clone();
    bad[999] =
        r#"{"conversation":"long","kind":"message","role":"user","content":[{"type":"video"}]}"#
            .into();
    let out = run("agy-encode", &[], (bad.join("\n") + "\n").as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("stdin:1000: bad message record"), "{err}");
    // What was written before the error is the start of the stream's
    // rows, as far as they had been flushed.
    let rows = String::from_utf8(out.stdout).unwrap();
    assert!(
        rows.len() > 1 << 20 && full.starts_with(&rows),
        "{} bytes",
        rows.len()
    );
}

/// agy 1.2's conversation A, as agy writes it (FORMAT.md section 13,
/// tests/support/agy12.rs) and agy-decode --all reads it, encodes to the
/// same rows when it comes after 300 KiB of another conversation, so that
/// it is read and parsed on the reading thread, as when it comes alone and
/// is read in place.
#[test]
fn a_real_conversation_read_ahead_encodes_as_one_read_in_place() {
    let scratch = support::Scratch::new("encode-ahead-agy12");
    support::agy12::conversation_a(&scratch.path, None);
    let root = scratch.path.to_str().unwrap();
    let messages = String::from_utf8(run_ok("agy-decode", &["--all", root], b"")).unwrap();
    assert!(messages.contains(support::agy12::A), "{messages}");
    let alone = encode(&[], &messages);

    let filler: String = (0..300)
        .map(|idx| {
            format!(
                r#"{{"conversation":"filler","kind":"message","role":"user","idx":{idx},"content":[{{"type":"text","text":"{}"}}]}}"#,
                "x".repeat(1200)
            ) + "\n"
        })
        .collect();
    assert!(filler.len() > 256 << 10, "{} bytes", filler.len());
    let after = encode(&[], &(filler + &messages));
    let of_a: String = after
        .lines()
        .filter(|line| {
            serde_json::from_str::<Value>(line).unwrap()["conversation"] == support::agy12::A
        })
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(alone.lines().count() > 10, "{alone}");
    assert_same_lines(&of_a, &alone);
}
