//! agy-dump and agy-pack together: the row stream is a lossless copy of a
//! store, whatever it holds.

mod support;

use rusqlite::{params, Connection};
use support::pb::Msg;
use support::store::{contents, dump_of, files_under, json_lines, rich_db};
use support::{brain_file, run, run_ok, stderr, AgyDb, Scratch};

const ID: &str = "5f0c1f4e-8c3e-4a57-9d1e-2b7c9a0d4e11";

/// How many index records a stream has.
fn index_rows(stream: &[u8]) -> usize {
    json_lines(stream)
        .iter()
        .filter(|r| r["kind"] == "index")
        .count()
}

#[test]
fn dump_then_pack_is_identical_at_the_row_level() {
    let s = Scratch::new("roundtrip");
    let src = s.join("src");
    let db = rich_db(&src, ID);
    let db_path = db.close();
    let stream = dump_of(&[db_path.to_str().unwrap()]);

    let dst = s.join("dst");
    let printed = run_ok("agy-pack", &["--root", dst.to_str().unwrap()], &stream);
    let packed = dst.join("conversations").join(format!("{ID}.db"));
    assert_eq!(
        String::from_utf8(printed).unwrap(),
        format!("{}\n", packed.display())
    );

    assert_eq!(contents(&db_path), contents(&packed));
    // The root had no index: agy-pack made one, with the row derived from
    // the conversation; the rest is what went in.
    let again = dump_of(&[packed.to_str().unwrap()]);
    assert_eq!(index_rows(&again), 1);
    assert!(
        support::without_index(&again) == stream,
        "dumping the packed db gives other bytes"
    );
    assert_eq!(
        files_under(&src.join("brain").join(ID)),
        files_under(&dst.join("brain").join(ID))
    );
    // Packed databases are agy-shaped: WAL journal, page size of agy.
    let conn = Connection::open(&packed).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_blob_larger_than_agy_pack_binds_is_written_in_pieces_and_round_trips() {
    // agy-pack writes blobs over 16 MiB into their row after the insert,
    // a piece at a time; one such payload (not the last column), and one
    // in the last column of its table.
    let s = Scratch::new("huge-blob");
    let src = s.join("src");
    let db_path = rich_db(&src, ID).close();
    let huge = |seed: usize| -> Vec<u8> {
        (0..(17 << 20) + 5)
            .map(|i| ((i * 31 + seed) % 251) as u8)
            .collect()
    };
    {
        let conn = Connection::open(&db_path).unwrap();
        let changed = conn
            .execute(
                "UPDATE steps SET step_payload = ?1 WHERE idx = (SELECT min(idx) FROM steps)",
                params![huge(1)],
            )
            .unwrap();
        assert_eq!(changed, 1);
        conn.execute(
            "INSERT INTO executor_metadata (idx, data) VALUES (?1, ?2)",
            params![9_999, huge(2)],
        )
        .unwrap();
    }
    let stream = dump_of(&[db_path.to_str().unwrap()]);
    let dst = s.join("dst");
    run_ok("agy-pack", &["--root", dst.to_str().unwrap()], &stream);
    let packed = dst.join("conversations").join(format!("{ID}.db"));
    assert_eq!(contents(&db_path), contents(&packed));
    // The root had no index: agy-pack made one, with the row derived from
    // the conversation; the rest is what went in.
    let again = dump_of(&[packed.to_str().unwrap()]);
    assert_eq!(index_rows(&again), 1);
    assert!(
        support::without_index(&again) == stream,
        "dumping the packed db gives other bytes"
    );
}

#[test]
fn large_brain_files_travel_in_parts_of_a_megabyte() {
    const PART: usize = 1 << 20;
    let s = Scratch::new("parts");
    let src = s.join("src");
    let db_path = rich_db(&src, ID).close();
    // Text whose part boundaries fall inside two-, three- and four-byte
    // characters, binary data, and sizes either side of one part.
    let mut text = "a".repeat(PART - 1) + "é";
    text += &"b".repeat(PART - 3);
    text += "✓";
    text += &"c".repeat(PART - 5);
    text += "🦀tail";
    let binary: Vec<u8> = (0..PART * 3 / 2).map(|i| (i * 7 % 256) as u8).collect();
    let files: [(&str, Vec<u8>); 4] = [
        ("big.txt", text.clone().into_bytes()),
        ("big.bin", binary),
        ("exact.txt", vec![b'x'; PART]),
        ("one-more.txt", vec![b'y'; PART + 1]),
    ];
    for (name, content) in &files {
        brain_file(&src, ID, name, content);
    }
    let stream = dump_of(&[db_path.to_str().unwrap()]);
    let file_lines = stream
        .split(|b| *b == b'\n')
        .filter(|l| l.windows(13).any(|w| w == b"\"kind\":\"file\""));
    assert!(
        file_lines.into_iter().all(|l| l.len() < 2 * PART + 200),
        "a file record holds more than one part"
    );
    let records = json_lines(&stream);
    let parts = |path: &str| -> Vec<&serde_json::Value> {
        records.iter().filter(|r| r["path"] == path).collect()
    };
    let big = parts("big.txt");
    assert_eq!(big.len(), 4);
    assert!(big[0].get("append").is_none() && big[1..].iter().all(|r| r["append"] == true));
    // Cut before each multi-byte character, so every part stays text.
    let texts: Vec<&str> = big.iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert_eq!(texts.concat(), text);
    assert_eq!(
        texts.iter().map(|t| t.len()).collect::<Vec<_>>(),
        [PART - 1, PART - 1, PART - 2, 4 + 4]
    );
    assert!(parts("big.bin").iter().all(|r| r.get("hex").is_some()));
    assert_eq!(parts("big.bin").len(), 2);
    assert_eq!(parts("exact.txt").len(), 1);
    assert_eq!(parts("one-more.txt").len(), 2);

    let dst = s.join("dst");
    run_ok("agy-pack", &["--root", dst.to_str().unwrap()], &stream);
    assert_eq!(
        files_under(&src.join("brain").join(ID)),
        files_under(&dst.join("brain").join(ID))
    );
    let packed = dst.join("conversations").join(format!("{ID}.db"));
    assert!(support::without_index(&dump_of(&[packed.to_str().unwrap()])) == stream);
}

#[test]
fn stream_shape_follows_the_contract() {
    let s = Scratch::new("shape");
    let db = rich_db(&s.path, ID);
    db.close();
    let records = json_lines(&dump_of(&[s.path.to_str().unwrap()]));
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[0], "db");
    assert_eq!(records[0]["user_version"], 1);
    let first_row = kinds.iter().position(|k| *k == "row").unwrap();
    let first_file = kinds.iter().position(|k| *k == "file").unwrap();
    assert!(kinds[1..first_row].iter().all(|k| *k == "schema"));
    assert!(kinds[first_row..first_file].iter().all(|k| *k == "row"));
    let last = kinds.len() - 1;
    assert!(kinds[first_file..last].iter().all(|k| *k == "file"));
    // The end record closes the conversation and counts what came before.
    assert_eq!(kinds[last], "end");
    let end = &records[last];
    assert_eq!(end["whole"], true);
    assert_eq!(end["brain"], "read");
    assert_eq!(end["schema"], first_row as u64 - 1);
    assert_eq!(end["files"], (last - first_file) as u64);
    let steps = kinds.len() - records.iter().filter(|r| r["table"] != "steps").count();
    assert_eq!(end["rows"]["steps"], steps as u64);
    assert!(records.iter().all(|r| r["conversation"] == ID));
    // steps rows come after every other table's rows.
    let tables: Vec<&str> = records[first_row..first_file]
        .iter()
        .map(|r| r["table"].as_str().unwrap())
        .collect();
    let first_step = tables.iter().position(|t| *t == "steps").unwrap();
    assert!(tables[first_step..].iter().all(|t| *t == "steps"));
    assert_eq!(tables[0], "trajectory_meta");
    // The seed's example step, byte for byte in its fields.
    let step0 = &records[first_row + first_step];
    assert_eq!(step0["row"]["idx"], 0);
    assert_eq!(step0["row"]["step_type"], 14);
    assert_eq!(
        step0["row"]["metadata"],
        hex::encode(Msg::new().ts(1, 1_786_000_000, 0).varint(3, 4).build())
    );
    let odd = records
        .iter()
        .find(|r| r["table"] == "steps" && r["row"]["idx"] == 4)
        .unwrap();
    assert_eq!(odd["row"]["step_type"], "text-in-int");
    assert_eq!(
        odd["row"]["metadata"],
        serde_json::json!({"text": "text in blob"})
    );
    assert_eq!(odd["row"]["error_details"], 42);
    assert_eq!(
        odd["row"]["task_details"],
        serde_json::json!({"text_hex": "ff00fe"})
    );
    assert_eq!(
        odd["row"]["render_info"],
        serde_json::json!({"real": "inf"})
    );
    assert_eq!(
        odd["row"]["step_payload"],
        serde_json::json!({"real": "-inf"})
    );
    let future = records
        .iter()
        .find(|r| r["table"] == "future_table" && r["row"]["k"] == 11)
        .unwrap();
    assert_eq!(future["row"]["t"], serde_json::json!({"blob": "deadbeef"}));
    assert_eq!(future["row"]["b"], "deadbeef");
    // Files: sorted bytewise, text when UTF-8, hex otherwise.
    let paths: Vec<&str> = records[first_file..last]
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            ".system_generated/logs/transcript.jsonl",
            "steps/2/output.txt",
            "task.md"
        ]
    );
    assert_eq!(records[first_file + 1]["hex"], "fffe0078");
    assert_eq!(records[first_file + 2]["text"], "# Tâche\n");
    // Non-ASCII is written as UTF-8, not \u escapes; reals keep their point.
    let raw = String::from_utf8(dump_of(&[s.path.to_str().unwrap()])).unwrap();
    assert!(raw.contains("Tâche"));
    assert!(raw.contains("\"r\":1.0"));
    // --no-brain drops file records.
    let records = json_lines(&dump_of(&["--no-brain", s.path.to_str().unwrap()]));
    assert!(records.iter().all(|r| r["kind"] != "file"));
}

#[test]
fn a_stream_without_schema_gets_the_agy_ddl() {
    let s = Scratch::new("noschema");
    let (m, p) = support::steps::user_input_step(0, "hello");
    let stream = format!(
        "{{\"conversation\":\"c1\",\"kind\":\"row\",\"table\":\"trajectory_meta\",\"row\":{{\"trajectory_id\":\"t\",\"cascade_id\":\"c1\",\"trajectory_type\":4,\"source\":17}}}}\n\
         {{\"conversation\":\"c1\",\"kind\":\"row\",\"table\":\"steps\",\"row\":{{\"idx\":0,\"step_type\":14,\"status\":3,\"metadata\":\"{}\",\"step_payload\":\"{}\"}}}}\n",
        hex::encode(m),
        hex::encode(p)
    );
    run_ok(
        "agy-pack",
        &["--root", s.path.to_str().unwrap()],
        stream.as_bytes(),
    );
    let c = contents(&s.join("conversations/c1.db"));
    assert_eq!(c.user_version, 1);
    let expected: Vec<String> = support::AGY_DDL.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        c.schema
            .iter()
            .map(|(_, _, sql)| sql.clone())
            .collect::<Vec<_>>(),
        expected
    );
    assert!(s.join("brain/c1/.system_generated/logs").is_dir());
    let steps = &c.tables.iter().find(|(t, _)| t == "steps").unwrap().1;
    assert_eq!(
        steps[0][3],
        ("integer".to_string(), 0i64.to_le_bytes().to_vec()),
        "defaults apply"
    );
}

#[test]
fn many_conversations_round_trip_through_one_stream() {
    let s = Scratch::new("many");
    let src = s.join("src");
    for i in 0..5 {
        let db = AgyDb::create(&src, &format!("conv-{i}"));
        for idx in 0..i {
            db.user_step(idx, &format!("message {idx} of {i}"));
        }
        db.conn
            .execute(
                "INSERT INTO gen_metadata (idx, data, size) VALUES (?1, x'0a00', 2)",
                params![i],
            )
            .unwrap();
        db.close();
        brain_file(
            &src,
            &format!("conv-{i}"),
            "note.md",
            format!("note {i}").as_bytes(),
        );
    }
    let stream = dump_of(&[src.to_str().unwrap()]);
    let dst = s.join("dst");
    let printed = run_ok("agy-pack", &["--root", dst.to_str().unwrap()], &stream);
    assert_eq!(String::from_utf8(printed).unwrap().lines().count(), 5);
    let again = dump_of(&[dst.to_str().unwrap()]);
    assert_eq!(
        index_rows(&again),
        5,
        "the index made lists every conversation"
    );
    assert!(support::without_index(&again) == stream);
}

#[test]
fn acp_meta_sidecar_travels_with_its_conversation() {
    let s = Scratch::new("acp");
    let gemini = s.join("gemini");
    let acp = gemini.join("antigravity-acp");
    AgyDb::create(&acp, ID).close();
    let meta = br#"{"cwd":"/repo","mode_id":"default"}"#;
    std::fs::write(acp.join(format!("conversations/{ID}.meta")), meta).unwrap();
    let env = [("GEMINI_HOME", gemini.to_str().unwrap())];
    let out = support::run_env("agy-dump", &["--lane", "acp"], b"", &env);
    assert!(out.status.success(), "{}", stderr(&out));
    let records = json_lines(&out.stdout);
    let sidecar = records
        .iter()
        .find(|r| r["kind"] == "file" && r["dir"] == "conversations")
        .unwrap();
    assert_eq!(sidecar["path"], format!("{ID}.meta"));
    assert_eq!(sidecar["text"], std::str::from_utf8(meta).unwrap());

    let copy = s.join("copy");
    let dst = copy.join("antigravity-acp");
    let env2 = [("GEMINI_HOME", copy.to_str().unwrap())];
    let packed = support::run_env("agy-pack", &["--lane", "acp"], &out.stdout, &env2);
    assert!(packed.status.success(), "{}", stderr(&packed));
    assert_eq!(
        std::fs::read(dst.join(format!("conversations/{ID}.meta"))).unwrap(),
        meta
    );
    let again = support::run_env("agy-dump", &["--lane", "acp"], b"", &env2).stdout;
    assert!(support::without_index(&again) == out.stdout);
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    for bin in ["agy-dump", "agy-pack"] {
        let out = run(bin, &["--no-such-flag"], b"");
        assert_eq!(out.status.code(), Some(2), "{bin}");
        assert!(stderr(&out).contains("--no-such-flag"));
        assert!(out.stdout.is_empty());
        let out = run(bin, &["--help"], b"");
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("Usage:"));
        let out = run(bin, &["--version"], b"");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{bin} {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
    let out = run("agy-pack", &["--lane", "moon"], b"");
    assert_eq!(out.status.code(), Some(2));
}
