//! A conversation's artifacts: the Markdown documents agy keeps at the top
//! of its brain directory (`task.md`, `implementation_plan.md`,
//! `walkthrough.md`, and any other `*.md` there; FORMAT.md 1), each written
//! as an `artifact` record of its own when the conversation ends:
//!
//! ```text
//! {"conversation":"ID","kind":"artifact","name":"task.md","time":"2026-…Z","text":"# Task\n…"}
//! ```
//!
//! Their companions are not records of their own: `<name>.metadata.json`
//! gives the record its `time` (its `updatedAt`, as the Antigravity IDE
//! writes it, read as an RFC 3339 time), and `<name>.resolved` (with
//! `.resolved.N`, earlier versions) is the same document as agy resolved
//! its links, used only when `<name>` itself is missing.
//!
//! The brain files come after the last step, so what is held here is only
//! the artifacts themselves, until the conversation's end.

use crate::error::Result;
use crate::stream::json;
use crate::stream::record::{decode_hex, FileContent};
use crate::time::Timestamp;

/// One artifact as collected.
#[derive(Debug, Default)]
struct Artifact {
    name: String,
    text: String,
    /// Whether a text came (`<name>` or `<name>.resolved`), and whether
    /// it is `<name>.resolved`'s, to be replaced by `<name>`.
    has_text: bool,
    resolved: bool,
    time: Option<Timestamp>,
}

/// The artifacts of the conversation being decoded.
#[derive(Debug, Default)]
pub(super) struct Artifacts {
    found: Vec<Artifact>,
    /// The file that parts with `append` continue, and what it is.
    last: Option<(String, Part)>,
    /// The metadata file being read, whole (a few hundred bytes).
    metadata: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Text { resolved: bool },
    Metadata,
}

/// What a brain path is to the artifacts: the artifact's name and which
/// of its files it is, or nothing.
fn classify(path: &str) -> Option<(&str, Part)> {
    if path.contains('/') || path.starts_with('.') {
        return None;
    }
    if let Some(name) = path.strip_suffix(".metadata.json") {
        return name.ends_with(".md").then_some((name, Part::Metadata));
    }
    if path.ends_with(".md") {
        return Some((path, Part::Text { resolved: false }));
    }
    let (name, rest) = path.split_once(".md.resolved")?;
    let version = rest.strip_prefix('.').unwrap_or(rest);
    let only_digits = version.bytes().all(|b| b.is_ascii_digit());
    // The plain `.resolved`, not an earlier version of it.
    (rest.is_empty() && only_digits)
        .then(|| (&path[..name.len() + 3], Part::Text { resolved: true }))
}

impl Artifacts {
    /// A brain file (or the next part of one) of the row stream.
    pub(super) fn file(
        &mut self,
        path: &str,
        append: bool,
        content: &FileContent<'_>,
    ) -> Result<()> {
        let part = if append {
            match &self.last {
                Some((last, part)) if last == path => *part,
                _ => return Ok(()),
            }
        } else {
            self.finish_metadata();
            let Some((name, part)) = classify(path) else {
                self.last = None;
                return Ok(());
            };
            let name = name.to_string();
            match part {
                Part::Text { resolved } => {
                    let artifact = self.entry(&name);
                    if resolved && artifact.has_text && !artifact.resolved {
                        // The document itself came first: keep it.
                        self.last = None;
                        return Ok(());
                    }
                    artifact.text.clear();
                    artifact.has_text = true;
                    artifact.resolved = resolved;
                }
                Part::Metadata => self.metadata.clear(),
            }
            self.last = Some((name, part));
            part
        };
        let bytes;
        let text = match content {
            FileContent::Text(text) => text.as_ref(),
            FileContent::Hex(hex_text) => {
                bytes = decode_hex(hex_text)?;
                &crate::agy::wire::lossy_str(&bytes)
            }
        };
        let name = self.last.as_ref().expect("set above").0.clone();
        match part {
            Part::Text { .. } => self.entry(&name).text.push_str(text),
            Part::Metadata => self.metadata.push_str(text),
        }
        Ok(())
    }

    /// For a reader that takes a brain file's part without parsing it
    /// ([`super::Decoder::canonical_file_line`]): whether the artifacts
    /// need its text, so it must come through [`Artifacts::file`]. When
    /// not, what `file` would have done with it (end a metadata file being
    /// read) is done here.
    pub(super) fn needs(&mut self, path: &str, append: bool) -> bool {
        if append {
            return matches!(&self.last, Some((last, _)) if last == path);
        }
        if classify(path).is_some() {
            return true;
        }
        self.finish_metadata();
        self.last = None;
        false
    }

    fn entry(&mut self, name: &str) -> &mut Artifact {
        let at = match self.found.iter().position(|a| a.name == name) {
            Some(at) => at,
            None => {
                self.found.push(Artifact {
                    name: name.to_string(),
                    ..Artifact::default()
                });
                self.found.len() - 1
            }
        };
        &mut self.found[at]
    }

    /// Reads the time of the metadata file just read, if that is what it
    /// was: `updatedAt`, else `createdAt`; a file that is not such JSON
    /// gives none.
    fn finish_metadata(&mut self) {
        let Some((name, Part::Metadata)) = self.last.take() else {
            return;
        };
        let metadata: Option<serde_json::Value> = serde_json::from_str(&self.metadata).ok();
        let time = metadata.as_ref().and_then(|m| {
            ["updatedAt", "createdAt"]
                .iter()
                .find_map(|key| m.get(key)?.as_str())
                .and_then(|t| Timestamp::parse(t).ok())
        });
        if time.is_some() {
            self.entry(&name).time = time;
        }
        self.metadata.clear();
    }

    /// Writes one `artifact` record per artifact with a text, in name
    /// order.
    pub(super) fn write(mut self, conversation: &str, out: &mut Vec<u8>) {
        self.finish_metadata();
        self.found
            .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        for artifact in &self.found {
            if !artifact.has_text {
                continue;
            }
            out.extend_from_slice(b"{\"conversation\":");
            json::write_str(out, conversation);
            out.extend_from_slice(b",\"kind\":\"artifact\",\"name\":");
            json::write_str(out, &artifact.name);
            if let Some(time) = artifact.time.and_then(|t| t.format()) {
                out.extend_from_slice(b",\"time\":");
                json::write_str(out, &time);
            }
            out.extend_from_slice(b",\"text\":");
            json::write_str(out, &artifact.text);
            out.extend_from_slice(b"}\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn text(t: &str) -> FileContent<'_> {
        FileContent::Text(Cow::Borrowed(t))
    }

    #[test]
    fn artifacts_are_the_top_level_markdown_files_with_their_times() {
        let mut artifacts = Artifacts::default();
        let files = [
            (".system_generated/logs/transcript.jsonl", "{}"),
            ("implementation_plan.md", "# Plan\n"),
            (
                "implementation_plan.md.metadata.json",
                r#"{"artifactType":"ARTIFACT_TYPE_IMPLEMENTATION_PLAN","updatedAt":"2026-06-28T10:15:42.5Z"}"#,
            ),
            ("implementation_plan.md.resolved", "# Plan (resolved)\n"),
            ("implementation_plan.md.resolved.0", "# Plan v0\n"),
            ("notes/deep.md", "not an artifact"),
            ("steps/3/output.txt", "x"),
            ("task.md.metadata.json", "not json"),
            ("task.md.resolved", "- [x] done\n"),
            (
                "todo.md.metadata.json",
                r#"{"updatedAt":"2026-06-28T10:15:42Z"}"#,
            ),
            ("walkthrough.md", "# Walk"),
        ];
        for (path, content) in files {
            artifacts.file(path, false, &text(content)).unwrap();
        }
        artifacts
            .file("walkthrough.md", true, &text("through\n"))
            .unwrap();
        let mut out = Vec::new();
        artifacts.write("c1", &mut out);
        let lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
        assert_eq!(
            lines,
            [
                r##"{"conversation":"c1","kind":"artifact","name":"implementation_plan.md","time":"2026-06-28T10:15:42.500Z","text":"# Plan\n"}"##,
                r##"{"conversation":"c1","kind":"artifact","name":"task.md","text":"- [x] done\n"}"##,
                r##"{"conversation":"c1","kind":"artifact","name":"walkthrough.md","text":"# Walkthrough\n"}"##,
            ]
        );
    }
}
