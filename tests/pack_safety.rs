//! agy-pack under duress: killed at any point, racing another agy-pack for
//! the same conversation, and fed a batch with bad conversations in it.
//! What a conversation "is" here is what agy-dump makes of it.

mod support;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use support::pb::Msg;
use support::steps::{self, DONE, USER_INPUT};
use support::{brain_file, run, run_ok, stderr, AgyDb, Scratch};

const ID: &str = "0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b";

/// The row stream of conversation `id`: `count` steps, an ACP `.meta`
/// sidecar and a brain; with `big`, the brain holds a file large enough to
/// travel in three parts. `salt` makes two versions differ in every one of
/// those.
fn stream(s: &Scratch, id: &str, count: i64, salt: &str, big: bool) -> Vec<u8> {
    let src = s.join(format!("src-{id}-{salt}"));
    let db = AgyDb::create(&src, id);
    for idx in 0..count {
        let metadata = steps::metadata(1_786_000_000 + idx, 1);
        let text = format!("{salt}: message {idx}. ").repeat(12);
        let payload = steps::step(USER_INPUT, DONE, &metadata, 19, Msg::new().str(2, &text));
        db.step(idx, USER_INPUT as i64, DONE as i64, &metadata.0, &payload.0);
    }
    db.close();
    brain_file(
        &src,
        id,
        ".system_generated/logs/transcript.jsonl",
        format!("{{\"salt\":\"{salt}\"}}\n").as_bytes(),
    );
    let lines = if big {
        (5 << 20) / (salt.len() + 12) / 2
    } else {
        3
    };
    let notes = format!("{salt} brain line\n").repeat(lines);
    brain_file(&src, id, "notes/big.md", notes.as_bytes());
    std::fs::write(
        src.join(format!("conversations/{id}.meta")),
        format!("{{\"cwd\":\"/{salt}\"}}"),
    )
    .unwrap();
    run_ok("agy-dump", &[src.to_str().unwrap()], b"")
}

/// A root with empty store directories, as agy leaves a fresh one.
fn empty_root(s: &Scratch, name: &str) -> PathBuf {
    let root = s.join(name);
    for dir in ["conversations", "brain"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    root
}

/// Conversation `id` under `root` as agy-dump sees it, or a note of which
/// of its parts are there when its database is not.
fn state(root: &Path, id: &str) -> Vec<u8> {
    if root.join(format!("conversations/{id}.db")).exists() {
        // The index agy-pack makes in a root without one is THE INDEX's
        // business (tests/index.rs), not this file's.
        let dumped = run_ok("agy-dump", &["--id", id, root.to_str().unwrap()], b"");
        return support::without_index(&dumped);
    }
    format!(
        "no database; brain: {}; meta: {}",
        root.join("brain").join(id).exists(),
        root.join(format!("conversations/{id}.meta")).exists()
    )
    .into_bytes()
}

const ABSENT: &[u8] = b"no database; brain: false; meta: false";

/// The hidden entries in the store directories: agy-pack's temporaries
/// and locks, since nothing else there starts with a dot.
fn leftovers(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["conversations", "brain"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    out
}

/// Which of two versions a state is, for messages.
fn which(state: &[u8], versions: &[(&str, &[u8])]) -> String {
    versions
        .iter()
        .find(|(_, v)| *v == state)
        .map(|(name, _)| name.to_string())
        .unwrap_or_else(|| format!("neither ({} bytes)", state.len()))
}

fn spawn_pack(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(support::exe("agy-pack"));
    cmd.arg("--root")
        .arg(root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// Bytes written into a child's standard input that it has not read yet.
fn unread(stdin: &ChildStdin) -> usize {
    use std::os::fd::AsRawFd;
    extern "C" {
        fn ioctl(fd: i32, request: std::ffi::c_ulong, ...) -> i32;
    }
    const FIONREAD: std::ffi::c_ulong = 0x541B;
    let mut n: i32 = 0;
    // SAFETY: FIONREAD stores one int through the pointer, which is valid.
    let rc = unsafe { ioctl(stdin.as_raw_fd(), FIONREAD, &mut n as *mut i32) };
    assert_eq!(rc, 0, "FIONREAD: {}", std::io::Error::last_os_error());
    n as usize
}

/// Waits until `child` has read everything written to its stdin (or has
/// exited). Polls; the limit only keeps a broken build from hanging CI.
fn wait_until_read(child: &mut Child) {
    for _ in 0..60_000 {
        if unread(child.stdin.as_ref().unwrap()) == 0 || child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("agy-pack did not read its input in a minute");
}

/// Waits until `path` exists. Polls, with the same guard.
fn wait_for(path: &Path) {
    for _ in 0..60_000 {
        if path.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("{} did not appear in a minute", path.display());
}

/// The lock file agy-pack holds while it writes conversation `id`.
fn lock_of(root: &Path, id: &str) -> PathBuf {
    root.join(format!("conversations/.{id}.agy-pack.lock"))
}

/// Packs a one-step conversation `id` into `root`: the "next run" after a
/// kill, which must clear what the killed one left. Returns its stderr.
fn next_run(root: &Path, id: &str) -> String {
    let line = steps::row(
        id,
        0,
        USER_INPUT,
        DONE,
        &steps::metadata(1, 1),
        &Msg::new().varint(1, 14),
    );
    // An end record without counts: whole, nothing more said.
    let end = format!(
        "{{\"conversation\":\"{id}\",\"kind\":\"end\",\"whole\":true,\"brain\":\"read\"}}\n"
    );
    let out = run(
        "agy-pack",
        &["--root", root.to_str().unwrap()],
        format!("{}\n{end}", line.trim_end()).as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    stderr(&out)
}

/// Where to kill a run: after whole lines, and inside a line.
fn cut_points(stream: &[u8]) -> Vec<usize> {
    let ends: Vec<usize> = stream
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let mut cuts = vec![0, ends[0], ends[1], ends[2] - 7];
    let step = ends.len() / 9;
    cuts.extend(ends.iter().step_by(step).skip(1).copied());
    // Into the middle of each part of the large brain file, and the end.
    let long: Vec<usize> = ends
        .windows(2)
        .filter(|w| w[1] - w[0] > 1 << 19)
        .map(|w| w[0] + (w[1] - w[0]) / 2)
        .collect();
    assert_eq!(long.len(), 3, "the big file travels in three parts");
    cuts.extend(long);
    cuts.push(stream.len());
    cuts.sort();
    cuts.dedup();
    cuts
}

#[test]
fn a_run_killed_while_reading_leaves_the_old_conversation_and_the_next_run_clears_up() {
    let s = Scratch::new("killed");
    let new = stream(&s, ID, 90, "new", true);
    let old_stream = stream(&s, ID, 40, "old", true);
    let cuts = cut_points(&new);
    assert!(cuts.len() >= 15, "{cuts:?}");
    for force in [false, true] {
        let root = empty_root(&s, &format!("root-{force}"));
        let args: &[&str] = if force { &["--force"] } else { &[] };
        if force {
            run_ok("agy-pack", &["--root", root.to_str().unwrap()], &old_stream);
        }
        let old = state(&root, ID);
        assert!(old != new);
        for (round, &cut) in cuts.iter().enumerate() {
            let mut child = spawn_pack(&root, args, &[]);
            let stdin = child.stdin.as_mut().unwrap();
            stdin.write_all(&new[..cut]).unwrap();
            wait_until_read(&mut child);
            // Standard input stays open: the run is still reading.
            child.kill().unwrap();
            let status = child.wait().unwrap();
            assert_eq!(status.signal(), Some(9), "round {round}: {status:?}");
            let after = state(&root, ID);
            assert!(
                after == old,
                "force {force}, killed after {cut} of {} bytes: the conversation is {}",
                new.len(),
                which(&after, &[("new", &new)])
            );
            let left = leftovers(&root);
            let warnings = next_run(&root, &format!("other-{round}"));
            if left.iter().any(|name| !name.ends_with(".lock")) {
                assert!(
                    warnings.contains(&format!(
                        "removed the temporary files of conversation \"{ID}\" that a killed agy-pack left"
                    )),
                    "{left:?}: {warnings}"
                );
            }
            assert_eq!(leftovers(&root), Vec::<String>::new(), "after {cut}");
            assert!(state(&root, ID) == old);
        }
        // And a run that is not killed writes it whole.
        run_ok(
            "agy-pack",
            &["--root", root.to_str().unwrap(), "--force"],
            &new,
        );
        assert!(state(&root, ID) == new);
        assert_eq!(leftovers(&root), Vec::<String>::new());
    }
}

#[test]
fn a_run_killed_while_putting_a_conversation_in_place_is_finished_by_the_next() {
    let s = Scratch::new("killed-at");
    let new = stream(&s, ID, 30, "new", true);
    let old_stream = stream(&s, ID, 20, "old", true);
    // The steps of agy-pack's commit, in order; the first two come before
    // its point of no return (the `.ready` rename).
    let steps = [
        "written",
        "synced",
        "ready",
        "sidecars",
        "meta",
        "brain-aside",
        "brain",
        "db",
    ];
    for (force, root_name) in [(true, "replace"), (false, "fresh")] {
        for (i, step) in steps.iter().enumerate() {
            if !force && *step == "brain-aside" {
                continue; // nothing to move aside in a fresh root
            }
            let root = empty_root(&s, &format!("{root_name}-{step}"));
            if force {
                run_ok("agy-pack", &["--root", root.to_str().unwrap()], &old_stream);
            }
            let old = state(&root, ID);
            let args: &[&str] = if force { &["--force"] } else { &[] };
            let mut child = spawn_pack(&root, args, &[("AGY_PACK_KILL_AT", step)]);
            child.stdin.take().unwrap().write_all(&new).unwrap();
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.signal(), Some(9), "{step}: {}", stderr(&out));
            let after = state(&root, ID);
            let versions: [(&str, &[u8]); 2] = [("old", &old), ("new", &new)];
            let ready = root.join(format!("conversations/.{ID}.db.agy-pack.ready"));
            match *step {
                "written" | "synced" | "ready" | "sidecars" => {
                    assert!(after == old, "{step}: {}", which(&after, &versions));
                }
                "db" => assert!(after == new, "{step}: {}", which(&after, &versions)),
                // Between the first and the last rename a reader sees part
                // of each (the man page says so); the replacement is
                // already bound to finish.
                _ => assert!(ready.exists(), "{step}: {:?}", leftovers(&root)),
            }
            let warnings = next_run(&root, "other");
            let expected: &[u8] = if i < 2 { &old } else { &new };
            assert_eq!(steps[..2], ["written", "synced"]);
            let after = state(&root, ID);
            assert!(
                after == expected,
                "{root_name}, killed after {step}, then another run: {}",
                which(&after, &versions)
            );
            // After the last rename the conversation's row is still to
            // write (the root had no index: agy-pack makes one), with the
            // old brain directory to remove when there was one.
            let note = match *step {
                "written" | "synced" => "removed the temporary files of conversation",
                _ => "finished replacing conversation",
            };
            assert!(warnings.contains(note), "{step}: {warnings}");
            assert_eq!(leftovers(&root), Vec::<String>::new(), "{step}");
        }
    }
}

#[test]
fn a_kill_between_another_runs_start_and_its_turn_is_cleared_by_that_run() {
    // The next run may have looked for leftovers before the killed run
    // left them: it clears them when it comes to the conversation.
    let s = Scratch::new("killed-late");
    let new = stream(&s, ID, 30, "new", true);
    let root = empty_root(&s, "root");
    let mut later = spawn_pack(&root, &[], &[]);
    let first = steps::row(
        "first",
        0,
        USER_INPUT,
        DONE,
        &steps::metadata(1, 1),
        &Msg::new(),
    ) + "\n";
    later
        .stdin
        .as_mut()
        .unwrap()
        .write_all(first.as_bytes())
        .unwrap();
    wait_for(&lock_of(&root, "first"));
    let mut killed = spawn_pack(&root, &[], &[]);
    killed
        .stdin
        .as_mut()
        .unwrap()
        .write_all(&new[..new.len() / 2])
        .unwrap();
    wait_until_read(&mut killed);
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(!leftovers(&root).is_empty());
    later.stdin.as_mut().unwrap().write_all(&new).unwrap();
    drop(later.stdin.take());
    let out = later.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!(
        "removed the temporary files of conversation \"{ID}\""
    )));
    assert!(state(&root, ID) == new);
    assert_eq!(leftovers(&root), Vec::<String>::new());
}

#[test]
fn of_two_runs_writing_one_conversation_one_wins_and_the_other_says_why() {
    let s = Scratch::new("two-writers");
    let a = stream(&s, ID, 30, "a", true);
    let b = stream(&s, ID, 25, "b", true);
    let old_stream = stream(&s, ID, 20, "old", true);
    for force in [false, true] {
        let root = empty_root(&s, &format!("root-{force}"));
        if force {
            run_ok("agy-pack", &["--root", root.to_str().unwrap()], &old_stream);
        }
        let args: &[&str] = if force { &["--force"] } else { &[] };
        // The first run is half way through its stream when the second
        // comes with all of its own.
        let mut first = spawn_pack(&root, args, &[]);
        first
            .stdin
            .as_mut()
            .unwrap()
            .write_all(&a[..a.len() / 2])
            .unwrap();
        // Its temporary database comes after its claim.
        wait_for(&root.join(format!("conversations/.{ID}.db.agy-pack.tmp")));
        let mut all = vec!["--root", root.to_str().unwrap()];
        all.extend_from_slice(args);
        let second = run("agy-pack", &all, &b);
        assert_eq!(second.status.code(), Some(1), "{}", stderr(&second));
        let err = stderr(&second);
        assert!(
            err.contains(&format!(
                "stdin:1: conversation \"{ID}\" is being written by another agy-pack (process {})",
                first.id()
            )) && err.contains("not written"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(second.stdout.is_empty());
        first
            .stdin
            .as_mut()
            .unwrap()
            .write_all(&a[a.len() / 2..])
            .unwrap();
        drop(first.stdin.take());
        let out = first.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), "");
        assert!(state(&root, ID) == a);
        assert_eq!(leftovers(&root), Vec::<String>::new());
    }
}

/// Locks `path` the way agy-pack claims a conversation, saying `why`.
fn hold_lock(path: &Path, why: &str) -> std::fs::File {
    use std::os::fd::AsRawFd;
    extern "C" {
        fn flock(fd: i32, operation: i32) -> i32;
    }
    const LOCK_EX: i32 = 2;
    let mut file = std::fs::File::create(path).unwrap();
    // SAFETY: flock takes an open descriptor and an int.
    assert_eq!(unsafe { flock(file.as_raw_fd(), LOCK_EX) }, 0);
    file.write_all(why.as_bytes()).unwrap();
    file
}

#[test]
fn a_writer_waits_for_a_run_that_only_clears_leftovers() {
    let s = Scratch::new("clearing");
    let new = stream(&s, ID, 5, "new", false);
    for why in ["clearing 1\n", ""] {
        let root = empty_root(&s, &format!("root-{}", why.len()));
        let lock = lock_of(&root, ID);
        let held = hold_lock(&lock, why);
        let mut child = spawn_pack(&root, &[], &[]);
        child.stdin.as_mut().unwrap().write_all(&new).unwrap();
        wait_until_read(&mut child);
        drop(child.stdin.take());
        // Give it time to find the claim taken (not an assertion: if it
        // has not tried yet, it simply finds the claim free).
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(child.try_wait().unwrap().is_none(), "{why:?}: it gave up");
        std::fs::remove_file(&lock).unwrap();
        drop(held);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{why:?}: {}", stderr(&out));
        assert!(state(&root, ID) == new);
        assert_eq!(leftovers(&root), Vec::<String>::new());
    }
}

#[test]
fn racing_runs_never_mix_two_conversations() {
    let s = Scratch::new("race");
    let a = stream(&s, ID, 30, "a", true);
    let b = stream(&s, ID, 25, "b", true);
    let root = empty_root(&s, "root");
    run_ok(
        "agy-pack",
        &["--root", root.to_str().unwrap()],
        &stream(&s, ID, 20, "old", true),
    );
    for round in 0..6 {
        let mut runs: Vec<Child> = (0..2)
            .map(|_| spawn_pack(&root, &["--force"], &[]))
            .collect();
        let writers: Vec<_> = runs
            .iter_mut()
            .zip([a.clone(), b.clone()])
            .map(|(child, input)| {
                let mut stdin = child.stdin.take().unwrap();
                std::thread::spawn(move || {
                    let _ = stdin.write_all(&input);
                })
            })
            .collect();
        let outs: Vec<_> = runs
            .into_iter()
            .map(|child| child.wait_with_output().unwrap())
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let mut winners = Vec::new();
        for (out, (name, input)) in outs.iter().zip([("a", &a), ("b", &b)]) {
            if out.status.success() {
                winners.push(input.as_slice());
            } else {
                assert_eq!(out.status.code(), Some(1), "{round} {name}");
                assert!(
                    stderr(out).contains("is being written by another agy-pack"),
                    "{}",
                    stderr(out)
                );
            }
        }
        assert!(!winners.is_empty(), "round {round}: nobody won");
        let after = state(&root, ID);
        assert!(
            winners.contains(&after.as_slice()),
            "round {round}: {}",
            which(&after, &[("a", &a), ("b", &b)])
        );
        assert_eq!(leftovers(&root), Vec::<String>::new());
    }
}

/// Lines of a stream, with their newlines.
fn lines(stream: &[u8]) -> Vec<Vec<u8>> {
    stream
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn a_batch_writes_every_conversation_it_can_and_names_each_it_cannot() {
    let s = Scratch::new("batch");
    let ids: Vec<String> = (0..9).map(|i| format!("c{i}")).collect();
    let mut parts: Vec<Vec<Vec<u8>>> = ids
        .iter()
        .map(|id| lines(&stream(&s, id, 3, id, false)))
        .collect();
    let line_of = |parts: &[Vec<Vec<u8>>], id: usize, needle: &str| -> usize {
        parts[id]
            .iter()
            .position(|l| String::from_utf8_lossy(l).contains(needle))
            .unwrap()
    };
    // c1: a row with bad hex half way through.
    let at = line_of(&parts, 1, "\"table\":\"steps\"");
    parts[1][at] = String::from_utf8(parts[1][at].clone())
        .unwrap()
        .replacen("\"metadata\":\"", "\"metadata\":\"zz", 1)
        .into_bytes();
    // c2 is followed by three lines that are not JSON: the rest of c2
    // cannot be trusted; c3 begins with its db record, so it can.
    parts[2].extend([
        b"{\"conversation\":\"c2\",\"kind\":\"ro\n".to_vec(),
        b"\x00\x01\n".to_vec(),
        b"}\n".to_vec(),
    ]);
    // c4 already exists under the root; a line that is not JSON follows
    // it while no conversation is in progress.
    parts[4].push(b"not JSON at all\n".to_vec());
    // c5: a brain file path that climbs out.
    let at = line_of(&parts, 5, "\"path\":\"notes/");
    parts[5][at] = String::from_utf8(parts[5][at].clone())
        .unwrap()
        .replacen("\"path\":\"", "\"path\":\"../../", 1)
        .into_bytes();
    // c7 lost its first lines (db and schema) to one that is not JSON,
    // which might as well be the end of c6: both fail.
    let first_row = line_of(&parts, 7, "\"kind\":\"row\"");
    parts[7].splice(
        0..first_row,
        [b"{\"conversation\":\"c7\",\"kind\":\"db\"\n".to_vec()],
    );
    let input: Vec<u8> = parts.concat().concat();
    let place = |needle: &[u8]| {
        let lines = lines(&input);
        1 + lines
            .iter()
            .position(|l| l.windows(needle.len()).any(|w| w == needle))
            .unwrap()
    };

    let root = empty_root(&s, "root");
    let c4_before = stream(&s, "c4", 1, "already there", false);
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &c4_before);
    let c4_before = state(&root, "c4");
    let out = run("agy-pack", &["--root", root.to_str().unwrap()], &input);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    let written: Vec<String> = String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| {
            Path::new(l)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(written, ["c0", "c3", "c8"]);
    for id in &written {
        let i: usize = id[1..].parse().unwrap();
        assert!(state(&root, id) == parts[i].concat(), "{id}");
    }
    for id in ["c1", "c2", "c5", "c6", "c7"] {
        assert_eq!(state(&root, id), ABSENT, "{id}");
    }
    assert!(state(&root, "c4") == c4_before);
    assert_eq!(leftovers(&root), Vec::<String>::new());

    let err = stderr(&out);
    let bad_db = place(b"\"kind\":\"db\"\n");
    let expected = [
        format!("agy-pack: stdin:{}: row of table steps: column metadata: ", place(b"\"metadata\":\"zz")),
        format!("agy-pack: stdin:{}: bad JSON", place(b"\"kind\":\"ro\n")),
        format!("agy-pack: stdin:{}: 2 more unreadable lines after stdin:{} skipped", place(b"\x00\x01") + 1, place(b"\"kind\":\"ro\n")),
        format!("agy-pack: stdin:{}: conversation \"c4\" already exists", place(b"\"conversation\":\"c4\"")),
        format!("agy-pack: stdin:{}: bad JSON", place(b"not JSON at all")),
        format!("agy-pack: stdin:{}: file ../../", place(b"\"path\":\"../../")),
        format!("agy-pack: stdin:{bad_db}: bad JSON"),
        format!(
            "agy-pack: stdin:{}: its records begin after line stdin:{bad_db}, which could not be read",
            place(b"\"conversation\":\"c7\",\"kind\":\"row\""),
        ),
    ];
    let got: Vec<&str> = err.lines().collect();
    assert_eq!(got.len(), expected.len(), "{err}");
    for (line, start) in got.iter().zip(&expected) {
        assert!(
            line.starts_with(start.as_str()),
            "{line:?} does not start with {start:?}"
        );
    }
    let not_written = |id: &str| format!("(conversation \"{id}\" not written)");
    for (line, id) in [
        (0, "c1"),
        (1, "c2"),
        (3, "c4"),
        (5, "c5"),
        (6, "c6"),
        (7, "c7"),
    ] {
        assert!(got[line].ends_with(&not_written(id)), "{}", got[line]);
    }
    assert!(got[4].ends_with("(line skipped)"), "{}", got[4]);
}

#[test]
fn an_unreadable_input_among_several_does_not_stop_the_others() {
    let s = Scratch::new("inputs");
    let one = s.join("one.ndjson");
    std::fs::write(&one, stream(&s, "c1", 2, "one", false)).unwrap();
    let root = empty_root(&s, "root");
    let out = run(
        "agy-pack",
        &[
            "--root",
            root.to_str().unwrap(),
            "/no/such/input",
            one.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("agy-pack: /no/such/input: ")
            && err.trim_end().ends_with("(input skipped)"),
        "{err}"
    );
    assert!(state(&root, "c1") == std::fs::read(&one).unwrap());
}
