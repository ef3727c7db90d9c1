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
    pub const THINKING_TOKENS: u32 = 9;
    pub const RESPONSE_TOKENS: u32 = 10;
    /// The response's id: one generation's, wherever its row is copied.
    pub const RESPONSE_ID: u32 = 11;
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
