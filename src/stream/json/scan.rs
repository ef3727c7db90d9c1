//! Reading JSON string literals without unescaping them: where the clean
//! run ends, and whether a string the reader will drop is one serde_json
//! would accept.

#[cfg(target_arch = "x86_64")]
use super::escape::special_mask_sse2;
use super::escape::ESCAPE;

/// How many bytes at the start of `bytes` a JSON string holds as they are:
/// the position of the first control character, `"` or `\\`, or the
/// length. Reading a string literal is finding this, sixteen bytes at a
/// time where SSE2 is there.
pub fn clean_prefix_len(bytes: &[u8]) -> usize {
    let mut at = clean_prefix_vectored(bytes);
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
pub fn is_simple_str_body(body: &[u8]) -> bool {
    // Escapes come every few bytes in a transcript (JSON inside JSON), so
    // each block's special bytes are walked from its mask rather than the
    // scan restarted after each.
    let Some((mut at, mut escaped_until)) = simple_blocks_vectored(body) else {
        return false;
    };
    while at < body.len() {
        if at >= escaped_until && ESCAPE[body[at] as usize] != 0 {
            match simple_escape(body, at) {
                Some(end) => escaped_until = end,
                None => return false,
            }
        }
        at += 1;
    }
    // Escapes are ASCII, so the text is UTF-8 exactly when its escaped
    // form is.
    std::str::from_utf8(body).is_ok()
}

/// Where the escape at `at` ends, when `body[at]` begins a two-character
/// escape; `None` for anything else (a quote, a control character, `\u`).
#[inline]
fn simple_escape(body: &[u8], at: usize) -> Option<usize> {
    match (body[at], body.get(at + 1)) {
        (b'\\', Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')) => Some(at + 2),
        _ => None,
    }
}

/// [`is_simple_str_body`] over the whole sixteen-byte blocks of `body`:
/// where the blocks end, and where the escape begun last ends (it may
/// reach past them); `None` when they hold anything but simple escapes.
#[cfg(target_arch = "x86_64")]
fn simple_blocks_vectored(body: &[u8]) -> Option<(usize, usize)> {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function touches memory only through
    // slices.
    unsafe { simple_blocks_sse2(body) }
}

#[cfg(not(target_arch = "x86_64"))]
fn simple_blocks_vectored(_body: &[u8]) -> Option<(usize, usize)> {
    Some((0, 0))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn simple_blocks_sse2(body: &[u8]) -> Option<(usize, usize)> {
    let mut escaped_until = 0;
    let mut base = 0;
    for block in body.chunks_exact(16) {
        let mut mask = special_mask_sse2(block);
        while mask != 0 {
            let at = base + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            // A quote or backslash that an escape begun before consumed.
            if at >= escaped_until {
                escaped_until = simple_escape(body, at)?;
            }
        }
        base += 16;
    }
    Some((base, escaped_until))
}

/// The position of the first byte to escape within the whole sixteen-byte
/// blocks of `bytes`, else the length of those blocks (zero on other
/// architectures).
#[cfg(target_arch = "x86_64")]
fn clean_prefix_vectored(bytes: &[u8]) -> usize {
    // SAFETY: SSE2 is part of the x86-64 baseline, so every CPU that runs
    // this x86_64 binary has it; the function touches memory only through
    // slices.
    unsafe { clean_prefix_sse2(bytes) }
}

#[cfg(not(target_arch = "x86_64"))]
fn clean_prefix_vectored(_bytes: &[u8]) -> usize {
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
                }
            }
        }
    }
}
