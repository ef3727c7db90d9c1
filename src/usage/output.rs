//! A report written out: as ccusage's `--json` is (its field names and
//! nesting, so that what reads ccusage's JSON reads this), or as a table
//! for people.
//!
//! To ccusage's fields each row adds what agy says and Claude Code does
//! not: `thinkingTokens` (of the output) and, for a conversation, its
//! `title`. The JSON's top level adds `unpricedModels`, the models whose
//! cost is not in `totalCost`.

use serde_json::{json, Map, Value};

use crate::time::Timestamp;

use super::report::{Block, PeriodRow, Report, SessionRow, Tally};
use super::Tokens;

/// Rounds a cost to what a report shows: a millionth of a dollar, so that
/// a JSON number does not carry float noise.
fn money(cost: f64) -> Value {
    json!((cost * 1e6).round() / 1e6)
}

fn time(t: Timestamp) -> Value {
    Value::from(t.format().unwrap_or_default())
}

/// ccusage's counts of a tally (and its breakdown by model).
fn counts(tally: &Tally, cost: bool) -> Map<String, Value> {
    let t = &tally.tokens;
    let mut row = Map::new();
    row.insert("inputTokens".into(), t.input.into());
    row.insert("outputTokens".into(), t.output.into());
    row.insert("cacheCreationTokens".into(), t.cache_write.into());
    row.insert("cacheReadTokens".into(), t.cache_read.into());
    row.insert("thinkingTokens".into(), t.thinking.into());
    row.insert("totalTokens".into(), t.total().into());
    row.insert(
        "totalCost".into(),
        if cost { money(tally.cost) } else { json!(0) },
    );
    row
}

fn models(tally: &Tally, cost: bool) -> (Value, Value) {
    let used: Vec<Value> = tally
        .models
        .keys()
        .map(|m| Value::from(m.as_str()))
        .collect();
    let breakdowns: Vec<Value> = tally
        .models
        .iter()
        .map(|(name, (t, c))| {
            json!({
                "modelName": name,
                "inputTokens": t.input,
                "outputTokens": t.output,
                "cacheCreationTokens": t.cache_write,
                "cacheReadTokens": t.cache_read,
                "cost": if cost { money(*c) } else { json!(0) },
            })
        })
        .collect();
    (Value::Array(used), Value::Array(breakdowns))
}

fn totals(tally: &Tally, cost: bool) -> Value {
    let t = &tally.tokens;
    json!({
        "inputTokens": t.input,
        "outputTokens": t.output,
        "cacheCreationTokens": t.cache_write,
        "cacheReadTokens": t.cache_read,
        "totalCost": if cost { money(tally.cost) } else { json!(0) },
        "totalTokens": t.total(),
    })
}

/// `daily`, `weekly` or `monthly` (`key`), each row labelled by `label`
/// (`date`, `week`, `month`); grouped by project, ccusage's `--instances`
/// shape: `{"projects": {name: [rows]}, "totals"}`.
pub fn periods_json(report: &Report<PeriodRow>, key: &str, label: &str, cost: bool) -> Value {
    let row = |r: &PeriodRow| {
        let mut row = Map::new();
        row.insert(label.into(), Value::from(r.label.as_str()));
        row.extend(counts(&r.tally, cost));
        let (used, breakdowns) = models(&r.tally, cost);
        row.insert("modelsUsed".into(), used);
        row.insert("modelBreakdowns".into(), breakdowns);
        if let Some(project) = &r.project {
            row.insert("project".into(), Value::from(project.as_str()));
        }
        Value::Object(row)
    };
    let mut out = Map::new();
    if report.rows.iter().any(|r| r.project.is_some()) {
        let mut projects: Map<String, Value> = Map::new();
        for r in &report.rows {
            let name = r.project.clone().unwrap_or_default();
            match projects.get_mut(&name) {
                Some(Value::Array(rows)) => rows.push(row(r)),
                _ => {
                    projects.insert(name, Value::Array(vec![row(r)]));
                }
            }
        }
        out.insert("projects".into(), Value::Object(projects));
    } else {
        out.insert(key.into(), report.rows.iter().map(row).collect());
    }
    out.insert("totals".into(), totals(&report.total, cost));
    unpriced(&mut out, &report.unpriced, cost);
    Value::Object(out)
}

/// `{"sessions": [...], "totals"}`.
pub fn sessions_json(report: &Report<SessionRow>, cost: bool) -> Value {
    let rows: Vec<Value> = report
        .rows
        .iter()
        .map(|r| {
            let mut row = Map::new();
            row.insert("sessionId".into(), Value::from(r.conversation.id.as_str()));
            row.extend(counts(&r.tally, cost));
            row.insert(
                "lastActivity".into(),
                r.last
                    .map(|t| Value::from(crate::time::Day::of(t).format()))
                    .unwrap_or(Value::Null),
            );
            let (used, breakdowns) = models(&r.tally, cost);
            row.insert("modelsUsed".into(), used);
            row.insert("modelBreakdowns".into(), breakdowns);
            row.insert(
                "projectPath".into(),
                Value::from(r.conversation.project.clone().unwrap_or_default()),
            );
            row.insert(
                "title".into(),
                r.conversation
                    .title
                    .clone()
                    .map(Value::from)
                    .unwrap_or(Value::Null),
            );
            Value::Object(row)
        })
        .collect();
    let mut out = Map::new();
    out.insert("sessions".into(), Value::Array(rows));
    out.insert("totals".into(), totals(&report.total, cost));
    unpriced(&mut out, &report.unpriced, cost);
    Value::Object(out)
}

/// `{"blocks": [...]}`, as ccusage writes them (no totals).
pub fn blocks_json(report: &Report<Block>, now: Timestamp, cost: bool) -> Value {
    let rows: Vec<Value> = report
        .rows
        .iter()
        .map(|b| {
            let t = &b.tally.tokens;
            let id = match b.gap {
                true => format!("gap-{}", b.start.format().unwrap_or_default()),
                false => b.start.format().unwrap_or_default(),
            };
            let (burn, projection) = match (b.active, b.last) {
                (true, Some(last)) => burn_rate(b, last, now, cost),
                _ => (Value::Null, Value::Null),
            };
            json!({
                "id": id,
                "startTime": time(b.start),
                "endTime": time(b.end),
                "actualEndTime": b.last.map(time).unwrap_or(Value::Null),
                "isActive": b.active,
                "isGap": b.gap,
                "entries": b.tally.generations,
                "tokenCounts": {
                    "inputTokens": t.input,
                    "outputTokens": t.output,
                    "cacheCreationInputTokens": t.cache_write,
                    "cacheReadInputTokens": t.cache_read,
                },
                "totalTokens": t.total(),
                "costUSD": if cost { money(b.tally.cost) } else { json!(0) },
                "models": b.tally.models.keys().collect::<Vec<_>>(),
                "burnRate": burn,
                "projection": projection,
            })
        })
        .collect();
    let mut out = Map::new();
    out.insert("blocks".into(), Value::Array(rows));
    unpriced(&mut out, &report.unpriced, cost);
    Value::Object(out)
}

/// An active block's rate (over the time from its start to its last
/// generation, at least a minute) and what it comes to by the block's end.
fn burn_rate(block: &Block, last: Timestamp, now: Timestamp, cost: bool) -> (Value, Value) {
    let minutes = ((last.seconds - block.start.seconds) as f64 / 60.0).max(1.0);
    let tokens = block.tally.tokens.total() as f64;
    let per_minute = tokens / minutes;
    let cost_per_hour = if cost {
        block.tally.cost / minutes * 60.0
    } else {
        0.0
    };
    let remaining = ((block.end.seconds - now.seconds).max(0) as f64 / 60.0).round();
    let burn = json!({
        "tokensPerMinute": per_minute,
        "tokensPerMinuteForIndicator": per_minute,
        "costPerHour": (cost_per_hour * 1e6).round() / 1e6,
    });
    let projection = json!({
        "totalTokens": (tokens + per_minute * remaining).round() as u64,
        "totalCost": money(block.tally.cost + cost_per_hour / 60.0 * remaining),
        "remainingMinutes": remaining as u64,
    });
    (burn, projection)
}

fn unpriced(out: &mut Map<String, Value>, models: &[String], cost: bool) {
    if cost {
        out.insert(
            "unpricedModels".into(),
            models.iter().map(|m| Value::from(m.as_str())).collect(),
        );
    }
}

/// A table for people: one line a row, a total last; with `breakdown`,
/// each model's line under its row.
pub fn table(
    header: &str,
    rows: &[(String, &Tally)],
    total: &Tally,
    cost: bool,
    breakdown: bool,
) -> String {
    let mut lines: Vec<Vec<String>> = Vec::new();
    let mut heads = vec![
        header,
        "Models",
        "Input",
        "Output",
        "Cache Create",
        "Cache Read",
        "Total Tokens",
    ];
    if cost {
        heads.push("Cost (USD)");
    }
    lines.push(heads.iter().map(|h| h.to_string()).collect());
    let line = |label: String, models: String, t: &Tokens, c: f64| {
        let mut cells = vec![
            label,
            models,
            group(t.input),
            group(t.output),
            group(t.cache_write),
            group(t.cache_read),
            group(t.total()),
        ];
        if cost {
            cells.push(format!("${c:.2}"));
        }
        cells
    };
    for (label, tally) in rows {
        let names: Vec<&str> = tally.models.keys().map(String::as_str).collect();
        lines.push(line(
            label.clone(),
            names.join(", "),
            &tally.tokens,
            tally.cost,
        ));
        if breakdown {
            for (name, (t, c)) in &tally.models {
                lines.push(line(format!("  └ {name}"), String::new(), t, *c));
            }
        }
    }
    lines.push(line(
        "Total".into(),
        String::new(),
        &total.tokens,
        total.cost,
    ));
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|i| {
            lines
                .iter()
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (n, cells) in lines.iter().enumerate() {
        if n == lines.len() - 1 {
            out.push_str(&rule(&widths));
        }
        for (i, cell) in cells.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i > 0 {
                out.push_str("  ");
            }
            // Labels and models to the left, numbers to the right.
            match i < 2 {
                true => {
                    out.push_str(cell);
                    if i + 1 < cells.len() {
                        out.push_str(&" ".repeat(pad));
                    }
                }
                false => {
                    out.push_str(&" ".repeat(pad));
                    out.push_str(cell);
                }
            }
        }
        out.push('\n');
        if n == 0 {
            out.push_str(&rule(&widths));
        }
    }
    out
}

fn rule(widths: &[usize]) -> String {
    let len = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    format!("{}\n", "-".repeat(len))
}

/// `1234567` as `1,234,567`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1_234_567), "1,234,567");
    }
}
