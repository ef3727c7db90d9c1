//! agy's schema as agy writes it, and what a schema record may say.

use crate::error::{Error, Result};
use crate::stream::record::{self, Column};

use super::SchemaObject;

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

/// The columns of one of agy's tables, read from [`AGY_SCHEMA`] so the
/// schema stays the one place that says what they are and which hold blobs.
/// Empty for a table agy's schema does not have.
pub fn agy_columns(table: &str) -> Vec<Column> {
    let Some((_, _, sql)) = AGY_SCHEMA
        .iter()
        .find(|(object_type, name, _)| *object_type == "table" && *name == table)
    else {
        return Vec::new();
    };
    declared_columns(sql)
}

/// The columns a `CREATE TABLE` statement declares, in order, each with
/// its affinity, read from the statement without a database: agy's and
/// its index's statements read so are what SQLite's `pragma_table_info`
/// says of them (tests hold the two to agree).
pub fn declared_columns(sql: &str) -> Vec<Column> {
    definitions(sql)
        .into_iter()
        .filter_map(column_definition)
        .collect()
}

/// The definitions in a `CREATE TABLE` statement's list, column and
/// table constraint alike, split at the commas outside parentheses. Both
/// readers of agy's statements go through it: [`agy_columns`] and the file
/// reader's layout of defaults and rowid alias.
pub(crate) fn definitions(sql: &str) -> Vec<&str> {
    let (Some(open), Some(close)) = (sql.find('('), sql.rfind(')')) else {
        return Vec::new();
    };
    let mut definitions = Vec::new();
    let mut depth = 0;
    let mut start = open + 1;
    let body = &sql[..close];
    for (i, c) in body.char_indices().skip(open + 1) {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                definitions.push(body[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    definitions.push(body[start..].trim());
    definitions
}

/// The columns of every table in `schema` when each is created by the very
/// statement agy's schema has for it (as in every agy database), without
/// asking SQLite: its `pragma_table_info` query cost a conversation of 40
/// steps a tenth of agy-dump's instructions. `None` when any table is
/// another's, for [`super::read_columns`] to read.
pub(super) fn agy_tables_columns(schema: &[SchemaObject]) -> Option<Vec<(String, Vec<Column>)>> {
    static AGY: std::sync::OnceLock<Vec<(&str, &str, Vec<Column>)>> = std::sync::OnceLock::new();
    let agy = AGY.get_or_init(|| {
        AGY_SCHEMA
            .iter()
            .filter(|(object_type, _, _)| *object_type == "table")
            .map(|(_, name, sql)| (*name, *sql, agy_columns(name)))
            .collect()
    });
    schema
        .iter()
        .filter(|object| object.object_type == "table")
        .map(|object| {
            agy.iter()
                .find(|(name, sql, _)| *name == object.name && *sql == object.sql)
                .map(|(name, _, columns)| (name.to_string(), columns.clone()))
        })
        .collect()
}

/// `` `name` type … `` (agy's statements) or `name type …` (its
/// index's) as a column; a table constraint (`PRIMARY KEY (…)`, …) is
/// none.
fn column_definition(definition: &str) -> Option<Column> {
    const CONSTRAINTS: [&str; 5] = ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"];
    let definition = definition.trim();
    let (name, rest) = match definition.strip_prefix('`') {
        Some(quoted) => quoted.split_once('`')?,
        None => {
            let (name, rest) = definition
                .split_once(char::is_whitespace)
                .unwrap_or((definition, ""));
            if CONSTRAINTS
                .iter()
                .any(|word| name.eq_ignore_ascii_case(word))
            {
                return None;
            }
            (name, rest)
        }
    };
    let declared = rest.split_whitespace().next().unwrap_or("");
    Some(Column {
        name: name.to_string(),
        blob_affinity: record::is_blob_affinity(declared),
    })
}

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

/// The columns agy-dump and agy-decode cannot do without: a step's `idx`
/// numbers the conversation and `trajectory_meta.cascade_id` names it.
/// Any other column or table may be missing or new.
const REQUIRED_COLUMNS: &[(&str, &str)] = &[("steps", "idx"), ("trajectory_meta", "cascade_id")];

/// Whether `tables` (as [`super::read_columns`] lists them) are an agy
/// conversation's, and if not, why. agy-dump skips a database that is not;
/// agy-pack refuses to write one, so that what it writes always dumps.
pub fn check_agy_shape(tables: &[(String, Vec<Column>)]) -> std::result::Result<(), String> {
    for (table, column) in REQUIRED_COLUMNS {
        let Some((_, columns)) = tables.iter().find(|(t, _)| t == table) else {
            return Err(format!("no {table} table"));
        };
        if !columns.iter().any(|c| c.name == *column) {
            return Err(format!("no {column} column in table {table}"));
        }
    }
    Ok(())
}

/// Checks that `sql` is one `CREATE TABLE` or `CREATE [UNIQUE] INDEX`
/// statement of the declared `object_type`; a stream may not run anything
/// else (triggers, views, ATTACH, pragmas, several statements).
pub fn check_schema_sql(object_type: &str, sql: &str) -> Result<()> {
    let words: Vec<String> = sql
        .split_ascii_whitespace()
        .take(3)
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let statement_type = match words.as_slice() {
        ["CREATE", "TABLE", ..] => "table",
        ["CREATE", "INDEX", ..] | ["CREATE", "UNIQUE", "INDEX"] => "index",
        _ => {
            return Err(Error::data(
                "only CREATE TABLE and CREATE [UNIQUE] INDEX statements are accepted",
            ))
        }
    };
    if has_second_statement(sql) {
        return Err(Error::data("schema SQL holds more than one statement"));
    }
    if statement_type != object_type {
        return Err(Error::data(format!(
            "schema record of type {object_type:?} holds a CREATE {} statement",
            statement_type.to_ascii_uppercase()
        )));
    }
    Ok(())
}

/// True when something other than blanks and comments follows the first
/// `;` that is outside quotes and comments.
fn has_second_statement(sql: &str) -> bool {
    let bytes = sql.as_bytes();
    let mut i = 0;
    let mut ended = false;
    while i < bytes.len() {
        let b = bytes[i];
        let closing = match b {
            b'\'' => Some(b'\''),
            b'"' => Some(b'"'),
            b'`' => Some(b'`'),
            b'[' => Some(b']'),
            _ => None,
        };
        if let Some(close) = closing {
            if ended {
                return true;
            }
            i += 1;
            while i < bytes.len() && bytes[i] != close {
                i += 1;
            }
            i += 1;
        } else if bytes[i..].starts_with(b"--") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            i = match sql[i + 2..].find("*/") {
                Some(end) => i + 2 + end + 2,
                None => bytes.len(),
            };
        } else if b == b';' {
            ended = true;
            i += 1;
        } else {
            if ended && !b.is_ascii_whitespace() {
                return true;
            }
            i += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::{read_columns, read_schema};
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn columns_come_from_the_schema() {
        let steps = agy_columns("steps");
        let names: Vec<&str> = steps.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, STEPS_COLUMNS);
        let blobs: Vec<&str> = steps
            .iter()
            .filter(|c| c.blob_affinity)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            blobs,
            [
                "metadata",
                "error_details",
                "permissions",
                "task_details",
                "render_info",
                "step_payload"
            ]
        );
        let blob = agy_columns("trajectory_metadata_blob");
        assert_eq!(
            blob,
            [
                Column {
                    name: "id".into(),
                    blob_affinity: false
                },
                Column {
                    name: "data".into(),
                    blob_affinity: true
                },
            ]
        );
        assert_eq!(agy_columns("trajectory_meta").len(), 4);
        assert!(agy_columns("nonesuch").is_empty());
    }

    #[test]
    fn agy_tables_have_the_columns_sqlite_reports() {
        let conn = Connection::open_in_memory().unwrap();
        for (_, _, sql) in AGY_SCHEMA {
            conn.execute(sql, []).unwrap();
        }
        let schema = read_schema(&conn).unwrap();
        let known = agy_tables_columns(&schema).expect("agy's own schema");
        assert_eq!(known, read_columns(&conn).unwrap());
        assert_eq!(known.len(), 7);
        // A table agy's schema does not have, or one written otherwise,
        // is left to SQLite.
        conn.execute("CREATE TABLE extra (a, b BLOB)", []).unwrap();
        assert!(agy_tables_columns(&read_schema(&conn).unwrap()).is_none());
        let other = Connection::open_in_memory().unwrap();
        other
            .execute("CREATE TABLE `trajectory_meta` (`cascade_id` text)", [])
            .unwrap();
        assert!(agy_tables_columns(&read_schema(&other).unwrap()).is_none());
    }

    #[test]
    fn schema_sql_is_one_create_statement() {
        for (object_type, name, sql) in AGY_SCHEMA {
            check_schema_sql(object_type, sql).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        check_schema_sql("table", "CREATE TABLE t (a DEFAULT ';x'); -- done").unwrap();
        check_schema_sql("index", "create unique index i on t(a)").unwrap();
        for (object_type, sql) in [
            ("table", "CREATE TABLE a(x); DROP TABLE b"),
            ("table", "CREATE TABLE a(x);/* */ ATTACH 'x' AS y"),
            (
                "table",
                "CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; END",
            ),
            ("table", "CREATE VIEW v AS SELECT 1"),
            ("table", "ATTACH DATABASE '/tmp/x' AS x"),
            ("table", "PRAGMA writable_schema = 1"),
            ("index", "CREATE TABLE a(x)"),
        ] {
            assert!(check_schema_sql(object_type, sql).is_err(), "{sql}");
        }
    }
}
