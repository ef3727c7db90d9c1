//! Hex, as the row stream carries blobs: decoded with a table of digit
//! pairs, sixteen digits at a time with SSE2 where there is SSE2, naming
//! the first bad digit.

use crate::error::{Error, Result};

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
    let text = hex_text.as_bytes();
    if text.len() % 2 != 0 {
        return Err(Error::data(format!(
            "bad hex: odd number of digits ({})",
            text.len()
        )));
    }
    out.clear();
    out.resize(text.len() / 2, 0);
    decode_hex_digits(text, out).map_err(|position| {
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
    if text.len() % 2 != 0 {
        return false;
    }
    out.clear();
    out.resize(text.len() / 2, 0);
    decode_hex_digits(text, out).is_ok()
}

/// Decodes `text` into `out` (half its length), or gives the position of
/// the first byte that is not a hex digit.
fn decode_hex_digits(text: &[u8], out: &mut [u8]) -> std::result::Result<(), usize> {
    // Sixteen digits at a time where the CPU has SSE2 (every x86-64), the
    // pair table for the rest and for a chunk holding a bad digit, whose
    // position the table loop finds.
    let vectored = decode_hex_vectored(text, out);
    let (text, out) = (&text[vectored * 2..], &mut out[vectored..]);
    for (chunk_index, (dst, src)) in out.chunks_mut(64).zip(text.chunks(128)).enumerate() {
        let mut invalid = 0u16;
        for (d, pair) in dst.iter_mut().zip(src.chunks_exact(2)) {
            let value = HEX_PAIR_VALUES[usize::from(pair[0]) << 8 | usize::from(pair[1])];
            invalid |= value;
            *d = value as u8;
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
#[cfg(target_arch = "x86_64")]
fn decode_hex_vectored(text: &[u8], out: &mut [u8]) -> usize {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function touches memory only through
    // slices.
    unsafe { decode_hex_sse2(text, out) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn decode_hex_sse2(text: &[u8], out: &mut [u8]) -> usize {
    use std::arch::x86_64::*;
    let mut written = 0;
    for (src, dst) in text.chunks_exact(16).zip(out.chunks_exact_mut(8)) {
        let low = u64::from_le_bytes(src[..8].try_into().expect("eight bytes"));
        let high = u64::from_le_bytes(src[8..].try_into().expect("eight bytes"));
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
        if _mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xffff {
            break;
        }
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
        dst.copy_from_slice(&bytes.to_le_bytes());
        written += 8;
    }
    written
}

#[cfg(not(target_arch = "x86_64"))]
fn decode_hex_vectored(_text: &[u8], _out: &mut [u8]) -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_decodes_like_the_hex_crate() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 300] {
            let text = hex::encode(&bytes[..len]);
            assert_eq!(decode_hex(&text).unwrap(), &bytes[..len]);
            assert_eq!(decode_hex(&text.to_uppercase()).unwrap(), &bytes[..len]);
        }
        let err = decode_hex(&format!("{}0g", "00".repeat(100))).unwrap_err();
        assert!(err.message().contains("'g' at position 201"), "{err}");
        // A bad digit at every place of a vector block, and after blocks.
        for at in 0..40 {
            for bad in [b'g', b'G', b'/', b':', b'@', b'`', b' ', 0x7f] {
                let mut text = "0a".repeat(20).into_bytes();
                text[at] = bad;
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
