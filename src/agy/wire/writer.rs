//! Writing protobuf messages: [`Writer`], which builds a message field by
//! field, nested messages in place.

/// The room [`Writer::new`] starts with.
const SMALL_MESSAGE: usize = 128;

/// Builds a message field by field. Fields are written in call order, which
/// keeps encoder output deterministic.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

/// The bytes `v` takes as a varint.
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    // At most ten bytes: room once, not a check to grow at each byte.
    buf.reserve(10);
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

impl Writer {
    /// A writer with room for a small message: most (a step's metadata, a
    /// tool call) are some tens of bytes, and growing each from nothing,
    /// a reallocation per doubling, was 4 % of agy-encode.
    pub fn new() -> Writer {
        Writer::with_capacity(SMALL_MESSAGE)
    }

    /// A writer that appends to `buf`, so a caller can reuse one
    /// allocation for many messages.
    pub fn from_vec(buf: Vec<u8>) -> Writer {
        Writer { buf }
    }

    pub fn with_capacity(capacity: usize) -> Writer {
        Writer {
            buf: Vec::with_capacity(capacity),
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn tag(&mut self, number: u32, wire_type: u8) {
        put_varint(
            &mut self.buf,
            (u64::from(number) << 3) | u64::from(wire_type),
        );
    }

    /// A varint field; int32 and int64 negatives pass as `v as u64`.
    pub fn varint(&mut self, number: u32, v: u64) -> &mut Writer {
        self.tag(number, 0);
        put_varint(&mut self.buf, v);
        self
    }

    pub fn int64(&mut self, number: u32, v: i64) -> &mut Writer {
        self.varint(number, v as u64)
    }

    pub fn bool(&mut self, number: u32, v: bool) -> &mut Writer {
        self.varint(number, u64::from(v))
    }

    pub fn fixed64(&mut self, number: u32, v: u64) -> &mut Writer {
        self.tag(number, 1);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn fixed32(&mut self, number: u32, v: u32) -> &mut Writer {
        self.tag(number, 5);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn bytes(&mut self, number: u32, v: &[u8]) -> &mut Writer {
        // The tag, the length and the bytes: room for all three at once.
        self.buf.reserve(20 + v.len());
        self.tag(number, 2);
        put_varint(&mut self.buf, v.len() as u64);
        self.buf.extend_from_slice(v);
        self
    }

    pub fn string(&mut self, number: u32, v: &str) -> &mut Writer {
        self.bytes(number, v.as_bytes())
    }

    /// A length-delimited field of `len` bytes that `write` appends: a
    /// value made as it is written, not built apart and copied in.
    pub fn bytes_written(
        &mut self,
        number: u32,
        len: usize,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> &mut Writer {
        self.field_head(number, len);
        let at = self.buf.len();
        write(&mut self.buf);
        debug_assert_eq!(self.buf.len() - at, len, "the length said");
        self
    }

    /// The tag and length of a length-delimited field of `len` bytes, which
    /// the caller puts after them (or, building a message back to front,
    /// already has).
    pub fn field_head(&mut self, number: u32, len: usize) -> &mut Writer {
        self.tag(number, 2);
        put_varint(&mut self.buf, len as u64);
        self
    }

    /// How many bytes are written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// What was written from byte `at` on.
    pub fn written_since(&self, at: usize) -> &[u8] {
        &self.buf[at..]
    }

    /// Takes back what was written from byte `len` on.
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }

    /// A nested message built by `build`, in place: its length is not known
    /// until it is built, so one byte is set aside for it, which is enough
    /// below 128 bytes; a longer message is moved up once to make room for
    /// its longer length. Building a child in a buffer of its own would copy
    /// every byte of a large tool output once per level of nesting.
    pub fn message(&mut self, number: u32, build: impl FnOnce(&mut Writer)) -> &mut Writer {
        self.tag(number, 2);
        let at = self.buf.len();
        self.buf.push(0);
        build(self);
        let len = self.buf.len() - at - 1;
        if len < 0x80 {
            self.buf[at] = len as u8;
            return self;
        }
        let mut length = Vec::with_capacity(10);
        put_varint(&mut length, len as u64);
        let extra = length.len() - 1;
        self.buf.resize(self.buf.len() + extra, 0);
        self.buf
            .copy_within(at + 1..at + 1 + len, at + length.len());
        self.buf[at..at + length.len()].copy_from_slice(&length);
        self
    }

    /// A nested message whose only field is the string `text` in field
    /// `inner`, as [`Writer::message`] writes it: its length is known
    /// first, so the text is not moved up after it is written (a tool's
    /// output, megabytes, sits in such a message).
    pub fn message_of_string(&mut self, number: u32, inner: u32, text: &str) -> &mut Writer {
        let tag = (u64::from(inner) << 3) | 2;
        let len = varint_len(tag) + varint_len(text.len() as u64) + text.len();
        self.buf.reserve(20 + len);
        self.field_head(number, len).string(inner, text)
    }

    /// A repeated integer field, packed as proto3 writes it (nothing when
    /// `values` is empty).
    pub fn packed_varints(&mut self, number: u32, values: &[u64]) -> &mut Writer {
        if values.is_empty() {
            return self;
        }
        let mut packed = Vec::with_capacity(values.len() * 2);
        for &v in values {
            put_varint(&mut packed, v);
        }
        self.bytes(number, &packed)
    }

    /// Appends bytes that are already an encoded run of fields.
    pub fn raw(&mut self, encoded: &[u8]) -> &mut Writer {
        self.buf.extend_from_slice(encoded);
        self
    }
}
