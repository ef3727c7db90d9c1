//! `artifact` records (agy-decode's, see `decode/artifacts.rs`) back to the
//! brain files they came from: `<name>` with the Markdown, and, when the
//! record has a time, `<name>.metadata.json` with it as `updatedAt`, so
//! that decoding again gives the same record. Written as they come, as
//! `file` records (in parts past [`record::FILE_PART`]).

use std::collections::HashSet;

use crate::error::{Error, Result};
use crate::stream::io::Output;
use crate::stream::message::InputRecord;
use crate::stream::record::{self, FileDir};
use crate::time::Timestamp;

/// Writes the brain files of one artifact record of conversation `id`;
/// `seen` holds the names written so far, since a name may come once.
pub(super) fn write(
    id: &str,
    record: &InputRecord<'_>,
    seen: &mut HashSet<String>,
    out: &mut Output,
) -> Result<()> {
    let name = record
        .name
        .as_deref()
        .ok_or_else(|| Error::data("artifact record has no \"name\""))?;
    let plain = !name.contains(['/', '\\', '\0']) && !name.starts_with('.');
    if !plain || !name.ends_with(".md") {
        return Err(Error::data(format!(
            "artifact name {name:?} is not a Markdown file at the top of the brain directory"
        )));
    }
    if !seen.insert(name.to_string()) {
        return Err(Error::data(format!("artifact {name:?} comes twice")));
    }
    let text = record.text.as_deref().unwrap_or_default();
    write_file(id, name, text.as_bytes(), out)?;
    if let Some(time) = record.time.as_deref() {
        let time = Timestamp::parse(time)
            .map_err(|e| Error::data(format!("artifact {name:?}: time: {e}")))?;
        let time = time
            .format()
            .ok_or_else(|| Error::data(format!("artifact {name:?}: time out of range")))?;
        let metadata = serde_json::json!({ "updatedAt": time }).to_string();
        write_file(
            id,
            &format!("{name}.metadata.json"),
            metadata.as_bytes(),
            out,
        )?;
    }
    Ok(())
}

fn write_file(id: &str, path: &str, mut content: &[u8], out: &mut Output) -> Result<()> {
    let mut append = false;
    loop {
        let part = record::file_part_len(content);
        record::write_file_part(
            out.buf(),
            id,
            FileDir::Brain,
            path,
            append,
            &content[..part],
        );
        out.end_record()?;
        content = &content[part..];
        append = true;
        if content.is_empty() {
            return Ok(());
        }
    }
}
