//! agy-usage's flags: which span, how it is shown, what it costs.

use lexopt::ValueExt;

use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};
use crate::error::{Error, Result};
use crate::time::{Day, Timestamp};

/// A `--since`/`--until` day.
fn day(flag: &str, value: std::ffi::OsString) -> Result<Day> {
    let text = value.string()?;
    Day::parse(&text).ok_or_else(|| {
        Error::usage(format!(
            "--{flag} takes a day, YYYY-MM-DD or YYYYMMDD, not {text:?}"
        ))
    })
}

pub(super) static FLAGS: &[Flag] = &[
    Flag {
        long: "since",
        short: None,
        kind: Kind::Value {
            name: "DATE",
            complete: Complete::Text,
            update: |args, value| {
                args.since = Some(day("since", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Usage],
            help: "only what was consumed on DATE (YYYY-MM-DD or YYYYMMDD, UTC) or after",
            man: r#"Count only the generations made on
.I DATE
or after it (a UTC day,
.B YYYY\-MM\-DD
or
.BR YYYYMMDD ).
"#,
        }],
    },
    Flag {
        long: "until",
        short: None,
        kind: Kind::Value {
            name: "DATE",
            complete: Complete::Text,
            update: |args, value| {
                args.until = Some(day("until", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Usage],
            help: "only what was consumed on DATE or before",
            man: r#"Count only the generations made on
.I DATE
or before it.
"#,
        }],
    },
    Flag {
        long: "json",
        short: None,
        kind: Kind::Switch(|args| args.json = true),
        docs: &[Doc {
            bins: &[Bin::Usage],
            help: "write the report as ccusage's --json writes it",
            man: r#"Write the report as one JSON object, in the shape of ccusage's
.B \-\-json
(see
.BR "JSON OUTPUT" ),
instead of a table.
"#,
        }],
    },
    Flag {
        long: "breakdown",
        short: Some('b'),
        kind: Kind::Switch(|args| args.breakdown = true),
        docs: &[Doc {
            bins: &[Bin::Usage],
            help: "show each model's line under each row of the table",
            man: r#"Show each model's tokens and cost on a line of its own under each row
of the table.
(The JSON always has them, in
.BR modelBreakdowns .)
"#,
        }],
    },
    Flag {
        long: "by-project",
        short: None,
        kind: Kind::Switch(|args| args.by_project = true),
        docs: &[Doc {
            bins: &[Bin::Usage],
            help: "group the days, weeks or months by project",
            man: r#"Group the rows of
.BR daily ,
.B weekly
and
.B monthly
by the project (the directory) of the conversation each generation was
made in: a table per project, and in JSON ccusage's
.B \-\-instances
shape,
.BR "{\(dqprojects\(dq: {PROJECT: [rows]}, \(dqtotals\(dq: {...}}" .
"#,
        }],
    },
    Flag {
        long: "no-cost",
        short: None,
        kind: Kind::Switch(|args| args.no_cost = true),
        docs: &[Doc {
            bins: &[Bin::Usage],
            help: "count tokens only, no API-equivalent cost",
            man: r#"Count tokens only: no cost column, and every cost in the JSON 0.
"#,
        }],
    },
    Flag {
        long: "prices",
        short: None,
        kind: Kind::Value {
            name: "FILE",
            complete: Complete::File,
            update: |args, value| {
                args.prices = Some(value.into());
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Usage],
            help: "prices from FILE, in the shape of LiteLLM's model_prices_and_context_window.json",
            man: r#"Prices from
.IR FILE ,
a JSON object in the shape of LiteLLM's
.I model_prices_and_context_window.json
(each key a model, with
.BR input_cost_per_token ,
.BR output_cost_per_token ,
.BR cache_read_input_token_cost ,
.B cache_creation_input_token_cost
and their
.B _above_200k_tokens
forms, in dollars per token), before the built-in table (see
.BR COST ).
A model is looked up by the name agy gives it, then by the key the built-in
table gives it, with and without a provider's prefix.
"#,
        }],
    },
    Flag {
        long: "now",
        short: None,
        kind: Kind::Value {
            name: "TIME",
            complete: Complete::Text,
            update: |args, value| {
                let text = value.string()?;
                let time = Timestamp::parse(&text).map_err(|_| {
                    Error::usage(format!("--now takes an RFC 3339 time, not {text:?}"))
                })?;
                args.now = Some(time);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Usage],
            help: "the time blocks are judged active at (default: the clock's), for a report that reads the same later",
            man: r#"The time, RFC 3339, at which
.B blocks
judges which block is active and projects its end (default: the
clock's): a report of the past that reads the same tomorrow.
"#,
        }],
    },
];
