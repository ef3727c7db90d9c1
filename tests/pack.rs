//! agy-pack's input and its refusals: every record it cannot write safely
//! fails the run with a message naming it, and leaves nothing behind.

mod support;

use support::store::{contents, dump_of, files_under, rich_db};
use support::{brain_file, run, run_ok, stderr, AgyDb, Scratch};

const ID: &str = "5f0c1f4e-8c3e-4a57-9d1e-2b7c9a0d4e11";

/// Runs agy-pack on `stream` into a fresh root and checks that it fails
/// with exit 1, a message containing every `needles`, and an untouched root.
fn refused(stream: &str, args: &[&str], needles: &[&str]) {
    let s = Scratch::new("refuse");
    let root = s.join("root");
    std::fs::create_dir_all(root.join("conversations")).unwrap();
    std::fs::create_dir_all(root.join("brain")).unwrap();
    let before = files_under(&root);
    let mut all = vec!["--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run("agy-pack", &all, stream.as_bytes());
    assert_eq!(out.status.code(), Some(1), "{stream}: {}", stderr(&out));
    let err = stderr(&out);
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in {err:?}");
    }
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        files_under(&root),
        before,
        "agy-pack left something behind for {stream}"
    );
}

const GOOD_DB: &str = r#"{"conversation":"c1","kind":"db","user_version":1}"#;
const GOOD_ROW: &str =
    r#"{"conversation":"c1","kind":"row","table":"steps","row":{"idx":0,"step_payload":"080e"}}"#;

#[test]
fn pack_refuses_malformed_records_and_leaves_nothing() {
    refused(
        &format!("{GOOD_DB}\n{GOOD_ROW}\n{{not json\n"),
        &[],
        &["stdin:3", "bad JSON", "\"c1\" not written"],
    );
    refused(
        &format!("{GOOD_DB}\n{}\n", GOOD_ROW.replace("080e", "08zz")),
        &[],
        &["stdin:2", "step_payload", "bad hex"],
    );
    refused(
        &format!("{GOOD_DB}\n{{\"conversation\":\"c1\",\"kind\":\"mystery\"}}\n"),
        &[],
        &["stdin:2", "unknown record kind \"mystery\""],
    );
    refused(
        &format!("{GOOD_DB}\n{}\n", GOOD_ROW.replace("steps", "nowhere")),
        &[],
        &["stdin:2", "no table \"nowhere\""],
    );
    refused(
        &format!(
            "{GOOD_DB}\n{}\n",
            GOOD_ROW.replace("step_payload", "nonsense")
        ),
        &[],
        &["stdin:2", "no column \"nonsense\""],
    );
    refused(
        &format!("{GOOD_ROW}\n{GOOD_DB}\n"),
        &[],
        &["stdin:2", "db record must be the first"],
    );
    refused(
        r#"{"kind":"db","user_version":1}"#,
        &[],
        &["stdin:1", "no \"conversation\""],
    );
    refused(
        r#"{"conversation":"c1","kind":"file","path":"a","text":"x","hex":"00"}"#,
        &[],
        &["exactly one of"],
    );
    refused(
        &format!(
            "{GOOD_DB}\n{}\n",
            r#"{"conversation":"c1","kind":"file","path":"a","append":true,"text":"x"}"#
        ),
        &[],
        &[
            "stdin:2",
            "file a",
            "\"append\" to a file that no earlier record",
        ],
    );
    refused(
        &format!(
            "{GOOD_DB}\n{}\n",
            r#"{"conversation":"c1","kind":"file","dir":"conversations","path":"c1.meta","append":true,"text":"x"}"#
        ),
        &[],
        &["stdin:2", "\"append\" to a file that no earlier record"],
    );
    // Records of one conversation split apart: the first c1 was written, so
    // check the message and that the second c1 and c2 were not.
    let s = Scratch::new("split");
    let stream = format!("{GOOD_ROW}\n{}\n{GOOD_ROW}\n", GOOD_ROW.replace("c1", "c2"));
    let out = run(
        "agy-pack",
        &["--root", s.path.to_str().unwrap()],
        stream.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("stdin:3") && stderr(&out).contains("split apart"),
        "{}",
        stderr(&out)
    );
    assert!(s.join("conversations/c1.db").exists() && s.join("conversations/c2.db").exists());
    let leftovers: Vec<_> = std::fs::read_dir(s.join("conversations"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "{leftovers:?}");
}

#[test]
fn pack_refuses_paths_and_sql_that_escape() {
    for id in ["../evil", "a/b", "..", "", ".hidden"] {
        let line = GOOD_ROW.replace("\"c1\"", &serde_json::to_string(id).unwrap());
        refused(&line, &[], &["conversation id"]);
    }
    for path in ["../../etc/passwd", "/etc/passwd", "a/../../b", "a//b"] {
        let line = format!(
            "{{\"conversation\":\"c1\",\"kind\":\"file\",\"path\":{},\"text\":\"x\"}}",
            serde_json::to_string(path).unwrap()
        );
        refused(&line, &[], &["file path"]);
    }
    let schema = |t: &str, sql: &str| {
        format!(
            "{{\"conversation\":\"c1\",\"kind\":\"schema\",\"type\":\"{t}\",\"name\":\"x\",\"sql\":{}}}",
            serde_json::to_string(sql).unwrap()
        )
    };
    for (kind, sql, why) in [
        (
            "table",
            "CREATE TABLE x(a); DROP TABLE y",
            "more than one statement",
        ),
        (
            "table",
            "ATTACH DATABASE '/tmp/evil.db' AS evil",
            "only CREATE TABLE",
        ),
        (
            "trigger",
            "CREATE TRIGGER x AFTER INSERT ON steps BEGIN DELETE FROM steps; END",
            "only CREATE TABLE",
        ),
        ("view", "CREATE VIEW x AS SELECT 1", "only CREATE TABLE"),
        ("table", "CREATE TABLE y(a)", "creates something else"),
    ] {
        refused(&schema(kind, sql), &[], &[why]);
    }
    // A schema that is not agy's: agy-pack would write what agy-dump then
    // skips as "not an agy conversation database", so it refuses it.
    refused(
        &format!("{}\n", schema("table", "CREATE TABLE x(a)")),
        &[],
        &[
            "not an agy conversation: no steps table",
            "conversation \"c1\" not written",
        ],
    );
    let named = |name: &str, sql: &str| {
        format!(
            "{{\"conversation\":\"c1\",\"kind\":\"schema\",\"type\":\"table\",\"name\":\"{name}\",\"sql\":{}}}",
            serde_json::to_string(sql).unwrap()
        )
    };
    refused(
        &format!(
            "{}\n{}\n",
            named(
                "trajectory_meta",
                "CREATE TABLE trajectory_meta (trajectory_id text)"
            ),
            named(
                "steps",
                "CREATE TABLE steps (idx integer, step_payload blob)"
            ),
        ),
        &[],
        &["not an agy conversation: no cascade_id column in table trajectory_meta"],
    );
    refused(
        &format!("{GOOD_ROW}\n{}\n", schema("table", "CREATE TABLE x(a)")),
        &[],
        &["schema must come first"],
    );
    // A file path used twice, and a file where a directory must go.
    let file = |p: &str| {
        format!("{{\"conversation\":\"c1\",\"kind\":\"file\",\"path\":\"{p}\",\"text\":\"x\"}}")
    };
    refused(
        &format!("{}\n{}\n", file("a.txt"), file("a.txt")),
        &[],
        &["appears twice"],
    );
    refused(
        &format!("{}\n{}\n", file("a"), file("a/b")),
        &[],
        &["stdin:2", "file a/b"],
    );
    // Nothing but <id>.meta may be written to conversations/ (the acp
    // lane's sidecar), and nothing outside brain/ and conversations/.
    let evil =
        r#"{"conversation":"c1","kind":"file","dir":"conversations","path":"other.db","text":"x"}"#;
    refused(evil, &[], &["only file allowed in conversations/"]);
    refused(
        r#"{"conversation":"c1","kind":"file","dir":"etc","path":"x","text":"x"}"#,
        &[],
        &["neither brain nor conversations"],
    );
}

#[test]
fn pack_refuses_to_clobber_unless_forced() {
    let s = Scratch::new("clobber");
    let src = s.join("src");
    rich_db(&src, ID).close();
    let stream = dump_of(&[src.to_str().unwrap()]);
    let root = s.join("root");
    let old = AgyDb::create(&root, ID);
    old.user_step(0, "the old conversation");
    old.conn
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    brain_file(&root, ID, "old.txt", b"old");
    let before = files_under(&root);
    let out = run("agy-pack", &["--root", root.to_str().unwrap()], &stream);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("already exists") && stderr(&out).contains("--force"),
        "{}",
        stderr(&out)
    );
    assert_eq!(files_under(&root), before);

    // --force replaces it whole and removes the stale sidecars.
    let old_path = old.path.clone();
    std::mem::forget(old.conn); // as if agy crashed: -wal and -shm stay
    assert!(root.join(format!("conversations/{ID}.db-wal")).exists());
    run_ok(
        "agy-pack",
        &["--root", root.to_str().unwrap(), "--force"],
        &stream,
    );
    assert!(!root.join(format!("conversations/{ID}.db-wal")).exists());
    assert!(!root.join(format!("conversations/{ID}.db-shm")).exists());
    assert!(!root.join(format!("brain/{ID}/old.txt")).exists());
    assert_eq!(
        contents(&old_path),
        contents(&src.join(format!("conversations/{ID}.db")))
    );
    let names: Vec<_> = std::fs::read_dir(root.join("brain"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        [std::ffi::OsString::from(ID)],
        "no temporary or old brain left"
    );
}

#[test]
fn dry_run_validates_and_writes_nothing() {
    let s = Scratch::new("dry");
    let src = s.join("src");
    rich_db(&src, ID).close();
    let stream = dump_of(&[src.to_str().unwrap()]);
    let root = s.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let out = run(
        "agy-pack",
        &["--root", root.to_str().unwrap(), "--dry-run"],
        &stream,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(files_under(&root).is_empty(), "{:?}", files_under(&root));
    let bad =
        String::from_utf8(stream)
            .unwrap()
            .replacen("\"kind\":\"row\"", "\"kind\":\"rwo\"", 1);
    let out = run(
        "agy-pack",
        &["--root", root.to_str().unwrap(), "-n"],
        bad.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(files_under(&root).is_empty());
}

#[test]
fn pack_reads_files_and_stdin_dash_in_order() {
    let s = Scratch::new("inputs");
    let one = s.join("one.ndjson");
    std::fs::write(&one, format!("{}\n", GOOD_ROW)).unwrap();
    let two = GOOD_ROW.replace("c1", "c2");
    let root = s.join("root");
    let out = run_ok(
        "agy-pack",
        &["--root", root.to_str().unwrap(), one.to_str().unwrap(), "-"],
        two.as_bytes(),
    );
    let printed = String::from_utf8(out).unwrap();
    assert_eq!(printed.lines().count(), 2);
    assert!(printed.lines().next().unwrap().ends_with("c1.db"));
    let missing = run(
        "agy-pack",
        &["--root", root.to_str().unwrap(), "/no/such/file"],
        b"",
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("/no/such/file"));
}

#[test]
fn pack_never_writes_through_a_symlinked_store_directory() {
    for linked in ["brain", "conversations"] {
        let s = Scratch::new("symlinked");
        let root = s.join("root");
        let elsewhere = s.join("elsewhere");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join(linked)).unwrap();
        let before = files_under(&s.path);
        let out = run(
            "agy-pack",
            &["--root", root.to_str().unwrap()],
            GOOD_ROW.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(1), "{linked}");
        let err = stderr(&out);
        assert!(
            err.contains(linked) && err.contains("symbolic link"),
            "{err}"
        );
        assert_eq!(
            files_under(&s.path),
            before,
            "{linked}: something was written"
        );
    }
}
