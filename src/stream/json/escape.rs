//! Escaping text into JSON strings, the writers' hot loop: conversation
//! text, tool output and brain transcripts (JSON inside JSON) are most of
//! what agy-dump and agy-decode write.

use std::mem::MaybeUninit;

use crate::stream::simd::{self, Level};

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

/// Each block's bytes to escape are walked from its mask: the run before
/// each is copied sixteen bytes at a time (the copy may run past it, into
/// room the next write overwrites), then the byte is escaped. Brain
/// transcripts (JSON inside JSON) need an escape every few bytes, and
/// restarting the block scan after each made escaping them 12% of the
/// `agy-dump | agy-decode` pipeline on a long conversation's store.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn escape_sse2(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    table: &EscapeTable,
    unicode: &[u8],
) -> (usize, usize) {
    let (mut i, mut n) = (0, 0);
    // A block reads up to 16 bytes past its start for the over-copies, and
    // writes at most sixteen escapes of 7 bytes plus a 16-byte copy.
    while i + 32 <= src.len() && n + 16 * 7 + 16 <= dst.len() {
        let mut mask = special_mask_sse2(&src[i..i + 16]);
        let mut from = 0;
        while mask != 0 {
            let at = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            put(&mut dst[n..n + 16], &src[i + from..i + from + 16]);
            n += at - from;
            n += escape_byte(src[i + at], &mut dst[n..], table, unicode);
            from = at + 1;
        }
        put(&mut dst[n..n + 16], &src[i + from..i + from + 16]);
        n += 16 - from;
        i += 16;
    }
    (i, n)
}

/// Escapes twice, thirty-two bytes at a time, walking each block's bytes
/// to escape from its mask as [`escape_sse2`] does, but through raw
/// pointers: the run before each escape is one 32-byte copy (running past
/// it, into room the next write overwrites) and the escape one 4-byte store
/// from [`ESCAPE_TWICE`]. With a bounds check on every copy and a call per
/// escape, the SSE2 loop took some forty instructions per block and as
/// many per escape, and escaping the brain transcripts was a fifth of
/// agy-encode. A block with a control character written `\\u00XX` is
/// escaped byte by byte.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn escape_twice_avx2(src: &[u8], dst: &mut [MaybeUninit<u8>]) -> (usize, usize) {
    use std::arch::x86_64::*;
    let table = &ESCAPE_TWICE;
    let letters = _mm256_broadcastsi128_si256(load16(&CONTROL_LETTERS));
    let (mut i, mut n) = (0, 0);
    // A block reads up to 32 bytes past its end (the copy after its last
    // escape), and writes at most 32 escapes of 4 bytes and a 32-byte copy
    // (a block written byte by byte, 32 escapes of 7).
    while i + 64 <= src.len() && n + 32 * 7 + 32 <= dst.len() {
        let block: &[u8; 32] = src[i..i + 32].try_into().expect("32 bytes");
        // SAFETY: 32 bytes are there; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        let (control, mut mask) = special_avx2(v);
        if mask == 0 {
            let out: &mut [MaybeUninit<u8>; 32] =
                (&mut dst[n..n + 32]).try_into().expect("32 bytes");
            // SAFETY: 32 bytes are there; the store is unaligned.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
            (i, n) = (i + 32, n + 32);
            continue;
        }
        if !control_letters_avx2(v, control, letters).1 {
            for &b in block {
                n += escape_byte(b, &mut dst[n..], table, b"\\\\u00");
            }
            i += 32;
            continue;
        }
        let from_block = src[i..i + 64].as_ptr();
        let start = dst[n..n + 32 * 4 + 32].as_mut_ptr().cast::<u8>();
        let mut out = start;
        let mut from = 0;
        // SAFETY: every read is within the 64 bytes from `from_block`
        // (a copy starts at most 32 bytes in); every write is within the
        // 160 bytes from `start`: before the last copy, the block's bytes up
        // to `from` took at most 4 bytes each (every byte to escape here
        // has a two-letter escape, 3 or 4 bytes twice), and the copy is 32.
        unsafe {
            while mask != 0 {
                let at = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let run = _mm256_loadu_si256(from_block.add(from).cast());
                _mm256_storeu_si256(out.cast(), run);
                out = out.add(at - from);
                let b = usize::from(*from_block.add(at));
                out.cast::<[u8; 4]>().write_unaligned(table.bytes[b]);
                out = out.add(usize::from(table.len[b]));
                from = at + 1;
            }
            let run = _mm256_loadu_si256(from_block.add(from).cast());
            _mm256_storeu_si256(out.cast(), run);
            out = out.add(32 - from);
            n += out.offset_from(start) as usize;
        }
        i += 32;
    }
    (i, n)
}

/// How eight bytes spread out when the ones a mask marks each take a
/// backslash before them: for every mask, the `pshufb` control that picks
/// each output byte's input (a marked byte twice, for its backslash's place
/// and its own) and the places of the backslashes. Positions past the
/// output's end (8 plus the marked bytes) are never kept.
#[cfg(target_arch = "x86_64")]
struct Spread {
    picks: [[u8; 16]; 256],
    backslashes: [[u8; 16]; 256],
    /// How many bytes the eight take once spread: 8 and a backslash per
    /// bit. A lookup, since `count_ones` without POPCNT (which no level
    /// asks the CPU for) is a dozen instructions, four times a block.
    lengths: [u8; 256],
}

#[cfg(target_arch = "x86_64")]
static SPREAD: Spread = {
    let mut spread = Spread {
        picks: [[0; 16]; 256],
        backslashes: [[0; 16]; 256],
        lengths: [0; 256],
    };
    let mut mask = 0;
    while mask < 256 {
        let (mut at, mut byte) = (0, 0);
        while byte < 8 {
            if mask >> byte & 1 == 1 {
                spread.picks[mask][at] = byte as u8;
                spread.backslashes[mask][at] = 0xff;
                at += 1;
            }
            spread.picks[mask][at] = byte as u8;
            at += 1;
            byte += 1;
        }
        spread.lengths[mask] = at as u8;
        mask += 1;
    }
    spread
};

/// The letter each control character below 16 takes after its backslash
/// (`\b`, `\t`, `\n`, `\f`, `\r`), 0 for those written `\u00XX`.
#[cfg(target_arch = "x86_64")]
static CONTROL_LETTERS: [u8; 16] = {
    let mut letters = [0u8; 16];
    let mut c = 0;
    while c < 16 {
        if ESCAPE[c] != b'u' {
            letters[c] = ESCAPE[c];
        }
        c += 1;
    }
    letters
};

/// The first sixteen bytes of `bytes`, as a vector.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn load16(bytes: &[u8]) -> std::arch::x86_64::__m128i {
    let bytes: &[u8; 16] = bytes[..16].try_into().expect("16 bytes");
    // SAFETY: 16 bytes are there; the load is unaligned.
    unsafe { std::arch::x86_64::_mm_loadu_si128(bytes.as_ptr().cast()) }
}

/// Stores `v` into the first sixteen bytes of `dst`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn store16(dst: &mut [MaybeUninit<u8>], v: std::arch::x86_64::__m128i) {
    let dst: &mut [MaybeUninit<u8>; 16] = (&mut dst[..16]).try_into().expect("16 bytes");
    // SAFETY: 16 bytes are there; the store is unaligned.
    unsafe { std::arch::x86_64::_mm_storeu_si128(dst.as_mut_ptr().cast(), v) }
}

/// Escapes once, sixteen bytes at a time, with no branch per escape: the
/// block's control characters are turned into their letters, and each half
/// of it is spread by [`SPREAD`] so that a backslash goes before every
/// byte to escape. Brain transcripts (JSON inside JSON) need an escape
/// every dozen bytes or so, and walking them one escape at a time was a
/// fifth of agy-dump's time on a long conversation's store. A block with a
/// control character written `\u00XX` is escaped byte by byte.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
fn escape_once_ssse3(src: &[u8], dst: &mut [MaybeUninit<u8>]) -> (usize, usize) {
    use std::arch::x86_64::*;
    let letters = load16(&CONTROL_LETTERS);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let spread = |mapped: __m128i, mask: usize, first: i8| {
        let picks = _mm_add_epi8(load16(&SPREAD.picks[mask]), _mm_set1_epi8(first));
        let places = load16(&SPREAD.backslashes[mask]);
        let spread = _mm_shuffle_epi8(mapped, picks);
        _mm_or_si128(
            _mm_andnot_si128(places, spread),
            _mm_and_si128(places, backslash),
        )
    };
    let (mut i, mut n) = (0, 0);
    // A block writes at most sixteen escapes of 6 bytes, or two stores of
    // 16 bytes.
    while i + 16 <= src.len() && n + 16 * 6 <= dst.len() {
        let v = load16(&src[i..]);
        // Unsigned v <= 0x1f: the smaller of v and 0x1f is v itself.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        let special = _mm_or_si128(
            control,
            _mm_or_si128(
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(v, backslash),
            ),
        );
        let mask = _mm_movemask_epi8(special) as usize;
        if mask == 0 {
            store16(&mut dst[n..], v);
            (i, n) = (i + 16, n + 16);
            continue;
        }
        // A control character's letter, where it has one (it is below 16).
        let letter = _mm_shuffle_epi8(letters, v);
        let below_16 = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(15)), v);
        let lettered = _mm_andnot_si128(_mm_cmpeq_epi8(letter, _mm_setzero_si128()), below_16);
        if _mm_movemask_epi8(_mm_andnot_si128(lettered, control)) != 0 {
            for &b in &src[i..i + 16] {
                n += escape_byte(b, &mut dst[n..], &ESCAPE_ONCE, b"\\u00");
            }
            i += 16;
            continue;
        }
        let mapped = _mm_or_si128(_mm_andnot_si128(control, v), _mm_and_si128(control, letter));
        let (low, high) = (mask & 0xff, mask >> 8);
        store16(&mut dst[n..], spread(mapped, low, 0));
        n += usize::from(SPREAD.lengths[low]);
        store16(&mut dst[n..], spread(mapped, high, 8));
        n += usize::from(SPREAD.lengths[high]);
        i += 16;
    }
    (i, n)
}

/// [`escape_once_ssse3`] thirty-two bytes at a time: the bytes are
/// classed once for the whole block, and each shuffle spreads two halves,
/// one in each 128-bit lane (AVX2 shuffles within lanes), so a block takes
/// two shuffles where two blocks of sixteen took four.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn escape_once_avx2(src: &[u8], dst: &mut [MaybeUninit<u8>]) -> (usize, usize) {
    use std::arch::x86_64::*;
    let both = |low: __m128i, high: __m128i| {
        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(low), high)
    };
    let letters = _mm256_broadcastsi128_si256(load16(&CONTROL_LETTERS));
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    // Spreads the half of each lane that starts `first` bytes into it, by
    // the masks of its bytes to escape (`low` lane, `high` lane).
    let spread = |mapped: __m256i, low: usize, high: usize, first: i8| {
        let picks = _mm256_add_epi8(
            both(load16(&SPREAD.picks[low]), load16(&SPREAD.picks[high])),
            _mm256_set1_epi8(first),
        );
        let places = both(
            load16(&SPREAD.backslashes[low]),
            load16(&SPREAD.backslashes[high]),
        );
        let spread = _mm256_shuffle_epi8(mapped, picks);
        _mm256_or_si256(
            _mm256_andnot_si256(places, spread),
            _mm256_and_si256(places, backslash),
        )
    };
    let (mut i, mut n) = (0, 0);
    // A block writes at most thirty-two escapes of 6 bytes, or four stores
    // of 16 bytes.
    while i + 32 <= src.len() && n + 32 * 6 <= dst.len() {
        let block: &[u8; 32] = src[i..i + 32].try_into().expect("32 bytes");
        // SAFETY: 32 bytes are there; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        let (control, mask) = special_avx2(v);
        let mask = mask as usize;
        if mask == 0 {
            let dst: &mut [MaybeUninit<u8>; 32] =
                (&mut dst[n..n + 32]).try_into().expect("32 bytes");
            // SAFETY: 32 bytes are there; the store is unaligned.
            unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), v) };
            (i, n) = (i + 32, n + 32);
            continue;
        }
        let (letter, all_lettered) = control_letters_avx2(v, control, letters);
        if !all_lettered {
            for &b in &src[i..i + 32] {
                n += escape_byte(b, &mut dst[n..], &ESCAPE_ONCE, b"\\u00");
            }
            i += 32;
            continue;
        }
        let mapped = _mm256_or_si256(
            _mm256_andnot_si256(control, v),
            _mm256_and_si256(control, letter),
        );
        let quarter = |q: usize| (mask >> (8 * q)) & 0xff;
        // Halves 0 and 2 (the first of each lane), then 1 and 3.
        let firsts = spread(mapped, quarter(0), quarter(2), 0);
        let seconds = spread(mapped, quarter(1), quarter(3), 8);
        for (half, (lanes, q)) in [(firsts, 0), (seconds, 1), (firsts, 2), (seconds, 3)]
            .into_iter()
            .enumerate()
        {
            let lane = match half {
                0 | 1 => _mm256_castsi256_si128(lanes),
                _ => _mm256_extracti128_si256::<1>(lanes),
            };
            store16(&mut dst[n..], lane);
            n += usize::from(SPREAD.lengths[quarter(q)]);
        }
        i += 32;
    }
    (i, n)
}

/// The 32 bytes in `v` classed as a JSON string sees them: which are
/// control characters, and one bit per byte that must be escaped (a control
/// character, `"` or `\\`). Both AVX2 escaping loops and the AVX2
/// unescaping loop start each block with it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) fn special_avx2(v: std::arch::x86_64::__m256i) -> (std::arch::x86_64::__m256i, u32) {
    use std::arch::x86_64::*;
    // Unsigned v <= 0x1f: the smaller of v and 0x1f is v itself.
    let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v);
    let special = _mm256_or_si256(
        control,
        _mm256_or_si256(
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)),
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)),
        ),
    );
    (control, _mm256_movemask_epi8(special) as u32)
}

/// The letter of each control character in `v` (marked in `control`) that
/// has one (`\n`, `\t`, …), and whether all of them have one: a block with
/// a control character written `\u00XX` is escaped byte by byte.
/// `letters` is [`CONTROL_LETTERS`] in both lanes, loaded once per loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn control_letters_avx2(
    v: std::arch::x86_64::__m256i,
    control: std::arch::x86_64::__m256i,
    letters: std::arch::x86_64::__m256i,
) -> (std::arch::x86_64::__m256i, bool) {
    use std::arch::x86_64::*;
    // Looked up by the low four bits; a control character with a letter
    // is below 16.
    let letter = _mm256_shuffle_epi8(letters, v);
    let below_16 = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(15)), v);
    let lettered = _mm256_andnot_si256(_mm256_cmpeq_epi8(letter, _mm256_setzero_si256()), below_16);
    let all = _mm256_movemask_epi8(_mm256_andnot_si256(lettered, control)) == 0;
    (letter, all)
}

/// One bit per byte of the sixteen-byte `block` that a JSON string must
/// escape: a control character, `"` or `\\`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
pub(super) fn special_mask_sse2(block: &[u8]) -> u32 {
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
