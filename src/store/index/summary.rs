//! A conversation's index row derived from what the conversation says of
//! itself, and how a derived row is carried onto, or refreshes, agy's own.

use std::borrow::Cow;

use crate::store::root::{Lane, CLI};
use crate::stream::message::path_to_uri;
use crate::stream::record::JsonCell;
use crate::time::Timestamp;

use super::{ddl_columns, IndexRow};

/// What a conversation says of itself that its index row repeats, by the
/// rules of agy-decode's `meta` record: the title is the latest checkpoint
/// title, else the first user text cut to 80 characters; the workspace is
/// the trajectory metadata's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub title: Option<String>,
    /// The first user text, whole.
    pub preview: Option<String>,
    /// The number of `steps` rows.
    pub step_count: i64,
    pub created: Option<Timestamp>,
    /// The time of the step with the highest idx that has one.
    pub last_step_time: Option<Timestamp>,
    pub cwd: Option<String>,
    /// The workspace's git branch (not in the index; agy-ls shows it).
    pub branch: Option<String>,
    pub parent_conversation_id: Option<String>,
    /// The trajectory metadata's project id: a derived row names the same
    /// project (a CLI conversation may name a project's UUID, FORMAT.md 16
    /// row 11), else its lane's.
    pub project_id: Option<String>,
    /// The idx of the last USER_INPUT step, and its time.
    pub last_user_input: Option<(i64, Option<Timestamp>)>,
    /// `trajectory_meta.source`, when known: the lane whose marks a
    /// derived row bears (the CLI's when it is not the desktop app's).
    pub trajectory_source: Option<i64>,
    /// The `raw_summary` of an index at `user_version` 3, when it was
    /// made from the database (`crate::decode::summary::of_database_with_raw`):
    /// a row written into a table with the column gets it.
    pub raw_summary: Option<Vec<u8>>,
}

/// A time as the index writes it: `YYYY-MM-DD HH:MM:SS+00:00`.
pub fn format_time(time: Timestamp) -> Option<String> {
    let text = time.format_seconds()?;
    let date_time = text.strip_suffix('Z')?.replacen('T', " ", 1);
    Some(format!("{date_time}+00:00"))
}

/// The time written when a conversation has none at all (the columns are
/// NOT NULL).
const NO_TIME: &str = "1970-01-01 00:00:00+00:00";

pub(super) fn text(value: impl Into<String>) -> JsonCell<'static> {
    JsonCell::Plain(Cow::Owned(value.into()))
}

/// A text cell of `value` (empty when there is none), borrowed.
fn borrowed(value: Option<&str>) -> JsonCell<'_> {
    JsonCell::Plain(Cow::Borrowed(value.unwrap_or_default()))
}

impl Summary {
    /// The columns a summary decides, with their values; the title and
    /// the preview borrowed (a pasted preview is tens of MB, and `carry`
    /// compares two summaries' columns).
    fn derived(&self) -> Vec<(&'static str, JsonCell<'_>)> {
        let last_modified = self.last_step_time.or(self.created);
        let time =
            |t: Option<Timestamp>| text(t.and_then(format_time).as_deref().unwrap_or(NO_TIME));
        let (last_input_idx, last_input_time) = match self.last_user_input {
            Some((idx, time)) => (idx, time.or(last_modified)),
            None => (-1, last_modified),
        };
        let workspaces = match &self.cwd {
            Some(cwd) => serde_json::to_string(&[path_to_uri(cwd)]).expect("strings serialize"),
            None => "[]".to_string(),
        };
        vec![
            ("title", borrowed(self.title.as_deref())),
            ("preview", borrowed(self.preview.as_deref())),
            ("step_count", JsonCell::Integer(self.step_count)),
            ("last_modified_time", time(last_modified)),
            ("workspace_uris", text(workspaces)),
            (
                "parent_conversation_id",
                text(self.parent_conversation_id.clone().unwrap_or_default()),
            ),
            ("last_user_input_time", time(last_input_time)),
            (
                "last_user_input_step_index",
                JsonCell::Integer(last_input_idx),
            ),
        ]
    }

    /// The whole row of conversation `id`, in the 1.1.16 table's 19
    /// columns, as the row agy 1.1.16 accepted has them: status `""`,
    /// source and app_data_dir `antigravity-cli`, project_id
    /// `default-cli-project`, the other columns their defaults; a
    /// conversation of the desktop app gets that lane's marks instead
    /// ([`crate::store::root::Lane::marks`]).
    pub fn row(&self, id: &str) -> IndexRow {
        let marks = self
            .trajectory_source
            .and_then(Lane::of_trajectory_source)
            .and_then(Lane::marks)
            .unwrap_or(CLI);
        let derived = self.derived();
        let value = |name: &str| {
            derived
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.clone().into_owned())
        };
        let columns = ddl_columns();
        let cells = columns
            .iter()
            .map(|column| {
                let name = column.name.as_str();
                let cell = match name {
                    "conversation_id" => text(id),
                    "source" => text(marks.index_source),
                    "app_data_dir" => text(marks.app_data_dir),
                    "project_id" => text(self.project_id.as_deref().unwrap_or(marks.project_id)),
                    "status" => text(marks.status),
                    "nesting_depth" | "not_fully_idle" | "killed" => JsonCell::Integer(0),
                    _ => value(name).unwrap_or_else(|| text("")),
                };
                (name.to_string(), cell)
            })
            .collect();
        IndexRow {
            user_version: 0,
            cells,
        }
    }

    /// [`Summary::row`] in the shape of the index the agy of today makes
    /// (`user_version` 3, agy-store(5)): with its `raw_summary` (null when
    /// this summary has none) and an empty `group_id`.
    pub fn row_v3(&self, id: &str) -> IndexRow {
        let mut row = self.row(id);
        row.user_version = 3;
        for (name, _) in super::LATER_COLUMNS {
            row.cells.push((name.to_string(), text("")));
        }
        match &self.raw_summary {
            Some(raw) => row.put_raw_summary(raw),
            None => row.set(super::RAW_SUMMARY, JsonCell::Null),
        }
        row
    }

    /// Whether `row` agrees with this summary on what an edit changes and
    /// agy's list relies on: the step count and the last user input's idx.
    /// (Titles and times agy writes its own way are not compared.)
    pub fn agrees(&self, row: &IndexRow) -> bool {
        let last = self.last_user_input.map_or(-1, |(idx, _)| idx);
        row.int("step_count") == Some(self.step_count)
            && row.int("last_user_input_step_index") == Some(last)
    }

    /// `row` brought up to date with this summary (`--reindex`, and a
    /// conversation written without an index record): the counts, times,
    /// preview and workspace follow the conversation; a non-empty title is
    /// agy's or the user's name for it and is kept; every column a summary
    /// says nothing of keeps its bytes.
    pub fn refresh(&self, row: &IndexRow) -> IndexRow {
        let mut out = row.clone();
        for (name, value) in self.derived() {
            let named = row.get("title").and_then(JsonCell::as_text);
            if name == "title" && named.is_some_and(|t| !t.is_empty()) {
                continue;
            }
            out.set(name, value.into_owned());
        }
        // (A table without the column does not take it: `write::insert`.)
        if let Some(raw) = &self.raw_summary {
            out.put_raw_summary(raw);
        }
        out
    }

    /// `row`, the original row of a conversation whose summary was
    /// `before`, carried onto the edited conversation whose summary is
    /// this (`agy-encode --onto`): a column whose derived value the edit
    /// changed takes the new one, every other keeps its bytes.
    pub fn carry(&self, before: &Summary, row: &IndexRow) -> IndexRow {
        self.carry_into(before, row.clone())
    }

    /// [`Summary::carry`] onto a row that is the caller's to give.
    pub fn carry_into(&self, before: &Summary, mut row: IndexRow) -> IndexRow {
        for ((name, old), (_, new)) in before.derived().into_iter().zip(self.derived()) {
            if old != new {
                row.set(name, new.into_owned());
            }
        }
        row
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::store::index) fn summary() -> Summary {
        Summary {
            title: Some("Fix the test".into()),
            preview: Some("Fix the flaky test please".into()),
            step_count: 5,
            created: Some(Timestamp {
                seconds: 1_786_000_000,
                nanos: 0,
            }),
            last_step_time: Some(Timestamp {
                seconds: 1_786_000_100,
                nanos: 7,
            }),
            cwd: Some("/home/u/my repo".into()),
            branch: None,
            parent_conversation_id: None,
            project_id: None,
            last_user_input: Some((
                3,
                Some(Timestamp {
                    seconds: 1_786_000_050,
                    nanos: 0,
                }),
            )),
            trajectory_source: None,
            raw_summary: None,
        }
    }

    #[test]
    fn a_derived_row_follows_the_rows_agy_accepted() {
        let row = summary().row("c1");
        let names: Vec<&str> = row.cells.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), 19);
        assert_eq!(names[0], "conversation_id");
        assert_eq!(names[18], "app_data_dir");
        let get = |c: &str| row.get(c).unwrap().clone();
        assert_eq!(get("conversation_id"), text("c1"));
        assert_eq!(get("step_count"), JsonCell::Integer(5));
        assert_eq!(get("last_modified_time"), text("2026-08-06 07:08:20+00:00"));
        assert_eq!(
            get("last_user_input_time"),
            text("2026-08-06 07:07:30+00:00")
        );
        assert_eq!(get("last_user_input_step_index"), JsonCell::Integer(3));
        assert_eq!(
            get("workspace_uris"),
            text(r#"["file:///home/u/my%20repo"]"#)
        );
        assert_eq!(get("source"), text("antigravity-cli"));
        assert_eq!(get("app_data_dir"), text("antigravity-cli"));
        assert_eq!(get("project_id"), text("default-cli-project"));
        assert_eq!(get("status"), text(""));
        assert_eq!(get("killed"), JsonCell::Integer(0));
        let desktop = Summary {
            trajectory_source: Some(1),
            ..summary()
        }
        .row("c1");
        for (column, value) in [
            ("source", ""),
            ("app_data_dir", "antigravity"),
            ("status", "CASCADE_RUN_STATUS_IDLE"),
            ("project_id", "outside-of-project"),
        ] {
            assert_eq!(desktop.get(column), Some(&text(value)), "{column}");
        }
        let empty = Summary::default().row("c2");
        assert_eq!(
            empty.get("last_user_input_step_index"),
            Some(&JsonCell::Integer(-1))
        );
        assert_eq!(empty.get("workspace_uris"), Some(&text("[]")));
        assert_eq!(empty.get("last_modified_time"), Some(&text(NO_TIME)));
    }

    #[test]
    fn carrying_changes_only_what_the_edit_changed() {
        let before = summary();
        let mut agy_row = before.row("c1");
        agy_row.set("title", text("agy's own title"));
        agy_row.set("last_modified_time", text("2026-08-05 19:48:21.5+00:00"));
        // Nothing changed: every byte stays.
        assert_eq!(before.carry(&before, &agy_row), agy_row);
        let mut after = before.clone();
        after.step_count = 3;
        after.last_user_input = Some((0, before.created));
        let carried = after.carry(&before, &agy_row);
        assert_eq!(carried.get("step_count"), Some(&JsonCell::Integer(3)));
        assert_eq!(
            carried.get("last_user_input_step_index"),
            Some(&JsonCell::Integer(0))
        );
        assert_eq!(carried.get("title"), Some(&text("agy's own title")));
        assert_eq!(
            carried.get("last_modified_time"),
            Some(&text("2026-08-05 19:48:21.5+00:00"))
        );
        assert!(!before.agrees(&carried) && after.agrees(&carried));
    }

    #[test]
    fn refreshing_keeps_a_name_and_unknown_columns() {
        let mut old = summary().row("c1");
        old.cells.push(("group_id".into(), text("g7")));
        old.set("title", text("Named by agy"));
        let mut now = summary();
        now.step_count = 9;
        now.title = Some("derived".into());
        let fresh = now.refresh(&old);
        assert_eq!(fresh.get("title"), Some(&text("Named by agy")));
        assert_eq!(fresh.get("group_id"), Some(&text("g7")));
        assert_eq!(fresh.get("step_count"), Some(&JsonCell::Integer(9)));
        old.set("title", text(""));
        assert_eq!(now.refresh(&old).get("title"), Some(&text("derived")));
    }
}
