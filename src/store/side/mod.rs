//! The side files of a data root: where agy and its desktop app look for
//! conversations besides `conversations/` (agy-store(5), SIDE FILES), and
//! each conversation's entries in them.
//!
//! [`Sides`] reads a root's files once and hands each conversation its
//! entries as `side` records ([`Side`]) for agy-dump; [`mod@write`] puts the
//! entries of the conversations agy-pack wrote back into the files, every
//! other byte kept ([`object`] for the JSON files, [`summaries`] for the
//! protobuf lists), and moves paths in `history.jsonl` and `settings.json`;
//! [`mod@derive`] makes the summary of a conversation that has none;
//! [`holders`] tells whether a running agy holds the root.

pub mod derive;
pub mod holders;
pub mod object;
pub mod summaries;
pub mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::agy::paths::Move;
use crate::agy::{patch, project};
use crate::error::{Error, Result};
use crate::stream::record::{FileContent, Side, SideFile};

use object::Object;

/// A data root's side files as read: each conversation's entries.
#[derive(Clone, Debug, Default)]
pub struct Sides {
    /// `last_conversations.json`: each conversation's workspaces.
    last: HashMap<String, Vec<String>>,
    /// `conversation_metadata.json`: each conversation's value, as text.
    metadata: HashMap<String, String>,
    /// The summaries files' entries.
    jetbox: HashMap<String, Vec<u8>>,
    agyhub: HashMap<String, Vec<u8>>,
    /// `ROOT/annotations`.
    annotations: PathBuf,
}

impl Sides {
    /// Reads the side files of `root` that exist. A file that cannot be
    /// read, or is not in its shape, is named through `warn` and its
    /// entries left out: the writer keeps the file's entries for a
    /// conversation that brings none.
    pub fn read(root: &Path, warn: &mut dyn FnMut(String)) -> Sides {
        let mut sides = Sides {
            annotations: root.join("annotations"),
            ..Sides::default()
        };
        let mut load = |file: SideFile, read: &mut dyn FnMut(&[u8]) -> Result<()>| {
            let path = root.join(&*file.path(""));
            match std::fs::read(&path) {
                Ok(bytes) => {
                    if let Err(e) = read(&bytes) {
                        warn(format!(
                            "{}: not read ({e}); no conversation carries its entries, and agy-pack leaves them as they are",
                            path.display()
                        ));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => warn(format!(
                    "{}: not read ({e}); no conversation carries its entries, and agy-pack leaves them as they are",
                    path.display()
                )),
            }
        };
        load(SideFile::LastConversations, &mut |bytes| {
            let text = as_text(bytes)?;
            let object = Object::parse_whole(text).ok_or_else(not_an_object)?;
            for member in &object.members {
                if let Some(id) = string_value(text, &member.value) {
                    sides.last.entry(id).or_default().push(member.key.clone());
                }
            }
            Ok(())
        });
        load(SideFile::ConversationMetadata, &mut |bytes| {
            let text = as_text(bytes)?;
            for (id, value) in metadata_values(text)? {
                sides.metadata.insert(id, text[value].to_string());
            }
            Ok(())
        });
        for (file, into) in [
            (SideFile::JetboxSummaries, &mut sides.jetbox),
            (SideFile::AgyhubSummaries, &mut sides.agyhub),
        ] {
            load(file, &mut |bytes| {
                for (id, entry) in summaries::entries(bytes)? {
                    into.entry(id).or_insert_with(|| entry.to_vec());
                }
                Ok(())
            });
        }
        sides
    }

    /// The side records of conversation `id`, in [`SideFile::ENTRIES`]
    /// order. Its annotation file is read here: one that cannot be is an
    /// error of the conversation.
    pub fn entries(&self, id: &str) -> Result<Vec<Side<'static>>> {
        let mut out = Vec::new();
        for workspace in self.last.get(id).into_iter().flatten() {
            out.push(Side::Last {
                workspace: workspace.clone().into(),
            });
        }
        if let Some(value) = self.metadata.get(id) {
            out.push(Side::Metadata {
                value: value.clone().into(),
            });
        }
        for (file, entries) in [
            (SideFile::JetboxSummaries, &self.jetbox),
            (SideFile::AgyhubSummaries, &self.agyhub),
        ] {
            if let Some(entry) = entries.get(id) {
                out.push(Side::Summary {
                    file,
                    entry: entry.clone(),
                });
            }
        }
        // An id that cannot be a file name (a damaged database's: a NUL,
        // a `/`) has no annotation file; none is looked for, neither a
        // path the system refuses nor one outside `annotations/`.
        if crate::store::root::check_id(id).is_err() {
            return Ok(out);
        }
        let annotation = self.annotations.join(format!("{id}.pbtxt"));
        match std::fs::read(&annotation) {
            Ok(bytes) => out.push(Side::Annotation {
                content: match String::from_utf8(bytes) {
                    Ok(text) => FileContent::Text(text.into()),
                    Err(e) => FileContent::Hex(hex::encode(e.into_bytes()).into()),
                },
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(annotation.display(), e)),
        }
        Ok(out)
    }
}

/// A side entry of a conversation whose project moved (`agy-edit move`,
/// `agy-encode --onto` with a new cwd): the workspace `agy -c` knows it by,
/// its summaries-file entry's workspace (9) and trajectory metadata (17),
/// its summary in the metadata file; with `everywhere`, every path in
/// them. `None` when it does not change (an annotation, a request, an
/// entry naming no path under the move's directory).
pub fn moved(side: &Side<'_>, mv: &Move, everywhere: bool) -> Option<Side<'static>> {
    match side {
        Side::Last { workspace } => mv.path(workspace).map(|workspace| Side::Last {
            workspace: workspace.into(),
        }),
        Side::Metadata { value } => patch::rewrite_text(value.as_bytes(), mv)
            .and_then(|text| String::from_utf8(text).ok())
            .map(|value| Side::Metadata {
                value: value.into(),
            }),
        Side::Summary { file, entry } => {
            let rewritten = match everywhere {
                true => patch::rewrite(entry, mv),
                false => project::rewrite_summary_workspaces(entry, mv),
            };
            rewritten.map(|entry| Side::Summary { file: *file, entry })
        }
        Side::Annotation { .. } | Side::Moved { .. } => None,
    }
}

fn as_text(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|_| Error::data("not UTF-8"))
}

fn not_an_object() -> Error {
    Error::data("not one JSON object")
}

/// The string a value's text holds, when it is a string.
fn string_value(text: &str, value: &std::ops::Range<usize>) -> Option<String> {
    let mut cursor = crate::stream::json::Cursor::new(&text[..value.end]);
    cursor.pos = value.start;
    cursor.string().map(|s| s.into_owned())
}

/// Each conversation of `conversation_metadata.json` with where its value
/// is: the members of its `conversations` object.
fn metadata_values(text: &str) -> Result<Vec<(String, std::ops::Range<usize>)>> {
    let object = Object::parse_whole(text).ok_or_else(not_an_object)?;
    let Some(conversations) = object.get(CONVERSATIONS) else {
        return Ok(Vec::new());
    };
    let inner = Object::parse(text, conversations.value.start)
        .ok_or_else(|| Error::data("its \"conversations\" is not an object"))?;
    Ok(inner
        .members
        .into_iter()
        .map(|m| (m.key, m.value))
        .collect())
}

/// The member of `conversation_metadata.json` that holds the conversations.
const CONVERSATIONS: &str = "conversations";

#[cfg(test)]
mod tests {
    use super::*;

    /// A damaged database's id can hold anything: one with a `/` must not
    /// reach a file outside `annotations/`, one with a NUL must not fail
    /// the conversation (the system refuses such a path) where reading it
    /// in process, which reads no side files, goes on (fuzz/decode_store).
    #[test]
    fn an_id_that_is_no_file_name_has_no_annotation() {
        let root = std::env::temp_dir().join(format!("agy-sides-{}", std::process::id()));
        std::fs::create_dir_all(root.join("annotations")).unwrap();
        std::fs::write(root.join("annotations/plain.pbtxt"), "title: \"A\"\n").unwrap();
        std::fs::write(root.join("outside.pbtxt"), "title: \"B\"\n").unwrap();
        let sides = Sides::read(&root, &mut |w| panic!("{w}"));
        let annotations = |id: &str| sides.entries(id).unwrap().len();
        assert_eq!(annotations("plain"), 1);
        assert_eq!(annotations("../outside"), 0);
        assert_eq!(annotations("plain\0"), 0);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
