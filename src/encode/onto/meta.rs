//! An edited meta record written back: what agy-decode's meta record shows
//! that agy keeps outside the steps, put back where agy keeps it.
//!
//! - `title`: a CHECKPOINT step naming the conversation, agy's own way of
//!   titling one.
//! - `cwd`: where the conversation names its project (FORMAT.md 15 row 7)
//!   moves from the old directory to the new one, as `agy-edit move` moves
//!   it ([`crate::agy::paths::Move`]): the trajectory metadata's workspace
//!   folders, git roots and workspace_uris at or under it, the index row's
//!   `workspace_uris`, the ACP sidecar's `cwd`; every other byte stays. A
//!   conversation that named no directory (a headless `agy -p`) gets a
//!   workspace, or its sidecar the `cwd`.
//! - `git_branch`: the first workspace's branch.
//!
//! Every other key (model, times, ids, lineage) is what the steps and
//! rows say, not something kept apart: an edit there is refused.

use crate::agy::paths::Move;
use crate::agy::project;
use crate::error::{Error, Result};
use crate::store::index::IndexRow;
use crate::stream::io::Output;
use crate::stream::message::{path_to_uri, Block, InputRecord, Role};
use crate::stream::record::{JsonCell, Side};

use super::Merger;

/// The keys of a meta record an edit may change.
const EDITABLE: &[&str] = &["title", "cwd", "git_branch"];

/// What an edited meta record changes besides the title.
pub(super) struct MetaEdit {
    /// The working directory moved from the original's to the edited one.
    moved: Option<Move>,
    /// A working directory for a conversation that named none.
    added: Option<String>,
    branch: Option<String>,
    /// A directory added to a conversation whose metadata is empty (the
    /// ACP lane's) goes to its sidecar, which must come.
    sidecar_wanted: bool,
}

impl Merger {
    /// The meta record: the original's, unless it changed.
    pub(super) fn meta(&mut self, line: &[u8], out: &mut Output) -> Result<()> {
        self.drain_steps(out)?;
        self.conv.as_mut().expect("a conversation is open").saw_meta = true;
        let original = self.decoder.meta_line();
        if line == original.as_slice() {
            return Ok(());
        }
        let edited: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(line).map_err(|e| Error::data(format!("bad JSON: {e}")))?;
        if let Some(why) = edited.get("incomplete") {
            return Err(Error::data(format!(
                "its meta record says its messages are not all of it ({why}): what is missing would be deleted; nothing of it is written back"
            )));
        }
        // The decoder has the conversation open once its db record was read
        // ([`Merger::begin`]); without one there is nothing to compare to.
        let before: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&original)
            .map_err(|_| {
                Error::data("the --onto stream has no db, schema or row record of it to hold its meta record to")
            })?;
        let mut changed: Vec<&str> = Vec::new();
        for key in edited.keys().chain(before.keys()) {
            if edited.get(key) != before.get(key) && !changed.contains(&key.as_str()) {
                changed.push(key);
            }
        }
        if let Some(key) = changed.iter().find(|k| !EDITABLE.contains(k)) {
            return Err(Error::data(format!(
                "meta record: {key:?} differs from the original's, and is what the steps and rows say: edit the messages (agy-encode --onto writes back edits of {} only)",
                EDITABLE.join(", ")
            )));
        }
        let conv = self.conv.as_mut().expect("a conversation is open");
        let text = |map: &serde_json::Map<String, serde_json::Value>, key: &str| match map.get(key)
        {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(Error::data(format!(
                "meta record: {key} is {other}, not a string"
            ))),
        };
        let mut edit = MetaEdit {
            moved: None,
            added: None,
            branch: None,
            sidecar_wanted: false,
        };
        if changed.contains(&"cwd") {
            let in_cwd = |e: Error| e.context("meta record: cwd");
            match (text(&before, "cwd")?, text(&edited, "cwd")?) {
                (Some(old), Some(new)) => {
                    edit.moved = Some(
                        Move::new(&old, &new)
                            .map_err(|e| Error::data(e.message().to_string()))
                            .map_err(in_cwd)?,
                    );
                }
                (None, Some(new)) => {
                    crate::agy::paths::Dir::parse(&new)
                        .map_err(|e| Error::data(e.message().to_string()))
                        .map_err(in_cwd)?;
                    edit.sidecar_wanted = conv.metadata.as_ref().is_none_or(|m| m.is_empty());
                    edit.added = Some(new);
                }
                (_, None) => {
                    return Err(in_cwd(Error::data(
                        "a conversation's working directory can be changed, not removed",
                    )))
                }
            }
        }
        if changed.contains(&"git_branch") {
            let branch = text(&edited, "git_branch")?.ok_or_else(|| {
                Error::data("meta record: git_branch can be changed, not removed")
            })?;
            let metadata = conv.metadata.as_deref().unwrap_or_default();
            if project::set_branch(metadata, &branch).is_none() && edit.added.is_none() {
                return Err(Error::data(
                    "meta record: git_branch: the conversation names no workspace to hold a branch (give it a cwd too)",
                ));
            }
            edit.branch = Some(branch);
        }
        if changed.contains(&"title") {
            if let Some(title) = text(&edited, "title")? {
                conv.new_message(title_checkpoint(&conv.id, &title), out)?;
            }
        }
        if edit.moved.is_some() || edit.added.is_some() || edit.branch.is_some() {
            conv.meta_edit = Some(edit);
        }
        Ok(())
    }
}

/// A checkpoint naming the conversation `title`.
fn title_checkpoint(id: &str, title: &str) -> InputRecord<'static> {
    InputRecord {
        conversation: Some(id.to_string().into()),
        kind: Some("message".into()),
        role: Some(Role::System),
        step_type: Some("CHECKPOINT".into()),
        content: Some(vec![
            Block::Text {
                text: title.to_string().into(),
                field: Some("user_intent".into()),
            },
            Block::Text {
                text: title.to_string().into(),
                field: Some("conversation_title".into()),
            },
        ]),
        ..InputRecord::default()
    }
}

impl MetaEdit {
    /// The trajectory metadata edited; `None` when it did not change.
    pub(super) fn metadata(&self, data: &[u8]) -> Option<Vec<u8>> {
        let mut bytes = match (&self.moved, &self.added) {
            (Some(mv), _) => project::rewrite_workspaces(data, mv),
            (None, Some(cwd)) if !data.is_empty() => {
                Some(project::add_workspace(data, &path_to_uri(cwd)))
            }
            _ => None,
        };
        if let Some(branch) = &self.branch {
            let now = bytes.as_deref().unwrap_or(data);
            if let Some(set) = project::set_branch(now, branch) {
                bytes = Some(set);
            }
        }
        bytes
    }

    /// The index row's `workspace_uris` edited in place.
    pub(super) fn index_row(&self, row: &mut IndexRow) -> Result<()> {
        match (&self.moved, &self.added) {
            (Some(mv), _) => {
                row.rewrite_text("workspace_uris", mv);
                row.edit_blob("raw_summary", |summary| {
                    project::rewrite_summary(summary, mv)
                })?;
            }
            (None, Some(cwd)) if row.workspace_uris().is_empty() => {
                let list = serde_json::to_string(&[path_to_uri(cwd)]).expect("strings serialize");
                row.set("workspace_uris", JsonCell::Plain(list.into()));
                // It names no workspace (9): made anew by agy-pack.
                row.forget_raw_summary();
            }
            _ => {}
        }
        Ok(())
    }

    /// A side entry of the conversation, its project moved as the index
    /// row's; `None` when it does not change.
    pub(super) fn side(&self, side: &Side<'_>) -> Option<Side<'static>> {
        match (&self.moved, &self.added) {
            (Some(mv), _) => crate::store::side::moved(side, mv, false),
            _ => None,
        }
    }

    /// Whether the edit gives the conversation a workspace it did not
    /// name: its summaries, which name none, are made anew by agy-pack.
    pub(super) fn adds_workspace(&self) -> bool {
        self.added.is_some()
    }

    /// The ACP sidecar edited; `None` when it did not change.
    pub(super) fn sidecar(&mut self, json: &[u8]) -> Option<Vec<u8>> {
        match (&self.moved, &self.added) {
            (Some(mv), _) => project::rewrite_sidecar_cwd(json, mv),
            (None, Some(cwd)) => {
                self.sidecar_wanted = false;
                project::set_sidecar_cwd(json, cwd)
            }
            _ => None,
        }
    }

    /// Whether a sidecar should be looked at.
    pub(super) fn edits_sidecar(&self) -> bool {
        self.moved.is_some() || self.added.is_some()
    }

    /// Checks, at the conversation's end, that the directory went where
    /// the conversation keeps it.
    pub(super) fn check_done(&self) -> Result<()> {
        if self.sidecar_wanted {
            return Err(Error::data(
                "meta record: cwd: the conversation has no workspace and no sidecar to keep a working directory in",
            ));
        }
        Ok(())
    }
}
