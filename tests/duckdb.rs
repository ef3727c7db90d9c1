//! The README's DuckDB recipe, run against DuckDB (Python's `duckdb`
//! package): the query in the README is the one tested.
//!
//! DuckDB is looked for as `AGY_DUCKDB_PYTHON` (a Python that can import
//! duckdb), else `target/duckdb-venv/bin/python`, which `.ci/run` makes.
//! Without it the test says so and passes, except under CI.

mod render_fixtures;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use render_fixtures::*;
use serde_json::json;

fn duckdb_python() -> Option<PathBuf> {
    let python = std::env::var_os("AGY_DUCKDB_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/target/duckdb-venv/bin/python"
            ))
        });
    let works = Command::new(&python)
        .args(["-c", "import duckdb"])
        .output()
        .is_ok_and(|out| out.status.success());
    if works {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "DuckDB is not installed; .ci/run makes target/duckdb-venv with it"
    );
    eprintln!(
        "duckdb not found: the README recipe is not checked (pip install duckdb, see .ci/run)"
    );
    None
}

/// The ```sql block of the README's DuckDB section.
fn readme_query() -> String {
    let readme = include_str!("../README.md");
    let section = &readme[readme.find("## Usage in DuckDB").expect("the section")..];
    let start = section.find("```sql\n").expect("a sql block") + "```sql\n".len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

/// Runs `sql` in DuckDB; each result row as a JSON array.
fn duckdb(python: &PathBuf, sql: &str) -> Result<Vec<serde_json::Value>, String> {
    const SCRIPT: &str = r#"
import duckdb, json, sys
try:
    rows = duckdb.sql(sys.argv[1]).fetchall()
except Exception as e:
    print(str(e), file=sys.stderr)
    sys.exit(3)
for row in rows:
    print(json.dumps([str(v) if not isinstance(v, (int, float, type(None))) else v for v in row]))
"#;
    let out = Command::new(python)
        .args(["-c", SCRIPT, sql])
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect())
}

#[test]
fn the_readme_query_counts_tokens_per_model_per_day() {
    let Some(python) = duckdb_python() else {
        return;
    };
    let scratch = std::env::temp_dir().join(format!("agy-duckdb-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    // Two days, two models, and tool inputs that say `Query` and `query`.
    let c = "tokens";
    let stream: String = [
        assistant(c, "2026-08-10T09:00:00Z", "m-a", (100, 10), json!([{"type": "tool_use", "id": "1", "name": "grep_search", "input": {"Query": "x"}}])),
        result(c, "2026-08-10T09:00:01Z", "1", json!("hit"), false),
        assistant(c, "2026-08-10T23:59:59.5Z", "m-b", (200, 20), json!([{"type": "tool_use", "id": "2", "name": "search", "input": {"query": "y"}}])),
        assistant(c, "2026-08-11T00:00:00Z", "m-a", (300, 30), json!([{"type": "text", "text": "done"}])),
        json!({"conversation": c, "kind": "message", "role": "assistant", "timestamp": "2026-08-11T08:00:00Z", "model": "m-a",
               "usage": {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 1000}, "content": []}),
        meta(c, "t", "/w", "main", "m-a"),
    ]
    .into_iter()
    .map(line)
    .chain(std::iter::once(tour()))
    .collect();
    let data = scratch.join("messages.ndjson");
    std::fs::write(&data, &stream).unwrap();

    // What the README says about auto-detection is so.
    let auto = duckdb(
        &python,
        &format!("SELECT count(*) FROM read_json_auto('{}')", data.display()),
    );
    assert!(
        auto.as_ref().is_err_and(|e| e.contains("Duplicate name")),
        "auto-detection: {auto:?}"
    );

    let rows = duckdb(
        &python,
        &readme_query().replace("'messages.ndjson'", &format!("'{}'", data.display())),
    )
    .unwrap();
    let got: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    // The expected sums, from the stream itself.
    let mut expected: BTreeMap<(String, String), (u64, u64, u64)> = BTreeMap::new();
    for line in stream.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        if r["kind"] != "message" || r["role"] != "assistant" {
            continue;
        }
        let day = r["timestamp"].as_str().unwrap()[..10].to_string();
        let sums = expected
            .entry((day, r["model"].as_str().unwrap().to_string()))
            .or_default();
        sums.0 += r["usage"]["input_tokens"].as_u64().unwrap_or(0);
        sums.1 += r["usage"]["output_tokens"].as_u64().unwrap_or(0);
        sums.2 += r["usage"]["cache_read_input_tokens"].as_u64().unwrap_or(0);
    }
    let want: Vec<String> = expected
        .iter()
        .map(|((day, model), (i, o, c))| {
            let cache = if *c == 0 {
                serde_json::Value::Null
            } else {
                json!(c)
            };
            json!([model, day, i, o, cache]).to_string()
        })
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(got, want);
}
