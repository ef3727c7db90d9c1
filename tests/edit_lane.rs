//! `agy-edit lane cli|desktop`: a conversation made one of the CLI's or of
//! the desktop app's, by the few places that say which lane wrote it
//! (FORMAT.md 15 row 9), every other byte as it was; the store it came
//! from never written; cli -> desktop -> cli gives back every byte.

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use agy_tools::agy::wire::{self, Message};
use rusqlite::types::Value;
use serde_json::Value as Json;
use support::index::{self as idx, real_conversation, Shape};
use support::pb::Msg;
use support::shapes::{
    acp_conversation, subagent_child, ACP_ID as ACP, CHILD_ID as CHILD, REAL_ID,
};
use support::store::{files_under, json_lines};
use support::{run, run_env, run_ok, stderr, AgyDb, Scratch};

const TURNS: &str = "0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b";
const DESK: &str = "8a2d7b6f-4e5c-4d9b-f1a0-6c7d8e9fa0b1";
const PROJECT: &str = "2f6e9d1c-8b7a-4c3d-9e0f-1a2b3c4d5e6f";

/// A CLI store: a conversation as agy >= 1.0.10 writes one, a subagent
/// child with its WAL, an ACP conversation; agy's index lists them.
fn cli_store(root: &Path) {
    real_conversation(root, TURNS, &["Fix the flaky login test", "Now run it"]).close();
    subagent_child(root, CHILD, REAL_ID, "/work/app");
    acp_conversation(root, ACP, "/work/app");
    idx::create(root, Shape::V3);
    run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
}

/// A desktop store (`~/.gemini/antigravity`): one conversation in a
/// project of the desktop app, at rest, listed as the app lists it.
fn desktop_store(root: &Path) {
    let db = AgyDb::create(root, DESK);
    db.conn
        .execute("UPDATE trajectory_meta SET source = 1", [])
        .unwrap();
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, "file:///Users/me/site"))
            .ts(2, 1_796_000_000, 0)
            .str(6, DESK)
            .str(7, "file:///Users/me/site")
            .str(18, PROJECT)
            .build(),
    );
    db.user_step(0, "Make the header sticky");
    db.close();
    idx::create(root, Shape::V3);
    run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    let conn = rusqlite::Connection::open(idx::path(root)).unwrap();
    conn.execute(
        "UPDATE conversation_summaries SET source = '', app_data_dir = 'antigravity', \
         status = 'CASCADE_RUN_STATUS_IDLE', project_id = ?1",
        [PROJECT],
    )
    .unwrap();
}

fn by_conversation(stream: &[u8]) -> BTreeMap<String, Vec<Json>> {
    let mut out: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    for record in json_lines(stream) {
        let id = record["conversation"].as_str().unwrap().to_string();
        out.entry(id).or_default().push(record);
    }
    out
}

fn what(record: &Json) -> String {
    match record["kind"].as_str().unwrap() {
        "row" => format!("row {}", record["table"].as_str().unwrap()),
        kind => kind.to_string(),
    }
}

fn hex_cell(record: &Json, column: &str) -> Vec<u8> {
    hex::decode(record["row"][column].as_str().unwrap()).unwrap()
}

fn fields_but(message: &[u8], number: u32) -> Vec<(u32, Vec<u8>)> {
    wire::field_spans(message)
        .0
        .into_iter()
        .filter(|(f, _)| f.number != number)
        .map(|(f, raw)| (f.number, raw.to_vec()))
        .collect()
}

#[test]
fn cli_to_desktop_rewrites_the_marks_of_the_lane_only() {
    let s = Scratch::new("lane");
    let root = s.join("cli");
    cli_store(&root);
    let original = run_ok("agy-dump", &[root.to_str().unwrap()], b"");
    let out = run("agy-edit", &["lane", "desktop"], &original);
    // The ACP conversation is refused, by name; the others are made.
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "conversation {ACP} not edited: lane: it is a conversation of the ACP lane"
        )),
        "{said}"
    );
    assert!(said.contains("1 of 3 conversations not edited"), "{said}");
    // The 1.0.10-shaped conversation's metadata names no project, and
    // keeps naming none.
    for (id, project) in [
        (TURNS, ""),
        (CHILD, " project default-cli-project -> outside-of-project,"),
    ] {
        assert!(
            said.contains(&format!("{id}: made a conversation of the desktop lane: trajectory source 17 -> 1,{project} index row source, app_data_dir, status, project_id")),
            "{said}"
        );
    }
    let before = by_conversation(&original);
    let after = by_conversation(&out.stdout);
    assert!(!after.contains_key(ACP));
    for (id, metadata) in [(TURNS, false), (CHILD, true)] {
        let (b, a) = (&before[id], &after[id]);
        assert_eq!(b.len(), a.len());
        let changed: Vec<String> = b
            .iter()
            .zip(a)
            .filter(|(b, a)| b != a)
            .map(|(b, _)| what(b))
            .collect();
        let mut expected = vec![
            "row trajectory_meta",
            "row trajectory_metadata_blob",
            "index",
        ];
        if !metadata {
            expected.remove(1);
        }
        assert_eq!(changed, expected, "{id}");
        for (b, a) in b.iter().zip(a).filter(|(b, a)| b != a) {
            match what(b).as_str() {
                "row trajectory_meta" => {
                    let mut expected = b.clone();
                    expected["row"]["source"] = 1.into();
                    assert_eq!(*a, expected);
                }
                "row trajectory_metadata_blob" => {
                    let (old, new) = (hex_cell(b, "data"), hex_cell(a, "data"));
                    assert_eq!(
                        Message::new(&new).get_str(18).unwrap(),
                        "outside-of-project"
                    );
                    assert_eq!(fields_but(&new, 18), fields_but(&old, 18));
                }
                "index" => {
                    let mut expected = b.clone();
                    let row = &mut expected["row"];
                    row["source"] = "".into();
                    row["app_data_dir"] = "antigravity".into();
                    row["status"] = "CASCADE_RUN_STATUS_IDLE".into();
                    row["project_id"] = "outside-of-project".into();
                    // Its summary's copy of the metadata (17) names the
                    // project as the metadata now does.
                    let raw_changed = b["row"]["raw_summary"] != a["row"]["raw_summary"];
                    if let Some(old) = b["row"]["raw_summary"].as_str().filter(|_| raw_changed) {
                        let (old, new) = (hex::decode(old).unwrap(), hex_cell(a, "raw_summary"));
                        let metadata =
                            |raw: &[u8]| Message::new(raw).get_bytes(17).unwrap().to_vec();
                        assert_eq!(
                            Message::new(&metadata(&new)).get_str(18).unwrap(),
                            "outside-of-project"
                        );
                        assert_eq!(
                            fields_but(&metadata(&new), 18),
                            fields_but(&metadata(&old), 18)
                        );
                        assert_eq!(fields_but(&new, 17), fields_but(&old, 17));
                        row["raw_summary"] = a["row"]["raw_summary"].clone();
                    }
                    assert_eq!(*a, expected);
                }
                other => panic!("{other} changed"),
            }
        }
    }
    // The messages are the same.
    let decoded = |stream: &[u8]| run_ok("agy-decode", &["--all"], stream);
    let without_acp: Vec<u8> = original
        .split_inclusive(|&b| b == b'\n')
        .filter(|l| !String::from_utf8_lossy(l).contains(ACP))
        .flatten()
        .copied()
        .collect();
    assert!(decoded(&out.stdout) == decoded(&without_acp));
}

#[test]
fn a_round_trip_through_the_desktop_lane_gives_back_every_byte() {
    let s = Scratch::new("lane-round-trip");
    let root = s.join("cli");
    cli_store(&root);
    std::fs::remove_file(root.join(format!("conversations/{ACP}.db"))).unwrap();
    std::fs::remove_file(root.join(format!("conversations/{ACP}.meta"))).unwrap();
    let original = run_ok("agy-dump", &[root.to_str().unwrap()], b"");
    let desktop = run_ok("agy-edit", &["lane", "desktop"], &original);
    assert!(desktop != original);
    // Through the desktop app's store and back.
    let home = s.join("gemini");
    let env = [("GEMINI_HOME", home.to_str().unwrap())];
    let packed = run_env("agy-pack", &["--lane", "desktop"], &desktop, &env);
    assert!(packed.status.success(), "{}", stderr(&packed));
    assert!(home
        .join(format!("antigravity/conversations/{CHILD}.db"))
        .exists());
    let listed = run_env("agy-ls", &["--lane", "desktop"], b"", &env);
    for entry in json_lines(&listed.stdout) {
        assert_eq!(entry["lane"], "desktop");
        assert_eq!(entry["index"], "agrees");
    }
    let dumped = run_env("agy-dump", &["--lane", "desktop"], b"", &env);
    assert!(dumped.stdout == desktop, "dump of the desktop store");
    let back = run_ok("agy-edit", &["lane", "cli"], &dumped.stdout);
    assert!(back == original, "cli -> desktop -> cli");
    // Of the target lane already: byte for byte.
    let out = run("agy-edit", &["lane", "cli"], &original);
    assert!(out.status.success());
    assert!(out.stdout == original);
    assert!(stderr(&out).contains("nothing to change in 2 conversations"));
}

#[test]
fn a_desktop_conversation_copied_into_the_cli_leaves_the_desktop_store_alone() {
    let s = Scratch::new("lane-copy");
    let home = s.join("gemini");
    desktop_store(&home.join("antigravity"));
    let env = [("GEMINI_HOME", home.to_str().unwrap())];
    let desktop_before = files_under(&home.join("antigravity"));
    // The recipe of the man page.
    let dumped = run_env("agy-dump", &["--lane", "desktop", "--id", DESK], b"", &env);
    assert!(dumped.status.success(), "{}", stderr(&dumped));
    let edited = run("agy-edit", &["lane", "cli"], &dumped.stdout);
    assert!(edited.status.success(), "{}", stderr(&edited));
    // The desktop project's UUID is kept: a real CLI conversation names
    // one too (FORMAT.md 16 row 11).
    assert!(
        stderr(&edited)
            .contains("trajectory source 1 -> 17, index row source, app_data_dir, status"),
        "{}",
        stderr(&edited)
    );
    let packed = run_env("agy-pack", &[], &edited.stdout, &env);
    assert!(packed.status.success(), "{}", stderr(&packed));
    assert_eq!(files_under(&home.join("antigravity")), desktop_before);
    // In the CLI's store, listed as the CLI lists it.
    let cli = home.join("antigravity-cli");
    let listed = json_lines(&run_env("agy-ls", &[], b"", &env).stdout);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], DESK);
    assert_eq!(listed[0]["lane"], "cli");
    assert_eq!(listed[0]["index"], "agrees");
    let row = idx::row(&cli, DESK).unwrap();
    for (column, value) in [
        ("source", "antigravity-cli"),
        ("app_data_dir", "antigravity-cli"),
        ("status", ""),
        ("project_id", PROJECT),
    ] {
        assert_eq!(
            idx::cell(&row, column),
            Value::Text(value.into()),
            "{column}"
        );
    }
    let listed = json_lines(&run_env("agy-ls", &["--lane", "desktop"], b"", &env).stdout);
    assert_eq!(listed[0]["lane"], "desktop");
    // The desktop conversation made a desktop one: as it came.
    let out = run("agy-edit", &["lane", "desktop"], &dumped.stdout);
    assert!(out.stdout == dumped.stdout);

    for (args, words) in [
        (&["lane"][..], "lane needs the lane to make"),
        (
            &["lane", "acp"][..],
            "no fact says what makes one of the ACP lane",
        ),
        (&["lane", "ide"][..], "unknown lane"),
        (
            &["lane", "cli", "--everywhere"][..],
            "--everywhere is for move",
        ),
    ] {
        let out = run("agy-edit", args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(words), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_cli_conversation_in_a_project_keeps_it_both_ways() {
    // The shape of a real CLI conversation (trajectory source 17) whose
    // metadata names a project's UUID (FORMAT.md 16 row 11): `lane cli`
    // leaves it as it is, `lane desktop` then `lane cli` gives back every
    // byte, and the index row a reindex derives names the same project as
    // the metadata, in both lanes.
    let s = Scratch::new("lane-project");
    let root = s.join("cli");
    let db = AgyDb::create(&root, DESK);
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, "file:///home/me/site"))
            .ts(2, 1_796_000_000, 0)
            .str(6, DESK)
            .str(7, "file:///home/me/site")
            .str(18, PROJECT)
            .build(),
    );
    db.user_step(0, "Make the header sticky");
    db.close();
    idx::create(&root, Shape::V3);
    run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    let row = idx::row(&root, DESK).unwrap();
    assert_eq!(idx::cell(&row, "project_id"), Value::Text(PROJECT.into()));
    let original = run_ok("agy-dump", &[root.to_str().unwrap()], b"");

    let same = run("agy-edit", &["lane", "cli"], &original);
    assert!(same.status.success(), "{}", stderr(&same));
    assert!(
        same.stdout == original,
        "lane cli changed a CLI conversation"
    );

    let desktop = run_ok("agy-edit", &["lane", "desktop"], &original);
    let records = json_lines(&desktop);
    let index = records.iter().find(|r| r["kind"] == "index").unwrap();
    assert_eq!(index["row"]["project_id"], PROJECT);
    let blob = records
        .iter()
        .find(|r| r["table"] == "trajectory_metadata_blob")
        .unwrap();
    let metadata = hex_cell(blob, "data");
    assert_eq!(
        Message::new(&metadata).get_str(18).as_deref(),
        Some(PROJECT),
        "the metadata keeps its project"
    );
    let back = run_ok("agy-edit", &["lane", "cli"], &desktop);
    assert!(back == original, "cli -> desktop -> cli");
}
