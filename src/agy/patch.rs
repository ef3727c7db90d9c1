//! Byte-level edits of one step (`agy-encode --onto`, `agy-edit`): every byte the
//! edit does not concern stays as it was.
//!
//! Nothing here knows a schema beyond the field numbers it changes. A text
//! edit is applied where the step holds the old text (agy keeps the same
//! text in several fields: the reply and its modified copy, a command's
//! output in the wrapped step and in the carrier's result text), so a
//! redaction reaches every copy, shown or not.

use std::borrow::Cow;

use crate::agy::steps::field;
use memchr::memmem::Finder;

use crate::agy::wire::{self, Value, Writer};

/// How deep nested messages are searched for text.
const MAX_DEPTH: u8 = 24;

/// `message` with every occurrence of `old` in its strings, at any depth,
/// replaced by `new`; a string that was exactly `old` is dropped when `new`
/// is empty. `None` when nothing held `old`.
///
/// A length-delimited value that reads whole as a message is edited as a
/// message (so the lengths around the text stay right), and as text only
/// when the text is still there after that.
pub fn replace_text(message: &[u8], old: &str, new: &str) -> Option<Vec<u8>> {
    replace_at(message, old.as_bytes(), new.as_bytes(), 0, None)
}

/// [`replace_text`] in the top-level fields `numbers` only.
pub fn replace_text_in(message: &[u8], numbers: &[u32], old: &str, new: &str) -> Option<Vec<u8>> {
    replace_at(message, old.as_bytes(), new.as_bytes(), 0, Some(numbers))
}

/// [`replace_text_in`] with `old` as a finder made for it, which
/// [`holds_text_in`] can share.
pub fn replace_found_in(
    message: &[u8],
    numbers: &[u32],
    old: &Finder<'_>,
    new: &str,
) -> Option<Vec<u8>> {
    replace_with(message, old, new.as_bytes(), 0, Some(numbers))
}

/// Whether [`replace_found_in`] would find `old` to replace: some field
/// `numbers` of `message` holds it. Told without copying `message`.
pub fn holds_text_in(message: &[u8], numbers: &[u32], old: &Finder<'_>) -> bool {
    if old.needle().is_empty() {
        return false;
    }
    let (spans, _) = wire::field_spans(message);
    spans.into_iter().any(|(f, _)| match f.value {
        Value::Bytes(bytes) => numbers.contains(&f.number) && old.find(bytes).is_some(),
        _ => false,
    })
}

/// One finder for `old` serves every field and level: memmem reads the
/// whole text to make one, and a pasted text is tens of MB.
fn replace_at(
    message: &[u8],
    old: &[u8],
    new: &[u8],
    depth: u8,
    only: Option<&[u32]>,
) -> Option<Vec<u8>> {
    replace_with(message, &Finder::new(old), new, depth, only)
}

fn replace_with(
    message: &[u8],
    old: &Finder<'_>,
    new: &[u8],
    depth: u8,
    only: Option<&[u32]>,
) -> Option<Vec<u8>> {
    if old.needle().is_empty() || old.find(message).is_none() {
        return None;
    }
    let mut out = Writer::with_capacity(message.len());
    replace_into(&mut out, message, old, new, depth, only).then(|| out.into_bytes())
}

/// [`replace_at`] appended to `out`, which gets `message` as it was when
/// nothing changes (false). A nested message is edited inside `out` and a
/// text written as it is replaced: each level built apart and copied into
/// the one above held a 100 MB Step once more for a moment.
fn replace_into(
    out: &mut Writer,
    message: &[u8],
    old: &Finder<'_>,
    new: &[u8],
    depth: u8,
    only: Option<&[u32]>,
) -> bool {
    let (spans, tail) = wire::field_spans(message);
    let mut changed = false;
    for (f, raw) in spans {
        let Value::Bytes(bytes) = f.value else {
            out.raw(raw);
            continue;
        };
        let wanted = only.is_none_or(|numbers| numbers.contains(&f.number));
        if !wanted || old.find(bytes).is_none() {
            out.raw(raw);
            continue;
        }
        changed = true;
        if depth < MAX_DEPTH && wire::is_whole_message(bytes) {
            replace_in_message(out, f.number, bytes, old, new, depth);
        } else {
            replace_in_text(out, f.number, bytes, old, new);
        }
    }
    out.raw(tail);
    changed
}

/// Field `number`, a message holding `old`, edited as a message, and as
/// text too when the text is still there after that.
fn replace_in_message(
    out: &mut Writer,
    number: u32,
    bytes: &[u8],
    old: &Finder<'_>,
    new: &[u8],
    depth: u8,
) {
    let start = out.len();
    out.message(number, |inner| {
        replace_into(inner, bytes, old, new, depth + 1, None);
    });
    let value = field_value(out.written_since(start));
    if old.find(value).is_some() && std::str::from_utf8(value).is_ok() {
        let mut edited = Vec::with_capacity(value.len());
        replace_bytes_into(&mut edited, value, old, new);
        out.truncate(start);
        if !(edited.is_empty() && bytes == old.needle()) {
            out.bytes(number, &edited);
        }
    } else if value.is_empty() && bytes == old.needle() {
        out.truncate(start);
    }
}

/// Field `number`, bytes holding `old`: replaced where they are text, and
/// dropped when they were exactly `old` and `new` is empty.
fn replace_in_text(out: &mut Writer, number: u32, bytes: &[u8], old: &Finder<'_>, new: &[u8]) {
    if std::str::from_utf8(bytes).is_err() {
        out.bytes(number, bytes);
        return;
    }
    if bytes == old.needle() && new.is_empty() {
        return;
    }
    let count = occurrences(bytes, old).count();
    let len = bytes.len() - count * old.needle().len() + count * new.len();
    out.bytes_written(number, len, |buf| replace_bytes_into(buf, bytes, old, new));
}

/// The value of the one field `encoded` holds.
fn field_value(encoded: &[u8]) -> &[u8] {
    match wire::field_spans(encoded).0.first() {
        Some((
            wire::Field {
                value: Value::Bytes(value),
                ..
            },
            _,
        )) => value,
        _ => &[],
    }
}

/// Where `old` is in `text`, the places [`replace_bytes`] replaces.
fn occurrences<'t>(text: &'t [u8], old: &'t Finder<'_>) -> impl Iterator<Item = usize> + 't {
    let mut at = 0;
    let len = old.needle().len();
    old.find_iter(text).filter(move |&found| {
        let counted = found >= at;
        if counted {
            at = found + len;
        }
        counted
    })
}

/// `text` with every `old` replaced by `new`.
pub fn replace_bytes(text: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    replace_bytes_into(&mut out, text, &Finder::new(old), new);
    out
}

/// [`replace_bytes`] appended to `out`.
fn replace_bytes_into(out: &mut Vec<u8>, text: &[u8], old: &Finder<'_>, new: &[u8]) {
    let mut at = 0;
    for found in occurrences(text, old) {
        out.extend_from_slice(&text[at..found]);
        out.extend_from_slice(new);
        at = found + old.needle().len();
    }
    out.extend_from_slice(&text[at..]);
}

/// The Step renumbered from `old` to `new`: its metadata's
/// source_trajectory_step_info.step_index (5.20.2, when it says `old`),
/// and in a GENERIC carrier the spill URI's `steps/<old>/` and the wrapped
/// Step. `None` when nothing in it named `old`.
pub fn renumber_step(step: &[u8], old: i64, new: i64) -> Option<Vec<u8>> {
    // Copied only where changed, as in `replace_at`.
    let mut bytes = Cow::Borrowed(step);
    if let Some(b) = wire::edit_field(&bytes, field::step::METADATA, |m| {
        renumber_metadata(m, old, new)
    }) {
        bytes = Cow::Owned(b);
    }
    if let Some(b) = wire::edit_field(&bytes, field::step::GENERIC, |generic| {
        wire::edit_field(generic, field::generic::RESULT, |result| {
            let mut result = Cow::Borrowed(result);
            let from = format!("/steps/{old}/");
            let to = format!("/steps/{new}/");
            if let Some(r) =
                wire::edit_field(&result, field::generic::RESULT_FULL_OUTPUT_URI, |uri| {
                    memchr::memmem::find(uri, from.as_bytes())
                        .map(|_| replace_bytes(uri, from.as_bytes(), to.as_bytes()))
                })
            {
                result = Cow::Owned(r);
            }
            if let Some(r) = wire::edit_field(&result, field::generic::RESULT_NESTED, |nested| {
                // An Any wrapping a Step, or a Step.
                wire::edit_field(nested, field::any::VALUE, |inner| {
                    renumber_step(inner, old, new)
                })
                .or_else(|| renumber_step(nested, old, new))
            }) {
                result = Cow::Owned(r);
            }
            owned(result)
        })
    }) {
        bytes = Cow::Owned(b);
    }
    owned(bytes)
}

/// What renumbering or cutting steps does to a generation's row.
#[derive(Debug, PartialEq, Eq)]
pub enum Generation {
    /// It names no step that moved or went: the row stays as it is.
    Unchanged,
    /// Every step it made went: the row goes with them.
    Gone,
    /// Its step list, changed: the row's new `data`.
    Changed(Vec<u8>),
}

/// A `gen_metadata` blob (CortexStepGeneratorMetadata) whose steps are
/// renumbered or dropped by `map` (a step's idx to its new one, `None` for
/// a step that went). A generation that lists no steps is unchanged: no
/// step of it is known to have gone.
pub fn generation_steps(data: &[u8], map: impl Fn(i64) -> Option<i64>) -> Generation {
    use crate::agy::wire::Message;
    let indices = Message::new(data).repeated_varints(field::generator::STEP_INDICES);
    let mapped: Vec<Option<u64>> = indices
        .iter()
        .map(|&i| map(i as i64).map(|n| n as u64))
        .collect();
    let kept: Vec<u64> = mapped.iter().flatten().copied().collect();
    if mapped.iter().zip(&indices).all(|(m, &i)| *m == Some(i)) {
        return Generation::Unchanged;
    }
    if kept.is_empty() {
        return Generation::Gone;
    }
    Generation::Changed(wire::replace_field(
        data,
        field::generator::STEP_INDICES,
        |w| {
            w.packed_varints(field::generator::STEP_INDICES, &kept);
        },
    ))
}

/// The bytes an edit made, `None` when none did (they are still borrowed).
pub fn owned(bytes: Cow<'_, [u8]>) -> Option<Vec<u8>> {
    match bytes {
        Cow::Owned(bytes) => Some(bytes),
        Cow::Borrowed(_) => None,
    }
}

/// CortexStepMetadata with 20.2 moved from `old` to `new`.
pub fn renumber_metadata(metadata: &[u8], old: i64, new: i64) -> Option<Vec<u8>> {
    wire::edit_field(metadata, field::metadata::SOURCE_STEP_INFO, |info| {
        let says_old =
            wire::Message::new(info).get_i64(field::metadata::SOURCE_STEP_INDEX) == Some(old);
        says_old.then(|| wire::set_varint(info, field::metadata::SOURCE_STEP_INDEX, new as u64))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holding_a_text_is_what_replacing_it_finds() {
        let mut w = Writer::new();
        w.varint(1, 15)
            .string(2, "the secret word")
            .message(3, |m| {
                m.string(1, "hidden");
            })
            .bytes(4, &[0xff, 0x00, 0xfe]);
        let bytes = w.into_bytes();
        let cases: [(&[u32], &str); 7] = [
            (&[2], "secret"),
            (&[3], "secret"),
            (&[3], "hidden"),
            (&[2, 3], "hidden"),
            (&[1, 4], "secret"),
            (&[2], "absent"),
            (&[2], ""),
        ];
        for (numbers, old) in cases {
            assert_eq!(
                holds_text_in(&bytes, numbers, &Finder::new(old)),
                replace_text_in(&bytes, numbers, old, "x").is_some(),
                "{numbers:?} {old:?}"
            );
        }
        assert!(holds_text_in(&bytes, &[2], &Finder::new("secret")));
        assert!(!holds_text_in(&bytes, &[3], &Finder::new("secret")));
        let finder = Finder::new("secret");
        assert_eq!(
            replace_found_in(&bytes, &[2], &finder, "x"),
            replace_text_in(&bytes, &[2], "secret", "x")
        );
    }

    #[test]
    fn text_is_replaced_at_every_depth_with_lengths_kept() {
        let mut w = Writer::new();
        w.varint(1, 15)
            .string(2, "the secret word")
            .message(3, |m| {
                m.string(1, "secret").message(2, |n| {
                    n.string(1, "deep secret").varint(2, 7);
                });
            })
            .bytes(4, &[0xff, 0x00, 0xfe]);
        let bytes = w.into_bytes();
        let out = replace_text(&bytes, "secret", "[redacted]").unwrap();
        let m = wire::Message::new(&out);
        assert_eq!(m.get_str(2).unwrap(), "the [redacted] word");
        let inner = m.get_message(3).unwrap();
        assert_eq!(inner.get_str(1).unwrap(), "[redacted]");
        let deep = inner.get_message(2).unwrap();
        assert_eq!(deep.get_str(1).unwrap(), "deep [redacted]");
        assert_eq!(deep.get_u64(2), Some(7));
        assert_eq!(m.get_bytes(4).unwrap(), &[0xff, 0x00, 0xfe]);
        assert_eq!(replace_text(&bytes, "absent", "x"), None);
        // A field that was exactly the text goes when the text does.
        let cleared = replace_text(&bytes, "secret", "").unwrap();
        let m = wire::Message::new(&cleared);
        assert!(m.get_message(3).unwrap().get_str(1).is_none());
    }

    /// `replace_at` as it was before it edited in place: each level built
    /// apart and copied into the one above.
    fn replace_apart(message: &[u8], old: &[u8], new: &[u8], depth: u8) -> Option<Vec<u8>> {
        if old.is_empty() || memchr::memmem::find(message, old).is_none() {
            return None;
        }
        let (spans, tail) = wire::field_spans(message);
        let mut out = Writer::new();
        let mut changed = false;
        for (f, raw) in spans {
            let Value::Bytes(bytes) = f.value else {
                out.raw(raw);
                continue;
            };
            if memchr::memmem::find(bytes, old).is_none() {
                out.raw(raw);
                continue;
            }
            let mut value = bytes.to_vec();
            if depth < MAX_DEPTH && wire::is_whole_message(bytes) {
                if let Some(inner) = replace_apart(bytes, old, new, depth + 1) {
                    value = inner;
                }
            }
            if memchr::memmem::find(&value, old).is_some() && std::str::from_utf8(&value).is_ok() {
                value = replace_bytes(&value, old, new);
            }
            changed = true;
            if value.is_empty() && bytes == old {
                continue;
            }
            out.bytes(f.number, &value);
        }
        out.raw(tail);
        changed.then(|| out.into_bytes())
    }

    #[test]
    fn editing_in_place_gives_what_editing_apart_gave() {
        let long = "the secret ".repeat(40);
        let mut w = Writer::new();
        w.varint(1, 15)
            .string(2, "secret")
            .string(3, "secretsecret")
            .string(4, "aaaa")
            .bytes(5, &[0xff, b's', b'e', b'c', b'r', b'e', b't'])
            // Text that also reads as a message: field 1, "secret".
            .bytes(6, b"\x0a\x06secret")
            .message(7, |m| {
                m.string(1, &long).message(2, |n| {
                    n.string(1, "secret").string(2, &long).varint(3, 7);
                });
            })
            .message(8, |m| {
                m.string(1, "secret");
            });
        let message = w.into_bytes();
        for (old, new) in [
            ("secret", "[redacted]"),
            ("secret", ""),
            ("secret", "s"),
            ("aa", "b"),
            ("a", "aa"),
            ("the secret ", "x"),
            ("absent", "x"),
            ("\x06secret", "\x07secrets"),
        ] {
            for depth in [0, MAX_DEPTH - 1, MAX_DEPTH] {
                assert_eq!(
                    replace_at(&message, old.as_bytes(), new.as_bytes(), depth, None),
                    replace_apart(&message, old.as_bytes(), new.as_bytes(), depth),
                    "{old:?} -> {new:?} from depth {depth}"
                );
            }
        }
    }

    #[test]
    fn a_generation_follows_its_steps() {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(19, "gemini");
        })
        .packed_varints(2, &[3, 4]);
        let data = w.into_bytes();
        assert_eq!(generation_steps(&data, Some), Generation::Unchanged);
        assert_eq!(generation_steps(&data, |_| None), Generation::Gone);
        let Generation::Changed(cut) = generation_steps(&data, |i| (i < 4).then_some(i)) else {
            panic!("step 4 went");
        };
        assert_eq!(wire::Message::new(&cut).repeated_varints(2), [3]);
        assert_eq!(
            wire::Message::new(&cut).get_message(1),
            wire::Message::new(&data).get_message(1)
        );
        let Generation::Changed(moved) = generation_steps(&data, |i| Some(i - 2)) else {
            panic!("renumbered");
        };
        assert_eq!(wire::Message::new(&moved).repeated_varints(2), [1, 2]);
        let none = Writer::new().into_bytes();
        assert_eq!(generation_steps(&none, |_| None), Generation::Unchanged);
    }

    #[test]
    fn renumbering_touches_only_the_step_index() {
        let mut w = Writer::new();
        w.varint(1, 132).message(5, |m| {
            m.varint(3, 2).message(20, |i| {
                i.string(1, "t").varint(2, 7).string(4, "c");
            });
        });
        w.message(140, |g| {
            g.message(2, |r| {
                r.string(1, "out")
                    .string(7, "file:///b/c/.system_generated/steps/7/output.txt");
            });
        });
        let step = w.into_bytes();
        let out = renumber_step(&step, 7, 5).unwrap();
        let m = wire::Message::new(&out);
        let info = m.get_message(5).unwrap().get_message(20).unwrap();
        assert_eq!(info.get_u64(2), Some(5));
        assert_eq!(info.get_str(4).unwrap(), "c");
        let uri = m
            .get_message(140)
            .and_then(|g| g.get_message(2))
            .and_then(|r| r.get_str(7))
            .unwrap();
        assert!(uri.contains("/steps/5/"), "{uri}");
        assert_eq!(renumber_step(&out, 5, 7).unwrap(), step);
        assert_eq!(renumber_step(&step, 3, 4), None);
    }
}
