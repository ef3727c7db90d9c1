//! agy-usage: each report's totals are the sums this file computes from the
//! protobuf fields it wrote, in the shapes real agy writes (1.1.x rows with
//! their start time, 1.2 rows without it); copies (a fork, a lane copy, a
//! rewound fork) change no total; what cannot be read, or disagrees, is
//! said; the JSON has ccusage's field names.

mod support;

use std::path::Path;

use serde_json::Value;
use support::pb::Msg;
use support::{run, run_ok, stderr, AgyDb, Scratch};

const A: &str = "0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b";
const B: &str = "4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
const FORK: &str = "9e8d7c6b-5a49-4837-a261-5f4e3d2c1b0a";

/// 2026-12-01T09:10:00Z.
const T: i64 = 1_796_116_200;

/// One generation as the test writes it and sums it.
#[derive(Clone, Copy)]
struct Usage {
    input: u64,
    output: u64,
    cache_write: u64,
    cache_read: u64,
    thinking: u64,
}

impl Usage {
    /// ModelUsageStats: 1 the model enum (never a count), 2-5 the counts,
    /// 9 thinking and 10 response (3 = 9 + 10), 11 the response id.
    fn message(&self, response_id: &str) -> Msg {
        Msg::new()
            .varint(1, 1132)
            .varint(2, self.input)
            .varint(3, self.output)
            .varint(4, self.cache_write)
            .varint(5, self.cache_read)
            .varint(9, self.thinking)
            .varint(10, self.output - self.thinking)
            .str(11, response_id)
    }
}

/// A conversation of `turns` generations, each (seconds after T, model,
/// usage): a user step, then the planner step with the usage in its
/// metadata (9) and time (1), and the generation's row naming the step
/// (2) with ChatModelMetadata {4 usage, 19 model}; `old` rows (agy up to
/// 1.1.17) also carry their start time at 9.4, newer ones 9 {2 = 2^64-1,
/// 10 = 8 bytes} as agy 1.1.18 writes it.
fn conversation(root: &Path, id: &str, turns: &[(i64, &str, Usage)], old: bool) {
    let db = AgyDb::create(root, id);
    db.trajectory_metadata(
        &Msg::new()
            .msg(1, Msg::new().str(1, "file:///home/me/app"))
            .ts(2, T - 60, 0)
            .build(),
    );
    for (n, (after, model, usage)) in turns.iter().enumerate() {
        let user = 2 * n as i64;
        let planner = user + 1;
        db.user_step(user, "go on");
        let response_id = format!("req_{id}_{n}");
        let metadata = Msg::new()
            .ts(1, T + after, 0)
            .msg(9, usage.message(&response_id))
            .build();
        db.step(planner, 15, 3, &metadata, &Msg::new().varint(1, 15).build());
        let timing = match old {
            true => Msg::new().ts(4, T + after - 2, 0),
            false => Msg::new()
                .varint(2, u64::MAX)
                .bytes(10, &[1, 2, 3, 4, 5, 6, 7, 8]),
        };
        let row = Msg::new()
            .msg(
                1,
                Msg::new()
                    .msg(4, usage.message(&response_id))
                    .msg(9, timing)
                    .str(19, model),
            )
            .varint(2, planner as u64)
            .build();
        db.gen_metadata(n as i64, &row);
    }
    db.close();
}

fn u(input: u64, output: u64, cache_write: u64, cache_read: u64) -> Usage {
    Usage {
        input,
        output,
        cache_write,
        cache_read,
        thinking: output / 3,
    }
}

/// Two conversations over two days and two models.
fn store(root: &Path) -> Vec<(i64, &'static str, Usage)> {
    let a = vec![
        (0, "gemini-3-pro-preview", u(1_000, 300, 0, 20_000)),
        (600, "gemini-3-pro-preview", u(2_000, 500, 100, 40_000)),
    ];
    let b = vec![
        (86_400, "claude-sonnet-4-5", u(400, 200, 5_000, 0)),
        (
            86_400 + 7 * 3600,
            "gemini-3-flash-agent",
            u(900, 90, 0, 3_000),
        ),
    ];
    conversation(root, A, &a, true);
    conversation(root, B, &b, false);
    a.into_iter().chain(b).collect()
}

fn usage(args: &[&str]) -> Value {
    let mut all = vec!["--json", "--now", "2026-12-02T18:00:00Z"];
    all.extend_from_slice(args);
    serde_json::from_slice(&run_ok("agy-usage", &all, b"")).unwrap()
}

/// The sums of what was written.
fn sums(turns: &[(i64, &str, Usage)]) -> [u64; 4] {
    let mut s = [0; 4];
    for (_, _, u) in turns {
        s[0] += u.input;
        s[1] += u.output;
        s[2] += u.cache_write;
        s[3] += u.cache_read;
    }
    s
}

fn counts(v: &Value) -> [u64; 4] {
    [
        v["inputTokens"].as_u64().unwrap(),
        v["outputTokens"].as_u64().unwrap(),
        v["cacheCreationTokens"].as_u64().unwrap(),
        v["cacheReadTokens"].as_u64().unwrap(),
    ]
}

#[test]
fn every_report_sums_what_the_rows_say() {
    let s = Scratch::new("usage-sums");
    let root = s.join("cli");
    let turns = store(&root);
    let want = sums(&turns);
    let r = root.to_str().unwrap();
    // Days: the first day is A's, the second B's.
    let daily = usage(&["daily", r]);
    let days: Vec<&str> = daily["daily"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["date"].as_str().unwrap())
        .collect();
    assert_eq!(days, ["2026-12-01", "2026-12-02"]);
    assert_eq!(counts(&daily["daily"][0]), sums(&turns[..2]));
    assert_eq!(counts(&daily["totals"]), want);
    let total: u64 = want.iter().sum();
    assert_eq!(daily["totals"]["totalTokens"], total);
    // The default report is daily.
    assert_eq!(usage(&[r]), daily);
    for (report, key, label) in [
        ("weekly", "weekly", "week"),
        ("monthly", "monthly", "month"),
    ] {
        let v = usage(&[report, r]);
        assert_eq!(counts(&v["totals"]), want, "{report}");
        assert!(v[key][0][label].is_string(), "{report}");
    }
    assert_eq!(usage(&["weekly", r])["weekly"][0]["week"], "2026-11-29");
    assert_eq!(usage(&["monthly", r])["monthly"][0]["month"], "2026-12");
    let sessions = usage(&["session", r]);
    let ids: Vec<&str> = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [A, B]);
    assert_eq!(counts(&sessions["sessions"][1]), sums(&turns[2..]));
    assert_eq!(sessions["sessions"][0]["projectPath"], "/home/me/app");
    assert_eq!(counts(&sessions["totals"]), want);
    // Blocks: A's two in one, B's two 7 hours apart with a gap between;
    // the last is active at --now.
    let blocks = usage(&["blocks", r]);
    let shape: Vec<(String, bool, bool, u64)> = blocks["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["startTime"].as_str().unwrap().to_string(),
                b["isGap"].as_bool().unwrap(),
                b["isActive"].as_bool().unwrap(),
                b["entries"].as_u64().unwrap(),
            )
        })
        .collect();
    let want_blocks = [
        ("2026-12-01T09:00:00Z", false, false, 2),
        ("2026-12-01T14:20:00Z", true, false, 0),
        ("2026-12-02T09:00:00Z", false, false, 1),
        ("2026-12-02T14:10:00Z", true, false, 0),
        ("2026-12-02T16:00:00Z", false, true, 1),
    ];
    let want_blocks: Vec<(String, bool, bool, u64)> = want_blocks
        .iter()
        .map(|(t, gap, active, n)| (t.to_string(), *gap, *active, *n))
        .collect();
    assert_eq!(shape, want_blocks);
    let sum_blocks: u64 = blocks["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["totalTokens"].as_u64().unwrap())
        .sum();
    assert_eq!(sum_blocks, total);
    // --since and --until, both days included.
    let second = usage(&["--since", "20261202", r]);
    assert_eq!(counts(&second["totals"]), sums(&turns[2..]));
    let first = usage(&["--until", "2026-12-01", r]);
    assert_eq!(counts(&first["totals"]), sums(&turns[..2]));
}

#[test]
fn costs_are_list_prices_and_an_unknown_model_is_named() {
    let s = Scratch::new("usage-cost");
    let root = s.join("cli");
    store(&root);
    let r = root.to_str().unwrap();
    let daily = usage(&[r]);
    // Day one: two gemini-3-pro requests, under 200k tokens of prompt.
    let day_one = 3_000.0 * 2e-6 + 800.0 * 12e-6 + 60_000.0 * 0.2e-6;
    let got = daily["daily"][0]["totalCost"].as_f64().unwrap();
    assert!((got - day_one).abs() < 1e-6, "{got} {day_one}");
    assert_eq!(daily["unpricedModels"], serde_json::json!([]));
    // A model no one prices: counted, not priced, named.
    let other = s.join("other");
    conversation(
        &other,
        A,
        &[(0, "gemini-pro-default", u(10, 10, 0, 0))],
        false,
    );
    let out = run("agy-usage", &["--json", other.to_str().unwrap()], b"");
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("gemini-pro-default"),
        "{}",
        stderr(&out)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["unpricedModels"],
        serde_json::json!(["gemini-pro-default"])
    );
    assert_eq!(v["totals"]["inputTokens"], 10);
    // --prices gives one, in LiteLLM's shape.
    let prices = s.join("prices.json");
    std::fs::write(
        &prices,
        r#"{"gemini-pro-default": {"input_cost_per_token": 0.5, "output_cost_per_token": 1.0}}"#,
    )
    .unwrap();
    let v: Value = serde_json::from_slice(&run_ok(
        "agy-usage",
        &[
            "--json",
            "--prices",
            prices.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
        b"",
    ))
    .unwrap();
    assert_eq!(v["totals"]["totalCost"], 15.0);
}

#[test]
fn copies_count_once() {
    let s = Scratch::new("usage-copies");
    let root = s.join("cli");
    let turns = store(&root);
    let r = root.to_str().unwrap();
    let before = usage(&["session", r]);
    // A fork of A beside it, a rewound fork, and A made the desktop app's
    // in a second root read with the first.
    let rows = run_ok("agy-dump", &["--id", A, r], b"");
    let fork = run_ok("agy-edit", &["fork", "--at", "3", "--id", FORK], &rows);
    run_ok("agy-pack", &["--root", r], &fork);
    let desktop = s.join("antigravity");
    let lane = run_ok("agy-edit", &["lane", "desktop"], &rows);
    run_ok("agy-pack", &["--root", desktop.to_str().unwrap()], &lane);
    let rewound = run_ok(
        "agy-edit",
        &["rewind", "--to", "3"],
        &run_ok("agy-dump", &["--id", FORK, r], b""),
    );
    run_ok("agy-pack", &["--force", "--root", r], &rewound);
    let after = usage(&["daily", r, desktop.to_str().unwrap()]);
    assert_eq!(counts(&after["totals"]), sums(&turns));
    assert!(
        after["notes"]["repeated"].as_u64().unwrap() >= 3,
        "{}",
        after["notes"]
    );
    // Per conversation: A keeps what it made; the copies add nothing.
    let sessions = usage(&["session", r]);
    assert_eq!(counts(&sessions["totals"]), counts(&before["totals"]));
}

#[test]
fn a_row_stream_reads_as_its_root() {
    let s = Scratch::new("usage-stream");
    let root = s.join("cli");
    store(&root);
    let r = root.to_str().unwrap();
    let rows = run_ok("agy-dump", &[r], b"");
    let from_stream: Value = serde_json::from_slice(&run_ok(
        "agy-usage",
        &["session", "--json", "--now", "2026-12-02T18:00:00Z", "-"],
        &rows,
    ))
    .unwrap();
    let mut from_root = usage(&["session", r]);
    // The stream carries no index row here, so no title either way.
    from_root["notes"] = from_stream["notes"].clone();
    assert_eq!(from_stream, from_root);
}

#[test]
fn what_cannot_be_read_or_disagrees_is_said() {
    let s = Scratch::new("usage-damage");
    let root = s.join("cli");
    let turns = store(&root);
    let r = root.to_str().unwrap();
    // B's first row cut short; A's second step says other counts than its row.
    let b = rusqlite::Connection::open(root.join(format!("conversations/{B}.db"))).unwrap();
    let data: Vec<u8> = b
        .query_row("SELECT data FROM gen_metadata WHERE idx = 0", [], |r| {
            r.get(0)
        })
        .unwrap();
    b.execute(
        "UPDATE gen_metadata SET data = ?1 WHERE idx = 0",
        [&data[..data.len() - 5]],
    )
    .unwrap();
    drop(b);
    let a = rusqlite::Connection::open(root.join(format!("conversations/{A}.db"))).unwrap();
    let other = Msg::new()
        .ts(1, T + 600, 0)
        .msg(9, u(1, 1, 1, 1).message(&format!("req_{A}_1")))
        .build();
    a.execute("UPDATE steps SET metadata = ?1 WHERE idx = 3", [&other])
        .unwrap();
    drop(a);
    let out = run("agy-usage", &["--json", r], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(B) && err.contains("cannot be read"), "{err}");
    assert!(err.contains("disagree"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["notes"]["unreadable"], 1);
    assert_eq!(v["notes"]["disagreements"], 1);
    // B's first generation is counted from its step, which still says
    // what it consumed; A's second from its row.
    assert_eq!(counts(&v["totals"]), sums(&turns));
}

#[test]
fn the_json_has_ccusages_field_names() {
    let s = Scratch::new("usage-json");
    let root = s.join("cli");
    store(&root);
    let r = root.to_str().unwrap();
    let keys = |v: &Value| -> Vec<String> { v.as_object().unwrap().keys().cloned().collect() };
    // ccusage's daily row (its data-loader's DailyUsage) and totals.
    let daily = usage(&[r]);
    for key in [
        "date",
        "inputTokens",
        "outputTokens",
        "cacheCreationTokens",
        "cacheReadTokens",
        "totalTokens",
        "totalCost",
        "modelsUsed",
        "modelBreakdowns",
    ] {
        assert!(
            keys(&daily["daily"][0]).contains(&key.to_string()),
            "daily {key}"
        );
    }
    for key in [
        "modelName",
        "inputTokens",
        "outputTokens",
        "cacheCreationTokens",
        "cacheReadTokens",
        "cost",
    ] {
        assert!(
            keys(&daily["daily"][0]["modelBreakdowns"][0]).contains(&key.to_string()),
            "breakdown {key}"
        );
    }
    for key in [
        "inputTokens",
        "outputTokens",
        "cacheCreationTokens",
        "cacheReadTokens",
        "totalCost",
        "totalTokens",
    ] {
        assert!(
            keys(&daily["totals"]).contains(&key.to_string()),
            "totals {key}"
        );
    }
    let session = usage(&["session", r]);
    for key in [
        "sessionId",
        "lastActivity",
        "projectPath",
        "modelsUsed",
        "modelBreakdowns",
        "totalCost",
    ] {
        assert!(
            keys(&session["sessions"][0]).contains(&key.to_string()),
            "session {key}"
        );
    }
    let blocks = usage(&["blocks", r]);
    for key in [
        "id",
        "startTime",
        "endTime",
        "actualEndTime",
        "isActive",
        "isGap",
        "entries",
        "tokenCounts",
        "totalTokens",
        "costUSD",
        "models",
        "burnRate",
        "projection",
    ] {
        assert!(
            keys(&blocks["blocks"][0]).contains(&key.to_string()),
            "blocks {key}"
        );
    }
    for key in [
        "inputTokens",
        "outputTokens",
        "cacheCreationInputTokens",
        "cacheReadInputTokens",
    ] {
        assert!(
            keys(&blocks["blocks"][0]["tokenCounts"]).contains(&key.to_string()),
            "tokenCounts {key}"
        );
    }
    let active = blocks["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["isActive"] == true)
        .unwrap();
    for key in ["tokensPerMinute", "costPerHour"] {
        assert!(
            keys(&active["burnRate"]).contains(&key.to_string()),
            "burnRate {key}"
        );
    }
    for key in ["totalTokens", "totalCost", "remainingMinutes"] {
        assert!(
            keys(&active["projection"]).contains(&key.to_string()),
            "projection {key}"
        );
    }
    assert!(
        blocks.get("totals").is_none(),
        "ccusage's blocks have no totals"
    );
}

/// vibewatt (PyPI), another reader of agy's usage records, counts what
/// agy-usage counts: the same responses and the same input, output and
/// cache-read tokens. (It keeps no cache writes for agy, and takes usage
/// field 10 for thinking, which agy-store(5) says is 9: neither compared.)
#[test]
fn vibewatt_counts_what_agy_usage_counts() {
    if !support::netns::isolated() {
        return;
    }
    let Some(vibewatt) = support::clients::client(
        support::clients::ext_dir().join("peers/bin/vibewatt"),
        "vibewatt",
    ) else {
        return;
    };
    let s = Scratch::new("usage-vibewatt");
    let home = s.join("home");
    let root = home.join(".gemini/antigravity-cli");
    let turns = store(&root);
    let args = [
        "json",
        "--source",
        "antigravity",
        "--offline",
        "--no-quota",
        "--tz",
        "UTC",
    ];
    let mut command = std::process::Command::new(&vibewatt);
    command
        .args(args)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_DATA_HOME", home.join(".local/share"));
    let out = support::clients::run(&mut command, "vibewatt", &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = &theirs["total"];
    let ours = usage(&[root.to_str().unwrap()]);
    let want = sums(&turns);
    assert_eq!(total["responses"], turns.len() as u64);
    assert_eq!(total["input"], want[0]);
    assert_eq!(total["output"], want[1]);
    assert_eq!(total["cache_read"], want[3]);
    assert_eq!(counts(&ours["totals"]), want);
}
