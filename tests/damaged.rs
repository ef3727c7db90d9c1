//! Damaged blobs are never silent: agy-decode keeps the readable part,
//! marks the message `"damaged":true` and says on stderr what was lost,
//! naming the conversation, the step, the column and the field; and no
//! message with empty content appears without an explanation.

mod support;

use support::pb::Msg;
use support::steps::*;
use support::{run, stderr};

const T0: i64 = 1_786_353_243;

fn decode(args: &[&str], lines: &[String]) -> (Vec<String>, String) {
    let input = lines.join("\n") + "\n";
    let out = run("agy-decode", args, input.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    (text.lines().map(str::to_string).collect(), stderr(&out))
}

/// A planner reply of agy 1.1.9's size (FORMAT.md 13 row 6: field 20
/// declares 21,594 bytes), cut after 861 of them.
fn cut_reply() -> String {
    let text = "The fix is in the reader: it must keep the partial record. ".repeat(360);
    let reply = Msg::new().str(1, &text).str(8, &text);
    let reply = Msg(reply.0[..21_594].to_vec());
    let meta = metadata(T0, 2);
    let full = Msg::new()
        .varint(1, PLANNER_RESPONSE)
        .varint(4, DONE)
        .msg(5, meta.clone())
        .bytes(20, &reply.0);
    let declared = full.0.len() - 21_594;
    let cut = Msg(full.0[..declared + 861].to_vec());
    row("c1", 7, PLANNER_RESPONSE, DONE, &meta, &cut)
}

#[test]
fn a_reply_cut_short_keeps_its_text_says_so_and_is_marked() {
    let (out, err) = decode(&[], &[db("c1"), cut_reply()]);
    let message: serde_json::Value = serde_json::from_str(&out[0]).unwrap();
    assert_eq!(message["damaged"], true);
    assert_eq!(message["idx"], 7);
    let text = message["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("The fix is in the reader"), "{text}");
    assert!(text.len() > 800 && text.len() < 861, "{}", text.len());
    for named in [
        "conversation c1",
        "step 7",
        "step_payload",
        "field 20",
        "21594",
        "861",
    ] {
        assert!(err.contains(named), "stderr names {named}: {err}");
    }
    assert!(err.contains(":2:"), "stderr names the input line: {err}");
}

#[test]
fn a_user_input_cut_short_is_marked_too() {
    let meta = metadata(T0, 4);
    let full = step(
        USER_INPUT,
        DONE,
        &meta,
        19,
        Msg::new().str(2, &"please look at the reader ".repeat(40)),
    );
    let cut = Msg(full.0[..full.0.len() - 300].to_vec());
    let (out, err) = decode(
        &[],
        &[db("c1"), row("c1", 0, USER_INPUT, DONE, &meta, &cut)],
    );
    let message: serde_json::Value = serde_json::from_str(&out[0]).unwrap();
    assert_eq!(message["damaged"], true);
    assert!(message["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("please look"));
    assert!(err.contains("step 0") && err.contains("field 19"), "{err}");
}

#[test]
fn whole_steps_say_nothing_on_stderr_and_carry_no_mark() {
    let meta = metadata(T0, 4);
    let whole = step(USER_INPUT, DONE, &meta, 19, Msg::new().str(2, "hi"));
    let (out, err) = decode(
        &[],
        &[db("c1"), row("c1", 0, USER_INPUT, DONE, &meta, &whole)],
    );
    assert!(!out[0].contains("damaged"));
    assert_eq!(err, "");
}

#[test]
fn an_empty_step_shows_only_with_all_and_says_why() {
    let meta = metadata(T0, 2);
    let empty = step(PLANNER_RESPONSE, DONE, &meta, 20, Msg::new());
    let lines = [
        db("c1"),
        row("c1", 3, PLANNER_RESPONSE, DONE, &meta, &empty),
    ];
    let (out, _) = decode(&[], &lines);
    assert_eq!(out.len(), 1, "only the meta record: {out:?}");
    assert!(out[0].contains(r#""kind":"meta""#));
    let (out, _) = decode(&["--all"], &lines);
    let message: serde_json::Value = serde_json::from_str(&out[0]).unwrap();
    assert_eq!(message["role"], "system");
    assert_eq!(message["step_type"], "PLANNER_RESPONSE");
    assert!(message["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("no text, thinking or tool calls"));
    assert_eq!(message["raw"], hex::encode(&empty.0));
    // No message anywhere has empty content without a reason.
    for line in out {
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["kind"] == "message" && v["content"].as_array().unwrap().is_empty() {
            assert_eq!(v["damaged"], true, "{line}");
        }
    }
}

#[test]
fn agy_dump_names_a_conversation_with_damaged_rows_and_still_dumps_it() {
    let scratch = support::Scratch::new("damaged-dump");
    let root = scratch.join("root");
    let id = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d";
    let db = support::AgyDb::create(&root, id);
    let meta = metadata(T0, 4);
    let whole = step(USER_INPUT, DONE, &meta, 19, Msg::new().str(2, "hi"));
    db.step(0, USER_INPUT as i64, DONE as i64, &meta.0, &whole.0);
    let reply = step(
        PLANNER_RESPONSE,
        DONE,
        &meta,
        20,
        Msg::new().str(1, &"x".repeat(500)),
    );
    let cut = &reply.0[..reply.0.len() - 200];
    db.step(1, PLANNER_RESPONSE as i64, DONE as i64, &meta.0, cut);
    db.close();
    let out = run("agy-dump", &[root.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "reading damage is no error");
    let err = stderr(&out);
    for named in [id, "1 steps row(s)", "step 1", "step_payload", "field 20"] {
        assert!(err.contains(named), "stderr names {named}: {err}");
    }
    assert!(err.contains("1 conversation(s) hold damaged rows"), "{err}");
    // The row is in the stream byte for byte.
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&hex::encode(cut)));
}

/// The messages agy-decode gives for `rows`, as JSON values.
fn messages_of(rows: &[String]) -> Vec<serde_json::Value> {
    let (out, _) = decode(&[], rows);
    out.iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn to_lines(values: &[serde_json::Value]) -> String {
    values.iter().map(|v| v.to_string() + "\n").collect()
}

/// agy-encode(1) WRITING BACK: a damaged step whose message is unchanged
/// keeps its row, damage and all; edited, it becomes a whole step holding
/// what the message shows; without --onto the mark does not survive.
#[test]
fn a_damaged_step_written_back() {
    let scratch = support::Scratch::new("damaged-onto");
    let meta = metadata(T0, 4);
    let user = step(USER_INPUT, DONE, &meta, 19, Msg::new().str(2, "why?"));
    let rows = vec![
        db("c1"),
        row("c1", 0, USER_INPUT, DONE, &meta, &user),
        cut_reply(),
    ];
    let rows_file = scratch.join("rows.ndjson");
    std::fs::write(&rows_file, rows.join("\n") + "\n").unwrap();
    let onto = ["--onto", rows_file.to_str().unwrap()];
    let messages = messages_of(&rows);
    assert_eq!(messages[1]["damaged"], true);
    let readable = messages[1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();

    // Unchanged: the damaged row goes out as it came.
    let out = support::run_ok("agy-encode", &onto, to_lines(&messages).as_bytes());
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.lines().any(|l| l == rows[2]),
        "the cut row is kept whole"
    );
    let (_, err) = decode(&[], &out.lines().map(str::to_string).collect::<Vec<_>>());
    assert!(err.contains("step 7") && err.contains("field 20"), "{err}");

    // Edited: a whole step with the edit, read without a warning.
    let mut edited = messages.clone();
    edited[1]["content"][0]["text"] = format!("Edited. {readable}").into();
    let out = support::run_ok("agy-encode", &onto, to_lines(&edited).as_bytes());
    let out: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let (again, err) = decode(&[], &out);
    assert_eq!(err, "", "the rewritten step reads whole");
    let reply: serde_json::Value = serde_json::from_str(&again[1]).unwrap();
    assert_eq!(reply["idx"], 7);
    assert_eq!(reply.get("damaged"), None);
    assert_eq!(reply["content"][0]["text"], format!("Edited. {readable}"));

    // Without --onto: the readable part, unmarked.
    let out = support::run_ok("agy-encode", &[], to_lines(&messages).as_bytes());
    let out: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let (again, err) = decode(&[], &out);
    assert_eq!(err, "");
    let reply: serde_json::Value = serde_json::from_str(&again[1]).unwrap();
    assert_eq!(reply.get("damaged"), None);
    assert_eq!(reply["content"][0]["text"], readable.as_str());
}
