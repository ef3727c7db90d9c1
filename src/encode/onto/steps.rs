//! Settling each original step: kept, renumbered, deleted or edited, and
//! new messages' steps where they stand.

use std::borrow::Cow;
use std::sync::Arc;

use super::edit::payload_fields;
use super::rows::generic_args;
use super::step_row::StepRow;
use super::{Merge, OriginalStep, TextEdit};
use crate::agy::patch;
use crate::agy::steps::field;
use crate::agy::wire;
use crate::decode::summary::StepFacts;
use crate::encode;
use crate::error::Result;
use crate::stream::io::Output;
use crate::stream::message::{Block, InputRecord};

/// Buffers kept for reuse.
const POOL: usize = 2;

impl Merge {
    /// Nothing renumbered or deleted so far.
    pub(super) fn is_identity(&self) -> bool {
        self.map.iter().all(|&(old, new)| new == Some(old))
    }

    pub(super) fn new_idx(&self, old: i64) -> Option<i64> {
        match self.map.binary_search_by_key(&old, |&(o, _)| o) {
            Ok(i) => self.map[i].1,
            Err(_) => None,
        }
    }

    /// The new idx of the last kept step at or before `old` (0 if none).
    pub(super) fn new_idx_at_or_before(&self, old: i64) -> i64 {
        let end = self.map.partition_point(|&(o, _)| o <= old);
        self.map[..end]
            .iter()
            .rev()
            .find_map(|&(_, new)| new)
            .unwrap_or(0)
    }

    /// Drops an original step; the steps after it move down.
    fn delete(&mut self, idx: i64) {
        self.map.push((idx, None));
        self.delta -= 1;
    }

    /// Writes a new message's steps where the merge stands.
    pub(super) fn new_message(&mut self, record: InputRecord, out: &mut Output) -> Result<()> {
        let at = self.next_idx;
        let end = self.synth.message(&record, at, out)?;
        self.next_idx = end;
        Ok(())
    }

    /// Decides the current original step: kept, deleted or edited.
    pub(super) fn settle(&mut self, out: &mut Output) -> Result<()> {
        let mut cur = self.cur.take().expect("a step to settle");
        let result = self.decide(&mut cur, out);
        // The step's buffers serve the next steps: a large row would
        // otherwise fault in fresh pages for each copy.
        let OriginalStep { line, lines, .. } = cur;
        for mut buf in [line.into_buffer(), Some(lines)].into_iter().flatten() {
            if self.pool.len() < POOL {
                crate::stream::io::shed(&mut buf);
                self.pool.push(buf);
            }
        }
        result
    }

    /// Kept, deleted or edited: writes what the step becomes.
    fn decide(&mut self, cur: &mut OriginalStep, out: &mut Output) -> Result<()> {
        let call_removed = cur
            .call_id
            .as_ref()
            .is_some_and(|id| matches!(self.changed_calls.get(id), Some(None)));
        if !cur.named() {
            if cur.hidden(self.all) && !call_removed {
                return self.keep(cur, None, out);
            }
            self.delete(cur.idx);
            return Ok(());
        }
        if cur.edited.is_empty() {
            return self.keep(cur, None, out);
        }
        let patched = self.patch(cur)?;
        match patched {
            Some(row) => {
                // The original row is not written: let go of it before
                // the edited one is copied to be renumbered (two Steps of
                // a pasted text are already a hundred MB each).
                cur.line = StepRow::Line(Vec::new());
                self.keep(cur, Some(row), out)
            }
            None => {
                // Not an edit of this step's own kind: the step goes, and
                // its messages (the unchanged ones too) are written as new
                // steps in its place — at its own idx as `keep` would put
                // it, so that a hole before it stays a hole.
                self.next_idx = (cur.idx + self.delta).max(self.next_idx);
                self.delete(cur.idx);
                let unchanged = (0..cur.expected.len())
                    .filter(|&i| cur.matched[i])
                    .map(|i| cur.expected_line(i));
                for line in unchanged.chain(cur.edited.iter().map(Vec::as_slice)) {
                    let mut record = encode::parse_line(line)?;
                    record.idx = None;
                    // The steps that execute its calls repeat them.
                    for block in record.content.iter().flatten() {
                        if let Block::ToolUse {
                            id,
                            name,
                            input,
                            signature,
                        } = block
                        {
                            let call =
                                self.synth
                                    .call_bytes(id, name, input, signature.as_deref())?;
                            self.changed_calls.insert(id.to_string(), Some(call));
                        }
                    }
                    self.new_message(record, out)?;
                }
                Ok(())
            }
        }
    }

    /// Writes an original step (or its edited row), renumbered where the
    /// merge has moved, with the calls edits changed.
    pub(super) fn keep(
        &mut self,
        cur: &OriginalStep,
        edited: Option<StepRow>,
        out: &mut Output,
    ) -> Result<()> {
        let new = (cur.idx + self.delta).max(self.next_idx);
        self.delta = new - cur.idx;
        self.next_idx = new + 1;
        self.map.push((cur.idx, Some(new)));
        // An edited row says other things (its text, say) than the
        // original did; renumbering changes none of them.
        match &edited {
            Some(row) => {
                let mut facts = row.facts()?;
                self.share_user_text(cur.idx, &mut facts);
                self.after.note(new, &facts);
            }
            None => self.after.note(new, &cur.facts),
        }
        let changed_call = cur
            .call_id
            .as_ref()
            .and_then(|id| self.changed_calls.get(id))
            .and_then(|c| c.clone());
        let row = edited.as_ref().unwrap_or(&cur.line);
        if new == cur.idx && changed_call.is_none() {
            // The row as it was (or as edited): the common case, uncopied.
            return row.write(out);
        }
        let arg_edits = cur
            .call_id
            .as_ref()
            .and_then(|id| self.arg_edits.get(id))
            .cloned()
            .unwrap_or_default();
        let row = row.rewrite(
            |step| {
                // Copied only where something changes it.
                let mut step = Cow::Borrowed(step);
                if let Some(call) = &changed_call {
                    if let Some(s) = wire::edit_field(&step, field::step::METADATA, |m| {
                        Some(wire::set_field(
                            m,
                            field::metadata::TOOL_CALL,
                            std::slice::from_ref(call),
                        ))
                    }) {
                        step = Cow::Owned(s);
                    }
                    // A GENERIC carrier repeats the arguments as a map.
                    if let Some(s) = wire::edit_field(&step, field::step::GENERIC, |generic| {
                        let has_args = wire::Message::new(generic).has(field::generic::ARGS);
                        has_args.then(|| {
                            wire::set_field(generic, field::generic::ARGS, &generic_args(call))
                        })
                    }) {
                        step = Cow::Owned(s);
                    }
                }
                // The executing step's own copies of edited arguments.
                let numbers = payload_fields();
                for (from, to) in &arg_edits {
                    if let Some(s) = patch::replace_text_in(&step, &numbers, from, to) {
                        step = Cow::Owned(s);
                    }
                }
                if new != cur.idx {
                    if let Some(s) = patch::renumber_step(&step, cur.idx, new) {
                        step = Cow::Owned(s);
                    }
                }
                patch::owned(step)
            },
            Some(new),
        )?;
        row.write(out)
    }

    pub(super) fn note_edit(
        &mut self,
        idx: i64,
        old: impl Into<Arc<str>>,
        new: impl Into<Arc<str>>,
    ) {
        self.text_edits
            .entry(idx)
            .or_default()
            .push((old.into(), new.into()));
    }

    /// Makes an edited step's user text in `facts` the one its text edit
    /// keeps, when they are the same: held once, not twice.
    fn share_user_text(&self, idx: i64, facts: &mut StepFacts) {
        let Some(text) = &facts.user_text else {
            return;
        };
        let edits = self.text_edits.get(&idx).map_or(&[][..], Vec::as_slice);
        if let Some(new) = edited_text(edits, text) {
            facts.user_text = Some(new);
        }
    }
}

/// The new text of `edits` that is `text`, if any.
fn edited_text(edits: &[TextEdit], text: &str) -> Option<Arc<str>> {
    edits
        .iter()
        .find(|(_, new)| **new == *text)
        .map(|(_, new)| new.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edited_text_is_found_to_be_shared() {
        let edits: Vec<TextEdit> = vec![
            (Arc::from("a"), Arc::from("b")),
            (Arc::from("old"), Arc::from("new")),
        ];
        let found = edited_text(&edits, "new").unwrap();
        assert!(Arc::ptr_eq(&found, &edits[1].1));
        assert!(edited_text(&edits, "old").is_none());
        assert!(edited_text(&[], "new").is_none());
    }
}
