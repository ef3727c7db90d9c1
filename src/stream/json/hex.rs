//! Blobs as hex strings: most of the bytes agy-dump and agy-encode write.

use crate::stream::simd::{self, Level};

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
    write_hex_body_at(simd::level(), out, bytes);
}

/// [`write_hex_body`] with the routines of `level` (which this CPU must
/// run: see [`Level::supported`]), for the tests and fuzz targets.
pub fn write_hex_body_at(level: Level, out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    let done = write_hex_vectored(level, out, bytes);
    for &b in &bytes[done..] {
        out.extend_from_slice(&HEX_PAIRS[b as usize]);
    }
}

/// Appends the hex of whole sixteen-byte blocks of `bytes` with the routine
/// of `level`; returns how many bytes it encoded (none at the scalar level
/// and on other architectures).
#[cfg(target_arch = "x86_64")]
fn write_hex_vectored(level: Level, out: &mut Vec<u8>, bytes: &[u8]) -> usize {
    match level {
        Level::Scalar => 0,
        // SAFETY: `level` is never above what the CPU has, and SSE2 is part
        // of the x86-64 baseline; the function touches memory only through
        // slices and a Vec.
        Level::Sse2 | Level::Ssse3 | Level::Avx2 => unsafe { write_hex_sse2(out, bytes) },
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn write_hex_vectored(_level: Level, _out: &mut Vec<u8>, _bytes: &[u8]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_matches_the_hex_crate() {
        let bytes: Vec<u8> = (0..=255u8).chain(0..37).collect();
        for len in 0..bytes.len() {
            let mut out = Vec::new();
            write_hex(&mut out, &bytes[..len]);
            let expected = hex::encode(&bytes[..len]);
            assert_eq!(out, format!("\"{expected}\"").into_bytes());
            // Each block and tail at every level, from any starting byte.
            for level in Level::supported_levels() {
                for from in [0, 1, 17].into_iter().filter(|&f| f <= len) {
                    let mut out = Vec::new();
                    write_hex_body_at(level, &mut out, &bytes[from..len]);
                    assert_eq!(out, &expected.as_bytes()[from * 2..], "{level:?} {len}");
                }
            }
        }
    }
}
