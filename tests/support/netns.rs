//! Runs a test inside a loopback-only network namespace, so that a real
//! third-party CLI it starts (Claude Code, Codex, Gemini CLI) can reach the
//! test's fake API on 127.0.0.1 and nothing else: no update check, no
//! telemetry, no model request can leave the machine, whatever the CLI's
//! own settings say.
//!
//! The fake API runs inside the test process, so the server and the CLI
//! must share the namespace. [`isolated`] therefore re-executes the test's
//! own binary for just that one test under
//!
//! ```text
//! unshare --net --pid --fork --kill-child --mount-proc \
//!     sh -c 'ip link set lo up && { TEST-BINARY NAME --exact; exit $?; }'
//! ```
//!
//! with [`MARKER`] set to the test's name. In that child, the same call
//! checks that it really is isolated (its only interface is `lo`, and
//! 127.0.0.1 accepts connections) and tells the test to go on; in the
//! parent it waits for the child, replays its output, and fails when the
//! child failed.
//!
//! The new PID namespace is what stops every process the test started: its
//! first process is that `sh`, and when it ends (with the test binary) the
//! kernel kills everything left in the namespace (a CLI's helper daemon
//! included). `sh` is not replaced by the test binary (no `exec`) because
//! the first process inherits every orphan of the namespace and must reap
//! it: `sh` does while it waits, a test binary would not, and a zombie it
//! left would look like a running process to the CLI that started it
//! (Codex then reports its finished shell command as still running). If
//! the parent gives up on the child (after [`LIMIT`]), it kills `unshare`,
//! whose `--kill-child` takes `sh` down, and with it the rest.
//! `--mount-proc` gives the namespace a `/proc` of its own (in a mount
//! namespace of its own): a CLI that looks up the processes it started
//! there by their pids must find them (Codex otherwise reports a finished
//! command as still running).
//!
//! Usage, at the top of a test that starts a real CLI (after the check
//! that the CLI is installed, so a missing client is reported once):
//!
//! ```ignore
//! if !support::netns::isolated() {
//!     return; // the test ran, and passed, in the namespace
//! }
//! ```
//!
//! Needs `unshare` (util-linux) and `ip` (iproute2); as root it uses the
//! namespaces directly, otherwise it adds a user namespace
//! (`--map-root-user`). Without them the test is SKIPPED loudly, and under
//! `CI` it fails.
#![allow(dead_code)]

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable that tells a re-executed test binary that it
/// is the isolated child, and for which test.
pub const MARKER: &str = "AGY_TEST_NETNS";

/// How long the parent waits for the isolated test before killing it.
pub const LIMIT: Duration = Duration::from_secs(1200);

/// True when the calling test should go on: it now runs in a loopback-only
/// network namespace. False when it should return at once: it was run in
/// such a namespace by a child process, which passed (a failing child
/// fails the test here), or the namespace cannot be made outside CI (said
/// on stderr).
///
/// Must be called from the test's own thread: the test's name is that
/// thread's name, as libtest gives it.
pub fn isolated() -> bool {
    let name = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .expect("netns::isolated() must run on the test's own thread")
        .to_string();
    match std::env::var(MARKER) {
        Ok(marker) if marker == name => {
            assert_isolated();
            true
        }
        Ok(marker) => panic!("{MARKER}={marker} but this is test {name}"),
        Err(_) => {
            run_isolated(&name);
            false
        }
    }
}

/// Whether this process may make namespaces without a user namespace.
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// Where the system keeps `name`; the test's own PATH is not trusted.
fn tool(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .into_iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.exists())
}

/// Runs test `name` of this binary in the namespace and checks it passed.
fn run_isolated(name: &str) {
    let (Some(unshare), Some(ip)) = (tool("unshare"), tool("ip")) else {
        let why = "unshare (util-linux) or ip (iproute2) is missing, so no network namespace";
        super::clients::skip::<()>(why.to_string());
        return;
    };
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(unshare);
    if !is_root() {
        command.arg("--map-root-user");
    }
    command
        .args([
            "--net",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "sh",
            "-c",
        ])
        .arg(format!(
            r#"{} link set lo up && {{ "$0" "$@"; exit $?; }}"#,
            ip.display()
        ))
        .arg(&exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(MARKER, name)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("start unshare");
    // Both pipes are drained while waiting, so a chatty child cannot block.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for unshare") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
    let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
    // Replayed through the test's own capture: shown on failure, or with
    // --nocapture.
    eprint!("{err}");
    let ran = out.contains("running 1 test") && out.contains("test result: ok. 1 passed");
    match status {
        None => panic!("{name} did not finish in its network namespace within {LIMIT:?}\n{out}"),
        Some(status) if !status.success() || !ran => {
            // The child's panic is on its stderr: its end goes into the
            // message, so the failure says why without --nocapture.
            let tail: String = {
                let chars: Vec<char> = err.chars().collect();
                chars[chars.len().saturating_sub(6000)..].iter().collect()
            };
            panic!("{name} failed in its network namespace ({status}):\n{out}\n{tail}")
        }
        Some(_) => {}
    }
}

/// Fails unless this process sees no interface but a working loopback.
fn assert_isolated() {
    let dev = std::fs::read_to_string("/proc/self/net/dev").expect("read /proc/self/net/dev");
    assert_eq!(
        interfaces(&dev),
        ["lo"],
        "{MARKER} is set, but this is not a loopback-only network namespace"
    );
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1 in the namespace");
    TcpStream::connect(listener.local_addr().unwrap())
        .expect("loopback is not up in the namespace");
}

/// The interfaces `/proc/…/net/dev` (its text, `dev`) lists.
pub fn interfaces(dev: &str) -> Vec<&str> {
    dev.lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect()
}
