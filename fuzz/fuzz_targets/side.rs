//! Differential: the JSON object editor agy-pack changes agy's side files
//! with (`store::side::object`), against serde_json. Any text the editor
//! reads as one object, serde_json reads as one too, with the same keys in
//! the same order; a member added and then removed gives back the text to
//! the byte; a value set is what serde_json then reads. The summaries-file
//! reader and writer never panic, and putting back the entries a file has
//! gives back its bytes.
#![no_main]

use std::collections::BTreeMap;

use agy_tools::store::side::object::{go_string, Edits, Object};
use agy_tools::store::side::summaries;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    protobuf(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(object) = Object::parse_whole(text) else {
        return;
    };
    let serde: serde_json::Map<String, serde_json::Value> = match serde_json::from_str(text) {
        Ok(map) => map,
        // Nesting serde_json refuses (past 128 levels) or a repeated key
        // it keeps once: the editor may read more, never less.
        Err(_) => return,
    };
    let keys: Vec<&str> = object.members.iter().map(|m| m.key.as_str()).collect();
    let distinct: std::collections::HashSet<&str> = keys.iter().copied().collect();
    if distinct.len() == keys.len() {
        let theirs: Vec<&str> = serde.keys().map(String::as_str).collect();
        assert_eq!(keys, theirs, "keys differ from serde_json's");
    }
    // Insert a key that is not there, then remove it.
    let key = (0..)
        .map(|n| format!("k<{n}>"))
        .find(|k| object.get(k).is_none())
        .expect("some key is free");
    let mut edits = Edits::default();
    edits.insert(text, &object, &key, "\"v\"");
    let added = edits.apply(text);
    let again: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&added).expect("an insert leaves JSON");
    assert_eq!(again.get(&key), Some(&serde_json::Value::from("v")));
    let back_object = Object::parse_whole(&added).expect("the editor reads what it wrote");
    let at = back_object
        .members
        .iter()
        .position(|m| m.key == key)
        .expect("the inserted member");
    let mut edits = Edits::default();
    edits.remove(&back_object, at);
    let back = edits.apply(&added);
    if object.members.is_empty() {
        assert_eq!(Object::parse_whole(&back).unwrap().members.len(), 0);
    } else {
        assert_eq!(back, text, "an insert and a remove do not give back the text");
    }
    // Set the first member's value to a string (serde_json keeps the last
    // of a repeated key's values, so only where keys are distinct).
    if let Some(first) = object.members.first().filter(|_| distinct.len() == keys.len()) {
        let mut edits = Edits::default();
        edits.set(first, &go_string("x&y"));
        let set: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&edits.apply(text)).expect("a set leaves JSON");
        assert_eq!(set.get(&first.key), Some(&serde_json::Value::from("x&y")));
    }
}

fn protobuf(data: &[u8]) {
    let Ok(entries) = summaries::entries(data) else {
        assert!(summaries::put(data, &BTreeMap::new(), &[]).is_err());
        return;
    };
    let mut first = BTreeMap::new();
    for (id, entry) in &entries {
        first.entry(id.clone()).or_insert_with(|| entry.to_vec());
    }
    let put = summaries::put(data, &first, &[]).expect("a whole file is rewritten");
    // Only a conversation listed twice loses its later entries.
    if first.len() == entries.len() {
        assert_eq!(put, data, "putting back its own entries changes the file");
    }
}
