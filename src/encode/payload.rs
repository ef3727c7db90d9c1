//! A tool step's payload: which step kind carries a call and its result
//! ([`Carrier`]), typed for the tools agy 1.0.16 types and GENERIC for the
//! rest, and the payload each writes.

use std::borrow::Cow;

use serde_json::Value;

use crate::agy::steps::{self, field, kind};
use crate::agy::wire::Writer;
use crate::stream::json;
use crate::stream::message::{self, Listing, ResultContent};

/// The `WaitMsBeforeAsync` agy 1.0.16 stamps when a call does not say.
const DEFAULT_WAIT_MS: u64 = 2000;

/// Which step kind carries a tool result, with what it needs.
pub(super) enum Carrier<'a> {
    RunCommand(Option<Cow<'a, str>>),
    ViewFile(Option<Cow<'a, str>>),
    /// An edit or creation of `file`.
    CodeAction {
        file: Option<String>,
        created: bool,
    },
    ListDirectory(&'a Listing<'a>),
    /// A deleted file (FILE_CHANGE, the only kind that says so).
    FileDeleted(String),
    /// A kind of [`TEXT_KINDS`].
    Text(&'static TextKind, Option<Cow<'a, str>>),
    Generic(Option<Cow<'a, str>>),
}

/// A tool whose typed kind holds its result text in one field (FORMAT.md
/// 7), and the arguments the kind repeats.
pub(super) struct TextKind {
    native: &'static str,
    payload_field: u32,
    /// Where the result text goes, from the payload.
    text_path: &'static [u32],
    /// (argument key, payload field) of string arguments.
    args: &'static [(&'static str, u32)],
}

/// Without `--generic`, these tools' results come back as their own kind,
/// which agy-decode reads the same text from.
const TEXT_KINDS: &[TextKind] = &[
    TextKind {
        native: "grep_search",
        payload_field: field::step::GREP_SEARCH,
        text_path: &[field::grep_search::RAW_OUTPUT],
        args: &[("Query", 1)],
    },
    TextKind {
        native: "find_by_name",
        payload_field: field::step::FIND,
        text_path: &[field::find::RAW_OUTPUT],
        args: &[("Pattern", field::find::PATTERN)],
    },
    TextKind {
        native: "call_mcp_tool",
        payload_field: field::step::MCP_TOOL,
        text_path: &[field::mcp_tool::RESULT_STRING],
        args: &[("ServerName", 1)],
    },
    TextKind {
        native: "command_status",
        payload_field: field::step::COMMAND_STATUS,
        text_path: &[field::command_status::COMBINED],
        args: &[("CommandId", 1)],
    },
    TextKind {
        native: "read_url_content",
        payload_field: field::step::READ_URL_CONTENT,
        text_path: &[
            field::read_url_content::WEB_DOCUMENT,
            field::read_url_content::DOCUMENT_TEXT,
        ],
        args: &[("Url", 1)],
    },
    TextKind {
        native: "search_web",
        payload_field: field::step::SEARCH_WEB,
        text_path: &[field::search_web::SUMMARY],
        args: &[("Query", 1)],
    },
    // Its result is the text of its fields (agy-decode joins them); the
    // whole text goes into the first.
    TextKind {
        native: "task_boundary",
        payload_field: field::step::TASK_BOUNDARY,
        text_path: &[field::task_boundary::TASK_NAME],
        args: &[],
    },
];

impl<'a> Carrier<'a> {
    /// The kind for a call by its native name, holding `text` if any.
    pub(super) fn for_call(
        native_name: &str,
        generic: bool,
        text: Option<Cow<'a, str>>,
    ) -> Carrier<'a> {
        match native_name {
            _ if generic => Carrier::Generic(text),
            "run_command" => Carrier::RunCommand(text),
            _ if TEXT_KINDS.iter().any(|k| k.native == native_name) => Carrier::Text(
                TEXT_KINDS
                    .iter()
                    .find(|k| k.native == native_name)
                    .expect("found above"),
                text,
            ),
            "view_file" => Carrier::ViewFile(text),
            "write_to_file" | "replace_file_content" if text.is_none() => Carrier::CodeAction {
                file: None,
                created: native_name == "write_to_file",
            },
            _ => Carrier::Generic(text),
        }
    }

    /// The kind for a successful result. Structured results need the typed
    /// step that decode turns back into that structure, even with
    /// `--generic`, because GENERIC holds only text; free text for an edit
    /// rides GENERIC, because a code action holds none.
    pub(super) fn for_result(
        native_name: &str,
        generic: bool,
        content: &'a ResultContent<'_>,
    ) -> Carrier<'a> {
        if let ResultContent::Listing(listing) = content {
            return Carrier::ListDirectory(listing);
        }
        if let ResultContent::Structured(value) = content {
            match file_outcome(value) {
                Some((file, "deleted")) => return Carrier::FileDeleted(file.to_string()),
                Some((file, what)) => {
                    return Carrier::CodeAction {
                        file: Some(file.to_string()),
                        created: what == "created",
                    }
                }
                None => {}
            }
        }
        Carrier::for_call(native_name, generic, Some(content.to_text()))
    }

    /// `(step type, payload field, payload)`, with the call's native
    /// arguments filling the typed fields agy expects; the payload is
    /// appended to `buf` (the caller's room before it kept), so its
    /// allocation can serve step after step.
    pub(super) fn encode(self, args: &[(String, Value)], buf: Vec<u8>) -> (u64, u32, Vec<u8>) {
        let arg = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let arg_str = |key: &str| arg(key).and_then(Value::as_str);
        let mut payload = Writer::from_vec(buf);
        match self {
            Carrier::RunCommand(text) => {
                use field::run_command::*;
                if let Some(cwd) = arg_str("Cwd") {
                    payload.string(CWD, cwd);
                }
                payload.bool(BLOCKING, true).varint(
                    WAIT_MS_BEFORE_ASYNC,
                    arg("WaitMsBeforeAsync")
                        .and_then(Value::as_u64)
                        .unwrap_or(DEFAULT_WAIT_MS),
                );
                if let Some(text) = text {
                    payload.message_of_string(COMBINED_OUTPUT, OUTPUT_FULL, &text);
                }
                if let Some(command) = arg_str("CommandLine") {
                    payload.string(COMMAND_LINE, command);
                }
                (
                    kind::RUN_COMMAND,
                    field::step::RUN_COMMAND,
                    payload.into_bytes(),
                )
            }
            Carrier::ViewFile(text) => {
                use field::view_file::*;
                if let Some(path) = arg_str("AbsolutePath") {
                    payload.string(ABSOLUTE_PATH_URI, &message::path_to_uri(path));
                }
                for (key, number) in [("StartLine", START_LINE), ("EndLine", END_LINE)] {
                    if let Some(line) = arg(key).and_then(Value::as_u64) {
                        payload.varint(number, line);
                    }
                }
                if let Some(text) = text {
                    payload.string(CONTENT, &text);
                }
                (
                    kind::VIEW_FILE,
                    field::step::VIEW_FILE,
                    payload.into_bytes(),
                )
            }
            Carrier::CodeAction { file, created } => {
                use field::code_action::*;
                let target = arg_str("TargetFile").or(file.as_deref());
                payload.message(ACTION_SPEC, |spec| {
                    let path = |p: &mut Writer| {
                        if let Some(target) = target {
                            p.string(PATH_URI, &message::path_to_uri(target));
                        }
                    };
                    if created {
                        spec.message(SPEC_CREATE_FILE, |c| {
                            if let Some(code) = arg_str("CodeContent") {
                                c.string(CREATE_INSTRUCTION, code);
                            }
                            c.message(CREATE_PATH, path);
                            if let Some(overwrite) = arg("Overwrite").and_then(Value::as_bool) {
                                c.bool(CREATE_OVERWRITE, overwrite);
                            }
                        });
                    } else {
                        spec.message(SPEC_COMMAND, |c| {
                            c.bool(COMMAND_IS_EDIT, true).message(COMMAND_FILE, path);
                            if arg("TargetContent").is_some() || arg("ReplacementContent").is_some()
                            {
                                c.message(COMMAND_REPLACEMENT_CHUNKS, |chunk| {
                                    if let Some(s) = arg_str("TargetContent") {
                                        chunk.string(CHUNK_TARGET, s);
                                    }
                                    if let Some(s) = arg_str("ReplacementContent") {
                                        chunk.string(CHUNK_REPLACEMENT, s);
                                    }
                                    if let Some(b) = arg("AllowMultiple").and_then(Value::as_bool) {
                                        chunk.bool(CHUNK_ALLOW_MULTIPLE, b);
                                    }
                                });
                            }
                        });
                    }
                });
                if let Some(file) = &file {
                    payload.message(ACTION_RESULT, |result| {
                        result.message(RESULT_EDIT, |edit| {
                            edit.string(EDIT_ABSOLUTE_URI, &message::path_to_uri(file));
                            if created {
                                edit.bool(EDIT_CREATE_FILE, true);
                            }
                        });
                    });
                }
                payload.bool(USE_FAST_APPLY, true);
                (
                    kind::CODE_ACTION,
                    field::step::CODE_ACTION,
                    payload.into_bytes(),
                )
            }
            Carrier::ListDirectory(listing) => {
                use field::list_directory::*;
                if let Some(path) = arg_str("DirectoryPath") {
                    payload.string(DIRECTORY_PATH_URI, &message::path_to_uri(path));
                }
                match listing {
                    Listing::Names(names) => {
                        for name in names {
                            payload.string(CHILDREN, name);
                        }
                    }
                    Listing::Entries(entries) => {
                        for entry in entries {
                            payload.message(RESULTS, |r| {
                                if let Some(name) = &entry.name {
                                    r.string(RESULT_NAME, name);
                                }
                                if let Some(is_dir) = entry.is_dir {
                                    r.bool(RESULT_IS_DIR, is_dir);
                                }
                                if let Some(n) = entry.num_children {
                                    r.varint(RESULT_NUM_CHILDREN, n);
                                }
                                if let Some(n) = entry.size_bytes {
                                    r.varint(RESULT_SIZE_BYTES, n);
                                }
                            });
                        }
                    }
                }
                (
                    kind::LIST_DIRECTORY,
                    field::step::LIST_DIRECTORY,
                    payload.into_bytes(),
                )
            }
            Carrier::FileDeleted(file) => {
                use field::file_change::*;
                payload
                    .string(ABSOLUTE_PATH_URI, &message::path_to_uri(&file))
                    .varint(FILE_CHANGE_TYPE, DELETE);
                (
                    kind::FILE_CHANGE,
                    field::step::FILE_CHANGE,
                    payload.into_bytes(),
                )
            }
            Carrier::Text(text_kind, text) => {
                for &(key, number) in text_kind.args {
                    if let Some(value) = arg_str(key) {
                        payload.string(number, value);
                    }
                }
                if let Some(text) = text {
                    match text_kind.text_path {
                        [number] => {
                            payload.string(*number, &text);
                        }
                        [outer, inner] => {
                            payload.message_of_string(*outer, *inner, &text);
                        }
                        _ => unreachable!("text paths are one or two fields deep"),
                    }
                }
                let step_kind = steps::kind_of_payload_field(text_kind.payload_field)
                    .expect("a text kind's payload field has a kind");
                (step_kind, text_kind.payload_field, payload.into_bytes())
            }
            Carrier::Generic(text) => {
                use field::generic::*;
                for (key, value) in args {
                    payload.message(ARGS, |entry| {
                        entry.string(ENTRY_KEY, key);
                        match value {
                            Value::String(s) => entry.string(ENTRY_VALUE, s),
                            other => entry.string(ENTRY_VALUE, &json::value_to_string(other)),
                        };
                    });
                }
                if let Some(text) = text {
                    payload.message_of_string(RESULT, RESULT_TEXT, &text);
                }
                (kind::GENERIC, field::step::GENERIC, payload.into_bytes())
            }
        }
    }
}

/// `{"file":…,"created"|"edited"|"deleted":true}`, in that key order, as
/// decode writes it: the file and what happened to it.
fn file_outcome(value: &Value) -> Option<(&str, &str)> {
    let object = value.as_object()?;
    let mut entries = object.iter();
    let (Some((first, file)), Some((flag, truth)), None) =
        (entries.next(), entries.next(), entries.next())
    else {
        return None;
    };
    if first != "file" || *truth != Value::Bool(true) {
        return None;
    }
    let file = file.as_str()?;
    match flag.as_str() {
        what @ ("created" | "edited" | "deleted") => Some((file, what)),
        _ => None,
    }
}
