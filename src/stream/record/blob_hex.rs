//! Hex, as the row stream carries blobs: decoded with a table of digit
//! pairs, sixteen digits at a time with SSE2 where there is SSE2, naming
//! the first bad digit.
//!
//! Decoding writes into a buffer's spare capacity, never zero-filled
//! first: a steps row's payload buffer grows and shrinks from row to row,
//! and zero-filling what it grew by each time, only to overwrite it, was
//! 3 % of agy-decode's instructions on a long conversation.

use std::mem::MaybeUninit;

use crate::error::{Error, Result};
use crate::stream::simd::{self, Level};

/// The byte that each pair of hex digits (either case) stands for, indexed
/// by the two ASCII bytes; 0x100 marks a pair that is not two hex digits.
/// One lookup per output byte instead of two.
static HEX_PAIR_VALUES: [u16; 65536] = {
    const fn digit(c: u8) -> u16 {
        match c {
            b'0'..=b'9' => (c - b'0') as u16,
            b'a'..=b'f' => (c - b'a' + 10) as u16,
            b'A'..=b'F' => (c - b'A' + 10) as u16,
            _ => 0x100,
        }
    }
    let mut table = [0x100u16; 65536];
    let mut i = 0;
    while i < 65536 {
        let (high, low) = (digit((i >> 8) as u8), digit(i as u8));
        if high != 0x100 && low != 0x100 {
            table[i] = (high << 4) | low;
        }
        i += 1;
    }
    table
};

/// Decodes a hex string, naming what was wrong.
///
/// Blobs are most of what agy-pack reads, so this is its hot loop: two table
/// lookups per byte, with the validity of a whole chunk checked at once.
pub fn decode_hex(hex_text: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decode_hex_into(hex_text, &mut out)?;
    Ok(out)
}

/// [`decode_hex`] into a reused buffer, which is cleared first.
pub fn decode_hex_into(hex_text: &str, out: &mut Vec<u8>) -> Result<()> {
    decode_hex_into_at(simd::level(), hex_text, out)
}

/// [`decode_hex_into`] with the routines of `level` (which this CPU must
/// run: see [`Level::supported`]), for the tests and fuzz targets.
pub fn decode_hex_into_at(level: Level, hex_text: &str, out: &mut Vec<u8>) -> Result<()> {
    let text = hex_text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return Err(Error::data(format!(
            "bad hex: odd number of digits ({})",
            text.len()
        )));
    }
    decode_into_spare(level, text, out).map_err(|position| {
        let shown = hex_text[position..].chars().next().unwrap_or('?');
        Error::data(format!(
            "bad hex: invalid character {shown:?} at position {position}"
        ))
    })
}

/// Hex digits as bytes into a reused buffer; false when they are not an
/// even number of hex digits (the caller then takes the path that says
/// why). For text not yet known to be UTF-8.
pub fn decode_hex_bytes_into(text: &[u8], out: &mut Vec<u8>) -> bool {
    if !text.len().is_multiple_of(2) {
        return false;
    }
    decode_into_spare(simd::level(), text, out).is_ok()
}

/// Decodes the hex digits at the start of `text` into `out` (cleared
/// first), up to the first byte that is not one or the end, and returns
/// how many digits that was ([`hex_digits_len`]): for a reader that finds
/// where a string of hex ends by decoding it, as agy-decode reads a steps
/// row's payload up to its closing quote, rather than searching for the
/// quote first. An odd count means the last digit has no pair; `out` then
/// holds the pairs before it.
pub fn decode_hex_prefix_into(text: &[u8], out: &mut Vec<u8>) -> usize {
    decode_hex_prefix_into_at(simd::level(), text, out)
}

/// [`decode_hex_prefix_into`] with the routines of `level`; see
/// [`decode_hex_into_at`].
pub fn decode_hex_prefix_into_at(level: Level, text: &[u8], out: &mut Vec<u8>) -> usize {
    let even = text.len() & !1;
    match decode_into_spare(level, &text[..even], out) {
        // A last digit without its pair still counts.
        Ok(()) => even + usize::from(text.get(even).is_some_and(u8::is_ascii_hexdigit)),
        Err(position) => {
            // SAFETY: decode_hex_digits writes every pair before the first
            // bad digit (see there), and `out` was cleared.
            unsafe { out.set_len(position / 2) };
            position
        }
    }
}

/// Decodes `text` (an even number of bytes) into `out`, replacing what it
/// held, through its spare capacity; on a bad digit, gives its position
/// and leaves `out` empty (its first pairs written but not counted).
fn decode_into_spare(
    level: Level,
    text: &[u8],
    out: &mut Vec<u8>,
) -> std::result::Result<(), usize> {
    let len = text.len() / 2;
    out.clear();
    out.reserve(len);
    decode_hex_digits(level, text, &mut out.spare_capacity_mut()[..len])?;
    // SAFETY: on success decode_hex_digits has written each of the `len`
    // bytes.
    unsafe { out.set_len(len) };
    Ok(())
}

/// Whether every byte of `text` is a hex digit (of either case). agy-decode
/// checks so the blob columns it does not decode, which must still be valid
/// JSON strings; byte by byte, that was most of reading a steps row's line.
pub fn is_hex_digits(text: &[u8]) -> bool {
    is_hex_digits_at(simd::level(), text)
}

/// [`is_hex_digits`] with the routines of `level`; see
/// [`decode_hex_into_at`].
pub fn is_hex_digits_at(level: Level, text: &[u8]) -> bool {
    hex_digits_len_at(level, text) == text.len()
}

/// How many bytes at the start of `text` are hex digits (of either case):
/// where a string of hex ends, found without searching for its closing
/// quote and then checking what comes before it.
pub fn hex_digits_len(text: &[u8]) -> usize {
    hex_digits_len_at(simd::level(), text)
}

/// [`hex_digits_len`] with the routines of `level`; see
/// [`decode_hex_into_at`].
pub fn hex_digits_len_at(level: Level, text: &[u8]) -> usize {
    let checked = hex_digit_blocks_vectored(level, text);
    checked
        + text[checked..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count()
}

/// How many bytes at the start of `text`, in whole blocks of sixteen, are
/// hex digits: all the blocks', or up to the block holding something else
/// (none at the scalar level and on other architectures).
#[cfg(target_arch = "x86_64")]
fn hex_digit_blocks_vectored(level: Level, text: &[u8]) -> usize {
    match level {
        Level::Scalar => 0,
        // SAFETY: `level` is never above what the CPU has, and SSE2 is part
        // of the x86-64 baseline; the function reads only `text`.
        Level::Sse2 | Level::Ssse3 | Level::Avx2 => unsafe { hex_digit_blocks_sse2(text) },
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn hex_digit_blocks_vectored(_level: Level, _text: &[u8]) -> usize {
    0
}

/// The sixteen bytes at the start of `block` as a vector, and the mask of
/// those that are letters, when every one is a hex digit (of either case).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn hex_block_sse2(
    block: &[u8],
) -> Option<(std::arch::x86_64::__m128i, std::arch::x86_64::__m128i)> {
    use std::arch::x86_64::*;
    let low = u64::from_le_bytes(block[..8].try_into().expect("eight bytes"));
    let high = u64::from_le_bytes(block[8..16].try_into().expect("eight bytes"));
    let v = _mm_set_epi64x(high as i64, low as i64);
    // Signed compares: bytes of 0x80 and above are negative, so fail.
    let digit = _mm_and_si128(
        _mm_cmpgt_epi8(v, _mm_set1_epi8(b'0' as i8 - 1)),
        _mm_cmplt_epi8(v, _mm_set1_epi8(b'9' as i8 + 1)),
    );
    let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    let letter = _mm_and_si128(
        _mm_cmpgt_epi8(folded, _mm_set1_epi8(b'a' as i8 - 1)),
        _mm_cmplt_epi8(folded, _mm_set1_epi8(b'f' as i8 + 1)),
    );
    (_mm_movemask_epi8(_mm_or_si128(digit, letter)) == 0xffff).then_some((v, letter))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn hex_digit_blocks_sse2(text: &[u8]) -> usize {
    let mut checked = 0;
    for block in text.chunks_exact(16) {
        if hex_block_sse2(block).is_none() {
            break;
        }
        checked += 16;
    }
    checked
}

/// Decodes `text` into `out` (half its length), or gives the position of
/// the first byte that is not a hex digit, having written every pair
/// before it (the unsafe callers rely on both).
fn decode_hex_digits(
    level: Level,
    text: &[u8],
    out: &mut [MaybeUninit<u8>],
) -> std::result::Result<(), usize> {
    // Sixteen digits at a time where the CPU has SSE2 (every x86-64), the
    // pair table for the rest and for a chunk holding a bad digit, whose
    // position the table loop finds.
    let vectored = decode_hex_vectored(level, text, out);
    let (text, out) = (&text[vectored * 2..], &mut out[vectored..]);
    for (chunk_index, (dst, src)) in out.chunks_mut(64).zip(text.chunks(128)).enumerate() {
        let mut invalid = 0u16;
        for (d, pair) in dst.iter_mut().zip(src.chunks_exact(2)) {
            let value = HEX_PAIR_VALUES[usize::from(pair[0]) << 8 | usize::from(pair[1])];
            invalid |= value;
            d.write(value as u8);
        }
        if invalid & 0x100 != 0 {
            let at = src
                .iter()
                .position(|b| !b.is_ascii_hexdigit())
                .expect("a chunk flagged invalid has a bad digit");
            return Err(vectored * 2 + chunk_index * 128 + at);
        }
    }
    Ok(())
}

/// Decodes whole blocks of sixteen hex digits with SSE2 until the text
/// ends or a block holds something else; returns the bytes written. On
/// other architectures it writes nothing and the table loop does it all.
///
/// Hex decoding was a ninth of agy-decode's time with the table alone.
///
/// Where the CPU has AVX2, thirty-two digits at a time first: a steps row
/// is hundreds of MB of hex on a long conversation, and decoding it was a
/// tenth of agy-decode's time there with SSE2.
#[cfg(target_arch = "x86_64")]
fn decode_hex_vectored(level: Level, text: &[u8], out: &mut [MaybeUninit<u8>]) -> usize {
    let wide = match level {
        // SAFETY: `level` is never above what the CPU has; the function
        // touches memory only through slices.
        Level::Avx2 => unsafe { decode_hex_avx2(text, out) },
        Level::Scalar => return 0,
        Level::Sse2 | Level::Ssse3 => 0,
    };
    // SAFETY: SSE2 is part of the x86-64 baseline, and the level is at
    // least SSE2; the function touches memory only through slices.
    wide + unsafe { decode_hex_sse2(&text[wide * 2..], &mut out[wide..]) }
}

/// [`decode_hex_sse2`] over thirty-two digits at a time, the pairs joined
/// by one multiply-add.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn decode_hex_avx2(text: &[u8], out: &mut [MaybeUninit<u8>]) -> usize {
    use std::arch::x86_64::*;
    let mut written = 0;
    for (src, dst) in text.chunks_exact(32).zip(out.chunks_exact_mut(16)) {
        let src: &[u8; 32] = src.try_into().expect("32 bytes");
        // SAFETY: 32 bytes are there; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(src.as_ptr().cast()) };
        // Signed compares: bytes of 0x80 and above are negative, so fail.
        let within = |v: __m256i, first: u8, last: u8| {
            _mm256_and_si256(
                _mm256_cmpgt_epi8(v, _mm256_set1_epi8(first as i8 - 1)),
                _mm256_cmpgt_epi8(_mm256_set1_epi8(last as i8 + 1), v),
            )
        };
        let digit = within(v, b'0', b'9');
        let letter = within(_mm256_or_si256(v, _mm256_set1_epi8(0x20)), b'a', b'f');
        if _mm256_movemask_epi8(_mm256_or_si256(digit, letter)) != -1 {
            break;
        }
        // '0'..'9' & 0xf is the value; 'a'..'f' and 'A'..'F' & 0xf is 1..6.
        let nibbles = _mm256_add_epi8(
            _mm256_and_si256(v, _mm256_set1_epi8(0x0f)),
            _mm256_and_si256(letter, _mm256_set1_epi8(9)),
        );
        // Each pair's first digit times 16 plus its second, in 16 bits.
        let pairs = _mm256_maddubs_epi16(nibbles, _mm256_set1_epi16(0x0110));
        // Packing works within each 128-bit half: the two halves' eight
        // bytes are the first and third quarters.
        let packed = _mm256_packus_epi16(pairs, pairs);
        let bytes = _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0b10_00));
        let dst: &mut [MaybeUninit<u8>; 16] = dst.try_into().expect("16 bytes");
        // SAFETY: 16 bytes are there; the store is unaligned.
        unsafe { _mm_storeu_si128(dst.as_mut_ptr().cast(), bytes) };
        written += 16;
    }
    written
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn decode_hex_sse2(text: &[u8], out: &mut [MaybeUninit<u8>]) -> usize {
    use std::arch::x86_64::*;
    let mut written = 0;
    for (src, dst) in text.chunks_exact(16).zip(out.chunks_exact_mut(8)) {
        let Some((v, letter)) = hex_block_sse2(src) else {
            break;
        };
        // '0'..'9' & 0xf is the value; 'a'..'f' and 'A'..'F' & 0xf is 1..6.
        let nibbles = _mm_add_epi8(
            _mm_and_si128(v, _mm_set1_epi8(0x0f)),
            _mm_and_si128(letter, _mm_set1_epi8(9)),
        );
        // Each 16-bit lane holds (first digit, second digit) as (low, high).
        let pairs = _mm_or_si128(
            _mm_slli_epi16(_mm_and_si128(nibbles, _mm_set1_epi16(0x00ff)), 4),
            _mm_srli_epi16(nibbles, 8),
        );
        let bytes = _mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)) as u64;
        for (d, b) in dst.iter_mut().zip(bytes.to_le_bytes()) {
            d.write(b);
        }
        written += 8;
    }
    written
}

#[cfg(not(target_arch = "x86_64"))]
fn decode_hex_vectored(_level: Level, _text: &[u8], _out: &mut [MaybeUninit<u8>]) -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_digits_are_what_is_ascii_hexdigit_says() {
        // Every byte value, alone and at each place of a longer run of
        // digits (the vectored blocks and the tail).
        for byte in 0..=255u8 {
            for len in [1, 15, 16, 17, 40] {
                for at in [0, len / 2, len - 1] {
                    let mut text = b"0123456789abcdefABCDEF0123456789abcdefABCDEF"[..len].to_vec();
                    text[at] = byte;
                    let expected = text.iter().all(u8::is_ascii_hexdigit);
                    assert_eq!(is_hex_digits(&text), expected, "{byte:#x} at {at} of {len}");
                    for level in Level::supported_levels() {
                        assert_eq!(
                            is_hex_digits_at(level, &text),
                            expected,
                            "{level:?}: {byte:#x} at {at} of {len}"
                        );
                    }
                }
            }
        }
        assert!(is_hex_digits(b""));
    }

    /// Every byte value at every place of a block, in both cases, through
    /// each level's decoder: the SSE2 one sees letters in the high nibble
    /// only at a level below AVX2, where it decodes every block.
    #[test]
    fn each_level_decodes_every_byte_at_every_place() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        for level in Level::supported_levels() {
            for from in 0..40 {
                let bytes = &bytes[from..];
                for text in [hex::encode(bytes), hex::encode_upper(bytes)] {
                    // A reused buffer, shorter and longer than the bytes:
                    // what it held is overwritten or cut, never left.
                    for held in [3, 300] {
                        let mut out = vec![7; held];
                        decode_hex_into_at(level, &text, &mut out).unwrap();
                        assert_eq!(out, bytes, "{level:?} from {from}");
                    }
                    let mut out = vec![7; 300];
                    assert!(decode_hex_bytes_into(text.as_bytes(), &mut out));
                    assert_eq!(out, bytes);
                    assert!(is_hex_digits_at(level, text.as_bytes()));
                }
            }
            // A bad digit at every place is found at its position.
            for at in 0..100 {
                let mut text = "fA".repeat(50).into_bytes();
                text[at] = b'g';
                let text = String::from_utf8(text).unwrap();
                let err = decode_hex_into_at(level, &text, &mut Vec::new()).unwrap_err();
                assert!(
                    err.message().contains(&format!("position {at}")),
                    "{level:?} {err}"
                );
            }
        }
    }

    /// A string of hex ends where its digits do: every length, with a
    /// closing quote, another byte or nothing after it, at every level;
    /// what comes before is decoded, and a digit without its pair is
    /// counted but not decoded.
    #[test]
    fn each_level_reads_hex_up_to_where_its_digits_end() {
        let bytes: Vec<u8> = (0..=255u8).rev().cycle().take(100).collect();
        let digits = hex::encode(&bytes);
        for level in Level::supported_levels() {
            for len in 0..digits.len() {
                for after in [&b"\",\"step_format\":0}}"[..], b"g", b"", b"\xff"] {
                    let text = [&digits.as_bytes()[..len], after].concat();
                    assert_eq!(hex_digits_len_at(level, &text), len, "{level:?} {len}");
                    let mut out = vec![7; 80];
                    let read = decode_hex_prefix_into_at(level, &text, &mut out);
                    assert_eq!(read, len, "{level:?} {len} {after:?}");
                    assert_eq!(out, &bytes[..len / 2], "{level:?} {len} {after:?}");
                }
            }
        }
    }

    #[test]
    fn hex_decodes_like_the_hex_crate() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 300] {
            let text = hex::encode(&bytes[..len]);
            assert_eq!(decode_hex(&text).unwrap(), &bytes[..len]);
            assert_eq!(decode_hex(&text.to_uppercase()).unwrap(), &bytes[..len]);
        }
        let err = decode_hex(&format!("{}0g", "00".repeat(100))).unwrap_err();
        assert!(err.message().contains("'g' at position 201"), "{err}");
        // A bad digit at every place of a vector block, and after blocks.
        for at in 0..100 {
            for bad in [b'g', b'G', b'/', b':', b'@', b'`', b' ', 0x7f, 0x80, 0xff] {
                let mut text = "0a".repeat(50).into_bytes();
                text[at] = bad;
                assert!(!decode_hex_bytes_into(&text, &mut Vec::new()), "{at} {bad}");
                if !bad.is_ascii() {
                    continue;
                }
                let text = String::from_utf8(text).unwrap();
                let err = decode_hex(&text).unwrap_err();
                let expected = format!("at position {at}");
                assert!(err.message().contains(&expected), "{text}: {err}");
            }
        }
        let all: String = (0..=255u8).map(|b| format!("{b:02X}")).collect();
        assert_eq!(decode_hex(&all).unwrap(), (0..=255u8).collect::<Vec<_>>());
        assert!(decode_hex("abc")
            .unwrap_err()
            .message()
            .contains("odd number"));
        assert!(decode_hex("zz").is_err());
        assert!(decode_hex("é0").is_err());
    }
}
