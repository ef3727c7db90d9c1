//! Nothing lost in place: the README's in-place recipes
//! (`agy-dump | agy-edit … | agy-pack --force` and `--onto`) run on copies of
//! the sample store with the stream cut short, a database page damaged, the
//! brain directory not readable whole and the database named in every form
//! of path. In every case the conversation in place stays byte for byte
//! unless a whole replacement arrived, and some tool of the pipeline exits
//! non-zero and names the conversation.

mod support;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use support::store::{copy_tree, damage_page, files_under};
use support::{run, stderr, Scratch};

/// The sample's conversations: 20 steps with brain files (copperplate), 16
/// steps (quill) and 12 steps (parcel-sort).
const COPPER: &str = "0bb5c533-0f37-4e6b-8578-b94607c75201";
const QUILL: &str = "77559890-5f01-4d48-a336-db3155aede22";
const PARCEL: &str = "7d254c20-7c6c-4559-88cf-996411ecac8e";

/// A copy of the sample store with its index built, as a user's would be.
fn sample_root(s: &Scratch, name: &str) -> PathBuf {
    let root = s.join(name);
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sample"),
        &root,
    );
    let out = run(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    root
}

fn db_path(root: &Path, id: &str) -> PathBuf {
    root.join("conversations").join(format!("{id}.db"))
}

/// Runs the stages one after another, each reading what the one before
/// wrote, as a shell pipeline would hand it on; every stage's output.
fn pipeline(input: &[u8], stages: &[Stage]) -> Vec<Output> {
    let mut outs: Vec<Output> = Vec::new();
    let mut data = input.to_vec();
    for (bin, args) in stages {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(bin, &args, &data);
        data = out.stdout.clone();
        outs.push(out);
    }
    outs
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// That some stage failed and said which conversation: what a user of the
/// pipeline (with `set -o pipefail`) sees.
fn some_stage_names(outs: &[Output], id: &str) -> bool {
    outs.iter()
        .any(|out| !out.status.success() && stderr(out).contains(id))
}

/// The first `n` lines of `stream`.
fn head(stream: &[u8], n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for line in stream.split_inclusive(|&b| b == b'\n').take(n) {
        out.extend_from_slice(line);
    }
    out
}

/// The conversation of the stream's last line.
fn last_conversation(stream: &[u8]) -> String {
    let last = stream
        .trim_ascii_end()
        .rsplit(|&b| b == b'\n')
        .next()
        .unwrap();
    let record: serde_json::Value = serde_json::from_slice(last).unwrap();
    record["conversation"].as_str().unwrap().to_string()
}

fn line_count(stream: &[u8]) -> usize {
    stream.iter().filter(|&&b| b == b'\n').count()
}

fn dump(path: &Path) -> Output {
    run("agy-dump", &[path.to_str().unwrap()], b"")
}

fn pack_force(root: &Path) -> Stage {
    (
        "agy-pack",
        args(&["--force", "--root", root.to_str().unwrap()]),
    )
}

#[test]
fn a_stream_cut_short_replaces_nothing() {
    // The first reproduction: `head -n 20 rows | agy-edit settle |
    // agy-pack --force` emptied a 16-step conversation and removed its
    // brain; `head -n 79` left 10 of 16 steps.
    let s = Scratch::new("in-place-head");
    let root = sample_root(&s, "cs");
    let rows = dump(&db_path(&root, QUILL)).stdout;
    let whole = run("agy-dump", &[root.to_str().unwrap()], b"").stdout;
    let before = files_under(&root);
    for (stream, n) in [(&rows, 20), (&rows, line_count(&rows) - 1), (&whole, 79)] {
        let cut = head(stream, n);
        let with_settle = pipeline(&cut, &[("agy-edit", args(&["settle"])), pack_force(&root)]);
        let alone = pipeline(&cut, &[pack_force(&root)]);
        assert_eq!(files_under(&root), before, "head -n {n}");
        let cut_id = last_conversation(&cut);
        for outs in [&with_settle, &alone] {
            assert!(
                some_stage_names(outs, &cut_id),
                "head -n {n}: {:?}",
                outs.iter().map(stderr).collect::<Vec<_>>()
            );
        }
        let said = stderr(&alone[0]);
        assert!(
            said.contains("end record never came") || said.contains("not all there"),
            "{said}"
        );
    }
}

#[test]
fn a_damaged_database_replaces_nothing() {
    // The second: agy-dump said "cut short" and exited 1, agy-edit said
    // "nothing to change", agy-pack wrote the 11 steps it got.
    let s = Scratch::new("in-place-damaged");
    let root = sample_root(&s, "cs");
    damage_page(&db_path(&root, QUILL), 4);
    let before = files_under(&root);
    let dumped = run("agy-dump", &[root.to_str().unwrap()], b"");
    assert_eq!(dumped.status.code(), Some(1));
    assert!(stderr(&dumped).contains("cut short"), "{}", stderr(&dumped));
    let outs = pipeline(
        &dumped.stdout,
        &[("agy-edit", args(&["settle"])), pack_force(&root)],
    );
    assert_eq!(files_under(&root), before);
    let edit = stderr(&outs[0]);
    assert_eq!(outs[0].status.code(), Some(1), "{edit}");
    assert!(
        edit.contains(QUILL) && edit.contains("could not all be read"),
        "{edit}"
    );
    assert!(!edit.contains("nothing to change"), "{edit}");
    // Straight into agy-pack, it is refused there too.
    let outs = pipeline(&dumped.stdout, &[pack_force(&root)]);
    assert_eq!(outs[0].status.code(), Some(1));
    assert!(stderr(&outs[0]).contains(QUILL), "{}", stderr(&outs[0]));
    assert_eq!(files_under(&root), before);
}

#[test]
fn every_form_of_a_database_path_finds_its_brain() {
    // The third: inside conversations/, `agy-dump ID.db` emitted no brain
    // files and `agy-pack --force --root ..` removed the brain directory.
    let s = Scratch::new("in-place-paths");
    let root = sample_root(&s, "cs");
    let conversations = root.join("conversations");
    let name = format!("{COPPER}.db");
    std::fs::create_dir_all(s.join("elsewhere/sub")).unwrap();
    let link = s.join("elsewhere/link.db");
    std::os::unix::fs::symlink(conversations.join(&name), &link).unwrap();
    let absolute = dump(&conversations.join(&name)).stdout;
    assert!(
        String::from_utf8_lossy(&absolute).contains("\"path\":\"task.md\""),
        "the sample's brain has task.md"
    );
    let forms: [(PathBuf, String); 5] = [
        (conversations.clone(), name.clone()),
        (conversations.clone(), format!("./{name}")),
        (
            s.join("elsewhere/sub"),
            format!("../../cs/conversations/{name}"),
        ),
        (s.path.clone(), link.to_str().unwrap().to_string()),
        (
            root.clone(),
            format!("conversations/../conversations/{name}"),
        ),
    ];
    let before = files_under(&root);
    for (dir, path) in forms {
        let out = std::process::Command::new(support::exe("agy-dump"))
            .arg(&path)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{path}: {}", stderr(&out));
        assert_eq!(out.stdout, absolute, "{path} from {}", dir.display());
        let outs = pipeline(&out.stdout, &[pack_force(&root)]);
        assert!(outs[0].status.success(), "{}", stderr(&outs[0]));
        assert_eq!(files_under(&root), before, "{path}");
    }
}

#[test]
fn a_fork_onto_an_existing_conversation_is_refused() {
    // The fourth: a fork given another conversation's id replaced it.
    let s = Scratch::new("in-place-fork");
    let root = sample_root(&s, "cs");
    let rows = run("agy-dump", &["--id", COPPER, root.to_str().unwrap()], b"").stdout;
    let before = files_under(&root);
    let outs = pipeline(
        &rows,
        &[
            ("agy-edit", args(&["fork", "--at", "5", "--id", PARCEL])),
            pack_force(&root),
        ],
    );
    assert!(outs[0].status.success(), "{}", stderr(&outs[0]));
    let pack = stderr(&outs[1]);
    assert_eq!(outs[1].status.code(), Some(1), "{pack}");
    assert!(
        pack.contains(PARCEL) && pack.contains("--replace-other"),
        "{pack}"
    );
    assert_eq!(files_under(&root), before);
    // Said so, it is replaced.
    let forked = outs[0].stdout.clone();
    let out = run(
        "agy-pack",
        &[
            "--force",
            "--replace-other",
            "--root",
            root.to_str().unwrap(),
        ],
        &forked,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_ne!(files_under(&root), before);
    // An id agy would never give is a usage error.
    for id in ["hello", "a b;$(x)", "0BB5C533-0F37-4E6B-8578-B94607C75201"] {
        let out = run("agy-edit", &["fork", "--at", "5", "--id", id], &rows);
        assert_eq!(out.status.code(), Some(2), "{id}: {}", stderr(&out));
        assert!(stderr(&out).contains("--id"), "{}", stderr(&out));
    }
}

/// One stage of a pipeline: a binary and its arguments.
type Stage = (&'static str, Vec<String>);

/// The README's in-place recipes, each as the stages after agy-dump.
fn recipes(root: &Path) -> Vec<(&'static str, Vec<Stage>)> {
    let pack = pack_force(root);
    vec![
        ("pack", vec![pack.clone()]),
        (
            "settle",
            vec![("agy-edit", args(&["settle"])), pack.clone()],
        ),
        (
            "rewind",
            vec![("agy-edit", args(&["rewind", "--to", "7"])), pack.clone()],
        ),
        (
            "move",
            vec![
                (
                    "agy-edit",
                    args(&[
                        "move",
                        "/home/dev/src/parcel-sort",
                        "/home/dev/work/parcel-sort",
                    ]),
                ),
                pack.clone(),
            ],
        ),
        (
            "lane",
            vec![("agy-edit", args(&["lane", "cli"])), pack.clone()],
        ),
    ]
}

#[test]
fn every_recipe_cut_at_every_line_replaces_nothing() {
    let s = Scratch::new("in-place-matrix");
    let root = sample_root(&s, "cs");
    let rows = dump(&db_path(&root, PARCEL)).stdout;
    let lines = line_count(&rows);
    let before = files_under(&root);
    for (name, stages) in recipes(&root) {
        for n in 1..lines {
            let outs = pipeline(&head(&rows, n), &stages);
            assert_eq!(files_under(&root), before, "{name}, head -n {n}");
            assert!(
                some_stage_names(&outs, PARCEL),
                "{name}, head -n {n}: {:?}",
                outs.iter().map(stderr).collect::<Vec<_>>()
            );
        }
        // The edit's own output cut short, as a killed agy-edit leaves it.
        if stages.len() == 2 {
            let edited = pipeline(&rows, &stages[..1]).remove(0);
            assert!(edited.status.success(), "{name}: {}", stderr(&edited));
            for n in 1..line_count(&edited.stdout) {
                let outs = pipeline(&head(&edited.stdout, n), &stages[1..]);
                assert_eq!(files_under(&root), before, "{name}'s output, head -n {n}");
                assert!(
                    some_stage_names(&outs, PARCEL),
                    "{name}'s output, head -n {n}"
                );
            }
        }
    }
    // --onto: the message stream and the rows it goes onto, each cut.
    let messages = run("agy-decode", &[], &rows).stdout;
    let rows_file = s.join("rows.ndjson");
    for n in 1..lines {
        std::fs::write(&rows_file, head(&rows, n)).unwrap();
        let outs = pipeline(
            &messages,
            &[
                ("agy-encode", args(&["--onto", rows_file.to_str().unwrap()])),
                pack_force(&root),
            ],
        );
        assert_eq!(files_under(&root), before, "--onto, rows cut at {n}");
        assert!(some_stage_names(&outs, PARCEL), "--onto, rows cut at {n}");
    }
    std::fs::write(&rows_file, &rows).unwrap();
    for n in 1..line_count(&messages) {
        let outs = pipeline(
            &head(&messages, n),
            &[
                ("agy-encode", args(&["--onto", rows_file.to_str().unwrap()])),
                pack_force(&root),
            ],
        );
        // A message stream cut short would delete the steps it lost:
        // agy-decode writes each conversation's meta record last, and
        // --onto writes nothing back without it.
        assert_eq!(files_under(&root), before, "messages cut at {n}");
        assert!(some_stage_names(&outs, PARCEL), "messages cut at {n}");
    }
}

#[test]
fn every_recipe_over_a_damaged_database_replaces_nothing() {
    let s = Scratch::new("in-place-damaged-matrix");
    let root = sample_root(&s, "cs");
    damage_page(&db_path(&root, PARCEL), 4);
    let before = files_under(&root);
    let dumped = dump(&db_path(&root, PARCEL));
    assert_eq!(dumped.status.code(), Some(1), "{}", stderr(&dumped));
    for (name, stages) in recipes(&root) {
        let outs = pipeline(&dumped.stdout, &stages);
        assert_eq!(files_under(&root), before, "{name}");
        assert!(some_stage_names(&outs, PARCEL), "{name}");
    }
}

#[test]
fn a_brain_not_read_whole_is_kept() {
    // A brain file agy-dump cannot carry (a link) makes its end record say
    // the brain was not read: agy-pack keeps what the stream did not hold.
    let s = Scratch::new("in-place-brain");
    let root = sample_root(&s, "cs");
    let brain = root.join("brain").join(COPPER);
    std::os::unix::fs::symlink("task.md", brain.join("link.md")).unwrap();
    let dumped = dump(&db_path(&root, COPPER));
    assert!(dumped.status.success(), "{}", stderr(&dumped));
    assert!(
        String::from_utf8_lossy(&dumped.stdout).contains("\"brain\":\"not_read\""),
        "{}",
        stderr(&dumped)
    );
    let before = files_under(&root);
    // Unchanged: left as it is.
    let outs = pipeline(&dumped.stdout, &[pack_force(&root)]);
    assert!(outs[0].status.success(), "{}", stderr(&outs[0]));
    assert_eq!(files_under(&root), before);
    // Changed (a rewind): the database is replaced, and the brain keeps
    // every file the stream did not bring, the link among them.
    let outs = pipeline(
        &dumped.stdout,
        &[
            ("agy-edit", args(&["rewind", "--turns", "1"])),
            pack_force(&root),
        ],
    );
    assert!(outs[1].status.success(), "{}", stderr(&outs[1]));
    assert_eq!(
        std::fs::read_link(brain.join("link.md")).unwrap(),
        PathBuf::from("task.md")
    );
    for file in ["task.md", "walkthrough.md", "implementation_plan.md"] {
        assert!(brain.join(file).is_file(), "{file}");
    }
    // --no-brain says the same: the brain in place is kept whole.
    let before = files_under(&brain);
    let rows = run(
        "agy-dump",
        &["--no-brain", db_path(&root, COPPER).to_str().unwrap()],
        b"",
    );
    let outs = pipeline(
        &rows.stdout,
        &[("agy-edit", args(&["settle"])), pack_force(&root)],
    );
    assert!(outs[1].status.success(), "{}", stderr(&outs[1]));
    assert_eq!(files_under(&brain), before);
}

/// A file's identity and time: unchanged means not written at all.
fn stamp(path: &Path) -> (u64, i64, i64) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    (meta.ino(), meta.mtime(), meta.mtime_nsec())
}

#[test]
fn a_no_op_rewrite_touches_no_file() {
    let s = Scratch::new("in-place-no-op");
    let root = sample_root(&s, "cs");
    // Every file and directory but the two a run makes its temporaries in
    // (its lock, the database it builds before it knows).
    let stamps = |root: &Path| -> Vec<(PathBuf, (u64, i64, i64))> {
        files_under(root)
            .into_iter()
            .filter(|(p, _)| p != Path::new("conversations") && p != Path::new("brain"))
            .map(|(p, _)| {
                let stamp = stamp(&root.join(&p));
                (p, stamp)
            })
            .collect()
    };
    let before = stamps(&root);
    let whole = run("agy-dump", &[root.to_str().unwrap()], b"").stdout;
    for stages in [
        vec![pack_force(&root)],
        vec![("agy-edit", args(&["settle"])), pack_force(&root)],
        vec![
            (
                "agy-edit",
                args(&["move", "/home/dev/src/nowhere", "/home/dev/src/elsewhere"]),
            ),
            pack_force(&root),
        ],
    ] {
        let outs = pipeline(&whole, &stages);
        let pack = outs.last().unwrap();
        assert!(pack.status.success(), "{}", stderr(pack));
        assert!(
            stderr(pack).contains("0 written, 3 unchanged"),
            "{}",
            stderr(pack)
        );
        assert!(pack.stdout.is_empty());
        assert_eq!(stamps(&root), before);
    }
}

#[test]
fn agy_decode_marks_what_is_not_whole() {
    let s = Scratch::new("in-place-decode");
    let root = sample_root(&s, "cs");
    let rows = dump(&db_path(&root, QUILL)).stdout;
    let whole = run("agy-decode", &[], &rows);
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert!(!String::from_utf8_lossy(&whole.stdout).contains("incomplete"));
    // Cut short: its db record promised an end record that never came.
    let cut = run("agy-decode", &[], &head(&rows, 20));
    damage_page(&db_path(&root, QUILL), 4);
    let damaged = run("agy-decode", &[], &dump(&db_path(&root, QUILL)).stdout);
    for (out, why) in [
        (&cut, "cut short: its end record never came"),
        (&damaged, "could not all be read: table steps"),
    ] {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
        assert!(stderr(out).contains(QUILL), "{}", stderr(out));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let meta: serde_json::Value = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|r| r["kind"] == "meta")
            .unwrap();
        assert!(meta["incomplete"].as_str().unwrap().contains(why), "{meta}");
        // And agy-encode carries it: its rows end "whole":false, which no
        // agy-pack puts in place.
        let encoded = run("agy-encode", &[], &out.stdout);
        assert!(
            String::from_utf8_lossy(&encoded.stdout).contains("\"whole\":false"),
            "{}",
            stderr(&encoded)
        );
    }
}

#[test]
fn a_missing_or_unreadable_brain_directory_loses_nothing() {
    let s = Scratch::new("in-place-no-brain");
    let root = sample_root(&s, "cs");
    let brain = root.join("brain").join(PARCEL);
    // Missing: the stream says the brain was read and held nothing; the
    // conversation in place has none either, and stays so.
    std::fs::remove_dir_all(&brain).unwrap();
    let before = files_under(&root);
    let rows = dump(&db_path(&root, PARCEL)).stdout;
    for (name, stages) in recipes(&root) {
        if name == "rewind" || name == "move" {
            continue; // these change it: a whole replacement
        }
        let outs = pipeline(&rows, &stages);
        assert!(outs.iter().all(|o| o.status.success()), "{name}");
        assert_eq!(files_under(&root), before, "{name}");
    }
    // Not readable (a file where the directory goes): not dumped at all,
    // named, and nothing arrives to replace it.
    std::fs::write(&brain, b"not a directory").unwrap();
    let before = files_under(&root);
    let dumped = dump(&db_path(&root, PARCEL));
    assert_eq!(dumped.status.code(), Some(1));
    assert!(stderr(&dumped).contains(PARCEL), "{}", stderr(&dumped));
    for (name, stages) in recipes(&root) {
        let _ = pipeline(&dumped.stdout, &stages);
        assert_eq!(files_under(&root), before, "{name}");
    }
}
