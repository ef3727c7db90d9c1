//! The stores whose every conversation the format tests convert for the
//! real clients (tests/formats.rs, tests/gemini_cli.rs): the sample store,
//! and the generator's varieties (typed and GENERIC eras, failed calls,
//! system messages, outputs long enough to spill into brain files); their
//! rows, as agy-dump writes them; and a store made of a client's own
//! session file ([`into_agy`]).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::store::json_lines;
use super::{exe, run_ok, stderr, Scratch};

/// The sample store of the repository (`examples/sample`).
pub fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sample")
}

/// The generator, built by `cargo test` with the other examples (or here,
/// when only a test target was built).
pub fn gen_store() -> PathBuf {
    let path = exe("agy-dump").parent().unwrap().join(format!(
        "examples/gen-store{}",
        std::env::consts::EXE_SUFFIX
    ));
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--example", "gen-store"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success(), "cargo build --example gen-store failed");
    }
    path
}

/// The sample store, then the generator's stores "varied" and "spilled"
/// (four conversations each), generated under `scratch`.
pub fn stores(scratch: &Scratch) -> Vec<PathBuf> {
    let varied = [
        "--conversations",
        "4",
        "--steps",
        "40",
        "--max-output",
        "3000",
        "--seed",
        "11",
    ];
    let spilled = [
        "--conversations",
        "4",
        "--steps",
        "16",
        "--max-output",
        "90000",
        "--seed",
        "5",
    ];
    vec![
        sample(),
        generate(scratch, "varied", &varied),
        generate(scratch, "spilled", &spilled),
    ]
}

/// The store `gen-store ARGS` writes at `scratch/NAME`.
pub fn generate(scratch: &Scratch, name: &str, args: &[&str]) -> PathBuf {
    let root = scratch.join(name);
    let out = Command::new(gen_store())
        .arg("--root")
        .arg(&root)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "gen-store {args:?}: {}", stderr(&out));
    root
}

/// agy-decode's arguments that write `format`'s session files into the
/// client's directory `out_dir`, for the project `cwd`.
pub fn out_dir_args<'a>(format: &'a str, out_dir: &'a Path, cwd: &'a Path) -> Vec<&'a str> {
    vec![
        "--format",
        format,
        "--out-dir",
        out_dir.to_str().unwrap(),
        "--cwd",
        cwd.to_str().unwrap(),
    ]
}

/// The rows of the store at `root`: agy-dump's output, which must succeed.
pub fn rows(root: &Path) -> Vec<u8> {
    run_ok("agy-dump", &[root.to_str().unwrap()], b"")
}

/// A client's session `file` into agy and out again: `agy-encode --format
/// FORMAT FILE`, packed by agy-pack into the store `agy-ID` under
/// `scratch`. Returns the store's rows and the plain message stream
/// agy-decode reads from them.
pub fn into_agy(scratch: &Scratch, format: &str, file: &Path, id: &str) -> (Vec<u8>, Vec<Value>) {
    let encoded = run_ok(
        "agy-encode",
        &["--format", format, file.to_str().unwrap()],
        b"",
    );
    let root = scratch.join(format!("agy-{id}"));
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &encoded);
    let rows = rows(&root);
    let decoded = json_lines(&run_ok("agy-decode", &[], &rows));
    (rows, decoded)
}
