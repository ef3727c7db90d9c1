//! `agy-edit move OLD NEW`: conversations whose project is at or under OLD
//! re-bound to NEW where they name their project (FORMAT.md 15 row 7),
//! and with `--everywhere` every path under OLD inside them; every other
//! byte, and every conversation elsewhere, as it was; a move and its
//! reverse give back the bytes they started from.
//!
//! The store is built in the shapes of real agy bytes: a 1.1.23-shaped
//! conversation with GENERIC calls, a fork reference and the ACP sidecar,
//! a subagent child left with its WAL beside it, a conversation of the ACP
//! lane, one started on Windows, one in a directory whose name starts
//! with OLD's, and agy's index of them (the 21-column form).

mod support;

use std::collections::BTreeMap;
use std::path::Path;

use agy_tools::agy::wire::{self, Message};
use rusqlite::types::Value;
use serde_json::Value as Json;
use support::index::{self as idx, Shape};
use support::pb::Msg;
use support::shapes::{
    acp_conversation, leave_wal, real_shaped, subagent_child, windows_conversation, ACP_ID as ACP,
    CHILD_ID as CHILD, REAL_ID as REAL,
};
use support::store::files_under;
use support::{brain_file, run, run_ok, stderr, AgyDb, Scratch};

const WIN: &str = "6e0b5f4d-2c3a-4b7f-d9e8-4a5b6c7d8e9f";
const ELSEWHERE: &str = "7f1c6a5e-3d4b-4c8a-e0f9-5b6c7d8e9fa0";

const NOTES: &str = "/work/apps is another project; /work/app/x.md is ours.\n";

const OLD: &str = "/work/app";
const NEW: &str = "/srv/app";

/// The store: every shape, and agy's index listing each conversation.
fn build(root: &Path) {
    real_shaped(root);
    subagent_child(root, CHILD, REAL, "/work/app/crates/core");
    acp_conversation(root, ACP, "/work/app/sub");
    windows_conversation(root, WIN);
    // Its directory's name starts with OLD's; its text names OLD.
    let db = AgyDb::create(root, ELSEWHERE);
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, "file:///work/application"))
            .str(7, "file:///work/application")
            .build(),
    );
    db.user_step(0, "Compare with /work/app/README.md");
    leave_wal(db);
    brain_file(
        root,
        ELSEWHERE,
        "task.md",
        b"- [ ] read /work/app/README.md\n",
    );
    // A name OLD's is the start of, beside a path under OLD.
    brain_file(root, CHILD, "notes.md", NOTES.as_bytes());
    // agy's index, rows derived from each conversation, then a summary
    // blob as a later agy writes one.
    idx::create(root, Shape::V3);
    run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    let conn = rusqlite::Connection::open(idx::path(root)).unwrap();
    conn.execute(
        "UPDATE conversation_summaries SET raw_summary = ?1 WHERE conversation_id = ?2",
        rusqlite::params![
            Msg::new()
                .str(1, "file:///work/app")
                .msg(2, Msg::new().str(1, "/work/app/src"))
                .build(),
            REAL
        ],
    )
    .unwrap();
}

fn dump(root: &Path) -> Vec<u8> {
    run_ok("agy-dump", &[root.to_str().unwrap()], b"")
}

/// agy-edit's output and stderr, for a run that must succeed.
fn edit(args: &[&str], input: &[u8]) -> (Vec<u8>, String) {
    let out = run("agy-edit", args, input);
    assert!(out.status.success(), "agy-edit {args:?}: {}", stderr(&out));
    let said = stderr(&out);
    (out.stdout, said)
}

/// A stream's lines, by conversation.
fn by_conversation(stream: &[u8]) -> BTreeMap<String, Vec<Vec<u8>>> {
    let mut out: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    for line in stream.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let record: Json = serde_json::from_slice(line).unwrap();
        let id = record["conversation"].as_str().unwrap().to_string();
        out.entry(id).or_default().push(line.to_vec());
    }
    out
}

/// A moved conversation's records without the two a move adds, asking
/// agy-pack to move `history.jsonl`'s and `settings.json`'s paths too (a
/// conversation with no side entries has no other `side` record); each
/// moved conversation has both.
fn without_requests(lines: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let (requests, rest): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
        lines.iter().cloned().partition(|l| is_request(l));
    if !requests.is_empty() {
        let files: Vec<Json> = requests
            .iter()
            .map(|l| serde_json::from_slice::<Json>(l).unwrap()["file"].clone())
            .collect();
        assert_eq!(files, ["history.jsonl", "settings.json"]);
    }
    // The end record counts them.
    let mut stream = Vec::new();
    for line in rest {
        stream.extend_from_slice(&line);
        stream.push(b'\n');
    }
    support::recount(&stream)
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// A move's request to agy-pack (see [`without_requests`]).
fn is_request(line: &[u8]) -> bool {
    let record: Json = serde_json::from_slice(line).unwrap();
    record["kind"] == "side" && record.get("from").is_some()
}

/// A stream without its moves' requests.
fn stream_without_requests(stream: &[u8]) -> Vec<u8> {
    let lines: Vec<Vec<u8>> = stream
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty() && !is_request(l))
        .map(<[u8]>::to_vec)
        .collect();
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
    support::recount(&out)
}

/// What a record is, for saying which ones changed.
fn what(line: &[u8]) -> String {
    let record: Json = serde_json::from_slice(line).unwrap();
    match record["kind"].as_str().unwrap() {
        "row" => format!(
            "row {} {}",
            record["table"].as_str().unwrap(),
            record["row"]
                .get("idx")
                .map_or(String::new(), |i| i.to_string())
        ),
        "file" => format!("file {}", record["path"].as_str().unwrap()),
        kind => kind.to_string(),
    }
}

/// The records of conversation `id` that differ between two streams of
/// it, which must have the same records in the same order.
fn changed(before: &[Vec<u8>], after: &[Vec<u8>]) -> Vec<String> {
    let after = &without_requests(after);
    assert_eq!(before.len(), after.len());
    before
        .iter()
        .zip(after)
        .filter(|(b, a)| b != a)
        .map(|(b, a)| {
            assert_eq!(what(b), what(a));
            what(b)
        })
        .collect()
}

fn record_of(lines: &[Vec<u8>], which: &str) -> Json {
    let line = lines.iter().find(|l| what(l) == which).unwrap();
    serde_json::from_slice(line).unwrap()
}

fn hex_cell(record: &Json, column: &str) -> Vec<u8> {
    hex::decode(record["row"][column].as_str().unwrap()).unwrap()
}

/// A message's top-level fields but `numbers`, as (number, raw bytes).
fn fields_but(message: &[u8], numbers: &[u32]) -> Vec<(u32, Vec<u8>)> {
    wire::field_spans(message)
        .0
        .into_iter()
        .filter(|(f, _)| !numbers.contains(&f.number))
        .map(|(f, raw)| (f.number, raw.to_vec()))
        .collect()
}

fn strs(message: &[u8], number: u32) -> Vec<String> {
    Message::new(message)
        .repeated_bytes(number)
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
        .collect()
}

/// Compares two texts line by line, naming the first that differs
/// without printing megabytes.
fn assert_lines(actual: &str, expected: &str) {
    let (a, e): (Vec<&str>, Vec<&str>) = (actual.lines().collect(), expected.lines().collect());
    for (i, (a, e)) in a.iter().zip(&e).enumerate() {
        if a != e {
            let cut = |s: &str| s.chars().take(2000).collect::<String>();
            panic!("line {i} differs:\n{}\nexpected\n{}", cut(a), cut(e));
        }
    }
    assert_eq!(a.len(), e.len());
}

fn copy_dir(from: &Path, to: &Path) {
    for (path, bytes) in files_under(from) {
        let target = to.join(&path);
        if bytes == b"<dir>" {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(&target, bytes).unwrap();
        }
    }
}

#[test]
fn a_move_rewrites_where_each_conversation_names_its_project_and_nothing_else() {
    let s = Scratch::new("move");
    let root = s.join("store");
    build(&root);
    assert!(root.join(format!("conversations/{CHILD}.db-wal")).exists());
    let original = dump(&root);
    let (moved, said) = edit(&["move", OLD, NEW], &original);
    let before = by_conversation(&original);
    let after = by_conversation(&moved);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    // Elsewhere: byte for byte.
    for id in [WIN, ELSEWHERE] {
        assert!(before[id] == after[id], "{id} changed");
    }
    assert_eq!(
        changed(&before[REAL], &after[REAL]),
        [
            "row trajectory_metadata_blob ",
            "index",
            &format!("file {REAL}.meta")
        ]
    );
    assert_eq!(
        changed(&before[CHILD], &after[CHILD]),
        ["row trajectory_metadata_blob ", "index"]
    );
    assert_eq!(
        changed(&before[ACP], &after[ACP]),
        [format!("file {ACP}.meta")]
    );

    // The trajectory metadata: the workspace folder and workspace_uris
    // moved, the git root above OLD not, every other field byte for byte.
    for (id, folder, git_root) in [
        (REAL, "file:///srv/app", "file:///work"),
        (
            CHILD,
            "file:///srv/app/crates/core",
            "file:///srv/app/crates/core",
        ),
    ] {
        let old = hex_cell(
            &record_of(&before[id], "row trajectory_metadata_blob "),
            "data",
        );
        let new = hex_cell(
            &record_of(&after[id], "row trajectory_metadata_blob "),
            "data",
        );
        let workspace = Message::new(&new).get_message(1).unwrap();
        assert_eq!(workspace.get_str(1).unwrap(), folder, "{id}");
        assert_eq!(workspace.get_str(2).unwrap(), git_root, "{id}");
        assert_eq!(workspace.get_str(4).unwrap(), "main", "{id}");
        assert_eq!(strs(&new, 7), [folder], "{id}");
        assert_eq!(fields_but(&new, &[1, 7]), fields_but(&old, &[1, 7]), "{id}");
    }

    // The index row: workspace_uris moved, every other cell as it was.
    for (id, uri) in [
        (REAL, "file:///srv/app"),
        (CHILD, "file:///srv/app/crates/core"),
    ] {
        let old = record_of(&before[id], "index");
        let new = record_of(&after[id], "index");
        assert_eq!(new["row"]["workspace_uris"], format!(r#"["{uri}"]"#));
        // Its summary's workspace (9) and copy of the metadata (17) move
        // too, its title (which names a path under OLD) only --everywhere.
        let summary = |row: &Json| {
            let hex = row["row"]["raw_summary"].as_str()?;
            let raw = hex::decode(hex).unwrap();
            let workspace = Message::new(&raw).get_bytes(9)?.to_vec();
            let folder = Message::new(&workspace).get_str(1)?.into_owned();
            let title = Message::new(&raw).get_str(1).map(|t| t.into_owned());
            Some((folder, title))
        };
        if let Some((folder, title)) = summary(&old) {
            assert!(folder.starts_with("file:///work/app"), "{id}: {folder}");
            assert_eq!(
                summary(&new),
                Some((folder.replace("/work/app", "/srv/app"), title)),
                "{id}"
            );
        }
        let mut rest = new["row"].as_object().unwrap().clone();
        rest.remove("workspace_uris");
        rest.remove("raw_summary");
        let mut was = old["row"].as_object().unwrap().clone();
        was.remove("workspace_uris");
        was.remove("raw_summary");
        assert_eq!(rest, was, "{id}");
    }

    // The sidecars: cwd moved, the rest of the JSON as it was.
    assert_eq!(
        record_of(&after[REAL], &format!("file {REAL}.meta"))["text"],
        r#"{"cwd":"/srv/app","mode_id":"default"}"#
    );
    assert_eq!(
        record_of(&after[ACP], &format!("file {ACP}.meta"))["text"],
        r#"{"cwd":"/srv/app/sub","mode_id":"default"}"#
    );

    // What each changed is said.
    for line in [
        format!("{REAL}: moved /work/app to /srv/app: 4 places rewritten (trajectory metadata 2, index row 1, sidecar 1); 0 steps changed"),
        // Its index row's summary names the project in 5 places (the
        // workspace's folder and git root, the metadata's again, its
        // workspace_uris).
        format!("{CHILD}: moved /work/app to /srv/app: 9 places rewritten (trajectory metadata 3, index row 6); 0 steps changed"),
        format!("{ACP}: moved /work/app to /srv/app: 1 place rewritten (sidecar 1); 0 steps changed"),
        "changed 3 of 5 conversations".to_string(),
    ] {
        assert!(said.contains(&line), "{line}\nnot in\n{said}");
    }

    // agy-decode: the same messages, the meta records in the new place.
    let decoded =
        |stream: &[u8]| String::from_utf8(run_ok("agy-decode", &["--all"], stream)).unwrap();
    let expected = decoded(&original)
        .replace(r#""cwd":"/work/app""#, r#""cwd":"/srv/app""#)
        .replace(r#""cwd":"/work/app/"#, r#""cwd":"/srv/app/"#);
    assert_lines(&decoded(&moved), &expected);

    // Written back over the store: what agy-dump reads is the moved
    // stream, and agy-ls sees the new directories, its index agreeing.
    let packed = s.join("packed");
    copy_dir(&root, &packed);
    run_ok(
        "agy-pack",
        &["--force", "--root", packed.to_str().unwrap()],
        &moved,
    );
    assert!(
        dump(&packed) == stream_without_requests(&moved),
        "dump after pack differs"
    );
    let listed = run_ok("agy-ls", &[packed.to_str().unwrap()], b"");
    let listed: BTreeMap<String, Json> = support::store::json_lines(&listed)
        .into_iter()
        .map(|e| (e["id"].as_str().unwrap().to_string(), e))
        .collect();
    assert_eq!(listed[REAL]["cwd"], "/srv/app");
    assert_eq!(listed[CHILD]["cwd"], "/srv/app/crates/core");
    assert_eq!(listed[WIN]["cwd"], "/c:/Users/dev/app");
    for id in [REAL, CHILD, ACP, WIN, ELSEWHERE] {
        assert_eq!(listed[id]["index"], "agrees", "{id}");
    }
    let row = idx::row(&packed, REAL).unwrap();
    assert_eq!(
        idx::cell(&row, "workspace_uris"),
        Value::Text(r#"["file:///srv/app"]"#.into())
    );
    assert_eq!(
        std::fs::read(packed.join(format!("conversations/{ACP}.meta"))).unwrap(),
        br#"{"cwd":"/srv/app/sub","mode_id":"default"}"#
    );
}

#[test]
fn a_move_and_its_reverse_give_back_every_byte() {
    let s = Scratch::new("move-back");
    let root = s.join("store");
    build(&root);
    let original = dump(&root);
    for everywhere in [false, true] {
        let flag: &[&str] = if everywhere { &["--everywhere"] } else { &[] };
        let there = edit(&[&["move", OLD, NEW][..], flag].concat(), &original).0;
        assert!(there != original);
        let back = edit(&[&["move", NEW, OLD][..], flag].concat(), &there).0;
        assert!(back == original, "--everywhere {everywhere}: the stream");
        // And through a store: packed, dumped, moved back.
        let packed = s.join(format!("packed-{everywhere}"));
        run_ok("agy-pack", &["--root", packed.to_str().unwrap()], &there);
        // (The store's side files are not the conversations': the
        // requests to move their paths are left out.)
        let again = edit(&[&["move", NEW, OLD][..], flag].concat(), &dump(&packed)).0;
        assert!(
            stream_without_requests(&again) == original,
            "--everywhere {everywhere}: the store"
        );
    }
}

/// Every `/work/app` in a conversation's text, as a move writes `/srv/app`
/// (the fixtures' one name that starts with OLD's is `/work/apps`).
fn moved_text(text: &str) -> String {
    text.replace("/work/apps", "\0")
        .replace("/work/app", "/srv/app")
        .replace('\0', "/work/apps")
}

#[test]
fn everywhere_moves_every_path_inside_and_keeps_every_other_byte() {
    let s = Scratch::new("move-everywhere");
    let root = s.join("store");
    build(&root);
    let original = dump(&root);
    let (moved, said) = edit(&["move", "--everywhere", OLD, NEW], &original);
    let before = by_conversation(&original);
    let after = by_conversation(&stream_without_requests(&moved));
    for id in [WIN, ELSEWHERE] {
        assert!(before[id] == after[id], "{id} changed");
    }
    for id in [REAL, CHILD, ACP] {
        let mut steps_changed = 0;
        for (b, a) in before[id].iter().zip(&after[id]) {
            let record: Json = serde_json::from_slice(b).unwrap();
            let names_old = match record["kind"].as_str().unwrap() {
                // A row names OLD when one of its blobs does.
                "row" => record["row"].as_object().unwrap().values().any(|v| {
                    v.as_str()
                        .and_then(|h| hex::decode(h).ok())
                        .is_some_and(|bytes| memchr::memmem::find(&bytes, OLD.as_bytes()).is_some())
                }),
                _ => memchr::memmem::find(b, OLD.as_bytes()).is_some(),
            };
            // The git root `file:///work` and the like name no path under
            // OLD: a row without OLD's bytes is never touched.
            if !names_old {
                assert!(b == a, "{id}: {} changed", what(b));
                continue;
            }
            // (`/work/apps` in the notes is not OLD.)
            let rest = String::from_utf8_lossy(a).replace("/work/apps", "");
            assert!(!rest.contains(OLD), "{id}: {} still names {OLD}", what(a));
            if record["table"] == "steps" && b != a {
                steps_changed += 1;
                let row: Json = serde_json::from_slice(a).unwrap();
                let payload = hex_cell(&row, "step_payload");
                assert!(wire::damage(&payload).is_none(), "{id}: {}", what(a));
                // The metadata column still mirrors the Step's field 5.
                assert_eq!(
                    Message::new(&payload).get_bytes(5).unwrap(),
                    hex_cell(&row, "metadata").as_slice(),
                    "{id}: {}",
                    what(a)
                );
            }
        }
        let line = said
            .lines()
            .find(|l| l.starts_with(&format!("agy-edit: {id}: moved /work/app to /srv/app: ")))
            .unwrap_or_else(|| panic!("{id}: {said}"));
        let plural = if steps_changed == 1 { "" } else { "s" };
        assert!(
            line.ends_with(&format!("; {steps_changed} step{plural} changed")),
            "{line}"
        );
    }

    // agy-decode: every message of a moved conversation is the original's
    // with the path moved.
    let decoded =
        |stream: &[u8]| String::from_utf8(run_ok("agy-decode", &["--all"], stream)).unwrap();
    let expected: String = decoded(&original)
        .split_inclusive('\n')
        .map(|w| match w.contains(WIN) || w.contains(ELSEWHERE) {
            true => w.to_string(),
            false => moved_text(w),
        })
        .collect();
    assert_lines(&decoded(&moved), &expected);

    // On disk: each brain file of a moved conversation holds the moved
    // text (the subagent's 2.5 MB output travelled in parts), every other
    // file is as it was.
    let packed = s.join("packed");
    run_ok("agy-pack", &["--root", packed.to_str().unwrap()], &moved);
    let files = |root: &Path| -> Vec<_> {
        files_under(&root.join("brain"))
            .into_iter()
            .filter(|(_, bytes)| bytes != b"<dir>")
            .collect()
    };
    let old_files = files(&root);
    let new_files = files(&packed);
    assert_eq!(
        old_files.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        new_files.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    let mut big = false;
    for ((path, was), (_, now)) in old_files.iter().zip(&new_files) {
        let moved_conversation = [REAL, CHILD, ACP].iter().any(|id| path.starts_with(id));
        let text = String::from_utf8(was.clone()).unwrap();
        let expected = match moved_conversation {
            true => moved_text(&text),
            false => text,
        };
        big |= was.len() > 2_000_000;
        assert!(now == expected.as_bytes(), "{}", path.display());
    }
    assert!(big);
    let transcript = std::fs::read_to_string(packed.join(format!(
        "brain/{CHILD}/.system_generated/logs/transcript.jsonl"
    )))
    .unwrap();
    assert!(
        transcript.contains(r#"\"Cwd\":\"/srv/app/crates/core\""#),
        "the arguments inside a transcript line: {transcript}"
    );
    // The index row's text and summary follow.
    let row = idx::row(&packed, CHILD).unwrap();
    assert_eq!(
        idx::cell(&row, "preview"),
        Value::Text("Find what in /srv/app/crates/core/src is slow.".into())
    );
    let row = idx::row(&packed, REAL).unwrap();
    let Value::Blob(summary) = idx::cell(&row, "raw_summary") else {
        panic!("raw_summary is a blob")
    };
    assert_eq!(
        summary,
        Msg::new()
            .str(1, "file:///srv/app")
            .msg(2, Msg::new().str(1, "/srv/app/src"))
            .build()
    );
}

#[test]
fn a_windows_project_moves_in_every_form_it_is_written_in() {
    let s = Scratch::new("move-windows");
    let root = s.join("store");
    windows_conversation(&root, WIN);
    idx::create(&root, Shape::V1116);
    run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    let original = dump(&root);
    // The drive letter in either case, either separator.
    let (moved, said) = edit(
        &["move", "--everywhere", "c:/Users/dev/app", r"D:\dev\app"],
        &original,
    );
    assert!(
        said.contains("14 places rewritten (trajectory metadata 3, index row 3, 6 in 3 steps, 2 in 1 brain file); 3 steps changed"),
        "{said}"
    );
    let after = by_conversation(&moved);
    let meta = hex_cell(
        &record_of(&after[WIN], "row trajectory_metadata_blob "),
        "data",
    );
    let workspace = Message::new(&meta).get_message(1).unwrap();
    assert_eq!(workspace.get_str(1).unwrap(), "file:///d%3A/dev/app");
    assert_eq!(strs(&meta, 7), ["file:///D:/dev/app"]);
    assert_eq!(
        record_of(&after[WIN], "index")["row"]["workspace_uris"],
        r#"["file:///d:/dev/app"]"#
    );
    let text = String::from_utf8(moved.clone()).unwrap();
    let decoded = String::from_utf8(run_ok("agy-decode", &[], &moved)).unwrap();
    for expected in [
        r"Open D:\\dev\\app\\src\\main.rs please",
        r#""file_path":"D:\\dev\\app\\src\\main.rs""#,
    ] {
        assert!(decoded.contains(expected), "{expected}\n{decoded}");
    }
    assert!(
        text.contains(r#"\\\"AbsolutePath\\\":\\\"D:\\\\\\\\dev"#),
        "{text}"
    );
    for old in ["Users", "c%3A", "C:/"] {
        assert!(!decoded.contains(old), "{old} in {decoded}");
    }
    let back = edit(
        &["move", "--everywhere", r"D:\dev\app", r"C:\Users\dev\app"],
        &moved,
    )
    .0;
    assert!(back == original);
}

#[test]
fn what_a_move_cannot_rewrite_faithfully_is_refused() {
    let s = Scratch::new("move-refused");
    let root = s.join("store");
    acp_conversation(&root, ACP, "/work/app/sub");
    // A folder URI under OLD in a form no writer is known to use: an
    // escaped slash.
    let db = AgyDb::create(&root, ELSEWHERE);
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, "file:///work/app%2Fsub"))
            .build(),
    );
    db.close();
    let original = dump(&root);
    let out = run("agy-edit", &["move", OLD, NEW], &original);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("conversation {ELSEWHERE} not edited: move: its trajectory metadata names \"file:///work/app%2Fsub\"")),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("1 of 2 conversations not edited"));
    let after = by_conversation(&out.stdout);
    assert!(!after.contains_key(ELSEWHERE));
    assert!(after.contains_key(ACP));

    // A blob that cannot be read, in the last step: nothing of that
    // conversation goes out, though its first rows were fine.
    let s2 = Scratch::new("move-bad-blob");
    subagent_child(&s2.path, CHILD, REAL, "/work/app");
    acp_conversation(&s2.path, ACP, "/work/app/sub");
    let stream = String::from_utf8(dump(&s2.path)).unwrap();
    let bad = stream.replacen(r#""step_payload":"08"#, r#""step_payload":"zz"#, 1);
    assert_ne!(bad, stream);
    let out = run(
        "agy-edit",
        &["move", "--everywhere", OLD, NEW],
        bad.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!("conversation {CHILD} not edited")),
        "{}",
        stderr(&out)
    );
    let after = by_conversation(&out.stdout);
    assert!(
        !after.contains_key(CHILD),
        "a half-moved conversation went out"
    );
    assert!(after.contains_key(ACP));

    // Nothing under OLD: the stream as it came.
    let (same, said) = edit(&["move", "/elsewhere", NEW], &dump(&root));
    assert!(same == dump(&root));
    assert!(
        said.contains("nothing to change in 2 conversations"),
        "{said}"
    );

    for (args, words) in [
        (&["move", OLD][..], "NEW is missing"),
        (&["move", "work/app", NEW][..], "not an absolute path"),
        (&["move", "/", NEW][..], "every path is under a root"),
        (&["move", OLD, OLD][..], "onto itself"),
        (&["move", OLD, "/a\"b"][..], "quote or a backslash"),
        (&["settle", "--everywhere"][..], "--everywhere is for move"),
    ] {
        let out = run("agy-edit", args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(words), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn agy_ls_under_lists_what_a_move_would_move() {
    let s = Scratch::new("move-ls-under");
    let root = s.join("store");
    build(&root);
    let listed = |dir: &str| -> Vec<String> {
        let out = run_ok("agy-ls", &["--under", dir, root.to_str().unwrap()], b"");
        let mut ids: Vec<String> = support::store::json_lines(&out)
            .into_iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    let moved = |dir: &str| -> Vec<String> {
        let said = edit(&["move", dir, "/elsewhere"], &dump(&root)).1;
        let mut ids: Vec<String> = said
            .lines()
            .filter_map(|l| l.strip_prefix("agy-edit: "))
            .filter_map(|l| l.split_once(": moved "))
            .map(|(id, _)| id.to_string())
            .collect();
        ids.sort();
        ids
    };
    let mut under_app = vec![REAL.to_string(), CHILD.to_string(), ACP.to_string()];
    under_app.sort();
    assert_eq!(listed("/work/app"), under_app);
    assert_eq!(moved("/work/app"), under_app);
    // The sidecar alone places the ACP conversation.
    assert_eq!(listed("/work/app/sub"), [ACP]);
    assert_eq!(listed("/work/app/crates"), [CHILD]);
    assert!(listed("/work/ap").is_empty());
    assert_eq!(listed("/work").len(), 4, "with /work/application");
    assert_eq!(moved("/work").len(), 4);
    // A Windows project by either spelling.
    assert_eq!(listed(r"C:\Users\dev"), [WIN]);
    assert_eq!(
        listed("c:/users/dev").len(),
        0,
        "only the drive is either case"
    );
    assert_eq!(listed("c:/Users/dev/app/"), [WIN]);
    let out = run(
        "agy-ls",
        &["--under", "relative/dir", root.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not an absolute path"),
        "{}",
        stderr(&out)
    );
}
