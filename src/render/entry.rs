//! One conversation in the `--out` index: what the index page shows of it
//! and what `index.ndjson` keeps, so a later run can rebuild the page
//! without rendering the conversation again.

use serde::{Deserialize, Serialize};

use super::summary::{self, Summary};
use crate::time::Timestamp;

/// One conversation in the index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    /// The page's file name, relative to the directory.
    pub file: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    #[serde(default)]
    pub turns: u64,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub models: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
    }
}

impl Entry {
    pub fn new(summary: &Summary, file: String) -> Entry {
        Entry {
            id: summary.id.clone(),
            file,
            title: summary.title(),
            started: summary.started().map(summary::iso_time),
            last: summary.last.map(summary::iso_time),
            turns: summary.turns(),
            usage: Usage {
                input_tokens: summary.tokens.input,
                output_tokens: summary.tokens.output,
                cache_creation_input_tokens: summary.tokens.cache_creation,
                cache_read_input_tokens: summary.tokens.cache_read,
            },
            models: summary.models.clone(),
        }
    }

    /// The time the index sorts by: the last message's, else the start.
    pub fn newest(&self) -> Option<Timestamp> {
        let parse = |t: &Option<String>| t.as_deref().and_then(|t| Timestamp::parse(t).ok());
        parse(&self.last).or_else(|| parse(&self.started))
    }
}

/// Newest first; conversations without a time last; ties by id.
pub fn sort(entries: &mut [Entry]) {
    entries.sort_by(|a, b| {
        b.newest()
            .cmp(&a.newest())
            .then_with(|| a.id.as_bytes().cmp(b.id.as_bytes()))
    });
}
