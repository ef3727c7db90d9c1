//! Fixtures for the integration tests, built in code so each one reads as
//! what it is: a tiny protobuf encoder of our own (independent of the
//! library's writer, so a bug there cannot hide in both), a builder for agy
//! conversation databases, and helpers to run the binaries; for the tests
//! that start real CLIs, where those clients are installed and how a
//! missing one is reported ([`clients`]), the stores they convert
//! ([`corpus`]), what a converted conversation must still hold
//! ([`holds`]), a loopback-only network
//! namespace per test ([`netns`]) and the HTTP server of the fake model
//! APIs ([`fake_http`]); agy's index of conversations, built as agy builds
//! it ([`index`]); the shells completion scripts are tried in
//! ([`shells`]).
#![allow(dead_code)]

pub mod agy12;
pub mod clients;
pub mod corpus;
pub mod fake_http;
pub mod holds;
pub mod index;
pub mod netns;
pub mod pb;
pub mod shapes;
pub mod shells;
pub mod steps;
pub mod store;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rusqlite::{params, Connection};

/// A fresh scratch directory under the target dir, removed on drop.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!(
            "agy-tools-test-{}-{}-{name}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&path).unwrap();
        Scratch { path }
    }

    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.path.join(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The agy 1.0.16 DDL, written out again here so fixtures do not depend on
/// the library's copy.
pub const AGY_DDL: &[&str] = &[
    "CREATE TABLE `trajectory_meta` (`trajectory_id` text,`cascade_id` text,`trajectory_type` integer,`source` integer,PRIMARY KEY (`trajectory_id`))",
    "CREATE TABLE `steps` (`idx` integer,`step_type` integer NOT NULL DEFAULT 0,`status` integer NOT NULL DEFAULT 0,`has_subtrajectory` numeric NOT NULL DEFAULT false,`metadata` blob,`error_details` blob,`permissions` blob,`task_details` blob,`render_info` blob,`step_payload` blob,`step_format` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))",
    "CREATE TABLE `gen_metadata` (`idx` integer,`data` blob,`size` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))",
    "CREATE TABLE `executor_metadata` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))",
    "CREATE TABLE `parent_references` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))",
    "CREATE TABLE `trajectory_metadata_blob` (`id` text DEFAULT \"main\",`data` blob,PRIMARY KEY (`id`))",
    "CREATE TABLE `battle_mode_infos` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))",
    "CREATE INDEX `idx_steps_status` ON `steps`(`status`)",
    "CREATE INDEX `idx_steps_step_type` ON `steps`(`step_type`)",
];

/// A conversation database being built, agy-style.
pub struct AgyDb {
    pub conn: Connection,
    pub path: PathBuf,
    pub id: String,
}

impl AgyDb {
    /// Creates `ROOT/conversations/<id>.db` with agy's schema, user_version 1,
    /// WAL journal, and the trajectory_meta row.
    pub fn create(root: &Path, id: &str) -> AgyDb {
        let dir = root.join("conversations");
        std::fs::create_dir_all(&dir).unwrap();
        AgyDb::create_at(&dir.join(format!("{id}.db")), id)
    }

    pub fn create_at(path: &Path, id: &str) -> AgyDb {
        let conn = Connection::open(path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        for sql in AGY_DDL {
            conn.execute(sql, []).unwrap();
        }
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO trajectory_meta VALUES (?1, ?2, 4, 17)",
            params![format!("traj-{id}"), id],
        )
        .unwrap();
        AgyDb {
            conn,
            path: path.to_path_buf(),
            id: id.to_string(),
        }
    }

    /// Inserts a step row; the step's type, status and metadata columns are
    /// taken from the arguments, as agy mirrors them from the payload.
    pub fn step(&self, idx: i64, step_type: i64, status: i64, metadata: &[u8], payload: &[u8]) {
        self.conn
            .execute(
                "INSERT INTO steps (idx, step_type, status, metadata, step_payload) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![idx, step_type, status, metadata, payload],
            )
            .unwrap();
    }

    /// Inserts a user message at `idx` ([`steps::user_input_step`]).
    pub fn user_step(&self, idx: i64, text: &str) {
        let (metadata, payload) = steps::user_input_step(idx, text);
        self.step(idx, 14, 3, &metadata, &payload);
    }

    /// The "main" trajectory metadata blob.
    pub fn trajectory_metadata(&self, data: &[u8]) {
        self.conn
            .execute(
                "INSERT INTO trajectory_metadata_blob (id, data) VALUES ('main', ?1)",
                params![data],
            )
            .unwrap();
    }

    pub fn gen_metadata(&self, idx: i64, data: &[u8]) {
        self.conn
            .execute(
                "INSERT INTO gen_metadata (idx, data, size) VALUES (?1, ?2, ?3)",
                params![idx, data, data.len() as i64],
            )
            .unwrap();
    }

    /// Closes the connection, checkpointing the WAL into the main file.
    pub fn close(self) -> PathBuf {
        self.conn.close().unwrap();
        self.path
    }
}

/// Writes a brain file under `ROOT/brain/<id>/`.
pub fn brain_file(root: &Path, id: &str, rel: &str, content: &[u8]) {
    let path = root.join("brain").join(id).join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// The path of one of the crate's binaries, which cargo builds beside the
/// test executable's `deps/` directory.
pub fn exe(bin: &str) -> PathBuf {
    let test_exe = std::env::current_exe().unwrap();
    let dir = test_exe.parent().unwrap().parent().unwrap();
    let path = dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} is not built", path.display());
    path
}

/// Runs one of the crate's binaries with `args`, feeding `stdin`.
pub fn run(bin: &str, args: &[&str], stdin: &[u8]) -> Output {
    run_env(bin, args, stdin, &[])
}

pub fn run_env(bin: &str, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe(bin));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// Runs a binary and asserts success, returning stdout.
pub fn run_ok(bin: &str, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = run(bin, args, stdin);
    assert!(
        out.status.success(),
        "{bin} {args:?} failed with {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `stream` (a row stream) with each conversation's end record counting
/// the records the stream now holds, as a user who filters or adds lines
/// by hand has to make it: counted here with serde_json, apart from the
/// library's counting. A conversation without an end record gets none.
/// `stream` without its `index` records, recounted: what a dump of a root
/// gives back of a stream that had none, once agy-pack made the root an
/// index of its own (agy-pack(1), THE INDEX).
pub fn without_index(stream: &[u8]) -> Vec<u8> {
    without_index_rows_but(stream, &[])
}

/// `stream` without the `index` records of the conversations `original`
/// (a stream) has none for, recounted: what a dump of a root agy-pack made
/// from `original` gives back of it, the rows agy-pack derived left out.
pub fn without_derived_index_rows(stream: &[u8], original: &[u8]) -> Vec<u8> {
    let had: Vec<String> = store::json_lines(original)
        .into_iter()
        .filter(|r| r["kind"] == "index")
        .map(|r| r["conversation"].as_str().unwrap().to_string())
        .collect();
    without_index_rows_but(stream, &had)
}

fn without_index_rows_but(stream: &[u8], keep: &[String]) -> Vec<u8> {
    let mut kept = Vec::new();
    for line in stream.split_inclusive(|b| *b == b'\n') {
        let record: serde_json::Value = serde_json::from_slice(line).unwrap();
        let derived = record["kind"] == "index"
            && !keep.iter().any(|id| record["conversation"] == id.as_str());
        if !derived {
            kept.extend_from_slice(line);
        }
    }
    recount(&kept)
}

pub fn recount(stream: &[u8]) -> Vec<u8> {
    use serde_json::{json, Map, Value};
    let mut counts: Map<String, Value> = Map::new();
    let mut out = Vec::new();
    let reset = |counts: &mut Map<String, Value>| {
        *counts = json!({"schema": 0, "rows": {}, "index": 0, "files": 0, "side": 0})
            .as_object()
            .unwrap()
            .clone();
    };
    reset(&mut counts);
    for line in String::from_utf8(stream.to_vec()).unwrap().lines() {
        let mut record: Value = serde_json::from_str(line).unwrap();
        let bump = |v: &mut Value| *v = json!(v.as_u64().unwrap_or(0) + 1);
        match record["kind"].as_str().unwrap() {
            "schema" => bump(&mut counts["schema"]),
            "index" => bump(&mut counts["index"]),
            "file" => bump(&mut counts["files"]),
            "side" => bump(&mut counts["side"]),
            "row" => {
                let table = record["table"].as_str().unwrap().to_string();
                let rows = counts["rows"].as_object_mut().unwrap();
                bump(rows.entry(table).or_insert(json!(0)));
            }
            "end" => {
                for key in ["schema", "rows", "index", "files"] {
                    record[key] = counts[key].clone();
                }
                // Tables in byte order, as the writers give them.
                let rows: std::collections::BTreeMap<String, Value> = counts["rows"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                record["rows"] = json!(rows);
                // Written only when there are any, after the others.
                let object = record.as_object_mut().unwrap();
                object.remove("side");
                if counts["side"].as_u64() != Some(0) {
                    object.insert("side".into(), counts["side"].clone());
                }
                reset(&mut counts);
            }
            _ => {}
        }
        out.extend_from_slice(serde_json::to_string(&record).unwrap().as_bytes());
        out.push(b'\n');
    }
    out
}
