//! A converted assistant turn's generation, as agy keeps one in
//! `gen_metadata` (agy-store(5), USAGE): the model's name and what the turn
//! consumed. Usage tools read these rows, not the steps, so a conversation
//! converted from another agent without them counted for nothing.
//!
//! The row is a CortexStepGeneratorMetadata: 1 ChatModelMetadata {4 usage
//! (ModelUsageStats: 1 the model enum where the name has one, 2 input, 3
//! output, 4 cache writes, 5 cache reads, 11 a response id), 19 the model's
//! name}, 2 the step it made (one number, unpacked: a protobuf reader takes
//! a repeated number either way). The source's counts say nothing of thinking against
//! response tokens (9, 10), so those are left out rather than guessed.

use crate::agy::steps::{self, field};
use crate::agy::wire::Writer;
use crate::stream::message::Usage;

use super::NAMESPACE;

/// The `data` of the generation that made step `idx` of `conversation`.
/// The response id is derived from the two, so the same input gives the
/// same bytes and each generation its own id (usage tools count a
/// generation once by it, wherever a fork or a copy carries the row).
pub(super) fn data(conversation: &str, idx: i64, model: Option<&str>, usage: &Usage) -> Vec<u8> {
    let response = crate::id::v5(
        &NAMESPACE,
        format!("{conversation}/generation/{idx}").as_bytes(),
    );
    let mut generation = Writer::new();
    generation.message(field::generator::CHAT_MODEL, |chat| {
        chat.message(field::generator::USAGE, |stats| {
            use field::usage::*;
            if let Some(value) = model.and_then(steps::model_enum_value) {
                stats.varint(MODEL, value);
            }
            counts(stats, usage);
            let id = response.simple().to_string();
            stats.string(RESPONSE_ID, &format!("req_{}", &id[..20]));
        });
        if let Some(name) = model {
            chat.string(field::generator::RESPONSE_MODEL, name);
        }
    });
    generation.varint(field::generator::STEP_INDICES, idx as u64);
    generation.into_bytes()
}

/// The four counts of a ModelUsageStats (2 input, 3 output, 4 cache
/// writes, 5 cache reads) that the message stream's usage has: the same in
/// a step's metadata and in its generation's row.
pub(super) fn counts(stats: &mut Writer, usage: &Usage) {
    use field::usage::*;
    for (number, value) in [
        (INPUT_TOKENS, usage.input_tokens),
        (OUTPUT_TOKENS, usage.output_tokens),
        (CACHE_WRITE_TOKENS, usage.cache_creation_input_tokens),
        (CACHE_READ_TOKENS, usage.cache_read_input_tokens),
    ] {
        if let Some(v) = value {
            stats.varint(number, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::wire::Message;

    #[test]
    fn a_generation_holds_its_usage_model_and_step() {
        let usage = Usage {
            input_tokens: Some(14_392),
            output_tokens: Some(846),
            cache_creation_input_tokens: Some(120),
            cache_read_input_tokens: Some(40_697),
        };
        let data = data("c1", 7, Some("claude-sonnet-4-5"), &usage);
        let generation = Message::new(&data);
        assert_eq!(
            generation.repeated_varints(field::generator::STEP_INDICES),
            [7]
        );
        let chat = generation
            .get_message(field::generator::CHAT_MODEL)
            .unwrap();
        assert_eq!(
            chat.get_str(field::generator::RESPONSE_MODEL).as_deref(),
            Some("claude-sonnet-4-5")
        );
        let stats = chat.get_message(field::generator::USAGE).unwrap();
        use field::usage::*;
        assert_eq!(
            stats.get_u64(MODEL),
            None,
            "no enum for another agent's model"
        );
        assert_eq!(stats.get_u64(INPUT_TOKENS), Some(14_392));
        assert_eq!(stats.get_u64(OUTPUT_TOKENS), Some(846));
        assert_eq!(stats.get_u64(CACHE_WRITE_TOKENS), Some(120));
        assert_eq!(stats.get_u64(CACHE_READ_TOKENS), Some(40_697));
        let id = stats.get_str(RESPONSE_ID).unwrap().into_owned();
        assert!(id.starts_with("req_") && id.len() == 24, "{id}");
        // The same generation, the same bytes; another step, another id.
        assert_eq!(
            data,
            super::data("c1", 7, Some("claude-sonnet-4-5"), &usage)
        );
        let other = super::data("c1", 9, Some("claude-sonnet-4-5"), &usage);
        let other_id = Message::new(&other)
            .get_message(field::generator::CHAT_MODEL)
            .and_then(|c| c.get_message(field::generator::USAGE))
            .and_then(|s| s.get_str(RESPONSE_ID))
            .unwrap()
            .into_owned();
        assert_ne!(id, other_id);
    }
}
