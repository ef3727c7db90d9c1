//! A step about to be written ([`Step`]), the [`StepWriter`] every step
//! goes out through, and the metadata each step carries.

use crate::agy::steps::field;
use crate::agy::wire::Writer;
use crate::stream::io::Output;
use crate::time::Timestamp;

use super::transcript::TranscriptLine;

/// Writes step rows; shared by everything that makes a step.
pub(super) struct StepWriter<'o> {
    pub(super) out: &'o mut Output,
    pub(super) generic: bool,
}

/// One step about to be written.
pub(super) struct Step<'a> {
    pub(super) kind: u64,
    pub(super) status: u64,
    pub(super) metadata: Vec<u8>,
    pub(super) error: Option<Vec<u8>>,
    pub(super) payload_field: u32,
    /// The payload from byte `payload_at` on; the bytes before it are room
    /// for the step's first fields ([`head_room`]), or none.
    pub(super) payload: Vec<u8>,
    pub(super) payload_at: usize,
    /// What the brain transcript says about it.
    pub(super) line: TranscriptLine<'a>,
}

/// Room for a step's fields before a payload whose field comes first
/// (type, status, metadata of `metadata_len` bytes, the payload's tag and
/// length), so that the payload can be built where the step will hold it
/// and the step written around it, not the payload copied into the step.
pub(super) fn head_room(metadata_len: usize) -> usize {
    // Four tags of up to two bytes (type, status, metadata, payload) and
    // four varints of up to ten (type, status, two lengths).
    metadata_len + 4 * 2 + 4 * 10
}

/// CortexStepMetadata with a creation time and a source, with room for
/// `more` bytes of fields the caller adds (a tool call), so that adding
/// them does not grow it.
pub(super) fn metadata(timestamp: Option<Timestamp>, step_source: u64, more: usize) -> Writer {
    // A timestamp and a source take at most 30 bytes.
    let mut meta = Writer::with_capacity(32 + more);
    if let Some(ts) = timestamp {
        meta.message(field::metadata::CREATED_AT, |t| timestamp_fields(t, ts));
    }
    meta.varint(field::metadata::SOURCE, step_source);
    meta
}

pub(super) fn timestamp_fields(t: &mut Writer, ts: Timestamp) {
    t.int64(field::timestamp::SECONDS, ts.seconds);
    if ts.nanos != 0 {
        t.int64(field::timestamp::NANOS, i64::from(ts.nanos));
    }
}
