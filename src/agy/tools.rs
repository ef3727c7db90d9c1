//! Native agy tool names and argument keys ↔ the Claude Code names people
//! already know.
//!
//! The mapping must be exactly invertible, because `agy-decode` of
//! `agy-encode` of a message stream has to give the stream back. Two rules
//! make it so:
//!
//! * A call is mapped only when every rule of its tool can be applied
//!   cleanly: none of the keys it would write exists already, and a line
//!   range holds integers whose arithmetic does not overflow. Otherwise the
//!   whole call passes through under its own name and keys, which maps back
//!   to itself.
//! * Renamed keys keep their position in the argument object, and keys no
//!   rule names pass through untouched.
//!
//! Every tool a table row does not name passes through unchanged, in both
//! directions.

use serde_json::Value;

/// Arguments of a call: a JSON object with its key order kept.
pub type ArgList = Vec<(String, Value)>;

/// How one group of argument keys changes between native and common form.
#[derive(Clone, Copy, Debug)]
pub enum ArgRule {
    /// The same value under another key.
    Rename {
        native: &'static str,
        common: &'static str,
    },
    /// agy's 1-based inclusive `StartLine`/`EndLine` ↔ Claude Code's
    /// `offset` (first line) and `limit` (line count):
    /// `offset = StartLine`, `limit = EndLine - StartLine + 1`; with only
    /// `EndLine`, reading starts at line 1 and `limit = EndLine`. The inverse
    /// is `StartLine = offset`, `EndLine = offset + limit - 1`, or
    /// `EndLine = limit` without an offset.
    LineRange {
        start: &'static str,
        end: &'static str,
        offset: &'static str,
        limit: &'static str,
    },
    /// An array of objects under another key, each object rewritten by
    /// `rules`. Anything but an array of objects that all map cleanly (a
    /// JSON string holding the array, say) leaves the call unmapped.
    Each {
        native: &'static str,
        common: &'static str,
        rules: &'static [ArgRule],
    },
}

impl ArgRule {
    fn native_keys(&self) -> [&'static str; 2] {
        match *self {
            ArgRule::Rename { native, .. } | ArgRule::Each { native, .. } => [native, native],
            ArgRule::LineRange { start, end, .. } => [start, end],
        }
    }

    fn common_keys(&self) -> [&'static str; 2] {
        match *self {
            ArgRule::Rename { common, .. } | ArgRule::Each { common, .. } => [common, common],
            ArgRule::LineRange { offset, limit, .. } => [offset, limit],
        }
    }
}

/// A native tool with a common name.
#[derive(Clone, Copy, Debug)]
pub struct ToolMapping {
    pub native: &'static str,
    pub common: &'static str,
    pub rules: &'static [ArgRule],
}

pub const fn rename(native: &'static str, common: &'static str) -> ArgRule {
    ArgRule::Rename { native, common }
}

/// The mapped tools. Anything added here is mapped in both directions.
pub const MAPPINGS: &[ToolMapping] = &[
    ToolMapping {
        native: "run_command",
        common: "Bash",
        rules: &[rename("CommandLine", "command"), rename("Cwd", "workdir")],
    },
    ToolMapping {
        native: "view_file",
        common: "Read",
        rules: &[
            rename("AbsolutePath", "file_path"),
            ArgRule::LineRange {
                start: "StartLine",
                end: "EndLine",
                offset: "offset",
                limit: "limit",
            },
        ],
    },
    ToolMapping {
        native: "write_to_file",
        common: "Write",
        rules: &[
            rename("TargetFile", "file_path"),
            rename("CodeContent", "content"),
        ],
    },
    ToolMapping {
        native: "replace_file_content",
        common: "Edit",
        rules: &[
            rename("TargetFile", "file_path"),
            rename("TargetContent", "old_string"),
            rename("ReplacementContent", "new_string"),
            rename("AllowMultiple", "replace_all"),
        ],
    },
    ToolMapping {
        native: "multi_replace_file_content",
        common: "MultiEdit",
        rules: &[
            rename("TargetFile", "file_path"),
            ArgRule::Each {
                native: "ReplacementChunks",
                common: "edits",
                rules: &[
                    rename("TargetContent", "old_string"),
                    rename("ReplacementContent", "new_string"),
                    rename("AllowMultiple", "replace_all"),
                ],
            },
        ],
    },
];

/// The mapping whose native name is `name`.
pub fn by_native(name: &str) -> Option<&'static ToolMapping> {
    MAPPINGS.iter().find(|m| m.native == name)
}

/// The mapping whose common name is `name`.
pub fn by_common(name: &str) -> Option<&'static ToolMapping> {
    MAPPINGS.iter().find(|m| m.common == name)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    ToCommon,
    ToNative,
}

fn position(args: &ArgList, key: &str) -> Option<usize> {
    args.iter().position(|(k, _)| k == key)
}

/// Rewrites `args` by `rules` in `direction`, or returns `None` (leaving
/// `args` untouched) when the call cannot be mapped cleanly.
fn apply(rules: &[ArgRule], args: &ArgList, direction: Direction) -> Option<ArgList> {
    if collides(rules, args, direction) {
        return None;
    }
    let mut out = args.clone();
    for rule in rules {
        match *rule {
            ArgRule::Rename { native, common } => rename_key(&mut out, native, common, direction),
            ArgRule::LineRange {
                start,
                end,
                offset,
                limit,
            } => {
                let (first_key, second_key, first_out, second_out) = match direction {
                    Direction::ToCommon => (start, end, offset, limit),
                    Direction::ToNative => (offset, limit, start, end),
                };
                let first = position(&out, first_key);
                let second = position(&out, second_key);
                let int_at = |i: Option<usize>| -> Option<Option<i64>> {
                    match i {
                        None => Some(None),
                        Some(i) => out[i].1.as_i64().map(Some),
                    }
                };
                let (a, b) = (int_at(first)?, int_at(second)?);
                let second_value = match (a, b, direction) {
                    // A backwards range (StartLine > EndLine) would need a
                    // limit below one, which no reader of `limit` takes:
                    // such a call stays native, as does a limit below one.
                    (Some(s), Some(e), Direction::ToCommon) => {
                        let limit = e.checked_sub(s)?.checked_add(1)?;
                        if limit < 1 {
                            return None;
                        }
                        Some(limit)
                    }
                    (Some(o), Some(l), Direction::ToNative) if l >= 1 => {
                        Some(o.checked_add(l)?.checked_sub(1)?)
                    }
                    (_, Some(l), Direction::ToNative) if l < 1 => return None,
                    (_, b, _) => b,
                };
                if let Some(i) = first {
                    out[i].0 = first_out.to_string();
                }
                if let (Some(i), Some(v)) = (second, second_value) {
                    out[i] = (second_out.to_string(), Value::from(v));
                }
            }
            ArgRule::Each {
                native,
                common,
                rules,
            } => {
                let (from, to) = match direction {
                    Direction::ToCommon => (native, common),
                    Direction::ToNative => (common, native),
                };
                if let Some(i) = position(&out, from) {
                    let mut items = Vec::new();
                    for item in out[i].1.as_array()? {
                        let fields: ArgList = item
                            .as_object()?
                            .iter()
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect();
                        let mapped = apply(rules, &fields, direction)?;
                        items.push(Value::Object(mapped.into_iter().collect()));
                    }
                    out[i] = (to.to_string(), Value::Array(items));
                }
            }
        }
    }
    Some(out)
}

/// Whether a key this call already has is one that `rules` would write.
fn collides(rules: &[ArgRule], args: &ArgList, direction: Direction) -> bool {
    let target_keys: fn(&ArgRule) -> [&'static str; 2] = match direction {
        Direction::ToCommon => ArgRule::common_keys,
        Direction::ToNative => ArgRule::native_keys,
    };
    rules
        .iter()
        .flat_map(target_keys)
        .any(|key| position(args, key).is_some())
}

/// A [`ArgRule::Rename`] applied to `args` where they are.
fn rename_key(args: &mut ArgList, native: &str, common: &str, direction: Direction) {
    let (from, to) = match direction {
        Direction::ToCommon => (native, common),
        Direction::ToNative => (common, native),
    };
    if let Some(i) = position(args, from) {
        args[i].0 = to.to_string();
    }
}

/// A native call as the message stream names it: `(name, arguments)`.
/// Non-object arguments keep their form; only the name can change, and only
/// when the tool is mapped.
pub fn to_common(native_name: &str, args: Option<&ArgList>) -> (String, Option<ArgList>) {
    map(MAPPINGS, native_name, args, Direction::ToCommon)
}

/// The inverse of [`to_common`].
pub fn to_native(common_name: &str, args: Option<&ArgList>) -> (String, Option<ArgList>) {
    map(MAPPINGS, common_name, args, Direction::ToNative)
}

/// [`to_common`] by another agent's table, whose `native` names are that
/// agent's tools (Codex's `exec_command`, say): the same rules, so its
/// calls meet agy's in the common names and map back exactly.
pub fn to_common_by(
    table: &'static [ToolMapping],
    name: &str,
    args: Option<&ArgList>,
) -> (String, Option<ArgList>) {
    map(table, name, args, Direction::ToCommon)
}

/// The inverse of [`to_common_by`].
pub fn to_native_by(
    table: &'static [ToolMapping],
    name: &str,
    args: Option<&ArgList>,
) -> (String, Option<ArgList>) {
    map(table, name, args, Direction::ToNative)
}

fn map(
    table: &'static [ToolMapping],
    name: &str,
    args: Option<&ArgList>,
    direction: Direction,
) -> (String, Option<ArgList>) {
    let mapping = match direction {
        Direction::ToCommon => table.iter().find(|m| m.native == name),
        Direction::ToNative => table.iter().find(|m| m.common == name),
    };
    let Some(mapping) = mapping else {
        return (name.to_string(), None);
    };
    let target = match direction {
        Direction::ToCommon => mapping.common,
        Direction::ToNative => mapping.native,
    };
    match args {
        // Not an object: nothing to rename, but the tool is still this one.
        None => (target.to_string(), None),
        Some(args) => match apply(mapping.rules, args, direction) {
            Some(out) => (target.to_string(), Some(out)),
            None => (name.to_string(), None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> ArgList {
        // serde_json keeps key order (preserve_order), so the list is in
        // the order the object was written.
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    fn round_trip(name: &str, native: ArgList) -> (String, ArgList) {
        let (common, mapped) = to_common(name, Some(&native));
        let mapped = mapped.unwrap_or_else(|| native.clone());
        let (back_name, back) = to_native(&common, Some(&mapped));
        assert_eq!(back_name, name);
        assert_eq!(back.unwrap_or_else(|| mapped.clone()), native);
        (common, mapped)
    }

    #[test]
    fn bash_keeps_order_and_other_keys() {
        let native = vec![
            ("CommandLine".to_string(), json!("cargo test")),
            ("Cwd".to_string(), json!("/repo")),
            ("WaitMsBeforeAsync".to_string(), json!(2000)),
            ("toolAction".to_string(), json!("Running")),
        ];
        let (name, common) = round_trip("run_command", native);
        assert_eq!(name, "Bash");
        let keys: Vec<&str> = common.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            ["command", "workdir", "WaitMsBeforeAsync", "toolAction"]
        );
    }

    #[test]
    fn line_range_arithmetic() {
        let (name, common) = round_trip(
            "view_file",
            args(json!({"AbsolutePath": "/a", "StartLine": 10, "EndLine": 19})),
        );
        assert_eq!(name, "Read");
        assert_eq!(
            common,
            args(json!({"file_path": "/a", "offset": 10, "limit": 10}))
        );
        let (_, common) = round_trip(
            "view_file",
            args(json!({"AbsolutePath": "/a", "EndLine": 7})),
        );
        assert_eq!(common, args(json!({"file_path": "/a", "limit": 7})));
        let (_, common) = round_trip("view_file", args(json!({"StartLine": 3})));
        assert_eq!(common, args(json!({"offset": 3})));
        // A backwards range has no limit of one line or more: it stays
        // native, with no negative `limit`.
        let (name, common) = round_trip("view_file", args(json!({"StartLine": 9, "EndLine": 2})));
        assert_eq!(name, "view_file");
        assert_eq!(common, args(json!({"StartLine": 9, "EndLine": 2})));
    }

    #[test]
    fn unmappable_calls_pass_through_whole() {
        for native in [
            json!({"AbsolutePath": "/a", "StartLine": "3"}),
            json!({"AbsolutePath": "/a", "file_path": "/b"}),
            json!({"StartLine": i64::MIN, "EndLine": i64::MAX}),
        ] {
            let (name, mapped) = to_common("view_file", Some(&args(native)));
            assert_eq!(name, "view_file");
            assert!(mapped.is_none());
        }
        // Chunks as a JSON string, a chunk that is not an object, or a chunk
        // whose keys would collide keep the whole call native.
        for native in [
            json!({"TargetFile": "/a", "ReplacementChunks": "[{\"TargetContent\":\"x\"}]"}),
            json!({"TargetFile": "/a", "ReplacementChunks": [{"TargetContent": "x"}, 7]}),
            json!({"TargetFile": "/a", "ReplacementChunks": [{"TargetContent": "x", "old_string": "y"}]}),
        ] {
            let (name, mapped) = to_common("multi_replace_file_content", Some(&args(native)));
            assert_eq!(name, "multi_replace_file_content");
            assert!(mapped.is_none());
        }
        // The same holds from the common side.
        let (name, mapped) = to_native(
            "Read",
            Some(&args(json!({"file_path": "/a", "AbsolutePath": "/b"}))),
        );
        assert_eq!(name, "Read");
        assert!(mapped.is_none());
        // And for tools whose rules only rename keys.
        for (name, common) in [
            ("Bash", json!({"command": "ls", "CommandLine": "pwd"})),
            (
                "Write",
                json!({"file_path": "/a", "content": "x", "CodeContent": "y"}),
            ),
        ] {
            assert_eq!(
                to_native(name, Some(&args(common))),
                (name.to_string(), None)
            );
        }
    }

    #[test]
    fn every_mapping_round_trips() {
        round_trip(
            "write_to_file",
            args(json!({"TargetFile": "/a", "CodeContent": "x", "Overwrite": true})),
        );
        let (name, common) = round_trip(
            "replace_file_content",
            args(
                json!({"TargetFile": "/a", "TargetContent": "x", "ReplacementContent": "y", "AllowMultiple": false, "StartLine": 1}),
            ),
        );
        assert_eq!(name, "Edit");
        assert_eq!(
            common,
            args(
                json!({"file_path": "/a", "old_string": "x", "new_string": "y", "replace_all": false, "StartLine": 1})
            )
        );
        let (name, common) = round_trip(
            "multi_replace_file_content",
            args(json!({
                "TargetFile": "/a",
                "ReplacementChunks": [
                    {"TargetContent": "x", "ReplacementContent": "y", "AllowMultiple": true, "StartLine": 3},
                    {"ReplacementContent": "z", "TargetContent": "w"}
                ],
                "Instruction": "fix"
            })),
        );
        assert_eq!(name, "MultiEdit");
        assert_eq!(
            common,
            args(json!({
                "file_path": "/a",
                "edits": [
                    {"old_string": "x", "new_string": "y", "replace_all": true, "StartLine": 3},
                    {"new_string": "z", "old_string": "w"}
                ],
                "Instruction": "fix"
            }))
        );
        let (name, _) = round_trip("list_dir", args(json!({"DirectoryPath": "/"})));
        assert_eq!(name, "list_dir");
        assert_eq!(to_common("run_command", None), ("Bash".to_string(), None));
    }
}
