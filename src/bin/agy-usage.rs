//! agy-usage: what agy's conversations consumed, by day, week, month,
//! conversation or 5-hour block.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::cli::flags::{self, Args, Bin, Program};
use agy_tools::error::{Error, Result};
use agy_tools::store::{dump, index, root};
use agy_tools::stream::io::{Lines, Output};
use agy_tools::time::Timestamp;
use agy_tools::usage::collect::{Collected, Collector};
use agy_tools::usage::output;
use agy_tools::usage::price::{self, Prices};
use agy_tools::usage::report::{self, Period, Range};

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Usage,
    about: "\
Usage: agy-usage [OPTIONS] [daily|weekly|monthly|session|blocks] [ROOT|DB|-]...

Reports what agy's conversations consumed: input, output, cache-write and
cache-read tokens and their API-equivalent cost, per day (the default),
week, month, conversation (session) or 5-hour block (blocks), read exactly
from agy's own usage records and each generation counted once, however many
forks and copies carry it.

Arguments are data roots, conversation .db files, or - for a row stream on
stdin (agy-dump's). With none, the default data root is read:
$GEMINI_HOME/antigravity-cli, else $HOME/.gemini/antigravity-cli.
",
    after: "\
What could not be read, and usage records that disagree, are named on
stderr and counted in the JSON's notes. Exit status: 0 success; 1 when a
conversation or a usage record could not be read, or on an I/O error; 2
usage error. See agy-usage(1).
",
    man: include_str!("../../man/agy-usage.1"),
};

/// The reports, by their word on the command line.
const REPORTS: [&str; 5] = ["daily", "weekly", "monthly", "session", "blocks"];

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    let Some(mut args) = flags::parse(&PROGRAM)? else {
        return Ok(());
    };
    let report = match args.paths.first().and_then(|p| p.to_str()) {
        Some(word) if REPORTS.contains(&word) => {
            let word = word.to_string();
            args.paths.remove(0);
            word
        }
        _ => "daily".to_string(),
    };
    let mut warn = |message: String| agy_tools::error::warn(NAME, message);
    let collected = collect(&args, &mut warn)?;
    let prices = match (args.no_cost, &args.prices) {
        (true, _) => None,
        (false, Some(file)) => Some(Prices::with_file(file)?),
        (false, None) => Some(Prices::built_in()),
    };
    let now = args.now.unwrap_or_else(now);
    let text = write(&report, &args, &collected, prices.as_ref(), now, &mut warn)?;
    let mut out = Output::stdout();
    out.buf().extend_from_slice(text.as_bytes());
    out.flush()?;
    let unread = collected.failed + collected.unreadable;
    if unread > 0 {
        return Err(Error::data(format!(
            "{unread} conversation(s) or usage record(s) could not be read (each named above); the report counts the rest"
        )));
    }
    Ok(())
}

/// Reads every input, each generation once.
fn collect(args: &Args, warn: &mut dyn FnMut(String)) -> Result<Collected> {
    let mut paths: Vec<OsString> = args.paths.clone();
    if paths.is_empty() {
        paths.push(root::default_root(args.lane)?.into());
    }
    let mut collector = Collector::new(warn);
    let mut roots: Vec<(PathBuf, Option<index::Reader>)> = Vec::new();
    for path in paths {
        if path == "-" {
            let mut lines = Lines::open(&path)?;
            collector.stream(&mut lines)?;
            continue;
        }
        for target in dump::targets(&[PathBuf::from(&path)])? {
            let reader = match target.root() {
                Some(root) => {
                    if !roots.iter().any(|(r, _)| r == root) {
                        let reader = index::Reader::open(root).ok().flatten();
                        roots.push((root.to_path_buf(), reader));
                    }
                    roots
                        .iter()
                        .find(|(r, _)| r == root)
                        .and_then(|(_, reader)| reader.as_ref())
                }
                None => None,
            };
            collector.database(&target, reader);
        }
    }
    Ok(collector.collected)
}

/// The report asked for, as JSON or as a table.
fn write(
    report: &str,
    args: &Args,
    collected: &Collected,
    prices: Option<&Prices>,
    now: Timestamp,
    warn: &mut dyn FnMut(String),
) -> Result<String> {
    let range = Range {
        since: args.since,
        until: args.until,
    };
    let cost = prices.is_some();
    let gens = &collected.generations;
    let convs = &collected.conversations;
    let (mut json, table, unpriced) = match report {
        "session" => {
            let r = report::sessions(gens, convs, range, prices);
            let rows: Vec<(String, &report::Tally)> = r
                .rows
                .iter()
                .map(|row| {
                    let title = row.conversation.title.as_deref().unwrap_or("");
                    (
                        format!("{} {title}", short(&row.conversation.id)),
                        &row.tally,
                    )
                })
                .collect();
            let table = output::table("Conversation", &rows, &r.total, cost, args.breakdown);
            (output::sessions_json(&r, cost), table, r.unpriced.clone())
        }
        "blocks" => {
            let r = report::blocks(gens, range, prices, now);
            let rows: Vec<(String, &report::Tally)> = r
                .rows
                .iter()
                .map(|b| {
                    let start = b.start.format().unwrap_or_default();
                    let label = match (b.gap, b.active) {
                        (true, _) => format!("{start} (gap)"),
                        (_, true) => format!("{start} (active)"),
                        _ => start,
                    };
                    (label, &b.tally)
                })
                .collect();
            let table = output::table("Block start", &rows, &r.total, cost, args.breakdown);
            (
                output::blocks_json(&r, now, cost),
                table,
                r.unpriced.clone(),
            )
        }
        word => {
            let (period, key, label, head) = match word {
                "weekly" => (Period::Week, "weekly", "week", "Week"),
                "monthly" => (Period::Month, "monthly", "month", "Month"),
                _ => (Period::Day, "daily", "date", "Date"),
            };
            let r = report::periods(gens, convs, period, range, prices, args.by_project);
            let rows: Vec<(String, &report::Tally)> = r
                .rows
                .iter()
                .map(|row| match &row.project {
                    Some(project) => (format!("{project}  {}", row.label), &row.tally),
                    None => (row.label.clone(), &row.tally),
                })
                .collect();
            let table = output::table(head, &rows, &r.total, cost, args.breakdown);
            (
                output::periods_json(&r, key, label, cost),
                table,
                r.unpriced.clone(),
            )
        }
    };
    for model in &unpriced {
        warn(format!(
            "no price is known for model {model:?}: its tokens are counted, its cost is not (--prices FILE can give one)"
        ));
    }
    if !args.json {
        return Ok(table);
    }
    if let Some(object) = json.as_object_mut() {
        object.insert(
            "notes".into(),
            serde_json::json!({
                "generations": collected.generations.len(),
                "repeated": collected.repeated,
                "disagreements": collected.disagreements,
                "unreadable": collected.unreadable,
                "undated": collected.undated,
                "failedConversations": collected.failed,
                "prices": if cost { price::SOURCE } else { "not computed (--no-cost)" },
            }),
        );
    }
    let mut text = serde_json::to_string_pretty(&json).expect("a JSON value serializes");
    text.push('\n');
    Ok(text)
}

/// A conversation id's first part, for a table.
fn short(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

fn now() -> Timestamp {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Timestamp {
        seconds: since.as_secs() as i64,
        nanos: since.subsec_nanos() as i32,
    }
}
