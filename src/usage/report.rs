//! What was counted, grouped as ccusage groups Claude Code's usage: by day,
//! week (from Sunday) or month, by conversation, and in 5-hour blocks.
//! Days are UTC days.
//!
//! Blocks follow ccusage's rules (`_session-blocks.ts`): generations in
//! time order; a block begins at its first generation's time floored to
//! the hour, and a generation more than 5 hours after the block's start,
//! or after the generation before it, begins the next; between two blocks
//! more than 5 hours apart lies a gap block. A block is active while the
//! clock is within 5 hours of its last generation and before its end.

use std::collections::BTreeMap;

use crate::time::{Day, Timestamp};

use super::price::Prices;
use super::{Conversation, Generation, Tokens};

/// Tokens and cost of some generations, in all and by model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub tokens: Tokens,
    pub cost: f64,
    pub generations: u64,
    /// Per model, sorted by name.
    pub models: BTreeMap<String, (Tokens, f64)>,
}

impl Tally {
    fn add(
        &mut self,
        generation: &Generation,
        prices: Option<&Prices>,
        unpriced: &mut Vec<String>,
    ) {
        let cost = match prices {
            Some(prices) => match prices.of(&generation.model) {
                Some(price) => Prices::cost(&price, &generation.tokens),
                None => {
                    if !unpriced.contains(&generation.model) {
                        unpriced.push(generation.model.clone());
                    }
                    0.0
                }
            },
            None => 0.0,
        };
        self.tokens.add(&generation.tokens);
        self.cost += cost;
        self.generations += 1;
        let model = self.models.entry(generation.model.clone()).or_default();
        model.0.add(&generation.tokens);
        model.1 += cost;
    }
}

/// The span a report covers: `--since` and `--until`, days included.
#[derive(Clone, Copy, Debug, Default)]
pub struct Range {
    pub since: Option<Day>,
    pub until: Option<Day>,
}

impl Range {
    fn holds(&self, time: Option<Timestamp>) -> bool {
        let Some(time) = time else {
            return self.since.is_none() && self.until.is_none();
        };
        let day = Day::of(time);
        self.since.is_none_or(|s| day >= s) && self.until.is_none_or(|u| day <= u)
    }
}

/// The calendar periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Period {
    Day,
    Week,
    Month,
}

impl Period {
    /// The period's label of a day: `2026-12-04`, the week's Sunday, or
    /// `2026-12`.
    fn label(self, day: Day) -> String {
        match self {
            Period::Day => day.format(),
            Period::Week => day.week_start().format(),
            Period::Month => day.month(),
        }
    }
}

/// A report: its rows, their total, and the models no price is known for.
#[derive(Clone, Debug)]
pub struct Report<R> {
    pub rows: Vec<R>,
    pub total: Tally,
    pub unpriced: Vec<String>,
}

impl<R> Default for Report<R> {
    fn default() -> Self {
        Report {
            rows: Vec::new(),
            total: Tally::default(),
            unpriced: Vec::new(),
        }
    }
}

/// A period's row, with the project it is of when grouped by project.
#[derive(Clone, Debug, PartialEq)]
pub struct PeriodRow {
    pub label: String,
    pub project: Option<String>,
    pub tally: Tally,
}

/// By period, oldest first; with `by_project`, by project and then period.
pub fn periods(
    generations: &[Generation],
    conversations: &[Conversation],
    period: Period,
    range: Range,
    prices: Option<&Prices>,
    by_project: bool,
) -> Report<PeriodRow> {
    let projects = project_of(conversations);
    let mut report = Report::default();
    let mut rows: BTreeMap<(Option<String>, String), Tally> = BTreeMap::new();
    for generation in generations {
        let Some(time) = generation.time.filter(|_| range.holds(generation.time)) else {
            continue;
        };
        let project = by_project.then(|| {
            projects
                .get(&*generation.conversation)
                .cloned()
                .unwrap_or_default()
        });
        let label = period.label(Day::of(time));
        rows.entry((project, label))
            .or_default()
            .add(generation, prices, &mut report.unpriced);
        report.total.add(generation, prices, &mut Vec::new());
    }
    report.rows = rows
        .into_iter()
        .map(|((project, label), tally)| PeriodRow {
            label,
            project,
            tally,
        })
        .collect();
    report
}

/// A conversation's row.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRow {
    pub conversation: Conversation,
    pub last: Option<Timestamp>,
    pub tally: Tally,
}

/// By conversation, the one last active last.
pub fn sessions(
    generations: &[Generation],
    conversations: &[Conversation],
    range: Range,
    prices: Option<&Prices>,
) -> Report<SessionRow> {
    let mut report = Report::default();
    // The first read of each id (a copy in a second root comes after).
    let mut by_id: BTreeMap<&str, &Conversation> = BTreeMap::new();
    for c in conversations {
        by_id.entry(c.id.as_str()).or_insert(c);
    }
    let mut rows: BTreeMap<&str, SessionRow> = BTreeMap::new();
    for generation in generations.iter().filter(|g| range.holds(g.time)) {
        let row = rows
            .entry(&generation.conversation)
            .or_insert_with(|| SessionRow {
                conversation: by_id
                    .get(generation.conversation.as_str())
                    .map(|c| (*c).clone())
                    .unwrap_or_else(|| Conversation {
                        id: generation.conversation.clone(),
                        ..Conversation::default()
                    }),
                last: None,
                tally: Tally::default(),
            });
        row.last = row.last.max(generation.time);
        row.tally.add(generation, prices, &mut report.unpriced);
        report.total.add(generation, prices, &mut Vec::new());
    }
    report.rows = rows.into_values().collect();
    report
        .rows
        .sort_by(|a, b| (a.last, &a.conversation.id).cmp(&(b.last, &b.conversation.id)));
    report
}

/// A 5-hour block, or the gap between two.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub start: Timestamp,
    pub end: Timestamp,
    /// The last generation's time (none in a gap).
    pub last: Option<Timestamp>,
    pub gap: bool,
    pub active: bool,
    pub tally: Tally,
}

/// Five hours, in seconds.
pub const BLOCK: i64 = 5 * 3600;

/// The 5-hour blocks, oldest first, with the gaps between them; `now`
/// decides which is active.
pub fn blocks(
    generations: &[Generation],
    range: Range,
    prices: Option<&Prices>,
    now: Timestamp,
) -> Report<Block> {
    let mut report = Report::default();
    let mut dated: Vec<&Generation> = generations
        .iter()
        .filter(|g| g.time.is_some() && range.holds(g.time))
        .collect();
    dated.sort_by_key(|g| g.time);
    let mut current: Option<Block> = None;
    for generation in dated {
        let time = generation.time.expect("dated");
        let starts_new = current.as_ref().is_none_or(|b| {
            time.seconds - b.start.seconds > BLOCK
                || b.last
                    .is_some_and(|last| time.seconds - last.seconds > BLOCK)
        });
        if starts_new {
            if let Some(done) = current.take() {
                let last = done.last.expect("a block has a generation");
                report.rows.push(done);
                if time.seconds - last.seconds > BLOCK {
                    report.rows.push(Block {
                        start: Timestamp {
                            seconds: last.seconds + BLOCK,
                            nanos: last.nanos,
                        },
                        end: time,
                        last: None,
                        gap: true,
                        active: false,
                        tally: Tally::default(),
                    });
                }
            }
            let start = Timestamp {
                seconds: time.seconds - time.seconds.rem_euclid(3600),
                nanos: 0,
            };
            current = Some(Block {
                start,
                end: Timestamp {
                    seconds: start.seconds + BLOCK,
                    nanos: 0,
                },
                last: None,
                gap: false,
                active: false,
                tally: Tally::default(),
            });
        }
        let block = current.as_mut().expect("just made");
        block.last = Some(time);
        block.tally.add(generation, prices, &mut report.unpriced);
        report.total.add(generation, prices, &mut Vec::new());
    }
    if let Some(mut last) = current {
        let latest = last.last.expect("a block has a generation");
        last.active = now.seconds - latest.seconds < BLOCK && now < last.end;
        report.rows.push(last);
    }
    report
}

/// Each conversation's project.
fn project_of(conversations: &[Conversation]) -> BTreeMap<&str, String> {
    conversations
        .iter()
        .map(|c| (c.id.as_str(), c.project.clone().unwrap_or_default()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64, conversation: &str, model: &str, input: u64) -> Generation {
        Generation {
            conversation: conversation.into(),
            time: Some(Timestamp { seconds, nanos: 0 }),
            model: model.into(),
            tokens: Tokens {
                input,
                output: 10,
                ..Tokens::default()
            },
        }
    }

    /// 2026-12-04T10:30:00Z.
    const T: i64 = 1_796_380_200;

    #[test]
    fn days_weeks_and_months_sum_what_fell_in_them() {
        let gens = [
            at(T, "a", "gemini-3-pro", 100),
            at(T + 3600, "a", "claude-sonnet-4-5", 50),
            at(T + 86_400 * 3, "b", "gemini-3-pro", 7),
        ];
        let day = periods(&gens, &[], Period::Day, Range::default(), None, false);
        let labels: Vec<&str> = day.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["2026-12-04", "2026-12-07"]);
        assert_eq!(day.rows[0].tally.tokens.input, 150);
        assert_eq!(day.rows[0].tally.models.len(), 2);
        assert_eq!(day.total.tokens.input, 157);
        let week = periods(&gens, &[], Period::Week, Range::default(), None, false);
        let labels: Vec<&str> = week.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["2026-11-29", "2026-12-06"]);
        let month = periods(&gens, &[], Period::Month, Range::default(), None, false);
        assert_eq!(month.rows.len(), 1);
        assert_eq!(month.rows[0].label, "2026-12");
        let since = Range {
            since: Day::parse("2026-12-05"),
            until: None,
        };
        assert_eq!(
            periods(&gens, &[], Period::Day, since, None, false)
                .total
                .tokens
                .input,
            7
        );
    }

    #[test]
    fn blocks_follow_ccusages_rules() {
        let gens = [
            at(T, "a", "m", 1),             // block 1 from 10:00
            at(T + 4 * 3600, "a", "m", 1),  // 14:30: same block (< 5 h from 10:00)
            at(T + 5 * 3600, "a", "m", 1),  // 15:30: past 15:00, a new block from 15:00
            at(T + 11 * 3600, "a", "m", 1), // 21:30: 6 h after the last: a gap first
        ];
        let report = blocks(
            &gens,
            Range::default(),
            None,
            Timestamp {
                seconds: T + 12 * 3600,
                nanos: 0,
            },
        );
        let shape: Vec<(i64, bool, u64, bool)> = report
            .rows
            .iter()
            .map(|b| {
                (
                    (b.start.seconds - T) / 60,
                    b.gap,
                    b.tally.generations,
                    b.active,
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                (-30, false, 2, false),
                (270, false, 1, false),
                (600, true, 0, false),
                (630, false, 1, true)
            ]
        );
        assert_eq!(report.total.generations, 4);
    }

    #[test]
    fn sessions_come_last_active_last() {
        let gens = [
            at(T + 10, "b", "m", 1),
            at(T, "a", "m", 2),
            at(T + 20, "a", "m", 3),
        ];
        let convs = [Conversation {
            id: "a".into(),
            title: Some("A".into()),
            project: Some("/p".into()),
        }];
        let report = sessions(&gens, &convs, Range::default(), None);
        let ids: Vec<&str> = report
            .rows
            .iter()
            .map(|r| r.conversation.id.as_str())
            .collect();
        assert_eq!(ids, ["b", "a"]);
        assert_eq!(report.rows[1].tally.tokens.input, 5);
        assert_eq!(report.rows[1].conversation.title.as_deref(), Some("A"));
    }
}
