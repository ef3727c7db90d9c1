//! Differential: the renderer's JSON-to-HTML escaping (a string body
//! unescaped and escaped for a `<pre>` in one pass, its lines counted) at
//! every SIMD level this CPU runs. For a body serde_json accepts, it must
//! be serde_json's reading escaped by plain replacement (`&`, then `<`),
//! with the counts of that text; for any other body, every level must
//! write the same and nothing may panic. The plain text escaper
//! (`html_text_counted`) is held to the same replacement and counts, on
//! the input as text and on serde_json's reading of it.
#![no_main]

use agy_tools::render::escape::{html_json_counted_at, html_text_counted, Counted};
use agy_tools::stream::simd::Level;
use libfuzzer_sys::fuzz_target;

/// The lines a collapsed `<pre>` shows, as the renderer asks.
const PREVIEW_LINES: usize = 3;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let body = String::from_utf8_lossy(data);
    let decoded: Option<String> = serde_json::from_str(&format!("\"{body}\"")).ok();
    for text in [Some(body.as_ref()), decoded.as_deref()].into_iter().flatten() {
        let mut out = Vec::new();
        let counted = html_text_counted(&mut out, text, PREVIEW_LINES);
        assert_eq!(out, escaped(text).as_bytes(), "text");
        assert_eq!(counted, counts(text), "text");
    }
    let mut first: Option<(Vec<u8>, Counted)> = None;
    for level in Level::supported_levels() {
        let mut out = Vec::new();
        let counted = html_json_counted_at(level, &mut out, &body, PREVIEW_LINES);
        if let Some(text) = &decoded {
            assert_eq!(out, escaped(text).as_bytes(), "at {level:?}");
            assert_eq!(counted, counts(text), "at {level:?}");
        }
        match &first {
            None => first = Some((out, counted)),
            Some(same) => assert_eq!(same, &(out, counted), "at {level:?}"),
        }
    }
}

/// HTML escaping for a `<pre>`, by replacement.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;")
}

/// What [`Counted`] must say of `text`.
fn counts(text: &str) -> Counted {
    let newlines = text.matches('\n').count();
    let preview_end = text
        .match_indices('\n')
        .nth(PREVIEW_LINES - 1)
        .map(|(at, _)| (escaped(&text[..=at]).len(), at + 1));
    Counted {
        newlines,
        bytes: text.len(),
        ends_with_newline: text.ends_with('\n'),
        preview_end,
    }
}
