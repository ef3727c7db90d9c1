//! What a tool call and its result show, decided once for both output
//! formats: an Edit or MultiEdit is a diff, a Write is the file it writes,
//! anything else is its input as indented JSON; a result is text, a file
//! change, content blocks or JSON.

use std::borrow::Cow;

use super::pretty::Pretty;
use super::stream::{Members, Raw};
use super::text::Text;

/// How a call's input is shown.
pub enum CallView<'a> {
    /// `Edit` and `MultiEdit`: each edit as a diff.
    Edit {
        path: Option<Cow<'a, str>>,
        edits: Vec<EditView<'a>>,
        /// The other arguments, as indented JSON, when there are any.
        rest: Option<String>,
    },
    /// `Write`: the file's content (a long one left in the line, to be
    /// written in pieces).
    Write {
        path: Option<Cow<'a, str>>,
        content: Text<'a>,
        rest: Option<String>,
    },
    /// Anything else: the input, indented.
    Json(Pretty<'a>),
}

/// One edit: its old and new strings as the bodies of their JSON string
/// literals, left in the line ([`super::diff`] reads them there).
pub struct EditView<'a> {
    pub old: &'a str,
    pub new: &'a str,
    pub replace_all: bool,
}

/// Keys that Edit, MultiEdit and Write show as a diff or a file, so the
/// "other arguments" leave them out.
const EDIT_KEYS: &[&str] = &[
    "file_path",
    "old_string",
    "new_string",
    "replace_all",
    "edits",
];
const WRITE_KEYS: &[&str] = &["file_path", "content"];

/// How a call shows, and the one line that heads it: the path an Edit or
/// Write changes, else the argument that says most ([`summary`]).
pub fn show<'a>(name: &str, input: Raw<'a>) -> (CallView<'a>, Option<String>) {
    let args = Members::of(input);
    let view = view(name, input, args.as_ref());
    let path = match &view {
        CallView::Edit { path, .. } | CallView::Write { path, .. } => path.as_deref(),
        CallView::Json(_) => None,
    };
    let head = path
        .map(str::to_string)
        .or_else(|| args.as_ref().and_then(summary));
    (view, head)
}

pub fn view<'a>(name: &str, input: Raw<'a>, args: Option<&Members<'a>>) -> CallView<'a> {
    let Some(args) = args else {
        return CallView::Json(Pretty::of(input.get()));
    };
    match name {
        "Edit" => {
            if let Some(edit) = edit_view(args) {
                return CallView::Edit {
                    path: args.string("file_path"),
                    edits: vec![edit],
                    rest: rest(args, EDIT_KEYS),
                };
            }
        }
        "MultiEdit" => {
            let items = args
                .get("edits")
                .and_then(|raw| serde_json::from_str::<Vec<Members>>(raw.get()).ok());
            let edits: Option<Vec<_>> =
                items.and_then(|items| items.iter().map(edit_view).collect());
            if let Some(edits) = edits {
                return CallView::Edit {
                    path: args.string("file_path"),
                    edits,
                    rest: rest(args, EDIT_KEYS),
                };
            }
        }
        "Write" => {
            if let Some(content) = args.get("content").and_then(Text::of_json) {
                return CallView::Write {
                    path: args.string("file_path"),
                    content,
                    rest: rest(args, WRITE_KEYS),
                };
            }
        }
        _ => {}
    }
    CallView::Json(Pretty::of(input.get()))
}

fn edit_view<'a>(args: &Members<'a>) -> Option<EditView<'a>> {
    let body = |key: &str| {
        let raw = args.get(key)?.get();
        raw.strip_prefix('"')?.strip_suffix('"')
    };
    Some(EditView {
        old: body("old_string")?,
        new: body("new_string")?,
        replace_all: args.is_true("replace_all"),
    })
}

/// The arguments other than `shown`, as indented JSON, if any are left.
fn rest(args: &Members, shown: &[&str]) -> Option<String> {
    let left = Members(
        args.0
            .iter()
            .filter(|(key, _)| !shown.contains(&key.as_ref()))
            .cloned()
            .collect(),
    );
    (!left.0.is_empty()).then(|| Pretty::of_members(&left).whole())
}

/// The argument that says most about a call in one line (a command, a
/// path, a query), cut to its first line and [`SUMMARY_CHARS`] characters.
pub fn summary(args: &Members) -> Option<String> {
    const KEYS: &[&str] = &[
        "command",
        "file_path",
        "CommandLine",
        "AbsolutePath",
        "TargetFile",
        "Query",
        "query",
        "Pattern",
        "pattern",
        "Url",
        "url",
        "DirectoryPath",
        "SearchPath",
        "SearchDirectory",
        "path",
        "ToolName",
        "description",
    ];
    let body = KEYS.iter().find_map(|key| {
        let raw = args.get(key)?.get();
        raw.strip_prefix('"')?.strip_suffix('"')
    })?;
    first_line(body).map(|line| cut(line.trim_end(), SUMMARY_CHARS))
}

/// The first line of the string whose JSON body is `body` that is not
/// blank, without its leading white space, read only as far as it takes
/// to know where [`cut`] cuts it: the string can be a command of
/// megabytes.
fn first_line(body: &str) -> Option<String> {
    // Room for as much as is kept, at four bytes a character at most.
    let mut line = String::with_capacity(body.len().min(4 * (SUMMARY_CHARS + 1)));
    let mut chars = 0;
    for c in super::text::json_chars(body) {
        match c {
            '\n' if line.trim_end().is_empty() => {
                line.clear();
                chars = 0;
            }
            '\n' => return Some(line),
            c if chars == 0 && c.is_whitespace() => {}
            c => {
                line.push(c);
                chars += 1;
                // More than the cut keeps, and not white space that the
                // end of the line could trim: cut here whatever follows.
                if chars > SUMMARY_CHARS && !c.is_whitespace() {
                    return Some(line);
                }
            }
        }
    }
    (!line.trim_end().is_empty()).then_some(line)
}

pub const SUMMARY_CHARS: usize = 160;

/// `text` cut to `max` characters, with an ellipsis when cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// How a result is shown.
pub enum ResultView<'a> {
    Empty,
    /// Text, as the body of its JSON string literal (still escaped): large
    /// output is unescaped straight into the page.
    JsonText(&'a str),
    /// agy-decode's `{"file":PATH,"created"|"edited"|"deleted":true}`.
    File {
        verb: &'static str,
        path: Cow<'a, str>,
    },
    /// Content blocks, as the Messages API allows in a result.
    Blocks(Vec<Members<'a>>),
    Json(Pretty<'a>),
}

/// How `content` shows.
pub fn result_view(content: Option<Raw<'_>>) -> ResultView<'_> {
    let Some(raw) = content else {
        return ResultView::Empty;
    };
    let json = raw.get();
    if let Some(body) = json.strip_prefix('"').and_then(|j| j.strip_suffix('"')) {
        return if body.is_empty() {
            ResultView::Empty
        } else {
            ResultView::JsonText(body)
        };
    }
    match json.as_bytes().first() {
        Some(b'n') => ResultView::Empty,
        Some(b'{') => {
            if let Some(members) = Members::of(raw) {
                let verb = ["created", "edited", "deleted"]
                    .into_iter()
                    .find(|verb| members.is_true(verb));
                if let (Some(path), Some(verb), 2) = (members.string("file"), verb, members.0.len())
                {
                    return ResultView::File { verb, path };
                }
            }
            ResultView::Json(Pretty::of(json))
        }
        Some(b'[') => match content_blocks(json) {
            Some(blocks) => ResultView::Blocks(blocks),
            None => ResultView::Json(Pretty::of(json)),
        },
        _ => ResultView::Json(Pretty::of(json)),
    }
}

/// The items of a JSON array when it is a non-empty list of text and
/// image blocks. Parsing stops at the first item that is not one, so a long
/// list of anything else (a directory listing) is not read twice.
fn content_blocks(json: &str) -> Option<Vec<Members<'_>>> {
    use serde::de::{Deserializer, Error, SeqAccess, Visitor};
    struct BlocksVisitor;
    impl<'de> Visitor<'de> for BlocksVisitor {
        type Value = Vec<Members<'de>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("content blocks")
        }
        fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
            let mut blocks = Vec::new();
            while let Some(item) = seq.next_element::<Members<'de>>()? {
                if !matches!(item.string("type").as_deref(), Some("text" | "image")) {
                    return Err(S::Error::custom("not a content block"));
                }
                blocks.push(item);
            }
            Ok(blocks)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let blocks = deserializer.deserialize_seq(BlocksVisitor).ok()?;
    (!blocks.is_empty()).then_some(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Raw<'_> {
        Raw::of(json).unwrap()
    }

    fn view_of<'a>(name: &str, input: Raw<'a>) -> CallView<'a> {
        view(name, input, Members::of(input).as_ref())
    }

    #[test]
    fn edits_become_diffs_and_keep_other_arguments() {
        let input = raw(
            r#"{"file_path":"/a.rs","old_string":"x\n","new_string":"y\n","Instruction":"fix"}"#,
        );
        let CallView::Edit { path, edits, rest } = view_of("Edit", input) else {
            panic!("not an edit view")
        };
        assert_eq!(path.as_deref(), Some("/a.rs"));
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].old, r"x\n");
        assert_eq!(rest.as_deref(), Some("{\n  \"Instruction\": \"fix\"\n}"));
        let multi = raw(
            r#"{"file_path":"/a.rs","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d","replace_all":true}]}"#,
        );
        let CallView::Edit { edits, rest, .. } = view_of("MultiEdit", multi) else {
            panic!("not an edit view")
        };
        assert_eq!(edits.len(), 2);
        assert!(edits[1].replace_all);
        assert!(rest.is_none());
    }

    #[test]
    fn malformed_edits_fall_back_to_json() {
        for (name, input) in [
            (
                "Edit",
                r#"{"file_path":"/a","old_string":1,"new_string":"y"}"#,
            ),
            ("MultiEdit", r#"{"edits":"not a list"}"#),
            ("MultiEdit", r#"{"edits":[1]}"#),
            ("Write", r#"{"file_path":"/a"}"#),
            ("Edit", r#""a string""#),
        ] {
            assert!(
                matches!(view_of(name, raw(input)), CallView::Json(_)),
                "{name} {input}"
            );
        }
    }

    #[test]
    fn results_by_shape() {
        let view = |json: &'static str| result_view(Some(raw(json)));
        assert!(matches!(view(r#""""#), ResultView::Empty));
        assert!(matches!(result_view(None), ResultView::Empty));
        assert!(matches!(view("null"), ResultView::Empty));
        assert!(matches!(view(r#""a\nb""#), ResultView::JsonText(r"a\nb")));
        assert!(matches!(
            view(r#"{"file":"/a","created":true}"#),
            ResultView::File {
                verb: "created",
                ..
            }
        ));
        assert!(matches!(
            view(r#"[{"type":"text","text":"a"}]"#),
            ResultView::Blocks(_)
        ));
        assert!(matches!(view(r#"[{"name":"a"}]"#), ResultView::Json(_)));
        assert!(matches!(view("[1]"), ResultView::Json(_)));
    }

    /// The first line read as far as the cut is the line `str::lines`
    /// finds, trimmed and cut.
    #[test]
    fn the_first_line_is_read_only_as_far_as_the_cut() {
        let whole = |text: &str| {
            text.lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| cut(l.trim(), SUMMARY_CHARS))
        };
        let alphabet = [
            " ", "a", "\n", "\t", "é", "\r", "\u{a0}", "\u{3000}", "\"", "😀",
        ];
        let mut state: u64 = 3;
        for round in 0..5000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let len = (state >> 40) as usize % 400;
            let mut text = String::new();
            for i in 0..len {
                let pick = (state >> (i % 50)) as usize + i * 7 + round;
                // Long runs of one letter make lines of about the cut.
                let letter = if pick.is_multiple_of(5) {
                    alphabet[pick % alphabet.len()]
                } else {
                    "a"
                };
                text.push_str(letter);
            }
            let literal = serde_json::to_string(&text).unwrap();
            let body = &literal[1..literal.len() - 1];
            assert_eq!(
                first_line(body).map(|l| cut(l.trim_end(), SUMMARY_CHARS)),
                whole(&text),
                "{text:?}"
            );
        }
        let edge = format!("\n \t\n  {}  \nnext", "x".repeat(SUMMARY_CHARS));
        let literal = serde_json::to_string(&edge).unwrap();
        assert_eq!(
            first_line(&literal[1..literal.len() - 1]).map(|l| cut(l.trim_end(), SUMMARY_CHARS)),
            whole(&edge)
        );
    }

    #[test]
    fn summaries_are_one_short_line() {
        let args = Members::of(raw(r#"{"command":"\n  cargo test\nmore"}"#)).unwrap();
        assert_eq!(summary(&args).as_deref(), Some("cargo test"));
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(summary(&Members::of(raw(r#"{"other":1}"#)).unwrap()), None);
    }
}
