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
/// hot loop: 32 bytes at a time with AVX2, sixteen with SSE2 (every
/// x86-64), the pair table for the rest. The digits are stored from
/// registers straight into the buffer's spare room, so it is never
/// zero-filled first only to be overwritten, nor copied through a stack
/// array (as the first SSE2 routine did: 6 % of agy-encode).
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

/// Appends the hex of whole blocks of `bytes` with the routine of `level`
/// (`out` has room for all of it); returns how many bytes it encoded (none
/// at the scalar level and on other architectures).
#[cfg(target_arch = "x86_64")]
fn write_hex_vectored(level: Level, out: &mut Vec<u8>, bytes: &[u8]) -> usize {
    let blocks = match level {
        Level::Scalar => return 0,
        Level::Sse2 | Level::Ssse3 => 16,
        Level::Avx2 => 32,
    };
    let done = bytes.len() - bytes.len() % blocks;
    let start = out.len();
    let room = &mut out.spare_capacity_mut()[..done * 2];
    match level {
        Level::Scalar => unreachable!("returned above"),
        // SAFETY (both): `level` is never above what the CPU has, and SSE2
        // is part of the x86-64 baseline; the functions touch memory only
        // through the slices.
        Level::Sse2 | Level::Ssse3 => unsafe { hex_blocks_sse2(&bytes[..done], room) },
        Level::Avx2 => unsafe { hex_blocks_avx2(&bytes[..done], room) },
    }
    // SAFETY: the routine stored the two digits of each of the `done`
    // bytes into the first `done * 2` bytes of the spare room, which
    // `write_hex_body_at` reserved.
    unsafe { out.set_len(start + done * 2) };
    done
}

#[cfg(not(target_arch = "x86_64"))]
fn write_hex_vectored(_level: Level, _out: &mut Vec<u8>, _bytes: &[u8]) -> usize {
    0
}

/// The digit of each nibble, for `vpshufb` to look up (SSE2 has no byte
/// shuffle: [`hex_blocks_sse2`] computes them).
#[cfg(target_arch = "x86_64")]
const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Stores the digits of `bytes` (whole blocks of sixteen) into `room`
/// (twice as long), with SSE2: a nibble n becomes '0' + n, plus 39 more
/// ('a' - '9' - 1) above 9.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn hex_blocks_sse2(bytes: &[u8], room: &mut [std::mem::MaybeUninit<u8>]) {
    use std::arch::x86_64::*;
    let digits = |n: __m128i| {
        let above_nine = _mm_cmpgt_epi8(n, _mm_set1_epi8(9));
        _mm_add_epi8(
            _mm_add_epi8(n, _mm_set1_epi8(b'0' as i8)),
            _mm_and_si128(above_nine, _mm_set1_epi8(39)),
        )
    };
    let mask = _mm_set1_epi8(0x0f);
    for (block, dst) in bytes.chunks_exact(16).zip(room.chunks_exact_mut(32)) {
        let block: &[u8; 16] = block.try_into().expect("16 bytes");
        // SAFETY: 16 bytes are there; the load is unaligned.
        let v = unsafe { _mm_loadu_si128(block.as_ptr().cast()) };
        let high_nibbles = _mm_and_si128(_mm_srli_epi16(v, 4), mask);
        let low_nibbles = _mm_and_si128(v, mask);
        // Each byte's two digits, high nibble first.
        let first = digits(_mm_unpacklo_epi8(high_nibbles, low_nibbles));
        let second = digits(_mm_unpackhi_epi8(high_nibbles, low_nibbles));
        let dst: &mut [std::mem::MaybeUninit<u8>; 32] = dst.try_into().expect("32 bytes");
        // SAFETY: 32 bytes of room are there; the stores are unaligned.
        unsafe {
            _mm_storeu_si128(dst.as_mut_ptr().cast(), first);
            _mm_storeu_si128(dst.as_mut_ptr().add(16).cast(), second);
        }
    }
}

/// [`hex_blocks_sse2`] 32 bytes at a time with AVX2, the digits looked up
/// with `vpshufb`. Unpacking works within each 128-bit lane, so the four
/// sixteen-digit runs come out as lanes of two registers, put back in
/// order by two lane permutes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn hex_blocks_avx2(bytes: &[u8], room: &mut [std::mem::MaybeUninit<u8>]) {
    use std::arch::x86_64::*;
    // SAFETY: DIGITS is 16 bytes; the load is unaligned.
    let lookup = _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(DIGITS.as_ptr().cast()) });
    let mask = _mm256_set1_epi8(0x0f);
    for (block, dst) in bytes.chunks_exact(32).zip(room.chunks_exact_mut(64)) {
        let block: &[u8; 32] = block.try_into().expect("32 bytes");
        // SAFETY: 32 bytes are there; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
        let high = _mm256_shuffle_epi8(lookup, _mm256_and_si256(_mm256_srli_epi16(v, 4), mask));
        let low = _mm256_shuffle_epi8(lookup, _mm256_and_si256(v, mask));
        // Lane by lane: bytes 0-7 and 16-23, then 8-15 and 24-31.
        let firsts = _mm256_unpacklo_epi8(high, low);
        let seconds = _mm256_unpackhi_epi8(high, low);
        let dst: &mut [std::mem::MaybeUninit<u8>; 64] = dst.try_into().expect("64 bytes");
        // SAFETY: 64 bytes of room are there; the stores are unaligned.
        unsafe {
            _mm256_storeu_si256(
                dst.as_mut_ptr().cast(),
                _mm256_permute2x128_si256::<0x20>(firsts, seconds),
            );
            _mm256_storeu_si256(
                dst.as_mut_ptr().add(32).cast(),
                _mm256_permute2x128_si256::<0x31>(firsts, seconds),
            );
        }
    }
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
