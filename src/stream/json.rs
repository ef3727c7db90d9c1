//! Low-level JSON text output shared by the row and message writers.
//!
//! Records are written straight into a byte buffer instead of going through
//! `serde_json::Value`: a step row is mostly one large hex string, and
//! building a tree for it would copy it twice for nothing.

/// What each byte needs in a JSON string: 0 = itself, `u` = `\u00XX`,
/// anything else = that letter after a backslash.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = b'u';
        i += 1;
    }
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[0x08] = b'b';
    table[0x0c] = b'f';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// True when any byte of the little-endian word needs escaping: below 0x20,
/// `"` or `\\`. A true answer may be wrong (a borrow between bytes); a
/// false one never is, which is all the fast path needs.
#[inline]
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGH != 0
}

/// Input bytes escaped per round.
const ESCAPE_ROUND: usize = 4096;

/// Writes `s` as a JSON string. Non-ASCII text is written as UTF-8, never
/// as `\u` escapes, so the output stays readable and `grep`-able.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    write_str_body(out, s);
    out.push(b'"');
}

/// How each byte is written inside a JSON string: up to four bytes and
/// their count, or a count of 0 for a control character, which takes the
/// `\u00XX` form.
struct EscapeTable {
    bytes: [[u8; 4]; 256],
    len: [u8; 256],
}

/// Builds the table for text escaped once, or twice (for a JSON string
/// inside a JSON string: every escape `\X` becomes `\\` and `X` escaped).
const fn escape_table(twice: bool) -> EscapeTable {
    let mut table = EscapeTable {
        bytes: [[0; 4]; 256],
        len: [1; 256],
    };
    let mut b = 0;
    while b < 256 {
        let escape = ESCAPE[b];
        table.bytes[b] = match (escape, twice) {
            (0, _) => [b as u8, 0, 0, 0],
            (b'u', _) => [0; 4],
            (b'"', true) | (b'\\', true) => [b'\\', b'\\', b'\\', escape],
            (letter, true) => [b'\\', b'\\', letter, 0],
            (letter, false) => [b'\\', letter, 0, 0],
        };
        table.len[b] = match (escape, twice) {
            (0, _) => 1,
            (b'u', _) => 0,
            (b'"', true) | (b'\\', true) => 4,
            (_, true) => 3,
            (_, false) => 2,
        };
        b += 1;
    }
    table
}

static ESCAPE_ONCE: EscapeTable = escape_table(false);
static ESCAPE_TWICE: EscapeTable = escape_table(true);

/// The inside of [`write_str`]: `s` escaped, without the quotes, for text
/// that becomes part of a longer JSON string.
pub fn write_str_body(out: &mut Vec<u8>, s: &str) {
    write_escaped(out, s, &ESCAPE_ONCE, b"\\u00");
}

/// Writes `s` escaped twice, for a JSON string that sits inside another
/// JSON string (a brain transcript line inside a `file` record): one pass
/// instead of escaping the text, then the escaped line again.
pub fn write_str_body_twice(out: &mut Vec<u8>, s: &str) {
    write_escaped(out, s, &ESCAPE_TWICE, b"\\\\u00");
}

/// Conversation text is most of what the tools write. Each round makes
/// room for a round of input plus some escapes, zero-filled once, and fills
/// it with no call per run: sixteen bytes at a time where SSE2 finds what
/// needs escaping (every x86-64), eight at a time through the table
/// elsewhere and for the last few bytes. A round ends early when its room
/// runs short, so escape-dense text (brain transcripts are JSON) just takes
/// more rounds.
fn write_escaped(out: &mut Vec<u8>, s: &str, table: &EscapeTable, unicode: &[u8]) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = out.len();
        let room = (bytes.len() - i).min(ESCAPE_ROUND) + 128;
        out.resize(start + room, 0);
        let dst = &mut out[start..];
        let (read, mut n) = escape_vectored(&bytes[i..], dst, table, unicode);
        i += read;
        // Room for a word, or for eight bytes of the longest escape (7).
        while i < bytes.len() && n + 64 <= room {
            if let Some(word) = bytes.get(i..i + 8) {
                if !word_needs_escape(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
                    dst[n..n + 8].copy_from_slice(word);
                    n += 8;
                    i += 8;
                    continue;
                }
            }
            let end = (i + 8).min(bytes.len());
            for &b in &bytes[i..end] {
                n += escape_byte(b, &mut dst[n..], table, unicode);
            }
            i = end;
        }
        out.truncate(start + n);
    }
}

/// Writes byte `b` escaped at the start of `dst` (at least 8 bytes long);
/// returns how many bytes that took.
#[inline]
fn escape_byte(b: u8, dst: &mut [u8], table: &EscapeTable, unicode: &[u8]) -> usize {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let len = usize::from(table.len[b as usize]);
    if len == 0 {
        let n = unicode.len();
        dst[..n].copy_from_slice(unicode);
        dst[n] = HEX[(b >> 4) as usize];
        dst[n + 1] = HEX[(b & 0xf) as usize];
        return n + 2;
    }
    dst[..4].copy_from_slice(&table.bytes[b as usize]);
    len
}

/// Escapes whole sixteen-byte blocks of `src` into `dst` while both last;
/// returns the bytes read and written (none on other architectures).
#[cfg(target_arch = "x86_64")]
fn escape_vectored(
    src: &[u8],
    dst: &mut [u8],
    table: &EscapeTable,
    unicode: &[u8],
) -> (usize, usize) {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function touches memory only through
    // slices.
    unsafe { escape_sse2(src, dst, table, unicode) }
}

#[cfg(not(target_arch = "x86_64"))]
fn escape_vectored(
    _src: &[u8],
    _dst: &mut [u8],
    _table: &EscapeTable,
    _unicode: &[u8],
) -> (usize, usize) {
    (0, 0)
}

/// Each block's bytes to escape are walked from its mask: the run before
/// each is copied sixteen bytes at a time (the copy may run past it, into
/// room the next write overwrites), then the byte is escaped. Brain
/// transcripts (JSON inside JSON) need an escape every few bytes, and
/// restarting the block scan after each made escaping them 12% of the
/// `agy-dump | agy-decode` pipeline on a long conversation's store.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn escape_sse2(src: &[u8], dst: &mut [u8], table: &EscapeTable, unicode: &[u8]) -> (usize, usize) {
    let (mut i, mut n) = (0, 0);
    // A block reads up to 16 bytes past its start for the over-copies, and
    // writes at most sixteen escapes of 7 bytes plus a 16-byte copy.
    while i + 32 <= src.len() && n + 16 * 7 + 16 <= dst.len() {
        let mut mask = special_mask_sse2(&src[i..i + 16]);
        let mut from = 0;
        while mask != 0 {
            let at = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            dst[n..n + 16].copy_from_slice(&src[i + from..i + from + 16]);
            n += at - from;
            n += escape_byte(src[i + at], &mut dst[n..], table, unicode);
            from = at + 1;
        }
        dst[n..n + 16].copy_from_slice(&src[i + from..i + from + 16]);
        n += 16 - from;
        i += 16;
    }
    (i, n)
}

/// One bit per byte of the sixteen-byte `block` that a JSON string must
/// escape: a control character, `"` or `\\`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn special_mask_sse2(block: &[u8]) -> u32 {
    use std::arch::x86_64::*;
    let low = u64::from_le_bytes(block[..8].try_into().expect("eight bytes"));
    let high = u64::from_le_bytes(block[8..16].try_into().expect("eight bytes"));
    let v = _mm_set_epi64x(high as i64, low as i64);
    // Unsigned v <= 0x1f: the smaller of v and 0x1f is v itself.
    let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
    let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
    let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
    _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash))) as u32
}

/// How many bytes at the start of `bytes` a JSON string holds as they are:
/// the position of the first control character, `"` or `\\`, or the
/// length. Reading a string literal is finding this, sixteen bytes at a
/// time where SSE2 is there.
pub fn clean_prefix_len(bytes: &[u8]) -> usize {
    let mut at = clean_prefix_vectored(bytes);
    while at < bytes.len() && ESCAPE[bytes[at] as usize] == 0 {
        at += 1;
    }
    at
}

/// Whether `body` is the inside of a JSON string that serde_json would
/// accept, using only the two-character escapes (`\"`, `\\`, `\/`, `\b`,
/// `\f`, `\n`, `\r`, `\t`): no unescaped quote or control character, and
/// valid UTF-8. A `\u` escape answers false although it may be valid; the
/// caller then leaves the string to the full parser, which says what, if
/// anything, is wrong.
///
/// It exists so that a reader can accept a string it will not use without
/// unescaping it into a copy: agy-decode drops most brain `file` records,
/// and parsing them with serde_json was a quarter of its time on a store
/// of many conversations.
pub fn is_simple_str_body(body: &[u8]) -> bool {
    // Escapes come every few bytes in a transcript (JSON inside JSON), so
    // each block's special bytes are walked from its mask rather than the
    // scan restarted after each.
    let Some((mut at, mut escaped_until)) = simple_blocks_vectored(body) else {
        return false;
    };
    while at < body.len() {
        if at >= escaped_until && ESCAPE[body[at] as usize] != 0 {
            match simple_escape(body, at) {
                Some(end) => escaped_until = end,
                None => return false,
            }
        }
        at += 1;
    }
    // Escapes are ASCII, so the text is UTF-8 exactly when its escaped
    // form is.
    std::str::from_utf8(body).is_ok()
}

/// Where the escape at `at` ends, when `body[at]` begins a two-character
/// escape; `None` for anything else (a quote, a control character, `\u`).
#[inline]
fn simple_escape(body: &[u8], at: usize) -> Option<usize> {
    match (body[at], body.get(at + 1)) {
        (b'\\', Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')) => Some(at + 2),
        _ => None,
    }
}

/// [`is_simple_str_body`] over the whole sixteen-byte blocks of `body`:
/// where the blocks end, and where the escape begun last ends (it may
/// reach past them); `None` when they hold anything but simple escapes.
#[cfg(target_arch = "x86_64")]
fn simple_blocks_vectored(body: &[u8]) -> Option<(usize, usize)> {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function touches memory only through
    // slices.
    unsafe { simple_blocks_sse2(body) }
}

#[cfg(not(target_arch = "x86_64"))]
fn simple_blocks_vectored(_body: &[u8]) -> Option<(usize, usize)> {
    Some((0, 0))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn simple_blocks_sse2(body: &[u8]) -> Option<(usize, usize)> {
    let mut escaped_until = 0;
    let mut base = 0;
    for block in body.chunks_exact(16) {
        let mut mask = special_mask_sse2(block);
        while mask != 0 {
            let at = base + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            // A quote or backslash that an escape begun before consumed.
            if at >= escaped_until {
                escaped_until = simple_escape(body, at)?;
            }
        }
        base += 16;
    }
    Some((base, escaped_until))
}

/// The position of the first byte to escape within the whole sixteen-byte
/// blocks of `bytes`, else the length of those blocks (zero on other
/// architectures).
#[cfg(target_arch = "x86_64")]
fn clean_prefix_vectored(bytes: &[u8]) -> usize {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function touches memory only through
    // slices.
    unsafe { clean_prefix_sse2(bytes) }
}

#[cfg(not(target_arch = "x86_64"))]
fn clean_prefix_vectored(_bytes: &[u8]) -> usize {
    0
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn clean_prefix_sse2(bytes: &[u8]) -> usize {
    let mut at = 0;
    for block in bytes.chunks_exact(16) {
        let mask = special_mask_sse2(block);
        if mask != 0 {
            return at + mask.trailing_zeros() as usize;
        }
        at += 16;
    }
    at
}

/// The two lowercase hex digits of every byte value.
static HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut table = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = [DIGITS[i >> 4], DIGITS[i & 0xf]];
        i += 1;
    }
    table
};

/// Writes `bytes` as a quoted lowercase hex string.
///
/// Blobs are most of what agy-dump and agy-encode write, so this is their
/// hot loop: sixteen bytes at a time with SSE2 where the CPU has it (every
/// x86-64), the pair table for the rest. Each block is appended from
/// registers, so the buffer is never zero-filled first only to be
/// overwritten.
pub fn write_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() * 2 + 2);
    out.push(b'"');
    write_hex_body(out, bytes);
    out.push(b'"');
}

/// The inside of [`write_hex`]: the digits without the quotes, for a hex
/// string written a piece at a time.
pub fn write_hex_body(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    let done = write_hex_vectored(out, bytes);
    for &b in &bytes[done..] {
        out.extend_from_slice(&HEX_PAIRS[b as usize]);
    }
}

/// Appends the hex of whole sixteen-byte blocks of `bytes`; returns how
/// many bytes it encoded (none on other architectures).
#[cfg(target_arch = "x86_64")]
fn write_hex_vectored(out: &mut Vec<u8>, bytes: &[u8]) -> usize {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function touches memory only through
    // slices and a Vec.
    unsafe { write_hex_sse2(out, bytes) }
}

#[cfg(not(target_arch = "x86_64"))]
fn write_hex_vectored(_out: &mut Vec<u8>, _bytes: &[u8]) -> usize {
    0
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn write_hex_sse2(out: &mut Vec<u8>, bytes: &[u8]) -> usize {
    use std::arch::x86_64::*;
    // A nibble n becomes '0' + n, plus 39 more ('a' - '9' - 1) above 9.
    let digits = |n: __m128i| {
        let above_nine = _mm_cmpgt_epi8(n, _mm_set1_epi8(9));
        _mm_add_epi8(
            _mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)),
            _mm_and_si128(above_nine, _mm_set1_epi8(39)),
        )
    };
    let low_half = |v: __m128i| _mm_cvtsi128_si64(v) as u64;
    let high_half = |v: __m128i| _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64;
    let blocks = bytes.chunks_exact(16);
    let done = bytes.len() - blocks.remainder().len();
    for block in blocks {
        let low = u64::from_le_bytes(block[..8].try_into().expect("eight bytes"));
        let high = u64::from_le_bytes(block[8..].try_into().expect("eight bytes"));
        let v = _mm_set_epi64x(high as i64, low as i64);
        let mask = _mm_set1_epi8(0x0f);
        let high_nibbles = _mm_and_si128(_mm_srli_epi16(v, 4), mask);
        let low_nibbles = _mm_and_si128(v, mask);
        // Each byte's two digits, high nibble first.
        let first = digits(_mm_unpacklo_epi8(high_nibbles, low_nibbles));
        let second = digits(_mm_unpackhi_epi8(high_nibbles, low_nibbles));
        let mut text = [0u8; 32];
        for (i, word) in [
            low_half(first),
            high_half(first),
            low_half(second),
            high_half(second),
        ]
        .into_iter()
        .enumerate()
        {
            text[i * 8..i * 8 + 8].copy_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(&text);
    }
    done
}

pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    serde_json::to_writer(out, &v).expect("writing to a Vec cannot fail");
}

pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    serde_json::to_writer(out, &v).expect("writing to a Vec cannot fail");
}

/// Writes a finite real so that it reads back as a real: `1.0`, never `1`.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    debug_assert!(v.is_finite());
    serde_json::to_writer(out, &v).expect("writing to a Vec cannot fail");
}

/// How deep the JSON being written sits: as it is, or inside a JSON string
/// (escaped once more), as a brain transcript line does in a `file` record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    Top,
    Nested,
}

impl Depth {
    /// Writes JSON punctuation and literals that hold no string.
    pub fn raw(self, out: &mut Vec<u8>, json_text: &str) {
        match self {
            Depth::Top => out.extend_from_slice(json_text.as_bytes()),
            Depth::Nested => write_str_body(out, json_text),
        }
    }

    /// Writes a JSON string, quotes included.
    pub fn string(self, out: &mut Vec<u8>, s: &str) {
        match self {
            Depth::Top => write_str(out, s),
            Depth::Nested => {
                out.extend_from_slice(b"\\\"");
                write_str_body_twice(out, s);
                out.extend_from_slice(b"\\\"");
            }
        }
    }
}

/// Writes a JSON value compactly, byte for byte as `serde_json` does, but
/// with strings (tool arguments carry whole files) through [`write_str`].
pub fn write_value(out: &mut Vec<u8>, value: &serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(out, map),
        scalar => serde_json::to_writer(out, scalar).expect("writing to a Vec cannot fail"),
    }
}

/// The compact JSON text of `value`, as `value.to_string()` gives it, but
/// through [`write_value`] rather than `fmt`'s per-piece calls.
pub fn value_to_string(value: &serde_json::Value) -> String {
    let mut out = Vec::new();
    write_value(&mut out, value);
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// Writes an object from its entries in order; see [`write_value`].
pub fn write_object<'v>(
    out: &mut Vec<u8>,
    entries: impl IntoIterator<Item = (&'v String, &'v serde_json::Value)>,
) {
    out.push(b'{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, key);
        out.push(b':');
        write_value(out, value);
    }
    out.push(b'}');
}

/// Writes `"key":` (the key must need no escaping).
pub fn write_key(out: &mut Vec<u8>, key: &str) {
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_serde_json() {
        let every_byte: String = (0..128u8).map(char::from).collect::<String>() + "é✓";
        let long = "a\"b\\c\u{1f}d".repeat(900) + &every_byte + &"x".repeat(5000);
        for s in [
            long.as_str(),
            every_byte.as_str(),
            "",
            "0123456789abcdef\"",
            "\"0123456789abcdef",
            "plain",
            "quote \" back \\ slash",
            "ctl \u{1}\u{1f}\n\t\r\u{8}\u{c}",
            "ünï ✓",
        ] {
            let mut out = Vec::new();
            write_str(&mut out, s);
            let back: String = serde_json::from_slice(&out).unwrap();
            assert_eq!(back, s);
            assert_eq!(out, serde_json::to_vec(s).unwrap());
        }
    }

    #[test]
    fn escaping_matches_serde_json_at_every_density() {
        // Bytes either side of every boundary the vectored test draws.
        let alphabet: Vec<char> = "ab \"\\\n\t\u{0}\u{1}\u{1f}!#[]\u{7f}\u{80}ÿé✓}{:,"
            .chars()
            .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for density in [0u64, 1, 3, 10, 50, 100] {
            for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 100, 5000] {
                let text: String = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        if state % 100 < density {
                            alphabet[(state >> 8) as usize % alphabet.len()]
                        } else {
                            'x'
                        }
                    })
                    .collect();
                let mut ours = Vec::new();
                write_str(&mut ours, &text);
                assert_eq!(ours, serde_json::to_vec(&text).unwrap(), "{text:?}");
                let mut twice = Vec::new();
                write_str_body_twice(&mut twice, &text);
                let once = serde_json::to_string(&text).unwrap();
                let again = serde_json::to_string(&once[1..once.len() - 1]).unwrap();
                assert_eq!(twice, &again.as_bytes()[1..again.len() - 1], "{text:?}");
            }
        }
    }

    #[test]
    fn simple_string_bodies_are_what_serde_json_accepts() {
        let cases: &[&[u8]] = &[
            b"",
            b"plain text",
            b"a \\\"quoted\\\" word\\n\\ttab \\\\ \\/ \\b\\f\\r",
            "caf\u{e9} \u{2014} \u{1f600}".as_bytes(),
            b"ends in an escaped backslash \\\\",
            b"a lone backslash at the end \\",
            b"an unescaped \" quote",
            b"a raw \n newline",
            b"\\x is no escape",
            b"bad utf-8 \xff here",
            b"\\u00e9 is left to the parser",
        ];
        for &body in cases {
            let mut quoted = b"\"".to_vec();
            quoted.extend_from_slice(body);
            quoted.push(b'"');
            let serde_ok = serde_json::from_slice::<String>(&quoted).is_ok();
            let simple = is_simple_str_body(body);
            // Valid and simple alike, but for \u, which is left to serde.
            let unicode_escape = body.windows(2).any(|w| w == b"\\u");
            assert_eq!(
                simple,
                serde_ok && !unicode_escape,
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
        // Long enough for the vectored scan, with escapes across blocks.
        let long = "0123456789abcde\\\"".repeat(100);
        assert!(is_simple_str_body(long.as_bytes()));
    }

    #[test]
    fn hex_matches_the_hex_crate() {
        let bytes: Vec<u8> = (0..=255u8).chain(0..37).collect();
        for len in 0..bytes.len() {
            let mut out = Vec::new();
            write_hex(&mut out, &bytes[..len]);
            assert_eq!(
                out,
                format!("\"{}\"", hex::encode(&bytes[..len])).into_bytes()
            );
        }
    }

    #[test]
    fn values_are_written_as_serde_writes_them() {
        let value = serde_json::json!({
            "z": [1, -2, 3.5, 1e300, true, false, null, "a\"b"],
            "a": {"nested": {"x": "é\n"}, "empty": {}, "list": []},
            "u": 18446744073709551615u64
        });
        let mut out = Vec::new();
        write_value(&mut out, &value);
        assert_eq!(out, serde_json::to_vec(&value).unwrap());
        assert_eq!(value_to_string(&value), value.to_string());
    }

    #[test]
    fn escaping_twice_is_escaping_the_escaped() {
        let every_byte: String = (0..128u8).map(char::from).collect::<String>() + "é✓";
        let long = "plain text, then \"quotes\" and \\ and \n".repeat(20) + &every_byte;
        for s in [long.as_str(), "", "clean text only", "\u{1}"] {
            let mut once = Vec::new();
            write_str_body(&mut once, s);
            let mut twice_by_two = Vec::new();
            write_str_body(&mut twice_by_two, std::str::from_utf8(&once).unwrap());
            let mut twice = Vec::new();
            write_str_body_twice(&mut twice, s);
            assert_eq!(twice, twice_by_two, "{s:?}");
        }
    }

    #[test]
    fn clean_prefixes_end_at_the_first_byte_to_escape() {
        for len in 0..70 {
            for at in 0..=len {
                for special in [0u8, b'\n', 0x1f, b'"', b'\\'] {
                    let mut bytes = vec![b'a'; len];
                    bytes.iter_mut().step_by(3).for_each(|b| *b = 0xc3);
                    if at < len {
                        bytes[at] = special;
                    }
                    assert_eq!(clean_prefix_len(&bytes), at, "{len} {at} {special}");
                }
            }
        }
    }

    #[test]
    fn reals_stay_real() {
        let mut out = Vec::new();
        write_f64(&mut out, 1.0);
        assert_eq!(out, b"1.0");
    }
}
