//! Where a fork or a rewind cuts a conversation: the cut as the user says
//! it (a step, a user turn) turned into the last step kept, and refused
//! when it would part a tool call from the step that carries it out.
//!
//! agy's model sees a call and its result as one exchange; a conversation
//! that ends between them is one agy itself never leaves behind except by
//! a crash (and then the call's step is still RUNNING). So a cut there is
//! an error that names the nearest cuts on either side that part nothing.

use std::collections::HashMap;

use crate::agy::steps::kind;
use crate::error::{Error, Result};

use super::survey::StepInfo;

/// Where to cut, as the command line says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// `fork --at STEP`: keep the steps up to and with STEP.
    Through(i64),
    /// `fork --turn N`: keep the first N user turns and their replies.
    Turns(u64),
    /// `rewind --to STEP`: remove STEP and every step after it.
    Before(i64),
    /// `rewind --turns N`: remove the last N user turns and what followed.
    LastTurns(u64),
}

impl Cut {
    /// The idx of the last step kept, checked: it is a step of the
    /// conversation, at least one step is kept, and no tool call is parted
    /// from the step that carries it out.
    pub(super) fn keep_through(self, steps: &[StepInfo]) -> Result<i64> {
        let Some(last) = steps.last() else {
            return Err(Error::data("it has no steps to cut"));
        };
        let position = |idx: i64| steps.iter().position(|s| s.idx == idx);
        let no_step = |idx: i64| {
            Error::data(format!(
                "it has no step {idx} (its steps are {}..={})",
                steps[0].idx, last.idx
            ))
        };
        let turns: Vec<usize> = steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.kind == kind::USER_INPUT)
            .map(|(i, _)| i)
            .collect();
        let count_turns = |n: u64| -> Result<usize> {
            if n == 0 || n as usize > turns.len() {
                return Err(Error::data(format!(
                    "it has {} user turn{}, so there is no turn {n} to cut at",
                    turns.len(),
                    if turns.len() == 1 { "" } else { "s" }
                )));
            }
            Ok(n as usize)
        };
        // The position of the first step removed, or None when every
        // step is kept.
        let first_removed = match self {
            Cut::Through(idx) => {
                let at = position(idx).ok_or_else(|| no_step(idx))?;
                Some(at + 1).filter(|&i| i < steps.len())
            }
            Cut::Before(idx) => Some(position(idx).ok_or_else(|| no_step(idx))?),
            Cut::Turns(n) => turns.get(count_turns(n)?).copied(),
            Cut::LastTurns(n) => Some(turns[turns.len() - count_turns(n)?]),
        };
        let kept = first_removed.unwrap_or(steps.len());
        if kept == 0 {
            return Err(Error::data(format!(
                "{} would keep no step; nothing would be left of it",
                self.said()
            )));
        }
        let keep_through = steps[kept - 1].idx;
        let pairs = Pairs::of(steps);
        if let Some((id, declared, answered)) = pairs.parted_at(keep_through) {
            let below = steps[..kept - 1]
                .iter()
                .rev()
                .map(|s| s.idx)
                .find(|&k| pairs.parted_at(k).is_none());
            let above = steps[kept..]
                .iter()
                .map(|s| s.idx)
                .find(|&k| pairs.parted_at(k).is_none());
            let cuts: Vec<String> = [below, above]
                .into_iter()
                .flatten()
                .map(|k| self.said_for(k, steps))
                .collect();
            let nearest = match cuts.len() {
                0 => String::new(),
                _ => format!(
                    "; the nearest cuts that part nothing are {}",
                    cuts.join(" and ")
                ),
            };
            return Err(Error::data(format!(
                "{} would part tool call {id:?}, made at step {declared}, from its result at step {answered}{nearest}",
                self.said()
            )));
        }
        Ok(keep_through)
    }

    /// The cut as the command line says it.
    fn said(self) -> String {
        match self {
            Cut::Through(idx) => format!("--at {idx}"),
            Cut::Turns(n) => format!("--turn {n}"),
            Cut::Before(idx) => format!("--to {idx}"),
            Cut::LastTurns(n) => format!("--turns {n}"),
        }
    }

    /// The cut that keeps the steps through `keep_through`, in this cut's
    /// own words (a fork's `--at`, a rewind's `--to`).
    fn said_for(self, keep_through: i64, steps: &[StepInfo]) -> String {
        match self {
            Cut::Through(_) | Cut::Turns(_) => format!("--at {keep_through}"),
            Cut::Before(_) | Cut::LastTurns(_) => {
                let next = steps.iter().find(|s| s.idx > keep_through);
                format!("--to {}", next.map_or(keep_through + 1, |s| s.idx))
            }
        }
    }
}

/// Each tool call that a later step carries out: (id, made at, carried
/// out at).
struct Pairs(Vec<(String, i64, i64)>);

impl Pairs {
    fn of(steps: &[StepInfo]) -> Pairs {
        let mut made: HashMap<&str, i64> = HashMap::new();
        let mut pairs = Vec::new();
        for step in steps {
            if let Some(id) = &step.executes {
                if let Some(at) = made.remove(id.as_str()) {
                    pairs.push((id.clone(), at, step.idx));
                }
            }
            for id in &step.declared {
                made.entry(id.as_str()).or_insert(step.idx);
            }
        }
        Pairs(pairs)
    }

    /// The pair a cut after step `k` would part, if any.
    fn parted_at(&self, k: i64) -> Option<(&str, i64, i64)> {
        self.0
            .iter()
            .find(|(_, made, done)| *made <= k && k < *done)
            .map(|(id, made, done)| (id.as_str(), *made, *done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(idx: i64, kind: u64, declared: &[&str], executes: Option<&str>) -> StepInfo {
        StepInfo {
            idx,
            kind,
            declared: declared.iter().map(|s| s.to_string()).collect(),
            executes: executes.map(str::to_string),
            ..StepInfo::default()
        }
    }

    /// user, reply with two calls, the two results, reply, user, reply,
    /// checkpoint.
    fn steps() -> Vec<StepInfo> {
        vec![
            step(0, kind::USER_INPUT, &[], None),
            step(1, kind::PLANNER_RESPONSE, &["a", "b"], None),
            step(2, kind::GENERIC, &[], Some("a")),
            step(3, kind::GENERIC, &[], Some("b")),
            step(4, kind::PLANNER_RESPONSE, &[], None),
            step(5, kind::USER_INPUT, &[], None),
            step(6, kind::PLANNER_RESPONSE, &[], None),
            step(7, kind::CHECKPOINT, &[], None),
        ]
    }

    #[test]
    fn cuts_become_the_last_step_kept() {
        let s = steps();
        assert_eq!(Cut::Through(4).keep_through(&s).unwrap(), 4);
        assert_eq!(Cut::Through(7).keep_through(&s).unwrap(), 7);
        assert_eq!(Cut::Through(0).keep_through(&s).unwrap(), 0);
        assert_eq!(Cut::Before(5).keep_through(&s).unwrap(), 4);
        assert_eq!(Cut::Turns(1).keep_through(&s).unwrap(), 4);
        assert_eq!(Cut::Turns(2).keep_through(&s).unwrap(), 7);
        assert_eq!(Cut::LastTurns(1).keep_through(&s).unwrap(), 4);
    }

    #[test]
    fn a_cut_inside_a_call_names_the_nearest_cuts() {
        let s = steps();
        let err = Cut::Through(2).keep_through(&s).unwrap_err().to_string();
        assert!(
            err.contains("\"b\", made at step 1, from its result at step 3"),
            "{err}"
        );
        assert!(err.contains("--at 0 and --at 3"), "{err}");
        let err = Cut::Before(3).keep_through(&s).unwrap_err().to_string();
        assert!(err.contains("--to 1 and --to 4"), "{err}");
        let err = Cut::Through(1).keep_through(&s).unwrap_err().to_string();
        assert!(err.contains("\"a\""), "{err}");
    }

    #[test]
    fn cuts_outside_the_conversation_are_refused() {
        let s = steps();
        for (cut, words) in [
            (Cut::Through(9), "no step 9"),
            (Cut::Before(0), "keep no step"),
            (Cut::LastTurns(2), "keep no step"),
            (Cut::Turns(3), "2 user turns"),
            (Cut::LastTurns(0), "no turn 0"),
        ] {
            let err = cut.keep_through(&s).unwrap_err().to_string();
            assert!(err.contains(words), "{cut:?}: {err}");
        }
        assert!(Cut::Through(0).keep_through(&[]).is_err());
    }

    #[test]
    fn a_call_never_answered_parts_nothing() {
        // A call whose step never came (a crash before it) leaves every
        // cut after it possible.
        let s = vec![
            step(0, kind::USER_INPUT, &[], None),
            step(1, kind::PLANNER_RESPONSE, &["lost"], None),
            step(2, kind::USER_INPUT, &[], None),
            step(3, kind::PLANNER_RESPONSE, &[], None),
        ];
        assert_eq!(Cut::Through(1).keep_through(&s).unwrap(), 1);
        assert_eq!(Cut::Turns(1).keep_through(&s).unwrap(), 1);
    }
}
