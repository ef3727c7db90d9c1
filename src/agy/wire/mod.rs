//! A tolerant protobuf wire-format reader and a small writer.
//!
//! agy's schema is closed and drifts between releases, so nothing here knows
//! message types: a message is just a byte slice whose fields are looked up by
//! number. The reader never fails. A blob that is truncated or corrupt yields
//! the fields that could be read before the damage (its *readable prefix*),
//! and [`Fields::is_damaged`] tells whether anything was cut off. Callers that
//! guess a field's meaning from a low-confidence source therefore degrade to
//! "field absent" rather than to an error.

use std::borrow::Cow;

mod writer;

pub use writer::Writer;

/// The payload of one field, by wire type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: a string, bytes, a nested message or a packed array.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

impl<'a> Value<'a> {
    /// As raw bytes (wire type 2 only).
    pub fn bytes(self) -> Option<&'a [u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// As text (wire type 2 only). Invalid UTF-8 is replaced, not
    /// rejected: a damaged string is still worth showing.
    pub fn str(self) -> Option<Cow<'a, str>> {
        self.bytes().map(lossy_str)
    }

    /// As an unsigned integer (varint or fixed).
    pub fn u64(self) -> Option<u64> {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => Some(v),
            Value::Fixed32(v) => Some(u64::from(v)),
            Value::Bytes(_) => None,
        }
    }

    /// As a two's-complement int64 / int32 (not zigzag).
    pub fn i64(self) -> Option<i64> {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => Some(v as i64),
            Value::Fixed32(v) => Some(i64::from(v as i32)),
            Value::Bytes(_) => None,
        }
    }

    pub fn bool(self) -> Option<bool> {
        self.u64().map(|v| v != 0)
    }
}

/// One field of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field<'a> {
    pub number: u32,
    pub value: Value<'a>,
}

/// Reads a base-128 varint from the front of `buf`, returning the value and
/// the number of bytes it took, or `None` when `buf` ends inside it or the
/// varint is longer than ten bytes.
#[inline]
pub fn read_varint(buf: &[u8]) -> Option<(u64, usize)> {
    // A single byte is the common case by far (every tag of a field below
    // 16, most lengths): decided before the loop, which the profile of
    // agy-decode showed as most of `Fields::next`.
    match buf.first() {
        Some(&byte) if byte < 0x80 => Some((u64::from(byte), 1)),
        _ => read_varint_long(buf),
    }
}

fn read_varint_long(buf: &[u8]) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    for (i, &byte) in buf.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i as u32);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// An iterator over the fields of a message, in wire order.
///
/// It stops at the first field it cannot read (bad tag, unknown wire type,
/// length past the end). Groups (wire types 3 and 4) are not used by any
/// proto3 schema and are treated as damage.
#[derive(Clone, Debug)]
pub struct Fields<'a> {
    rest: &'a [u8],
    damaged: bool,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8]) -> Fields<'a> {
        Fields {
            rest: buf,
            damaged: false,
        }
    }

    /// True once iteration stopped early because the bytes that remained
    /// could not be parsed as a field.
    pub fn is_damaged(&self) -> bool {
        self.damaged
    }

    #[cold]
    fn stop(&mut self) -> Option<Field<'a>> {
        self.damaged = true;
        self.rest = &[];
        None
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Field<'a>;

    /// Inlined into the message readers' loops: called once per field of
    /// every message read, the call's own cost was a quarter of its
    /// instructions in agy-decode.
    #[inline]
    fn next(&mut self) -> Option<Field<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let Some((tag, used)) = read_varint(self.rest) else {
            return self.stop();
        };
        let number = tag >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return self.stop();
        }
        let number = number as u32;
        let body = &self.rest[used..];
        let (value, used) = match tag & 7 {
            0 => match read_varint(body) {
                Some((v, n)) => (Value::Varint(v), n),
                None => return self.stop(),
            },
            1 => match body.get(..8) {
                Some(b) => (Value::Fixed64(u64::from_le_bytes(b.try_into().unwrap())), 8),
                None => return self.stop(),
            },
            2 => {
                let Some((len, n)) = read_varint(body) else {
                    return self.stop();
                };
                let Some(end) = usize::try_from(len).ok().and_then(|l| n.checked_add(l)) else {
                    return self.stop();
                };
                match body.get(n..end) {
                    Some(b) => (Value::Bytes(b), end),
                    None => return self.stop(),
                }
            }
            5 => match body.get(..4) {
                Some(b) => (Value::Fixed32(u32::from_le_bytes(b.try_into().unwrap())), 4),
                None => return self.stop(),
            },
            _ => return self.stop(),
        };
        self.rest = &body[used..];
        Some(Field { number, value })
    }
}

/// A message's fields with the bytes that encode each (tag included), and
/// the bytes after the last readable field (empty unless damaged): what a
/// writer needs to change one field and keep every other byte as it was.
pub fn field_spans(buf: &[u8]) -> (Vec<(Field<'_>, &[u8])>, &[u8]) {
    let mut fields = Fields::new(buf);
    let mut spans = Vec::new();
    loop {
        let before = fields.rest;
        match fields.next() {
            Some(field) => {
                let used = before.len() - fields.rest.len();
                spans.push((field, &before[..used]));
            }
            None => {
                let tail = if fields.damaged { before } else { &[][..] };
                return (spans, tail);
            }
        }
    }
}

/// Where and how a message stops being readable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// Bytes read before the damage.
    pub offset: usize,
    /// The field being read when it stopped, if its tag was readable.
    pub field: Option<u32>,
    /// A length-delimited field's declared length, and how many of those
    /// bytes are there (fewer: the message was cut short).
    pub declared: Option<(u64, usize)>,
    /// Bytes that could not be read.
    pub unread: usize,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.field, self.declared) {
            (Some(n), Some((declared, present))) => write!(
                f,
                "field {n} at byte {} declares {declared} bytes and {present} are there",
                self.offset
            ),
            (Some(n), None) => write!(
                f,
                "field {n} at byte {} is unreadable ({} bytes lost)",
                self.offset, self.unread
            ),
            (None, _) => write!(
                f,
                "unreadable after {} bytes ({} bytes lost)",
                self.offset, self.unread
            ),
        }
    }
}

/// How `buf` is damaged, if it does not read whole as a message.
pub fn damage(buf: &[u8]) -> Option<Damage> {
    // The common case, a whole message, without collecting its fields.
    let mut fields = Fields::new(buf);
    for _ in fields.by_ref() {}
    if !fields.is_damaged() {
        return None;
    }
    let (_, tail) = field_spans(buf);
    if tail.is_empty() {
        return None;
    }
    let offset = buf.len() - tail.len();
    let mut damage = Damage {
        offset,
        field: None,
        declared: None,
        unread: tail.len(),
    };
    if let Some((tag, used)) = read_varint(tail) {
        let number = tag >> 3;
        if number > 0 && number <= u64::from(u32::MAX >> 3) {
            damage.field = Some(number as u32);
            if tag & 7 == 2 {
                if let Some((len, n)) = read_varint(&tail[used..]) {
                    damage.declared = Some((len, tail.len() - used - n));
                }
            }
        }
    }
    Some(damage)
}

/// The readable part of a damaged message as a message: the fields before
/// the damage, and a length-delimited field that was cut short with what
/// is there of it (itself repaired when it reads as a message cut short),
/// so a reader gets the text up to the cut. `None` when `buf` is whole.
pub fn repair(buf: &[u8]) -> Option<Vec<u8>> {
    let (spans, tail) = field_spans(buf);
    if tail.is_empty() {
        return None;
    }
    let mut out = Writer::with_capacity(buf.len());
    for (_, raw) in &spans {
        out.raw(raw);
    }
    let damage = damage(buf).expect("a tail is damage");
    if let (Some(number), Some((declared, present))) = (damage.field, damage.declared) {
        if (present as u64) < declared {
            let partial = &tail[tail.len() - present..];
            match damage_is_cut(partial).then(|| repair(partial)).flatten() {
                Some(inner) => out.bytes(number, &inner),
                None => out.bytes(number, partial),
            };
        }
    }
    Some(out.into_bytes())
}

/// Whether `buf` is a message cut short (its last field declares more
/// bytes than are there), rather than bytes of another kind.
fn damage_is_cut(buf: &[u8]) -> bool {
    matches!(damage(buf), Some(Damage { declared: Some((declared, present)), .. }) if (present as u64) < declared)
}

/// `message` with its top-level fields `number` replaced by `values` as
/// length-delimited fields (in place of the first of them, or at the end
/// when there was none); every other byte as it was.
pub fn set_field(message: &[u8], number: u32, values: &[impl AsRef<[u8]>]) -> Vec<u8> {
    replace_field(message, number, |out| {
        for value in values {
            out.bytes(number, value.as_ref());
        }
    })
}

/// `message` with the field `number` set to the varint `value`, where it
/// was or at the end; every other byte as it was.
pub fn set_varint(message: &[u8], number: u32, value: u64) -> Vec<u8> {
    replace_field(message, number, |out| {
        out.varint(number, value);
    })
}

/// `message` with every field `number` dropped and what `write` writes put
/// where the first was (or at the end); every other byte as it was.
pub fn replace_field(message: &[u8], number: u32, write: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let (spans, tail) = field_spans(message);
    let mut out = Writer::with_capacity(message.len() + 8);
    let mut write = Some(write);
    for (f, raw) in spans {
        if f.number != number {
            out.raw(raw);
        } else if let Some(write) = write.take() {
            write(&mut out);
        }
    }
    if let Some(write) = write {
        write(&mut out);
    }
    out.raw(tail);
    out.into_bytes()
}

/// `message` with each length-delimited field `number` rewritten by `edit`
/// (`None` keeps that one as it was); `None` when nothing changed.
pub fn edit_field(
    message: &[u8],
    number: u32,
    mut edit: impl FnMut(&[u8]) -> Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let (spans, tail) = field_spans(message);
    let mut out = Writer::with_capacity(message.len());
    let mut changed = false;
    for (f, raw) in spans {
        let edited = match f.value {
            Value::Bytes(bytes) if f.number == number => edit(bytes),
            _ => None,
        };
        match edited {
            Some(new) => {
                out.bytes(number, &new);
                changed = true;
            }
            None => {
                out.raw(raw);
            }
        }
    }
    out.raw(tail);
    changed.then(|| out.into_bytes())
}

/// Whether `buf` reads whole as a message of at least one field: how a
/// length-delimited value is told to be a nested message rather than text.
pub fn is_whole_message(buf: &[u8]) -> bool {
    let mut fields = Fields::new(buf);
    let mut any = false;
    for _ in fields.by_ref() {
        any = true;
    }
    any && !fields.is_damaged()
}

/// `bytes` as text, invalid UTF-8 replaced by U+FFFD.
///
/// `String::from_utf8_lossy` walks the bytes chunk by chunk even when they
/// are valid; checking first (with SIMD, `simdutf8`) is several times
/// faster on the megabytes of tool output a conversation carries.
pub fn lossy_str(bytes: &[u8]) -> Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A message to be read by field number.
///
/// Lookups scan the message each time; agy messages have a handful of fields
/// and skipping over a length-delimited field costs one varint, so this beats
/// building an index for the few fields a decoder asks about. A reader that
/// wants several fields of each of many messages asks for them together
/// ([`Message::last_of`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Message<'a> {
    bytes: &'a [u8],
}

impl<'a> Message<'a> {
    pub fn new(bytes: &'a [u8]) -> Message<'a> {
        Message { bytes }
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn fields(&self) -> Fields<'a> {
        Fields::new(self.bytes)
    }

    /// True when any field with this number is present.
    pub fn has(&self, number: u32) -> bool {
        self.fields().any(|f| f.number == number)
    }

    /// The last value of field `number` (protobuf's rule for singular fields).
    pub fn last(&self, number: u32) -> Option<Value<'a>> {
        self.fields()
            .filter(|f| f.number == number)
            .last()
            .map(|f| f.value)
    }

    /// The last value of each of `numbers`, in one pass: for a reader that
    /// wants several fields of each of many small messages (the entries of
    /// a directory listing), where a pass per field was most of the time
    /// agy-decode spent reading messages.
    /// `numbers` are distinct.
    pub fn last_of<const N: usize>(&self, numbers: [u32; N]) -> [Option<Value<'a>>; N] {
        let mut values = [None; N];
        for field in self.fields() {
            if let Some(at) = numbers.iter().position(|&n| n == field.number) {
                values[at] = Some(field.value);
            }
        }
        values
    }

    /// Every length-delimited value of field `number`, in order.
    pub fn repeated_bytes(&self, number: u32) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.fields().filter_map(move |f| match f.value {
            Value::Bytes(b) if f.number == number => Some(b),
            _ => None,
        })
    }

    /// Every nested message in field `number`, in order.
    pub fn repeated_messages(&self, number: u32) -> impl Iterator<Item = Message<'a>> + 'a {
        self.repeated_bytes(number).map(Message::new)
    }

    /// Every varint of field `number`, in order, whether packed or not.
    pub fn repeated_varints(&self, number: u32) -> Vec<u64> {
        let mut out = Vec::new();
        for field in self.fields().filter(|f| f.number == number) {
            match field.value {
                Value::Varint(v) => out.push(v),
                Value::Bytes(mut packed) => {
                    while let Some((v, n)) = read_varint(packed) {
                        out.push(v);
                        packed = &packed[n..];
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// Field `number` as raw bytes (wire type 2 only).
    pub fn get_bytes(&self, number: u32) -> Option<&'a [u8]> {
        self.last(number)?.bytes()
    }

    /// Field `number` as a nested message (wire type 2 only).
    pub fn get_message(&self, number: u32) -> Option<Message<'a>> {
        self.get_bytes(number).map(Message::new)
    }

    /// Field `number` as text; see [`Value::str`].
    pub fn get_str(&self, number: u32) -> Option<Cow<'a, str>> {
        self.last(number)?.str()
    }

    /// Field `number` as text, absent when empty.
    pub fn get_nonempty_str(&self, number: u32) -> Option<Cow<'a, str>> {
        self.get_str(number).filter(|s| !s.is_empty())
    }

    /// Field `number` as an unsigned integer (varint or fixed).
    pub fn get_u64(&self, number: u32) -> Option<u64> {
        self.last(number)?.u64()
    }

    /// Field `number` as a two's-complement int64 / int32 (not zigzag).
    pub fn get_i64(&self, number: u32) -> Option<i64> {
        self.last(number)?.i64()
    }

    /// Field `number` as an int32 (an int32 is sign-extended on the wire).
    pub fn get_i32(&self, number: u32) -> Option<i32> {
        self.get_i64(number).map(|v| v as i32)
    }

    pub fn get_bool(&self, number: u32) -> Option<bool> {
        self.last(number)?.bool()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_of_one_string_is_the_message_built_around_it() {
        for len in [
            0, 1, 120, 121, 126, 127, 128, 16_370, 16_383, 16_384, 2_097_151, 2_097_152,
        ] {
            let text = "x".repeat(len);
            for inner in [1, 15, 16, 2047, 2048] {
                let mut built = Writer::new();
                built.message(3, |m| {
                    m.string(inner, &text);
                });
                let mut known = Writer::new();
                known.message_of_string(3, inner, &text);
                assert_eq!(
                    known.as_bytes(),
                    built.as_bytes(),
                    "{len} bytes in field {inner}"
                );
            }
        }
    }

    #[test]
    fn round_trip_every_wire_type() {
        let mut w = Writer::new();
        w.varint(1, 14)
            .int64(2, -5)
            .fixed64(3, 7)
            .fixed32(4, 9)
            .string(5, "hé")
            .message(6, |m| {
                m.varint(1, 300);
            });
        let bytes = w.into_bytes();
        let m = Message::new(&bytes);
        assert_eq!(m.get_u64(1), Some(14));
        assert_eq!(m.get_i64(2), Some(-5));
        assert_eq!(m.get_i32(2), Some(-5));
        assert_eq!(m.get_u64(3), Some(7));
        assert_eq!(m.get_u64(4), Some(9));
        assert_eq!(m.get_str(5).as_deref(), Some("hé"));
        assert_eq!(m.get_message(6).and_then(|n| n.get_u64(1)), Some(300));
        assert!(!m.fields().is_damaged());
    }

    #[test]
    fn last_of_reads_what_a_lookup_per_field_reads() {
        let mut w = Writer::new();
        w.string(1, "first")
            .varint(2, 0)
            .string(1, "second")
            .fixed32(4, 9)
            .varint(2, 5);
        let bytes = w.into_bytes();
        let m = Message::new(&bytes);
        let [name, flag, absent, fixed] = m.last_of([1, 2, 3, 4]);
        assert_eq!(name.and_then(Value::str), m.get_str(1));
        assert_eq!(name.and_then(Value::str).as_deref(), Some("second"));
        assert_eq!(flag.and_then(Value::bool), m.get_bool(2));
        assert_eq!(flag.and_then(Value::u64), Some(5));
        assert_eq!(absent, None);
        assert_eq!(fixed.and_then(Value::u64), m.get_u64(4));
        assert_eq!(fixed.and_then(Value::str), None);
    }

    #[test]
    fn nested_messages_of_every_length_size_match_copied_ones() {
        for len in [0, 1, 126, 127, 128, 129, 16_383, 16_384, (1 << 21) + 3] {
            let text = "x".repeat(len);
            let mut inner = Writer::new();
            inner.string(1, &text);
            let mut middle = Writer::new();
            middle.varint(2, 7).bytes(3, inner.as_bytes());
            let mut expected = Writer::new();
            expected
                .varint(1, 1)
                .bytes(4, middle.as_bytes())
                .varint(5, 9);

            let mut w = Writer::new();
            w.varint(1, 1)
                .message(4, |m| {
                    m.varint(2, 7).message(3, |i| {
                        i.string(1, &text);
                    });
                })
                .varint(5, 9);
            assert_eq!(w.as_bytes(), expected.as_bytes(), "length {len}");
        }
    }

    #[test]
    fn truncated_input_yields_prefix() {
        let mut w = Writer::new();
        w.varint(1, 3).string(2, "hello world");
        let bytes = w.into_bytes();
        let cut = &bytes[..bytes.len() - 3];
        let mut fields = Fields::new(cut);
        assert_eq!(fields.next().map(|f| f.number), Some(1));
        assert_eq!(fields.next(), None);
        assert!(fields.is_damaged());
        assert_eq!(Message::new(cut).get_str(2), None);
    }

    #[test]
    fn garbage_never_panics() {
        let mut state: u32 = 12345;
        for len in 0..200 {
            let buf: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (state >> 16) as u8
                })
                .collect();
            let m = Message::new(&buf);
            let _ = m.fields().count();
            let _ = m.repeated_varints(1);
        }
    }
}
