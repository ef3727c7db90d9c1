//! What one conversation remembers between steps: the state that carries
//! over from one step to the next, filled by the conversation's other rows
//! (trajectory metadata, `gen_metadata`, parent references) and its brain
//! files, and the `meta` record it ends with.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::agy::steps::field;
use crate::agy::wire;
use crate::error::Result;
use crate::stream::message::{self, ForkedFrom, Meta};
use crate::stream::record::End;
use crate::stream::record::FileContent;
use crate::stream::spool::Spool;
use crate::time::Timestamp;

use super::artifacts::Artifacts;
use super::read_timestamp;
use super::waiting::Waiting;

/// What one conversation remembers between steps.
#[derive(Default)]
pub(super) struct Conversation {
    pub(super) id: String,
    pub(super) all: bool,
    pub(super) cascade_id: Option<String>,
    pub(super) cwd: Option<String>,
    pub(super) git_branch: Option<String>,
    pub(super) created_at: Option<Timestamp>,
    pub(super) first_step_time: Option<Timestamp>,
    pub(super) parent_conversation_id: Option<String>,
    /// The trajectory metadata's project id (18), when it names one.
    pub(super) project_id: Option<String>,
    /// FORK and SUBAGENT_FORK references, in row order.
    pub(super) references: Vec<ForkedFrom>,
    /// Step idx → human model name, from `gen_metadata`.
    pub(super) models_by_step: HashMap<i64, String>,
    /// Model enum → human model name, from `gen_metadata` rows whose usage
    /// names the enum: the name for steps no generation lists.
    pub(super) models_by_enum: HashMap<u64, String>,
    /// Ids of calls declared by a planner step and not yet answered.
    pub(super) open_calls: HashSet<String>,
    pub(super) checkpoint_title: Option<String>,
    /// The title the first user text gives
    /// ([`crate::stream::message::title_from_text`]), taken
    /// when it comes: a copy of the whole text, which may be tens of MB,
    /// would sit in memory until the conversation ends.
    pub(super) first_user_title: Option<String>,
    pub(super) latest_model: Option<String>,
    /// The model name of the latest user input's planner configuration.
    pub(super) configured_model: Option<String>,
    /// The step being decoded is damaged (its messages say so).
    pub(super) damaged: bool,
    /// Present once a result waits for its spilled full text.
    pub(super) waiting: Option<Waiting>,
    /// The brain directory's artifacts, written when the conversation ends.
    pub(super) artifacts: Artifacts,
    /// Its `db` record says an `end` record closes it.
    pub(super) closed: bool,
    /// Its `end` record, once read.
    pub(super) end: Option<End>,
    /// Why its messages are not all of it (see [`Meta::incomplete`]).
    pub(super) incomplete: Option<String>,
}

impl Conversation {
    pub(super) fn meta(&self) -> Meta<'_> {
        Meta {
            conversation: &self.id,
            kind: "meta",
            id: Cow::Borrowed(self.cascade_id.as_deref().unwrap_or(&self.id)),
            timestamp: self
                .created_at
                .or(self.first_step_time)
                .and_then(|t| t.format()),
            cwd: self.cwd.clone(),
            git_branch: self.git_branch.clone(),
            title: self
                .checkpoint_title
                .clone()
                .or_else(|| self.first_user_title.clone()),
            model: self.latest_model.clone(),
            parent_conversation_id: self.parent_conversation_id.clone(),
            forked_from: self.forked_from(),
            incomplete: self.incomplete.clone(),
        }
    }

    /// The brain-relative path a `full_output_uri` names: the part after
    /// `brain/<this conversation>/`, or the text itself when it is already
    /// relative (`steps/12/output.txt`). `None` for anywhere else, since
    /// the row stream carries only this conversation's brain files.
    ///
    /// A fork's steps are byte copies of its parent's and name the parent's
    /// brain directory (agy copies them so); a fork that agy-edit wrote
    /// carries those files in its own, so a conversation a fork reference
    /// names counts as this one here. A fork agy wrote has no such file, and
    /// its result shows the step's own text, as before.
    pub(super) fn brain_path(&self, uri: &str) -> Option<String> {
        let path = message::uri_to_path(uri);
        if let Some(at) = path.rfind("/brain/") {
            let rest = &path[at + "/brain/".len()..];
            let (dir, inside) = rest.split_once('/')?;
            let ours = dir == self.id
                || Some(dir) == self.cascade_id.as_deref()
                || self
                    .references
                    .iter()
                    .any(|r| r.conversation_id.as_deref() == Some(dir));
            return (ours && !inside.is_empty()).then(|| inside.to_string());
        }
        let relative = !path.is_empty() && !path.starts_with('/') && !path.contains("://");
        relative.then_some(path)
    }

    /// A brain file (or the next part of one) of the row stream: kept when
    /// a waiting result names it.
    pub(super) fn file(
        &mut self,
        path: &str,
        append: bool,
        content: &FileContent<'_>,
    ) -> Result<()> {
        self.keep_file(path, append, |texts| match content {
            FileContent::Text(text) => texts.append_json_str_body(text),
            FileContent::Hex(hex_text) => {
                let bytes = crate::stream::record::decode_hex(hex_text)?;
                texts.append_json_str_body(&crate::agy::wire::lossy_str(&bytes))
            }
        })
    }

    /// [`Conversation::file`] for a text part given as the body of a JSON
    /// string escaped exactly as [`crate::stream::json::write_str_body`]
    /// escapes, which is kept as it is.
    pub(super) fn escaped_file_text(
        &mut self,
        path: &str,
        append: bool,
        escaped: &[u8],
    ) -> Result<()> {
        self.keep_file(path, append, |texts| texts.append(escaped))
    }

    /// Whether a waiting result names the brain file `path`.
    pub(super) fn wants_file(&self, path: &str) -> bool {
        self.waiting
            .as_ref()
            .is_some_and(|waiting| waiting.files.contains_key(path))
    }

    /// Keeps a part of the brain file `path`, written by `write` as JSON
    /// string text, when a waiting result names the file.
    fn keep_file(
        &mut self,
        path: &str,
        append: bool,
        write: impl FnOnce(&mut Spool) -> Result<()>,
    ) -> Result<()> {
        let Some(waiting) = self.waiting.as_mut() else {
            return Ok(());
        };
        let Some(slot) = waiting.files.get_mut(path) else {
            return Ok(());
        };
        let start = waiting.texts.len();
        write(&mut waiting.texts)?;
        if !append {
            slot.clear();
        }
        slot.push(start..waiting.texts.len());
        Ok(())
    }

    pub(super) fn read_trajectory_metadata(&mut self, data: &[u8]) {
        self.project_id = crate::agy::project::project_id(data).filter(|p| !p.is_empty());
        let meta = wire::Message::new(data);
        let workspace = meta.get_message(field::trajectory::WORKSPACES);
        let folder = workspace
            .and_then(|w| w.get_nonempty_str(field::trajectory::WORKSPACE_FOLDER_URI))
            .or_else(|| {
                meta.repeated_bytes(field::trajectory::WORKSPACE_URIS)
                    .map(crate::agy::wire::lossy_str)
                    .find(|u| !u.is_empty())
            });
        if let Some(uri) = folder {
            self.cwd = Some(message::uri_to_path(&uri));
        }
        if let Some(branch) =
            workspace.and_then(|w| w.get_nonempty_str(field::trajectory::WORKSPACE_BRANCH))
        {
            self.git_branch = Some(branch.into_owned());
        }
        if let Some(ts) = meta
            .get_message(field::trajectory::CREATED_AT)
            .and_then(read_timestamp)
        {
            self.created_at = Some(ts);
        }
        if let Some(parent) = meta.get_nonempty_str(field::trajectory::PARENT_CONVERSATION_ID) {
            self.parent_conversation_id = Some(parent.into_owned());
        }
    }

    pub(super) fn read_generator_metadata(&mut self, data: &[u8]) {
        let generation = wire::Message::new(data);
        let Some(name) = generation
            .get_message(field::generator::CHAT_MODEL)
            .and_then(|m| m.get_nonempty_str(field::generator::RESPONSE_MODEL))
        else {
            return;
        };
        for idx in generation.repeated_varints(field::generator::STEP_INDICES) {
            self.models_by_step.insert(idx as i64, name.to_string());
        }
        let model_enum = generation
            .get_message(field::generator::CHAT_MODEL)
            .and_then(|m| m.get_message(field::generator::USAGE))
            .and_then(|usage| usage.get_u64(field::usage::MODEL))
            .filter(|&v| v != 0);
        if let Some(model_enum) = model_enum {
            self.models_by_enum.insert(model_enum, name.into_owned());
        }
    }

    /// A `parent_references` row: kept when it is a fork (FORK or
    /// SUBAGENT_FORK, grade B) naming a conversation or trajectory.
    pub(super) fn read_reference(&mut self, data: &[u8]) {
        use field::reference::*;
        let reference = wire::Message::new(data);
        let reference_type = match reference.get_u64(REFERENCE_TYPE) {
            Some(FORK) => "FORK",
            Some(SUBAGENT_FORK) => "SUBAGENT_FORK",
            _ => return,
        };
        let fork = ForkedFrom {
            conversation_id: reference
                .get_nonempty_str(CONVERSATION_ID)
                .map(Cow::into_owned),
            step_index: reference.get_i32(STEP_INDEX).map(i64::from),
            trajectory_id: reference
                .get_nonempty_str(TRAJECTORY_ID)
                .map(Cow::into_owned),
            reference_type: Some(reference_type.to_string()),
        };
        if fork.conversation_id.is_some() || fork.trajectory_id.is_some() {
            self.references.push(fork);
        }
    }

    /// The latest fork reference that names another conversation (a
    /// rewind's reference names the conversation itself).
    pub(super) fn forked_from(&self) -> Option<ForkedFrom> {
        self.references
            .iter()
            .rev()
            .find(|r| {
                let own = r.conversation_id.as_deref();
                own.is_none() || (own != Some(&self.id) && own != self.cascade_id.as_deref())
            })
            .cloned()
    }
}
