//! Message streams for the agy-render tests, built in code: a tour of
//! every kind of block and call the renderer treats specially, and a
//! conversation whose every string is hostile.
#![allow(dead_code)]

use agy_tools::stream::message::base64_encode;
use serde_json::{json, Value};

/// One line of the message stream.
pub fn line(value: Value) -> String {
    let mut text = serde_json::to_string(&value).unwrap();
    text.push('\n');
    text
}

pub fn message(conversation: &str, role: &str, time: &str, content: Value) -> Value {
    json!({"conversation": conversation, "kind": "message", "role": role, "timestamp": time, "content": content})
}

pub fn assistant(
    conversation: &str,
    time: &str,
    model: &str,
    usage: (u64, u64),
    content: Value,
) -> Value {
    json!({"conversation": conversation, "kind": "message", "role": "assistant", "timestamp": time,
           "model": model, "stop_reason": "tool_use",
           "usage": {"input_tokens": usage.0, "output_tokens": usage.1}, "content": content})
}

pub fn result(conversation: &str, time: &str, id: &str, content: Value, is_error: bool) -> Value {
    let mut block = json!({"type": "tool_result", "tool_use_id": id, "content": content});
    if is_error {
        block["is_error"] = json!(true);
    }
    message(conversation, "user", time, json!([block]))
}

pub fn meta(conversation: &str, title: &str, cwd: &str, branch: &str, model: &str) -> Value {
    json!({"conversation": conversation, "kind": "meta", "id": conversation, "timestamp": "2026-08-10T09:00:00Z",
           "cwd": cwd, "git_branch": branch, "title": title, "model": model})
}

pub const TOUR: &str = "feature-tour";

/// A conversation with each thing the renderer shows its own way: Markdown
/// text, thinking, a Bash call and result, an Edit, a MultiEdit, a Write, a
/// failed call, a file-change result, an image, a system message, a
/// damaged step, a block of an unknown type, two models.
pub fn tour() -> String {
    let c = TOUR;
    let image = base64_encode(&png(48, 24));
    let long_output: String = (1..=60)
        .map(|i| format!("test case_{i} ... ok\n"))
        .collect();
    [
        message(c, "user", "2026-08-10T09:00:01Z", json!([
            {"type": "text", "text": "Rename `parse_row` to `read_row`\nand keep the tests green."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}}
        ])),
        assistant(c, "2026-08-10T09:00:05Z", "gemini-3.8-flash", (1200, 340), json!([
            {"type": "thinking", "thinking": "The function is used in **two** places.", "signature": "c2ln"},
            {"type": "text", "text": "Plan:\n\n1. rename the function\n2. run `cargo test`\n\n| file | change |\n|:--|--:|\n| src/row.rs | rename |"},
            {"type": "tool_use", "id": "call-bash", "name": "Bash", "input": {"command": "cargo test", "workdir": "/src/rowdy"}}
        ])),
        result(c, "2026-08-10T09:00:09Z", "call-bash", json!(long_output), false),
        assistant(c, "2026-08-10T09:00:12Z", "gemini-3.8-flash", (1500, 200), json!([
            {"type": "tool_use", "id": "call-edit", "name": "Edit", "input": {
                "file_path": "/src/rowdy/src/row.rs",
                "old_string": "use std::io;\n\npub fn parse_row(line: &str) -> Row {\n    Row::new(line)\n}\n",
                "new_string": "use std::io;\n\npub fn read_row(line: &str) -> Row {\n    Row::new(line)\n}\n",
                "replace_all": false}},
            {"type": "tool_use", "id": "call-multi", "name": "MultiEdit", "input": {
                "file_path": "/src/rowdy/src/main.rs",
                "edits": [
                    {"old_string": "parse_row(a)", "new_string": "read_row(a)"},
                    {"old_string": "parse_row(b)", "new_string": "read_row(b)", "replace_all": true}
                ]}}
        ])),
        result(c, "2026-08-10T09:00:13Z", "call-edit", json!({"file": "/src/rowdy/src/row.rs", "edited": true}), false),
        result(c, "2026-08-10T09:00:14Z", "call-multi", json!("The target content was not found in /src/rowdy/src/main.rs."), true),
        json!({"conversation": c, "kind": "message", "role": "system", "step_type": "CHECKPOINT", "idx": 7,
               "timestamp": "2026-08-10T09:00:15Z",
               "content": [{"type": "text", "text": "Rename parse_row", "field": "conversation_title"}]}),
        assistant(c, "2026-08-10T09:00:20Z", "gemini-3.9-pro", (900, 120), json!([
            {"type": "tool_use", "id": "call-write", "name": "Write", "input": {
                "file_path": "/src/rowdy/CHANGES.md", "content": "# Changes\n\n- `parse_row` is now `read_row`.\n"}}
        ])),
        result(c, "2026-08-10T09:00:21Z", "call-write", json!({"file": "/src/rowdy/CHANGES.md", "created": true}), false),
        json!({"conversation": c, "kind": "message", "role": "assistant", "timestamp": "2026-08-10T09:00:25Z",
               "model": "gemini-3.9-pro", "stop_reason": "end_turn", "usage": {"input_tokens": 700, "output_tokens": 60},
               "damaged": true, "idx": 11,
               "content": [{"type": "text", "text": "Done: the rename is in and the tests pa"},
                           {"type": "hologram", "note": "a block type from the future"}]}),
        meta(c, "Rename parse_row to read_row", "/src/rowdy", "main", "gemini-3.9-pro"),
    ]
    .into_iter()
    .map(line)
    .collect()
}

/// Each of these, if it ever ran, would set `data-pwned` on the body (or
/// load something, which the policy would report).
pub const PAYLOADS: &[&str] = &[
    "<script>document.body.setAttribute('data-pwned','script')</script>",
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">",
    "<svg onload=\"document.body.setAttribute('data-pwned','svg')\"></svg>",
    "[click me](javascript:document.body.setAttribute('data-pwned','link'))",
    "[entity](jav&#x61;script:alert(1)) <javascript:alert(2)> ![img](javascript:alert(3))",
    "[ref][evil]\n\n[evil]: javascript:alert(4)\n",
    "<a href=\"javascript:alert(5)\">anchor</a>",
    "</textarea><script>document.body.setAttribute('data-pwned','textarea')</script>",
    "</details></summary></pre></code></dd></div></section></article><script>document.body.setAttribute('data-pwned','details')</script>",
    "\"'><script>document.body.setAttribute('data-pwned','attribute')</script>",
    "<iframe src=\"javascript:alert(6)\"></iframe>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(7)\">",
    "<base href=\"http://127.0.0.1:9/\"><link rel=stylesheet href=\"http://127.0.0.1:9/x.css\">",
    "<style>body{display:none}</style><div style=\"display:none\">hidden</div>",
    "![remote](http://127.0.0.1:9/track.png)",
    "<!-- comment --><![CDATA[ x ]]><?php echo 1; ?>",
];

pub const HOSTILE: &str = "hostile\"><img src=x onerror=alert(1)>";

/// All payloads, each its own Markdown block.
pub fn payload() -> String {
    PAYLOADS.join("\n\n")
}

/// A conversation with a payload in every string the page shows: title,
/// directory, branch, model, id, text, thinking, tool names and inputs,
/// file names, results, errors, system fields, media types.
pub fn hostile() -> String {
    let c = HOSTILE;
    let p = payload();
    let short = PAYLOADS[1];
    [
        message(c, "user", "2026-08-10T09:00:01Z", json!([
            {"type": "text", "text": p},
            {"type": "image", "source": {"type": "base64", "media_type": format!("image/png\"{short}"), "data": "AAAA"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": format!("AA\"{short}")}},
            {"type": "image", "source": {"type": "url", "media_type": "image/png", "url": "javascript:alert(8)"}},
            {"type": "document", "source": {"type": "base64", "media_type": format!("text/html{short}"), "data": "PHNjcmlwdD4="}}
        ])),
        json!({"conversation": c, "kind": "message", "role": "assistant", "timestamp": "2026-08-10T09:00:02Z",
               "model": short, "stop_reason": short, "usage": {"input_tokens": 1, "output_tokens": 1},
               "content": [
                   {"type": "thinking", "thinking": p},
                   {"type": "text", "text": p},
                   {"type": "tool_use", "id": short, "name": short, "input": {short: p, "command": short}},
                   {"type": "tool_use", "id": "edit", "name": "Edit", "input": {"file_path": short, "old_string": p, "new_string": format!("{p}\nmore"), short: short}},
                   {"type": "tool_use", "id": "multi", "name": "MultiEdit", "input": {"file_path": short, "edits": [{"old_string": short, "new_string": p}]}},
                   {"type": "tool_use", "id": "write", "name": "Write", "input": {"file_path": format!("{short}.{short}"), "content": p}},
                   {"type": short, short: p}
               ]}),
        result(c, "2026-08-10T09:00:03Z", short, json!(p), false),
        result(c, "2026-08-10T09:00:03Z", "edit", json!(p), true),
        result(c, "2026-08-10T09:00:03Z", "multi", json!({"file": short, "edited": true}), false),
        result(c, "2026-08-10T09:00:03Z", "write", json!([{"type": "text", "text": p}, {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml", "data": "PHN2Zz4="}}]), false),
        result(c, "2026-08-10T09:00:03Z", "never-called", json!({short: p}), false),
        json!({"conversation": c, "kind": "message", "role": "system", "step_type": short, "idx": 3,
               "timestamp": "2026-08-10T09:00:04Z", "damaged": short,
               "content": [{"type": "text", "text": p, "field": short}]}),
        json!({"conversation": c, "kind": "meta", "id": c, "timestamp": "2026-08-10T09:00:00Z",
               "cwd": short, "git_branch": short, "title": format!("{short} title </title><script>document.body.setAttribute('data-pwned','title')</script>"),
               "model": short, "parent_conversation_id": short,
               "forked_from": {"conversation_id": short, "step_index": 1}}),
    ]
    .into_iter()
    .map(line)
    .collect()
}

/// A `width` x `height` RGB PNG of colour bands, with stored (uncompressed)
/// deflate blocks: small enough to write by hand, real enough for a
/// browser to draw.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0); // filter: none
        for x in 0..width {
            let band = (x * 3 / width) as usize;
            let mut pixel = [40u8, 40, 40];
            pixel[band] = 220;
            pixel[(band + 1) % 3] = (y * 255 / height) as u8;
            raw.extend_from_slice(&pixel);
        }
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    for (kind, data) in [(b"IHDR", ihdr), (b"IDAT", zlib), (b"IEND", Vec::new())] {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut chunk = kind.to_vec();
        chunk.extend_from_slice(&data);
        png.extend_from_slice(&chunk);
        png.extend_from_slice(&crc32(&chunk).to_be_bytes());
    }
    png
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Every start tag in `html`, with its attributes. Everything the page
/// writes from a conversation is escaped, so every `<` left in it opens
/// markup the renderer wrote itself: that is what this reads.
pub fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut tags = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        if rest.starts_with('/') || rest.starts_with("!DOCTYPE") {
            continue;
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let name = rest[..end].to_ascii_lowercase();
        rest = &rest[end..];
        let mut attrs = Vec::new();
        loop {
            rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
            if rest.starts_with('>') || rest.is_empty() {
                break;
            }
            let end = rest
                .find(|c: char| c == '=' || c.is_whitespace() || c == '>')
                .unwrap_or(rest.len());
            let attr = rest[..end].to_ascii_lowercase();
            rest = &rest[end..];
            let mut value = String::new();
            if let Some(after) = rest.strip_prefix("=\"") {
                let close = after.find('"').expect("attribute values are quoted");
                value = after[..close].to_string();
                rest = &after[close + 1..];
            } else if rest.starts_with('=') {
                panic!("unquoted attribute {attr} in <{name}>");
            }
            attrs.push((attr, value));
        }
        tags.push((name, attrs));
    }
    tags
}

/// Asserts that `html` holds only the elements and attributes a rendered
/// page (or pulldown-cmark's HTML of rendered Markdown) may hold: no
/// script, no event handler, no style attribute, no frame, no form; links
/// only to http(s), mailto, fragments and relative files; images only from
/// data:image URLs.
pub fn assert_only_safe_markup(html: &str, what: &str) {
    const ELEMENTS: &[&str] = &[
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "article",
        "header",
        "nav",
        "a",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "dl",
        "dt",
        "dd",
        "code",
        "div",
        "section",
        "span",
        "time",
        "p",
        "details",
        "summary",
        "pre",
        "figure",
        "img",
        "figcaption",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "ul",
        "ol",
        "li",
        "em",
        "strong",
        "del",
        "blockquote",
        "br",
        "hr",
        "input",
    ];
    const ATTRIBUTES: &[&str] = &[
        "lang",
        "charset",
        "http-equiv",
        "content",
        "name",
        "class",
        "id",
        "href",
        "src",
        "alt",
        "datetime",
        "title",
        "type",
        "disabled",
        "checked",
        "start",
        // An artifact's <details> starts open.
        "open",
    ];
    let mut styles = 0;
    for (name, attrs) in tags(html) {
        assert!(
            ELEMENTS.contains(&name.as_str()),
            "{what}: element <{name}>"
        );
        if name == "style" {
            styles += 1;
        }
        for (attr, value) in &attrs {
            assert!(
                ATTRIBUTES.contains(&attr.as_str()),
                "{what}: <{name} {attr}=\"{value}\">"
            );
            let lower = value.to_ascii_lowercase();
            match attr.as_str() {
                "href" => {
                    let scheme = lower.split(['/', '?', '#']).next().unwrap_or("");
                    assert!(
                        !scheme.contains(':')
                            || lower.starts_with("http://")
                            || lower.starts_with("https://")
                            || lower.starts_with("mailto:"),
                        "{what}: <{name} href=\"{value}\">"
                    );
                }
                "src" => assert!(
                    lower.starts_with("data:image/"),
                    "{what}: <{name} src=\"{value}\">"
                ),
                "http-equiv" => assert_eq!(lower, "content-security-policy", "{what}"),
                "type" => assert_eq!(lower, "checkbox", "{what}"),
                _ => {}
            }
        }
    }
    assert!(styles <= 1, "{what}: {styles} style elements");
}
