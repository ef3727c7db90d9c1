//! The numbers of agy's step schema (FORMAT.md sections 3–6), in one place.
//!
//! Step field numbers and step *type* numbers share many integers with
//! different meanings (field 23 is write_to_file, type 23 is CHECKPOINT), so
//! each lives in its own module (the fields, the longest, in field.rs) and
//! nothing outside this module spells a raw number for either.

/// `exa.cortex_pb.CortexStepType`: the value of Step field 1 and of the
/// `steps.step_type` column.
pub mod kind {
    pub const CODE_ACTION: u64 = 5;
    pub const GREP_SEARCH: u64 = 7;
    pub const VIEW_FILE: u64 = 8;
    pub const LIST_DIRECTORY: u64 = 9;
    pub const USER_INPUT: u64 = 14;
    pub const PLANNER_RESPONSE: u64 = 15;
    pub const ERROR_MESSAGE: u64 = 17;
    pub const RUN_COMMAND: u64 = 21;
    pub const CHECKPOINT: u64 = 23;
    pub const MCP_TOOL: u64 = 38;
    pub const TASK_BOUNDARY: u64 = 81;
    pub const NOTIFY_USER: u64 = 82;
    pub const FILE_CHANGE: u64 = 86;
    pub const EPHEMERAL_MESSAGE: u64 = 90;
    pub const CONVERSATION_HISTORY: u64 = 98;
    pub const SYSTEM_MESSAGE: u64 = 101;
    pub const GENERIC: u64 = 132;
    pub const DIRECTORY_RULES: u64 = 139;
}

/// Every CortexStepType of the CLI (FORMAT.md 4.1), unprefixed, as the brain
/// transcript prints them.
const KIND_NAMES: &[(u64, &str)] = &[
    (0, "UNSPECIFIED"),
    (1, "DUMMY"),
    (2, "FINISH"),
    (3, "PLAN_INPUT"),
    (4, "MQUERY"),
    (5, "CODE_ACTION"),
    (6, "GIT_COMMIT"),
    (7, "GREP_SEARCH"),
    (8, "VIEW_FILE"),
    (9, "LIST_DIRECTORY"),
    (10, "COMPILE"),
    (13, "VIEW_CODE_ITEM"),
    (14, "USER_INPUT"),
    (15, "PLANNER_RESPONSE"),
    (17, "ERROR_MESSAGE"),
    (21, "RUN_COMMAND"),
    (23, "CHECKPOINT"),
    (24, "PROPOSE_CODE"),
    (25, "FIND"),
    (27, "SUGGESTED_RESPONSES"),
    (28, "COMMAND_STATUS"),
    (29, "MEMORY"),
    (31, "READ_URL_CONTENT"),
    (32, "VIEW_CONTENT_CHUNK"),
    (33, "SEARCH_WEB"),
    (34, "RETRIEVE_MEMORY"),
    (38, "MCP_TOOL"),
    (39, "MANAGER_FEEDBACK"),
    (40, "TOOL_CALL_PROPOSAL"),
    (41, "TOOL_CALL_CHOICE"),
    (42, "TRAJECTORY_CHOICE"),
    (45, "CLIPBOARD"),
    (47, "VIEW_FILE_OUTLINE"),
    (49, "POST_PR_REVIEW"),
    (51, "LIST_RESOURCES"),
    (52, "READ_RESOURCE"),
    (53, "LINT_DIFF"),
    (54, "FIND_ALL_REFERENCES"),
    (55, "BRAIN_UPDATE"),
    (56, "OPEN_BROWSER_URL"),
    (57, "RUN_EXTENSION_CODE"),
    (59, "PROPOSAL_FEEDBACK"),
    (60, "TRAJECTORY_SEARCH"),
    (61, "EXECUTE_BROWSER_JAVASCRIPT"),
    (62, "LIST_BROWSER_PAGES"),
    (63, "CAPTURE_BROWSER_SCREENSHOT"),
    (64, "CLICK_BROWSER_PIXEL"),
    (65, "READ_TERMINAL"),
    (66, "CAPTURE_BROWSER_CONSOLE_LOGS"),
    (67, "READ_BROWSER_PAGE"),
    (68, "BROWSER_GET_DOM"),
    (73, "CODE_SEARCH"),
    (74, "BROWSER_INPUT"),
    (75, "BROWSER_MOVE_MOUSE"),
    (76, "BROWSER_SELECT_OPTION"),
    (77, "BROWSER_SCROLL_UP"),
    (78, "BROWSER_SCROLL_DOWN"),
    (79, "BROWSER_CLICK_ELEMENT"),
    (80, "BROWSER_PRESS_KEY"),
    (81, "TASK_BOUNDARY"),
    (82, "NOTIFY_USER"),
    (83, "CODE_ACKNOWLEDGEMENT"),
    (84, "INTERNAL_SEARCH"),
    (85, "BROWSER_SUBAGENT"),
    (86, "FILE_CHANGE"),
    (87, "MOVE"),
    (88, "BROWSER_SCROLL"),
    (89, "KNOWLEDGE_GENERATION"),
    (90, "EPHEMERAL_MESSAGE"),
    (91, "GENERATE_IMAGE"),
    (92, "DELETE_DIRECTORY"),
    (93, "COMPILE_APPLET"),
    (94, "INSTALL_APPLET_DEPENDENCIES"),
    (95, "INSTALL_APPLET_PACKAGE"),
    (96, "BROWSER_RESIZE_WINDOW"),
    (97, "BROWSER_DRAG_PIXEL_TO_PIXEL"),
    (98, "CONVERSATION_HISTORY"),
    (99, "KNOWLEDGE_ARTIFACTS"),
    (100, "SEND_COMMAND_INPUT"),
    (101, "SYSTEM_MESSAGE"),
    (102, "WAIT"),
    (103, "AGENCY_TOOL_CALL"),
    (104, "CIDER_AGENT_DUMMY"),
    (105, "BUILD_CLEANER"),
    (106, "BLAZE_BUILD_TARGETS"),
    (107, "BLAZE_TEST_TARGETS"),
    (108, "SET_UP_FIREBASE"),
    (109, "MOMA"),
    (110, "RESTART_DEV_SERVER"),
    (111, "DEPLOY_FIREBASE"),
    (112, "SHELL_EXEC"),
    (113, "BROWSER_MOUSE_WHEEL"),
    (114, "LINT_APPLET"),
    (116, "KI_INSERTION"),
    (117, "RETRIEVE_CONTENT"),
    (118, "CRITIQUE"),
    (119, "FINDINGS"),
    (120, "BROWSER_MOUSE_UP"),
    (121, "BROWSER_MOUSE_DOWN"),
    (122, "WORKSPACE_API"),
    (123, "BROWSER_LIST_NETWORK_REQUESTS"),
    (124, "BROWSER_GET_NETWORK_REQUEST"),
    (125, "BROWSER_REFRESH_PAGE"),
    (126, "EDIT_NOTEBOOK"),
    (127, "INVOKE_SUBAGENT"),
    (128, "WRITE_BLOB"),
    (129, "READ_NOTEBOOK"),
    (130, "PROPOSE_AI_COMMENTS"),
    (131, "START_CODE_REVIEW"),
    (132, "GENERIC"),
    (133, "SET_UP_CLOUD_SQL"),
    (134, "EXECUTE_NOTEBOOK"),
    (135, "CLOUD_SQL_UPDATE_SCHEMA"),
    (136, "RPC_ACTION"),
    (137, "CLOUD_SQL_EXECUTE_SQL"),
    (138, "ASK_QUESTION"),
    (139, "DIRECTORY_RULES"),
    (140, "TOOL_SEARCH"),
];

/// The unprefixed name of a step type, if the CLI's enum has one.
pub fn kind_name(kind: u64) -> Option<&'static str> {
    KIND_NAMES
        .binary_search_by_key(&kind, |&(n, _)| n)
        .ok()
        .map(|i| KIND_NAMES[i].1)
}

/// The step type with this unprefixed name.
pub fn kind_by_name(name: &str) -> Option<u64> {
    KIND_NAMES
        .iter()
        .find(|&&(_, n)| n == name)
        .map(|&(k, _)| k)
}

/// Step type → the Step field that holds its payload (FORMAT.md 3, "Type→field
/// pairs"). Readers dispatch on the field that is present rather than on the
/// type tag (DX), so this table is read in both directions.
pub const PAYLOAD_FIELDS: &[(u64, u32)] = &[
    (5, 10),
    (7, 13),
    (8, 14),
    (9, 15),
    (14, 19),
    (15, 20),
    (17, 24),
    (21, 28),
    (23, 30),
    (25, 34),
    (28, 37),
    (31, 40),
    (33, 42),
    (38, 47),
    (81, 93),
    (82, 94),
    (86, 98),
    (90, 103),
    (98, 111),
    (100, 113),
    (101, 114),
    (103, 116),
    (112, 127),
    (127, 143),
    (132, 140),
    (138, 154),
    (139, 156),
];

/// Payload fields whose step type FORMAT.md does not pair (finish,
/// write_to_file, memory): found by presence, their kind is the type tag.
pub const UNPAIRED_PAYLOAD_FIELDS: &[u32] = &[
    field::step::FINISH,
    field::step::WRITE_TO_FILE,
    field::step::MEMORY,
];

/// True when this Step field holds a kind's payload.
pub fn is_payload_field(field: u32) -> bool {
    kind_of_payload_field(field).is_some() || UNPAIRED_PAYLOAD_FIELDS.contains(&field)
}

/// The payload field of a step type.
pub fn payload_field(kind: u64) -> Option<u32> {
    PAYLOAD_FIELDS
        .iter()
        .find(|&&(k, _)| k == kind)
        .map(|&(_, f)| f)
}

/// The step type whose payload lives in this Step field.
pub fn kind_of_payload_field(field: u32) -> Option<u64> {
    PAYLOAD_FIELDS
        .iter()
        .find(|&&(_, f)| f == field)
        .map(|&(k, _)| k)
}

/// Field numbers of `gemini_coder.Step` and of the messages inside it.
pub mod field;

/// `exa.cortex_pb.CortexStepStatus`.
pub mod status {
    pub const PENDING: u64 = 1;
    pub const DONE: u64 = 3;
    pub const CANCELED: u64 = 6;
    pub const ERROR: u64 = 7;
}

const STATUS_NAMES: &[(u64, &str)] = &[
    (0, "UNSPECIFIED"),
    (1, "PENDING"),
    (2, "RUNNING"),
    (3, "DONE"),
    (4, "INVALID"),
    (5, "CLEARED"),
    (6, "CANCELED"),
    (7, "ERROR"),
    (8, "GENERATING"),
    (9, "WAITING"),
    (11, "QUEUED"),
    (12, "INTERRUPTED"),
];

pub fn status_name(status: u64) -> Option<&'static str> {
    STATUS_NAMES
        .iter()
        .find(|&&(n, _)| n == status)
        .map(|&(_, s)| s)
}

/// True for the statuses after which a step no longer changes (DONE,
/// INVALID, CLEARED, CANCELED, ERROR, INTERRUPTED). Anything else, including
/// values this table does not know, counts as still in flight: a tool result
/// is only claimed for a step that is known to have finished.
pub fn is_settled(status: u64) -> bool {
    matches!(status, 3 | 4 | 5 | 6 | 7 | 12)
}

/// True for the statuses of a step still in flight: PENDING, RUNNING,
/// GENERATING, WAITING, QUEUED (FORMAT.md 4.2). A crash leaves steps so, and
/// agy's resume settles them as CANCELED.
pub fn is_in_flight(status: u64) -> bool {
    matches!(status, 1 | 2 | 8 | 9 | 11)
}

/// True for the statuses that mean the step failed.
pub fn is_failure(status: u64) -> bool {
    matches!(status, status::CANCELED | status::ERROR)
}

/// `exa.cortex_pb.CortexStepSource`.
pub mod source {
    pub const MODEL: u64 = 2;
    pub const USER_IMPLICIT: u64 = 3;
    pub const USER_EXPLICIT: u64 = 4;
    pub const SYSTEM: u64 = 5;
}

const SOURCE_NAMES: &[(u64, &str)] = &[
    (0, "UNSPECIFIED"),
    (2, "MODEL"),
    (3, "USER_IMPLICIT"),
    (4, "USER_EXPLICIT"),
    (5, "SYSTEM"),
    (6, "SYSTEM_SDK"),
];

pub fn source_name(source: u64) -> Option<&'static str> {
    SOURCE_NAMES
        .iter()
        .find(|&&(n, _)| n == source)
        .map(|&(_, s)| s)
}

/// `trajectory_meta.trajectory_type` of a CLI conversation (CASCADE).
pub const TRAJECTORY_TYPE_CASCADE: i64 = 4;
/// `trajectory_meta.source` of a CLI conversation.
pub const TRAJECTORY_SOURCE_CLI: i64 = 17;
/// `trajectory_meta.source` of a conversation of the desktop app
/// (FORMAT.md 15 row 9).
pub const TRAJECTORY_SOURCE_DESKTOP: i64 = 1;

/// `exa.codeium_common_pb.StopReason` values with a message-stream name
/// (TX's mapping); any other value is written `stop-<n>`.
const STOP_REASONS: &[(u64, &str)] = &[
    (2, "end_turn"),
    (3, "max_tokens"),
    (10, "tool_use"),
    (13, "error"),
    (16, "aborted"),
];

/// Accepted on input only, for transcripts converted from the Anthropic
/// Messages API: they have a native equivalent but decode under its name.
const FOREIGN_STOP_REASONS: &[(&str, u64)] = &[("stop_sequence", 2), ("refusal", 11)];

/// The message-stream name of a native stop reason.
pub fn stop_reason_name(value: u64) -> String {
    match STOP_REASONS.iter().find(|&&(n, _)| n == value) {
        Some(&(_, name)) => name.to_string(),
        None => format!("stop-{value}"),
    }
}

/// The native stop reason for a message-stream name, the inverse of
/// [`stop_reason_name`] on everything it produces.
pub fn stop_reason_value(name: &str) -> Option<u64> {
    if let Some(&(value, _)) = STOP_REASONS.iter().find(|&&(_, n)| n == name) {
        return Some(value);
    }
    if let Some(&(_, value)) = FOREIGN_STOP_REASONS.iter().find(|&&(n, _)| n == name) {
        return Some(value);
    }
    canonical_number(name.strip_prefix("stop-")?)
}

/// The name of a model enum value that has no human name in the store.
pub fn model_enum_name(value: u64) -> String {
    format!("model-{value}")
}

/// The model enum value named by [`model_enum_name`], if `name` is exactly
/// that form.
pub fn model_enum_value(name: &str) -> Option<u64> {
    canonical_number(name.strip_prefix("model-")?)
}

/// Thinking signatures: agy 1.1.23 keeps the bytes Gemini signed in the
/// message `{ 2 { 1: bytes } }`, both at PlannerResponse 14 and at
/// ChatToolCall 7 (FORMAT.md 13 rows 1-2, grade A). The message stream
/// carries the bytes as hex; these two functions are the whole mapping.
pub mod signature {
    use crate::agy::wire::{self, Writer};

    const OUTER: u32 = 2;
    const INNER: u32 = 1;

    /// The signed bytes of a signature field's value. A value of another
    /// shape (an older writer's raw bytes) is taken whole.
    pub fn read(value: &[u8]) -> &[u8] {
        let message = wire::Message::new(value);
        let mut fields = message.fields();
        let only_outer = matches!(
            (fields.next(), fields.next(), fields.is_damaged()),
            (Some(f), None, false) if f.number == OUTER
        );
        if only_outer {
            if let Some(inner) = message.get_message(OUTER) {
                let mut inner_fields = inner.fields();
                if let (Some(f), None, false) = (
                    inner_fields.next(),
                    inner_fields.next(),
                    inner_fields.is_damaged(),
                ) {
                    if let (INNER, wire::Value::Bytes(bytes)) = (f.number, f.value) {
                        return bytes;
                    }
                }
            }
        }
        value
    }

    /// Writes `bytes` as the signature field `number` in agy's shape.
    pub fn write(w: &mut Writer, number: u32, bytes: &[u8]) {
        w.message(number, |outer| {
            outer.message(OUTER, |inner| {
                inner.bytes(INNER, bytes);
            });
        });
    }
}

/// Parses decimal digits written the way `format!("{n}")` writes them (no
/// sign, no leading zero), so that parsing and printing are inverses.
fn canonical_number(digits: &str) -> Option<u64> {
    let value: u64 = digits.parse().ok()?;
    (value.to_string() == digits).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_consistent() {
        assert!(KIND_NAMES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(KIND_NAMES.len(), 118);
        assert_eq!(kind_name(132), Some("GENERIC"));
        assert_eq!(kind_name(11), None);
        assert_eq!(kind_by_name("RUN_COMMAND"), Some(kind::RUN_COMMAND));
        for &(kind, field) in PAYLOAD_FIELDS {
            assert!(kind_name(kind).is_some(), "{kind}");
            assert_eq!(kind_of_payload_field(field), Some(kind));
        }
        assert_eq!(
            payload_field(kind::CHECKPOINT),
            Some(field::step::CHECKPOINT)
        );
    }

    #[test]
    fn stop_reasons_and_models_invert() {
        for value in [0, 1, 2, 3, 10, 13, 16, 11, 999] {
            assert_eq!(stop_reason_value(&stop_reason_name(value)), Some(value));
        }
        assert_eq!(stop_reason_name(10), "tool_use");
        assert_eq!(stop_reason_name(7), "stop-7");
        assert_eq!(stop_reason_value("stop-07"), None);
        assert_eq!(stop_reason_value("stop--1"), None);
        assert_eq!(stop_reason_value("whatever"), None);
        assert_eq!(model_enum_value(&model_enum_name(1020)), Some(1020));
        assert_eq!(model_enum_value("model-x"), None);
        assert_eq!(model_enum_value("gemini-3-flash"), None);
    }

    #[test]
    fn settled_statuses() {
        assert!(is_settled(status::DONE) && is_settled(status::ERROR));
        assert!(!is_settled(status::PENDING) && !is_settled(0) && !is_settled(10));
    }
}
