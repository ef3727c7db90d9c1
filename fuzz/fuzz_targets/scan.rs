//! Differential: the string-body scan and the clean-prefix scan at every
//! SIMD level this CPU runs. A body is simple exactly when serde_json
//! accepts it as a string and it has no `\u` escape (found by walking the
//! escapes of a string serde_json accepted); the clean prefix ends at the
//! first control character, quote or backslash; a simple string's end is
//! the first quote that no backslash escapes, found as walking the input
//! one escape at a time finds it (`simple_str_end_by_walking`).
#![no_main]

use agy_tools::stream::json;
use agy_tools::stream::simd::Level;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(body: &[u8]) {
    let mut quoted = Vec::with_capacity(body.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(body);
    quoted.push(b'"');
    let serde_ok = serde_json::from_slice::<String>(&quoted).is_ok();
    let simple = serde_ok && !has_unicode_escape(body);
    let clean = body
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .unwrap_or(body.len());
    let end = json::simple_str_end_by_walking(body);
    for level in Level::supported_levels() {
        assert_eq!(
            json::simple_str_end_at(level, body),
            end,
            "simple string end at {level:?}"
        );
        assert_eq!(
            json::is_simple_str_body_at(level, body),
            simple,
            "string body at {level:?} (serde_json accepts it: {serde_ok})"
        );
        assert_eq!(
            json::clean_prefix_len_at(level, body),
            clean,
            "clean prefix at {level:?}"
        );
    }
}

/// Whether the body of a valid JSON string holds a `\u` escape: each
/// backslash starts an escape whose letter is the byte after it.
fn has_unicode_escape(body: &[u8]) -> bool {
    let mut at = 0;
    while at < body.len() {
        if body[at] == b'\\' {
            if body.get(at + 1) == Some(&b'u') {
                return true;
            }
            at += 2;
        } else {
            at += 1;
        }
    }
    false
}
