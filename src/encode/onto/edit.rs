//! An edited step: what its messages changed, made in its bytes, and
//! nothing else.

use std::borrow::Cow;
use std::sync::Arc;

use super::step_row::StepRow;
use super::{Merge, OriginalStep};
use crate::agy::patch;
use crate::agy::steps::field;
use crate::agy::wire;
use crate::encode::{self, join};
use crate::error::{Error, Result};
use crate::stream::message::{Block, InputRecord, ResultContent, Role, ToolInput};

/// What an edited step comes to, as told while its message lines are held.
enum Plan {
    /// Not an edit a step of this kind can take.
    Anew,
    /// The step's row as edited.
    Row(StepRow),
    /// The user's text edited, `old` (not empty) to `new`: made once the
    /// lines are let go.
    UserText { old: String, new: String },
}

impl Merge {
    /// The row of an edited step, or `None` when the edit is not one a
    /// step of this kind can take (the messages are then written anew).
    ///
    /// A user text edit lets go of the step's message lines before it
    /// makes the new Step: for a pasted text of tens of MB, the lines
    /// (expected and edited) would otherwise be held beside both Steps and
    /// both texts.
    pub(super) fn patch(&mut self, cur: &mut OriginalStep) -> Result<Option<StepRow>> {
        let (o, n) = match self.plan(cur)? {
            Plan::Anew => return Ok(None),
            Plan::Row(row) => return Ok(Some(row)),
            Plan::UserText { old, new } => (old, new),
        };
        // The texts as the edit keeps them, before the new Step is made:
        // the old one is the original tally's, as a rule, and shared.
        let o = kept_or_new(cur.facts.user_text.as_ref(), o);
        let n = Arc::<str>::from(n);
        let fields = [field::step::USER_INPUT];
        let original = cur.line.step()?;
        let finder = memchr::memmem::Finder::new(o.as_bytes());
        if !patch::holds_text_in(&original, &fields, &finder) {
            return Ok(None);
        }
        // From here the edit takes: the messages are not written anew.
        cur.lines = Vec::new();
        cur.edited = Vec::new();
        let step = patch::replace_found_in(&original, &fields, &finder, &n)
            .expect("the step holds the old text");
        self.note_edit(cur.idx, o, n);
        Ok(Some(cur.line.with_step(&original, Some(step), None)?))
    }

    /// Compares the step's messages with their edited lines and makes
    /// every edit but a user text's.
    fn plan(&mut self, cur: &OriginalStep) -> Result<Plan> {
        // The edited lines in place of the lines they stand for.
        let mut before = Vec::new();
        for (i, (_, system)) in cur.expected.iter().enumerate() {
            if !*system || self.all {
                before.push(encode::parse_line(cur.expected_line(i))?);
            }
        }
        let mut after = Vec::new();
        for (i, (_, system)) in cur.expected.iter().enumerate() {
            if cur.matched[i] && (!*system || self.all) {
                after.push(encode::parse_line(cur.expected_line(i))?);
            }
        }
        for line in &cur.edited {
            after.push(encode::parse_line(line)?);
        }
        // Compare the step's one non-system message.
        let pick = |records: &[InputRecord<'_>]| -> Option<usize> {
            let main: Vec<usize> = (0..records.len())
                .filter(|&i| records[i].role != Some(Role::System))
                .collect();
            match main.as_slice() {
                [one] => Some(*one),
                [] if records.len() == 1 => Some(0),
                _ => None,
            }
        };
        let (Some(b), Some(a)) = (pick(&before), pick(&after)) else {
            return Ok(Plan::Anew);
        };
        let mut old = before.swap_remove(b);
        let mut new = after.swap_remove(a);
        if old.role != new.role {
            return Ok(Plan::Anew);
        }
        let original = cur.line.step()?;
        // Copied only where an edit changes it.
        let mut step = Cow::Borrowed(original.as_ref());
        let old_blocks = old.content.as_deref().unwrap_or_default();
        let new_blocks = new.content.as_deref().unwrap_or_default();
        // Record-level fields a patch does not rewrite: an edit there is
        // written anew.
        if old.timestamp != new.timestamp
            || old.usage != new.usage
            || old.stop_reason != new.stop_reason
            || old.model != new.model
            || old.implicit != new.implicit
            || old.raw != new.raw
        {
            return Ok(Plan::Anew);
        }
        match old.role {
            Some(Role::User) if has_result(old_blocks) => {
                let (
                    Some((old_id, old_content, old_error)),
                    Some((new_id, new_content, new_error)),
                ) = (single_result(old_blocks), single_result(new_blocks))
                else {
                    return Ok(Plan::Anew);
                };
                if old_error != new_error {
                    return Ok(Plan::Anew);
                }
                if old_id != new_id {
                    // Only as its call's id was edited: the call the step
                    // repeats then carries the new id.
                    let edited_call = cur
                        .call_id
                        .as_ref()
                        .and_then(|id| self.changed_calls.get(id))
                        .and_then(|c| c.as_deref())
                        .and_then(|c| wire::Message::new(c).get_str(field::tool_call::ID))
                        .is_some_and(|id| id == new_id);
                    if !edited_call {
                        return Ok(Plan::Anew);
                    }
                }
                let (ResultContent::Text(o), ResultContent::Text(n)) = (old_content, new_content)
                else {
                    return Ok(if old_content == new_content {
                        Plan::Row(cur.line.clone())
                    } else {
                        Plan::Anew
                    });
                };
                if o != n {
                    if o.is_empty() {
                        return Ok(Plan::Anew);
                    }
                    let Some(s) = patch::replace_text_in(&step, &payload_and_error(), o, n) else {
                        return Ok(Plan::Anew);
                    };
                    self.note_edit(cur.idx, &**o, &**n);
                    step = Cow::Owned(s);
                }
            }
            Some(Role::User) => {
                if media_of(old_blocks) != media_of(new_blocks) {
                    return Ok(Plan::Anew);
                }
                let (o, n) = (joined_text(old_blocks), joined_text(new_blocks));
                if o != n {
                    if o.is_empty() {
                        return Ok(Plan::Anew);
                    }
                    // Moved out of the records, not copied: tens of MB each.
                    return Ok(Plan::UserText {
                        old: owned_text(old.content.take()),
                        new: owned_text(new.content.take()),
                    });
                }
            }
            Some(Role::Assistant) => {
                let Some(s) = self.patch_planner(cur.idx, &step, old_blocks, new_blocks)? else {
                    return Ok(Plan::Anew);
                };
                step = Cow::Owned(s);
            }
            _ => {
                // A system message: each field's text where it was.
                let step_type = wire::Message::new(&step).get_u64(field::step::TYPE);
                let Some(number) = crate::agy::steps::payload_field(step_type.unwrap_or(0)) else {
                    return Ok(Plan::Anew);
                };
                for (o, n) in field_texts(old_blocks, new_blocks)? {
                    if o.is_empty() {
                        return Ok(Plan::Anew);
                    }
                    match patch::replace_text_in(&step, &[number], &o, &n) {
                        Some(s) => step = Cow::Owned(s),
                        None => return Ok(Plan::Anew),
                    }
                    self.note_edit(cur.idx, o, n);
                }
            }
        }
        let step = step.into_owned();
        Ok(Plan::Row(cur.line.with_step(
            &original,
            Some(step),
            None,
        )?))
    }

    /// A planner step with its reply text, thinking and calls as edited.
    pub(super) fn patch_planner(
        &mut self,
        idx: i64,
        step: &[u8],
        old: &[Block<'_>],
        new: &[Block<'_>],
    ) -> Result<Option<Vec<u8>>> {
        let mut step = step.to_vec();
        fn texts<'b>(blocks: &'b [Block<'b>]) -> (Cow<'b, str>, Cow<'b, str>, Vec<Option<String>>) {
            let mut text = Cow::Borrowed("");
            let mut thinking = Cow::Borrowed("");
            let mut signatures = Vec::new();
            for b in blocks {
                match b {
                    Block::Text { text: t, .. } => join(&mut text, &**t),
                    Block::Thinking {
                        thinking: t,
                        signature,
                    } => {
                        join(&mut thinking, &**t);
                        signatures.push(signature.as_deref().map(str::to_string));
                    }
                    _ => {}
                }
            }
            (text, thinking, signatures)
        }
        let (old_text, old_thinking, old_signatures) = texts(old);
        let (new_text, new_thinking, new_signatures) = texts(new);
        use field::planner::*;
        if old_signatures != new_signatures {
            // One thinking block's signature: where the step keeps it.
            let ([Some(old_sig)], [Some(new_sig)]) =
                (old_signatures.as_slice(), new_signatures.as_slice())
            else {
                return Ok(None);
            };
            let planner = wire::Message::new(&step)
                .get_message(field::step::PLANNER_RESPONSE)
                .unwrap_or_default();
            let edited = if planner.get_str(SIGNATURE).as_deref() == Some(old_sig.as_str()) {
                wire::edit_field(&step, field::step::PLANNER_RESPONSE, |p| {
                    patch::replace_text_in(p, &[SIGNATURE], old_sig, new_sig)
                })
            } else {
                match (planner.has(THINKING_SIGNATURE), hex::decode(new_sig)) {
                    (true, Ok(bytes)) => {
                        let mut value = wire::Writer::new();
                        crate::agy::steps::signature::write(&mut value, 1, &bytes);
                        // The field's value: what `write` put after its tag.
                        let value = wire::Message::new(value.as_bytes())
                            .get_bytes(1)
                            .unwrap_or_default()
                            .to_vec();
                        wire::edit_field(&step, field::step::PLANNER_RESPONSE, |p| {
                            Some(wire::set_field(
                                p,
                                THINKING_SIGNATURE,
                                std::slice::from_ref(&value),
                            ))
                        })
                    }
                    _ => None,
                }
            };
            match edited {
                Some(s) => step = s,
                None => return Ok(None),
            }
        }
        let planner_field = [field::step::PLANNER_RESPONSE];
        for (o, n, fields) in [
            (&old_text, &new_text, &[RESPONSE, MODIFIED_RESPONSE][..]),
            (&old_thinking, &new_thinking, &[THINKING, RAW_THINKING][..]),
        ] {
            if o == n {
                continue;
            }
            if o.is_empty() {
                return Ok(None);
            }
            let edited = wire::edit_field(&step, planner_field[0], |planner| {
                patch::replace_text_in(planner, fields, o, n)
            });
            match edited {
                Some(s) => step = s,
                None => return Ok(None),
            }
            self.note_edit(idx, &**o, &**n);
        }
        // Calls: kept as they were where unchanged, rewritten (keeping
        // every field a tool_use does not show) where edited, dropped
        // where removed.
        let calls = |blocks: &[Block<'_>]| -> Vec<(String, String, ToolInput, Option<String>)> {
            blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse {
                        id,
                        name,
                        input,
                        signature,
                    } => Some((
                        id.to_string(),
                        name.to_string(),
                        input.clone(),
                        signature.as_deref().map(str::to_string),
                    )),
                    _ => None,
                })
                .collect()
        };
        let (old_calls, new_calls) = (calls(old), calls(new));
        if old_calls != new_calls {
            let planner = wire::Message::new(&step)
                .get_message(field::step::PLANNER_RESPONSE)
                .unwrap_or_default();
            let originals: Vec<Vec<u8>> = planner
                .repeated_bytes(TOOL_CALLS)
                .map(<[u8]>::to_vec)
                .collect();
            let mut values = Vec::new();
            let position_of = |id: &str| {
                originals.iter().position(|c| {
                    wire::Message::new(c)
                        .get_str(field::tool_call::ID)
                        .as_deref()
                        == Some(id)
                })
            };
            for (p, (id, name, input, signature)) in new_calls.iter().enumerate() {
                // The original call: the one with this id, else the one at
                // this position when its id is gone (an edited id).
                let paired = position_of(id).or_else(|| {
                    old_calls
                        .get(p)
                        .filter(|(old_id, ..)| !new_calls.iter().any(|(i, ..)| i == old_id))
                        .and_then(|(old_id, ..)| position_of(old_id))
                });
                let Some(at) = paired else {
                    let fresh = self
                        .synth
                        .call_bytes(id, name, input, signature.as_deref())?;
                    values.push(fresh);
                    continue;
                };
                let bytes = &originals[at];
                let (old_id, old_name, old_input, old_signature) = &old_calls
                    .iter()
                    .find(|(i, ..)| {
                        wire::Message::new(bytes)
                            .get_str(field::tool_call::ID)
                            .as_deref()
                            == Some(i.as_str())
                    })
                    .cloned()
                    .unwrap_or_else(|| (String::new(), String::new(), input.clone(), None));
                if old_id == id
                    && old_name == name
                    && old_input == input
                    && old_signature == signature
                {
                    values.push(bytes.clone());
                    continue;
                }
                let fresh = self
                    .synth
                    .call_bytes(id, name, input, signature.as_deref())?;
                let fresh_message = wire::Message::new(&fresh);
                let mut call = bytes.clone();
                let mut numbers = Vec::new();
                if old_id != id {
                    numbers.push(field::tool_call::ID);
                }
                if old_name != name || old_input != input {
                    numbers.extend([field::tool_call::NAME, field::tool_call::ARGUMENTS_JSON]);
                    if wire::Message::new(&call).has(field::tool_call::ORIGINAL_NAME) {
                        numbers.push(field::tool_call::ORIGINAL_NAME);
                    }
                }
                if old_signature != signature {
                    numbers.push(field::tool_call::THINKING_SIGNATURE);
                }
                for number in numbers {
                    let value: Vec<Vec<u8>> = fresh_message
                        .get_bytes(number)
                        .map(|b| vec![b.to_vec()])
                        .unwrap_or_default();
                    call = wire::set_field(&call, number, &value);
                }
                self.changed_calls
                    .insert(old_id.clone(), Some(call.clone()));
                if let (ToolInput::Object(before), ToolInput::Object(after)) = (old_input, input) {
                    let pairs = before.iter().filter_map(|(key, value)| {
                        let old_text = value.as_str()?;
                        let new_text = after.iter().find(|(k, _)| k == key)?.1.as_str()?;
                        (old_text != new_text && !old_text.is_empty())
                            .then(|| (old_text.to_string(), new_text.to_string()))
                    });
                    let pairs: Vec<(String, String)> = pairs.collect();
                    for (o, n) in &pairs {
                        // The reply's transcript line lists the arguments.
                        self.note_edit(idx, o.as_str(), n.as_str());
                    }
                    self.arg_edits
                        .entry(old_id.clone())
                        .or_default()
                        .extend(pairs);
                }
                values.push(call);
            }
            for (id, ..) in &old_calls {
                if !new_calls.iter().any(|(i, ..)| i == id) && !self.changed_calls.contains_key(id)
                {
                    self.changed_calls.insert(id.clone(), None);
                }
            }
            let edited = wire::edit_field(&step, field::step::PLANNER_RESPONSE, |planner| {
                Some(wire::set_field(planner, TOOL_CALLS, &values))
            });
            if let Some(s) = edited {
                step = s;
            }
        }
        Ok(Some(step))
    }
}

/// The message's text blocks as one text, as agy-encode joins them; one
/// block's text is not copied (it may be tens of MB).
pub(super) fn joined_text<'b>(blocks: &'b [Block<'b>]) -> Cow<'b, str> {
    let mut text = Cow::Borrowed("");
    for b in blocks {
        if let Block::Text { text: t, .. } = b {
            join(&mut text, &**t);
        }
    }
    text
}

/// [`joined_text`] of blocks taken over: one block's text is moved, not
/// copied.
fn owned_text(blocks: Option<Vec<Block<'_>>>) -> String {
    let mut blocks = blocks.unwrap_or_default();
    if let [Block::Text { text, .. }] = blocks.as_mut_slice() {
        return std::mem::take(text).into_owned();
    }
    joined_text(&blocks).into_owned()
}

pub(super) fn media_of<'b>(blocks: &'b [Block<'b>]) -> Vec<&'b Block<'b>> {
    blocks
        .iter()
        .filter(|b| matches!(b, Block::Image { .. } | Block::Document { .. }))
        .collect()
}

pub(super) fn has_result(blocks: &[Block<'_>]) -> bool {
    blocks.iter().any(|b| matches!(b, Block::ToolResult { .. }))
}

/// The content and error flag of a message that is exactly one result.
pub(super) fn single_result<'b>(
    blocks: &'b [Block<'b>],
) -> Option<(&'b str, &'b ResultContent<'b>, bool)> {
    match blocks {
        [Block::ToolResult {
            tool_use_id,
            content,
            is_error,
        }] => Some((tool_use_id, content, *is_error)),
        _ => None,
    }
}

/// Every Step field that holds a kind's payload.
pub(super) fn payload_fields() -> Vec<u32> {
    let mut numbers: Vec<u32> = crate::agy::steps::PAYLOAD_FIELDS
        .iter()
        .map(|&(_, f)| f)
        .collect();
    numbers.extend_from_slice(crate::agy::steps::UNPAIRED_PAYLOAD_FIELDS);
    numbers
}

/// Where a tool step holds its result's text: any payload field, and the
/// error details.
pub(super) fn payload_and_error() -> Vec<u32> {
    let mut numbers = payload_fields();
    numbers.push(field::step::ERROR);
    numbers
}

/// (old, new) text of each system-message field that changed.
pub(super) fn field_texts(old: &[Block<'_>], new: &[Block<'_>]) -> Result<Vec<(String, String)>> {
    let by_field = |blocks: &[Block<'_>]| -> Vec<(String, String)> {
        blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text { text, field } => Some((
                    field.as_deref().unwrap_or_default().to_string(),
                    text.to_string(),
                )),
                _ => None,
            })
            .collect()
    };
    let (o, n) = (by_field(old), by_field(new));
    if o.len() != n.len() || o.iter().zip(&n).any(|(a, b)| a.0 != b.0) {
        return Err(Error::data(
            "a system message's fields can be edited, not added, removed or reordered (with --onto)",
        ));
    }
    Ok(o.into_iter()
        .zip(n)
        .filter(|(a, b)| a.1 != b.1)
        .map(|(a, b)| (a.1, b.1))
        .collect())
}

/// `text` as an `Arc`: `kept` itself when it is the same text, so that it
/// is held once.
fn kept_or_new(kept: Option<&Arc<str>>, text: String) -> Arc<str> {
    match kept {
        Some(kept) if **kept == *text => kept.clone(),
        _ => Arc::from(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_text_is_shared_not_copied() {
        let kept: Arc<str> = Arc::from("pasted log");
        let same = kept_or_new(Some(&kept), "pasted log".to_string());
        assert!(Arc::ptr_eq(&same, &kept));
        let other = kept_or_new(Some(&kept), "edited log".to_string());
        assert_eq!(&*other, "edited log");
        assert_eq!(&*kept_or_new(None, "text".to_string()), "text");
    }
}
