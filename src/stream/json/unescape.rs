//! Reading JSON string escapes: the one reading of `\n`, `\uXXXX` and the
//! rest, for the message reader (which leaves anything doubtful to serde)
//! and the renderer (which shows a lone surrogate as U+FFFD).

use super::clean_prefix_len_at;
use crate::stream::simd::Level;

/// What a `\u` escape of a lone surrogate (a UTF-16 half with no other
/// half after it) reads as: no character can stand for one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoneSurrogate {
    /// A bad escape, as serde_json says.
    Refuse,
    /// U+FFFD, the replacement character, as a lossy reader shows it.
    Replace,
}

/// The character of the escape that `escape` starts with (a backslash and
/// what follows it), and the bytes it took; `None` when it is not a JSON
/// escape: an unknown letter, a `\u` without four hex digits after it
/// (`\u+041` is not `A`), a lone surrogate unless `lone` replaces it, or a
/// backslash that ends the text.
pub fn read_escape(escape: &str, lone: LoneSurrogate) -> Option<(char, usize)> {
    match *escape.as_bytes().get(1)? {
        b'u' => unicode_escape(escape.as_bytes(), lone),
        letter => simple_escape(letter).map(|byte| (char::from(byte), 2)),
    }
}

/// The bytes the escape that `escape` starts with takes, as [`read_escape`]
/// reads it, without making its character: for a reader that skips a
/// string, in which JSON or code has an escape every few bytes.
pub fn escape_len(escape: &str, lone: LoneSurrogate) -> Option<usize> {
    match simple_escape(*escape.as_bytes().get(1)?) {
        Some(_) => Some(2),
        None => read_escape(escape, lone).map(|(_, len)| len),
    }
}

/// Unescapes the JSON string body that `body` starts with (what follows
/// its opening quote, or a later part of it) onto `out`, up to its closing
/// quote, and returns where that quote is. `None` for a raw control
/// character, an escape [`read_escape`] refuses (a lone surrogate
/// included) or no closing quote: what serde_json must judge.
///
/// With the routines of `level` (which this CPU must run: see
/// [`Level::supported`]): AVX2 takes the body thirty-two bytes at a time
/// and a two-letter escape where it stands, while sixty-four bytes are
/// left; the rest goes run by run ([`clean_prefix_len_at`]) and escape by
/// escape. Tool output has an escape every twenty bytes or so, and taking
/// each run and escape through calls (a copy, [`read_escape`], a push) was
/// a seventh of agy-encode's time.
pub fn unescape_body_at(level: Level, body: &str, out: &mut Vec<u8>) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut at = unescape_vectored(level, bytes, out);
    loop {
        let run = clean_prefix_len_at(level, &bytes[at..]);
        out.extend_from_slice(&bytes[at..at + run]);
        at += run;
        match *bytes.get(at)? {
            b'"' => return Some(at),
            b'\\' => {
                let (c, used) = read_escape(&body[at..], LoneSurrogate::Refuse)?;
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                at += used;
            }
            _ => return None,
        }
    }
}

/// Appends the text of `body`, a JSON string's body with no closing quote
/// in it (the whole of what a string holds, as a tool's output is kept),
/// to `out`, unescaped, lone surrogates read as `lone` says; `false` at a
/// bad escape, with the text before it appended. A quote or control
/// character in `body`, which a string's body cannot hold, is taken as it
/// stands. With the routines of `level` (which this CPU must run), as
/// [`unescape_body_at`]: the vectored routine goes as far as it can, an
/// escape it leaves is read on its own, and it goes on after that.
pub fn unescape_text_at(level: Level, body: &str, lone: LoneSurrogate, out: &mut String) -> bool {
    let bytes = body.as_bytes();
    // SAFETY: what is appended is `body`'s bytes in their order, cut only
    // at a backslash (ASCII, so between characters), with each escape
    // replaced by a whole character: `out` is UTF-8 again whenever this
    // returns, and nothing reads it before.
    let out = unsafe { out.as_mut_vec() };
    let mut start = 0;
    loop {
        start += unescape_vectored(level, &bytes[start..], out);
        let Some(at) = memchr::memchr(b'\\', &bytes[start..]) else {
            out.extend_from_slice(&bytes[start..]);
            return true;
        };
        let at = start + at;
        out.extend_from_slice(&bytes[start..at]);
        let Some((c, used)) = read_escape(&body[at..], lone) else {
            return false;
        };
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        start = at + used;
    }
}

/// The byte a two-letter escape stands for, given its letter (`n` for
/// `\n`); `None` for `u` and for what is no escape.
#[inline]
pub fn simple_escape(letter: u8) -> Option<u8> {
    match SIMPLE_ESCAPE[usize::from(letter)] {
        0 => None,
        byte => Some(byte),
    }
}

/// What each letter after a backslash stands for in a two-letter escape,
/// 0 for `u` and for what is no escape.
static SIMPLE_ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0c;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

/// Unescapes from the start of `body` while its routine can, and returns
/// where it stopped: at a quote, a control character, a `\u` or bad
/// escape, or short of the end (none of it at the scalar level, SSE2 or
/// SSSE3, and on other architectures).
#[cfg(target_arch = "x86_64")]
fn unescape_vectored(level: Level, body: &[u8], out: &mut Vec<u8>) -> usize {
    match level {
        // SAFETY: `level` is never above what the CPU has
        // (crate::stream::simd); the function touches memory only through
        // slices and `out`'s spare capacity, as it says.
        Level::Avx2 => unsafe { unescape_avx2(body, out) },
        _ => 0,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn unescape_vectored(_level: Level, _body: &[u8], _out: &mut Vec<u8>) -> usize {
    0
}

/// Each round takes a block of thirty-two bytes of the body and writes it
/// into `out`'s spare capacity escape by escape: the run before an escape
/// is stored thirty-two bytes at a time (what lies past the run is
/// overwritten by what comes next), the escape as its byte, and the next
/// run starts after the escape's letter. It stops before a quote, a
/// control character, a `\u` or bad escape, and returns where.
///
/// A round per escape, as this was written first, made the loop's exit
/// (did the block end or an escape?) a branch no predictor guesses in tool
/// output, which has an escape every twenty bytes or so; going through the
/// escapes of a block leaves one such guess a block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn unescape_avx2(body: &[u8], out: &mut Vec<u8>) -> usize {
    use super::escape::special_avx2;
    use std::arch::x86_64::*;
    let mut i = 0;
    // Every read is within the 64 bytes from `i`: a run is stored from at
    // most 31 bytes in and takes 32, and an escape's letter is at most 32
    // bytes in (the next block then starts after it).
    while i + 64 <= body.len() {
        out.reserve(64);
        let from_block = body[i..i + 64].as_ptr();
        // SAFETY: 32 bytes are there; the load is unaligned.
        let v = unsafe { _mm256_loadu_si256(from_block.cast()) };
        let (_, special) = special_avx2(v);
        let room = out.spare_capacity_mut()[..64].as_mut_ptr().cast::<u8>();
        if special == 0 {
            // SAFETY: 64 bytes of spare capacity are there; the store is
            // unaligned and writes the 32 bytes made `out`'s next.
            unsafe {
                _mm256_storeu_si256(room.cast(), v);
                out.set_len(out.len() + 32);
            }
            i += 32;
            continue;
        }
        let mut mask = u64::from(special);
        // Where the block's next run starts, and how much was written.
        let (mut from, mut written) = (0, 0);
        while mask != 0 {
            let at = mask.trailing_zeros() as usize;
            // SAFETY: `at` < 32 and `at + 1` <= 32: within the 64 bytes.
            let (b, next) = unsafe { (*from_block.add(at), *from_block.add(at + 1)) };
            let letter = match b {
                b'\\' => SIMPLE_ESCAPE[usize::from(next)],
                _ => 0,
            };
            // SAFETY: the run from `from` (<= 31) is 32 bytes within the
            // 64; `written` + 32 <= 64, since each run and escape written
            // before took no more bytes of the block than it was.
            unsafe {
                let run = _mm256_loadu_si256(from_block.add(from).cast());
                _mm256_storeu_si256(room.add(written).cast(), run);
            }
            written += at - from;
            if letter == 0 {
                // SAFETY: the store above wrote these bytes, runs and
                // escapes of the body.
                unsafe { out.set_len(out.len() + written) };
                return i + at;
            }
            // SAFETY: `written` < 32 here (the run ended before byte 32).
            unsafe { room.add(written).write(letter) };
            written += 1;
            from = at + 2;
            // The letter may itself be marked (`\\`, `\"`).
            mask &= !((2 << (at + 1)) - 1);
        }
        if from < 32 {
            // SAFETY: as above: the run from `from` is within the 64 bytes
            // and `written` + 32 <= 64.
            unsafe {
                let run = _mm256_loadu_si256(from_block.add(from).cast());
                _mm256_storeu_si256(room.add(written).cast(), run);
            }
            written += 32 - from;
            from = 32;
        }
        // SAFETY: the stores above wrote these bytes.
        unsafe { out.set_len(out.len() + written) };
        i += from;
    }
    i
}

/// `\uXXXX`, or a surrogate pair of two such escapes.
fn unicode_escape(escape: &[u8], lone: LoneSurrogate) -> Option<(char, usize)> {
    let first = utf16_unit(escape.get(2..6)?)?;
    if let Some(c) = char::from_u32(first) {
        return Some((c, 6));
    }
    if first < 0xdc00 && escape.get(6..8) == Some(b"\\u") {
        let second = escape.get(8..12).and_then(utf16_unit);
        if let Some(second) = second.filter(|s| (0xdc00..0xe000).contains(s)) {
            let c = char::from_u32(0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00))
                .expect("a surrogate pair is a character");
            return Some((c, 12));
        }
    }
    match lone {
        LoneSurrogate::Refuse => None,
        LoneSurrogate::Replace => Some(('\u{FFFD}', 6)),
    }
}

/// The value of four hex digits (either case); `None` for anything else
/// (`u32::from_str_radix` would take a leading `+`).
fn utf16_unit(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |value, &d| {
        let digit = char::from(d).to_digit(16)?;
        Some(value << 4 | digit)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use LoneSurrogate::*;

    /// What serde_json reads `escape` as, inside a string on its own.
    fn serde(escape: &str) -> Option<String> {
        serde_json::from_str::<String>(&format!("\"{escape}\"")).ok()
    }

    /// The escapes of one letter after the backslash, and one `\uXXXX`.
    const SHORT_ESCAPES: [&str; 9] = [
        r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\n", r"\r", r"\t", r"\u0041",
    ];

    #[test]
    fn escapes_read_as_serde_json_reads_them() {
        let more = [
            r"\u00e9",
            r"\u00E9",
            r"\u2014",
            r"\ud83d\ude00",
            r"\uD83D\uDE00",
            r"\uffff",
            r"\u0000",
        ];
        for escape in SHORT_ESCAPES.into_iter().chain(more) {
            let expected = serde(escape).unwrap();
            for lone in [Refuse, Replace] {
                let (c, used) = read_escape(escape, lone).unwrap();
                assert_eq!((c.to_string(), used), (expected.clone(), escape.len()));
            }
        }
    }

    #[test]
    fn bad_escapes_are_refused() {
        for escape in [
            r"\", r"\x", r"\u", r"\u12", r"\u+041", r"\u-041", r"\u 041", r"\u004g", r"\U0041",
            "\\\u{e9}",
        ] {
            assert_eq!(serde(escape), None, "{escape}");
            for lone in [Refuse, Replace] {
                assert_eq!(read_escape(escape, lone), None, "{escape}");
            }
        }
    }

    #[test]
    fn lone_surrogates_are_refused_or_replaced() {
        for (escape, used) in [
            (r"\ud800", 6),
            (r"\udc00", 6),
            (r"\ud800\u0041", 6),
            (r"\ud800\ud800", 6),
            (r"\ud800\u+c00", 6),
            (r"\udfff\udc00", 6),
        ] {
            assert_eq!(read_escape(escape, Refuse), None, "{escape}");
            assert_eq!(read_escape(escape, Replace), Some(('\u{FFFD}', used)));
        }
        // The escape after a lone one is read on its own.
        assert_eq!(read_escape(r"\u0041", Refuse), Some(('A', 6)));
    }

    /// `body` (a string's inside, its closing quote and what follows)
    /// unescaped at every level this CPU runs is what serde_json reads,
    /// and `None` only where serde refuses the string.
    fn every_level_unescapes_as_serde(body: &str) {
        let expected = serde_json::Deserializer::from_str(&format!("\"{body}"))
            .into_iter::<String>()
            .next()
            .and_then(Result::ok);
        for level in Level::supported_levels() {
            let mut out = b"before".to_vec();
            let got = unescape_body_at(level, body, &mut out);
            match &expected {
                Some(text) => {
                    let end = got.unwrap_or_else(|| panic!("{level:?} {body:?}"));
                    assert_eq!(body.as_bytes()[end], b'"', "{level:?} {body:?}");
                    assert_eq!(&out[6..], text.as_bytes(), "{level:?} {body:?}");
                }
                None => assert_eq!(got, None, "{level:?} {body:?}"),
            }
        }
    }

    /// Bodies of plain text (ASCII and longer characters) with one of
    /// `SHORT_ESCAPES` or `more` put in at each place about the 32- and
    /// 64-byte edges the vectored routines cut at, for lengths about them.
    fn bodies_with_each(more: &[&str]) -> Vec<String> {
        let plain = "abcdefghijklmnopqrstuvwxyz0123456789 é✓ ";
        let mut bodies = Vec::new();
        for special in SHORT_ESCAPES.iter().chain(more) {
            for len in [0, 1, 31, 32, 33, 63, 64, 65, 100, 130] {
                for at in [0, 1, 31, 32, 33, 63, 64, 65, 100] {
                    let mut body: String = plain.chars().cycle().take(len).collect();
                    let at = (0..=at.min(body.len()))
                        .rev()
                        .find(|&i| body.is_char_boundary(i))
                        .unwrap();
                    body.insert_str(at, special);
                    bodies.push(body);
                }
            }
        }
        bodies
    }

    #[test]
    fn bodies_unescape_as_serde_reads_them() {
        let more = [
            r"\ud83d\ude00",
            r"\ud800",
            r"\x",
            "\u{1}",
            "\t",
            r#"""#,
            r"\u12",
        ];
        for body in bodies_with_each(&more) {
            every_level_unescapes_as_serde(&(body.clone() + "\" tail"));
            every_level_unescapes_as_serde(&(body.clone() + "\\n\""));
            // No closing quote.
            every_level_unescapes_as_serde(&body);
        }
        let dense = r#"{\"a\":\"b\\n\",\"c\":[1,2]}"#.repeat(20) + "\"";
        every_level_unescapes_as_serde(&dense);
    }

    /// Two escapes at every pair of places in and about a block (the
    /// second may be a stop: a quote, a `\u`, a bad escape), since the
    /// vectored routine goes through a block's escapes one after another
    /// and the first's letter can be the next block's first byte.
    #[test]
    fn pairs_of_escapes_in_a_block_unescape_as_serde_reads_them() {
        let plain = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(3);
        for first in [r"\n", r"\\", r#"\""#] {
            for second in [r"\t", r"\\", r#"\""#, "\"", r"\u00e9", r"\q"] {
                for a in 0..36 {
                    for b in a..a + 36 {
                        let mut body = plain.clone();
                        body.insert_str(b, second);
                        body.insert_str(a, first);
                        every_level_unescapes_as_serde(&(body + "\" tail"));
                    }
                }
            }
        }
    }

    /// [`unescape_text_at`]'s rule one character at a time: the plain
    /// reference every level is held to.
    fn unescape_text_by_walking(body: &str, lone: LoneSurrogate, out: &mut String) -> bool {
        let mut at = 0;
        while let Some(c) = body[at..].chars().next() {
            if c != '\\' {
                out.push(c);
                at += c.len_utf8();
                continue;
            }
            let Some((c, used)) = read_escape(&body[at..], lone) else {
                return false;
            };
            out.push(c);
            at += used;
        }
        true
    }

    #[test]
    fn texts_unescape_at_every_level_as_walking_reads_them() {
        let plain = "abcdefghijklmnopqrstuvwxyz0123456789 é✓ ";
        let more = [
            r"\ud83d\ude00",
            r"\ud800",
            r"\x",
            "\u{1}",
            r#"""#,
            r"\u12",
            "\\",
        ];
        let mut read = 0;
        for body in bodies_with_each(&more) {
            for body in [body.clone(), body.clone() + r"\n" + plain, body.repeat(3)] {
                for lone in [Refuse, Replace] {
                    let mut expected = "before".to_string();
                    let whole = unescape_text_by_walking(&body, lone, &mut expected);
                    read += usize::from(whole);
                    for level in Level::supported_levels() {
                        let mut out = "before".to_string();
                        let got = unescape_text_at(level, &body, lone, &mut out);
                        assert_eq!((got, &out), (whole, &expected), "{level:?} {body:?}");
                    }
                    // Where serde reads the body as a whole string, it
                    // reads the same.
                    if let (Refuse, Some(text)) = (lone, serde(&body)) {
                        assert!(whole, "{body:?}");
                        assert_eq!(expected[6..], text, "{body:?}");
                    }
                }
            }
        }
        // Both answers were met often.
        assert!(read > 1000, "{read}");
    }

    #[test]
    fn escape_len_is_read_escapes_length() {
        for letter in 0..=255u8 {
            for tail in ["", "0041", "d83d\\ude00", "d800x", "12g4"] {
                let mut escape = vec![b'\\', letter];
                escape.extend_from_slice(tail.as_bytes());
                let Ok(escape) = String::from_utf8(escape) else {
                    continue;
                };
                for lone in [LoneSurrogate::Refuse, LoneSurrogate::Replace] {
                    assert_eq!(
                        escape_len(&escape, lone),
                        read_escape(&escape, lone).map(|(_, len)| len),
                        "{escape:?}"
                    );
                }
            }
        }
    }
}
