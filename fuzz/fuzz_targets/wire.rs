//! The schema-less protobuf reader: every blob a database holds goes
//! through it. It must never panic, and its views of one buffer must agree.
#![no_main]

use agy_tools::agy::wire::{self, Field, Message, Value, Writer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let mut fields = wire::Fields::new(data);
    let read: Vec<Field> = fields.by_ref().collect();
    let damaged = fields.is_damaged();

    // The spans are the buffer, cut at field boundaries, then the tail.
    let (spans, tail) = wire::field_spans(data);
    assert_eq!(spans.len(), read.len());
    let mut joined = Vec::with_capacity(data.len());
    for ((field, raw), same) in spans.iter().zip(&read) {
        assert_eq!(field, same);
        joined.extend_from_slice(raw);
    }
    joined.extend_from_slice(tail);
    assert_eq!(joined, data);
    assert_eq!(damaged, !tail.is_empty());

    // Damage is reported exactly when the tail is not empty, and a
    // repaired message reads whole and keeps every field before the damage.
    let damage = wire::damage(data);
    assert_eq!(damage.is_some(), damaged);
    if let Some(d) = &damage {
        assert_eq!(d.offset + d.unread, data.len());
        let _ = d.to_string();
    }
    match wire::repair(data) {
        None => assert!(!damaged),
        Some(repaired) => {
            assert!(damaged);
            assert_eq!(wire::damage(&repaired), None, "a repair reads whole");
            let again: Vec<Field> = wire::Fields::new(&repaired).collect();
            assert!(again.len() >= read.len());
            assert_eq!(&again[..read.len()], &read[..]);
        }
    }

    // What the writer makes of the fields reads back as the same fields.
    let mut writer = Writer::new();
    for field in &read {
        match field.value {
            Value::Varint(v) => writer.varint(field.number, v),
            Value::Fixed64(v) => writer.fixed64(field.number, v),
            Value::Bytes(b) => writer.bytes(field.number, b),
            Value::Fixed32(v) => writer.fixed32(field.number, v),
        };
    }
    let rewritten = writer.into_bytes();
    let reread: Vec<Field> = wire::Fields::new(&rewritten).collect();
    assert_eq!(reread, read);
    assert_eq!(wire::damage(&rewritten), None);

    // The accessors the decoder uses, on every field number present and
    // one level down.
    let message = Message::new(data);
    let _ = wire::is_whole_message(data);
    for field in read.iter().take(64) {
        let n = field.number;
        let _ = message.has(n);
        let _ = message.last(n);
        let _ = message.get_str(n);
        let _ = message.get_nonempty_str(n);
        let _ = message.get_u64(n);
        let _ = message.get_i64(n);
        let _ = message.get_i32(n);
        let _ = message.get_bool(n);
        let _ = message.repeated_varints(n);
        let _ = message.repeated_bytes(n).count();
        if let Some(inner) = message.get_message(n) {
            for f in inner.fields().take(64) {
                let _ = inner.get_str(f.number);
                let _ = inner.repeated_varints(f.number);
            }
        }
        for inner in message.repeated_messages(n).take(16) {
            let _ = inner.fields().count();
        }
    }
    let _ = wire::lossy_str(data);
}
