//! The real third-party clients the format tests drive (the `anthropic`
//! SDK's Python, Claude Code, Codex CLI, Gemini CLI on node, OpenCode):
//! where `.ci/run` installs them (`target/ext/`, or the directory named by
//! `AGY_TEST_EXT`), the loud SKIP when one is missing (a failure under
//! `CI`, whose `.ci/run` installs every client), and a run of one with a
//! time limit ([`run`]).
//!
//! Usage, at the top of a test that needs a client:
//!
//! ```ignore
//! let Some(codex) = support::clients::codex() else { return };
//! ```
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The environment variable naming the directory the clients are
/// installed in, instead of `target/ext/`.
pub const EXT_VAR: &str = "AGY_TEST_EXT";

/// How long a run of a client may take before it is killed.
pub const RUN_LIMIT: Duration = Duration::from_secs(120);

/// Where the clients are installed: `$AGY_TEST_EXT`, else `target/ext/`.
pub fn ext_dir() -> PathBuf {
    match std::env::var_os(EXT_VAR) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ext"),
    }
}

/// Says loudly on stderr why the test cannot run, and returns `None`;
/// under `CI` it fails the test with `why` instead.
pub fn skip<T>(why: String) -> Option<T> {
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// `path` if it exists; otherwise [`skip`]s, saying that `what` is not
/// installed there.
pub fn client(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    skip(format!(
        "{what} is not installed at {}; .ci/run installs it",
        path.display()
    ))
}

/// The Python of the venv with the pinned `anthropic` SDK.
pub fn python() -> Option<PathBuf> {
    client(
        ext_dir().join("venv/bin/python"),
        "the anthropic SDK's venv",
    )
}

/// Claude Code's native binary.
pub fn claude() -> Option<PathBuf> {
    client(
        ext_dir().join("claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude"),
        "Claude Code",
    )
}

/// Codex CLI's native binary.
pub fn codex() -> Option<PathBuf> {
    client(
        ext_dir().join(
            "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        ),
        "Codex CLI",
    )
}

/// OpenCode's native binary.
pub fn opencode() -> Option<PathBuf> {
    client(
        ext_dir().join("opencode/node_modules/opencode-linux-x64/bin/opencode"),
        "OpenCode",
    )
}

/// Node and Gemini CLI's entry script, when both are there.
pub fn gemini() -> Option<(PathBuf, PathBuf)> {
    let script = client(
        ext_dir().join("gemini-cli/node_modules/@google/gemini-cli/bundle/gemini.js"),
        "Gemini CLI",
    )?;
    let node = ["/usr/local/bin/node", "/usr/bin/node"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    match node {
        Some(node) => Some((node, script)),
        None => skip("node is not installed; Gemini CLI runs on it".to_string()),
    }
}

/// Runs `command`, client `what` with `args`, with no stdin, and returns
/// its output; kills it (and fails) when it takes longer than
/// [`RUN_LIMIT`].
pub fn run(command: &mut Command, what: &str, args: &[&str]) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + RUN_LIMIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} {args:?} did not finish in two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}
