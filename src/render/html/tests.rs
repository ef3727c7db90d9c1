//! The HTML page's parts: large results and calls rendered by the
//! spooling thread as in place, and file links.

use super::*;

use crate::render::body::{Bodies, Held};
use crate::render::calls;
use crate::render::raw::Raw;
use crate::stream::io::{Captured, Output};
use crate::stream::spool::Spool;

/// Compares two pages of some hundred KiB, saying only their sizes.
fn assert_same(deferred: &[u8], in_place: &[u8]) {
    assert!(
        deferred == in_place,
        "{} bytes against {}",
        deferred.len(),
        in_place.len()
    );
}

/// A spool's bytes.
fn contents(spool: &mut Spool) -> Vec<u8> {
    let sink = Captured::default();
    let mut page = Output::captured(&sink);
    spool.copy_range(0..spool.len(), &mut page).unwrap();
    page.flush().unwrap();
    sink.take()
}

/// A result rendered into the body, where the spooling thread renders
/// the large ones, is what it is rendered as in place.
#[test]
fn deferred_results_are_rendered_as_in_place() {
    let html = Html::new();
    let listing: Vec<_> = (0..3000)
        .map(|i| serde_json::json!({"name": format!("f{i} & <x>.rs"), "size": i}))
        .collect();
    let text: String = (0..2000)
        .map(|i| format!("line {i} & <b> \"é\"\n"))
        .collect();
    let shapes = [
        serde_json::json!(text),
        serde_json::json!(listing),
        serde_json::json!("short & <small>"),
        serde_json::json!(text[..(DEFER_AT - 3)]),
        serde_json::json!(text[..DEFER_AT + 1]),
        serde_json::json!([{"type": "text", "text": text}]),
    ];
    let raws: Vec<String> = shapes.iter().map(|c| c.to_string()).collect();
    let results = || {
        raws.iter().map(|raw| ResultOf {
            name: Some("Bash"),
            call: Some(1),
            view: calls::result_view(Raw::of(raw)),
            is_error: false,
            damaged: None,
        })
    };
    let mut in_place = Vec::new();
    for result in results() {
        html.result(&mut Out::memory(&mut in_place), &result);
    }
    let mut bodies = Bodies::started().unwrap();
    for result in results() {
        let mut out = bodies.out();
        assert!(out.defers());
        html.result(&mut out, &result);
        bodies.filled().unwrap();
    }
    let deferred = contents(&mut bodies.take().unwrap());
    assert_same(&deferred, &in_place);
    // Every one but the short one was collapsed after its preview, as
    // a page shows them, the listing indented.
    let shown = String::from_utf8(in_place).unwrap();
    assert_eq!(shown.matches("more lines").count(), 5, "{shown:.2000}");
    assert!(shown.contains("\"name\": \"f2999 &amp; &lt;x>.rs\",\n"));
}

/// A call rendered later by the spooling thread, as every one but the
/// longest is, is what it is rendered as in place.
#[test]
fn calls_rendered_later_are_rendered_as_in_place() {
    let html = Html::new();
    let text: String = (0..3000)
        .map(|i| format!("line {i} & <b> \"é\"\n"))
        .collect();
    let edited = text.replace("line 1", "LINE 1");
    let inputs = [
        (
            "Write",
            serde_json::json!({"file_path": "/w/a.txt", "content": text}),
        ),
        (
            "Edit",
            serde_json::json!({"file_path": "/w/a.txt", "old_string": text, "new_string": edited}),
        ),
        (
            "Bash",
            serde_json::json!({"command": text, "description": "long"}),
        ),
        ("Bash", serde_json::json!({"command": "ls & <x>"})),
        // Over the limit: written in pieces as it is made, in place.
        (
            "Write",
            serde_json::json!({"file_path": "/w/b.txt", "content": text.repeat(20)}),
        ),
    ];
    let raws: Vec<(&str, String)> = inputs.iter().map(|(n, i)| (*n, i.to_string())).collect();
    let mut in_place = Vec::new();
    let mut bodies = Bodies::started().unwrap();
    let mut later = 0;
    for (name, raw) in &raws {
        let input = Raw::of(raw).unwrap();
        html.call(&mut Out::memory(&mut in_place), name, input);
        let held = match html.call_later(&bodies.out(), name, input) {
            Some(work) => {
                later += 1;
                Held::later(input.get().len(), work)
            }
            None => Held::render(|out| html.call(out, name, input)),
        };
        held.write(&mut bodies.out()).unwrap();
        bodies.filled().unwrap();
    }
    assert_eq!(later, 4);
    let deferred = contents(&mut bodies.take().unwrap());
    assert_same(&deferred, &in_place);
    let shown = String::from_utf8(in_place).unwrap();
    // The Edit shows as a diff, its changed lines escaped.
    assert!(shown.contains("<span class=\"add\">+LINE 1 &amp; &lt;b&gt;"));
}

#[test]
fn file_links_stay_in_the_directory() {
    assert_eq!(file_href("abc-1.html"), "abc-1.html");
    assert_eq!(file_href("a b#?/.html"), "a%20b%23%3F%2F.html");
    assert_eq!(file_href("javascript:x"), "javascript%3Ax");
}
