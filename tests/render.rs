//! agy-render end to end: what a page shows, that nothing in a conversation
//! becomes markup, the `--out` directory and its index, and batch manners.
//! The browser's view of the same pages is in `render_browser.rs`.

mod render_fixtures;
mod support;

use std::io::Read;
use std::process::{Command, Stdio};

use render_fixtures::*;
use serde_json::json;
use support::{exe, run, run_ok, stderr, Scratch};

fn render(args: &[&str], stream: &str) -> String {
    String::from_utf8(run_ok("agy-render", args, stream.as_bytes())).unwrap()
}

#[test]
fn the_tour_page_shows_every_part() {
    let html = render(&[], &tour());
    let has = |needle: &str| assert!(html.contains(needle), "missing {needle:?}");
    // The header, from the meta record and the messages.
    has("<title>Rename parse_row to read_row</title>");
    has("<h1>Rename parse_row to read_row</h1>");
    has("<dt>Directory</dt><dd><code>/src/rowdy</code></dd>");
    has("<dt>Branch</dt><dd><code>main</code></dd>");
    has("<dt>Models</dt><dd>gemini-3.8-flash, gemini-3.9-pro</dd>");
    has("<dt>Started</dt><dd><time datetime=\"2026-08-10T09:00:00Z\">2026-08-10 09:00:00 UTC</time></dd>");
    has("<dt>Last message</dt><dd><time datetime=\"2026-08-10T09:00:25Z\">2026-08-10 09:00:25 UTC</time></dd>");
    has("<dd>1 user, 4 assistant; 4 tool calls, 1 failed; 1 system message</dd>");
    has("<dd>5,020 in total: input 4,300, output 720, cache write 0, cache read 0</dd>");
    has("<p class=\"warning\">1 damaged step is marked below: only what could be read of it is shown.</p>");
    // The user's turn, typed text keeping its line break, and the image.
    has("<p>Rename <code>parse_row</code> to <code>read_row</code><br />\nand keep the tests green.</p>");
    has("<figure class=\"image\"><img alt=\"attached image (image/png)\" src=\"data:image/png;base64,iVBORw0KGgo");
    // Assistant text as Markdown, thinking collapsed.
    has("<details class=\"thinking\"><summary>Thinking (39 B)</summary>");
    has("<ol>\n<li>rename the function</li>");
    has("<table><thead><tr><th>file</th><th>change</th></tr></thead>");
    // The Bash call beside its result, the long result collapsed.
    has("<div class=\"tool\" id=\"t1\">\n<div class=\"call\"><div class=\"tool-head\"><span class=\"tool-name\">Bash</span><code>cargo test</code></div>");
    has("test case_10 ... ok\n</pre><details class=\"more\"><summary>50 more lines");
    // Edit as a diff, MultiEdit as two, its failure marked.
    has("<span class=\"del\">-pub fn parse_row(line: &amp;str) -&gt; Row {</span><span class=\"add\">+pub fn read_row(line: &amp;str) -&gt; Row {</span>");
    has("<span class=\"file\">+++ /src/rowdy/src/main.rs (every occurrence)</span>");
    assert_eq!(html.matches("<pre class=\"diff\">").count(), 3);
    has("<div class=\"result error\"><div class=\"tool-head\"><span>Error</span></div>");
    has("<p>edited <code>/src/rowdy/src/row.rs</code></p>");
    // Write shows the file.
    has("<span class=\"tool-name\">Write</span><code>/src/rowdy/CHANGES.md</code></div><pre class=\"file\">\n# Changes\n");
    // The system message, dimmed; the damaged step and the unknown block.
    has("<section class=\"system\" id=\"m7\"><div class=\"who\"><span class=\"role\">System</span><span class=\"mono\">CHECKPOINT</span><span>step 7</span>");
    has("<dt>conversation_title</dt><dd>Rename parse_row</dd>");
    has("<section class=\"turn assistant damaged\" id=\"m10\">");
    has("<p class=\"warning\">Damaged step: only the part that could be read is shown.</p>");
    has("<summary>hologram block</summary>");
    assert_only_safe_markup(&html, "tour");
}

#[test]
fn hostile_text_stays_text_everywhere() {
    let html = render(&[], &hostile());
    assert_only_safe_markup(&html, "hostile page");
    let lower = html.to_ascii_lowercase();
    for needle in [
        "<script",
        "<img src=x",
        "<svg",
        "<iframe",
        "<base",
        "<link",
        "<textarea",
        "<meta http-equiv=\"refresh\"",
    ] {
        assert!(
            !lower.contains(needle),
            "{needle:?} reached the page as markup"
        );
    }
    // The payloads are all there, as text.
    assert!(html.contains("&lt;script&gt;document.body.setAttribute(&#39;data-pwned&#39;,&#39;script&#39;)&lt;/script&gt;")
        || html.contains("&lt;script>document.body.setAttribute('data-pwned','script')&lt;/script>"));
    assert!(html.contains("<span class=\"removed-link\" title=\"link removed: javascript:document.body.setAttribute(&#39;data-pwned&#39;,&#39;link&#39;)\">click me</span>"));
    // A media type or data that would break out of the src attribute is
    // not inlined; the one image is the result's SVG, which an <img> cannot
    // let run.
    assert_eq!(html.matches("<img").count(), 1);
    assert!(html.contains(
        "<img alt=\"attached image (image/svg+xml)\" src=\"data:image/svg+xml;base64,PHN2Zz4=\">"
    ));
    // The title, escaped in <title> and <h1>.
    assert!(html.contains("<title>&lt;img src=x onerror=\"document.body.setAttribute('data-pwned','img')\"&gt; title &lt;/title&gt;&lt;script&gt;"));
}

#[test]
fn markdown_output_renders_to_safe_html() {
    for (name, stream) in [("tour", tour()), ("hostile", hostile())] {
        let md = render(&["--format", "markdown"], &stream);
        let mut html = String::new();
        let options =
            pulldown_cmark::Options::ENABLE_TABLES | pulldown_cmark::Options::ENABLE_STRIKETHROUGH;
        pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new_ext(&md, options));
        // Alignment styles are the Markdown renderer's own, from `|:--|`.
        let html = html
            .replace(" style=\"text-align: left\"", "")
            .replace(" style=\"text-align: right\"", "");
        assert_only_safe_markup(&html, name);
    }
    let md = render(&["--format", "markdown"], &tour());
    assert!(
        md.starts_with("# Rename parse\\_row to read\\_row\n"),
        "{md}"
    );
    assert!(md.contains("```diff\n--- /src/rowdy/src/row.rs\n+++ /src/rowdy/src/row.rs\n@@ -1,5 +1,5 @@\n use std::io;\n \n-pub fn parse_row"));
    assert!(
        md.contains("**Tool call: Write** · /src/rowdy/CHANGES.md\n\n```md\n# Changes\n\n- `parse_row` is now `read_row`.\n```\n"),
        "{md}"
    );
    assert!(md.contains("![attached image (image/png)](data:image/png;base64,"));
}

#[test]
fn out_writes_pages_and_an_index_that_later_runs_keep() {
    let dir = Scratch::new("render-out");
    let out = dir.join("site");
    let out = out.to_str().unwrap();
    render(&["--out", out], &tour());
    let second = tour()
        .replace(TOUR, "later-one")
        .replace("2026-08-10T09:00:25Z", "2026-08-11T09:00:25Z");
    render(&["--out", out], &second);
    let mut names: Vec<_> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "feature-tour.html",
            "index.html",
            "index.ndjson",
            "later-one.html"
        ]
    );
    let index = std::fs::read_to_string(format!("{out}/index.html")).unwrap();
    let later = index
        .find("href=\"later-one.html\"")
        .expect("later-one listed");
    let tour_at = index
        .find("href=\"feature-tour.html\"")
        .expect("the first run's page listed");
    assert!(later < tour_at, "newest first");
    assert!(index.contains("<td class=\"num\">5</td><td class=\"num\">5,020</td>"));
    let data = std::fs::read_to_string(format!("{out}/index.ndjson")).unwrap();
    let first: serde_json::Value = serde_json::from_str(data.lines().next().unwrap()).unwrap();
    assert_eq!(first["id"], "later-one");
    assert_eq!(first["turns"], 5);
    assert_eq!(first["usage"]["input_tokens"], 4300);
    let page = std::fs::read_to_string(format!("{out}/later-one.html")).unwrap();
    assert!(
        page.contains("<nav class=\"back\"><a href=\"index.html\">← All conversations</a></nav>")
    );
    assert!(page.ends_with("</body>\n</html>\n"));
    // A page that disappeared leaves the index on the next run.
    std::fs::remove_file(format!("{out}/feature-tour.html")).unwrap();
    render(&["--out", out], "");
    let index = std::fs::read_to_string(format!("{out}/index.html")).unwrap();
    assert!(!index.contains("feature-tour.html") && index.contains("later-one.html"));
    // Markdown pages get a Markdown index.
    let md = dir.join("md");
    render(
        &["--format", "markdown", "--out", md.to_str().unwrap()],
        &hostile(),
    );
    let index = std::fs::read_to_string(md.join("index.md")).unwrap();
    assert!(
        index.contains("](hostile%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E.md)"),
        "{index}"
    );
}

fn conversation(id: &str, text: &str) -> String {
    [
        message(
            id,
            "user",
            "2026-08-10T09:00:01Z",
            json!([{"type": "text", "text": text}]),
        ),
        meta(id, text, "/w", "main", "m"),
    ]
    .into_iter()
    .map(line)
    .collect()
}

/// With `--all`, a bookkeeping step can fall between a call and its
/// result; the call still shows its result, and the system message follows.
#[test]
fn a_system_message_between_a_call_and_its_result_does_not_part_them() {
    let c = "c-boundary";
    let stream: String = [
        message(c, "user", "2026-08-10T09:00:01Z", json!([{"type": "text", "text": "list it"}])),
        message(
            c,
            "assistant",
            "2026-08-10T09:00:02Z",
            json!([{"type": "tool_use", "id": "call-1", "name": "Bash", "input": {"command": "ls /srv/data"}}]),
        ),
        json!({"conversation": c, "kind": "message", "role": "system", "step_type": "TASK_BOUNDARY", "idx": 3,
               "timestamp": "2026-08-10T09:00:03Z",
               "content": [{"type": "text", "name": "task_name", "text": "Listing"}]}),
        message(
            c,
            "user",
            "2026-08-10T09:00:04Z",
            json!([{"type": "tool_result", "tool_use_id": "call-1", "content": "Cargo.toml"}]),
        ),
        meta(c, "list it", "/w", "main", "m"),
    ]
    .into_iter()
    .map(line)
    .collect();
    for (format, no_result) in [
        ("html", "No result recorded"),
        ("markdown", "*No result recorded.*"),
    ] {
        let page = render(&["--format", format], &stream);
        assert!(
            !page.contains(no_result),
            "{format}: the call lost its result:\n{page}"
        );
        let call = page.find("/srv/data").expect("the call");
        let result = page.find("Cargo.toml").expect("the result");
        let boundary = page.find("Listing").expect("the system message");
        assert!(
            call < result && result < boundary,
            "{format}: order call, result, boundary:\n{page}"
        );
    }
}

/// A text over a megabyte is shown as written, escaped, not read as
/// Markdown (whose parse tree would cost three times its size): a note says
/// so, and neither markup nor Markdown in it takes effect.
#[test]
fn a_huge_text_is_shown_as_written() {
    let c = "c-huge";
    let filler = "row row row\n".repeat(90_000);
    // Read in pieces of 64 KiB: characters, escapes and a run of backticks
    // are cut across pieces somewhere in these.
    let mixed = "é & 😀 <b> \u{1}\"\\ ``````` \t".repeat(4_000);
    let text = format!("**bold** <script>alert(1)</script>\n{filler}{mixed} end");
    assert!(text.len() > 1 << 20);
    let stream: String = [
        message(
            c,
            "user",
            "2026-08-10T09:00:01Z",
            json!([{"type": "text", "text": text}]),
        ),
        meta(c, "huge", "/w", "main", "m"),
    ]
    .into_iter()
    .map(line)
    .collect();
    let html = render(&[], &stream);
    assert!(html.contains("<p class=\"note\">This text is 1.2 MB: shown as it was written, not read as Markdown.</p><div class=\"plain\">**bold** &lt;script&gt;alert(1)&lt;/script&gt;\nrow row row\n"), "{}", &html[..2000.min(html.len())]);
    assert!(!html.contains("<strong>bold</strong>"));
    assert_only_safe_markup(&html, "huge");
    let md = render(&["--format", "markdown"], &stream);
    assert!(md.contains("*This text is 1.2 MB: shown as it was written, not read as Markdown.*\n\n````````\n**bold** <script>alert(1)</script>\nrow row row\n"), "{}", &md[..2000.min(md.len())]);
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(html.contains(&format!("<div class=\"plain\">{escaped}</div>\n")));
    assert!(md.contains(&format!("````````\n{text}\n````````\n\n")));
}

/// Long thinking and long tool output are written a piece at a time too,
/// and come out whole: thinking as written, tool output in HTML previewed
/// and collapsed where a page of it written whole would be.
#[test]
fn long_thinking_and_tool_output_come_out_whole() {
    let c = "c-long";
    let text = format!(
        "{}`` end",
        "é & 😀 <b> \u{1}\"\\ ``````` \t\n".repeat(50_000)
    );
    assert!(text.len() > 1 << 20);
    let stream: String = [
        message(
            c,
            "assistant",
            "2026-08-10T09:00:01Z",
            json!([
                {"type": "thinking", "thinking": text},
                {"type": "tool_use", "id": "a", "name": "Bash", "input": {}},
                {"type": "tool_use", "id": "b", "name": "Bash", "input": {}},
                {"type": "tool_use", "id": "c", "name": "Write", "input": {"file_path": "/w/a.txt", "content": text}},
            ]),
        ),
        message(
            c,
            "user",
            "2026-08-10T09:00:02Z",
            json!([
                {"type": "tool_result", "tool_use_id": "a", "content": text},
                {"type": "tool_result", "tool_use_id": "b", "content": [{"type": "text", "text": text}]},
                {"type": "tool_result", "tool_use_id": "c", "content": "written"},
            ]),
        ),
        meta(c, "long", "/w", "main", "m"),
    ]
    .into_iter()
    .map(line)
    .collect();
    let html = render(&[], &stream);
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(html.contains(&format!(
        "<summary>Thinking (1.4 MB)</summary><div class=\"plain\">{escaped}</div></details>"
    )));
    // In a `<pre>`, `>` stays as it is.
    let in_pre = |text: &str| text.replace('&', "&amp;").replace('<', "&lt;");
    let preview_end = text.match_indices('\n').nth(9).unwrap().0 + 1;
    let (preview, rest) = text.split_at(preview_end);
    let preview = format!(
        "<pre>\n{}</pre><details class=\"more\"><summary>49,991 more lines (1.4 MB of 1.4 MB)</summary><pre>\n",
        in_pre(preview)
    );
    let rest = format!("{}</pre></details>", in_pre(rest));
    assert_eq!(html.matches(&preview).count(), 2);
    assert_eq!(html.matches(&rest).count(), 3);
    // A Write's long content, held until its result, is the file.
    let file = preview.replace("<pre>", "<pre class=\"file\">");
    assert!(html.contains(&format!("<code>/w/a.txt</code></div>{file}")));
    let md = render(&["--format", "markdown"], &stream);
    let block = format!("````````text\n{text}\n````````\n\n");
    assert_eq!(md.matches(&block).count(), 2);
    assert!(md.contains(&format!(
        "**Tool call: Write** · /w/a.txt\n\n````````txt\n{text}\n````````\n\n**Result**"
    )));
    assert!(md.contains(&format!(
        "> **Thinking**\n>\n> *This text is 1.4 MB: shown as it was written, not read as Markdown.*\n\n````````\n{text}\n````````\n\n"
    )));
}

/// A tool call whose input is JSON over a megabyte, a block of a type
/// agy-render does not know as long, and a system message as long are
/// made and written a piece at a time (issue 26), and come out as the
/// whole would: the input and the block indented as serde_json indents
/// them, the system message's text shown as written in Markdown too. The
/// call with no result is held (in a temporary spool) to the end.
#[test]
fn long_json_and_long_system_messages_come_out_whole() {
    let c = "c-json";
    let text = format!(
        "{}`` end",
        "é & 😀 <b> \u{1}\"\\ ``````` \t\n".repeat(50_000)
    );
    let input = json!({"command": text, "env": {"A": "1", "list": [1, 2, {}]}, "timeout": 600});
    let block = json!({"type": "hologram", "data": {"text": text, "n": [1, 2, 3]}});
    let stream: String = [
        message(
            c,
            "assistant",
            "2026-08-10T09:00:01Z",
            json!([
                {"type": "tool_use", "id": "a", "name": "Bash", "input": input},
                block,
            ]),
        ),
        message(
            c,
            "user",
            "2026-08-10T09:00:02Z",
            json!([{"type": "tool_result", "tool_use_id": "a", "content": "done"}]),
        ),
        json!({"conversation": c, "kind": "message", "role": "system", "step_type": "SYSTEM_MESSAGE", "idx": 3,
               "timestamp": "2026-08-10T09:00:03Z",
               "content": [{"type": "text", "field": "note", "text": text}]}),
        message(
            c,
            "assistant",
            "2026-08-10T09:00:04Z",
            json!([{"type": "tool_use", "id": "b", "name": "Bash", "input": input}]),
        ),
        meta(c, "json", "/w", "main", "m"),
    ]
    .into_iter()
    .map(line)
    .collect();
    let in_pre = |text: &str| text.replace('&', "&amp;").replace('<', "&lt;");
    let input_text = serde_json::to_string_pretty(&input).unwrap();
    let block_text = serde_json::to_string_pretty(&block).unwrap();
    assert!(input_text.len() > 1 << 20);
    let html = render(&[], &stream);
    // The preview ends after ten lines; the rest follows, escaped.
    let tail = |text: &str| {
        let at = text.match_indices('\n').nth(9).map_or(0, |(at, _)| at + 1);
        in_pre(&text[at..])
    };
    assert!(html.contains(&format!(
        "<pre class=\"json\">\n{}",
        in_pre(&input_text[..12])
    )));
    assert_eq!(
        html.matches(&tail(&input_text)).count(),
        2,
        "both calls, whole"
    );
    assert!(html.contains(&tail(&block_text)));
    assert!(html.contains("<summary>hologram block</summary>"));
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(html.contains(&format!("<dt>note</dt><dd>{escaped}</dd>")));
    assert!(html.contains("No result recorded"));
    assert_only_safe_markup(&html, "long json");
    let md = render(&["--format", "markdown"], &stream);
    let fence = "````````";
    assert_eq!(
        md.matches(&format!("{fence}json\n{input_text}\n{fence}\n\n"))
            .count(),
        2
    );
    assert!(md.contains(&format!(
        "*hologram block:*\n\n{fence}json\n{block_text}\n{fence}\n\n"
    )));
    assert!(md.contains(&format!(
        "> **note:**\n>\n> *This text is 1.4 MB: shown as it was written, not read as Markdown.*\n\n{fence}\n{text}\n{fence}\n\n"
    )));
}

#[test]
fn a_bad_conversation_does_not_stop_the_others() {
    let dir = Scratch::new("render-batch");
    let out = dir.join("site");
    // b has an unreadable line; "a/b" cannot be a file name; d comes again
    // after it ended.
    let stream = format!(
        "{}{}not json at all\n{}{}{}{}",
        conversation("a", "first"),
        &conversation("b", "second")[..conversation("b", "second").find('\n').unwrap() + 1],
        line(meta("b", "second", "/w", "main", "m")),
        conversation("a/b", "slash"),
        conversation("d", "fourth"),
        conversation("d", "fourth again"),
    );
    let result = run(
        "agy-render",
        &["--out", out.to_str().unwrap()],
        stream.as_bytes(),
    );
    assert_eq!(result.status.code(), Some(1), "{}", stderr(&result));
    let err = stderr(&result);
    assert!(err.contains("stdin:4: not a message record"), "{err}");
    assert!(
        err.contains("conversation a/b: conversation id \"a/b\" contains a path separator"),
        "{err}"
    );
    assert!(
        err.contains("stdin:10: conversation d comes again after its meta record"),
        "{err}"
    );
    assert!(err.contains("agy-render: 3 of 5 conversations failed; 1 input lines could not be read (each named above)"), "{err}");
    for page in ["a.html", "b.html", "d.html"] {
        assert!(out.join(page).is_file(), "{page} written");
    }
    let b = std::fs::read_to_string(out.join("b.html")).unwrap();
    assert!(
        b.contains("stdin:4: this input line could not be read"),
        "the bad line is marked where it was"
    );
    let d = std::fs::read_to_string(out.join("d.html")).unwrap();
    assert!(d.contains("fourth") && !d.contains("fourth again"));
    // To stdout the same stream writes everything it can, and says so.
    let result = run("agy-render", &[], stream.as_bytes());
    assert_eq!(result.status.code(), Some(1));
    let html = String::from_utf8(result.stdout).unwrap();
    assert_eq!(html.matches("<article class=\"conversation\">").count(), 4);
}

#[test]
fn a_conversation_named_index_cannot_take_the_index_page() {
    let dir = Scratch::new("render-index-id");
    let out = dir.join("site");
    let stream = format!(
        "{}{}",
        conversation("index", "sneaky"),
        conversation("ok", "fine")
    );
    let result = run(
        "agy-render",
        &["--out", out.to_str().unwrap()],
        stream.as_bytes(),
    );
    assert_eq!(result.status.code(), Some(1));
    assert!(stderr(&result).contains("conversation index: conversation id \"index\" would take the index's file name; not written"));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("<h1>Conversations</h1>") && index.contains("ok.html"));
}

#[test]
fn the_same_stream_gives_the_same_bytes() {
    let stream = format!("{}{}", tour(), hostile());
    let first = run_ok("agy-render", &[], stream.as_bytes());
    let second = run_ok("agy-render", &[], stream.as_bytes());
    assert!(first == second);
    let md1 = run_ok("agy-render", &["-f", "markdown"], stream.as_bytes());
    let md2 = run_ok("agy-render", &["-f", "markdown"], stream.as_bytes());
    assert!(md1 == md2);
}

#[test]
fn a_body_larger_than_the_memory_spool_comes_through_whole() {
    let output: String = (0..200_000).map(|i| format!("output line {i}\n")).collect();
    let stream = [
        assistant(
            "big",
            "2026-08-10T09:00:01Z",
            "m",
            (1, 1),
            json!([{"type": "tool_use", "id": "c", "name": "Bash", "input": {"command": "seq"}}]),
        ),
        result("big", "2026-08-10T09:00:02Z", "c", json!(output), false),
        meta("big", "big", "/w", "main", "m"),
    ]
    .into_iter()
    .map(line)
    .collect::<String>();
    let html = render(&[], &stream);
    assert!(html.contains("output line 0\n"));
    assert!(html.contains("output line 199999\n</pre></details>"));
    assert!(html.contains("199,990 more lines"));
    assert!(
        html.find("<h1>big</h1>").unwrap() < html.find("output line 0").unwrap(),
        "the header comes first"
    );
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let stream: String = (0..300)
        .map(|i| tour().replace(TOUR, &format!("c{i}")))
        .collect();
    let mut child = Command::new(exe("agy-render"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = input.write_all(stream.as_bytes());
    });
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // Dropping stdout closes the pipe.
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn empty_input_and_usage() {
    let html = render(&[], "");
    assert!(html.contains("No conversations in the input."));
    assert!(html.starts_with("<!DOCTYPE html>"));
    let bad = run("agy-render", &["--format", "pdf"], b"");
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("unknown format \"pdf\""));
    assert!(String::from_utf8(run_ok("agy-render", &["--help"], b""))
        .unwrap()
        .contains("--out DIR"));
    assert!(String::from_utf8(run_ok("agy-render", &["--version"], b""))
        .unwrap()
        .starts_with("agy-render "));
}

#[test]
fn the_sample_store_renders_through_the_pipeline() {
    let dir = Scratch::new("render-sample");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sample");
    let rows = run_ok("agy-dump", &[sample], b"");
    let messages = run_ok("agy-decode", &["--all"], &rows);
    let out = dir.join("site");
    run_ok("agy-render", &["--out", out.to_str().unwrap()], &messages);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for title in [
        "Fix surprising key in error.rs",
        "Fix slow record in index.rs",
        "Fix quadratic page in merge.rs",
    ] {
        assert!(index.contains(title), "{title}");
    }
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "html") {
            assert_only_safe_markup(
                &std::fs::read_to_string(&path).unwrap(),
                &path.display().to_string(),
            );
        }
    }
}

/// A step agy-decode reads only in part (a planner reply cut short, as a
/// real agy 1.1.9 store had one) is marked on the page, with what could be
/// read of it.
#[test]
fn a_damaged_step_from_agy_decode_is_marked() {
    use support::pb::Msg;
    use support::steps::{metadata, row, DONE, PLANNER_RESPONSE};
    let text = "The fix is in the reader: it must keep the partial record. ".repeat(360);
    let reply = Msg::new().str(1, &text).str(8, &text);
    let reply = Msg(reply.0[..21_594].to_vec());
    let meta = metadata(1_786_353_243, 2);
    let full = Msg::new()
        .varint(1, PLANNER_RESPONSE)
        .varint(4, DONE)
        .msg(5, meta.clone())
        .bytes(20, &reply.0);
    let cut = Msg(full.0[..full.0.len() - 21_594 + 861].to_vec());
    let rows = format!(
        "{}\n{}\n",
        r#"{"conversation":"c1","kind":"db","user_version":1}"#,
        row("c1", 7, PLANNER_RESPONSE, DONE, &meta, &cut)
    );
    let decoded = run("agy-decode", &[], rows.as_bytes());
    assert!(stderr(&decoded).contains("damaged"), "{}", stderr(&decoded));
    let html = render(&[], std::str::from_utf8(&decoded.stdout).unwrap());
    assert!(
        html.contains("<section class=\"turn assistant damaged\" id=\"m1\">"),
        "{html}"
    );
    assert!(html.contains("<span>step 7</span>"));
    assert!(html.contains("Damaged step: only the part that could be read is shown."));
    assert!(html.contains("<p>The fix is in the reader: it must keep the partial record."));
    assert!(html.contains("1 damaged step is marked below"));
}
