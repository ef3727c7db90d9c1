//! agy-usage over an arbitrary row stream: the collector and every report
//! never panic, and each report's totals are the sum of the generations
//! counted (those in no period aside).
#![no_main]

use agy_fuzz::lines;
use agy_tools::time::Timestamp;
use agy_tools::usage::collect::Collector;
use agy_tools::usage::price::Prices;
use agy_tools::usage::report::{self, Period, Range};
use agy_tools::usage::{output, Tokens};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let mut warn = |_: String| {};
    let mut collector = Collector::new(&mut warn);
    let _ = collector.stream(&mut lines(data));
    let collected = collector.collected;
    let gens = &collected.generations;
    let prices = Prices::built_in();
    let mut all = Tokens::default();
    for g in gens {
        all.add(&g.tokens);
    }
    let now = Timestamp {
        seconds: 1_800_000_000,
        nanos: 0,
    };
    let sessions = report::sessions(gens, &collected.conversations, Range::default(), Some(&prices));
    assert_eq!(sessions.total.tokens, all);
    let _ = output::sessions_json(&sessions, true);
    let dated: Vec<_> = gens.iter().filter(|g| g.time.is_some()).cloned().collect();
    let mut in_periods = Tokens::default();
    for g in &dated {
        in_periods.add(&g.tokens);
    }
    for period in [Period::Day, Period::Week, Period::Month] {
        let r = report::periods(gens, &collected.conversations, period, Range::default(), Some(&prices), true);
        assert_eq!(r.total.tokens, in_periods);
        let _ = output::periods_json(&r, "daily", "date", true);
    }
    let blocks = report::blocks(gens, Range::default(), Some(&prices), now);
    assert_eq!(blocks.total.tokens, in_periods);
    let _ = output::blocks_json(&blocks, now, true);
}
