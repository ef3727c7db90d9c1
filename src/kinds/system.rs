//! Bookkeeping steps as `system` messages (`agy-decode --all`) and back
//! (`agy-encode`): one table, [`SYSTEM_KINDS`], says which text fields of
//! each kind's payload become text blocks and under which name, and both
//! directions read it, so what decode writes encode can put back.

use std::borrow::Cow;

use crate::agy::steps::{field, kind};
use crate::agy::wire::{self, Writer};
use crate::stream::message::Block;

/// A text field of a payload: its name in the message stream and its path
/// of field numbers from the payload (two numbers for a field of a nested
/// message).
pub struct TextField {
    pub name: &'static str,
    pub path: &'static [u32],
    /// Every value is a block (a repeated field), not just the last.
    pub repeated: bool,
}

const fn text(name: &'static str, path: &'static [u32]) -> TextField {
    TextField {
        name,
        path,
        repeated: false,
    }
}

/// A bookkeeping kind and the text fields its system message shows, in
/// field-number order (the order of its blocks).
pub struct SystemKind {
    pub kind: u64,
    pub payload_field: u32,
    pub fields: &'static [TextField],
}

/// Every kind agy-decode `--all` shows with its text and agy-encode writes
/// back (FORMAT.md 7; grades in the man page).
pub const SYSTEM_KINDS: &[SystemKind] = &[
    SystemKind {
        kind: kind::ERROR_MESSAGE,
        payload_field: field::step::ERROR_MESSAGE,
        fields: &[
            text("user_error_message", &[field::error_message::ERROR, 1]),
            text("short_error", &[field::error_message::ERROR, 2]),
            text("full_error", &[field::error_message::ERROR, 3]),
            text("model_error_message", &[field::error_message::ERROR, 9]),
        ],
    },
    SystemKind {
        kind: kind::CHECKPOINT,
        payload_field: field::step::CHECKPOINT,
        fields: &[
            text("user_intent", &[field::checkpoint::USER_INTENT]),
            text("session_summary", &[field::checkpoint::SESSION_SUMMARY]),
            text(
                "conversation_title",
                &[field::checkpoint::CONVERSATION_TITLE],
            ),
        ],
    },
    SystemKind {
        kind: kind::TASK_BOUNDARY,
        payload_field: field::step::TASK_BOUNDARY,
        fields: &[
            text("task_name", &[field::task_boundary::TASK_NAME]),
            text("task_status", &[field::task_boundary::TASK_STATUS]),
            text("task_summary", &[field::task_boundary::TASK_SUMMARY]),
        ],
    },
    SystemKind {
        kind: kind::NOTIFY_USER,
        payload_field: field::step::NOTIFY_USER,
        fields: &[text(
            "notification_content",
            &[field::notify_user::NOTIFICATION_CONTENT],
        )],
    },
    SystemKind {
        kind: kind::EPHEMERAL_MESSAGE,
        payload_field: field::step::EPHEMERAL_MESSAGE,
        fields: &[text("content", &[field::content_message::CONTENT])],
    },
    SystemKind {
        kind: kind::CONVERSATION_HISTORY,
        payload_field: field::step::CONVERSATION_HISTORY,
        fields: &[text("content", &[field::content_message::CONTENT])],
    },
    SystemKind {
        kind: kind::SYSTEM_MESSAGE,
        payload_field: field::step::SYSTEM_MESSAGE,
        fields: &[
            text("message", &[field::system_message::MESSAGE]),
            text("event_type", &[field::system_message::EVENT_TYPE]),
        ],
    },
    SystemKind {
        kind: kind::DIRECTORY_RULES,
        payload_field: field::step::DIRECTORY_RULES,
        fields: &[TextField {
            name: "rule_file_uris",
            path: &[field::directory_rules::RULE_FILE_URIS],
            repeated: true,
        }],
    },
];

pub fn by_kind(step_kind: u64) -> Option<&'static SystemKind> {
    SYSTEM_KINDS.iter().find(|k| k.kind == step_kind)
}

impl SystemKind {
    /// One text block per non-empty value, in table order, each naming its
    /// field.
    pub fn blocks<'a>(&self, payload: wire::Message<'a>) -> Vec<Block<'a>> {
        let mut blocks = Vec::new();
        for f in self.fields {
            let (&last, parents) = f.path.split_last().expect("a path is never empty");
            let mut message = Some(payload);
            for &number in parents {
                message = message.and_then(|m| m.get_message(number));
            }
            let Some(message) = message else {
                continue;
            };
            let name = Some(Cow::Borrowed(f.name));
            if f.repeated {
                for value in message.repeated_bytes(last) {
                    if !value.is_empty() {
                        blocks.push(Block::Text {
                            text: crate::agy::wire::lossy_str(value),
                            field: name.clone(),
                        });
                    }
                }
            } else if let Some(value) = message.get_nonempty_str(last) {
                blocks.push(Block::Text {
                    text: value,
                    field: name,
                });
            }
        }
        blocks
    }

    /// The payload holding `texts` (field name, text), the inverse of
    /// [`SystemKind::blocks`]: fields in table order, values of one field in
    /// the order given. A name the kind does not have is an error naming
    /// the ones it has.
    pub fn payload(&self, texts: &[(&str, &str)]) -> Result<Vec<u8>, String> {
        if let Some((unknown, _)) = texts
            .iter()
            .find(|(name, _)| !self.fields.iter().any(|f| f.name == *name))
        {
            let names: Vec<&str> = self.fields.iter().map(|f| f.name).collect();
            return Err(format!(
                "field {unknown:?} is not one of {}",
                names.join(", ")
            ));
        }
        let mut payload = Writer::new();
        let mut nested: Option<(u32, Writer)> = None;
        for f in self.fields {
            let (&last, parents) = f.path.split_last().expect("a path is never empty");
            let parent = parents.first().copied();
            if nested.as_ref().map(|(n, _)| *n) != parent {
                if let Some((number, inner)) = nested.take() {
                    if !inner.is_empty() {
                        payload.bytes(number, inner.as_bytes());
                    }
                }
                nested = parent.map(|n| (n, Writer::new()));
            }
            let target = match nested.as_mut() {
                Some((_, inner)) => inner,
                None => &mut payload,
            };
            for (_, value) in texts.iter().filter(|(name, _)| *name == f.name) {
                target.string(last, value);
            }
        }
        if let Some((number, inner)) = nested {
            if !inner.is_empty() {
                payload.bytes(number, inner.as_bytes());
            }
        }
        Ok(payload.into_bytes())
    }

    /// The text a step of this kind answers a tool call with: its blocks'
    /// texts, one per line. agy-encode writes such a result back into the
    /// kind's first field, whose text this then is.
    pub fn joined_text(&self, payload: wire::Message<'_>) -> String {
        let blocks = self.blocks(payload);
        let texts: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text { text, .. } => Some(&**text),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The field a text block without a name goes to: the kind's first.
    pub fn default_field(&self) -> &'static str {
        self.fields[0].name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::steps;

    #[test]
    fn table_agrees_with_the_step_schema() {
        for k in SYSTEM_KINDS {
            assert_eq!(steps::payload_field(k.kind), Some(k.payload_field));
            assert!(!k.fields.is_empty());
            assert!(k.fields.windows(2).all(|w| w[0].path < w[1].path));
        }
    }

    #[test]
    fn payloads_read_back_as_their_blocks() {
        let error = by_kind(kind::ERROR_MESSAGE).unwrap();
        let texts = [("short_error", "short"), ("full_error", "full")];
        let payload = error.payload(&texts).unwrap();
        let blocks = error.blocks(wire::Message::new(&payload));
        let back: Vec<(&str, &str)> = blocks
            .iter()
            .map(|b| match b {
                Block::Text { text, field } => (field.as_deref().unwrap(), &**text),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(back, texts);
        let rules = by_kind(kind::DIRECTORY_RULES).unwrap();
        let texts = [("rule_file_uris", "a"), ("rule_file_uris", "b")];
        let payload = rules.payload(&texts).unwrap();
        assert_eq!(rules.blocks(wire::Message::new(&payload)).len(), 2);
        assert!(rules
            .payload(&[("task_name", "x")])
            .unwrap_err()
            .contains("rule_file_uris"));
    }
}
