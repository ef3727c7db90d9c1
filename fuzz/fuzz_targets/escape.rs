//! Differential: JSON string escaping, once and twice, and unescaping, at
//! every SIMD level this CPU runs, against serde_json. Escaping once must
//! be serde_json's string body byte for byte; escaping twice must be
//! serde_json's escaping of that body; unescaping the input as a string's
//! body must read what serde_json reads (and refuse what it refuses), and
//! unescaping what was escaped once must give the text back. Unescaping
//! the input as a whole text (`unescape_text_at`, which takes quotes and
//! controls as they stand) must read it one character at a time, and as
//! serde_json does where serde reads it as a string.
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
    // The input as the inside of a string, up to the first quote serde
    // stops at (or to its end).
    let read = serde_json::Deserializer::from_str(&format!("\"{text}"))
        .into_iter::<String>()
        .next()
        .and_then(Result::ok);
    let escaped_body = format!("{once}\"");
    let whole = serde_json::from_str::<String>(&format!("\"{text}\"")).ok();
    let walked = [json::LoneSurrogate::Refuse, json::LoneSurrogate::Replace].map(|lone| {
        let mut walked = String::new();
        (walk(&text, lone, &mut walked), walked)
    });
    if let Some(whole) = &whole {
        assert_eq!(walked[0], (true, whole.clone()), "walking, against serde");
    }
    let mut out = Vec::new();
    for level in Level::supported_levels() {
        out.clear();
        json::write_str_body_at(level, &mut out, &text);
        assert_eq!(out, once.as_bytes(), "escaping once at {level:?}");
        out.clear();
        json::write_str_body_twice_at(level, &mut out, &text);
        assert_eq!(out, twice.as_bytes(), "escaping twice at {level:?}");
        out.clear();
        let end = json::unescape_body_at(level, &text, &mut out);
        match &read {
            Some(read) => {
                assert_eq!(text.as_bytes()[end.expect("serde reads it")], b'"');
                assert_eq!(out, read.as_bytes(), "unescaping at {level:?}");
            }
            None => assert_eq!(end, None, "serde refuses it, at {level:?}"),
        }
        out.clear();
        let end = json::unescape_body_at(level, &escaped_body, &mut out);
        assert_eq!(end, Some(once.len()), "the escaped text's end at {level:?}");
        assert_eq!(out, text.as_bytes(), "unescaping the escaped at {level:?}");
        for (lone, walked) in [json::LoneSurrogate::Refuse, json::LoneSurrogate::Replace]
            .into_iter()
            .zip(&walked)
        {
            let mut read = String::new();
            let ok = json::unescape_text_at(level, &text, lone, &mut read);
            assert_eq!(&(ok, read), walked, "a whole text at {level:?}, {lone:?}");
        }
    }
}

/// A text's escapes read one character at a time.
fn walk(text: &str, lone: json::LoneSurrogate, out: &mut String) -> bool {
    let mut at = 0;
    while let Some(c) = text[at..].chars().next() {
        if c != '\\' {
            out.push(c);
            at += c.len_utf8();
            continue;
        }
        let Some((c, used)) = json::read_escape(&text[at..], lone) else {
            return false;
        };
        out.push(c);
        at += used;
    }
    true
}
