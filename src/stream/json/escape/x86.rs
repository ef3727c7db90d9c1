//! The x86-64 routines of JSON escaping: SSE2, SSSE3 and AVX2, each
//! callable on its own and held to the scalar reference by the tests of
//! the module above (every level through `write_str_body_at`). Moved out of
//! `escape.rs` whole (issue 42: a room over ~800 lines splits along its
//! concerns); the portable loop and the dispatch stay there.

use std::mem::MaybeUninit;

use super::{escape_byte, put, EscapeTable, ESCAPE, ESCAPE_ONCE, ESCAPE_TWICE};

/// Each block's bytes to escape are walked from its mask: the run before
/// each is copied sixteen bytes at a time (the copy may run past it, into
/// room the next write overwrites), then the byte is escaped. Brain
/// transcripts (JSON inside JSON) need an escape every few bytes, and
/// restarting the block scan after each made escaping them 12% of the
/// `agy-dump | agy-decode` pipeline on a long conversation's store.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub(super) fn escape_sse2(
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
pub(super) fn escape_twice_avx2(src: &[u8], dst: &mut [MaybeUninit<u8>]) -> (usize, usize) {
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
pub(super) fn escape_once_ssse3(src: &[u8], dst: &mut [MaybeUninit<u8>]) -> (usize, usize) {
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
pub(super) fn escape_once_avx2(src: &[u8], dst: &mut [MaybeUninit<u8>]) -> (usize, usize) {
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
pub(in crate::stream::json) fn special_avx2(
    v: std::arch::x86_64::__m256i,
) -> (std::arch::x86_64::__m256i, u32) {
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
pub(in crate::stream::json) fn special_mask_sse2(block: &[u8]) -> u32 {
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
