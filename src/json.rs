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

/// Writes `s` as a JSON string. Non-ASCII text is written as UTF-8, never
/// as `\u` escapes, so the output stays readable and `grep`-able.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = ESCAPE[b as usize];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        if escape == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 0xf) as usize],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
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

/// Writes `bytes` as a quoted lowercase hex string, encoded in place.
///
/// Blobs are most of what agy-dump writes, so this is its hot loop: a table
/// lookup per byte, eight bytes per iteration, straight into the buffer.
pub fn write_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let start = out.len();
    out.resize(start + bytes.len() * 2, 0);
    let dst = &mut out[start..];
    let mut dst_chunks = dst.chunks_exact_mut(16);
    let mut src_chunks = bytes.chunks_exact(8);
    for (d, s) in (&mut dst_chunks).zip(&mut src_chunks) {
        for i in 0..8 {
            let pair = HEX_PAIRS[s[i] as usize];
            d[2 * i] = pair[0];
            d[2 * i + 1] = pair[1];
        }
    }
    for (d, &b) in dst_chunks
        .into_remainder()
        .chunks_exact_mut(2)
        .zip(src_chunks.remainder())
    {
        d.copy_from_slice(&HEX_PAIRS[b as usize]);
    }
    out.push(b'"');
}

pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    serde_json::to_writer(out, &v).expect("writing to a Vec cannot fail");
}

/// Writes a finite real so that it reads back as a real: `1.0`, never `1`.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    debug_assert!(v.is_finite());
    serde_json::to_writer(out, &v).expect("writing to a Vec cannot fail");
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
        for s in [
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
    fn reals_stay_real() {
        let mut out = Vec::new();
        write_f64(&mut out, 1.0);
        assert_eq!(out, b"1.0");
    }
}
