//! `agy-decode | jq '.cwd=…' | agy-encode --onto`: an edited meta record
//! (cwd, git_branch, title) written back where agy keeps it: the
//! trajectory metadata, the index row and the ACP sidecar, as `agy-edit
//! move` writes a moved directory, every other byte as it was.

mod support;

use std::path::Path;

use agy_tools::agy::wire::Message;
use serde_json::Value as Json;
use support::index::{self as idx, Shape};
use support::pb::Msg;
use support::shapes::{
    acp_conversation, real_shaped, subagent_child, ACP_ID as ACP, CHILD_ID as CHILD,
    REAL_ID as REAL,
};
use support::store::json_lines;
use support::{run, run_ok, stderr, AgyDb, Scratch};

const HEADLESS: &str = "9b3e8c7a-5f6d-4eac-a2b1-7d8e9fa0b1c2";

fn build(root: &Path) {
    real_shaped(root);
    subagent_child(root, CHILD, REAL, "/work/app/crates/core");
    acp_conversation(root, ACP, "/work/app/sub");
    // `agy -p` without --add-dir: no workspace, only the project id.
    let db = AgyDb::create(root, HEADLESS);
    db.trajectory_metadata(&Msg::new().str(18, "default-cli-project").build());
    db.user_step(0, "What time is it?");
    db.close();
    idx::create(root, Shape::V3);
    run_ok(
        "agy-pack",
        &["--reindex", "--root", root.to_str().unwrap()],
        b"",
    );
}

fn dump(root: &Path) -> Vec<u8> {
    run_ok("agy-dump", &[root.to_str().unwrap()], b"")
}

/// The meta records of `rows` edited by `edit` (conversation id, record),
/// written back with `agy-encode --onto`, packed into a fresh root and
/// dumped: what agy would find.
fn write_back(s: &Scratch, name: &str, rows: &[u8], edit: impl Fn(&str, &mut Json)) -> Vec<u8> {
    let messages = run_ok("agy-decode", &["--all"], rows);
    let mut edited = Vec::new();
    for line in messages.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut record: Json = serde_json::from_slice(line).unwrap();
        if record["kind"] == "meta" {
            let id = record["conversation"].as_str().unwrap().to_string();
            edit(&id, &mut record);
            serde_json::to_writer(&mut edited, &record).unwrap();
        } else {
            edited.extend_from_slice(line);
        }
        edited.push(b'\n');
    }
    let onto = s.join(format!("{name}.rows"));
    std::fs::write(&onto, rows).unwrap();
    let out = run(
        "agy-encode",
        &["--all", "--onto", onto.to_str().unwrap()],
        &edited,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let root = s.join(format!("{name}.root"));
    run_ok("agy-pack", &["--root", root.to_str().unwrap()], &out.stdout);
    dump(&root)
}

fn lines_of(stream: &[u8], id: &str) -> Vec<Vec<u8>> {
    stream
        .split(|&b| b == b'\n')
        .filter(|l| {
            !l.is_empty()
                && String::from_utf8_lossy(l).contains(&format!("\"conversation\":\"{id}\""))
        })
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn a_new_cwd_is_a_move_of_the_conversations_project() {
    let s = Scratch::new("onto-cwd");
    let root = s.join("store");
    build(&root);
    let original = dump(&root);
    let back = write_back(&s, "cwd", &original, |id, meta| {
        if id == REAL {
            meta["cwd"] = "/srv/app".into();
        }
    });
    // What agy-edit move writes for that conversation, byte for byte; the
    // others as they were.
    // (Without the two records a move adds to ask agy-pack to move the
    // directory in history.jsonl and settings.json: a new cwd re-binds one
    // conversation, it does not move the user's directory.)
    let moved = run_ok("agy-edit", &["move", "/work/app", "/srv/app"], &original);
    let moved: Vec<u8> = moved
        .split_inclusive(|b| *b == b'\n')
        .filter(|line| {
            let record: serde_json::Value = serde_json::from_slice(line).unwrap();
            !(record["kind"] == "side" && record.get("from").is_some())
        })
        .flatten()
        .copied()
        .collect();
    let moved = support::recount(&moved);
    assert!(lines_of(&back, REAL) == lines_of(&moved, REAL));
    for id in [CHILD, ACP, HEADLESS] {
        assert!(lines_of(&back, id) == lines_of(&original, id), "{id}");
    }
    // And edited back, every byte of the start.
    let again = write_back(&s, "cwd-back", &back, |id, meta| {
        if id == REAL {
            meta["cwd"] = "/work/app".into();
        }
    });
    assert!(again == original);
}

#[test]
fn a_branch_or_a_first_directory_goes_where_agy_keeps_it() {
    let s = Scratch::new("onto-branch");
    let root = s.join("store");
    build(&root);
    let original = dump(&root);
    let back = write_back(&s, "branch", &original, |id, meta| match id {
        REAL => meta["git_branch"] = "feature/x".into(),
        HEADLESS => meta["cwd"] = "/home/me/scratch".into(),
        ACP => meta["cwd"] = "/srv/acp".into(),
        _ => {}
    });
    let records = json_lines(&back);
    let find = |id: &str, pick: &dyn Fn(&Json) -> bool| -> Json {
        records
            .iter()
            .find(|r| r["conversation"] == id && pick(r))
            .unwrap()
            .clone()
    };
    let metadata = |id: &str| {
        let row = find(id, &|r| r["table"] == "trajectory_metadata_blob");
        hex::decode(row["row"]["data"].as_str().unwrap()).unwrap()
    };
    let real = metadata(REAL);
    let workspace = Message::new(&real).get_message(1).unwrap();
    assert_eq!(workspace.get_str(4).unwrap(), "feature/x");
    assert_eq!(workspace.get_str(1).unwrap(), "file:///work/app");
    let headless = metadata(HEADLESS);
    let workspace = Message::new(&headless).get_message(1).unwrap();
    assert_eq!(workspace.get_str(1).unwrap(), "file:///home/me/scratch");
    assert_eq!(
        Message::new(&headless).get_str(7).unwrap(),
        "file:///home/me/scratch"
    );
    assert_eq!(
        Message::new(&headless).get_str(18).unwrap(),
        "default-cli-project"
    );
    let index = find(HEADLESS, &|r| r["kind"] == "index");
    assert_eq!(
        index["row"]["workspace_uris"],
        r#"["file:///home/me/scratch"]"#
    );
    // The ACP conversation's metadata stays empty: its sidecar keeps it.
    assert!(metadata(ACP).is_empty());
    let sidecar = find(ACP, &|r| r["kind"] == "file");
    assert_eq!(sidecar["text"], r#"{"cwd":"/srv/acp","mode_id":"default"}"#);
    let listed = run_ok("agy-ls", &[s.join("branch.root").to_str().unwrap()], b"");
    for entry in json_lines(&listed) {
        assert_eq!(entry["index"], "agrees", "{}", entry["id"]);
        if entry["id"] == REAL {
            assert_eq!(entry["branch"], "feature/x");
        }
        if entry["id"] == HEADLESS {
            assert_eq!(entry["cwd"], "/home/me/scratch");
        }
    }
}

#[test]
fn edits_of_what_the_steps_say_are_refused() {
    let s = Scratch::new("onto-meta-refused");
    let root = s.join("store");
    build(&root);
    let original = dump(&root);
    let onto = s.join("rows");
    std::fs::write(&onto, &original).unwrap();
    let messages = run_ok("agy-decode", &["--all"], &original);
    for (edit, words) in [
        (
            r#".model="other""#,
            r#""model" differs from the original's"#,
        ),
        (r#".cwd=null"#, "can be changed, not removed"),
        (r#".cwd="relative/dir""#, "not an absolute path"),
        (r#".cwd=7"#, "not a string"),
    ] {
        let mut edited = Vec::new();
        for line in messages.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let mut record: Json = serde_json::from_slice(line).unwrap();
            if record["kind"] == "meta" && record["conversation"] == REAL {
                let (key, value) = edit[1..].split_once('=').unwrap();
                record[key] = serde_json::from_str(value).unwrap();
            }
            serde_json::to_writer(&mut edited, &record).unwrap();
            edited.push(b'\n');
        }
        let out = run(
            "agy-encode",
            &["--all", "--onto", onto.to_str().unwrap()],
            &edited,
        );
        assert_eq!(out.status.code(), Some(1), "{edit}");
        assert!(stderr(&out).contains(words), "{edit}: {}", stderr(&out));
    }
}
