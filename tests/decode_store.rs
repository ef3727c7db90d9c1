//! agy-decode given a database or a data root reads it itself, and writes
//! what `agy-dump PATH | agy-decode` writes: the same bytes, the same exit
//! status, for every shape of store the other tests build (the sample, the
//! generator's varieties with spilled outputs, artifacts and WAL files,
//! agy 1.2's real shape, values agy never writes, damaged blobs and pages,
//! a conversation that cannot be read).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::corpus::{generate, out_dir_args, sample, stores};
use support::pb::Msg;
use support::steps::{metadata, step};
use support::store::{copy_tree, damage_page, files_under, rich_db};
use support::{run, stderr, AgyDb, Scratch};

/// `agy-dump PATH | agy-decode ARGS`, the two processes joined by a pipe;
/// its exit status is the pipeline's under `set -o pipefail` (agy-dump's
/// when it failed and agy-decode did not), which is what agy-decode,
/// knowing of both, gives.
fn piped(path: &Path, args: &[&str]) -> Output {
    let mut dump = Command::new(support::exe("agy-dump"))
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let decode = Command::new(support::exe("agy-decode"))
        .args(args)
        .stdin(dump.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let dumped = dump.wait_with_output().unwrap();
    match (dumped.status.success(), decode.status.success()) {
        (false, true) => Output {
            status: dumped.status,
            ..decode
        },
        _ => decode,
    }
}

/// `agy-decode ARGS PATH`.
fn direct(path: &Path, args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.push(path.to_str().unwrap());
    run("agy-decode", &all, b"")
}

/// Holds `agy-decode ARGS PATH` to the pipeline's bytes and exit status;
/// gives the direct run.
fn assert_as_piped(path: &Path, args: &[&str]) -> Output {
    let (want, got) = (piped(path, args), direct(path, args));
    assert_eq!(
        got.status.code(),
        want.status.code(),
        "{} {args:?}: {}",
        path.display(),
        stderr(&got)
    );
    assert!(
        got.stdout == want.stdout,
        "{} {args:?}: the messages differ from the pipeline's",
        path.display()
    );
    got
}

fn dbs(root: &Path) -> Vec<PathBuf> {
    let mut dbs: Vec<PathBuf> = std::fs::read_dir(root.join("conversations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "db"))
        .collect();
    dbs.sort();
    dbs
}

#[test]
fn every_store_decodes_as_its_dump_does() {
    let scratch = Scratch::new("decode-store");
    let mut roots = stores(&scratch);
    let shape = [
        "--conversations",
        "3",
        "--steps",
        "24",
        "--max-output",
        "60000",
    ];
    for (name, extra) in [
        ("artifacts", &["--artifacts", "--seed", "3"][..]),
        ("wal", &["--wal-steps", "5", "--seed", "4"][..]),
        ("shm", &["--wal-steps", "5", "--shm", "--seed", "6"][..]),
    ] {
        let args: Vec<&str> = shape.iter().chain(extra).copied().collect();
        roots.push(generate(&scratch, name, &args));
    }
    for root in &roots {
        for args in [&[][..], &["--all"][..], &["--format", "anthropic"][..]] {
            let got = assert_as_piped(root, args);
            assert!(got.status.success(), "{}: {}", root.display(), stderr(&got));
            assert!(stderr(&got).is_empty(), "{}", stderr(&got));
        }
        for db in dbs(root) {
            assert_as_piped(&db, &[]);
        }
    }
    // The spilled outputs were read where the steps point to them: the
    // generator's long outputs are in the messages whole.
    let spilled = direct(&roots[2], &[]);
    let text = String::from_utf8(spilled.stdout).unwrap();
    assert!(text.contains("\"tool_result\""));
    assert!(
        !text.contains("<truncated"),
        "a spilled output was not read back"
    );
}

#[test]
fn session_files_for_other_agents_are_written_as_from_the_stream() {
    let scratch = Scratch::new("decode-store-sessions");
    let root = sample();
    let work = scratch.join("work");
    std::fs::create_dir_all(&work).unwrap();
    for format in ["claude-code", "codex", "gemini-cli"] {
        let (from_stream, from_store) = (
            scratch.join(format!("{format}-a")),
            scratch.join(format!("{format}-b")),
        );
        let args = |dir: &Path| {
            let args = out_dir_args(format, dir, &work);
            args.iter().map(|a| a.to_string()).collect::<Vec<String>>()
        };
        let a = args(&from_stream);
        let want = piped(&root, &a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(want.status.success(), "{format}: {}", stderr(&want));
        let b = args(&from_store);
        let got = direct(&root, &b.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(got.status.success(), "{format}: {}", stderr(&got));
        // It names the files it wrote, each in its own directory.
        let named = String::from_utf8(want.stdout)
            .unwrap()
            .replace(from_stream.to_str().unwrap(), from_store.to_str().unwrap());
        assert_eq!(String::from_utf8(got.stdout).unwrap(), named, "{format}");
        assert!(!files_under(&from_store).is_empty(), "{format}");
        assert_eq!(
            files_under(&from_store),
            files_under(&from_stream),
            "{format}"
        );
    }
}

#[test]
fn the_shapes_agy_writes_and_values_it_never_does_decode_as_piped() {
    let scratch = Scratch::new("decode-store-shapes");
    // agy 1.2's real shape, with its index.
    let real = scratch.join("agy12");
    support::agy12::conversation_a(&real, Some(support::index::Shape::V3));
    assert_as_piped(&real, &[]);
    // Text, reals and integers where agy keeps blobs and integers, a
    // column and a table of a newer agy: such rows are read as lines.
    let odd = scratch.join("odd");
    rich_db(&odd, "3c1d5e7f-0a2b-4c6d-8e9f-1a2b3c4d5e6f").close();
    assert_as_piped(&odd, &[]);
    assert_as_piped(&odd, &["--all"]);
}

#[test]
fn the_columns_are_read_where_the_payload_lacks_their_field() {
    use support::steps::{
        call, tool_metadata, CANCELED, DONE, MCP_TOOL, PLANNER_RESPONSE, USER_INPUT,
    };
    let scratch = Scratch::new("decode-store-columns");
    let root = scratch.join("root");
    let db = AgyDb::create(&root, "6b5c4d3e-2f10-4a9b-8c7d-6e5f4a3b2c1d");
    // A user input whose Step has no metadata (field 5): its time comes
    // from the metadata column.
    let late = metadata(1_786_353_999, 4);
    let input = Msg::new()
        .varint(1, USER_INPUT)
        .varint(4, DONE)
        .msg(19, Msg::new().str(2, "when was this?"));
    db.step(0, USER_INPUT as i64, DONE as i64, &late.0, &input.0);
    let get = call("t1", "mcp_get", "{}");
    let planner_meta = metadata(1_786_354_000, 1);
    let reply = step(
        PLANNER_RESPONSE,
        DONE,
        &planner_meta,
        20,
        Msg::new().msg(7, get.clone()),
    );
    db.step(
        1,
        PLANNER_RESPONSE as i64,
        DONE as i64,
        &planner_meta.0,
        &reply.0,
    );
    // A canceled tool whose error is only in the error_details column.
    let tool_meta = tool_metadata(1_786_354_001, get);
    let canceled = step(
        MCP_TOOL,
        CANCELED,
        &tool_meta,
        47,
        Msg::new().str(3, "partial"),
    );
    db.step(
        2,
        MCP_TOOL as i64,
        CANCELED as i64,
        &tool_meta.0,
        &canceled.0,
    );
    let error = Msg::new().str(2, "canceled by user");
    db.conn
        .execute(
            "UPDATE steps SET error_details = ?1 WHERE idx = 2",
            [&error.0],
        )
        .unwrap();
    // A store may hold anything: metadata as text (of hex digits), which
    // is not a blob, so not read, in either way of reading.
    let later = metadata(1_786_360_000, 4);
    let again = Msg::new()
        .varint(1, USER_INPUT)
        .varint(4, DONE)
        .msg(19, Msg::new().str(2, "and this?"));
    db.step(3, USER_INPUT as i64, DONE as i64, &[], &again.0);
    db.conn
        .execute(
            "UPDATE steps SET metadata = ?1 WHERE idx = 3",
            [hex::encode(&later.0)],
        )
        .unwrap();
    db.close();
    let got = assert_as_piped(&root, &[]);
    let text = String::from_utf8(got.stdout).unwrap();
    assert!(!text.contains("2026-08-10T11:06:40"), "{text}");
    for from_a_column in ["2026-08-10T09:26:39", "canceled by user"] {
        assert!(text.contains(from_a_column), "{from_a_column}: {text}");
    }
}

#[test]
fn damage_is_read_said_and_marked_as_in_the_pipeline() {
    let scratch = Scratch::new("decode-store-damage");
    // A step whose payload is cut short: its readable part, marked.
    let root = scratch.join("blobs");
    let id = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d";
    let db = AgyDb::create(&root, id);
    let meta = metadata(1_786_353_243, 4);
    let hello = step(14, 3, &meta, 19, Msg::new().str(2, "hi"));
    db.step(0, 14, 3, &meta.0, &hello.0);
    let reply = step(15, 3, &meta, 20, Msg::new().str(1, &"x".repeat(500)));
    db.step(1, 15, 3, &meta.0, &reply.0[..reply.0.len() - 200]);
    db.close();
    let got = assert_as_piped(&root, &[]);
    assert!(got.status.success());
    let err = stderr(&got);
    assert!(err.contains("1 steps row(s) hold damaged blobs"), "{err}");
    assert!(String::from_utf8_lossy(&got.stdout).contains("\"damaged\":true"));

    // A damaged page of the steps table: the conversation is cut short
    // where it stops reading, named, marked incomplete, exit status 1.
    let pages = scratch.join("pages");
    copy_tree(&sample(), &pages);
    // Two of them, read by different threads.
    let (db, second) = (dbs(&pages).remove(0), dbs(&pages).remove(1));
    damage_page(&db, 4);
    damage_page(&second, 4);
    let got = assert_as_piped(&pages, &[]);
    assert_eq!(got.status.code(), Some(1));
    let err = stderr(&got);
    let stem = db.file_stem().unwrap().to_str().unwrap();
    let other = second.file_stem().unwrap().to_str().unwrap();
    assert!(err.contains(stem) && err.contains("cut short"), "{err}");
    assert!(
        err.find(stem) < err.find(other),
        "in the root's order: {err}"
    );
    assert!(err.contains("2 conversation(s) not whole"), "{err}");
    // Said in the same order every time, though two threads read.
    for _ in 0..5 {
        assert_eq!(stderr(&direct(&pages, &[])), err);
    }
    assert!(String::from_utf8_lossy(&got.stdout).contains("\"incomplete\""));
}

#[test]
fn a_conversation_that_cannot_be_read_is_named_and_the_others_still_come() {
    let scratch = Scratch::new("decode-store-unread");
    let root = scratch.join("root");
    copy_tree(&sample(), &root);
    // A file where its brain directory goes: not dumped at all.
    let db = dbs(&root).remove(1);
    let stem = db.file_stem().unwrap().to_str().unwrap().to_string();
    let brain = root.join("brain").join(&stem);
    std::fs::remove_dir_all(&brain).unwrap();
    std::fs::write(&brain, b"not a directory").unwrap();
    let got = assert_as_piped(&root, &[]);
    assert_eq!(got.status.code(), Some(1));
    let err = stderr(&got);
    assert!(err.contains(&stem), "{err}");
    assert!(err.contains("1 conversation(s) could not be read"), "{err}");
    let text = String::from_utf8(got.stdout).unwrap();
    assert_eq!(text.matches("\"kind\":\"meta\"").count(), 2, "the others");
}

#[test]
fn a_conversation_two_databases_hold_is_refused_where_it_comes_again() {
    let scratch = Scratch::new("decode-store-twice");
    let root = scratch.join("root");
    copy_tree(&sample(), &root);
    let dbs = dbs(&root);
    let conversations = root.join("conversations");
    // A copy that sorts last: a stream refuses it where it comes, and so
    // does the direct read, with the same output.
    let first = dbs[0].file_stem().unwrap().to_str().unwrap().to_string();
    std::fs::copy(&dbs[0], conversations.join("zz-copy.db")).unwrap();
    let got = assert_as_piped(&root, &[]);
    assert_eq!(got.status.code(), Some(1));
    let err = stderr(&got);
    assert!(
        err.contains(&first) && err.contains("appears again"),
        "{err}"
    );
    // A copy that sorts right after its original: a stream runs the two
    // on as one conversation (every step twice); read directly, it is
    // refused.
    std::fs::remove_file(conversations.join("zz-copy.db")).unwrap();
    let last = dbs[2].file_stem().unwrap().to_str().unwrap().to_string();
    std::fs::copy(&dbs[2], conversations.join(format!("{last}-copy.db"))).unwrap();
    let got = direct(&root, &[]);
    assert_eq!(got.status.code(), Some(1));
    let err = stderr(&got);
    assert!(
        err.contains(&last) && err.contains("appears again"),
        "{err}"
    );
    // The same given as two databases.
    let copy = conversations.join(format!("{last}-copy.db"));
    let paths = [dbs[2].to_str().unwrap(), copy.to_str().unwrap()];
    let twice = run("agy-decode", &paths, b"");
    assert_eq!(twice.status.code(), Some(1), "{}", stderr(&twice));
    assert!(
        stderr(&twice).contains("appears again"),
        "{}",
        stderr(&twice)
    );
}

#[test]
fn stores_and_streams_mix_and_a_closed_output_ends_quietly() {
    let scratch = Scratch::new("decode-store-mix");
    let root = sample();
    let db = dbs(&root).remove(0);
    let rest = dbs(&root).remove(2);
    // A database, then a row stream from stdin, as one stream.
    let rows = support::run_ok("agy-dump", &[rest.to_str().unwrap()], b"");
    let mixed = run("agy-decode", &[db.to_str().unwrap(), "-"], &rows);
    assert!(mixed.status.success(), "{}", stderr(&mixed));
    let both = [db.to_str().unwrap(), rest.to_str().unwrap()];
    let whole = support::run_ok("agy-dump", &both, b"");
    let want = support::run_ok("agy-decode", &[], &whole);
    assert_eq!(mixed.stdout, want);
    // A file that is neither is read as a row stream, and fails as one.
    let text = scratch.join("notes.txt");
    std::fs::write(&text, b"not json\n").unwrap();
    let bad = run("agy-decode", &[text.to_str().unwrap()], b"");
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("notes.txt:1"), "{}", stderr(&bad));
    // `agy-decode ROOT | head -c 100`: the reader goes away, and agy-decode
    // stops without a word.
    let mut child = Command::new(support::exe("agy-decode"))
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 100];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}
