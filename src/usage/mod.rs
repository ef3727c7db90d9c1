//! agy-usage: what conversations consumed, read exactly from agy's bytes
//! and counted once.
//!
//! A generation's usage is a ModelUsageStats (agy-store(5), USAGE), kept
//! twice: in its `gen_metadata` row (with the model's name) and on the
//! planner step it made (the step's metadata, field 9). [`collect`] reads
//! both from a data root's databases (from their files, as agy-dump reads
//! them, and of a step only the columns up to its metadata, never its
//! payload) or from a row stream, reconciles them, and counts each
//! generation once however many conversations carry it (a fork or a lane
//! copy carries its parent's rows byte for byte): by the response id agy
//! gives every generation, else by the bytes of its row. [`report`] groups
//! what was counted as ccusage does (days, weeks, months, conversations,
//! 5-hour blocks), [`price`] prices it at the API's list prices, and
//! [`output`] writes it as ccusage's JSON or as a table.
//!
//! Imports: [`crate::decode`] (a conversation's title and project) and the
//! layers below.

pub mod collect;
pub mod output;
pub mod price;
pub mod report;

use crate::time::Timestamp;

/// Token counts, as ModelUsageStats has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens, cache reads not included (field 2).
    pub input: u64,
    /// Output tokens (field 3): thinking and response together.
    pub output: u64,
    /// Tokens written to the cache (field 4).
    pub cache_write: u64,
    /// Tokens read from the cache (field 5).
    pub cache_read: u64,
    /// Of the output, thinking (field 9) and response (field 10).
    pub thinking: u64,
    pub response: u64,
}

impl Tokens {
    /// Input, output and both cache counts: ccusage's `totalTokens`.
    /// (Sums saturate: a damaged count near 2^64 must not wrap a total
    /// round to a small number.)
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_write)
            .saturating_add(self.cache_read)
    }

    pub fn add(&mut self, other: &Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.thinking = self.thinking.saturating_add(other.thinking);
        self.response = self.response.saturating_add(other.response);
    }
}

/// One generation: one answer of one model, counted once.
#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    /// The conversation it was first met in (files are read in name
    /// order, so the same one on every run).
    pub conversation: String,
    /// When it was made: its first step's time.
    pub time: Option<Timestamp>,
    /// The model's name as agy names it (ChatModelMetadata 19), else
    /// `model-N` for the enum the usage carries.
    pub model: String,
    pub tokens: Tokens,
}

/// A conversation's title and project, for the per-conversation report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conversation {
    pub id: String,
    pub title: Option<String>,
    /// Its project's directory.
    pub project: Option<String>,
}
