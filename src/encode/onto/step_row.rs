//! An original steps row as the merge holds it: its line, or, for a row
//! of tens of MB (a pasted log as one user text), its Step blob decoded
//! and the rest of its line.
//!
//! The row stream carries a blob as hex, twice its size: a 50 MB user text
//! is a 100 MB Step blob, a 200 MB line. Holding that line while its Step
//! is decoded, its messages made and an edit patched in put peak memory at
//! several times the line. Held as its payload instead, the row is half
//! the line, and the hex goes out as it is made again. That is the line's
//! own hex only when it was lowercase, as agy-dump writes it; a row in any
//! other shape is held as its line.

use std::borrow::Cow;

use super::rows::{row_with_step, side_column_edits, step_bytes_of};
use crate::decode::summary::StepFacts;
use crate::error::{Error, Result};
use crate::stream::io::{Output, KEEP_AT_MOST};
use crate::stream::record::{decode_hex_bytes_into, edit_row, is_hex_digits, write_line, Record};

/// A steps row, held whole or as its payload.
#[derive(Clone)]
pub(super) enum StepRow {
    /// The line (without its newline).
    Line(Vec<u8>),
    /// A large row whose `step_payload` hex was lowercase: its line with
    /// that hex taken out, `""` left at `hex_at - 1`, and the hex decoded.
    Split {
        skeleton: Vec<u8>,
        hex_at: usize,
        payload: Vec<u8>,
    },
}

/// `"step_payload":"`, where a skeleton's empty hex begins.
const PAYLOAD_KEY: &[u8] = b"\"step_payload\":\"";

impl StepRow {
    /// How the merge holds `line`, a row of `conversation`: a large steps
    /// row in agy-dump's shape as its payload (the line is dropped here),
    /// any other as it is.
    pub(super) fn holding(conversation: &str, line: Vec<u8>) -> StepRow {
        if line.len() <= KEEP_AT_MOST {
            return StepRow::Line(line);
        }
        StepRow::split(conversation, line)
    }

    /// `line` split, when it is a steps row of `conversation` in agy-dump's
    /// shape with lowercase payload hex; else as it is.
    ///
    /// The payload is decoded into the line's own buffer, a piece at a
    /// time into the first half of the hex, and the buffer then cut down to
    /// it: a second buffer for it would put the line and its payload (one
    /// and a half times the line) in memory together.
    fn split(conversation: &str, mut line: Vec<u8>) -> StepRow {
        /// Hex digits decoded at a time.
        const PIECE: usize = 1 << 16;
        let Some(span) = crate::decode::payload_hex_span(conversation, &line) else {
            return StepRow::Line(line);
        };
        // Checked whole first: a line that is not all digits stays as it is.
        if span.len() % 2 != 0 || !is_hex_digits(&line[span.clone()]) {
            return StepRow::Line(line);
        }
        let mut skeleton = Vec::with_capacity(line.len() - span.len());
        skeleton.extend_from_slice(&line[..span.start]);
        skeleton.extend_from_slice(&line[span.end..]);
        let mut piece = Vec::with_capacity(PIECE / 2);
        let (mut read, mut written) = (span.start, span.start);
        while read < span.end {
            let end = (read + PIECE).min(span.end);
            let decoded = decode_hex_bytes_into(&line[read..end], &mut piece);
            debug_assert!(decoded, "checked above");
            // The bytes go before the digits not yet read: `written` is
            // half as far from the start as `end`.
            line[written..written + piece.len()].copy_from_slice(&piece);
            written += piece.len();
            read = end;
        }
        line.truncate(written);
        line.drain(..span.start);
        line.shrink_to_fit();
        StepRow::Split {
            skeleton,
            hex_at: span.start,
            payload: line,
        }
    }

    /// The line, made whole again.
    pub(super) fn into_line(self) -> Vec<u8> {
        match self {
            StepRow::Line(line) => line,
            StepRow::Split {
                skeleton,
                hex_at,
                payload,
            } => {
                let mut line = Vec::with_capacity(skeleton.len() + 2 * payload.len());
                line.extend_from_slice(&skeleton[..hex_at]);
                crate::stream::json::write_hex_body(&mut line, &payload);
                line.extend_from_slice(&skeleton[hex_at..]);
                line
            }
        }
    }

    /// Writes the row and its newline as one record; a split row's hex is
    /// written out as it is made.
    pub(super) fn write(&self, out: &mut Output) -> Result<()> {
        match self {
            StepRow::Line(line) => write_line(out, line),
            StepRow::Split {
                skeleton,
                hex_at,
                payload,
            } => {
                out.buf().extend_from_slice(&skeleton[..*hex_at]);
                out.write_hex_body(payload)?;
                write_line(out, &skeleton[*hex_at..])
            }
        }
    }

    /// The Step blob.
    pub(super) fn step(&self) -> Result<Cow<'_, [u8]>> {
        match self {
            StepRow::Line(line) => step_bytes_of(line).map(Cow::Owned),
            StepRow::Split { payload, .. } => Ok(Cow::Borrowed(payload)),
        }
    }

    /// The row with its Step blob `old` replaced by `step` (`None`: kept)
    /// and its idx by `idx`, as [`row_with_step`] makes it; a split row
    /// stays split.
    pub(super) fn with_step(
        &self,
        old: &[u8],
        step: Option<Vec<u8>>,
        idx: Option<i64>,
    ) -> Result<StepRow> {
        let skeleton = match self {
            StepRow::Line(line) => {
                let step = step.as_deref().unwrap_or(old);
                return Ok(StepRow::Line(row_with_step(line, old, step, idx)?));
            }
            StepRow::Split { skeleton, .. } => skeleton,
        };
        let step = step.unwrap_or_else(|| old.to_vec());
        if old == step && idx.is_none() {
            return Ok(self.clone());
        }
        // The cells as the whole line would be edited, but the payload's:
        // its `""` stays where the new hex goes.
        let skeleton = edit_row(skeleton, &side_column_edits(old, &step, idx))?;
        let hex_at = memchr::memmem::find(&skeleton, PAYLOAD_KEY)
            .ok_or_else(|| Error::data("an edited steps row lost its step_payload"))?
            + PAYLOAD_KEY.len();
        Ok(StepRow::Split {
            skeleton,
            hex_at,
            payload: step,
        })
    }

    /// The row with its Step as `edit` changes it (`None`: as it was) and
    /// its idx set to `idx`.
    pub(super) fn rewrite(
        &self,
        edit: impl FnOnce(&[u8]) -> Option<Vec<u8>>,
        idx: Option<i64>,
    ) -> Result<StepRow> {
        let old = self.step()?;
        let step = edit(&old);
        self.with_step(&old, step, idx)
    }

    /// What the row tells the index row, read from the row itself.
    pub(super) fn facts(&self) -> Result<StepFacts> {
        let (line, payload) = match self {
            StepRow::Line(line) => (line, None),
            StepRow::Split {
                skeleton, payload, ..
            } => (skeleton, Some(payload.as_slice())),
        };
        let record = Record::parse(line)?;
        let Record::Row { row, .. } = &record else {
            return Err(Error::data("an edited step is not a row"));
        };
        let blob = |column: &str| -> Result<Vec<u8>> {
            Ok(row
                .get(column)
                .map(|c| c.blob_bytes())
                .transpose()?
                .flatten()
                .unwrap_or_default())
        };
        let step_type = row.get("step_type").and_then(|c| c.as_i64());
        let step = match payload {
            Some(payload) => Cow::Borrowed(payload),
            None => Cow::Owned(blob("step_payload")?),
        };
        Ok(StepFacts::of_step(&step, step_type, &blob("metadata")?))
    }

    /// The row's line, to reuse its buffer.
    pub(super) fn into_buffer(self) -> Option<Vec<u8>> {
        match self {
            StepRow::Line(line) => Some(line),
            StepRow::Split { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A steps row line as agy-dump writes it, with `payload` as its Step.
    fn row_line(payload: &str) -> Vec<u8> {
        format!(
            r#"{{"conversation":"c","kind":"row","table":"steps","row":{{"idx":3,"step_type":14,"status":3,"metadata":"0a00","error_details":null,"step_payload":"{payload}"}}}}"#
        )
        .into_bytes()
    }

    fn is_split(row: &StepRow) -> bool {
        matches!(row, StepRow::Split { .. })
    }

    #[test]
    fn a_split_row_is_its_line_again() {
        // Step {1: 14, 5: metadata {}}
        let line = row_line("080e2a00");
        let row = StepRow::split("c", line.clone());
        assert!(is_split(&row));
        assert_eq!(row.step().unwrap().as_ref(), [0x08, 0x0e, 0x2a, 0x00]);
        let mut out = Vec::new();
        let captured = crate::stream::io::Captured::default();
        let mut output = Output::captured(&captured);
        row.write(&mut output).unwrap();
        output.flush().unwrap();
        out.extend_from_slice(&captured.take());
        assert_eq!(out, [line.as_slice(), b"\n"].concat());
        assert_eq!(row.into_line(), line);
    }

    /// A payload of many pieces, decoded into the line's own buffer,
    /// comes back as the line; a payload that is not all digits leaves the
    /// line as it was.
    #[test]
    fn a_payload_decoded_in_place_is_the_whole_line_s() {
        // A Step of a 300 KB user text: tag, length, bytes of every value.
        let text: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut step = vec![0x0a, 0xe0, 0xa7, 0x12];
        step.extend_from_slice(&text);
        let line = row_line(&hex::encode(&step));
        let row = StepRow::split("c", line.clone());
        assert!(is_split(&row));
        assert!(row.step().unwrap().as_ref() == step.as_slice());
        assert!(row.into_line() == line);
        for bad in ["g", "\\u0030"] {
            let mut hex = hex::encode(&step);
            hex.replace_range(200_001..200_002, bad);
            let line = row_line(&hex);
            match StepRow::split("c", line.clone()) {
                StepRow::Line(kept) => assert!(kept == line, "{bad}"),
                StepRow::Split { .. } => panic!("{bad}: split"),
            }
        }
    }

    #[test]
    fn only_lowercase_hex_of_the_conversation_is_split() {
        assert!(!is_split(&StepRow::split("c", row_line("080E2a00"))));
        assert!(!is_split(&StepRow::split("other", row_line("080e2a00"))));
        assert!(!is_split(&StepRow::split("c", row_line("080e2a0"))));
        assert!(!is_split(&StepRow::holding("c", row_line("080e2a00"))));
    }

    #[test]
    fn a_split_row_is_edited_as_its_line_would_be() {
        let line = row_line("080e2a00");
        let whole = StepRow::Line(line.clone());
        let split = StepRow::split("c", line);
        let old = [0x08, 0x0e, 0x2a, 0x00];
        let edits: [(Option<Vec<u8>>, Option<i64>); 4] = [
            (None, Some(7)),
            (Some(vec![0x08, 0x0e, 0x2a, 0x02, 0x08, 0x01]), None),
            (Some(vec![0x08, 0x0e]), Some(4)),
            (Some(old.to_vec()), None),
        ];
        for (step, idx) in edits {
            let expected = whole.with_step(&old, step.clone(), idx).unwrap();
            let got = split.with_step(&old, step, idx).unwrap();
            assert!(is_split(&got));
            assert_eq!(got.facts().unwrap(), expected.facts().unwrap());
            assert_eq!(got.into_line(), expected.into_line());
        }
    }
}
