//! The network-namespace harness of `support::netns`, which every test
//! that starts a real CLI runs in: the test goes on only inside a
//! loopback-only namespace, what it starts is in there too, and whatever
//! it leaves running is gone when it ends.

mod support;

use std::process::{Command, Stdio};

/// A word only the orphan this test leaves behind has on its command line.
const ORPHAN: &str = "agy-netns-orphan-probe";

/// Processes on the machine whose command line holds [`ORPHAN`].
fn orphans() -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(ORPHAN) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

#[test]
fn a_test_runs_alone_on_loopback_and_leaves_nothing_running() {
    if !support::netns::isolated() {
        // Back in the parent: the child passed, and the process it left
        // behind went with its PID namespace.
        let left = orphans();
        assert!(left.is_empty(), "still running: {left:?}");
        return;
    }
    // What the test starts shares its namespace: one interface, lo.
    let out = Command::new("cat")
        .arg("/proc/self/net/dev")
        .output()
        .unwrap();
    let dev = String::from_utf8(out.stdout).unwrap();
    assert_eq!(support::netns::interfaces(&dev), ["lo"]);
    // A server in the test and a client it starts meet on 127.0.0.1.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut client = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port} && echo hello >&3"
        ))
        .spawn()
        .unwrap();
    let (stream, _) = listener.accept().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stream), &mut line).unwrap();
    assert_eq!(line, "hello\n");
    assert!(client.wait().unwrap().success());
    // A process left running on purpose (sh waits for sleep, so its command
    // line, with the marker, stays visible).
    let orphan = Command::new("sh")
        .arg("-c")
        .arg(format!("sleep 600; : {ORPHAN}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::mem::forget(orphan);
    // Its command line is there once its sh has run (a moment after the
    // spawn returns).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while orphans().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the orphan did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
