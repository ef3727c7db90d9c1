//! Where agy keeps its data, and how paths under it are checked.
//!
//! The default data root is `$GEMINI_HOME/antigravity-cli` when `GEMINI_HOME`
//! is set (it relocates the whole `~/.gemini` tree), else
//! `$HOME/.gemini/antigravity-cli` (`USERPROFILE` on Windows). The ACP server
//! lane keeps the same layout under `antigravity-acp`, and the desktop app
//! (Antigravity 2.x) under `antigravity` (FORMAT.md 15 row 9); what a
//! conversation of each lane says of its lane is [`Lane::marks`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::agy::steps::{TRAJECTORY_SOURCE_CLI, TRAJECTORY_SOURCE_DESKTOP};
use crate::error::{Error, Result};

/// Which agy surface's store to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Lane {
    /// The terminal CLI: `antigravity-cli`.
    #[default]
    Cli,
    /// The ACP server: `antigravity-acp`.
    Acp,
    /// The desktop app: `antigravity`.
    Desktop,
}

/// What a conversation of a lane says of the lane that wrote it, in its
/// database and its index row (FORMAT.md 15 row 9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marks {
    /// `trajectory_meta.source`.
    pub trajectory_source: i64,
    /// The trajectory metadata's and the index row's `project_id` of a
    /// conversation in no project of the desktop app's.
    pub project_id: &'static str,
    /// The index row's `source`, `app_data_dir` and `status` (of a
    /// conversation at rest).
    pub index_source: &'static str,
    pub app_data_dir: &'static str,
    pub status: &'static str,
}

/// The CLI's marks (FORMAT.md 14 row 7, 15 row 9).
pub const CLI: Marks = Marks {
    trajectory_source: TRAJECTORY_SOURCE_CLI,
    project_id: "default-cli-project",
    index_source: "antigravity-cli",
    app_data_dir: "antigravity-cli",
    status: "",
};

/// The desktop app's marks (FORMAT.md 15 row 9).
pub const DESKTOP: Marks = Marks {
    trajectory_source: TRAJECTORY_SOURCE_DESKTOP,
    project_id: "outside-of-project",
    index_source: "",
    app_data_dir: "antigravity",
    status: "CASCADE_RUN_STATUS_IDLE",
};

impl Lane {
    pub fn parse(name: &str) -> Result<Lane> {
        match name {
            "cli" => Ok(Lane::Cli),
            "acp" => Ok(Lane::Acp),
            "desktop" => Ok(Lane::Desktop),
            other => Err(Error::usage(format!(
                "unknown lane {other:?} (expected cli, acp or desktop)"
            ))),
        }
    }

    /// The lane's word on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Cli => "cli",
            Lane::Acp => "acp",
            Lane::Desktop => "desktop",
        }
    }

    pub fn dir_name(self) -> &'static str {
        match self {
            Lane::Cli => "antigravity-cli",
            Lane::Acp => "antigravity-acp",
            Lane::Desktop => "antigravity",
        }
    }

    /// How its conversations mark their lane; `None` for the ACP lane,
    /// whose conversations are told by their sidecar and of whose other
    /// marks no fact speaks.
    pub fn marks(self) -> Option<Marks> {
        match self {
            Lane::Cli => Some(CLI),
            Lane::Desktop => Some(DESKTOP),
            Lane::Acp => None,
        }
    }

    /// The lane whose conversations have this `trajectory_meta.source`.
    pub fn of_trajectory_source(source: i64) -> Option<Lane> {
        [Lane::Cli, Lane::Desktop]
            .into_iter()
            .find(|lane| lane.marks().is_some_and(|m| m.trajectory_source == source))
    }
}

/// The default data root for `lane`, from the environment.
pub fn default_root(lane: Lane) -> Result<PathBuf> {
    default_root_from(lane, |key| std::env::var_os(key))
}

/// [`default_root`] with the environment passed in, for tests.
pub fn default_root_from(lane: Lane, env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    let nonempty = |key: &str| env(key).filter(|v| !v.is_empty());
    let gemini = if let Some(dir) = nonempty("GEMINI_HOME") {
        PathBuf::from(dir)
    } else {
        let home = nonempty("HOME")
            .or_else(|| {
                if cfg!(windows) {
                    nonempty("USERPROFILE")
                } else {
                    None
                }
            })
            .ok_or_else(|| {
                Error::usage("no data root given and neither GEMINI_HOME nor HOME is set")
            })?;
        PathBuf::from(home).join(".gemini")
    };
    Ok(gemini.join(lane.dir_name()))
}

/// Checks that a conversation id can be used as a file name: a plain path
/// component, so `conversations/<id>.db` and `brain/<id>` stay in the root.
pub fn check_id(id: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::data(format!("conversation id {id:?} {why}")));
    if id.is_empty() {
        return bad("is empty");
    }
    if id == "." || id == ".." {
        return bad("is not a plain file name");
    }
    if id.contains(['/', '\\', '\0']) {
        return bad("contains a path separator or NUL");
    }
    if id.starts_with('.') {
        return bad("starts with a dot");
    }
    if id.len() > 200 {
        return bad("is longer than 200 bytes");
    }
    Ok(())
}

/// Checks that `id` is a conversation id as agy gives them: a UUID in its
/// lower-case hyphenated form (36 characters). A fork's id is one agy could
/// have given, so nothing else in a store can mistake it for a name.
pub fn check_conversation_uuid(id: &str) -> Result<()> {
    let canonical = uuid::Uuid::try_parse(id)
        .ok()
        .map(|u| u.hyphenated().to_string());
    match canonical.as_deref() == Some(id) {
        true => Ok(()),
        false => Err(Error::data(format!(
            "{id:?} is not a conversation id as agy gives them (a lower-case UUID, 8-4-4-4-12 hex digits)"
        ))),
    }
}

/// Checks a brain file path from a stream: relative, made of plain
/// components, no `..`, no NUL.
pub fn check_relative_path(path: &str) -> Result<PathBuf> {
    let bad = |why: &str| Err(Error::data(format!("file path {path:?} {why}")));
    if path.is_empty() {
        return bad("is empty");
    }
    if path.contains('\0') {
        return bad("contains NUL");
    }
    if path.starts_with('/') || path.contains('\\') || Path::new(path).is_absolute() {
        return bad("is not relative");
    }
    let mut out = PathBuf::new();
    for part in path.split('/') {
        match part {
            "" | "." => return bad("has an empty or '.' component"),
            ".." => return bad("climbs out with '..'"),
            _ => out.push(part),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_follow_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            default_root_from(Lane::Cli, env(&[("HOME", "/h")])).unwrap(),
            PathBuf::from("/h/.gemini/antigravity-cli")
        );
        assert_eq!(
            default_root_from(Lane::Acp, env(&[("HOME", "/h"), ("GEMINI_HOME", "/g")])).unwrap(),
            PathBuf::from("/g/antigravity-acp")
        );
        assert_eq!(
            default_root_from(Lane::Desktop, env(&[("HOME", "/h")])).unwrap(),
            PathBuf::from("/h/.gemini/antigravity")
        );
        assert!(default_root_from(Lane::Cli, env(&[])).is_err());
    }

    #[test]
    fn ids_and_paths_are_contained() {
        for bad in ["", ".", "..", "a/b", "a\\b", "a\0b", ".hidden"] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
        check_id("0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b").unwrap();
        for bad in ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a\0"] {
            assert!(check_relative_path(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            check_relative_path(".system_generated/logs/transcript.jsonl").unwrap(),
            PathBuf::from(".system_generated/logs/transcript.jsonl")
        );
    }
}
