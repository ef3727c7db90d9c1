//! `--out DIR`: one page per conversation, written whole or not at all, and
//! an index of every conversation in the directory.
//!
//! A nightly job renders only what changed, so the index cannot be made of
//! this run's conversations alone. Beside it the directory keeps
//! `index.ndjson`, one line per conversation (the index as data, for jq
//! too): each run reads it, replaces the lines of the conversations it
//! rendered, drops those whose page is gone, and writes both files again.
//! Every file is written under a temporary name in the directory and
//! renamed into place, so a reader (a web server publishing the directory)
//! never sees half a page, and a failed conversation keeps its old page.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::entry::{self, Entry};
use super::page::Page;
use crate::error::{Error, Result};

/// The data file beside the index page.
pub const CATALOGUE: &str = "index.ndjson";

/// The output directory of a run.
pub struct Site {
    pub dir: PathBuf,
    entries: BTreeMap<String, Entry>,
}

impl Site {
    /// Opens (creating it if needed) `dir` and reads its catalogue. Lines
    /// of the catalogue that cannot be read are reported and left out; a
    /// conversation whose page is gone is left out.
    pub fn open(dir: &Path, warn: &mut dyn FnMut(String)) -> Result<Site> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
        let path = dir.join(CATALOGUE);
        let mut entries = BTreeMap::new();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                for (n, line) in text.lines().enumerate() {
                    if line.trim().is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<Entry>(line) {
                        Ok(entry) if !plain_name(&entry.file) => warn(format!(
                            "{}:{}: left out of the index: {:?} is not a file name in the directory",
                            path.display(),
                            n + 1,
                            entry.file
                        )),
                        Ok(entry) if dir.join(&entry.file).is_file() => {
                            entries.insert(entry.id.clone(), entry);
                        }
                        Ok(_) => {}
                        Err(e) => warn(format!(
                            "{}:{}: left out of the index: {e}",
                            path.display(),
                            n + 1
                        )),
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(path.display(), e)),
        }
        Ok(Site {
            dir: dir.to_path_buf(),
            entries,
        })
    }

    /// Records a page written in this run.
    pub fn add(&mut self, entry: Entry) {
        self.entries.insert(entry.id.clone(), entry);
    }

    /// Writes `index.ndjson` and the index page of `page`'s format.
    pub fn write_index(&self, page: &dyn Page) -> Result<()> {
        let mut entries: Vec<Entry> = self.entries.values().cloned().collect();
        entry::sort(&mut entries);
        let mut data = Vec::new();
        for entry in &entries {
            serde_json::to_writer(&mut data, entry).expect("an entry is plain data");
            data.push(b'\n');
        }
        write_whole(&self.dir.join(CATALOGUE), &data)?;
        let mut html = Vec::new();
        page.index(&mut html, &entries);
        write_whole(&self.dir.join(format!("index.{}", page.extension())), &html)
    }
}

/// A name of a file directly in the directory: no separator, not hidden.
fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\0'])
}

/// A file being written under a temporary name in its directory; renamed
/// into place by [`Pending::commit`], removed if dropped before.
pub struct Pending {
    temporary: PathBuf,
    path: PathBuf,
    committed: bool,
}

impl Pending {
    pub fn create(path: &Path) -> Result<(Pending, File)> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temporary = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        let file = File::create(&temporary).map_err(|e| Error::io(temporary.display(), e))?;
        Ok((
            Pending {
                temporary,
                path: path.to_path_buf(),
                committed: false,
            },
            file,
        ))
    }

    pub fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.temporary, &self.path)
            .map_err(|e| Error::io(self.path.display(), e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}

fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let (pending, mut file) = Pending::create(path)?;
    file.write_all(bytes)
        .map_err(|e| Error::io(path.display(), e))?;
    drop(file);
    pending.commit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::entry::Usage;

    fn entry(id: &str, last: Option<&str>) -> Entry {
        Entry {
            id: id.to_string(),
            file: format!("{id}.html"),
            title: id.to_string(),
            started: None,
            last: last.map(str::to_string),
            turns: 0,
            usage: Usage::default(),
            models: Vec::new(),
        }
    }

    #[test]
    fn the_catalogue_names_only_files_in_the_directory() {
        let dir = std::env::temp_dir().join(format!("agy-site-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.html"), "").unwrap();
        let lines = [
            r#"{"id":"a","file":"a.html","title":"A"}"#,
            r#"{"id":"b","file":"../etc/passwd","title":"B"}"#,
            r#"{"id":"c","file":"/etc/passwd","title":"C"}"#,
            r#"{"id":"d","file":"gone.html","title":"D"}"#,
            "not json",
        ];
        std::fs::write(dir.join(CATALOGUE), lines.join("\n")).unwrap();
        let mut warnings = Vec::new();
        let site = Site::open(&dir, &mut |w| warnings.push(w)).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(site.entries.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
    }

    #[test]
    fn newest_first_then_by_id() {
        let mut entries = vec![
            entry("b", Some("2026-01-01T00:00:00Z")),
            entry("none", None),
            entry("a", Some("2026-01-01T00:00:00Z")),
            entry("new", Some("2026-01-01T00:00:00.5Z")),
        ];
        entry::sort(&mut entries);
        let ids: Vec<_> = entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["new", "a", "b", "none"]);
    }
}
