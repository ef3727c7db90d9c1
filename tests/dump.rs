//! agy-dump reading a store: live, crashed and read-only databases, what
//! discovery skips, which conversations it picks, and a reader that stops.

mod support;

use rusqlite::Connection;
use support::store::{dump_of, files_under, json_lines, rich_db};
use support::{brain_file, run, stderr, AgyDb, Scratch};

const ID: &str = "5f0c1f4e-8c3e-4a57-9d1e-2b7c9a0d4e11";

#[test]
fn dump_reads_the_wal_and_changes_nothing() {
    let s = Scratch::new("wal");
    let live = AgyDb::create(&s.path, ID);
    live.conn
        .pragma_update(None, "wal_autocheckpoint", 0)
        .unwrap();
    for idx in 0..7 {
        live.user_step(idx, "still in the WAL");
    }
    let conversations = s.join("conversations");
    assert!(conversations.join(format!("{ID}.db-wal")).exists());
    // A live writer beside us: the -shm is there.
    let before = files_under(&s.path);
    let records = json_lines(&dump_of(&[s.path.to_str().unwrap()]));
    assert_eq!(records.iter().filter(|r| r["table"] == "steps").count(), 7);
    assert_eq!(files_under(&s.path), before, "dumping changed the store");

    // A crashed agy: db and WAL, no -shm.
    let crashed = Scratch::new("crashed");
    let dir = crashed.join("conversations");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        conversations.join(format!("{ID}.db")),
        dir.join(format!("{ID}.db")),
    )
    .unwrap();
    std::fs::copy(
        conversations.join(format!("{ID}.db-wal")),
        dir.join(format!("{ID}.db-wal")),
    )
    .unwrap();
    let before = files_under(&crashed.path);
    let crashed_records = json_lines(&dump_of(&[crashed.path.to_str().unwrap()]));
    assert_eq!(crashed_records, records);
    assert_eq!(
        files_under(&crashed.path),
        before,
        "dumping changed the crashed store"
    );

    // Closed cleanly: no sidecars, and none appear.
    drop(live);
    assert!(!conversations.join(format!("{ID}.db-wal")).exists());
    let before = files_under(&s.path);
    assert_eq!(json_lines(&dump_of(&[s.path.to_str().unwrap()])), records);
    assert_eq!(files_under(&s.path), before);
}

#[test]
fn dump_works_from_a_read_only_copy() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("readonly");
    rich_db(&s.path, ID).close();
    let expected = dump_of(&[s.path.to_str().unwrap()]);
    let dir = s.join("conversations");
    let db = dir.join(format!("{ID}.db"));
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let got = dump_of(&[s.path.to_str().unwrap()]);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(got == expected);
}

#[test]
fn discovery_skips_what_is_not_agy_with_one_warning_each() {
    let s = Scratch::new("discovery");
    AgyDb::create(&s.path, "b-conversation").close();
    AgyDb::create(&s.path, "a-conversation").close();
    let dir = s.join("conversations");
    std::fs::write(dir.join("empty.db"), b"").unwrap();
    std::fs::write(dir.join("garbage.db"), b"this is not sqlite at all, not even close......................................................................................").unwrap();
    std::fs::write(dir.join("old.pb"), b"\x01\x02").unwrap();
    let foreign = Connection::open(dir.join("foreign.db")).unwrap();
    foreign.execute("CREATE TABLE notes (x)", []).unwrap();
    drop(foreign);

    let out = run("agy-dump", &[s.path.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let ids: Vec<String> = json_lines(&out.stdout)
        .iter()
        .filter(|r| r["kind"] == "db")
        .map(|r| r["conversation"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["a-conversation", "b-conversation"]);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 3, "{err}");
    for name in ["empty.db", "garbage.db", "foreign.db"] {
        assert!(
            err.lines()
                .any(|l| l.contains(name) && l.contains("skipped")),
            "{err}"
        );
    }

    for name in ["empty.db", "garbage.db", "foreign.db"] {
        let out = run("agy-dump", &[dir.join(name).to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert!(
            stderr(&out).contains(name)
                && stderr(&out).contains("not an agy conversation database")
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn ids_select_conversations_and_default_root_comes_from_the_environment() {
    let s = Scratch::new("ids");
    let root = s.join("home/.gemini/antigravity-cli");
    AgyDb::create(&root, "one").close();
    AgyDb::create(&root, "two").close();
    let home = s.join("home");
    let out = support::run_env(
        "agy-dump",
        &["--id", "two"],
        b"",
        &[("HOME", home.to_str().unwrap()), ("GEMINI_HOME", "")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let records = json_lines(&out.stdout);
    assert!(!records.is_empty() && records.iter().all(|r| r["conversation"] == "two"));

    let gemini = s.join("elsewhere");
    AgyDb::create(&gemini.join("antigravity-cli"), "three").close();
    let out = support::run_env(
        "agy-dump",
        &[],
        b"",
        &[
            ("HOME", home.to_str().unwrap()),
            ("GEMINI_HOME", gemini.to_str().unwrap()),
        ],
    );
    assert!(json_lines(&out.stdout)
        .iter()
        .all(|r| r["conversation"] == "three"));

    let out = run("agy-dump", &["--id", "nope", root.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("\"nope\""));
}

#[test]
fn brain_symlinks_are_skipped_not_followed() {
    let s = Scratch::new("symlink");
    AgyDb::create(&s.path, ID).close();
    brain_file(&s.path, ID, "real.txt", b"real");
    std::fs::write(s.join("secret"), b"secret").unwrap();
    std::os::unix::fs::symlink(s.join("secret"), s.join("brain").join(ID).join("link.txt"))
        .unwrap();
    let out = run("agy-dump", &[s.path.to_str().unwrap()], b"");
    assert!(out.status.success());
    let files: Vec<String> = json_lines(&out.stdout)
        .iter()
        .filter(|r| r["kind"] == "file")
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files, ["real.txt"]);
    assert!(stderr(&out).contains("link.txt") && stderr(&out).contains("symbolic link"));
}

#[test]
fn dump_into_a_closed_pipe_exits_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let s = Scratch::new("pipe");
    rich_db(&s.path, ID).close();
    let mut child = Command::new(support::exe("agy-dump"))
        .arg(&s.path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader is dropped here, like `head -1` exiting.
    let out = child.wait_with_output().unwrap();
    assert!(first.contains("\"kind\":\"db\""));
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(stderr(&out), "");
}
