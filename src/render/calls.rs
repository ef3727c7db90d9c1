//! What a tool call and its result show, decided once for both output
//! formats: an Edit or MultiEdit is a diff, a Write is the file it writes,
//! anything else is its input as indented JSON; a result is text, a file
//! change, content blocks or JSON.

use serde_json::{Map, Value};

use super::diff::{self, Hunk};

/// How a call's input is shown.
pub enum CallView<'a> {
    /// `Edit` and `MultiEdit`: each edit as a diff.
    Edit {
        path: Option<&'a str>,
        edits: Vec<EditView<'a>>,
        /// The other arguments, as JSON, when there are any.
        rest: Option<String>,
    },
    /// `Write`: the file's content.
    Write {
        path: Option<&'a str>,
        content: &'a str,
        rest: Option<String>,
    },
    /// Anything else: the input, indented.
    Json(String),
}

pub struct EditView<'a> {
    pub hunks: Vec<Hunk<'a>>,
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

pub fn view<'a>(name: &str, input: &'a Value) -> CallView<'a> {
    let Value::Object(args) = input else {
        return CallView::Json(pretty(input));
    };
    let str_arg = |key: &str| args.get(key).and_then(Value::as_str);
    match name {
        "Edit" => {
            if let Some(edit) = edit_view(args) {
                return CallView::Edit {
                    path: str_arg("file_path"),
                    edits: vec![edit],
                    rest: rest(args, EDIT_KEYS),
                };
            }
        }
        "MultiEdit" => {
            let edits: Option<Vec<_>> = match args.get("edits") {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_object().and_then(edit_view))
                    .collect(),
                _ => None,
            };
            if let Some(edits) = edits {
                return CallView::Edit {
                    path: str_arg("file_path"),
                    edits,
                    rest: rest(args, EDIT_KEYS),
                };
            }
        }
        "Write" => {
            if let Some(content) = str_arg("content") {
                return CallView::Write {
                    path: str_arg("file_path"),
                    content,
                    rest: rest(args, WRITE_KEYS),
                };
            }
        }
        _ => {}
    }
    CallView::Json(pretty(input))
}

fn edit_view(args: &Map<String, Value>) -> Option<EditView<'_>> {
    let old = args.get("old_string")?.as_str()?;
    let new = args.get("new_string")?.as_str()?;
    Some(EditView {
        hunks: diff::hunks(old, new),
        replace_all: args.get("replace_all").and_then(Value::as_bool) == Some(true),
    })
}

/// The arguments other than `shown`, as indented JSON, if any are left.
fn rest(args: &Map<String, Value>, shown: &[&str]) -> Option<String> {
    let left: Map<String, Value> = args
        .iter()
        .filter(|(key, _)| !shown.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    (!left.is_empty()).then(|| pretty(&Value::Object(left)))
}

/// `value` as indented JSON, keys in their order.
pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The argument that says most about a call in one line (a command, a
/// path, a query), cut to its first line and [`SUMMARY_CHARS`] characters.
pub fn summary(input: &Value) -> Option<String> {
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
    let args = input.as_object()?;
    let text = KEYS
        .iter()
        .find_map(|key| args.get(*key).and_then(Value::as_str))?;
    let line = text.lines().find(|l| !l.trim().is_empty())?.trim();
    Some(cut(line, SUMMARY_CHARS))
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
    Text(&'a str),
    /// agy-decode's `{"file":PATH,"created"|"edited"|"deleted":true}`.
    File {
        verb: &'static str,
        path: &'a str,
    },
    /// Content blocks, as the Messages API allows in a result.
    Blocks(&'a [Value]),
    Json(String),
}

pub fn result_view(content: &Value) -> ResultView<'_> {
    match content {
        Value::Null => ResultView::Empty,
        Value::String(text) if text.is_empty() => ResultView::Empty,
        Value::String(text) => ResultView::Text(text),
        Value::Object(map) => {
            let path = map.get("file").and_then(Value::as_str);
            let flag = |key: &str| map.get(key).and_then(Value::as_bool) == Some(true);
            let verb = ["created", "edited", "deleted"]
                .into_iter()
                .find(|verb| flag(verb));
            match (path, verb) {
                (Some(path), Some(verb)) if map.len() == 2 => ResultView::File { verb, path },
                _ => ResultView::Json(pretty(content)),
            }
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(is_content_block) => {
            ResultView::Blocks(items)
        }
        other => ResultView::Json(pretty(other)),
    }
}

fn is_content_block(item: &Value) -> bool {
    matches!(
        item.get("type").and_then(Value::as_str),
        Some("text" | "image")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_become_diffs_and_keep_other_arguments() {
        let input =
            json!({"file_path":"/a.rs","old_string":"x\n","new_string":"y\n","Instruction":"fix"});
        let CallView::Edit { path, edits, rest } = view("Edit", &input) else {
            panic!("not an edit view")
        };
        assert_eq!(path, Some("/a.rs"));
        assert_eq!(edits.len(), 1);
        assert_eq!(rest.as_deref(), Some("{\n  \"Instruction\": \"fix\"\n}"));
        let multi = json!({"file_path":"/a.rs","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d","replace_all":true}]});
        let CallView::Edit { edits, rest, .. } = view("MultiEdit", &multi) else {
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
                json!({"file_path":"/a","old_string":1,"new_string":"y"}),
            ),
            ("MultiEdit", json!({"edits":"not a list"})),
            ("Write", json!({"file_path":"/a"})),
            ("Edit", json!("a string")),
        ] {
            assert!(
                matches!(view(name, &input), CallView::Json(_)),
                "{name} {input}"
            );
        }
    }

    #[test]
    fn results_by_shape() {
        assert!(matches!(result_view(&json!("")), ResultView::Empty));
        assert!(matches!(
            result_view(&json!({"file":"/a","created":true})),
            ResultView::File {
                verb: "created",
                path: "/a"
            }
        ));
        assert!(matches!(
            result_view(&json!([{"type":"text","text":"a"}])),
            ResultView::Blocks(_)
        ));
        assert!(matches!(
            result_view(&json!([{"name":"a"}])),
            ResultView::Json(_)
        ));
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(
            summary(&json!({"command":"\n  cargo test\nmore"})).as_deref(),
            Some("cargo test")
        );
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(summary(&json!({"other":1})), None);
    }
}
