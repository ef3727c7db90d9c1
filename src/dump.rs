//! agy-dump: conversation databases and their brain directories to the row
//! stream.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::io::Output;
use crate::record;
use crate::store::{self, OpenError, Source};

/// What to dump and how.
#[derive(Clone, Debug, Default)]
pub struct DumpOptions {
    /// Only these conversation ids (all when empty).
    pub ids: Vec<String>,
    /// Emit `file` records for brain directories.
    pub brain: bool,
}

/// One database to dump, and where its brain directory would be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub db: PathBuf,
    pub brain_root: Option<PathBuf>,
    /// Named on the command line, so not being an agy database is an error
    /// rather than a skip.
    pub explicit: bool,
}

/// Turns command-line paths into targets: a directory is a data root whose
/// `conversations/*.db` are listed by name; a file is a database.
pub fn targets(paths: &[PathBuf]) -> Result<Vec<Target>> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path.display(), e))?;
        if meta.is_dir() {
            out.extend(root_targets(path)?);
        } else {
            out.push(Target {
                db: path.clone(),
                brain_root: brain_root_of(path),
                explicit: true,
            });
        }
    }
    Ok(out)
}

/// The `*.db` files of `ROOT/conversations/`, sorted bytewise by name.
pub fn root_targets(root: &Path) -> Result<Vec<Target>> {
    let dir = root.join("conversations");
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        Error::io(
            format!(
                "{}: not an agy data root (no conversations/)",
                root.display()
            ),
            e,
        )
    })?;
    let mut names: Vec<OsString> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
        let name = entry.file_name();
        if Path::new(&name).extension().is_some_and(|e| e == "db") {
            names.push(name);
        }
    }
    names.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    let brain = root.join("brain");
    Ok(names
        .into_iter()
        .map(|name| Target {
            db: dir.join(name),
            brain_root: Some(brain.clone()),
            explicit: false,
        })
        .collect())
}

/// `ROOT/brain` for a database at `ROOT/conversations/<id>.db`.
fn brain_root_of(db: &Path) -> Option<PathBuf> {
    let parent = db.parent()?;
    if parent.file_name()? != "conversations" {
        return None;
    }
    Some(parent.parent()?.join("brain"))
}

/// Dumps every target in order. Skipped files are reported through `warn`.
pub fn dump(
    targets: &[Target],
    options: &DumpOptions,
    out: &mut Output,
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    let mut found = vec![false; options.ids.len()];
    for target in targets {
        let source = match Source::open(&target.db) {
            Ok(source) => source,
            Err(OpenError::NotAgy(why)) if !target.explicit => {
                warn(format!(
                    "{}: skipped, not an agy conversation database ({why})",
                    target.db.display()
                ));
                continue;
            }
            Err(OpenError::NotAgy(why)) => {
                return Err(Error::data(format!(
                    "{}: not an agy conversation database ({why})",
                    target.db.display()
                )))
            }
            Err(OpenError::Failed(e)) => return Err(e.context(target.db.display())),
        };
        let stem = target
            .db
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = source
            .cascade_id()
            .map_err(|e| e.context(target.db.display()))?
            .unwrap_or_else(|| stem.clone());
        if !options.ids.is_empty() {
            match options.ids.iter().position(|wanted| *wanted == id) {
                Some(i) => found[i] = true,
                None => continue,
            }
        }
        dump_database(&source, &id, out).map_err(|e| e.context(target.db.display()))?;
        dump_meta_sidecar(&target.db, &id, out)?;
        if options.brain {
            if let Some(brain_root) = &target.brain_root {
                dump_brain(&brain_root.join(&stem), &id, out, warn)?;
            }
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(Error::data(format!(
            "no conversation with id {:?} found",
            options.ids[i]
        )));
    }
    Ok(())
}

/// The db, schema and row records of one database, `steps` rows last.
pub fn dump_database(source: &Source, id: &str, out: &mut Output) -> Result<()> {
    record::write_db(out.buf(), id, source.user_version()?);
    out.end_record()?;
    let schema = source.schema();
    for object in schema {
        record::write_schema(
            out.buf(),
            id,
            &object.object_type,
            &object.name,
            &object.sql,
        );
        out.end_record()?;
    }
    let tables = schema.iter().filter(|o| o.object_type == "table");
    let (steps, others): (Vec<_>, Vec<_>) = tables.partition(|o| o.name == "steps");
    for table in others.into_iter().chain(steps) {
        source
            .each_row(&table.name, |columns, row| {
                let cells = (0..columns.len())
                    .map(|i| store::cell(row, i))
                    .collect::<Result<Vec<_>>>()?;
                record::write_row(out.buf(), id, &table.name, columns, cells);
                out.end_record()
            })
            .map_err(|e| e.context(format!("table {}", table.name)))?;
    }
    Ok(())
}

/// The ACP lane keeps `<id>.meta` (JSON: cwd, mode) beside each database;
/// it travels as a `file` record with `"dir":"conversations"`.
pub fn dump_meta_sidecar(db: &Path, id: &str, out: &mut Output) -> Result<()> {
    let meta = db.with_extension("meta");
    match std::fs::symlink_metadata(&meta) {
        Ok(m) if m.is_file() => {}
        _ => return Ok(()),
    }
    dump_file(
        &meta,
        id,
        record::FileDir::Conversations,
        &format!("{id}.meta"),
        out,
    )
}

/// The `file` records of one file: read and written a part at a time
/// ([`record::FILE_PART`]), so a large brain file never sits in memory
/// whole.
fn dump_file(
    path: &Path,
    id: &str,
    dir: record::FileDir,
    rel: &str,
    out: &mut Output,
) -> Result<()> {
    use std::io::Read;
    let read_error = |e| Error::io(path.display(), e);
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let mut buf = Vec::with_capacity(record::FILE_PART + 3);
    let mut append = false;
    loop {
        // Three bytes beyond a part: enough to see whether its end splits
        // a UTF-8 sequence.
        let want = (record::FILE_PART + 3 - buf.len()) as u64;
        (&mut file)
            .take(want)
            .read_to_end(&mut buf)
            .map_err(read_error)?;
        let at_end = buf.len() < record::FILE_PART + 3;
        let part = match at_end {
            true if buf.len() <= record::FILE_PART => buf.len(),
            _ => record::file_part_len(&buf),
        };
        record::write_file_part(out.buf(), id, dir, rel, append, &buf[..part]);
        out.end_record()?;
        buf.drain(..part);
        append = true;
        if at_end && buf.is_empty() {
            return Ok(());
        }
    }
}

/// The `file` records of one brain directory, sorted bytewise by path.
/// Symbolic links are reported and skipped, never followed.
pub fn dump_brain(
    dir: &Path,
    id: &str,
    out: &mut Output,
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(meta) if meta.file_type().is_symlink() => {
            warn(format!("{}: skipped, a symbolic link", dir.display()));
            return Ok(());
        }
        _ => return Ok(()),
    }
    let mut files = Vec::new();
    list_files(dir, String::new(), &mut files, warn)?;
    files.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    for rel in files {
        dump_file(&dir.join(&rel), id, record::FileDir::Brain, &rel, out)?;
    }
    Ok(())
}

fn list_files(
    dir: &Path,
    prefix: String,
    files: &mut Vec<String>,
    warn: &mut dyn FnMut(String),
) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir.display(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            warn(format!("{}: skipped, name is not UTF-8", path.display()));
            continue;
        };
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let file_type = entry
            .file_type()
            .map_err(|e| Error::io(path.display(), e))?;
        if file_type.is_symlink() {
            warn(format!("{}: skipped, a symbolic link", path.display()));
        } else if file_type.is_dir() {
            list_files(&path, rel, files, warn)?;
        } else if file_type.is_file() {
            files.push(rel);
        } else {
            warn(format!("{}: skipped, not a regular file", path.display()));
        }
    }
    Ok(())
}
