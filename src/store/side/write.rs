//! The side files brought up to date with the conversations a run of
//! agy-pack wrote, together at its end: each file read once, changed only
//! in those conversations' entries (and, for a move, in the paths it
//! moves), written beside itself and renamed over the old one, and not
//! written at all when it comes out the same.
//!
//! For each conversation written:
//! - `last_conversations.json`: when the stream names its workspaces,
//!   the file maps exactly those to it. A workspace it no longer has is
//!   renamed to one it has now, in place (so a move and its reverse give
//!   back the file), else removed; one it has now is added or taken over.
//!   Without such records the file's entries for it stay.
//! - `conversation_metadata.json`, `annotations/<id>.pbtxt`: the stream's
//!   value or file, when it has one; else left as they are.
//! - the summaries files: the stream's entry; without one, a summary made
//!   from the conversation ([`super::derive`]) when the file exists (an
//!   edit that changes a conversation's steps drops the entry it carried,
//!   so that the list shows the steps the conversation has).
//!
//! A file that does not exist is made only for entries the stream brought
//! (the root they came from had the file); a summary made here goes only
//! into a file that exists. `history.jsonl` and `settings.json` are only
//! ever changed by a move.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::agy::paths::Move;
use crate::error::{Error, Result};
use crate::stream::json::Cursor;
use crate::stream::record::{Side, SideFile};

use super::object::{go_string, Edits, Object};
use super::{metadata_values, summaries, CONVERSATIONS};

/// A conversation a run wrote, with its side records.
#[derive(Clone, Debug)]
pub struct Written {
    pub id: String,
    pub sides: Vec<Side<'static>>,
}

/// What a run changes in the side files.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    written: Vec<Written>,
}

impl Changes {
    pub fn add(&mut self, written: Written) {
        self.written.push(written);
    }

    pub fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// Writes the changes into the files of `root`; `summary` makes the
    /// summaries-file entry of a written conversation that brought none.
    /// Returns the files changed, by path under the root.
    pub fn apply(
        &self,
        root: &Path,
        summary: &mut dyn FnMut(&str) -> Result<Vec<u8>>,
    ) -> Result<Vec<String>> {
        let mut changed = Vec::new();
        let mut note = |file: &str, did: bool| {
            if did {
                changed.push(file.to_string());
            }
        };
        note(
            "cache/last_conversations.json",
            self.last_conversations(root)?,
        );
        note(
            "cache/conversation_metadata.json",
            self.conversation_metadata(root)?,
        );
        for file in [SideFile::JetboxSummaries, SideFile::AgyhubSummaries] {
            note(&file.path(""), self.summaries(root, file, summary)?);
        }
        for written in &self.written {
            for side in &written.sides {
                if let Side::Annotation { content } = side {
                    let path = SideFile::Annotation.path(&written.id);
                    note(
                        &path,
                        replace_if_new(&root.join(&*path), &content.to_bytes()?)?,
                    );
                }
            }
        }
        let mut moves = BTreeSet::new();
        for side in self.written.iter().flat_map(|w| &w.sides) {
            if let Side::Moved { file, from, to } = side {
                moves.insert((*file, from.to_string(), to.to_string()));
            }
        }
        for (file, from, to) in moves {
            let mv = Move::new(&from, &to)?;
            let path = root.join(&*file.path(""));
            let did = match file {
                SideFile::History => edit_existing(&path, |text| Ok(move_history(text, &mv)))?,
                _ => edit_existing(&path, |text| move_trusted(text, &mv))?,
            };
            note(&file.path(""), did);
        }
        Ok(changed)
    }

    fn last_conversations(&self, root: &Path) -> Result<bool> {
        let wanted: Vec<(&str, Vec<&str>)> = self
            .written
            .iter()
            .filter_map(|w| {
                let keys: Vec<&str> = w
                    .sides
                    .iter()
                    .filter_map(|s| match s {
                        Side::Last { workspace } => Some(&**workspace),
                        _ => None,
                    })
                    .collect();
                (!keys.is_empty()).then_some((w.id.as_str(), keys))
            })
            .collect();
        if wanted.is_empty() {
            return Ok(false);
        }
        let path = root.join(&*SideFile::LastConversations.path(""));
        edit_or_create(&path, "{\n}", |text| map_all(text, &wanted))
    }

    fn conversation_metadata(&self, root: &Path) -> Result<bool> {
        let values: Vec<(&str, &str)> = self
            .written
            .iter()
            .flat_map(|w| {
                w.sides.iter().filter_map(|s| match s {
                    Side::Metadata { value } => Some((w.id.as_str(), &**value)),
                    _ => None,
                })
            })
            .collect();
        if values.is_empty() {
            return Ok(false);
        }
        let path = root.join(&*SideFile::ConversationMetadata.path(""));
        edit_or_create(&path, "{\n  \"conversations\": {}\n}", |text| {
            set_metadata(text, &values)
        })
    }

    fn summaries(
        &self,
        root: &Path,
        file: SideFile,
        summary: &mut dyn FnMut(&str) -> Result<Vec<u8>>,
    ) -> Result<bool> {
        let path = root.join(&*file.path(""));
        let exists = std::fs::symlink_metadata(&path).is_ok();
        let mut new = BTreeMap::new();
        let mut order = Vec::new();
        for written in &self.written {
            let brought = written.sides.iter().find_map(|s| match s {
                Side::Summary { file: f, entry } if *f == file => Some(entry.clone()),
                _ => None,
            });
            let entry = match brought {
                Some(entry) => entry,
                None if exists => summary(&written.id)?,
                None => continue,
            };
            new.insert(written.id.clone(), entry);
            order.push(written.id.clone());
        }
        if new.is_empty() {
            return Ok(false);
        }
        let old = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(Error::io(path.display(), e)),
        };
        let out = summaries::put(&old, &new, &order).map_err(|e| e.context(path.display()))?;
        replace_if_new(&path, &out)
    }
}

/// `text` (a `last_conversations.json`) mapping exactly its keys to each
/// conversation of `wanted`. The file is read once for the conversations
/// that only add directories no one has (a whole store packed into a new
/// root: one reading, not one a conversation); one that renames, gives
/// up or takes over an entry is done on its own ([`map_to`]), in order.
fn map_all(text: &str, wanted: &[(&str, Vec<&str>)]) -> Result<String> {
    // What the file maps, as the changes so far leave it.
    let mapped = |text: &str| -> Result<HashMap<String, String>> {
        let object = whole_object(text)?;
        Ok(object
            .members
            .iter()
            .filter_map(|m| Some((m.key.clone(), super::string_value(text, &m.value)?)))
            .collect())
    };
    let mut text = text.to_string();
    let mut map = mapped(&text)?;
    let mut added: BTreeMap<&str, String> = BTreeMap::new();
    for (id, keys) in wanted {
        let mine = |key: &str| map.get(key).is_some_and(|v| v == id);
        let stale = map
            .iter()
            .any(|(key, v)| v == id && !keys.contains(&key.as_str()));
        let only_adds = !stale && keys.iter().all(|k| mine(k) || !map.contains_key(*k));
        if only_adds {
            let new: Vec<&str> = keys.iter().copied().filter(|k| !mine(k)).collect();
            for key in new {
                added.insert(key, go_string(id));
                map.insert(key.to_string(), id.to_string());
            }
            continue;
        }
        text = insert_all(text, whole_object, std::mem::take(&mut added))?;
        text = map_to(&text, id, keys)?;
        map = mapped(&text)?;
    }
    insert_all(text, whole_object, added)
}

/// `text` (a `last_conversations.json`) mapping exactly `keys` to `id`.
fn map_to(text: &str, id: &str, keys: &[&str]) -> Result<String> {
    let parse =
        |text: &str| Object::parse_whole(text).ok_or_else(|| Error::data("not one JSON object"));
    let value_of = |text: &str, m: &super::object::Member| super::string_value(text, &m.value);
    let object = parse(text)?;
    let mine: Vec<&super::object::Member> = object
        .members
        .iter()
        .filter(|m| value_of(text, m).as_deref() == Some(id))
        .collect();
    let stale: Vec<&str> = mine
        .iter()
        .map(|m| m.key.as_str())
        .filter(|k| !keys.contains(k))
        .collect();
    let fresh: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| !mine.iter().any(|m| m.key == *k))
        .collect();
    let mut text = text.to_string();
    let mut fresh = fresh.into_iter();
    // One change at a time, the text read again after each: the files
    // hold one entry per directory.
    for old in stale {
        let object = parse(&text)?;
        let mut edits = Edits::default();
        let at = object
            .members
            .iter()
            .position(|m| m.key == old)
            .expect("found above");
        match fresh.next() {
            Some(new) if object.get(new).is_none() => edits.rename(&object.members[at], new),
            Some(new) => {
                let taken = object.get(new).expect("just checked");
                edits.set(taken, &go_string(id));
                edits.remove(&object, at);
            }
            None => edits.remove(&object, at),
        }
        text = edits.apply(&text);
    }
    for new in fresh {
        let object = parse(&text)?;
        let mut edits = Edits::default();
        match object.get(new) {
            Some(taken) => edits.set(taken, &go_string(id)),
            None => edits.insert(&text, &object, new, &go_string(id)),
        }
        text = edits.apply(&text);
    }
    Ok(text)
}

/// `text` (a `conversation_metadata.json`) with each conversation's value
/// (the last given for it) as `values` say: the file read once, however
/// many conversations a run wrote.
fn set_metadata(text: &str, values: &[(&str, &str)]) -> Result<String> {
    let object = whole_object(text)?;
    if object.get(CONVERSATIONS).is_none() {
        let mut edits = Edits::default();
        edits.insert(text, &object, CONVERSATIONS, "{}");
        return set_metadata(&edits.apply(text), values);
    }
    let values: BTreeMap<&str, &str> = values.iter().copied().collect();
    let present: HashMap<String, std::ops::Range<usize>> =
        metadata_values(text)?.into_iter().collect();
    let mut edits = Edits::default();
    let mut fresh = BTreeMap::new();
    for (id, value) in values {
        match present.get(id) {
            Some(at) if &text[at.clone()] == value => {}
            Some(at) => edits.replace(at.clone(), value.to_string()),
            None => {
                fresh.insert(id, value.to_string());
            }
        }
    }
    let conversations = |text: &str| -> Result<Object> {
        let start = whole_object(text)?
            .get(CONVERSATIONS)
            .expect("added above")
            .value
            .start;
        Object::parse(text, start)
            .ok_or_else(|| Error::data("its \"conversations\" is not an object"))
    };
    insert_all(edits.apply(text), conversations, fresh)
}

/// `text` with the members `new` (keys the object `locate` finds does not
/// have, and their JSON values) added, in key order, each where
/// [`Edits::insert`] puts it: one reading of the text for them all. An
/// empty object takes the first alone (it sets the layout the others
/// follow).
fn insert_all(
    mut text: String,
    locate: impl Fn(&str) -> Result<Object>,
    new: BTreeMap<&str, String>,
) -> Result<String> {
    let mut new = new.into_iter();
    let object = locate(&text)?;
    if object.members.is_empty() {
        let Some((key, value)) = new.next() else {
            return Ok(text);
        };
        let mut edits = Edits::default();
        edits.insert(&text, &object, key, &value);
        text = edits.apply(&text);
    }
    let object = locate(&text)?;
    let mut edits = Edits::default();
    for (key, value) in new {
        edits.insert(&text, &object, key, &value);
    }
    Ok(edits.apply(&text))
}

fn whole_object(text: &str) -> Result<Object> {
    Object::parse_whole(text).ok_or_else(|| Error::data("not one JSON object"))
}

/// `history.jsonl` with each line's `workspace` moved; a line that is not
/// an object with a string `workspace` is kept as it is.
fn move_history(text: &str, mv: &Move) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        out.push_str(&move_workspace(line, mv).unwrap_or_else(|| line.to_string()));
    }
    out
}

fn move_workspace(line: &str, mv: &Move) -> Option<String> {
    let object = Object::parse(line, 0)?;
    let member = object.get("workspace")?;
    let workspace = super::string_value(line, &member.value)?;
    let moved = mv.path(&workspace)?;
    let mut edits = Edits::default();
    edits.set(member, &go_string(&moved));
    Some(edits.apply(line))
}

/// `settings.json` with the paths of its `trustedWorkspaces` moved.
fn move_trusted(text: &str, mv: &Move) -> Result<String> {
    let object = Object::parse_whole(text).ok_or_else(|| Error::data("not one JSON object"))?;
    let Some(list) = object.get("trustedWorkspaces") else {
        return Ok(text.to_string());
    };
    let mut cursor = Cursor::new(&text[..list.value.end]);
    cursor.pos = list.value.start;
    let mut items = Vec::new();
    cursor
        .array(|c| {
            c.skip_space();
            let start = c.pos;
            c.value()?;
            items.push(start..c.pos);
            Some(())
        })
        .ok_or_else(|| Error::data("its trustedWorkspaces is not an array"))?;
    let mut edits = Edits::default();
    for item in items {
        let Some(path) = super::string_value(text, &item) else {
            continue;
        };
        if let Some(moved) = mv.path(&path) {
            edits.replace(item, go_string(&moved));
        }
    }
    Ok(edits.apply(text))
}

/// Changes the file at `path` when it exists; `true` when it changed.
fn edit_existing(path: &Path, edit: impl FnOnce(&str) -> Result<String>) -> Result<bool> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io(path.display(), e)),
    };
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Error::data(format!("{}: not UTF-8", path.display())))?;
    let out = edit(text).map_err(|e| e.context(path.display()))?;
    replace_if_new(path, out.as_bytes())
}

/// Changes the file at `path`, made from `empty` when there is none.
fn edit_or_create(
    path: &Path,
    empty: &str,
    edit: impl FnOnce(&str) -> Result<String>,
) -> Result<bool> {
    if std::fs::symlink_metadata(path).is_ok() {
        return edit_existing(path, edit);
    }
    let out = edit(empty).map_err(|e| e.context(path.display()))?;
    replace_if_new(path, out.as_bytes())
}

/// Puts `bytes` at `path` unless they are what it holds: written to a
/// temporary beside it, synced, renamed over it (its mode kept), and the
/// directory synced. `true` when written.
pub fn replace_if_new(path: &Path, bytes: &[u8]) -> Result<bool> {
    use std::io::Write;
    let io = |e| Error::io(path.display(), e);
    let mode = match std::fs::read(path) {
        Ok(old) if old == bytes => return Ok(false),
        Ok(_) => std::fs::metadata(path).ok().map(|m| m.permissions()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(e)),
    };
    let dir = path.parent().expect("a file under the root");
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
    let name = path.file_name().expect("a file name").to_string_lossy();
    let tmp: PathBuf = dir.join(format!(".{name}.agy-pack.tmp"));
    let mut file = std::fs::File::create(&tmp).map_err(|e| Error::io(tmp.display(), e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(tmp.display(), e))?;
    if let Some(mode) = mode {
        std::fs::set_permissions(&tmp, mode).map_err(|e| Error::io(tmp.display(), e))?;
    }
    drop(file);
    std::fs::rename(&tmp, path).map_err(io)?;
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_is_re_keyed_in_place() {
        let text = "{\n  \"/a\": \"c1\",\n  \"/b\": \"c2\"\n}";
        let moved = map_to(text, "c1", &["/z"]).unwrap();
        assert_eq!(moved, "{\n  \"/z\": \"c1\",\n  \"/b\": \"c2\"\n}");
        assert_eq!(map_to(&moved, "c1", &["/a"]).unwrap(), text);
        // Taking over another conversation's directory, and adding one.
        let taken = map_to(text, "c1", &["/b", "/c"]).unwrap();
        assert_eq!(taken, "{\n  \"/b\": \"c1\",\n  \"/c\": \"c1\"\n}");
        assert_eq!(
            map_to(text, "c3", &["/c"]).unwrap(),
            "{\n  \"/a\": \"c1\",\n  \"/b\": \"c2\",\n  \"/c\": \"c3\"\n}"
        );
        assert_eq!(
            map_to("{\n}", "c1", &["/a"]).unwrap(),
            "{\n  \"/a\": \"c1\"\n}"
        );
    }

    #[test]
    fn many_conversations_at_once_read_as_one_at_a_time() {
        let texts = [
            "{\n}",
            "{\n  \"/a\": \"c1\",\n  \"/m\": \"c2\"\n}",
            "{\"/z\":\"c9\"}",
        ];
        let wanted: Vec<(&str, Vec<&str>)> = vec![
            ("c3", vec!["/q", "/b"]),
            ("c1", vec!["/a"]),
            ("c4", vec!["/c"]),
            ("c2", vec!["/y"]),
            ("c5", vec!["/m", "/n"]),
            ("c6", vec!["/d"]),
        ];
        let parsed = |text: &str| -> BTreeMap<String, serde_json::Value> {
            serde_json::from_str(text).unwrap()
        };
        for text in texts {
            let mut one_at_a_time = text.to_string();
            for (id, keys) in &wanted {
                one_at_a_time = map_to(&one_at_a_time, id, keys).unwrap();
            }
            let at_once = map_all(text, &wanted).unwrap();
            // The same map; where a rename has left the keys unsorted, an
            // entry is added last either way, in key order or in the
            // conversations' order.
            assert_eq!(parsed(&at_once), parsed(&one_at_a_time), "{text:?}");
            // Adding only (a store packed into a new root), in agy's
            // sorted layout: the same bytes.
            let adds: Vec<(&str, Vec<&str>)> = vec![
                ("c7", vec!["/k"]),
                ("c8", vec!["/0", "/zz"]),
                ("c1", vec!["/a"]),
            ];
            let mut one_at_a_time = text.to_string();
            for (id, keys) in &adds {
                one_at_a_time = map_to(&one_at_a_time, id, keys).unwrap();
            }
            assert_eq!(map_all(text, &adds).unwrap(), one_at_a_time, "{text:?}");
        }
        let values = [
            ("c3", "{}"),
            ("c1", "{\"x\": 1}"),
            ("c2", "{}"),
            ("c0", "{}"),
        ];
        for text in [
            "{}",
            "{\n  \"conversations\": {}\n}",
            "{\n  \"conversations\": {\n    \"c1\": {}\n  }\n}",
        ] {
            let mut one_at_a_time = text.to_string();
            for value in &values {
                one_at_a_time = set_metadata(&one_at_a_time, &[*value]).unwrap();
            }
            assert_eq!(
                set_metadata(text, &values).unwrap(),
                one_at_a_time,
                "{text:?}"
            );
        }
    }

    #[test]
    fn metadata_values_are_set_in_place() {
        let text = "{\n  \"conversations\": {\n    \"c1\": {\"is_internal\": false}\n  }\n}";
        let set = set_metadata(text, &[("c1", "{\"is_internal\": true}")]).unwrap();
        assert_eq!(set, text.replace("false", "true"));
        let added = set_metadata(text, &[("c2", "{}")]).unwrap();
        assert_eq!(
            added,
            "{\n  \"conversations\": {\n    \"c1\": {\"is_internal\": false},\n    \"c2\": {}\n  }\n}"
        );
        assert_eq!(
            set_metadata("{}", &[("c1", "{}")]).unwrap(),
            "{\"conversations\":{\"c1\":{}}}"
        );
    }

    #[test]
    fn moves_reach_history_and_trusted_workspaces_and_come_back() {
        let history = "{\"display\":\"fix \\u003e it\",\"timestamp\":1,\"workspace\":\"/w/app\"}\n\
                       {\"display\":\"x\",\"timestamp\":2,\"workspace\":\"/w/other\"}\n\
                       not json\n";
        let there = Move::new("/w/app", "/v/app2").unwrap();
        let back = Move::new("/v/app2", "/w/app").unwrap();
        let moved = move_history(history, &there);
        assert!(moved.contains("\"workspace\":\"/v/app2\"}"), "{moved}");
        assert!(moved.contains("/w/other") && moved.contains("fix \\u003e it"));
        assert_eq!(move_history(&moved, &back), history);
        let settings = "{\n  \"trustedWorkspaces\": [\n    \"/w/app\",\n    \"/w/app/sub\",\n    \"/w/apple\"\n  ]\n}\n";
        let moved = move_trusted(settings, &there).unwrap();
        assert_eq!(
            moved,
            settings
                .replace("/w/app\"", "/v/app2\"")
                .replace("/w/app/sub", "/v/app2/sub")
        );
        assert_eq!(move_trusted(&moved, &back).unwrap(), settings);
    }
}
