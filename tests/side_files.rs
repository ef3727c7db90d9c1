//! The side files agy and its desktop app find conversations through
//! (agy-store(5), SIDE FILES): carried by agy-dump, put back by agy-pack
//! with every other byte kept, kept true by agy-edit, and never written
//! while agy holds the root.

mod support;

use std::path::Path;

use agy_tools::agy::wire::{Message, Value};
use support::index::{self as idx, real_conversation, Shape};
use support::pb::Msg;
use support::store::files_under;
use support::{run, run_ok, stderr, AgyDb, Scratch};

const A: &str = "0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b";
const B: &str = "4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
const FORK: &str = "9e8d7c6b-5a49-4837-a261-5f4e3d2c1b0a";
const APP: &str = "/Users/me/src/app";
const OTHER: &str = "/Users/me/src/other";
const MOVED: &str = "/Users/me/work/app2";

/// The summaries-file entry of a conversation, as real desktop entries
/// are laid out (agy-store(5)).
fn entry(id: &str, title: &str, steps: u64, workspace: &str) -> Vec<u8> {
    let ws = Msg::new()
        .str(1, &format!("file://{workspace}"))
        .str(4, "main");
    let metadata = Msg::new().msg(1, ws.clone()).ts(2, 1_782_639_990, 0);
    Msg::new()
        .str(1, id)
        .msg(
            2,
            Msg::new()
                .str(1, title)
                .varint(2, steps)
                .ts(3, 1_782_640_100, 0)
                .str(4, "t-real")
                .varint(5, 1)
                .ts(7, 1_782_639_990, 0)
                .msg(9, ws)
                .msg(17, metadata)
                .varint(22, 4)
                .varint(23, 0),
        )
        .build()
}

/// A CLI root as agy 1.2.12+ leaves one: two conversations in two
/// projects, the index, and every side file, in agy's own layout (Go's
/// indented JSON without a final newline, history lines compact).
fn cli_root(root: &Path) {
    real_conversation(root, A, &["Fix the flaky login test", "Now run it"]).close();
    let b = AgyDb::create(root, B);
    b.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, &format!("file://{OTHER}")))
            .ts(2, 1_782_000_000, 0)
            .build(),
    );
    b.user_step(0, "Tidy the README");
    b.close();
    idx::create(root, Shape::V3);
    run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    let write = |rel: &str, bytes: &[u8]| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    write(
        "cache/last_conversations.json",
        format!("{{\n  \"{APP}\": \"{A}\",\n  \"{OTHER}\": \"{B}\"\n}}").as_bytes(),
    );
    write(
        "cache/conversation_metadata.json",
        format!(
            "{{\n  \"conversations\": {{\n    \"{A}\": {{\n      \"is_internal\": false\n    }},\n    \"{B}\": {{\n      \"is_internal\": false\n    }}\n  }}\n}}"
        )
        .as_bytes(),
    );
    let mut jetbox = Msg::new();
    jetbox = jetbox.bytes(1, &entry(A, "Fixing the flaky login test", 10, APP));
    jetbox = jetbox.bytes(1, &entry(B, "Tidy the README", 1, OTHER));
    write("jetbox_summaries_proto.pb", &jetbox.build());
    write(&format!("annotations/{A}.pbtxt"), b"title: \"Login fix\"\n");
    write(
        "history.jsonl",
        format!(
            "{{\"display\":\"fix it \\u003e now\",\"timestamp\":1782640000000,\"workspace\":\"{APP}\"}}\n\
             {{\"display\":\"/resume\",\"timestamp\":1782640001000,\"workspace\":\"{APP}/sub\",\"type\":\"slash_command\"}}\n\
             {{\"display\":\"tidy\",\"timestamp\":1782000000000,\"workspace\":\"{OTHER}\"}}\n"
        )
        .as_bytes(),
    );
    write(
        "settings.json",
        format!("{{\n  \"trustedWorkspaces\": [\n    \"{APP}\",\n    \"{OTHER}\"\n  ]\n}}\n")
            .as_bytes(),
    );
}

/// A desktop root (`~/.gemini/antigravity`) as the app leaves one: two
/// conversations of the app's (trajectory source 1), the app's list naming
/// both, a title in `annotations/`, the metadata file, the index.
fn desktop_root(root: &Path) {
    for (id, title, folder) in [
        (A, "Make the header sticky", "/Users/me/site"),
        (B, "Fix the footer", "/Users/me/blog"),
    ] {
        let db = AgyDb::create(root, id);
        db.conn
            .execute("UPDATE trajectory_meta SET source = 1", [])
            .unwrap();
        db.trajectory_metadata(
            &Msg::new()
                .msg(1, Msg::new().str(1, &format!("file://{folder}")))
                .ts(2, 1_796_000_000, 0)
                .str(18, "outside-of-project")
                .build(),
        );
        db.user_step(0, title);
        db.close();
    }
    idx::create(root, Shape::V3);
    run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    let list = Msg::new()
        .bytes(1, &entry(A, "Make the header sticky", 1, "/Users/me/site"))
        .bytes(1, &entry(B, "Fix the footer", 1, "/Users/me/blog"))
        .build();
    std::fs::write(root.join("agyhub_summaries_proto.pb"), list).unwrap();
    std::fs::create_dir_all(root.join("annotations")).unwrap();
    std::fs::write(
        root.join(format!("annotations/{B}.pbtxt")),
        "title: \"Footer \\\"fix\\\"\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("cache")).unwrap();
    std::fs::write(
        root.join("cache/conversation_metadata.json"),
        format!("{{\n  \"conversations\": {{\n    \"{A}\": {{\n      \"is_internal\": false\n    }},\n    \"{B}\": {{\n      \"is_internal\": false\n    }}\n  }}\n}}"),
    )
    .unwrap();
}

fn root_arg(root: &Path) -> &str {
    root.to_str().unwrap()
}

fn read(root: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn text(root: &Path, rel: &str) -> String {
    String::from_utf8(read(root, rel)).unwrap()
}

/// The entries of a summaries file, by conversation.
fn summaries(root: &Path, file: &str) -> Vec<(String, Vec<u8>)> {
    let bytes = read(root, file);
    Message::new(&bytes)
        .repeated_bytes(1)
        .map(|e| {
            let m = Message::new(e);
            (
                m.get_str(1).unwrap().into_owned(),
                m.get_bytes(2).unwrap().to_vec(),
            )
        })
        .collect()
}

fn step_count(root: &Path, id: &str) -> u64 {
    let conn = rusqlite::Connection::open(root.join(format!("conversations/{id}.db"))).unwrap();
    conn.query_row("SELECT count(*) FROM steps", [], |r| r.get::<_, i64>(0))
        .unwrap() as u64
}

/// The paths whose contents differ between two snapshots of a tree (or
/// that one of them lacks): what an assertion names, not the bytes.
fn differing(
    before: &[(std::path::PathBuf, Vec<u8>)],
    after: &[(std::path::PathBuf, Vec<u8>)],
) -> Vec<String> {
    let mut paths: Vec<String> = before
        .iter()
        .filter(|entry| !after.contains(entry))
        .chain(after.iter().filter(|entry| !before.contains(entry)))
        .map(|(path, _)| path.display().to_string())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn varint(summary: &[u8], field: u32) -> Option<u64> {
    match Message::new(summary).last(field) {
        Some(Value::Varint(v)) => Some(v),
        _ => None,
    }
}

#[test]
fn a_dump_carries_every_entry_and_a_pack_puts_each_back() {
    let s = Scratch::new("side-carry");
    let root = s.join("cli");
    cli_root(&root);
    let rows = run_ok("agy-dump", &[root_arg(&root)], b"");
    let sides: Vec<serde_json::Value> = support::store::json_lines(&rows)
        .into_iter()
        .filter(|r| r["kind"] == "side")
        .collect();
    let files: Vec<(&str, &str)> = sides
        .iter()
        .map(|r| {
            (
                r["conversation"].as_str().unwrap(),
                r["file"].as_str().unwrap(),
            )
        })
        .collect();
    let annotation = format!("annotations/{A}.pbtxt");
    assert_eq!(
        files,
        [
            (A, "cache/last_conversations.json"),
            (A, "cache/conversation_metadata.json"),
            (A, "jetbox_summaries_proto.pb"),
            (A, annotation.as_str()),
            (B, "cache/last_conversations.json"),
            (B, "cache/conversation_metadata.json"),
            (B, "jetbox_summaries_proto.pb"),
        ]
    );
    // Into an empty root: every conversation's entries, in agy's layout,
    // and no file that names directories rather than conversations.
    let empty = s.join("empty");
    run_ok("agy-pack", &["--root", root_arg(&empty)], &rows);
    for rel in [
        "cache/last_conversations.json",
        "cache/conversation_metadata.json",
        "jetbox_summaries_proto.pb",
        annotation.as_str(),
    ] {
        assert_eq!(read(&empty, rel), read(&root, rel), "{rel}");
    }
    assert!(!empty.join("history.jsonl").exists());
    assert!(!empty.join("settings.json").exists());
    // And back in place: nothing to write, not a byte or inode changed.
    let before = files_under(&root);
    let out = run("agy-pack", &["--force", "--root", root_arg(&root)], &rows);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("0 written, 2 unchanged"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        differing(&before, &files_under(&root)),
        Vec::<String>::new()
    );
}

#[test]
fn a_desktop_root_is_carried_whole_and_its_list_kept_true() {
    let s = Scratch::new("side-desktop");
    let root = s.join("antigravity");
    desktop_root(&root);
    let rows = run_ok("agy-dump", &[root_arg(&root)], b"");
    // Into an empty root: the app's list, titles and metadata, byte for
    // byte, and nothing of the CLI's.
    let empty = s.join("empty");
    run_ok("agy-pack", &["--root", root_arg(&empty)], &rows);
    for rel in [
        "agyhub_summaries_proto.pb",
        "cache/conversation_metadata.json",
        &format!("annotations/{B}.pbtxt"),
    ] {
        assert_eq!(read(&empty, rel), read(&root, rel), "{rel}");
    }
    assert!(!empty.join("cache/last_conversations.json").exists());
    assert!(!empty.join("jetbox_summaries_proto.pb").exists());
    // A fork: the app lists it, its entry counting its own steps; the
    // other entries, and every other byte of the list, as they were.
    let b_rows = run_ok("agy-dump", &["--id", B, root_arg(&root)], b"");
    let forked = run_ok("agy-edit", &["fork", "--at", "0", "--id", FORK], &b_rows);
    run_ok("agy-pack", &["--root", root_arg(&root)], &forked);
    let list = summaries(&root, "agyhub_summaries_proto.pb");
    let ids: Vec<&str> = list.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, [A, B, FORK], "the app lists the fork");
    assert_eq!(varint(&list[2].1, 2), Some(step_count(&root, FORK)));
    let before = Msg::new()
        .bytes(1, &entry(A, "Make the header sticky", 1, "/Users/me/site"))
        .bytes(1, &entry(B, "Fix the footer", 1, "/Users/me/blog"))
        .build();
    let now = read(&root, "agyhub_summaries_proto.pb");
    assert_eq!(
        &now[..before.len()],
        &before[..],
        "the other entries' bytes"
    );
    assert_eq!(
        read(&root, &format!("annotations/{FORK}.pbtxt")),
        read(&root, &format!("annotations/{B}.pbtxt"))
    );
}

#[test]
fn a_move_follows_into_every_side_file_and_its_reverse_gives_back_every_byte() {
    let s = Scratch::new("side-move");
    let root = s.join("cli");
    cli_root(&root);
    let before = files_under(&root);
    let rows_before = run_ok("agy-dump", &[root_arg(&root)], b"");
    let mv = |from: &str, to: &str| {
        let rows = run_ok("agy-dump", &[root_arg(&root)], b"");
        let moved = run_ok("agy-edit", &["move", from, to], &rows);
        let out = run("agy-pack", &["--force", "--root", root_arg(&root)], &moved);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    mv(APP, MOVED);
    let last = text(&root, "cache/last_conversations.json");
    assert!(!last.contains(APP), "{last}");
    assert_eq!(
        last,
        format!("{{\n  \"{MOVED}\": \"{A}\",\n  \"{OTHER}\": \"{B}\"\n}}")
    );
    let history = text(&root, "history.jsonl");
    for line in history.lines() {
        let line: serde_json::Value = serde_json::from_str(line).unwrap();
        let ws = line["workspace"].as_str().unwrap();
        assert!(!ws.starts_with(APP), "{ws}");
    }
    assert!(history.contains(&format!("\"workspace\":\"{MOVED}/sub\"")));
    assert!(
        history.contains("fix it \\u003e now"),
        "other bytes kept: {history}"
    );
    let settings = text(&root, "settings.json");
    assert!(
        !settings.contains(APP) && settings.contains(MOVED),
        "{settings}"
    );
    // The CLI's list names the new directory too.
    let (_, summary) = summaries(&root, "jetbox_summaries_proto.pb")
        .into_iter()
        .find(|(id, _)| id == A)
        .unwrap();
    let workspace = Message::new(&summary).get_message(9).unwrap();
    assert_eq!(workspace.get_str(1).unwrap(), format!("file://{MOVED}"));
    mv(MOVED, APP);
    // The databases are written anew (the same rows, SQLite's pages laid
    // out by another writer): what they hold is compared, every other file
    // to the byte.
    assert!(run_ok("agy-dump", &[root_arg(&root)], b"") == rows_before);
    let without_databases = |tree: Vec<(std::path::PathBuf, Vec<u8>)>| {
        tree.into_iter()
            .filter(|(path, _)| path.extension().is_none_or(|e| e != "db"))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        differing(
            &without_databases(before),
            &without_databases(files_under(&root))
        ),
        Vec::<String>::new()
    );
}

#[test]
fn a_fork_gets_entries_of_its_own_and_a_rewind_keeps_the_count_true() {
    let s = Scratch::new("side-fork");
    let root = s.join("cli");
    cli_root(&root);
    let rows = run_ok("agy-dump", &["--id", A, root_arg(&root)], b"");
    let fork = run_ok("agy-edit", &["fork", "--at", "4", "--id", FORK], &rows);
    run_ok("agy-pack", &["--root", root_arg(&root)], &fork);
    // agy continues the fork in its directory, as after agy's /fork.
    let last = text(&root, "cache/last_conversations.json");
    assert!(last.contains(&format!("\"{APP}\": \"{FORK}\"")), "{last}");
    let metadata = text(&root, "cache/conversation_metadata.json");
    assert!(metadata.contains(&format!("\"{FORK}\": {{")), "{metadata}");
    assert_eq!(
        read(&root, &format!("annotations/{FORK}.pbtxt")),
        read(&root, &format!("annotations/{A}.pbtxt"))
    );
    let list = summaries(&root, "jetbox_summaries_proto.pb");
    let ids: Vec<&str> = list.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, [A, B, FORK]);
    let (_, summary) = &list[2];
    assert_eq!(varint(summary, 2), Some(step_count(&root, FORK)));
    assert_eq!(step_count(&root, FORK), 5);
    // A rewind: the entry in the list counts the steps that are left.
    let rows = run_ok("agy-dump", &["--id", A, root_arg(&root)], b"");
    let rewound = run_ok("agy-edit", &["rewind", "--to", "4"], &rows);
    run_ok(
        "agy-pack",
        &["--force", "--root", root_arg(&root)],
        &rewound,
    );
    let (_, summary) = summaries(&root, "jetbox_summaries_proto.pb")
        .into_iter()
        .find(|(id, _)| id == A)
        .unwrap();
    assert_eq!(varint(&summary, 2), Some(step_count(&root, A)));
    assert_eq!(step_count(&root, A), 4);
}

#[test]
fn a_lane_copy_is_listed_by_the_desktop_app() {
    let s = Scratch::new("side-lane");
    let root = s.join("cli");
    cli_root(&root);
    let desktop = s.join("antigravity");
    std::fs::create_dir_all(&desktop).unwrap();
    // The app's list, with an entry of its own that must stay as it is.
    let own = entry(FORK, "A desktop chat", 3, "/Users/me/site");
    std::fs::write(
        desktop.join("agyhub_summaries_proto.pb"),
        Msg::new().bytes(1, &own).build(),
    )
    .unwrap();
    let rows = run_ok("agy-dump", &["--id", A, root_arg(&root)], b"");
    let copy = run_ok("agy-edit", &["lane", "desktop"], &rows);
    run_ok("agy-pack", &["--root", root_arg(&desktop)], &copy);
    let list = summaries(&desktop, "agyhub_summaries_proto.pb");
    assert_eq!(list.len(), 2);
    assert_eq!(
        Msg::new().str(1, &list[0].0).bytes(2, &list[0].1).build(),
        own
    );
    let (id, summary) = &list[1];
    assert_eq!(id, A);
    let message = Message::new(summary);
    let numbers: Vec<u32> = message.fields().map(|f| f.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 7, 9, 10, 15, 16, 17, 22]);
    assert_eq!(message.get_str(1).unwrap(), "Fixing the flaky login test");
    assert_eq!(varint(summary, 2), Some(step_count(&desktop, A)));
    assert_eq!(varint(summary, 5), Some(1));
    assert_eq!(varint(summary, 22), Some(4));
    let conn = rusqlite::Connection::open(desktop.join(format!("conversations/{A}.db"))).unwrap();
    let metadata: Vec<u8> = conn
        .query_row(
            "SELECT data FROM trajectory_metadata_blob WHERE id = 'main'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(message.get_bytes(17).unwrap(), &metadata[..]);
    assert_eq!(
        message.get_bytes(9).unwrap(),
        Message::new(&metadata).get_bytes(1).unwrap()
    );
    // The CLI's own map and list are not the desktop app's.
    assert!(!desktop.join("cache/last_conversations.json").exists());
    assert!(!desktop.join("jetbox_summaries_proto.pb").exists());
}

#[test]
fn nothing_is_written_while_agy_holds_the_root() {
    let s = Scratch::new("side-held");
    let root = s.join("cli");
    cli_root(&root);
    let rows = run_ok("agy-dump", &[root_arg(&root)], b"");
    let moved = run_ok("agy-edit", &["move", APP, MOVED], &rows);
    let before = files_under(&root);
    // A session of A holds its presence lock.
    let lock_path = root.join(format!("presence/{A}.lock"));
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    std::fs::write(&lock_path, b"").unwrap();
    let before_locked = files_under(&root);
    let lock = std::fs::File::open(&lock_path).unwrap();
    assert!(agy_tools::store::lock::try_flock(&lock).unwrap());
    let out = run("agy-pack", &["--force", "--root", root_arg(&root)], &moved);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("is open in agy"), "{}", stderr(&out));
    assert!(
        !text(&root, "cache/last_conversations.json").contains(MOVED),
        "the side files wait for the conversation"
    );
    drop(lock);
    assert_eq!(
        differing(&before_locked, &files_under(&root)),
        Vec::<String>::new()
    );
    std::fs::remove_dir_all(root.join("presence")).unwrap();
    assert_eq!(
        differing(&before, &files_under(&root)),
        Vec::<String>::new()
    );
    // A running agy with a file of the root open: its own name, as the
    // process list shows it.
    let agy = s.join("bin/agy");
    std::fs::create_dir_all(agy.parent().unwrap()).unwrap();
    std::fs::copy("/bin/sleep", &agy).unwrap();
    let index = root.join("conversation_summaries.db");
    let mut held = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg("exec 3<\"$1\"; exec \"$2\" 60")
        .arg("sh")
        .arg(&index)
        .arg(&agy)
        .spawn()
        .unwrap();
    // Until the process is agy with the index open.
    let pid = held.id();
    for _ in 0..200 {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        if exe.as_deref() == Some(agy.as_path()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = run("agy-pack", &["--force", "--root", root_arg(&root)], &moved);
    held.kill().unwrap();
    held.wait().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("agy is running on this root"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        differing(&before, &files_under(&root)),
        Vec::<String>::new()
    );
}

/// The in-place recipe cut short at every line of a stream that carries
/// side records: no conversation and no side file changes (the end record
/// counts the side records, so a cut between them is a cut too).
#[test]
fn a_stream_cut_at_any_line_changes_no_side_file() {
    let s = Scratch::new("side-cut");
    let root = s.join("cli");
    cli_root(&root);
    let rows = run_ok("agy-dump", &["--id", A, root_arg(&root)], b"");
    let moved = run_ok("agy-edit", &["move", APP, MOVED], &rows);
    let before = files_under(&root);
    let lines: Vec<&[u8]> = moved.split_inclusive(|b| *b == b'\n').collect();
    let sides = lines
        .iter()
        .filter(|l| l.windows(13).any(|w| w == b"\"kind\":\"side\""))
        .count();
    assert!(sides >= 6, "its entries and the move's two requests");
    for cut in 0..lines.len() {
        let part: Vec<u8> = lines[..cut].concat();
        let out = run("agy-pack", &["--force", "--root", root_arg(&root)], &part);
        assert_eq!(
            differing(&before, &files_under(&root)),
            Vec::<String>::new(),
            "cut after {cut} of {} lines: {}",
            lines.len(),
            stderr(&out)
        );
    }
    // And whole, it moves.
    run_ok("agy-pack", &["--force", "--root", root_arg(&root)], &moved);
    assert!(text(&root, "cache/last_conversations.json").contains(MOVED));
}
