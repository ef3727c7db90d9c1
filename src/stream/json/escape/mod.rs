//! Escaping text into JSON strings, the writers' hot loop: conversation
//! text, tool output and brain transcripts (JSON inside JSON) are most of
//! what agy-dump and agy-decode write.

use std::mem::MaybeUninit;

use crate::stream::simd::{self, Level};

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "x86_64")]
use x86::{escape_once_avx2, escape_once_ssse3, escape_sse2, escape_twice_avx2};
#[cfg(target_arch = "x86_64")]
pub(super) use x86::{special_avx2, special_mask_sse2};

/// What each byte needs in a JSON string: 0 = itself, `u` = `\u00XX`,
/// anything else = that letter after a backslash.
pub(super) static ESCAPE: [u8; 256] = {
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
    /// Escapes twice ([`write_str_body_twice`]); read to pick an x86-64
    /// routine ([`escape_vectored`]), so elsewhere never.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    twice: bool,
}

/// Builds the table for text escaped once, or twice (for a JSON string
/// inside a JSON string: every escape `\X` becomes `\\` and `X` escaped).
const fn escape_table(twice: bool) -> EscapeTable {
    let mut table = EscapeTable {
        bytes: [[0; 4]; 256],
        len: [1; 256],
        twice,
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
    write_str_body_at(simd::level(), out, s);
}

/// [`write_str_body`] with the routines of `level` (which this CPU must
/// run: see [`Level::supported`]), for the tests and fuzz targets that hold
/// each level to the same output.
pub fn write_str_body_at(level: Level, out: &mut Vec<u8>, s: &str) {
    write_escaped(level, out, s, &ESCAPE_ONCE, b"\\u00");
}

/// Writes `s` escaped twice, for a JSON string that sits inside another
/// JSON string (a brain transcript line inside a `file` record): one pass
/// instead of escaping the text, then the escaped line again.
pub fn write_str_body_twice(out: &mut Vec<u8>, s: &str) {
    write_str_body_twice_at(simd::level(), out, s);
}

/// [`write_str_body_twice`] with the routines of `level`; see
/// [`write_str_body_at`].
pub fn write_str_body_twice_at(level: Level, out: &mut Vec<u8>, s: &str) {
    write_escaped(level, out, s, &ESCAPE_TWICE, b"\\\\u00");
}

/// Conversation text is most of what the tools write. Each round makes
/// room for a round of input plus some escapes in `out`'s spare capacity,
/// never zero-filled (zero-filling each round's room only to overwrite it
/// was a sixth of agy-dump's instructions on a long conversation's brain
/// transcripts), and fills it with no call per run: sixteen bytes at a time
/// where SSE2 finds what needs escaping (every x86-64; 32 or 16 at a time
/// with AVX2 or SSSE3, escaping once), eight at a time through the table
/// elsewhere and for the last few bytes. A round ends early when its room
/// runs short, so escape-dense text (brain transcripts are JSON) just takes
/// more rounds.
fn write_escaped(level: Level, out: &mut Vec<u8>, s: &str, table: &EscapeTable, unicode: &[u8]) {
    if s.len() <= SHORT {
        return write_short(out, s.as_bytes(), table, unicode);
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // Room for the round, and for the padded tail's blocks (at most
        // three, each up to 32 escapes of 7 bytes and a copy).
        let room = (bytes.len() - i).min(ESCAPE_ROUND) + 128 + 3 * 256;
        out.reserve(room);
        let dst = &mut out.spare_capacity_mut()[..room];
        // Every routine writes its output from the start of `dst` on, each
        // byte it counts in `n` (some write a few past it, which the next
        // write overwrites or the length leaves out).
        let (read, mut n) = escape_vectored(level, &bytes[i..], dst, table, unicode);
        i += read;
        if bytes.len() - i < TAIL {
            let (read, written) = escape_tail(level, &bytes[i..], &mut dst[n..], table, unicode);
            i += read;
            n += written;
        }
        // Room for a word, or for eight bytes of the longest escape (7).
        while i < bytes.len() && n + 64 <= room {
            if let Some(word) = bytes.get(i..i + 8) {
                if !word_needs_escape(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
                    put(&mut dst[n..n + 8], word);
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
        // SAFETY: bytes up to `n` of the spare capacity have been written
        // (see above), and `n` is within the `room` reserved.
        unsafe { out.set_len(out.len() + n) };
    }
}

/// The vectored routines stop this many bytes or fewer before the end of
/// their input (a block reads past itself for its copies).
const TAIL: usize = 64;

/// Escapes the last bytes of a string, fewer than [`TAIL`], through the
/// vectored routine too: from a copy padded with spaces (which nothing
/// escapes, so each pad takes one byte out, after the string's bytes), the
/// pads' bytes then left out of the count. Most strings end with such a
/// tail, and a byte at a time through the table it was a tenth of escaping
/// a brain transcript. Returns the bytes read and written, as
/// [`escape_vectored`]; when the room runs short before the string's last
/// byte, what the routine did of whole blocks, the rest left to the caller.
fn escape_tail(
    level: Level,
    tail: &[u8],
    dst: &mut [MaybeUninit<u8>],
    table: &EscapeTable,
    unicode: &[u8],
) -> (usize, usize) {
    if tail.is_empty() {
        return (0, 0);
    }
    let mut padded = [b' '; 2 * TAIL];
    padded[..tail.len()].copy_from_slice(tail);
    // Whole 32-byte blocks over the tail, and the 32 bytes a block may read
    // past its start.
    let len = tail.len().div_ceil(32) * 32 + 32;
    let (read, written) = escape_vectored(level, &padded[..len], dst, table, unicode);
    if read < tail.len() {
        // Only whole blocks of the string's own bytes were read: no pad.
        return (read, written);
    }
    (tail.len(), written - (read - tail.len()))
}

/// Writes `bytes` at the start of `dst`.
#[inline]
fn put(dst: &mut [MaybeUninit<u8>], bytes: &[u8]) {
    for (d, &b) in dst[..bytes.len()].iter_mut().zip(bytes) {
        d.write(b);
    }
}

/// Strings up to this long are escaped by [`write_short`]. Most strings
/// the writers escape are short (keys, names, a JSON transcript's
/// punctuation), and making a round's room for each, zero-filled, was 4 %
/// of agy-encode's instructions (32 did best of 16 to 256).
const SHORT: usize = 32;

/// Escapes `bytes` into `out` as it grows: its runs as they are, each
/// byte to escape through the table.
fn write_short(out: &mut Vec<u8>, bytes: &[u8], table: &EscapeTable, unicode: &[u8]) {
    // Most short strings (names, times, a transcript's step type) have
    // nothing to escape: a word at a time says so, and they are copied whole
    // (a byte at a time through the table was a fifth of escaping a
    // transcript in agy-encode).
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("eight bytes"));
    if !words.clone().any(|w| word_needs_escape(word(w)))
        && tail.iter().all(|&b| ESCAPE[b as usize] == 0)
    {
        out.extend_from_slice(bytes);
        return;
    }
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if ESCAPE[b as usize] != 0 {
            out.extend_from_slice(&bytes[run..i]);
            out.reserve(8);
            let len = escape_byte(b, &mut out.spare_capacity_mut()[..8], table, unicode);
            // SAFETY: escape_byte wrote the `len` bytes it returns, at the
            // start of the spare capacity.
            unsafe { out.set_len(out.len() + len) };
            run = i + 1;
        }
    }
    out.extend_from_slice(&bytes[run..]);
}

/// Writes byte `b` escaped at the start of `dst` (at least 8 bytes long);
/// returns how many bytes that took.
#[inline]
fn escape_byte(b: u8, dst: &mut [MaybeUninit<u8>], table: &EscapeTable, unicode: &[u8]) -> usize {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let len = usize::from(table.len[b as usize]);
    if len == 0 {
        let n = unicode.len();
        put(dst, unicode);
        dst[n].write(HEX[(b >> 4) as usize]);
        dst[n + 1].write(HEX[(b & 0xf) as usize]);
        return n + 2;
    }
    put(dst, &table.bytes[b as usize]);
    len
}

/// Escapes whole blocks of `src` into `dst` while both last, with the
/// routine of `level` for `table` (escaping twice at the SSSE3 level is
/// SSE2's: the shuffle routine escapes once only); returns the bytes read
/// and written (none at the scalar level and on other architectures).
#[cfg(target_arch = "x86_64")]
fn escape_vectored(
    level: Level,
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    table: &EscapeTable,
    unicode: &[u8],
) -> (usize, usize) {
    match level {
        Level::Scalar => (0, 0),
        // SAFETY (all three): `level` is never above what the CPU has
        // (crate::stream::simd), and SSE2 is part of the x86-64 baseline;
        // the functions touch memory only through slices.
        Level::Avx2 if table.twice => unsafe { escape_twice_avx2(src, dst) },
        Level::Avx2 => unsafe { escape_once_avx2(src, dst) },
        // Escaping twice has no shuffle routine: its own AVX2 loop, or SSE2.
        Level::Ssse3 if !table.twice => unsafe { escape_once_ssse3(src, dst) },
        Level::Ssse3 | Level::Sse2 => unsafe { escape_sse2(src, dst, table, unicode) },
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn escape_vectored(
    _level: Level,
    _src: &[u8],
    _dst: &mut [MaybeUninit<u8>],
    _table: &EscapeTable,
    _unicode: &[u8],
) -> (usize, usize) {
    (0, 0)
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
                every_level_escapes_like_serde_json(&text);
            }
        }
    }

    /// Every level this CPU runs escapes `text` once as serde_json writes
    /// its string body, and twice as serde_json escapes that body again.
    fn every_level_escapes_like_serde_json(text: &str) {
        let once = serde_json::to_string(text).unwrap();
        let once = &once[1..once.len() - 1];
        let again = serde_json::to_string(once).unwrap();
        let again = &again[1..again.len() - 1];
        for level in Level::supported_levels() {
            let mut ours = Vec::new();
            write_str_body_at(level, &mut ours, text);
            assert_eq!(ours, once.as_bytes(), "once, {level:?} {text:?}");
            ours.clear();
            write_str_body_twice_at(level, &mut ours, text);
            assert_eq!(ours, again.as_bytes(), "twice, {level:?} {text:?}");
        }
    }

    /// One byte to escape at every place of every length up to a few
    /// blocks of each routine: the block loops and the tails that finish
    /// what they leave, at every level (AVX2 escaping twice needs 64 bytes
    /// for a block, so 140 reach its third).
    #[test]
    fn each_level_escapes_a_byte_at_every_place() {
        for len in 0..140 {
            for at in 0..len {
                for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', 'é'] {
                    let mut text: String = "abcdefghij".chars().cycle().take(len).collect();
                    text.replace_range(at..at + 1, special.encode_utf8(&mut [0; 4]));
                    every_level_escapes_like_serde_json(&text);
                }
            }
        }
    }

    /// A padded tail with too little room for all its blocks: whole blocks
    /// of the string's own bytes are done, the pads never counted.
    #[test]
    fn a_tail_short_of_room_does_whole_blocks_only() {
        let tail = "\"".repeat(TAIL - 1);
        for level in Level::supported_levels() {
            for (table, unicode) in [(&ESCAPE_ONCE, &b"\\u00"[..]), (&ESCAPE_TWICE, b"\\\\u00")] {
                for room in [0, 100, 300, 600, 1000] {
                    let mut dst = vec![MaybeUninit::new(0u8); room];
                    let (read, written) =
                        escape_tail(level, tail.as_bytes(), &mut dst, table, unicode);
                    assert!(read <= tail.len(), "{level:?} room {room}");
                    let mut expected = Vec::new();
                    write_short(&mut expected, &tail.as_bytes()[..read], table, unicode);
                    let got: Vec<u8> = dst[..written]
                        .iter()
                        // SAFETY: every byte of `dst` was initialised.
                        .map(|b| unsafe { b.assume_init() })
                        .collect();
                    assert_eq!(got, expected, "{level:?} room {room}");
                }
            }
        }
    }

    #[test]
    fn escaping_twice_is_escaping_the_escaped() {
        let every_byte: String = (0..128u8).map(char::from).collect::<String>() + "é✓";
        let long = "plain text, then \"quotes\" and \\ and \n".repeat(20) + &every_byte;
        // Blocks that are all escapes, at the widest (4 bytes each, twice).
        let quotes = "\"".repeat(200);
        let backslashes = "\\".repeat(200);
        let newlines = "\n\"".repeat(100);
        for s in [
            long.as_str(),
            "",
            "clean text only",
            "\u{1}",
            &quotes,
            &backslashes,
            &newlines,
        ] {
            every_level_escapes_like_serde_json(s);
            let mut once = Vec::new();
            write_str_body(&mut once, s);
            let mut twice_by_two = Vec::new();
            write_str_body(&mut twice_by_two, std::str::from_utf8(&once).unwrap());
            let mut twice = Vec::new();
            write_str_body_twice(&mut twice, s);
            assert_eq!(twice, twice_by_two, "{s:?}");
        }
    }
}
