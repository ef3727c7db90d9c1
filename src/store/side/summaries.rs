//! The summaries files, `jetbox_summaries_proto.pb` (the CLI) and
//! `agyhub_summaries_proto.pb` (the desktop app): a protobuf message whose
//! repeated field 1 holds one entry per conversation, `{1: id, 2:
//! summary}` (agy-store(5)). An entry is changed, added or left alone with
//! every other byte of the file kept; the summary itself is
//! `derive.rs`'s.

use std::collections::BTreeMap;

use crate::agy::wire::{self, Message, Value, Writer};
use crate::error::{Error, Result};

/// The file's field that holds the entries, and the entry's id field.
const ENTRY: u32 = 1;
const ENTRY_ID: u32 = 1;

/// The conversation an entry is of.
pub fn entry_id(entry: &[u8]) -> Option<String> {
    Message::new(entry)
        .get_str(ENTRY_ID)
        .map(|id| id.into_owned())
}

/// Each entry of the file with the conversation it is of, in file order.
/// Refused when the file does not read whole as a message: a damaged list
/// is not rewritten.
pub fn entries(file: &[u8]) -> Result<Vec<(String, &[u8])>> {
    let (fields, tail) = wire::field_spans(file);
    if !tail.is_empty() {
        return Err(Error::data(format!(
            "not a whole protobuf message ({} bytes at its end unreadable)",
            tail.len()
        )));
    }
    Ok(fields
        .into_iter()
        .filter_map(|(field, _)| match (field.number, field.value) {
            (ENTRY, Value::Bytes(entry)) => Some((entry_id(entry)?, entry)),
            _ => None,
        })
        .collect())
}

/// `file` with the entry of each conversation in `new` put in place of
/// the one it has (its first; any more of the same conversation dropped),
/// or added at the end in the order given; every other byte as it was.
pub fn put(file: &[u8], new: &BTreeMap<String, Vec<u8>>, order: &[String]) -> Result<Vec<u8>> {
    let (fields, tail) = wire::field_spans(file);
    if !tail.is_empty() {
        return Err(Error::data("not a whole protobuf message: not rewritten"));
    }
    let mut out = Writer::with_capacity(file.len() + 256);
    let mut placed = std::collections::HashSet::new();
    for (field, bytes) in fields {
        let id = match (field.number, field.value) {
            (ENTRY, Value::Bytes(entry)) => entry_id(entry),
            _ => None,
        };
        match id.and_then(|id| new.get_key_value(&id)) {
            Some((id, entry)) => {
                if placed.insert(id.clone()) {
                    // The same entry keeps its bytes, however its length
                    // was written (fuzz/side: a varint longer than need be).
                    match field.value {
                        Value::Bytes(old) if old == entry.as_slice() => out.raw(bytes),
                        _ => out.bytes(ENTRY, entry),
                    };
                }
            }
            None => {
                out.raw(bytes);
            }
        }
    }
    for id in order {
        if !placed.contains(id) {
            if let Some(entry) = new.get(id) {
                out.bytes(ENTRY, entry);
                placed.insert(id.clone());
            }
        }
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, title: &str) -> Vec<u8> {
        let mut w = Writer::new();
        w.string(1, id).message(2, |s| {
            s.string(1, title);
        });
        w.into_bytes()
    }

    #[test]
    fn entries_are_replaced_in_place_and_added_at_the_end() {
        let mut file = Writer::new();
        file.bytes(1, &entry("a", "A"))
            .varint(7, 3)
            .bytes(1, &entry("b", "B"));
        let file = file.into_bytes();
        let listed: Vec<String> = entries(&file)
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(listed, ["a", "b"]);
        let new = BTreeMap::from([
            ("a".to_string(), entry("a", "A2")),
            ("c".to_string(), entry("c", "C")),
        ]);
        let order = ["c".to_string(), "a".to_string()];
        let out = put(&file, &new, &order).unwrap();
        let mut expected = Writer::new();
        expected
            .bytes(1, &entry("a", "A2"))
            .varint(7, 3)
            .bytes(1, &entry("b", "B"))
            .bytes(1, &entry("c", "C"));
        assert_eq!(out, expected.into_bytes());
        // Putting back what a file has gives back its bytes.
        let same = BTreeMap::from([("b".to_string(), entry("b", "B"))]);
        assert_eq!(put(&file, &same, &[]).unwrap(), file);
        assert!(entries(&[0x0a, 0x05, 0x01]).is_err());
        // An entry whose length is written longer than need be (0x83 0x00
        // for 3) keeps its bytes when it is put back as it is.
        let long = [0x0a, 0x83, 0x00, 0x0a, 0x01, b'z'];
        let same = BTreeMap::from([("z".to_string(), vec![0x0a, 0x01, b'z'])]);
        assert_eq!(put(&long, &same, &[]).unwrap(), long);
    }
}
