//! What each step kind says about the tool call it executed: one table,
//! [`RESULTS`], from the Step field of a kind's payload to the function that
//! reads its result, so the man page's table and the code are one list.
//!
//! Fields of grade B or C (FORMAT.md 0) are read so that a wrong guess gives
//! an empty or partial result: every reader takes only the fields it knows,
//! by wire type, and an absent or mistyped field is simply not there. An
//! empty outcome inside a GENERIC carrier lets the carrier's own result text
//! through instead.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::agy::steps::{self, field};
use crate::agy::wire::{self, Value as WireValue};
use crate::stream::message::{self, Listing, ListingEntry, ResultContent};

/// What a tool step's payload says about its result.
#[derive(Debug, Default, PartialEq)]
pub struct Outcome<'a> {
    pub content: ResultContent<'a>,
    /// The payload itself reports a failure (exit code, search error, ...).
    pub failed: bool,
    /// Text to show instead of `content` when the step failed.
    pub error_text: Option<Cow<'a, str>>,
    /// Where the untruncated `content` lives (GenericStepResult
    /// full_output_uri), when `content` is the carrier's result text.
    pub full_output_uri: Option<Cow<'a, str>>,
}

impl<'a> Outcome<'a> {
    pub fn text(text: Cow<'a, str>) -> Outcome<'a> {
        Outcome {
            content: ResultContent::Text(text),
            ..Outcome::default()
        }
    }

    fn structured(value: Value) -> Outcome<'a> {
        Outcome {
            content: ResultContent::Structured(value),
            ..Outcome::default()
        }
    }

    fn failure(error_text: Option<Cow<'a, str>>) -> Outcome<'a> {
        Outcome {
            failed: true,
            error_text,
            ..Outcome::default()
        }
    }

    /// Says nothing: no failure and empty text or an empty listing, so a
    /// carrier's own text is worth more.
    pub fn is_empty(&self) -> bool {
        !self.failed
            && self.error_text.is_none()
            && match &self.content {
                ResultContent::Text(t) => t.is_empty(),
                ResultContent::Listing(listing) => listing.is_empty(),
                ResultContent::Structured(Value::Array(a)) => a.is_empty(),
                ResultContent::Structured(_) => false,
            }
    }
}

type Reader = for<'a> fn(wire::Message<'a>) -> Outcome<'a>;

/// One row of the result table.
pub struct ResultKind {
    /// The Step field holding the kind's payload.
    pub payload_field: u32,
    /// The payload message's name, as an Any's type URL ends.
    pub message: &'static str,
    pub read: Reader,
}

const fn row(payload_field: u32, message: &'static str, read: Reader) -> ResultKind {
    ResultKind {
        payload_field,
        message,
        read,
    }
}

/// Every kind whose result is read, by payload field. A kind missing here
/// still gives a result, an empty one, so no call is left unanswered.
pub const RESULTS: &[ResultKind] = &[
    row(
        field::step::CODE_ACTION,
        "CortexStepCodeAction",
        code_action,
    ),
    row(field::step::FINISH, "CortexStepFinish", finish),
    row(
        field::step::GREP_SEARCH,
        "CortexStepGrepSearch",
        grep_search,
    ),
    row(field::step::VIEW_FILE, "CortexStepViewFile", view_file),
    row(
        field::step::LIST_DIRECTORY,
        "CortexStepListDirectory",
        list_directory,
    ),
    row(
        field::step::WRITE_TO_FILE,
        "CortexStepWriteToFile",
        write_to_file,
    ),
    row(
        field::step::ERROR_MESSAGE,
        "CortexStepErrorMessage",
        error_message,
    ),
    row(
        field::step::RUN_COMMAND,
        "CortexStepRunCommand",
        run_command,
    ),
    row(field::step::FIND, "CortexStepFind", find),
    row(
        field::step::COMMAND_STATUS,
        "CortexStepCommandStatus",
        command_status,
    ),
    row(field::step::MEMORY, "CortexStepMemory", memory),
    row(
        field::step::READ_URL_CONTENT,
        "CortexStepReadUrlContent",
        read_url_content,
    ),
    row(field::step::SEARCH_WEB, "CortexStepSearchWeb", search_web),
    row(field::step::MCP_TOOL, "CortexStepMcpTool", mcp_tool),
    row(
        field::step::FILE_CHANGE,
        "CortexStepFileChange",
        file_change,
    ),
    row(
        field::step::SEND_COMMAND_INPUT,
        "CortexStepSendCommandInput",
        send_command_input,
    ),
    row(
        field::step::AGENCY_TOOL_CALL,
        "CortexStepAgencyToolCall",
        agency_tool_call,
    ),
    row(field::step::SHELL_EXEC, "CortexStepShellExec", shell_exec),
    row(field::step::GENERIC, "CortexStepGeneric", generic),
    row(
        field::step::INVOKE_SUBAGENT,
        "CortexStepInvokeSubagent",
        invoke_subagent,
    ),
    row(
        field::step::ASK_QUESTION,
        "CortexStepAskQuestion",
        ask_question,
    ),
];

fn reader(payload_field: u32) -> Option<Reader> {
    RESULTS
        .iter()
        .find(|k| k.payload_field == payload_field)
        .map(|k| k.read)
}

/// True when the result of the kind in this payload field is read.
pub fn understands(payload_field: u32) -> bool {
    reader(payload_field).is_some()
}

/// The result of a tool step whose payload is in `payload_field`.
pub fn outcome(payload_field: u32, payload: wire::Message<'_>) -> Outcome<'_> {
    match reader(payload_field) {
        Some(read) => read(payload),
        None => Outcome::default(),
    }
}

/// The payload of a Step: the field the type tag names if present (as a
/// message), else the first payload field present. Dispatching on presence
/// rather than on the tag (DX) survives tags and fields that disagree.
pub fn payload_of(
    step: wire::Message<'_>,
    type_tag: Option<u64>,
) -> Option<(u32, wire::Message<'_>)> {
    let expected = type_tag.and_then(steps::payload_field);
    let mut payload = None;
    for f in step.fields() {
        let WireValue::Bytes(bytes) = f.value else {
            continue;
        };
        if Some(f.number) == expected {
            return Some((f.number, wire::Message::new(bytes)));
        }
        if payload.is_none() && steps::is_payload_field(f.number) {
            payload = Some((f.number, wire::Message::new(bytes)));
        }
    }
    payload
}

fn run_command(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::run_command::*;
    let text = run_command_output(payload, COMBINED_OUTPUT)
        .or_else(|| run_command_output(payload, STDOUT_OUTPUT))
        .unwrap_or_else(
            || match (payload.get_str(STDOUT), payload.get_str(STDERR)) {
                (Some(out), Some(err)) => Cow::Owned(format!("{out}{err}")),
                (Some(one), None) | (None, Some(one)) => one,
                (None, None) => Cow::Borrowed(""),
            },
        );
    let mut outcome = Outcome::text(text);
    // agy 1.0.x behaviour (TX): a non-zero exit is a failed call.
    outcome.failed = payload.get_i32(EXIT_CODE).is_some_and(|code| code != 0);
    outcome
}

/// A RunCommandOutput's full text, else its truncated text.
fn run_command_output(payload: wire::Message<'_>, number: u32) -> Option<Cow<'_, str>> {
    use field::run_command::*;
    payload.get_message(number).and_then(|o| {
        o.get_str(OUTPUT_FULL)
            .or_else(|| o.get_str(OUTPUT_TRUNCATED))
    })
}

fn view_file(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::view_file::*;
    Outcome::text(
        payload
            .get_str(CONTENT)
            .or_else(|| payload.get_str(RAW_CONTENT))
            .unwrap_or_default(),
    )
}

/// A listing is structured: `[{"name":…,"is_dir":…,"num_children":…,
/// "size_bytes":…}]` with each key only when its field is present, or the
/// plain `children` names as an array of strings.
fn list_directory(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::list_directory::*;
    if payload.get_bool(DIR_NOT_FOUND) == Some(true) {
        let text = match payload.get_nonempty_str(DIRECTORY_PATH_URI) {
            Some(uri) => format!("directory not found: {}", message::uri_to_path(&uri)),
            None => "directory not found".to_string(),
        };
        return Outcome::failure(Some(Cow::Owned(text)));
    }
    let entries: Vec<ListingEntry<'_>> = payload
        .repeated_messages(RESULTS)
        .map(|result| {
            let [name, is_dir, num_children, size_bytes] = result.last_of([
                RESULT_NAME,
                RESULT_IS_DIR,
                RESULT_NUM_CHILDREN,
                RESULT_SIZE_BYTES,
            ]);
            ListingEntry {
                name: name.and_then(wire::Value::str),
                is_dir: is_dir.and_then(wire::Value::bool),
                num_children: num_children.and_then(wire::Value::u64),
                size_bytes: size_bytes.and_then(wire::Value::u64),
            }
        })
        .collect();
    let names: Vec<Cow<'_, str>> = match entries.is_empty() {
        true => payload
            .repeated_bytes(CHILDREN)
            .map(crate::agy::wire::lossy_str)
            .collect(),
        false => Vec::new(),
    };
    let listing = match names.is_empty() {
        true => Listing::Entries(entries),
        false => Listing::Names(names),
    };
    Outcome {
        content: ResultContent::Listing(listing),
        ..Outcome::default()
    }
}

fn grep_search(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::grep_search::*;
    match payload.get_nonempty_str(GREP_ERROR) {
        Some(error) => Outcome::failure(Some(error)),
        None => Outcome::text(payload.get_str(RAW_OUTPUT).unwrap_or_default()),
    }
}

fn find(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::find::*;
    match payload.get_nonempty_str(FIND_ERROR) {
        Some(error) => Outcome::failure(Some(error)),
        None => Outcome::text(payload.get_str(RAW_OUTPUT).unwrap_or_default()),
    }
}

/// What happened to a file: `{"file":PATH,"created"|"edited"|"deleted":true}`,
/// in that key order, as agy-encode reads it back.
pub fn file_outcome<'a>(uri: &str, what: &str) -> Outcome<'a> {
    let mut object = Map::new();
    object.insert("file".into(), Value::String(message::uri_to_path(uri)));
    object.insert(what.into(), Value::Bool(true));
    Outcome::structured(Value::Object(object))
}

/// An edit or file creation (agy 1.0.x): the edit result's file, else the
/// spec's; empty when the step names no file.
fn code_action(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::code_action::*;
    let edit = payload
        .get_message(ACTION_RESULT)
        .and_then(|r| r.get_message(RESULT_EDIT));
    let spec = payload.get_message(ACTION_SPEC);
    let create_spec = spec.and_then(|s| s.get_message(SPEC_CREATE_FILE));
    let spec_path = create_spec
        .and_then(|c| c.get_message(CREATE_PATH))
        .or_else(|| {
            spec.and_then(|s| s.get_message(SPEC_COMMAND))
                .and_then(|c| c.get_message(COMMAND_FILE))
        })
        .and_then(|p| {
            p.get_nonempty_str(PATH_URI)
                .or_else(|| p.get_nonempty_str(PATH_LEGACY))
        });
    let Some(uri) = edit
        .and_then(|e| e.get_nonempty_str(EDIT_ABSOLUTE_URI))
        .or(spec_path)
    else {
        return Outcome::default();
    };
    let created = match edit {
        Some(edit) => edit.get_bool(EDIT_CREATE_FILE) == Some(true),
        None => create_spec.is_some(),
    };
    file_outcome(&uri, if created { "created" } else { "edited" })
}

/// write_to_file: created when `file_created` says so, else edited (an
/// overwrite; proto3 leaves a false flag out).
fn write_to_file(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::write_to_file::*;
    let Some(uri) = payload.get_nonempty_str(TARGET_FILE_URI) else {
        return Outcome::default();
    };
    let created = payload.get_bool(FILE_CREATED) == Some(true);
    file_outcome(&uri, if created { "created" } else { "edited" })
}

/// file_change: the change type (grade C enum) decides; an unknown type
/// claims nothing.
fn file_change(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::file_change::*;
    let Some(uri) = payload.get_nonempty_str(ABSOLUTE_PATH_URI) else {
        return Outcome::default();
    };
    match payload.get_u64(FILE_CHANGE_TYPE) {
        Some(CREATE) => file_outcome(&uri, "created"),
        Some(EDIT) => file_outcome(&uri, "edited"),
        Some(DELETE) => file_outcome(&uri, "deleted"),
        _ => Outcome::default(),
    }
}

fn mcp_tool(payload: wire::Message<'_>) -> Outcome<'_> {
    Outcome::text(
        payload
            .get_str(field::mcp_tool::RESULT_STRING)
            .unwrap_or_default(),
    )
}

/// combined output, else stdout then stderr. The exit code is informational
/// (FORMAT.md 12): the step's status says whether it failed.
fn command_status(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::command_status::*;
    if let Some(text) = payload.get_nonempty_str(COMBINED) {
        return Outcome::text(text);
    }
    Outcome::text(
        match (
            payload.get_nonempty_str(STDOUT),
            payload.get_nonempty_str(STDERR),
        ) {
            (Some(out), Some(err)) => Cow::Owned(format!("{out}{err}")),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => Cow::Borrowed(""),
        },
    )
}

fn read_url_content(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::read_url_content::*;
    Outcome::text(
        payload
            .get_message(WEB_DOCUMENT)
            .and_then(|d| d.get_str(DOCUMENT_TEXT))
            .unwrap_or_default(),
    )
}

fn search_web(payload: wire::Message<'_>) -> Outcome<'_> {
    Outcome::text(
        payload
            .get_str(field::search_web::SUMMARY)
            .unwrap_or_default(),
    )
}

/// output; a non-empty error_message is a failure with that text.
fn shell_exec(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::shell_exec::*;
    match payload.get_nonempty_str(ERROR_MESSAGE) {
        Some(error) => Outcome::failure(Some(error)),
        None => Outcome::text(payload.get_str(OUTPUT).unwrap_or_default()),
    }
}

fn send_command_input(payload: wire::Message<'_>) -> Outcome<'_> {
    Outcome::text(
        run_command_output(payload, field::send_command_input::OUTPUT).unwrap_or_default(),
    )
}

/// The child conversation ids, one per line: each result's, then the
/// step's own, without repeats.
fn invoke_subagent(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::invoke_subagent::*;
    let mut ids: Vec<Cow<'_, str>> = Vec::new();
    let results = payload
        .repeated_messages(RESULTS)
        .filter_map(|r| r.get_nonempty_str(RESULT_CONVERSATION_ID));
    for id in results.chain(payload.get_nonempty_str(CONVERSATION_ID)) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Outcome::text(Cow::Owned(ids.join("\n")))
}

/// Each question and its answer: `Q: …` then `A: …`, entries separated by
/// a blank line. The answer is the written-in response, else the selected
/// options (their text where the options list has it, else their ids),
/// else `(skipped)`.
fn ask_question(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::ask_question::*;
    let mut text = String::new();
    for entry in payload.repeated_messages(QUESTIONS) {
        let question = entry.get_str(QUESTION).unwrap_or_default();
        let answer = match entry.get_nonempty_str(WRITE_IN_RESPONSE) {
            Some(answer) => answer.into_owned(),
            None => {
                let chosen: Vec<String> = entry
                    .repeated_bytes(SELECTED_OPTION_IDS)
                    .map(|id| {
                        entry
                            .repeated_messages(OPTIONS)
                            .find(|o| o.get_bytes(OPTION_ID) == Some(id))
                            .and_then(|o| o.get_nonempty_str(OPTION_TEXT))
                            .unwrap_or_else(|| crate::agy::wire::lossy_str(id))
                            .into_owned()
                    })
                    .collect();
                if !chosen.is_empty() {
                    chosen.join(", ")
                } else if entry.get_bool(SKIPPED) == Some(true) {
                    "(skipped)".to_string()
                } else {
                    String::new()
                }
            }
        };
        if question.is_empty() && answer.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str("Q: ");
        text.push_str(&question);
        text.push_str("\nA: ");
        text.push_str(&answer);
    }
    Outcome::text(Cow::Owned(text))
}

/// The ACP lane's client-side tools: the JSON result text of each
/// `ToolResponse` among the response messages, joined by newlines; an
/// error_message in any of them is a failure with that text.
fn agency_tool_call(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::agency_tool_call::*;
    let mut texts: Vec<Cow<'_, str>> = Vec::new();
    for any in payload.repeated_messages(RESPONSE_MESSAGES) {
        let Some(response) = any_of(any, TOOL_RESPONSE_TYPE) else {
            continue;
        };
        if let Some(error) = response.get_nonempty_str(RESPONSE_ERROR) {
            return Outcome::failure(Some(error));
        }
        if let Some(text) = response.get_nonempty_str(RESPONSE_JSON) {
            texts.push(text);
        }
    }
    Outcome::text(match texts.len() {
        0 => Cow::Borrowed(""),
        1 => texts.pop().expect("one text"),
        _ => Cow::Owned(texts.join("\n")),
    })
}

/// `memory ID created|updated|deleted`, from what the step records.
fn memory(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::memory::*;
    let id = payload.get_nonempty_str(MEMORY_ID);
    let action = match payload.get_u64(ACTION) {
        Some(1) => Some("created"),
        Some(2) => Some("updated"),
        Some(3) => Some("deleted"),
        _ => None,
    };
    Outcome::text(match (id, action) {
        (Some(id), Some(action)) => Cow::Owned(format!("memory {id} {action}")),
        (Some(id), None) => Cow::Owned(format!("memory {id}")),
        (None, Some(action)) => Cow::Owned(format!("memory {action}")),
        (None, None) => Cow::Borrowed(""),
    })
}

fn finish(payload: wire::Message<'_>) -> Outcome<'_> {
    Outcome::text(
        payload
            .get_str(field::finish::OUTPUT_STRING)
            .unwrap_or_default(),
    )
}

fn error_message(payload: wire::Message<'_>) -> Outcome<'_> {
    Outcome::failure(
        payload
            .get_message(field::error_message::ERROR)
            .and_then(error_text),
    )
}

/// The GENERIC carrier (agy 1.1+). Precedence: the kind step the result
/// wraps, read like its typed form, when it says anything; else the
/// result text, whose untruncated form may live at full_output_uri.
fn generic(payload: wire::Message<'_>) -> Outcome<'_> {
    use field::generic::*;
    let result = payload.get_message(RESULT).unwrap_or_default();
    for number in [RESULT_NESTED, RESULT_DATA] {
        let Some(bytes) = result.get_bytes(number) else {
            continue;
        };
        if let Some((kind_field, kind_payload)) = wrapped_payload(wire::Message::new(bytes)) {
            if kind_field == field::step::GENERIC {
                continue;
            }
            let nested = outcome(kind_field, kind_payload);
            if !nested.is_empty() {
                return nested;
            }
        }
    }
    Outcome {
        full_output_uri: result.get_nonempty_str(RESULT_FULL_OUTPUT_URI),
        ..Outcome::text(result.get_str(RESULT_TEXT).unwrap_or_default())
    }
}

/// The kind payload inside a GenericStepResult's nested field: a Step, an
/// Any wrapping a Step, or an Any wrapping the kind message itself (its type
/// URL names which). An Any is told from a Step by its field 1: a string
/// type URL, where a Step has its type tag, a varint.
fn wrapped_payload(nested: wire::Message<'_>) -> Option<(u32, wire::Message<'_>)> {
    let type_url = match nested.last(field::any::TYPE_URL) {
        Some(WireValue::Bytes(url)) => crate::agy::wire::lossy_str(url),
        _ => return payload_of(nested, nested.get_u64(field::step::TYPE)),
    };
    let value = nested.get_message(field::any::VALUE).unwrap_or_default();
    let name = type_url.rsplit(['/', '.']).next().unwrap_or_default();
    if name == "Step" {
        return payload_of(value, value.get_u64(field::step::TYPE));
    }
    RESULTS
        .iter()
        .find(|k| k.message == name)
        .map(|k| (k.payload_field, value))
}

/// The message of an Any whose type URL ends with `type_name`.
fn any_of<'a>(any: wire::Message<'a>, type_name: &str) -> Option<wire::Message<'a>> {
    let url = any.get_str(field::any::TYPE_URL)?;
    url.ends_with(type_name)
        .then(|| any.get_message(field::any::VALUE).unwrap_or_default())
}

/// The text of CortexErrorDetails: the model-facing message first, then
/// the user-facing one, the short and the full error. `None` when all are
/// empty.
pub fn error_text(details: wire::Message<'_>) -> Option<Cow<'_, str>> {
    use field::error_details::*;
    [
        MODEL_ERROR_MESSAGE,
        USER_ERROR_MESSAGE,
        SHORT_ERROR,
        FULL_ERROR,
    ]
    .into_iter()
    .find_map(|f| details.get_nonempty_str(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_a_payload_field_once() {
        for (i, kind) in RESULTS.iter().enumerate() {
            assert!(
                steps::is_payload_field(kind.payload_field),
                "{}",
                kind.message
            );
            assert!(RESULTS[i + 1..]
                .iter()
                .all(|k| k.payload_field != kind.payload_field && k.message != kind.message));
        }
    }

    #[test]
    fn garbage_payloads_never_panic() {
        let mut state: u32 = 99;
        for len in 0..120 {
            let buf: Vec<u8> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (state >> 16) as u8
                })
                .collect();
            for kind in RESULTS {
                let _ = (kind.read)(wire::Message::new(&buf));
            }
        }
    }
}
