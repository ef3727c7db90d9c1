//! SQLite's WAL checksum, and a form of it that SIMD lanes can share.
//!
//! Over each pair of 32-bit words `x0, x1` the checksum does
//! `s0 += x0 + s1; s1 += x1 + s0` (wrapping), and each frame's sum runs on
//! from the frame before: a WAL is summed word by word from its header to
//! its last frame. Two dependent additions a pair hold that loop to a few
//! bytes a cycle, and agy-dump sums every WAL it reads whole (a `-shm`
//! nobody holds is not trusted, see the module above): on 2,000
//! conversations with a few steps each in their `-wal`, 214 MB a run, 2 %
//! of the pipeline's CPU.
//!
//! The recurrence is linear, so a run of `n` words (`n` even) can be
//! summed in any order. With `F` the Fibonacci numbers (`F(0) = 0`,
//! `F(1) = 1`), all modulo 2^32:
//!
//! ```text
//! s0' = F(n-1) s0 + F(n)   s1 + sum over i of F(n-1-i) w_i
//! s1' = F(n)   s0 + F(n+1) s1 + sum over i of F(n-i)   w_i
//! ```
//!
//! (one pair is `s0' = s0 + s1 + w_0`, `s1' = s0 + 2 s1 + w_0 + w_1`, the
//! loop's two steps; a run of pairs composes as the matrix `[[1, 1], [1,
//! 2]]`, whose powers are Fibonacci numbers.) The words' part is two dot
//! products with fixed coefficients, which eight 32-bit lanes multiply and
//! add at once ([`sum_avx2`]). [`serial`] is the loop itself: the plain
//! form every level is tested and fuzzed against.

use crate::stream::simd::{level, Level};

/// Words summed as one run by the vectored form: a 4 KiB page, the size
/// of most WAL frames. (It, the tables and the block form are compiled
/// where a vectored form is, and for the tests.)
#[cfg(any(target_arch = "x86_64", test))]
const RUN: usize = 1024;

/// `F(0)` to `F(RUN + 1)`, modulo 2^32.
#[cfg(any(target_arch = "x86_64", test))]
const FIB: [u32; RUN + 2] = {
    let mut fib = [0u32; RUN + 2];
    fib[1] = 1;
    let mut i = 2;
    while i < fib.len() {
        fib[i] = fib[i - 1].wrapping_add(fib[i - 2]);
        i += 1;
    }
    fib
};

/// `F(RUN)` down to `F(0)`: a run of `n` words takes its coefficients
/// from the last `n + 1`, in the words' order (see [`dot_scalar`]).
#[cfg(any(target_arch = "x86_64", test))]
const DOWN: [u32; RUN + 1] = {
    let mut down = [0u32; RUN + 1];
    let mut k = 0;
    while k <= RUN {
        down[k] = FIB[RUN - k];
        k += 1;
    }
    down
};

/// SQLite's WAL checksum of `bytes` (a multiple of 8 long), carried on
/// from `sum`, its words read big-endian or little-endian as the WAL's
/// magic number says.
pub(super) fn checksum(big_endian: bool, sum: (u32, u32), bytes: &[u8]) -> (u32, u32) {
    checksum_at(level(), big_endian, sum, bytes)
}

/// [`checksum`] at `level` (which must be one this CPU runs: see
/// [`Level::supported`]), for the tests and fuzz targets.
pub fn checksum_at(level: Level, big_endian: bool, sum: (u32, u32), bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.len().is_multiple_of(8),
        "the WAL checksum sums pairs of words"
    );
    let (sum, done) = checksum_vectored(level, big_endian, sum, bytes);
    serial(big_endian, sum, &bytes[done..])
}

/// `sum` carried over as much of `bytes` as `level`'s vectored form sums,
/// and how many bytes that is. SSE2 has no 32-bit multiply that keeps the
/// low half of each lane: below AVX2, and for a few words, the loop itself
/// is the fastest, and sums them all.
#[cfg(target_arch = "x86_64")]
fn checksum_vectored(
    level: Level,
    big_endian: bool,
    sum: (u32, u32),
    bytes: &[u8],
) -> ((u32, u32), usize) {
    if level < Level::Avx2 || bytes.len() < 64 {
        return (sum, 0);
    }
    let sum = bytes.chunks(RUN * 4).fold(sum, |sum, run| {
        // SAFETY: the level is one this CPU runs (the caller's promise;
        // `level()` never says more), so it has AVX2.
        unsafe { sum_avx2(big_endian, sum, run) }
    });
    (sum, bytes.len())
}

/// No vectored form is compiled elsewhere.
#[cfg(not(target_arch = "x86_64"))]
fn checksum_vectored(
    _level: Level,
    _big_endian: bool,
    sum: (u32, u32),
    _bytes: &[u8],
) -> ((u32, u32), usize) {
    (sum, 0)
}

/// The checksum as SQLite writes it: a pair of words at a time.
pub fn serial(big_endian: bool, sum: (u32, u32), bytes: &[u8]) -> (u32, u32) {
    let (mut s0, mut s1) = sum;
    for pair in bytes.chunks_exact(8) {
        s0 = s0
            .wrapping_add(word(big_endian, &pair[..4]))
            .wrapping_add(s1);
        s1 = s1
            .wrapping_add(word(big_endian, &pair[4..]))
            .wrapping_add(s0);
    }
    (s0, s1)
}

fn word(big_endian: bool, bytes: &[u8]) -> u32 {
    let bytes: [u8; 4] = bytes.try_into().expect("4 bytes");
    match big_endian {
        true => u32::from_be_bytes(bytes),
        false => u32::from_le_bytes(bytes),
    }
}

/// `sum` carried over a run of `n` words whose words' part (the two dot
/// products of the module's formula) is `dots`.
#[cfg(any(target_arch = "x86_64", test))]
fn carry((s0, s1): (u32, u32), n: usize, dots: (u32, u32)) -> (u32, u32) {
    let (below, at, above) = (FIB[n - 1], FIB[n], FIB[n + 1]);
    (
        below
            .wrapping_mul(s0)
            .wrapping_add(at.wrapping_mul(s1))
            .wrapping_add(dots.0),
        at.wrapping_mul(s0)
            .wrapping_add(above.wrapping_mul(s1))
            .wrapping_add(dots.1),
    )
}

/// The dot products of words `from..` of a run of `n` words, one at a
/// time: word `i` is multiplied by `F(n-1-i)` into the first and `F(n-i)`
/// into the second, which are `DOWN[RUN-n+i+1]` and `DOWN[RUN-n+i]`.
#[cfg(any(target_arch = "x86_64", test))]
fn dot_scalar(big_endian: bool, words: &[u8], n: usize, from: usize) -> (u32, u32) {
    let (mut d0, mut d1) = (0u32, 0u32);
    for i in from..n {
        let w = word(big_endian, &words[4 * i..4 * i + 4]);
        let k = RUN - n + i;
        d0 = d0.wrapping_add(w.wrapping_mul(DOWN[k + 1]));
        d1 = d1.wrapping_add(w.wrapping_mul(DOWN[k]));
    }
    (d0, d1)
}

/// `sum` carried over `run` (at most [`RUN`] words, a multiple of 8
/// bytes) with eight words a step: each lane multiplies its words by their
/// coefficients (loaded from [`DOWN`] at the word's place) and adds them
/// up; the lanes are added at the end, the last words (under eight) one at
/// a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_avx2(big_endian: bool, sum: (u32, u32), run: &[u8]) -> (u32, u32) {
    use std::arch::x86_64::*;
    let n = run.len() / 4;
    debug_assert!(n <= RUN && n.is_multiple_of(2));
    // Reverses the bytes of each 32-bit word, for a big-endian WAL.
    let swap = _mm256_setr_epi8(
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, //
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
    );
    let (mut acc0, mut acc1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    // Word i's coefficients are DOWN[RUN-n+i+1] and DOWN[RUN-n+i].
    let down = &DOWN[RUN - n..];
    let blocks = run.chunks_exact(32);
    let vectored = blocks.len() * 8;
    for ((words, first), second) in blocks
        .zip(down[1..].chunks_exact(8))
        .zip(down.chunks_exact(8))
    {
        // SAFETY: each load reads the 32 bytes of the chunk it is given
        // (32 bytes, or eight words); the loads are unaligned.
        let (mut w, c0, c1) = unsafe {
            (
                _mm256_loadu_si256(words.as_ptr().cast()),
                _mm256_loadu_si256(first.as_ptr().cast()),
                _mm256_loadu_si256(second.as_ptr().cast()),
            )
        };
        if big_endian {
            w = _mm256_shuffle_epi8(w, swap);
        }
        acc0 = _mm256_add_epi32(acc0, _mm256_mullo_epi32(w, c0));
        acc1 = _mm256_add_epi32(acc1, _mm256_mullo_epi32(w, c1));
    }
    let lanes = |acc: __m256i| {
        let mut out = [0u32; 8];
        // SAFETY: `out` is 32 bytes; the store is unaligned.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), acc) };
        out.into_iter().fold(0u32, u32::wrapping_add)
    };
    let tail = dot_scalar(big_endian, run, n, vectored);
    let dots = (
        lanes(acc0).wrapping_add(tail.0),
        lanes(acc1).wrapping_add(tail.1),
    );
    carry(sum, n, dots)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that are no pattern: each from a small generator.
    fn noise(len: usize, seed: u32) -> Vec<u8> {
        let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect()
    }

    #[test]
    fn one_pair_is_the_loops_two_steps() {
        // Eight bytes: one pair of words, 1 and 2, little- or big-endian.
        let little = [1, 0, 0, 0, 2, 0, 0, 0];
        let big = [0, 0, 0, 1, 0, 0, 0, 2];
        assert_eq!(serial(false, (0, 0), &little), (1, 3));
        assert_eq!(serial(true, (0, 0), &big), (1, 3));
        assert_eq!(serial(true, (10, 20), &big), (31, 53));
    }

    /// The formula's words' part and carry, one word at a time, give the
    /// loop's sum for every run length up to [`RUN`] words.
    #[test]
    fn the_formula_is_the_loop() {
        let bytes = noise(RUN * 4, 7);
        for n in (2..=RUN).step_by(2) {
            let run = &bytes[..n * 4];
            for big_endian in [false, true] {
                let start = (0x9e37_79b9, 0x7f4a_7c15);
                let dots = dot_scalar(big_endian, run, n, 0);
                assert_eq!(
                    carry(start, n, dots),
                    serial(big_endian, start, run),
                    "{n} words, big-endian {big_endian}"
                );
            }
        }
    }

    /// Every level gives the loop's sum, for every length in a few runs
    /// (under a vector, across a run's end, many runs), either byte order,
    /// and sums carried on from anything.
    #[test]
    fn every_level_is_the_loop() {
        let bytes = noise(3 * RUN * 4 + 200, 11);
        let lengths = (0..=300).chain([RUN * 4 - 8, RUN * 4, RUN * 4 + 8, 2 * RUN * 4 + 96]);
        for level in Level::supported_levels() {
            for len in lengths.clone().filter(|len| len % 8 == 0) {
                for big_endian in [false, true] {
                    for start in [(0, 0), (u32::MAX, 1), (0x0123_4567, 0x89ab_cdef)] {
                        assert_eq!(
                            checksum_at(level, big_endian, start, &bytes[..len]),
                            serial(big_endian, start, &bytes[..len]),
                            "{level:?}, {len} bytes, big-endian {big_endian}"
                        );
                    }
                }
            }
            let whole = bytes.len() & !7;
            assert_eq!(
                checksum_at(level, false, (3, 4), &bytes[..whole]),
                serial(false, (3, 4), &bytes[..whole])
            );
        }
    }
}
