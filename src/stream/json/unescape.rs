//! Reading JSON string escapes: the one reading of `\n`, `\uXXXX` and the
//! rest, for the message reader (which leaves anything doubtful to serde)
//! and the renderer (which shows a lone surrogate as U+FFFD).

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
    let c = match *escape.as_bytes().get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return unicode_escape(escape.as_bytes(), lone),
        _ => return None,
    };
    Some((c, 2))
}

/// The bytes the escape that `escape` starts with takes, as [`read_escape`]
/// reads it, without making its character: for a reader that skips a
/// string, in which JSON or code has an escape every few bytes.
pub fn escape_len(escape: &str, lone: LoneSurrogate) -> Option<usize> {
    match *escape.as_bytes().get(1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        _ => read_escape(escape, lone).map(|(_, len)| len),
    }
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

    #[test]
    fn escapes_read_as_serde_json_reads_them() {
        for escape in [
            r#"\""#,
            r"\\",
            r"\/",
            r"\b",
            r"\f",
            r"\n",
            r"\r",
            r"\t",
            r"\u0041",
            r"\u00e9",
            r"\u00E9",
            r"\u2014",
            r"\ud83d\ude00",
            r"\uD83D\uDE00",
            r"\uffff",
            r"\u0000",
        ] {
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
