//! agy-dump as a nightly job uses it: `--changed-since` picks what changed,
//! and a conversation that cannot be read does not stop the others.

mod support;

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

use support::{run, stderr, AgyDb, Scratch};

/// Sets the modification time of `path` (a file or a directory).
fn set_mtime(path: &Path, time: SystemTime) {
    File::open(path).unwrap().set_modified(time).unwrap();
}

/// The conversations of a row stream, in order.
fn conversations(stdout: &[u8]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = record["conversation"].as_str().unwrap().to_string();
        if ids.last() != Some(&id) {
            ids.push(id);
        }
    }
    ids
}

const T0: u64 = 1_780_000_000;

fn at(seconds: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
}

#[test]
fn changed_since_picks_what_changed_one_file_at_a_time() {
    let s = Scratch::new("changed-since");
    let root = s.join("root");
    for id in ["a", "b", "c"] {
        let db = AgyDb::create(&root, id);
        db.user_step(0, &format!("hello from {id}"));
        db.close();
    }
    support::brain_file(&root, "c", "notes/plan.md", b"# plan");
    std::fs::write(root.join("conversations/b.db-wal"), b"").unwrap();
    // Everything as of T0, the stamp at T0 + 100.
    let everything = [
        "conversations/a.db",
        "conversations/b.db",
        "conversations/b.db-wal",
        "conversations/c.db",
        "brain/c/notes/plan.md",
        "brain/c/notes",
        "brain/c",
    ];
    let reset = || {
        for path in everything {
            set_mtime(&root.join(path), at(T0));
        }
    };
    reset();
    let stamp = s.join("stamp");
    std::fs::write(&stamp, b"").unwrap();
    set_mtime(&stamp, at(T0 + 100));
    let dump = |stamp: &str| {
        let out = run(
            "agy-dump",
            &["--changed-since", stamp, root.to_str().unwrap()],
            b"",
        );
        assert!(out.status.success(), "{}", stderr(&out));
        conversations(&out.stdout)
    };
    let stamp = stamp.to_str().unwrap();
    assert!(dump(stamp).is_empty(), "nothing changed after the stamp");

    set_mtime(&root.join("conversations/a.db"), at(T0 + 200));
    assert_eq!(dump(stamp), ["a"], "the database");
    reset();

    set_mtime(&root.join("conversations/b.db-wal"), at(T0 + 200));
    assert_eq!(dump(stamp), ["b"], "its -wal");
    reset();

    set_mtime(&root.join("brain/c/notes/plan.md"), at(T0 + 200));
    assert_eq!(dump(stamp), ["c"], "a brain file");
    reset();

    // A brain file removed shows in its directory's time.
    set_mtime(&root.join("brain/c/notes"), at(T0 + 200));
    assert_eq!(dump(stamp), ["c"], "a brain directory");
    reset();

    // The same with the stamp as an RFC 3339 time, to the second.
    set_mtime(&root.join("conversations/a.db"), at(T0 + 101));
    assert_eq!(dump("2026-05-28T20:28:20Z"), ["a"]);
    assert!(
        dump("2026-05-28T20:28:21Z").is_empty(),
        "not after the file's time"
    );
    assert_eq!(dump("2026-05-28T22:28:20+02:00"), ["a"]);

    // A stamp that is neither a file nor a time is a usage error.
    let out = run(
        "agy-dump",
        &["--changed-since", "yesterday", root.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no such file, and not an RFC 3339 time"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn one_unreadable_conversation_does_not_stop_the_others() {
    let s = Scratch::new("batch-dump");
    let root = s.join("root");
    for id in ["a", "b", "c", "d"] {
        let db = AgyDb::create(&root, id);
        db.conn
            .pragma_update(None, "journal_mode", "DELETE")
            .unwrap();
        for idx in 0..if id == "b" { 400 } else { 2 } {
            db.user_step(idx, &format!("{id} {idx} {}", "text ".repeat(40)));
        }
        db.close();
    }
    // b: its steps pages overwritten after its first records were read,
    // so the dump fails part way; d: a link to nothing, so it fails to open.
    let b = root.join("conversations/b.db");
    let mut bytes = std::fs::read(&b).unwrap();
    let len = bytes.len();
    for byte in &mut bytes[len / 2..] {
        *byte = 0xA5;
    }
    std::fs::write(&b, bytes).unwrap();
    let d = root.join("conversations/d.db");
    std::fs::remove_file(&d).unwrap();
    std::os::unix::fs::symlink(s.join("nowhere.db"), &d).unwrap();

    let out = run("agy-dump", &[root.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("b.db: table steps: database disk image is malformed: page "),
        "{err}"
    );
    assert!(
        err.contains(
            "(cut short; its records so far are in the output, closed by an end record that says so)"
        ),
        "{err}"
    );
    // b's records end with an end record that says it is not whole, and
    // why; a and c end with whole ones.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let ends: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"kind\":\"end\""))
        .collect();
    assert_eq!(ends.len(), 3, "{ends:?}");
    assert!(
        ends[1].starts_with("{\"conversation\":\"b\",\"kind\":\"end\",\"whole\":false,\"error\":\"table steps: database disk image is malformed"),
        "{}",
        ends[1]
    );
    for end in [ends[0], ends[2]] {
        assert!(end.contains("\"whole\":true,\"brain\":\"read\""), "{end}");
    }
    assert!(
        err.contains("d.db: ") && err.contains("(not dumped)"),
        "{err}"
    );
    assert!(
        err.contains("agy-dump: 2 of 4 conversations could not be dumped (each named above)"),
        "{err}"
    );
    assert_eq!(conversations(&out.stdout), ["a", "b", "c"]);
    // The conversations that could be read are whole: they decode.
    let whole: Vec<u8> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"conversation\":\"b\""))
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect();
    let messages = support::run_ok("agy-decode", &[], &whole);
    let text = String::from_utf8(messages).unwrap();
    assert!(text.contains("a 1 text") && text.contains("c 1 text"));
}
