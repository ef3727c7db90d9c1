//! Byte-level edits of one step (`agy-encode --onto`, `agy-edit`): every byte the
//! edit does not concern stays as it was.
//!
//! Nothing here knows a schema beyond the field numbers it changes. A text
//! edit ([`Rewrite`]) is applied wherever the step holds the text (agy
//! keeps the same text in several fields: the reply and its modified copy,
//! a command's output in the wrapped step and in the carrier's result
//! text), so a redaction, or a moved directory, reaches every copy, shown
//! or not.

use std::borrow::Cow;

use crate::agy::steps::field;
use memchr::memmem::Finder;

use crate::agy::wire::{self, Value, Writer};

/// How deep nested messages are searched for text.
const MAX_DEPTH: u8 = 24;

/// A rewrite of the text in a message's strings: what [`rewrite`] makes at
/// every depth. A literal replacement ([`Literal`]) is one; a directory
/// moved on path-component boundaries (`crate::agy::paths`) is another.
pub trait Rewrite {
    /// Whether `bytes` may hold text this rewrites: true wherever
    /// [`Rewrite::rewrite_into`] would change something, and cheap, since
    /// it is asked of every length-delimited value on the way down (where
    /// a string's neighbours are a message's framing, not text).
    fn may_hold(&self, bytes: &[u8]) -> bool;

    /// `text` rewritten, appended to `out`.
    fn rewrite_into(&self, out: &mut Vec<u8>, text: &[u8]);

    /// How long `text` is once rewritten.
    fn rewritten_len(&self, text: &[u8]) -> usize;

    /// Whether a value that is exactly `value` goes, field and all (a
    /// redaction to nothing), rather than being rewritten.
    fn drops(&self, _value: &[u8]) -> bool {
        false
    }

    /// Whether a value edited as a message is rewritten as text too when
    /// [`Rewrite::may_hold`] still holds of it after that (a literal edit
    /// reaches text that merely reads as a message). A rewrite whose
    /// output can hold what it rewrites again says no: then a value is
    /// rewritten as text only when, as a message, nothing of it changed.
    fn again_as_text(&self) -> bool {
        true
    }
}

/// Every occurrence of a text replaced by another: `agy-encode --onto`'s
/// edits.
pub struct Literal<'a> {
    pub old: &'a Finder<'a>,
    pub new: &'a [u8],
}

impl Rewrite for Literal<'_> {
    fn may_hold(&self, bytes: &[u8]) -> bool {
        !self.old.needle().is_empty() && self.old.find(bytes).is_some()
    }

    fn rewrite_into(&self, out: &mut Vec<u8>, text: &[u8]) {
        replace_bytes_into(out, text, self.old, self.new);
    }

    fn rewritten_len(&self, text: &[u8]) -> usize {
        let count = occurrences(text, self.old).count();
        text.len() - count * self.old.needle().len() + count * self.new.len()
    }

    fn drops(&self, value: &[u8]) -> bool {
        self.new.is_empty() && value == self.old.needle()
    }
}

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
    let literal = Literal {
        old,
        new: new.as_bytes(),
    };
    rewrite_with(message, &literal, 0, Some(numbers))
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

/// `message` with the text in its strings rewritten by `rewrite`, at every
/// depth, each length around a changed string written anew and every other
/// byte (unknown fields, numbers, binary values) as it was; `None` when
/// nothing changed.
pub fn rewrite(message: &[u8], rewrite: &impl Rewrite) -> Option<Vec<u8>> {
    rewrite_with(message, rewrite, 0, None).filter(|out| out != message)
}

/// [`rewrite`] in the top-level fields `numbers` only.
pub fn rewrite_in(message: &[u8], numbers: &[u32], rewrite: &impl Rewrite) -> Option<Vec<u8>> {
    rewrite_with(message, rewrite, 0, Some(numbers)).filter(|out| out != message)
}

/// `text` rewritten, when that changes it.
pub fn rewrite_text(text: &[u8], rewrite: &impl Rewrite) -> Option<Vec<u8>> {
    if !rewrite.may_hold(text) {
        return None;
    }
    let mut out = Vec::with_capacity(rewrite.rewritten_len(text));
    rewrite.rewrite_into(&mut out, text);
    (out != text).then_some(out)
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
    let finder = Finder::new(old);
    rewrite_with(message, &Literal { old: &finder, new }, depth, only)
}

/// `message` rewritten; `None` when no field it looked at may hold what
/// the rewrite rewrites.
fn rewrite_with<R: Rewrite + ?Sized>(
    message: &[u8],
    rewrite: &R,
    depth: u8,
    only: Option<&[u32]>,
) -> Option<Vec<u8>> {
    if !rewrite.may_hold(message) {
        return None;
    }
    let mut out = Writer::with_capacity(message.len());
    rewrite_into(&mut out, message, rewrite, depth, only).then(|| out.into_bytes())
}

/// [`rewrite_with`] appended to `out`, which gets `message` as it was when
/// no field may hold the text (false). A nested message is edited inside
/// `out` and a text written as it is rewritten: each level built apart and
/// copied into the one above held a 100 MB Step once more for a moment.
fn rewrite_into<R: Rewrite + ?Sized>(
    out: &mut Writer,
    message: &[u8],
    rewrite: &R,
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
        if !wanted || !rewrite.may_hold(bytes) {
            out.raw(raw);
            continue;
        }
        changed = true;
        if depth < MAX_DEPTH && wire::is_whole_message(bytes) {
            rewrite_message(out, f.number, bytes, rewrite, depth);
        } else {
            rewrite_string(out, f.number, bytes, rewrite);
        }
    }
    out.raw(tail);
    changed
}

/// Field `number`, a message that may hold the text, edited as a message,
/// and as text too as [`Rewrite::again_as_text`] says.
fn rewrite_message<R: Rewrite + ?Sized>(
    out: &mut Writer,
    number: u32,
    bytes: &[u8],
    rewrite: &R,
    depth: u8,
) {
    let start = out.len();
    out.message(number, |inner| {
        rewrite_into(inner, bytes, rewrite, depth + 1, None);
    });
    let value = field_value(out.written_since(start));
    let as_text = match rewrite.again_as_text() {
        true => rewrite.may_hold(value),
        false => value == bytes,
    };
    if as_text && std::str::from_utf8(value).is_ok() {
        let mut edited = Vec::with_capacity(rewrite.rewritten_len(value));
        rewrite.rewrite_into(&mut edited, value);
        out.truncate(start);
        if !(edited.is_empty() && rewrite.drops(bytes)) {
            out.bytes(number, &edited);
        }
    } else if value.is_empty() && rewrite.drops(bytes) {
        out.truncate(start);
    }
}

/// Field `number`, bytes that may hold the text: rewritten where they are
/// text, and dropped when the rewrite drops them whole.
fn rewrite_string<R: Rewrite + ?Sized>(out: &mut Writer, number: u32, bytes: &[u8], rewrite: &R) {
    if std::str::from_utf8(bytes).is_err() {
        out.bytes(number, bytes);
        return;
    }
    if rewrite.drops(bytes) {
        return;
    }
    let len = rewrite.rewritten_len(bytes);
    out.bytes_written(number, len, |buf| rewrite.rewrite_into(buf, bytes));
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
