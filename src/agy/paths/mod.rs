//! Paths as agy writes them, and a directory moved over them: what
//! `agy-edit move` rewrites, what `agy-ls --under` selects by, and how
//! `agy-encode --onto` applies a new working directory.
//!
//! agy names a conversation's project, and its tools name files, as plain
//! paths (`/home/me/app`, `C:\Users\me\app`) and as `file://` URIs
//! (`file:///home/me/app`, `file:///C:/Users/me/app`, and as one tool wrote
//! them, `file:///c%3A/Users/me/app`; FORMAT.md 15 row 7), and each of those
//! inside JSON strings, once (a tool's arguments, a transcript line) or
//! twice (arguments inside a transcript line).
//!
//! A [`Dir`] says whether a path or URI names it or something under it,
//! comparing decoded paths component by component (`/a/b` holds `/a/b`
//! and `/a/b/c`, never `/a/bc`; a Windows drive letter in either case).
//! A [`Move`] rewrites text: each place that names OLD or a path under it,
//! in any of those forms, gets NEW written in the same form, so a move and
//! its reverse give back the bytes they started from. Where a place starts
//! and ends is told by the bytes around it (see `matcher`); a form no writer
//! is known to use (a URI with `%2F` for a slash) is not recognised, and
//! [`Dir::contains`] with [`Move`] lets a caller tell that it was missed.
//!
//! Imports: [`crate::error`] and [`crate::agy::uri`].

mod forms;
mod matcher;

pub use matcher::Stream;

use std::cell::Cell;

use crate::error::{Error, Result};

use forms::Form;
use matcher::Anchors;

/// An absolute directory (or file), POSIX or Windows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dir {
    /// As given, without separators at its end.
    given: String,
    /// The drive letter of a Windows path, upper-case.
    drive: Option<u8>,
    /// The path after the drive, `/`-separated, starting with `/`, without
    /// one at its end unless it is the root.
    rest: String,
}

impl Dir {
    /// A path (or a `file://` URI) as a directory: absolute, POSIX
    /// (`/home/me`) or Windows (`C:\Users\me`, `C:/Users/me`).
    pub fn parse(text: &str) -> Result<Dir> {
        if text.bytes().any(|b| b < 0x20 || b == 0x7f) {
            return Err(Error::usage(format!(
                "{text:?} holds a control character; no path agy wrote does"
            )));
        }
        let (drive, rest) = split(text).ok_or_else(|| {
            Error::usage(format!(
                "{text:?} is not an absolute path (/home/me/app, C:\\Users\\me\\app)"
            ))
        })?;
        let uri_like = text.starts_with("file://") || (drive.is_some() && text.starts_with('/'));
        let given = match uri_like {
            true => match drive {
                Some(d) => format!("{}:{rest}", d as char),
                None => rest.clone(),
            },
            false => match text {
                _ if text.len() > 1 => {
                    let trimmed = text.trim_end_matches(['/', '\\']);
                    match trimmed.len() {
                        0 => "/".to_string(),
                        // `C:` alone keeps its separator.
                        2 if drive.is_some() => text[..3.min(text.len())].to_string(),
                        _ => trimmed.to_string(),
                    }
                }
                _ => text.to_string(),
            },
        };
        // agy records the directory it was started in, resolved: a path
        // with `.` or `..` in it names nothing agy wrote, and would match
        // nothing without a word.
        if rest.split('/').any(|part| part == "." || part == "..") {
            return Err(Error::usage(format!(
                "{text:?} has a . or .. in it; give the directory as agy records it, resolved \
                 (realpath prints it)"
            )));
        }
        Ok(Dir {
            given,
            drive: drive.map(|d| d.to_ascii_uppercase()),
            rest,
        })
    }

    /// Whether `other` names the same directory, however either was
    /// written (`c:/Users/me` and `C:\Users\me\` do).
    pub fn is_same(&self, other: &Dir) -> bool {
        self.drive == other.drive && self.rest == other.rest
    }

    /// The directory as given (without separators at its end).
    pub fn as_str(&self) -> &str {
        &self.given
    }

    /// Whether it is a file system's root (`/`, `C:\`).
    pub fn is_root(&self) -> bool {
        self.rest == "/"
    }

    /// Whether `path` (a path or a `file://` URI, in any form agy writes)
    /// is this directory or under it.
    pub fn contains(&self, path: &str) -> bool {
        let Some((drive, rest)) = split(path) else {
            return false;
        };
        if drive.map(|d| d.to_ascii_uppercase()) != self.drive {
            return false;
        }
        let rest = rest.as_bytes();
        let own = self.rest.as_bytes();
        rest == own || (rest.starts_with(own) && (own.ends_with(b"/") || rest[own.len()] == b'/'))
    }

    /// The path in `/` form after the drive.
    fn rest(&self) -> &str {
        &self.rest
    }

    /// The path written with `separator` between its components (a POSIX
    /// path keeps its own).
    fn with_separator(&self, separator: char) -> String {
        match self.drive {
            Some(_) => {
                let letter = self.given.as_bytes()[0] as char;
                format!(
                    "{letter}:{}",
                    self.rest.replace('/', &separator.to_string())
                )
            }
            None => self.rest.clone(),
        }
    }
}

/// A path or `file://` URI as (drive, rest): percent escapes decoded,
/// `\` read as `/`, no separator at the end but for the root; `None` when
/// it is not absolute.
fn split(text: &str) -> Option<(Option<u8>, String)> {
    let path = match text.strip_prefix("file://") {
        Some(rest) => {
            let rest = rest.strip_prefix("localhost").unwrap_or(rest);
            crate::agy::uri::uri_to_path(&format!("file://{rest}"))
        }
        None => text.to_string(),
    };
    // `file:///C:/…` decodes to `/C:/…` (agy-decode shows a Windows
    // working directory so): the drive comes after the URI's own slash.
    let path = match path.as_bytes() {
        [b'/', d, b':'] | [b'/', d, b':', b'/' | b'\\', ..] if d.is_ascii_alphabetic() => {
            path[1..].to_string()
        }
        _ => path,
    };
    let bytes = path.as_bytes();
    let (drive, rest) = match bytes {
        [d, b':'] if d.is_ascii_alphabetic() => (Some(*d), "/".to_string()),
        [d, b':', b'/' | b'\\', ..] if d.is_ascii_alphabetic() => {
            (Some(*d), path[2..].replace('\\', "/"))
        }
        [b'/', ..] => (None, path.clone()),
        _ => return None,
    };
    let trimmed = rest.trim_end_matches('/');
    let rest = match trimmed.is_empty() {
        true => "/".to_string(),
        false => trimmed.to_string(),
    };
    Some((drive, rest))
}

/// A directory moved: every place a text names it, or a path under it, in
/// any form agy writes (plain, `file://` URI, JSON-escaped once or twice),
/// gets the new directory in the same form.
///
/// It is a [`crate::agy::patch::Rewrite`], so it rewrites the strings of a
/// protobuf message at every depth, and text; it counts the places it
/// rewrote ([`Move::take_count`]).
pub struct Move {
    from: Dir,
    to: Dir,
    forms: Vec<Form>,
    anchors: Anchors,
    /// The longest text it looks for, for [`Stream`].
    longest: usize,
    count: Cell<usize>,
}

impl Move {
    /// The move of `from` to `to`, both absolute; `from` may not be a
    /// root, since every path is under it.
    pub fn new(from: &str, to: &str) -> Result<Move> {
        let from = Dir::parse(from)?;
        let to = Dir::parse(to)?;
        if from.is_root() {
            return Err(Error::usage(format!(
                "cannot move {}: every path is under a root",
                from.as_str()
            )));
        }
        if to.is_root() {
            return Err(Error::usage(format!(
                "cannot move {} to a root: every path would then be under it, and no move could bring it back",
                from.as_str()
            )));
        }
        if from == to {
            return Err(Error::usage(format!(
                "{} is moved onto itself",
                from.as_str()
            )));
        }
        let forms = forms::of(&from, &to)?;
        let anchors = Anchors::of(&forms);
        let longest = forms.iter().map(|f| f.needle.len()).max().unwrap_or(0);
        Ok(Move {
            from,
            to,
            forms,
            anchors,
            longest,
            count: Cell::new(0),
        })
    }

    /// The directory moved.
    pub fn from(&self) -> &Dir {
        &self.from
    }

    /// Where it goes.
    pub fn to(&self) -> &Dir {
        &self.to
    }

    /// The places rewritten since the last call.
    pub fn take_count(&self) -> usize {
        self.count.replace(0)
    }

    /// `path`, a path or URI at or under [`Move::from`], moved: `None`
    /// when it is not, or is written in a form this does not recognise.
    pub fn path(&self, path: &str) -> Option<String> {
        let moved = crate::agy::patch::rewrite_text(path.as_bytes(), self)?;
        self.take_count();
        String::from_utf8(moved).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agy::patch::rewrite_text;

    fn moved(m: &Move, text: &str) -> String {
        match rewrite_text(text.as_bytes(), m) {
            Some(out) => String::from_utf8(out).unwrap(),
            None => text.to_string(),
        }
    }

    #[test]
    fn directories_hold_what_is_under_them() {
        let d = Dir::parse("/a/b/").unwrap();
        assert_eq!(d.as_str(), "/a/b");
        for inside in [
            "/a/b",
            "/a/b/",
            "/a/b/c",
            "file:///a/b",
            "file:///a/b/c%20d",
        ] {
            assert!(d.contains(inside), "{inside}");
        }
        for outside in ["/a/bc", "/a", "/x/a/b", "a/b", "file:///a/bc", ""] {
            assert!(!d.contains(outside), "{outside}");
        }
        let w = Dir::parse(r"c:\Users\me").unwrap();
        for inside in [
            r"C:\Users\me\x",
            "c:/Users/me",
            "file:///C:/Users/me/app",
            "file:///c%3A/Users/me",
            "file:///c%3a/Users/me/x",
        ] {
            assert!(w.contains(inside), "{inside}");
        }
        for outside in [r"D:\Users\me", "/Users/me", r"C:\Users\meme"] {
            assert!(!w.contains(outside), "{outside}");
        }
        assert!(Dir::parse("/").unwrap().contains("/anything"));
        // How agy-decode shows a Windows working directory.
        let shown = Dir::parse("/c:/Users/me/").unwrap();
        assert_eq!(shown.as_str(), "c:/Users/me");
        assert_eq!(shown, Dir::parse("c:/Users/me").unwrap());
        assert!(shown.contains("file:///C:/Users/me/x"));
        assert!(Dir::parse("relative/path").is_err());
        assert!(Dir::parse("/a\nb").is_err());
        assert!(Move::new("/", "/x").is_err());
        assert!(Move::new("/a/", "/a").is_err());
    }

    #[test]
    fn a_move_keeps_to_component_boundaries() {
        let m = Move::new("/home/dev/src/quill", "/home/dev/work/quill").unwrap();
        let cases = [
            ("/home/dev/src/quill", "/home/dev/work/quill"),
            (
                "cd /home/dev/src/quill && ls",
                "cd /home/dev/work/quill && ls",
            ),
            ("/home/dev/src/quill/a.rs:3", "/home/dev/work/quill/a.rs:3"),
            ("/home/dev/src/quillpen", "/home/dev/src/quillpen"),
            ("/home/dev/src/quill.bak", "/home/dev/src/quill.bak"),
            (
                "I moved to /home/dev/src/quill.",
                "I moved to /home/dev/work/quill.",
            ),
            ("/x/home/dev/src/quill", "/x/home/dev/src/quill"),
            (
                "PATH=/bin:/home/dev/src/quill/bin",
                "PATH=/bin:/home/dev/work/quill/bin",
            ),
            (
                "file:///home/dev/src/quill/a%20b",
                "file:///home/dev/work/quill/a%20b",
            ),
            (
                "file:///home/dev/src/quill%20x",
                "file:///home/dev/src/quill%20x",
            ),
            // JSON-escaped, once and twice.
            (
                r#""a\n/home/dev/src/quill\"""#,
                r#""a\n/home/dev/work/quill\"""#,
            ),
            (
                r#"{\"Cwd\":\"/home/dev/src/quill\"}"#,
                r#"{\"Cwd\":\"/home/dev/work/quill\"}"#,
            ),
            (r"\\n/home/dev/src/quill", r"\\n/home/dev/work/quill"),
            (
                r"\u003e/home/dev/src/quill/x",
                r"\u003e/home/dev/work/quill/x",
            ),
        ];
        for (before, after) in cases {
            assert_eq!(moved(&m, before), after, "{before}");
        }
        assert_eq!(m.take_count(), 10);
        assert_eq!(m.take_count(), 0);
    }

    #[test]
    fn uris_keep_their_encoding() {
        let m = Move::new("/home/me/my app", "/srv/new place").unwrap();
        assert_eq!(
            moved(&m, "file:///home/me/my%20app/x and /home/me/my app/y"),
            "file:///srv/new%20place/x and /srv/new place/y"
        );
        let back = Move::new("/srv/new place", "/home/me/my app").unwrap();
        assert_eq!(
            moved(&back, "file:///srv/new%20place/x and /srv/new place/y"),
            "file:///home/me/my%20app/x and /home/me/my app/y"
        );
    }

    #[test]
    fn windows_paths_in_every_form() {
        let m = Move::new(r"C:\Users\me\app", r"D:\work\app").unwrap();
        let cases = [
            (r"C:\Users\me\app\src", r"D:\work\app\src"),
            (r"c:\Users\me\app", r"d:\work\app"),
            ("C:/Users/me/app/x", "D:/work/app/x"),
            ("file:///C:/Users/me/app/x", "file:///D:/work/app/x"),
            ("file:///c%3A/Users/me/app", "file:///d%3A/work/app"),
            (
                r#"{"cwd":"C:\\Users\\me\\app"}"#,
                r#"{"cwd":"D:\\work\\app"}"#,
            ),
            (r"C:\Users\me\apps", r"C:\Users\me\apps"),
        ];
        for (before, after) in cases {
            assert_eq!(moved(&m, before), after, "{before}");
            let back = Move::new(r"D:\work\app", r"C:\Users\me\app").unwrap();
            assert_eq!(moved(&back, after), before, "back from {after}");
        }
        let to_linux = Move::new("C:/Users/me/app", "/home/me/app").unwrap();
        assert_eq!(
            moved(&to_linux, "file:///c%3A/Users/me/app/x"),
            "file:///home/me/app/x"
        );
        assert_eq!(
            to_linux.path("file:///C:/Users/me/app").as_deref(),
            Some("file:///home/me/app")
        );
    }

    #[test]
    fn a_move_reaches_every_depth_of_a_message_and_back() {
        use crate::agy::patch::rewrite;
        use crate::agy::wire::{Message, Writer};
        let mut wrapped = Writer::new();
        wrapped.varint(1, 21).message(28, |c| {
            c.string(23, "ls /work/app").message(21, |o| {
                o.string(1, &"/work/app/x\n".repeat(20));
            });
        });
        let wrapped = wrapped.into_bytes();
        let mut w = Writer::new();
        w.varint(1, 132)
            .string(3, r#"{"Cwd":"/work/app","Other":"/work/apps"}"#)
            .message(140, |g| {
                g.message(1, |e| {
                    e.string(1, "Cwd").string(2, "/work/app");
                })
                .message(2, |r| {
                    r.string(1, "in /work/app")
                        .bytes(9, &[0xff, b'/', b'w'])
                        .message(6, |any| {
                            any.string(1, "type.googleapis.com/gemini_coder.Step")
                                .bytes(2, &wrapped);
                        });
                });
            })
            .fixed64(99, 7);
        let step = w.into_bytes();
        let m = Move::new("/work/app", "/srv/the application").unwrap();
        let out = rewrite(&step, &m).unwrap();
        assert_eq!(m.take_count(), 24);
        let moved = Message::new(&out);
        assert_eq!(
            moved.get_str(3).unwrap(),
            r#"{"Cwd":"/srv/the application","Other":"/work/apps"}"#
        );
        let generic = moved.get_message(140).unwrap();
        assert_eq!(
            generic.get_message(1).unwrap().get_str(2).unwrap(),
            "/srv/the application"
        );
        let result = generic.get_message(2).unwrap();
        assert_eq!(result.get_bytes(9).unwrap(), &[0xff, b'/', b'w']);
        let inner = result.get_message(6).unwrap().get_bytes(2).unwrap();
        let output = Message::new(inner)
            .get_message(28)
            .and_then(|c| c.get_message(21))
            .and_then(|o| o.get_str(1))
            .unwrap();
        assert!(output.starts_with("/srv/the application/x\n"), "{output}");
        assert!(out.ends_with(&step[step.len() - 9..]), "the unknown field");
        let back = Move::new("/srv/the application", "/work/app").unwrap();
        assert_eq!(rewrite(&out, &back).unwrap(), step);
        assert_eq!(rewrite(&step, &back), None);
    }
}
