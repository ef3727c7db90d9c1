//! A conversation's summary as agy writes it into its summaries files and
//! the index's `raw_summary` (`exa.jetski_cortex_pb.CascadeTrajectorySummary`,
//! agy-store(5)), for a conversation that has none: one agy-encode made,
//! or a lane copy into the desktop app's list.
//!
//! The fields are those read from real desktop entries (grade A): 1 title, 2 the
//! number of steps, 3 last modified, 4 the trajectory id, 5 = 1 (at rest),
//! 7 created, 9 the metadata's first workspace (its bytes), 10 the last
//! user input's time, 15 (annotations) empty, 16 the last user input's
//! step index, 17 the whole trajectory metadata, 22 = 4.

use crate::agy::steps::field::trajectory::WORKSPACES;
use crate::agy::wire::{Message, Writer};
use crate::store::index::Summary;
use crate::store::sqlite::Source;
use crate::time::Timestamp;

/// What a summary repeats of the database besides the index's facts (a
/// [`Summary`], which the caller has already read): its trajectory id and
/// its trajectory metadata.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub trajectory_id: Option<String>,
    /// The "main" trajectory metadata.
    pub metadata: Vec<u8>,
}

impl Facts {
    /// The facts of the conversation in `source`.
    pub fn of_database(source: &Source) -> Facts {
        let trajectory_id = source
            .connection()
            .query_row(
                "SELECT trajectory_id FROM trajectory_meta ORDER BY rowid LIMIT 1",
                [],
                |row| row.get::<_, Option<String>>(0),
            )
            .ok()
            .flatten();
        Facts {
            trajectory_id,
            metadata: source.trajectory_metadata().unwrap_or_default(),
        }
    }

    /// The summary message of the conversation whose index facts are `s`.
    pub fn summary(&self, s: &Summary) -> Vec<u8> {
        let last_modified = s.last_step_time.or(s.created);
        let mut w = Writer::new();
        if let Some(title) = s.title.as_deref().filter(|t| !t.is_empty()) {
            w.string(1, title);
        }
        w.varint(2, s.step_count.max(0) as u64);
        timestamp(&mut w, 3, last_modified);
        if let Some(id) = &self.trajectory_id {
            w.string(4, id);
        }
        w.varint(5, 1);
        timestamp(&mut w, 7, s.created);
        if let Some(workspace) = Message::new(&self.metadata).get_bytes(WORKSPACES) {
            w.bytes(9, workspace);
        }
        let (last_input, input_time) = match s.last_user_input {
            Some((idx, time)) => (idx, time.or(last_modified)),
            None => (0, last_modified),
        };
        timestamp(&mut w, 10, input_time);
        w.bytes(15, &[]);
        w.varint(16, last_input.max(0) as u64);
        w.bytes(17, &self.metadata);
        w.varint(22, 4);
        w.into_bytes()
    }

    /// The entry of conversation `id` in a summaries file.
    pub fn entry(&self, id: &str, s: &Summary) -> Vec<u8> {
        let mut w = Writer::new();
        w.string(1, id).bytes(2, &self.summary(s));
        w.into_bytes()
    }
}

/// A `google.protobuf.Timestamp` field, when there is a time.
fn timestamp(w: &mut Writer, number: u32, time: Option<Timestamp>) {
    if let Some(time) = time {
        w.message(number, |t| {
            if time.seconds != 0 {
                t.int64(1, time.seconds);
            }
            if time.nanos != 0 {
                t.int64(2, time.nanos as i64);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::wire::Value;

    #[test]
    fn a_summary_names_what_a_desktop_entry_names() {
        let mut workspace = Writer::new();
        workspace.string(1, "file:///home/me/app").string(3, "");
        let workspace = workspace.into_bytes();
        let mut metadata = Writer::new();
        metadata.bytes(WORKSPACES, &workspace).string(18, "p");
        let summary = Summary {
            title: Some("Fix it".into()),
            step_count: 12,
            created: Some(Timestamp {
                seconds: 100,
                nanos: 5,
            }),
            last_step_time: Some(Timestamp {
                seconds: 200,
                nanos: 0,
            }),
            last_user_input: Some((7, None)),
            ..Summary::default()
        };
        let facts = Facts {
            trajectory_id: Some("t-1".into()),
            metadata: metadata.into_bytes(),
        };
        let entry = facts.entry("c-1", &summary);
        let entry = Message::new(&entry);
        assert_eq!(entry.get_str(1).unwrap(), "c-1");
        let summary = entry.get_message(2).unwrap();
        let numbers: Vec<u32> = summary.fields().map(|f| f.number).collect();
        assert_eq!(numbers, [1, 2, 3, 4, 5, 7, 9, 10, 15, 16, 17, 22]);
        assert_eq!(summary.get_str(1).unwrap(), "Fix it");
        assert!(matches!(summary.last(2), Some(Value::Varint(12))));
        assert_eq!(summary.get_bytes(9).unwrap(), &workspace[..]);
        assert_eq!(summary.get_bytes(17).unwrap(), &facts.metadata[..]);
        assert!(matches!(summary.last(16), Some(Value::Varint(7))));
        let updated = summary.get_message(3).unwrap();
        assert!(matches!(updated.last(1), Some(Value::Varint(200))));
        // Field 10, the last input's time, falls back to the last step's.
        let input = summary.get_message(10).unwrap();
        assert!(matches!(input.last(1), Some(Value::Varint(200))));
    }
}
