//! The SQLite side: agy's schema, reading a conversation database into row
//! records, and writing row records into a new database.

/// The schema agy 1.0.16 writes (FORMAT.md 2.1, copied byte-for-byte from
/// real databases): `(type, name, sql)` in `sqlite_master` order. A stream
/// without schema records is packed with this.
pub const AGY_SCHEMA: &[(&str, &str, &str)] = &[
    ("table", "trajectory_meta", "CREATE TABLE `trajectory_meta` (`trajectory_id` text,`cascade_id` text,`trajectory_type` integer,`source` integer,PRIMARY KEY (`trajectory_id`))"),
    ("table", "steps", "CREATE TABLE `steps` (`idx` integer,`step_type` integer NOT NULL DEFAULT 0,`status` integer NOT NULL DEFAULT 0,`has_subtrajectory` numeric NOT NULL DEFAULT false,`metadata` blob,`error_details` blob,`permissions` blob,`task_details` blob,`render_info` blob,`step_payload` blob,`step_format` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))"),
    ("table", "gen_metadata", "CREATE TABLE `gen_metadata` (`idx` integer,`data` blob,`size` integer NOT NULL DEFAULT 0,PRIMARY KEY (`idx`))"),
    ("table", "executor_metadata", "CREATE TABLE `executor_metadata` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))"),
    ("table", "parent_references", "CREATE TABLE `parent_references` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))"),
    ("table", "trajectory_metadata_blob", "CREATE TABLE `trajectory_metadata_blob` (`id` text DEFAULT \"main\",`data` blob,PRIMARY KEY (`id`))"),
    ("table", "battle_mode_infos", "CREATE TABLE `battle_mode_infos` (`idx` integer,`data` blob,PRIMARY KEY (`idx`))"),
    ("index", "idx_steps_status", "CREATE INDEX `idx_steps_status` ON `steps`(`status`)"),
    ("index", "idx_steps_step_type", "CREATE INDEX `idx_steps_step_type` ON `steps`(`step_type`)"),
];

/// `PRAGMA user_version` of every agy database seen so far.
pub const AGY_USER_VERSION: i64 = 1;

/// The columns of agy's `steps` table, in order.
pub const STEPS_COLUMNS: &[&str] = &[
    "idx",
    "step_type",
    "status",
    "has_subtrajectory",
    "metadata",
    "error_details",
    "permissions",
    "task_details",
    "render_info",
    "step_payload",
    "step_format",
];
