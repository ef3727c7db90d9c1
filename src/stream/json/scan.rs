//! Reading JSON string literals without unescaping them: where the clean
//! run ends, and whether a string the reader will drop is one serde_json
//! would accept.

#[cfg(target_arch = "x86_64")]
use super::escape::special_mask_sse2;
use super::escape::ESCAPE;
use crate::stream::simd::{self, Level};

/// How many bytes at the start of `bytes` a JSON string holds as they are:
/// the position of the first control character, `"` or `\\`, or the
/// length. Reading a string literal is finding this, sixteen bytes at a
/// time where SSE2 is there.
pub fn clean_prefix_len(bytes: &[u8]) -> usize {
    clean_prefix_len_at(simd::level(), bytes)
}

/// [`clean_prefix_len`] with the routines of `level` (which this CPU must
/// run: see [`Level::supported`]), for the tests and fuzz targets.
pub fn clean_prefix_len_at(level: Level, bytes: &[u8]) -> usize {
    let mut at = clean_prefix_vectored(level, bytes);
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
///
/// Brain transcripts are JSON inside JSON, an escape every dozen bytes or
/// so, and walking them one escape at a time (with a branch on each escape's
/// letter and on where the last one ended) was a fifth of agy-decode's time
/// on a long conversation's store. So a chunk of 64 bytes is judged from
/// its bit masks at once, with no branch per escape: see [`escaped_bits`].
pub fn is_simple_str_body(body: &[u8]) -> bool {
    is_simple_str_body_at(simd::level(), body)
}

/// [`is_simple_str_body`] with the routines of `level` (which this CPU
/// must run: see [`Level::supported`]), for the tests and fuzz targets.
pub fn is_simple_str_body_at(level: Level, body: &[u8]) -> bool {
    match level {
        Level::Scalar => simple_body(body, Classes::scalar, escape_letters_scalar),
        // SAFETY (both): `level` is never above what the CPU has
        // (crate::stream::simd), and SSE2 is part of the x86-64 baseline;
        // the functions read only `body`.
        #[cfg(target_arch = "x86_64")]
        Level::Sse2 | Level::Ssse3 => unsafe { simple_body_sse2(body) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { simple_body_avx2(body) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => simple_body(body, Classes::scalar, escape_letters_scalar),
    }
}

/// Where the string whose body starts at `bytes[0]` ends, when its body is
/// simple: the position of its closing quote, when every byte before it is
/// a plain byte (not a control character) or part of a two-character
/// escape (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`). `None` when
/// the body holds anything else (a `\u` escape, a raw control character, a
/// backslash before another letter) or `bytes` ends first: the caller then
/// walks it escape by escape, which says what, if anything, is wrong. UTF-8
/// is not checked: the callers read text that is already `str`.
///
/// It exists for skipping a value a reader will not use: agy-render walks
/// past most of each tool call's input and output, and finding the end of
/// a string one escape at a time (code and JSON, an escape every few dozen
/// bytes) was an eighth of its time on the large conversation. The chunks
/// are judged as [`is_simple_str_body`] judges them, up to the first quote
/// that no backslash escapes.
pub fn simple_str_end(bytes: &[u8]) -> Option<usize> {
    simple_str_end_at(simd::level(), bytes)
}

/// [`simple_str_end`] with the routines of `level` (which this CPU must
/// run: see [`Level::supported`]), for the tests and fuzz targets.
pub fn simple_str_end_at(level: Level, bytes: &[u8]) -> Option<usize> {
    match level {
        Level::Scalar => simple_end(bytes, Classes::scalar, escape_letters_scalar),
        // SAFETY (both): `level` is never above what the CPU has
        // (crate::stream::simd), and SSE2 is part of the x86-64 baseline;
        // the functions read only `bytes`.
        #[cfg(target_arch = "x86_64")]
        Level::Sse2 | Level::Ssse3 => unsafe { simple_end_sse2(bytes) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { simple_end_avx2(bytes) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => simple_end(bytes, Classes::scalar, escape_letters_scalar),
    }
}

/// [`simple_str_end`]'s rule one byte at a time, as it reads: the plain
/// reference the unit tests and the `scan` fuzz target hold every level's
/// routine to.
pub fn simple_str_end_by_walking(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        match *bytes.get(at)? {
            b'"' => return Some(at),
            b'\\' => match bytes.get(at + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                _ => return None,
            },
            0..=0x1f => return None,
            _ => at += 1,
        }
    }
}

/// [`simple_str_end`] with chunks classed sixteen bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn simple_end_sse2(bytes: &[u8]) -> Option<usize> {
    // As in simple_body_sse2.
    simple_end(
        bytes,
        |chunk| classes_sse2(chunk),
        |chunk| escape_letters_sse2(chunk),
    )
}

/// [`simple_str_end`] with chunks classed thirty-two bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn simple_end_avx2(bytes: &[u8]) -> Option<usize> {
    // As in simple_body_sse2.
    simple_end(
        bytes,
        |chunk| classes_avx2(chunk),
        |chunk| escape_letters_avx2(chunk),
    )
}

/// The chunk loop of [`simple_str_end`], given how a chunk's bytes are
/// classed and where its escape letters are.
#[inline(always)]
fn simple_end(
    bytes: &[u8],
    classes: impl Fn(&[u8; CHUNK]) -> Classes,
    letters: impl Fn(&[u8; CHUNK]) -> u64,
) -> Option<usize> {
    let mut carry = 0;
    let mut at = 0;
    let mut last = [b' '; CHUNK];
    while at < bytes.len() {
        let chunk: &[u8; CHUNK] = match bytes.get(at..at + CHUNK) {
            Some(whole) => whole.try_into().expect("a whole chunk"),
            None => {
                // Spaces after the end, as in simple_body: plain bytes and
                // no escape's letter.
                let rest = &bytes[at..];
                last[..rest.len()].copy_from_slice(rest);
                &last
            }
        };
        let classes = classes(chunk);
        let escaped = match classes.backslash | carry {
            0 => 0,
            _ => escaped_bits(classes.backslash, &mut carry),
        };
        let quotes = classes.quote & !escaped;
        // The bits before the first closing quote: what the body holds.
        let body = quotes.wrapping_sub(1) & !quotes;
        if classes.control & body != 0 {
            return None;
        }
        if escaped & body != 0 && escaped & body & !letters(chunk) != 0 {
            return None;
        }
        if quotes != 0 {
            return Some(at + quotes.trailing_zeros() as usize);
        }
        at += CHUNK;
    }
    None
}

/// [`is_simple_str_body`] with chunks classed sixteen bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn simple_body_sse2(body: &[u8]) -> bool {
    // The closures share this function's SSE2, so they call the SSE2
    // functions without `unsafe`, and inline them.
    simple_body(
        body,
        |chunk| classes_sse2(chunk),
        |chunk| escape_letters_sse2(chunk),
    )
}

/// [`is_simple_str_body`] with chunks classed thirty-two bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn simple_body_avx2(body: &[u8]) -> bool {
    // As in simple_body_sse2.
    simple_body(
        body,
        |chunk| classes_avx2(chunk),
        |chunk| escape_letters_avx2(chunk),
    )
}

/// The chunk loop of [`is_simple_str_body`], given how a chunk's bytes are
/// classed and where its escape letters are.
#[inline(always)]
fn simple_body(
    body: &[u8],
    classes: impl Fn(&[u8; CHUNK]) -> Classes,
    letters: impl Fn(&[u8; CHUNK]) -> u64,
) -> bool {
    let mut carry = 0;
    let mut chunks = body.chunks_exact(CHUNK);
    for chunk in &mut chunks {
        let chunk = chunk.try_into().expect("a whole chunk");
        if !simple_chunk(classes(chunk), || letters(chunk), &mut carry) {
            return false;
        }
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // Spaces after the end: plain bytes, and no escape's letter, so a
        // backslash that ends the body is still caught.
        let mut last = [b' '; CHUNK];
        last[..rest.len()].copy_from_slice(rest);
        if !simple_chunk(classes(&last), || letters(&last), &mut carry) {
            return false;
        }
    }
    // Escapes are ASCII, so the text is UTF-8 exactly when its escaped
    // form is. A body whose last chunk ends in an odd run of backslashes
    // (a whole chunk: no spaces after it) escapes nothing with the last.
    carry == 0 && simdutf8::basic::from_utf8(body).is_ok()
}

/// Bytes judged at once by [`is_simple_str_body`]: one bit each in a u64.
const CHUNK: usize = 64;

/// Whether one chunk of a string body holds only plain bytes and simple
/// escapes, from its [`Classes`] and (asked only when it has escapes) the
/// mask of its escape letters, given `carry` (1 when the chunk's first byte is escaped by a
/// backslash that ended the chunk before), which it updates for the next.
#[inline(always)]
fn simple_chunk(classes: Classes, letters: impl Fn() -> u64, carry: &mut u64) -> bool {
    if classes.control != 0 {
        return false;
    }
    if classes.backslash == 0 && *carry == 0 {
        return classes.quote == 0;
    }
    let escaped = escaped_bits(classes.backslash, carry);
    classes.quote & !escaped == 0 && escaped & !letters() == 0
}

/// Every other bit, from the lowest: the chunk's even positions.
const EVEN: u64 = 0x5555_5555_5555_5555;

/// The positions a backslash escapes, from the chunk's `backslash` mask and
/// `carry` (is the first byte escaped from before); sets `carry` for the
/// next chunk.
///
/// A run of backslashes pairs up from its start: `\\\` is two escaped
/// backslashes, and a run of odd length escapes the byte after it. Adding a
/// run's lowest bit to the mask carries through the run and sets the bit
/// just past it; that bit's parity against the start's tells the run's
/// length's. Runs that start on even positions and on odd ones are added
/// separately so that each end is compared with its own start's parity.
/// A backslash that an earlier chunk's run escaped is not part of a run.
#[inline]
fn escaped_bits(backslash: u64, carry: &mut u64) -> u64 {
    let first = *carry;
    let runs = backslash & !first;
    let starts = runs & !(runs << 1);
    let after_even_starts = runs.wrapping_add(starts & EVEN) & !runs;
    let after_odd_starts = runs.wrapping_add(starts & !EVEN) & !runs;
    // A run reaching the chunk's end carries out of the addition; its
    // length decides whether it escapes the next chunk's first byte.
    *carry = u64::from(runs.leading_ones() % 2);
    first | (after_even_starts & !EVEN) | (after_odd_starts & EVEN)
}

/// The bits of a chunk's backslashes, quotes and control characters.
struct Classes {
    backslash: u64,
    quote: u64,
    control: u64,
}

impl Classes {
    /// One byte at a time: the plain form, and the reference of the tests.
    fn scalar(chunk: &[u8; CHUNK]) -> Classes {
        let mask = |test: &dyn Fn(u8) -> bool| {
            (0..CHUNK).fold(0u64, |mask, i| mask | (u64::from(test(chunk[i])) << i))
        };
        Classes {
            backslash: mask(&|b| b == b'\\'),
            quote: mask(&|b| b == b'"'),
            control: mask(&|b| b < 0x20),
        }
    }
}

/// The letters that may follow a backslash in a simple escape.
const ESCAPE_LETTERS: &[u8; 8] = b"\"\\/bfnrt";

/// The bits of a chunk's bytes that may follow a backslash in a simple
/// escape: `"`, `\\`, `/`, `b`, `f`, `n`, `r`, `t`. One byte at a time.
fn escape_letters_scalar(chunk: &[u8; CHUNK]) -> u64 {
    (0..CHUNK).fold(0u64, |mask, i| {
        mask | (u64::from(ESCAPE_LETTERS.contains(&chunk[i])) << i)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn classes_sse2(chunk: &[u8; CHUNK]) -> Classes {
    use std::arch::x86_64::*;
    let mut classes = Classes {
        backslash: 0,
        quote: 0,
        control: 0,
    };
    for i in 0..CHUNK / 16 {
        let block: &[u8; 16] = chunk[i * 16..i * 16 + 16].try_into().expect("16 bytes");
        // SAFETY: the block is 16 bytes; the load is unaligned.
        let v = unsafe { _mm_loadu_si128(block.as_ptr().cast()) };
        let bits = |m: __m128i| u64::from(_mm_movemask_epi8(m) as u16) << (i * 16);
        classes.backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
        classes.quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
        // Unsigned v <= 0x1f: the smaller of v and 0x1f is v itself.
        classes.control |= bits(_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v));
    }
    classes
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn classes_avx2(chunk: &[u8; CHUNK]) -> Classes {
    use std::arch::x86_64::*;
    let mut classes = Classes {
        backslash: 0,
        quote: 0,
        control: 0,
    };
    for i in 0..CHUNK / 32 {
        let half: &[u8; 32] = chunk[i * 32..i * 32 + 32].try_into().expect("32 bytes");
        // SAFETY: the half is 32 bytes; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(half.as_ptr().cast()) };
        let bits = |m: __m256i| u64::from(_mm256_movemask_epi8(m) as u32) << (i * 32);
        classes.backslash |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)));
        classes.quote |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)));
        // Unsigned v <= 0x1f: the smaller of v and 0x1f is v itself.
        classes.control |= bits(_mm256_cmpeq_epi8(
            _mm256_min_epu8(v, _mm256_set1_epi8(0x1f)),
            v,
        ));
    }
    classes
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn escape_letters_avx2(chunk: &[u8; CHUNK]) -> u64 {
    use std::arch::x86_64::*;
    (0..CHUNK / 32).fold(0u64, |mask, i| {
        let half: &[u8; 32] = chunk[i * 32..i * 32 + 32].try_into().expect("32 bytes");
        // SAFETY: the half is 32 bytes; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(half.as_ptr().cast()) };
        let any = ESCAPE_LETTERS
            .iter()
            .fold(_mm256_setzero_si256(), |any, &letter| {
                _mm256_or_si256(any, _mm256_cmpeq_epi8(v, _mm256_set1_epi8(letter as i8)))
            });
        mask | u64::from(_mm256_movemask_epi8(any) as u32) << (i * 32)
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn escape_letters_sse2(chunk: &[u8; CHUNK]) -> u64 {
    use std::arch::x86_64::*;
    (0..CHUNK / 16).fold(0u64, |mask, i| {
        let block: &[u8; 16] = chunk[i * 16..i * 16 + 16].try_into().expect("16 bytes");
        // SAFETY: the block is 16 bytes; the load is unaligned.
        let v = unsafe { _mm_loadu_si128(block.as_ptr().cast()) };
        let any = ESCAPE_LETTERS
            .iter()
            .fold(_mm_setzero_si128(), |any, &letter| {
                _mm_or_si128(any, _mm_cmpeq_epi8(v, _mm_set1_epi8(letter as i8)))
            });
        mask | u64::from(_mm_movemask_epi8(any) as u16) << (i * 16)
    })
}

/// The position of the first byte to escape within the whole sixteen-byte
/// blocks of `bytes`, else the length of those blocks, with the routine of
/// `level` (zero at the scalar level and on other architectures).
#[cfg(target_arch = "x86_64")]
fn clean_prefix_vectored(level: Level, bytes: &[u8]) -> usize {
    match level {
        Level::Scalar => 0,
        // SAFETY: `level` is never above what the CPU has, and SSE2 is part
        // of the x86-64 baseline; the function reads only `bytes`.
        Level::Sse2 | Level::Ssse3 | Level::Avx2 => unsafe { clean_prefix_sse2(bytes) },
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn clean_prefix_vectored(_level: Level, _bytes: &[u8]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The rule of [`is_simple_str_body`] one byte at a time, as it was
    /// written before the chunked scan.
    fn simple_by_walking(body: &[u8]) -> bool {
        let mut at = 0;
        while at < body.len() {
            match body[at] {
                b'\\' => match body.get(at + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => at += 2,
                    _ => return false,
                },
                b'"' | 0..=0x1f => return false,
                _ => at += 1,
            }
        }
        std::str::from_utf8(body).is_ok()
    }

    /// Bodies that test a mask-based scan: random mixes of plain bytes,
    /// escapes, quotes, control characters and UTF-8 at lengths about each
    /// chunk edge, and runs of backslashes of every length before a quote.
    fn bodies() -> Vec<Vec<u8>> {
        // Runs of backslashes of every length, across every chunk edge:
        // the carry between chunks is where a mask-based scan goes wrong.
        let alphabet: &[&[u8]] = &[
            b"a",
            b"\\",
            b"\\",
            b"\\",
            b"\"",
            b"n",
            b"u",
            b"/",
            b"\n",
            b"\x01",
            b"\xc3\xa9",
            b"\xff",
            b" ",
        ];
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        let mut bodies: Vec<Vec<u8>> = Vec::new();
        for len in [0, 1, 2, 15, 16, 17, 62, 63, 64, 65, 66, 127, 128, 129, 200] {
            for _ in 0..300 {
                let mut body = Vec::new();
                while body.len() < len {
                    body.extend_from_slice(alphabet[next(alphabet.len())]);
                }
                bodies.push(body);
            }
        }
        for prefix in 0..70 {
            for run in 0..70 {
                let mut body = vec![b'a'; prefix];
                body.extend(std::iter::repeat_n(b'\\', run));
                body.extend_from_slice(b"\"tail");
                bodies.push(body);
            }
        }
        bodies
    }

    #[test]
    fn chunked_scan_agrees_with_walking_and_with_serde_json() {
        let bodies = bodies();
        for body in &bodies {
            let simple = is_simple_str_body(body);
            assert_eq!(simple, simple_by_walking(body), "{body:?}");
            for level in Level::supported_levels() {
                assert_eq!(
                    is_simple_str_body_at(level, body),
                    simple,
                    "{level:?} {body:?}"
                );
            }
            if simple {
                let mut quoted = b"\"".to_vec();
                quoted.extend_from_slice(body);
                quoted.push(b'"');
                assert!(
                    serde_json::from_slice::<String>(&quoted).is_ok(),
                    "{body:?}"
                );
            }
        }
    }

    #[test]
    fn simple_ends_are_found_as_walking_finds_them_at_every_level() {
        let mut found = 0;
        for body in bodies() {
            // What comes after a string: nothing, or more JSON (which may
            // hold anything, controls and backslashes included, but is
            // never part of the answer).
            for tail in [&b""[..], b"\"", b"\",\"k\":\"\\u0041\x01\"}", b"\"\x01\\x"] {
                let mut bytes = body.clone();
                bytes.extend_from_slice(tail);
                let end = simple_str_end_by_walking(&bytes);
                found += usize::from(end.is_some());
                assert_eq!(simple_str_end(&bytes), end, "{bytes:?}");
                for level in Level::supported_levels() {
                    assert_eq!(simple_str_end_at(level, &bytes), end, "{level:?} {bytes:?}");
                }
                // A simple body that is UTF-8 is a string serde_json reads.
                if let Some(end) = end.filter(|&end| std::str::from_utf8(&bytes[..end]).is_ok()) {
                    let mut quoted = b"\"".to_vec();
                    quoted.extend_from_slice(&bytes[..=end]);
                    assert!(
                        serde_json::from_slice::<String>(&quoted).is_ok(),
                        "{bytes:?}"
                    );
                }
            }
        }
        // Both answers were met often: the test is not all one case.
        assert!(found > 1000, "{found}");
    }

    #[test]
    fn classes_match_their_scalar_form() {
        let chunk: [u8; CHUNK] = std::array::from_fn(|i| (i * 37 % 256) as u8);
        for shift in 0..=255u8 {
            let shifted = chunk.map(|b| b.wrapping_add(shift));
            let slow = Classes::scalar(&shifted);
            let slow = (slow.backslash, slow.quote, slow.control);
            let letters = escape_letters_scalar(&shifted);
            assert_eq!(
                letters.count_ones() as usize,
                shifted
                    .iter()
                    .filter(|b| ESCAPE_LETTERS.contains(b))
                    .count()
            );
            for level in Level::supported_levels() {
                let (fast, fast_letters) = classes_at(level, &shifted);
                assert_eq!(
                    (fast.backslash, fast.quote, fast.control),
                    slow,
                    "{level:?}"
                );
                assert_eq!(fast_letters, letters, "{level:?}");
            }
        }
    }

    /// The classes and escape letters of `chunk` by the routines of
    /// `level`, which this CPU runs.
    fn classes_at(level: Level, chunk: &[u8; CHUNK]) -> (Classes, u64) {
        match level {
            // SAFETY: the CPU runs `level`, and SSE2 is the baseline.
            #[cfg(target_arch = "x86_64")]
            Level::Sse2 | Level::Ssse3 => unsafe {
                (classes_sse2(chunk), escape_letters_sse2(chunk))
            },
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => unsafe { (classes_avx2(chunk), escape_letters_avx2(chunk)) },
            _ => (Classes::scalar(chunk), escape_letters_scalar(chunk)),
        }
    }

    /// A body whose last backslash run is odd escapes nothing with its last
    /// backslash, wherever the run ends: inside a chunk (the padding after
    /// it) or at a chunk's end (63 plain bytes and a backslash: only the
    /// carry out of the last chunk says so).
    #[test]
    fn a_body_ending_in_an_odd_backslash_run_is_refused() {
        for plain in 0..200 {
            for run in 0..6 {
                let mut body = vec![b'a'; plain];
                body.extend(std::iter::repeat_n(b'\\', run));
                for level in Level::supported_levels() {
                    assert_eq!(
                        is_simple_str_body_at(level, &body),
                        run % 2 == 0,
                        "{level:?}: {plain} plain bytes, {run} backslashes"
                    );
                }
            }
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
                    for level in Level::supported_levels() {
                        assert_eq!(clean_prefix_len_at(level, &bytes), at, "{level:?}");
                    }
                }
            }
        }
    }
}
