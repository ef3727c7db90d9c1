//! The `side` record: a conversation's entry in one of the files beside
//! the databases through which agy and its desktop app find conversations
//! (agy-store(5), SIDE FILES).
//!
//! agy does not list or continue a conversation from `conversations/`
//! alone: `agy -c` picks it from `cache/last_conversations.json`, the
//! desktop app lists only what `agyhub_summaries_proto.pb` names, the CLI
//! keeps its summaries in `jetbox_summaries_proto.pb` too. So each
//! conversation carries its entries with it, one record each, after its
//! index record and before its files:
//!
//! ```text
//! {"conversation":"ID","kind":"side","file":"cache/last_conversations.json","key":"/home/me/app"}
//! {"conversation":"ID","kind":"side","file":"cache/conversation_metadata.json","text":"{\n  \"is_internal\": false\n}"}
//! {"conversation":"ID","kind":"side","file":"jetbox_summaries_proto.pb","hex":"0a24…"}
//! {"conversation":"ID","kind":"side","file":"annotations/ID.pbtxt","text":"title: \"…\"\n"}
//! {"conversation":"ID","kind":"side","file":"history.jsonl","from":"/old","to":"/new"}
//! ```
//!
//! The first four are what the files hold of the conversation: the
//! workspace key whose value is its id, its value (its JSON text as the
//! file holds it, line breaks and all, as a string),
//! its summary entry (the bytes of one repeated field 1, hex) and its
//! annotation file. The last is not an entry but an instruction:
//! `agy-edit move` writes it for `history.jsonl` and `settings.json`,
//! whose lines and lists name directories, not conversations, so that
//! agy-pack moves their paths with the conversation.

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::stream::json;

use super::blob_hex::decode_hex;
use super::FileContent;

/// A file beside the databases that names conversations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SideFile {
    /// `cache/last_conversations.json`: `{"/abs/workspace": "ID"}`, the
    /// conversation `agy -c` continues in each directory.
    LastConversations,
    /// `cache/conversation_metadata.json`: `{"conversations": {"ID":
    /// {"is_internal": bool}}}`.
    ConversationMetadata,
    /// `jetbox_summaries_proto.pb`: the CLI's summaries, from about 1.2.12.
    JetboxSummaries,
    /// `agyhub_summaries_proto.pb`: the desktop app's list.
    AgyhubSummaries,
    /// `annotations/<id>.pbtxt`: one per conversation.
    Annotation,
    /// `history.jsonl`: one line per prompt, naming its workspace.
    History,
    /// `settings.json`: its `trustedWorkspaces`.
    Settings,
}

impl SideFile {
    /// Every side file whose entries a conversation carries, in the order
    /// its records go out.
    pub const ENTRIES: [SideFile; 5] = [
        SideFile::LastConversations,
        SideFile::ConversationMetadata,
        SideFile::JetboxSummaries,
        SideFile::AgyhubSummaries,
        SideFile::Annotation,
    ];

    /// The file's path under the data root (for [`SideFile::Annotation`],
    /// of conversation `id`).
    pub fn path(self, id: &str) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            SideFile::LastConversations => "cache/last_conversations.json",
            SideFile::ConversationMetadata => "cache/conversation_metadata.json",
            SideFile::JetboxSummaries => "jetbox_summaries_proto.pb",
            SideFile::AgyhubSummaries => "agyhub_summaries_proto.pb",
            SideFile::History => "history.jsonl",
            SideFile::Settings => "settings.json",
            SideFile::Annotation => return Cow::Owned(format!("annotations/{id}.pbtxt")),
        })
    }

    /// The side file a record of conversation `id` names.
    fn of_path(path: &str, id: &str) -> Result<SideFile> {
        let fixed = [
            SideFile::LastConversations,
            SideFile::ConversationMetadata,
            SideFile::JetboxSummaries,
            SideFile::AgyhubSummaries,
            SideFile::History,
            SideFile::Settings,
        ];
        if let Some(file) = fixed.into_iter().find(|f| f.path(id) == path) {
            return Ok(file);
        }
        if path.starts_with("annotations/") {
            if path == SideFile::Annotation.path(id) {
                return Ok(SideFile::Annotation);
            }
            return Err(Error::data(format!(
                "side record's file {path:?} is not conversation {id:?}'s annotation (annotations/{id}.pbtxt)"
            )));
        }
        Err(Error::data(format!(
            "side record names an unknown file {path:?}"
        )))
    }
}

/// What a `side` record says.
#[derive(Clone, Debug, PartialEq)]
pub enum Side<'a> {
    /// `cache/last_conversations.json` maps this workspace to the
    /// conversation.
    Last { workspace: Cow<'a, str> },
    /// The conversation's value in `cache/conversation_metadata.json`,
    /// JSON text as the file holds it.
    Metadata { value: Cow<'a, str> },
    /// The conversation's entry of a summaries file: the bytes of one
    /// repeated field 1 (`{1: id, 2: summary}`), without its tag and
    /// length.
    Summary { file: SideFile, entry: Vec<u8> },
    /// The conversation's `annotations/<id>.pbtxt`.
    Annotation { content: FileContent<'a> },
    /// A directory moved with the conversation: the paths at or under
    /// `from` in `file` (history or settings) are to name `to`.
    Moved {
        file: SideFile,
        from: Cow<'a, str>,
        to: Cow<'a, str>,
    },
}

impl Side<'_> {
    /// The file it is an entry of.
    pub fn file(&self) -> SideFile {
        match self {
            Side::Last { .. } => SideFile::LastConversations,
            Side::Metadata { .. } => SideFile::ConversationMetadata,
            Side::Summary { file, .. } | Side::Moved { file, .. } => *file,
            Side::Annotation { .. } => SideFile::Annotation,
        }
    }

    /// This record with its own copy of what it borrows.
    pub fn into_owned(self) -> Side<'static> {
        let own = |s: Cow<'_, str>| Cow::Owned(s.into_owned());
        match self {
            Side::Last { workspace } => Side::Last {
                workspace: own(workspace),
            },
            Side::Metadata { value } => Side::Metadata { value: own(value) },
            Side::Summary { file, entry } => Side::Summary { file, entry },
            Side::Annotation { content } => Side::Annotation {
                content: match content {
                    FileContent::Text(t) => FileContent::Text(own(t)),
                    FileContent::Hex(h) => FileContent::Hex(own(h)),
                },
            },
            Side::Moved { file, from, to } => Side::Moved {
                file,
                from: own(from),
                to: own(to),
            },
        }
    }

    /// Writes the record of conversation `id`, with its newline.
    pub fn write(&self, out: &mut Vec<u8>, id: &str) {
        out.extend_from_slice(b"{\"conversation\":");
        json::write_str(out, id);
        out.extend_from_slice(b",\"kind\":\"side\",\"file\":");
        json::write_str(out, &self.file().path(id));
        match self {
            Side::Last { workspace } => {
                out.extend_from_slice(b",\"key\":");
                json::write_str(out, workspace);
            }
            Side::Metadata { value } => {
                out.extend_from_slice(b",\"text\":");
                json::write_str(out, value);
            }
            Side::Summary { entry, .. } => {
                out.extend_from_slice(b",\"hex\":");
                json::write_hex(out, entry);
            }
            Side::Annotation { content } => match content {
                FileContent::Text(text) => {
                    out.extend_from_slice(b",\"text\":");
                    json::write_str(out, text);
                }
                FileContent::Hex(hex) => {
                    out.extend_from_slice(b",\"hex\":");
                    json::write_str(out, hex);
                }
            },
            Side::Moved { from, to, .. } => {
                out.extend_from_slice(b",\"from\":");
                json::write_str(out, from);
                out.extend_from_slice(b",\"to\":");
                json::write_str(out, to);
            }
        }
        out.extend_from_slice(b"}\n");
    }
}

/// The fields of a `side` record, as [`super::Record::parse`] found them.
pub(super) struct SideFields<'a> {
    pub file: Option<Cow<'a, str>>,
    pub key: Option<Cow<'a, str>>,
    pub text: Option<Cow<'a, str>>,
    pub hex: Option<Cow<'a, str>>,
    pub from: Option<Cow<'a, str>>,
    pub to: Option<Cow<'a, str>>,
}

impl<'a> SideFields<'a> {
    /// The record of conversation `id` these fields make.
    pub fn read(self, id: &str) -> Result<Side<'a>> {
        let path = self
            .file
            .ok_or_else(|| Error::data("side record has no \"file\""))?;
        let file = SideFile::of_path(&path, id)?;
        let what = |key: &str| Error::data(format!("side record of {path} has no \"{key}\""));
        Ok(match file {
            SideFile::LastConversations => Side::Last {
                workspace: self.key.ok_or_else(|| what("key"))?,
            },
            SideFile::ConversationMetadata => {
                let value = self.text.ok_or_else(|| what("text"))?;
                let object =
                    serde_json::from_str::<serde_json::Value>(&value).is_ok_and(|v| v.is_object());
                if !object {
                    return Err(Error::data(format!(
                        "side record of {path}: its text is not a JSON object"
                    )));
                }
                Side::Metadata { value }
            }
            SideFile::JetboxSummaries | SideFile::AgyhubSummaries => Side::Summary {
                file,
                entry: decode_hex(&self.hex.ok_or_else(|| what("hex"))?)
                    .map_err(|e| e.context(format!("side record of {path}")))?,
            },
            SideFile::Annotation => Side::Annotation {
                content: match (self.text, self.hex) {
                    (Some(t), None) => FileContent::Text(t),
                    (None, Some(h)) => FileContent::Hex(h),
                    _ => {
                        return Err(Error::data(format!(
                            "side record of {path} needs exactly one of \"text\" and \"hex\""
                        )))
                    }
                },
            },
            SideFile::History | SideFile::Settings => Side::Moved {
                file,
                from: self.from.ok_or_else(|| what("from"))?,
                to: self.to.ok_or_else(|| what("to"))?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::Record;
    use super::*;

    #[test]
    fn every_side_record_reads_back_as_written() {
        let id = "c-1";
        let sides = [
            Side::Last {
                workspace: "/home/me/app \"x\"".into(),
            },
            Side::Metadata {
                value: "{\n  \"is_internal\": false\n}".into(),
            },
            Side::Summary {
                file: SideFile::JetboxSummaries,
                entry: vec![0x0a, 0x03, b'c', b'-', b'1'],
            },
            Side::Summary {
                file: SideFile::AgyhubSummaries,
                entry: vec![],
            },
            Side::Annotation {
                content: FileContent::Text("title: \"A\"\n".into()),
            },
            Side::Annotation {
                content: FileContent::Hex("ff00".into()),
            },
            Side::Moved {
                file: SideFile::History,
                from: "/a".into(),
                to: "/b".into(),
            },
            Side::Moved {
                file: SideFile::Settings,
                from: "/a".into(),
                to: "/b".into(),
            },
        ];
        for side in sides {
            let mut line = Vec::new();
            side.write(&mut line, id);
            line.pop();
            let Record::Side {
                conversation,
                side: back,
            } = Record::parse(&line).unwrap()
            else {
                panic!("not a side record: {}", String::from_utf8_lossy(&line))
            };
            assert_eq!(conversation, id);
            assert_eq!(back, side, "{}", String::from_utf8_lossy(&line));
        }
    }

    #[test]
    fn bad_side_records_say_why() {
        for (line, says) in [
            (
                r#"{"conversation":"c","kind":"side","key":"/a"}"#,
                "no \"file\"",
            ),
            (
                r#"{"conversation":"c","kind":"side","file":"x.json"}"#,
                "unknown file",
            ),
            (
                r#"{"conversation":"c","kind":"side","file":"annotations/d.pbtxt","text":""}"#,
                "not conversation",
            ),
            (
                r#"{"conversation":"c","kind":"side","file":"cache/last_conversations.json"}"#,
                "no \"key\"",
            ),
            (
                r#"{"conversation":"c","kind":"side","file":"cache/conversation_metadata.json","text":"[]"}"#,
                "not a JSON object",
            ),
            (
                r#"{"conversation":"c","kind":"side","file":"agyhub_summaries_proto.pb","hex":"0"}"#,
                "agyhub",
            ),
            (
                r#"{"conversation":"c","kind":"side","file":"history.jsonl","from":"/a"}"#,
                "no \"to\"",
            ),
        ] {
            let err = Record::parse(line.as_bytes()).unwrap_err();
            assert!(err.to_string().contains(says), "{line}: {err}");
        }
    }
}
