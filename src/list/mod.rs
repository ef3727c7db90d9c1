//! agy-ls: the conversations of a data root (or of named databases), newest
//! first, one JSON line each, or an aligned table for people.
//!
//! Each conversation is read from the root's index and its database's
//! metadata, not from every step: its trajectory metadata (workspace,
//! branch, creation time, parent), `gen_metadata` (models), a count of its
//! steps, and the few steps that decide a title and the last user input
//! ([`summary::of_database`]). A database that cannot be read is named and
//! the others are still listed.
//!
//! Imports: [`crate::decode`] and the layers below it.

mod table;

pub use table::write_table;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::agy::paths::Dir;
use crate::decode::summary;
use crate::error::{Error, Result};
use crate::store::dump::{self, Target};
use crate::store::index::{self, IndexRow, Summary};
use crate::store::project;
use crate::store::root::Lane;
use crate::store::sqlite::{self, OpenError, Source};
use crate::stream::json;
use crate::time::Timestamp;

/// What agy-ls writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// One JSON object a line (the default).
    #[default]
    Json,
    /// Aligned columns with a header line.
    Table,
}

impl Format {
    pub fn parse(name: &str) -> Result<Format> {
        match name {
            "json" => Ok(Format::Json),
            "table" => Ok(Format::Table),
            other => Err(Error::usage(format!(
                "unknown format {other:?} (expected json or table)"
            ))),
        }
    }
}

/// Whether the index lists a conversation, and whether its row is true.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indexed {
    /// The row agrees with the database (step count, last user input).
    Agrees,
    /// The row disagrees: agy's list shows steps that are not there, or
    /// misses some (`agy-pack --reindex` brings it up to date).
    Stale,
    /// No row (agy writes rows lazily), or the root has no index.
    Missing,
}

impl Indexed {
    pub fn name(self) -> &'static str {
        match self {
            Indexed::Agrees => "agrees",
            Indexed::Stale => "stale",
            Indexed::Missing => "missing",
        }
    }
}

/// One conversation as listed.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub id: String,
    /// The index row's title when it has one (agy's own name for the
    /// conversation), else agy-decode's meta title.
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub branch: Option<String>,
    pub created: Option<Timestamp>,
    /// The time of the latest step, else the creation time.
    pub last_active: Option<Timestamp>,
    pub step_count: i64,
    pub models: Vec<String>,
    /// `cli`, `acp` or `desktop`: the ACP server's conversations have an
    /// `<id>.meta` sidecar and live under `antigravity-acp`, the desktop
    /// app's live under `antigravity` and name it as their trajectory's
    /// source.
    pub lane: &'static str,
    pub parent: Option<String>,
    /// The database, its `-wal`, its `.meta` and its brain directory.
    pub bytes: u64,
    pub index: Indexed,
}

impl Entry {
    /// Writes the entry's JSON line, keys in a fixed order, absent values
    /// as `null` so every line has every key.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let opt_str = |out: &mut Vec<u8>, value: Option<&str>| match value {
            Some(v) => json::write_str(out, v),
            None => out.extend_from_slice(b"null"),
        };
        let time = |t: Option<Timestamp>| t.and_then(|t| t.format());
        out.extend_from_slice(b"{\"id\":");
        json::write_str(out, &self.id);
        out.extend_from_slice(b",\"title\":");
        opt_str(out, self.title.as_deref());
        out.extend_from_slice(b",\"cwd\":");
        opt_str(out, self.cwd.as_deref());
        out.extend_from_slice(b",\"branch\":");
        opt_str(out, self.branch.as_deref());
        out.extend_from_slice(b",\"created\":");
        opt_str(out, time(self.created).as_deref());
        out.extend_from_slice(b",\"last_active\":");
        opt_str(out, time(self.last_active).as_deref());
        out.extend_from_slice(b",\"step_count\":");
        json::write_i64(out, self.step_count);
        out.extend_from_slice(b",\"models\":[");
        for (i, model) in self.models.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            json::write_str(out, model);
        }
        out.extend_from_slice(b"],\"lane\":");
        json::write_str(out, self.lane);
        out.extend_from_slice(b",\"parent\":");
        opt_str(out, self.parent.as_deref());
        out.extend_from_slice(b",\"bytes\":");
        json::write_u64(out, self.bytes);
        out.extend_from_slice(b",\"index\":");
        json::write_str(out, self.index.name());
        out.extend_from_slice(b"}\n");
    }
}

/// What to list.
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// Only conversations of which something changed after this (as
    /// agy-dump `--changed-since` decides it).
    pub changed_since: Option<SystemTime>,
    /// Only conversations whose project is this directory or under it
    /// (as agy-edit move decides it).
    pub under: Option<Dir>,
}

/// The conversations of `targets`, newest first (latest activity, then
/// id, so equal stores list alike), and how many could not be read (each
/// named through `warn`).
pub fn list(
    targets: &[Target],
    options: &ListOptions,
    warn: &mut dyn FnMut(String),
) -> Result<(Vec<Entry>, u64)> {
    let mut entries = Vec::new();
    let mut failed = 0;
    let mut indexes: Vec<(PathBuf, Option<index::Reader>)> = Vec::new();
    for target in targets {
        if let Some(since) = options.changed_since {
            match dump::changed_after(target, since) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => {
                    warn(format!("{}: {e} (not listed)", target.db.display()));
                    failed += 1;
                    continue;
                }
            }
        }
        let reader = match target.root() {
            Some(root) => {
                if !indexes.iter().any(|(r, _)| r == root) {
                    let reader = index::Reader::open(root).unwrap_or_else(|e| {
                        warn(format!("{e} (listed as missing from the index)"));
                        failed += 1;
                        None
                    });
                    indexes.push((root.to_path_buf(), reader));
                }
                let (_, reader) = indexes.iter().find(|(r, _)| r == root).expect("just added");
                reader.as_ref()
            }
            None => None,
        };
        match entry(target, reader, options.under.as_ref()) {
            Ok(Some(entry)) => entries.push(entry),
            Ok(None) => {}
            Err(Skip::NotAgy(why)) => warn(format!(
                "{}: skipped, not an agy conversation database ({why})",
                target.db.display()
            )),
            Err(Skip::Failed(e)) => {
                warn(format!("{}: {e} (not listed)", target.db.display()));
                failed += 1;
            }
        }
    }
    entries.sort_by(|a, b| {
        b.last_active
            .cmp(&a.last_active)
            .then_with(|| a.id.as_bytes().cmp(b.id.as_bytes()))
    });
    Ok((entries, failed))
}

/// Why a database is not listed.
enum Skip {
    /// A file in a root that is not an agy database.
    NotAgy(String),
    Failed(Error),
}

impl From<Error> for Skip {
    fn from(e: Error) -> Skip {
        Skip::Failed(e)
    }
}

/// One conversation's entry; `None` for a database that is not agy's
/// (found in a root; named, it is an error), or whose project is not
/// under `under`.
fn entry(
    target: &Target,
    index: Option<&index::Reader>,
    under: Option<&Dir>,
) -> Result<Option<Entry>, Skip> {
    let source = match Source::open(&target.db) {
        Ok(source) => source,
        Err(OpenError::NotAgy(why)) if !target.explicit => return Err(Skip::NotAgy(why)),
        Err(OpenError::NotAgy(why)) => {
            return Err(Skip::Failed(Error::data(format!(
                "not an agy conversation database ({why})"
            ))))
        }
        Err(OpenError::Failed(e)) => return Err(Skip::Failed(e)),
    };
    let stem = target
        .db
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = source.cascade_id()?.unwrap_or(stem);
    let row = match index {
        Some(reader) => reader.row(&id)?,
        None => None,
    };
    if let Some(dir) = under {
        let sidecar = read_sidecar(&target.db)?;
        let places = project::places(
            source.trajectory_metadata().as_deref(),
            row.as_ref(),
            sidecar.as_deref(),
        );
        if !project::is_under(&places, dir) {
            return Ok(None);
        }
    }
    let summary = summary::of_database(&source)?;
    let models = summary::models(&source)?;
    Ok(Some(Entry {
        title: title(row.as_ref(), &summary),
        cwd: summary.cwd.clone(),
        branch: summary.branch.clone(),
        created: summary.created,
        last_active: summary.last_step_time.or(summary.created),
        step_count: summary.step_count,
        models,
        lane: lane(target, source.trajectory_source().ok().flatten()),
        // A subagent names its parent in its metadata; a fork, in the
        // reference agy-decode shows as forked_from.
        parent: match &summary.parent_conversation_id {
            Some(parent) => Some(parent.clone()),
            None => summary::forked_from(&source, &id)?,
        },
        bytes: bytes_on_disk(target)?,
        index: match &row {
            Some(row) if summary.agrees(row) => Indexed::Agrees,
            Some(_) => Indexed::Stale,
            None => Indexed::Missing,
        },
        id,
    }))
}

/// The ACP sidecar beside a database, if it has one.
fn read_sidecar(db: &Path) -> Result<Option<Vec<u8>>> {
    let path = db.with_extension("meta");
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path.display(), e)),
    }
}

/// The index row's non-empty title, else the derived one.
fn title(row: Option<&IndexRow>, summary: &Summary) -> Option<String> {
    row.and_then(|r| r.get("title"))
        .and_then(|t| t.as_text())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .or_else(|| summary.title.clone())
}

fn lane(target: &Target, trajectory_source: Option<i64>) -> &'static str {
    let root = target.root().and_then(Path::file_name);
    let root_of = |lane: Lane| root.is_some_and(|n| n == lane.dir_name());
    let lane = if root_of(Lane::Acp) || target.db.with_extension("meta").is_file() {
        Lane::Acp
    } else if root_of(Lane::Desktop) {
        Lane::Desktop
    } else {
        trajectory_source
            .and_then(Lane::of_trajectory_source)
            .unwrap_or(Lane::Cli)
    };
    lane.name()
}

/// The sizes of the database, its `-wal` and `.meta` sidecars and every
/// file under its brain directory (links not followed).
fn bytes_on_disk(target: &Target) -> Result<u64> {
    fn size(path: &Path) -> Result<u64> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let mut total = 0;
                let entries = std::fs::read_dir(path).map_err(|e| Error::io(path.display(), e))?;
                for entry in entries {
                    let entry = entry.map_err(|e| Error::io(path.display(), e))?;
                    total += size(&entry.path())?;
                }
                Ok(total)
            }
            Ok(meta) if meta.is_file() => Ok(meta.len()),
            Ok(_) => Ok(0),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(Error::io(path.display(), e)),
        }
    }
    let mut total = size(&target.db)?;
    total += size(&sqlite::sidecar(&target.db, "-wal"))?;
    total += size(&target.db.with_extension("meta"))?;
    if let Some(brain) = &target.brain {
        total += size(brain)?;
    }
    Ok(total)
}
