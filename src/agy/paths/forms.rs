//! The forms a path is written in, each a text to look for and the text
//! that takes its place: plain (with `\` and with `/` for a Windows path),
//! as a `file://` URI in each way writers percent-encode one, and each of
//! those escaped for a JSON string once and twice.

use crate::error::{Error, Result};

use super::Dir;

/// One form of the moved directory: what is looked for and what is
/// written instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Form {
    pub needle: Vec<u8>,
    /// What is written when the drive letter found is upper-case, and when
    /// it is lower-case (the same when the directory has no drive).
    pub upper: Vec<u8>,
    pub lower: Vec<u8>,
    /// Where the drive letter is in the needle: matched in either case.
    pub drive_at: Option<usize>,
}

/// How a `file://` URI percent-encodes a path.
#[derive(Clone, Copy)]
enum Encoding {
    /// agy-tools' own (`crate::agy::uri::path_to_uri`): `%`, controls,
    /// space and non-ASCII escaped.
    Own,
    /// Go's `url.URL` path: all but `A-Za-z0-9-_.~$&+,/:;=@` escaped.
    Go,
    /// VS Code's: all but `A-Za-z0-9-_.~/` escaped, the drive's colon as
    /// `%3A` and its letter lower-case (`file:///c%3A/…`).
    VsCode,
}

const ENCODINGS: [Encoding; 3] = [Encoding::Own, Encoding::Go, Encoding::VsCode];

/// Every form of `from`, each with `to` in the same form; a needle that two
/// forms share is looked for once.
///
/// A path without `"` or `\` reads the same escaped for JSON or not, so
/// where one is found nothing says whether the text around it is escaped:
/// `to` must then need no escape either. A Windows `to` is written with
/// `/` there (Windows reads both), and a `"` or `\` in it is refused.
pub(super) fn of(from: &Dir, to: &Dir) -> Result<Vec<Form>> {
    let mut base: Vec<Form> = Vec::new();
    // Plain: a Windows path with either separator, each written with the
    // same one.
    let separators: &[char] = if from.drive.is_some() {
        &['\\', '/']
    } else {
        &['/']
    };
    for &sep in separators {
        let needle = from.with_separator(sep);
        let written = |lower: bool| match (from.drive, to.drive) {
            (Some(_), Some(_)) => with_drive_case(&to.with_separator(sep), 0, lower),
            // Into a POSIX path's places: with `/`, which needs no escape.
            (None, Some(_)) => to.with_separator('/'),
            _ => to.as_str().to_string(),
        };
        base.push(Form {
            drive_at: from.drive.map(|_| 0),
            upper: written(false).into_bytes(),
            lower: written(true).into_bytes(),
            needle: needle.into_bytes(),
        });
    }
    for encoding in ENCODINGS {
        let (needle, drive_at) = uri(from, encoding);
        let (to_uri, to_drive) = uri(to, encoding);
        let written = |lower: bool| match (drive_at, to_drive) {
            (Some(_), Some(at)) => with_drive_case(&to_uri, at, lower),
            _ => to_uri.clone(),
        };
        base.push(Form {
            drive_at,
            upper: written(false).into_bytes(),
            lower: written(true).into_bytes(),
            needle: needle.into_bytes(),
        });
    }
    for form in &base {
        let plain = |text: &[u8]| !text.iter().any(|b| matches!(b, b'"' | b'\\'));
        if plain(&form.needle) && !(plain(&form.upper) && plain(&form.lower)) {
            return Err(Error::usage(format!(
                "{:?} holds a quote or a backslash and {:?} does not: where {1:?} is found, nothing says whether the text around it is escaped for JSON, so the other cannot be written into it faithfully",
                to.as_str(),
                from.as_str()
            )));
        }
    }
    let mut forms: Vec<Form> = Vec::new();
    for level in 0..3 {
        for form in &base {
            let escaped = Form {
                needle: escape(&form.needle, level),
                upper: escape(&form.upper, level),
                lower: escape(&form.lower, level),
                drive_at: form.drive_at,
            };
            if !forms.iter().any(|f| f.needle == escaped.needle) {
                forms.push(escaped);
            }
        }
    }
    Ok(forms)
}

/// `text` with the letter at `at` in upper or lower case.
fn with_drive_case(text: &str, at: usize, lower: bool) -> String {
    let mut bytes = text.as_bytes().to_vec();
    bytes[at] = match lower {
        true => bytes[at].to_ascii_lowercase(),
        false => bytes[at].to_ascii_uppercase(),
    };
    String::from_utf8(bytes).expect("an ASCII letter changed case")
}

/// `dir` as a `file://` URI, and where its drive letter is in it.
fn uri(dir: &Dir, encoding: Encoding) -> (String, Option<usize>) {
    let path = encode(dir.rest(), encoding);
    match dir.drive {
        None => (format!("file://{path}"), None),
        Some(drive) => {
            let (letter, colon) = match encoding {
                Encoding::VsCode => (drive.to_ascii_lowercase() as char, "%3A"),
                _ => (dir.given.as_bytes()[0] as char, ":"),
            };
            (
                format!("file:///{letter}{colon}{path}"),
                Some("file:///".len()),
            )
        }
    }
}

/// `path` percent-encoded as `encoding` does it.
fn encode(path: &str, encoding: Encoding) -> String {
    if let Encoding::Own = encoding {
        return crate::agy::uri::path_to_uri(path)["file://".len()..].to_string();
    }
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        let kept = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/')
            || (matches!(encoding, Encoding::Go)
                && matches!(b, b'$' | b'&' | b'+' | b',' | b':' | b';' | b'=' | b'@'));
        match kept {
            true => out.push(b as char),
            false => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `text` escaped for the inside of a JSON string `level` times. A path
/// holds no control character ([`Dir::parse`]), so only `"` and `\` are
/// escaped, as every JSON writer escapes them.
fn escape(text: &[u8], level: u8) -> Vec<u8> {
    let mut out = text.to_vec();
    for _ in 0..level {
        let mut next = Vec::with_capacity(out.len() + 8);
        for &b in &out {
            if matches!(b, b'"' | b'\\') {
                next.push(b'\\');
            }
            next.push(b);
        }
        out = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needles(from: &str, to: &str) -> Vec<(String, String)> {
        of(&Dir::parse(from).unwrap(), &Dir::parse(to).unwrap())
            .unwrap()
            .into_iter()
            .map(|f| {
                (
                    String::from_utf8(f.needle).unwrap(),
                    String::from_utf8(f.upper).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn a_plain_posix_path_has_two_forms() {
        assert_eq!(
            needles("/a/b", "/c"),
            [
                ("/a/b".to_string(), "/c".to_string()),
                ("file:///a/b".to_string(), "file:///c".to_string())
            ]
        );
    }

    #[test]
    fn each_encoding_and_escape_is_a_form() {
        let forms = needles("/a/b (1)", "/c");
        let texts: Vec<&str> = forms.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            texts,
            ["/a/b (1)", "file:///a/b%20(1)", "file:///a/b%20%281%29"]
        );
        let forms = needles(r"C:\x", "/y");
        let texts: Vec<&str> = forms.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            texts,
            [
                r"C:\x",
                "C:/x",
                "file:///C:/x",
                "file:///c%3A/x",
                r"C:\\x",
                r"C:\\\\x"
            ]
        );
        let refused = |from: &str, to: &str| {
            of(&Dir::parse(from).unwrap(), &Dir::parse(to).unwrap()).is_err()
        };
        assert!(refused("/a", "/b\"c"));
        assert!(refused("/a", "/b\\c"));
        assert!(!refused("/a\"x", "/b\"c"));
        assert!(!refused(r"C:\a", r"D:\b"));
        let into_windows = needles("/a", r"D:\b");
        assert_eq!(into_windows[0], ("/a".to_string(), "D:/b".to_string()));
    }
}
