//! The numbers of agy's step schema (FORMAT.md sections 3–6), in one place.
//!
//! Step field numbers and step *type* numbers share many integers with
//! different meanings (field 23 is write_to_file, type 23 is CHECKPOINT), so
//! each lives in its own module and nothing outside this file spells a raw
//! number for either.

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
pub mod field {
    /// gemini_coder.Step.
    pub mod step {
        pub const TYPE: u32 = 1;
        pub const STATUS: u32 = 4;
        pub const METADATA: u32 = 5;
        pub const CODE_ACTION: u32 = 10;
        pub const FINISH: u32 = 12;
        pub const GREP_SEARCH: u32 = 13;
        pub const VIEW_FILE: u32 = 14;
        pub const LIST_DIRECTORY: u32 = 15;
        pub const USER_INPUT: u32 = 19;
        pub const PLANNER_RESPONSE: u32 = 20;
        pub const WRITE_TO_FILE: u32 = 23;
        pub const ERROR_MESSAGE: u32 = 24;
        pub const RUN_COMMAND: u32 = 28;
        pub const CHECKPOINT: u32 = 30;
        pub const ERROR: u32 = 31;
        pub const FIND: u32 = 34;
        pub const COMMAND_STATUS: u32 = 37;
        pub const MEMORY: u32 = 38;
        pub const READ_URL_CONTENT: u32 = 40;
        pub const SEARCH_WEB: u32 = 42;
        pub const MCP_TOOL: u32 = 47;
        pub const TASK_BOUNDARY: u32 = 93;
        pub const NOTIFY_USER: u32 = 94;
        pub const FILE_CHANGE: u32 = 98;
        pub const EPHEMERAL_MESSAGE: u32 = 103;
        pub const CONVERSATION_HISTORY: u32 = 111;
        pub const SEND_COMMAND_INPUT: u32 = 113;
        pub const SYSTEM_MESSAGE: u32 = 114;
        pub const AGENCY_TOOL_CALL: u32 = 116;
        pub const SHELL_EXEC: u32 = 127;
        pub const GENERIC: u32 = 140;
        pub const INVOKE_SUBAGENT: u32 = 143;
        pub const ASK_QUESTION: u32 = 154;
        pub const DIRECTORY_RULES: u32 = 156;
    }

    /// CortexStepMetadata (Step field 5, column `metadata`).
    pub mod metadata {
        pub const CREATED_AT: u32 = 1;
        pub const SOURCE: u32 = 3;
        pub const TOOL_CALL: u32 = 4;
        pub const MODEL_USAGE: u32 = 9;
        pub const GENERATOR_MODEL: u32 = 11;
        /// source_trajectory_step_info {1 trajectory_id, 2 step_index, 4
        /// cascade_id} (FORMAT.md 5, grade A): a step names its own idx.
        pub const SOURCE_STEP_INFO: u32 = 20;
        pub const SOURCE_TRAJECTORY_ID: u32 = 1;
        pub const SOURCE_STEP_INDEX: u32 = 2;
        pub const STEP_GENERATION_VERSION: u32 = 21;
        pub const MODEL_INFO: u32 = 24;
        /// ModelInfo.model_name.
        pub const MODEL_INFO_NAME: u32 = 8;
    }

    /// google.protobuf.Timestamp.
    pub mod timestamp {
        pub const SECONDS: u32 = 1;
        pub const NANOS: u32 = 2;
    }

    /// ChatToolCall.
    pub mod tool_call {
        pub const ID: u32 = 1;
        pub const NAME: u32 = 2;
        pub const ARGUMENTS_JSON: u32 = 3;
        pub const THINKING_SIGNATURE: u32 = 7;
        pub const ORIGINAL_NAME: u32 = 9;
    }

    /// ModelUsageStats.
    pub mod usage {
        pub const MODEL: u32 = 1;
        pub const INPUT_TOKENS: u32 = 2;
        pub const OUTPUT_TOKENS: u32 = 3;
        pub const CACHE_WRITE_TOKENS: u32 = 4;
        pub const CACHE_READ_TOKENS: u32 = 5;
    }

    /// CortexStepUserInput (Step field 19).
    pub mod user_input {
        pub const QUERY: u32 = 1;
        pub const USER_RESPONSE: u32 = 2;
        pub const ITEMS: u32 = 3;
        /// TextOrScopeItem.text.
        pub const ITEM_TEXT: u32 = 1;
        pub const IMAGES: u32 = 5;
        pub const MEDIA: u32 = 9;
        /// The planner configuration the turn ran with (FORMAT.md 13 row
        /// 5, grade B): `12.1.28` is the model's name, the only real model
        /// name seen inside a step.
        pub const PLANNER_CONFIG: u32 = 12;
        pub const PLANNER_CONFIG_MODEL: u32 = 1;
        pub const PLANNER_CONFIG_MODEL_NAME: u32 = 28;
    }

    /// Media (grade B for 1, 2, 5).
    pub mod media {
        pub const MIME_TYPE: u32 = 1;
        pub const INLINE_DATA: u32 = 2;
        pub const URI: u32 = 5;
    }

    /// ImageData.
    pub mod image {
        pub const BASE64_DATA: u32 = 1;
        pub const MIME_TYPE: u32 = 2;
    }

    /// CortexStepPlannerResponse (Step field 20).
    pub mod planner {
        pub const RESPONSE: u32 = 1;
        pub const THINKING: u32 = 3;
        /// TX's string form of the thinking signature; agy 1.1.23 writes
        /// [`THINKING_SIGNATURE`] instead.
        pub const SIGNATURE: u32 = 4;
        /// The thinking signature as agy 1.1.23 writes it (FORMAT.md 13 row
        /// 1, grade A): the message `14 { 2 { 1: bytes } }`.
        pub const THINKING_SIGNATURE: u32 = 14;
        pub const MESSAGE_ID: u32 = 6;
        pub const TOOL_CALLS: u32 = 7;
        pub const MODIFIED_RESPONSE: u32 = 8;
        pub const STOP_REASON: u32 = 12;
        pub const RAW_THINKING: u32 = 16;
    }

    /// CortexStepRunCommand (Step field 28).
    pub mod run_command {
        pub const COMMAND: u32 = 1;
        pub const CWD: u32 = 2;
        pub const STDOUT: u32 = 4;
        pub const STDERR: u32 = 5;
        pub const EXIT_CODE: u32 = 6;
        pub const BLOCKING: u32 = 11;
        pub const WAIT_MS_BEFORE_ASYNC: u32 = 12;
        pub const STDOUT_OUTPUT: u32 = 19;
        pub const COMBINED_OUTPUT: u32 = 21;
        pub const COMMAND_LINE: u32 = 23;
        /// RunCommandOutput.full / .truncated.
        pub const OUTPUT_FULL: u32 = 1;
        pub const OUTPUT_TRUNCATED: u32 = 2;
    }

    /// CortexStepViewFile (Step field 14).
    pub mod view_file {
        pub const ABSOLUTE_PATH_URI: u32 = 1;
        pub const START_LINE: u32 = 2;
        pub const END_LINE: u32 = 3;
        pub const CONTENT: u32 = 4;
        pub const RAW_CONTENT: u32 = 9;
    }

    /// CortexStepListDirectory (Step field 15) and ListDirectoryResult.
    pub mod list_directory {
        pub const DIRECTORY_PATH_URI: u32 = 1;
        pub const CHILDREN: u32 = 2;
        pub const RESULTS: u32 = 3;
        pub const DIR_NOT_FOUND: u32 = 4;
        pub const RESULT_NAME: u32 = 1;
        pub const RESULT_IS_DIR: u32 = 2;
        pub const RESULT_NUM_CHILDREN: u32 = 3;
        pub const RESULT_SIZE_BYTES: u32 = 4;
    }

    /// CortexStepGrepSearch (Step field 13).
    pub mod grep_search {
        pub const RAW_OUTPUT: u32 = 3;
        pub const GREP_ERROR: u32 = 5;
    }

    /// CortexStepCodeAction (Step field 10) and the messages inside it.
    pub mod code_action {
        pub const ACTION_SPEC: u32 = 1;
        pub const ACTION_RESULT: u32 = 2;
        pub const USE_FAST_APPLY: u32 = 4;
        /// ActionSpec oneof arms.
        pub const SPEC_COMMAND: u32 = 1;
        pub const SPEC_CREATE_FILE: u32 = 2;
        /// ActionSpecCommand.
        pub const COMMAND_IS_EDIT: u32 = 2;
        pub const COMMAND_FILE: u32 = 4;
        pub const COMMAND_REPLACEMENT_CHUNKS: u32 = 9;
        /// ReplacementChunk.
        pub const CHUNK_TARGET: u32 = 1;
        pub const CHUNK_REPLACEMENT: u32 = 2;
        pub const CHUNK_ALLOW_MULTIPLE: u32 = 3;
        /// ActionSpecCreateFile.
        pub const CREATE_INSTRUCTION: u32 = 1;
        pub const CREATE_PATH: u32 = 2;
        pub const CREATE_OVERWRITE: u32 = 4;
        /// PathScopeItem.
        pub const PATH_LEGACY: u32 = 1;
        pub const PATH_URI: u32 = 5;
        /// ActionResult.edit and ActionResultEdit.
        pub const RESULT_EDIT: u32 = 1;
        pub const EDIT_ABSOLUTE_URI: u32 = 8;
        pub const EDIT_ORIGINAL_CONTENT: u32 = 10;
        pub const EDIT_CREATE_FILE: u32 = 11;
    }

    /// CortexStepMcpTool (Step field 47).
    pub mod mcp_tool {
        pub const RESULT_STRING: u32 = 3;
    }

    /// CortexStepGeneric (Step field 140) and GenericStepResult.
    pub mod generic {
        pub const ARGS: u32 = 1;
        pub const RESULT: u32 = 2;
        /// Map entry.
        pub const ENTRY_KEY: u32 = 1;
        pub const ENTRY_VALUE: u32 = 2;
        /// GenericStepResult.result.
        pub const RESULT_TEXT: u32 = 1;
        /// GenericStepResult.data (IDE, grade C): an Any.
        pub const RESULT_DATA: u32 = 5;
        /// The kind step the result wraps (grade B): a Step or an Any.
        pub const RESULT_NESTED: u32 = 6;
        pub const RESULT_FULL_OUTPUT_URI: u32 = 7;
    }

    /// google.protobuf.Any.
    pub mod any {
        pub const TYPE_URL: u32 = 1;
        pub const VALUE: u32 = 2;
    }

    /// CortexStepWriteToFile (Step field 23).
    pub mod write_to_file {
        pub const TARGET_FILE_URI: u32 = 1;
        pub const FILE_CREATED: u32 = 4;
    }

    /// CortexStepFileChange (Step field 98) and FileChangeType.
    pub mod file_change {
        pub const ABSOLUTE_PATH_URI: u32 = 1;
        pub const FILE_CHANGE_TYPE: u32 = 2;
        pub const CREATE: u64 = 1;
        pub const EDIT: u64 = 2;
        pub const DELETE: u64 = 3;
    }

    /// CortexStepFind (Step field 34).
    pub mod find {
        pub const PATTERN: u32 = 1;
        pub const FIND_ERROR: u32 = 8;
        pub const RAW_OUTPUT: u32 = 11;
    }

    /// CortexStepCommandStatus (Step field 37).
    pub mod command_status {
        pub const STDOUT: u32 = 3;
        pub const STDERR: u32 = 4;
        pub const COMBINED: u32 = 9;
    }

    /// CortexStepReadUrlContent (Step field 40) and KnowledgeBaseItem.
    pub mod read_url_content {
        pub const WEB_DOCUMENT: u32 = 2;
        pub const DOCUMENT_TEXT: u32 = 2;
    }

    /// CortexStepSearchWeb (Step field 42).
    pub mod search_web {
        pub const SUMMARY: u32 = 5;
    }

    /// CortexStepShellExec (Step field 127).
    pub mod shell_exec {
        pub const OUTPUT: u32 = 3;
        pub const ERROR_MESSAGE: u32 = 4;
    }

    /// CortexStepSendCommandInput (Step field 113).
    pub mod send_command_input {
        /// RunCommandOutput (grade C).
        pub const OUTPUT: u32 = 8;
    }

    /// CortexStepInvokeSubagent (Step field 143) and SubagentResult.
    pub mod invoke_subagent {
        pub const CONVERSATION_ID: u32 = 5;
        pub const RESULTS: u32 = 10;
        pub const RESULT_CONVERSATION_ID: u32 = 1;
    }

    /// CortexStepAskQuestion (Step field 154), AskQuestionEntry and its
    /// options.
    pub mod ask_question {
        pub const QUESTIONS: u32 = 1;
        pub const QUESTION: u32 = 1;
        pub const OPTIONS: u32 = 2;
        pub const SELECTED_OPTION_IDS: u32 = 4;
        pub const WRITE_IN_RESPONSE: u32 = 5;
        pub const SKIPPED: u32 = 6;
        pub const OPTION_ID: u32 = 1;
        pub const OPTION_TEXT: u32 = 2;
    }

    /// CortexStepAgencyToolCall (Step field 116) and the
    /// `antigravity.localharness.ToolResponse` its responses wrap.
    pub mod agency_tool_call {
        pub const RESPONSE_MESSAGES: u32 = 4;
        pub const TOOL_RESPONSE_TYPE: &str = "antigravity.localharness.ToolResponse";
        pub const RESPONSE_JSON: u32 = 2;
        pub const RESPONSE_ERROR: u32 = 5;
    }

    /// CortexStepMemory (Step field 38) and MemoryActionType.
    pub mod memory {
        pub const MEMORY_ID: u32 = 1;
        pub const ACTION: u32 = 3;
    }

    /// CortexStepFinish (Step field 12).
    pub mod finish {
        pub const OUTPUT_STRING: u32 = 2;
    }

    /// CortexStepTaskBoundary (Step field 93).
    pub mod task_boundary {
        pub const TASK_NAME: u32 = 1;
        pub const TASK_STATUS: u32 = 2;
        pub const TASK_SUMMARY: u32 = 3;
    }

    /// CortexStepNotifyUser (Step field 94).
    pub mod notify_user {
        pub const NOTIFICATION_CONTENT: u32 = 2;
    }

    /// CortexStepSystemMessage (Step field 114).
    pub mod system_message {
        pub const MESSAGE: u32 = 1;
        pub const EVENT_TYPE: u32 = 3;
    }

    /// The one text field of CortexStepEphemeralMessage (103) and
    /// CortexStepConversationHistory (111).
    pub mod content_message {
        pub const CONTENT: u32 = 1;
    }

    /// CortexStepDirectoryRules (Step field 156).
    pub mod directory_rules {
        pub const RULE_FILE_URIS: u32 = 2;
    }

    /// CortexTrajectoryReference (`parent_references.data`).
    pub mod reference {
        pub const TRAJECTORY_ID: u32 = 1;
        pub const STEP_INDEX: u32 = 2;
        pub const REFERENCE_TYPE: u32 = 5;
        pub const CONVERSATION_ID: u32 = 6;
        pub const FORK: u64 = 2;
        pub const SUBAGENT_FORK: u64 = 6;
    }

    /// CortexStepErrorMessage (Step field 24).
    pub mod error_message {
        pub const ERROR: u32 = 3;
    }

    /// CortexErrorDetails (Step field 31, column `error_details`).
    pub mod error_details {
        pub const USER_ERROR_MESSAGE: u32 = 1;
        pub const SHORT_ERROR: u32 = 2;
        pub const FULL_ERROR: u32 = 3;
        pub const MODEL_ERROR_MESSAGE: u32 = 9;
    }

    /// CortexStepCheckpoint (Step field 30).
    pub mod checkpoint {
        pub const USER_INTENT: u32 = 4;
        pub const SESSION_SUMMARY: u32 = 5;
        pub const INTENT_ONLY: u32 = 9;
        pub const CONVERSATION_TITLE: u32 = 10;
    }

    /// CortexTrajectoryMetadata (`trajectory_metadata_blob` "main") and
    /// CortexWorkspaceMetadata.
    pub mod trajectory {
        pub const WORKSPACES: u32 = 1;
        pub const CREATED_AT: u32 = 2;
        pub const PARENT_CONVERSATION_ID: u32 = 5;
        pub const ROOT_CONVERSATION_ID: u32 = 6;
        pub const WORKSPACE_URIS: u32 = 7;
        pub const PROJECT_ID: u32 = 18;
        pub const WORKSPACE_FOLDER_URI: u32 = 1;
        pub const WORKSPACE_GIT_ROOT_URI: u32 = 2;
        pub const WORKSPACE_BRANCH: u32 = 4;
    }

    /// CortexStepGeneratorMetadata (`gen_metadata.data`) and ChatModelMetadata.
    pub mod generator {
        pub const CHAT_MODEL: u32 = 1;
        pub const STEP_INDICES: u32 = 2;
        /// ChatModelMetadata.usage (ModelUsageStats, whose field 1 is the
        /// model enum): ties the human name to the enum the steps carry.
        pub const USAGE: u32 = 4;
        pub const RESPONSE_MODEL: u32 = 19;
    }
}

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
