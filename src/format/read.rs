//! What every reader of `agy-encode --format` shares, so that a format is
//! one file that says only how its sessions read.
//!
//! A [`Reader`] turns one session file into a [`Conversation`] (its
//! messages and its meta record), counting what it leaves out; [`encode()`]
//! does the rest the same way for every format: it writes the message
//! stream's records, with the timestamps the stream can hold, feeds them
//! to the ordinary encoder, and with `--verbose` says what was left out.

use std::borrow::Cow;

use super::{Conversation, Report};
use crate::encode::{self, Encoder};
use crate::error::Result;
use crate::stream::io::{Lines, Output};
use crate::stream::message::{ImageSource, Message, Meta};
use crate::time::Timestamp;

/// Reads one session from its lines; the conversation id is the session's.
pub type Reader = fn(&mut Lines, &mut Report) -> Result<Conversation>;

/// Reads one session from `lines` with `read` and feeds its records to
/// `encoder`. With `verbose`, what was left out goes to stderr.
pub fn encode(
    read: Reader,
    lines: &mut Lines,
    encoder: &mut Encoder,
    out: &mut Output,
    verbose: bool,
) -> Result<()> {
    let name = lines.name().to_string();
    let mut report = Report::default();
    let conv = read(lines, &mut report)?;
    each_record(conv, |record| {
        let parsed = encode::parse_line(record).map_err(|e| e.context(&name))?;
        encoder.record(&parsed, out).map_err(|e| e.context(&name))
    })?;
    if verbose {
        eprintln!("agy-encode: {name}: {report}");
    }
    Ok(())
}

/// The message stream records (JSON lines without the newline) of `conv`:
/// each message that holds something, then the meta record. A time the
/// stream cannot hold is left out.
pub fn records(conv: Conversation) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    each_record(conv, |record| {
        out.push(record.to_vec());
        Ok(())
    })
    .expect("collecting cannot fail");
    out
}

/// Hands each record of [`records`] to `take` as it is made, and drops
/// each message once its record is taken, so that the conversation and its
/// records are not held whole at once.
pub fn each_record(conv: Conversation, mut take: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let valid = |t: Option<String>| t.filter(|t| Timestamp::parse(t).is_ok());
    let id = conv.id.as_str();
    let mut line = Vec::new();
    for msg in conv.messages {
        if msg.content.is_empty() {
            continue;
        }
        line.clear();
        Message {
            conversation: id,
            kind: "message",
            role: msg.role,
            step_type: msg.step_type.map(Cow::Owned),
            idx: None,
            implicit: msg.implicit,
            timestamp: valid(msg.timestamp),
            model: msg.model.map(Cow::Owned),
            stop_reason: msg.stop_reason,
            usage: msg.usage,
            raw: None,
            damaged: false,
            content: msg.content,
        }
        .write_json(&mut line);
        take(&line)?;
    }
    let meta = conv.meta;
    let meta = Meta {
        conversation: id,
        kind: "meta",
        id: Cow::Borrowed(id),
        timestamp: valid(meta.timestamp),
        cwd: meta.cwd,
        git_branch: meta.git_branch,
        title: meta.title,
        model: meta.model,
        parent_conversation_id: None,
        forked_from: None,
        incomplete: None,
    };
    take(&serde_json::to_vec(&meta).expect("serializing to a Vec cannot fail"))
}

/// A URL of an image or document (a `data:` URL, or an address) as the
/// stream's source: base64 data with its media type, else the URL.
pub fn image_source(url: &str) -> ImageSource<'static> {
    if let Some((head, data)) = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
    {
        if let Some(media_type) = head.strip_suffix(";base64") {
            return ImageSource {
                source_type: Cow::Borrowed("base64"),
                media_type: Some(Cow::Owned(media_type.to_string())),
                data: Some(Cow::Owned(data.to_string())),
                url: None,
            };
        }
    }
    ImageSource {
        source_type: Cow::Borrowed("url"),
        media_type: None,
        data: None,
        url: Some(Cow::Owned(url.to_string())),
    }
}

/// The records of `conv` as JSON values, for tests to look into.
#[cfg(test)]
pub fn record_values(conv: Conversation) -> Vec<serde_json::Value> {
    records(conv)
        .iter()
        .map(|r| serde_json::from_slice(r).expect("a record is JSON"))
        .collect()
}

/// Each record as `[role, [block type, …]]` (meta: `[null, null]`), for
/// tests to compare the shape of what was read.
#[cfg(test)]
pub fn shapes(records: &[serde_json::Value]) -> Vec<serde_json::Value> {
    records
        .iter()
        .map(|r| {
            let types = r["content"]
                .as_array()
                .map(|c| c.iter().map(|b| b["type"].clone()).collect::<Vec<_>>());
            serde_json::json!([r["role"], types])
        })
        .collect()
}
