//! Differential: JSON string escaping, once and twice, at every SIMD level
//! this CPU runs, against serde_json. Escaping once must be serde_json's
//! string body byte for byte; escaping twice must be serde_json's escaping
//! of that body.
#![no_main]

use agy_tools::stream::json;
use agy_tools::stream::simd::Level;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let once = serde_json::to_string(&*text).unwrap();
    let once = &once[1..once.len() - 1];
    let twice = serde_json::to_string(once).unwrap();
    let twice = &twice[1..twice.len() - 1];
    let mut out = Vec::new();
    for level in Level::supported_levels() {
        out.clear();
        json::write_str_body_at(level, &mut out, &text);
        assert_eq!(out, once.as_bytes(), "escaping once at {level:?}");
        out.clear();
        json::write_str_body_twice_at(level, &mut out, &text);
        assert_eq!(out, twice.as_bytes(), "escaping twice at {level:?}");
    }
}
