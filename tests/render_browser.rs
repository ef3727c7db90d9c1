//! agy-render's pages in a real browser: Debian's `chromium`, headless.
//!
//! For each page the browser dumps the DOM it built (`--dump-dom`) and logs
//! every console message to stderr (`--enable-logging=stderr`): a script
//! that ran, an error it threw, and anything the Content-Security-Policy
//! refused all show up there, and our pages have no script, so the test
//! wants no console message at all. The DOM must hold the turns, tool calls
//! and diffs, and no trace of a payload having run. One screenshot per page
//! and theme goes to `target/render-browser/` for a person to look at.
//!
//! Without chromium the tests say so and pass, except under CI (`CI` set),
//! where `.ci/run` installs it and its absence is a failure.

mod render_fixtures;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use render_fixtures::*;
use support::run_ok;

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("AGY_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed; .ci/run installs Debian's chromium for these tests"
        );
        eprintln!(
            "chromium not found: browser tests skipped (install Debian's chromium to run them)"
        );
    }
    found
}

/// Where the pages and screenshots of these tests go: `target/render-browser/NAME`.
fn artifacts(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap();
    let dir = target.join("render-browser").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `file://` URL for `path`, every byte a URL could misread encoded.
fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for b in path.to_str().unwrap().bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'.' | b'_' | b'~') {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

struct Browser {
    exe: PathBuf,
    profile: support::Scratch,
}

struct Load {
    dom: String,
    console: Vec<String>,
}

impl Browser {
    fn new(exe: PathBuf, name: &str) -> Browser {
        Browser {
            exe,
            profile: support::Scratch::new(&format!("chromium-{name}")),
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.exe);
        command.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            // Nothing a page names can be reached, should it try.
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ]);
        command.arg(format!("--user-data-dir={}", self.profile.path.display()));
        command
    }

    /// Loads `page`: the DOM the browser built and the console messages it
    /// logged.
    fn load(&self, page: &Path) -> Load {
        let out = self
            .command()
            .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
            .arg(file_url(page))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "chromium failed on {}: {}",
            page.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let console = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|line| line.contains(":CONSOLE"))
            .map(str::to_string)
            .collect();
        Load {
            dom: String::from_utf8(out.stdout).unwrap(),
            console,
        }
    }

    /// Screenshots of `page` in the light and the dark theme, beside it.
    fn screenshots(&self, page: &Path) {
        let stem = page
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
        for (theme, flags) in [("light", &[][..]), ("dark", &["--force-dark-mode"][..])] {
            let shot = page.with_file_name(format!("{stem}.{theme}.png"));
            let out = self
                .command()
                .args(flags)
                .arg("--window-size=1280,2000")
                .arg(format!("--screenshot={}", shot.display()))
                .arg(file_url(page))
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "screenshot of {}: {}",
                page.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let png = std::fs::read(&shot).unwrap();
            assert!(
                png.starts_with(b"\x89PNG") && png.len() > 1000,
                "{} is a picture",
                shot.display()
            );
        }
    }
}

/// The start tag of the body, as the browser serialises it: a payload that
/// ran would have set an attribute on it.
fn body_tag(dom: &str) -> &str {
    let start = dom.find("<body").expect("a body");
    &dom[start..start + dom[start..].find('>').unwrap() + 1]
}

fn assert_clean(load: &Load, what: &str) {
    assert!(
        load.console.is_empty(),
        "{what}: console messages: {:#?}",
        load.console
    );
    assert_eq!(body_tag(&load.dom), "<body>", "{what}: a payload ran");
    let lower = load.dom.to_ascii_lowercase();
    for element in [
        "<script",
        "<iframe",
        "<svg",
        "<base",
        "<link",
        "<textarea",
        "<object",
        "<embed",
        "<form",
    ] {
        assert!(!lower.contains(element), "{what}: the DOM has {element}");
    }
    assert_eq!(
        lower.matches("<style").count(),
        1,
        "{what}: one stylesheet, ours"
    );
}

/// The harness can fail: it sees a script the policy refused, and a
/// payload that ran on a page without the policy.
#[test]
fn the_harness_sees_refused_and_running_scripts() {
    let Some(exe) = chromium() else { return };
    let browser = Browser::new(exe, "control");
    let dir = artifacts("control");
    let policy = agy_tools::render::csp::policy();
    let refused = dir.join("refused.html");
    std::fs::write(&refused, format!("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\"></head><body>{}</body></html>", PAYLOADS[0])).unwrap();
    let load = browser.load(&refused);
    assert!(
        load.console
            .iter()
            .any(|l| l.contains("Content Security Policy")),
        "{:?}",
        load.console
    );
    assert_eq!(body_tag(&load.dom), "<body>");
    let ran = dir.join("ran.html");
    std::fs::write(
        &ran,
        format!("<!DOCTYPE html><html><body>{}</body></html>", PAYLOADS[1]),
    )
    .unwrap();
    let load = browser.load(&ran);
    assert_eq!(body_tag(&load.dom), "<body data-pwned=\"img\">");
}

#[test]
fn the_sample_store_pages_load_clean() {
    let Some(exe) = chromium() else { return };
    let browser = Browser::new(exe, "sample");
    let dir = artifacts("sample");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sample");
    let rows = run_ok("agy-dump", &[sample], b"");
    let messages = run_ok("agy-decode", &["--all"], &rows);
    run_ok("agy-render", &["--out", dir.to_str().unwrap()], &messages);
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    pages.sort();
    assert_eq!(pages.len(), 4);
    for page in &pages {
        let load = browser.load(page);
        assert_clean(&load, &page.display().to_string());
        if page.ends_with("index.html") {
            assert_eq!(
                load.dom.matches("<tr><td class=\"title\"><a href=").count(),
                3
            );
        } else {
            for part in [
                "class=\"turn user\"",
                "class=\"turn assistant\"",
                "class=\"call\"",
                "class=\"result\"",
                "class=\"system\"",
                "<dl class=\"facts\">",
            ] {
                assert!(load.dom.contains(part), "{}: no {part}", page.display());
            }
        }
        browser.screenshots(page);
    }
    // Conversation 0bb5c533's artifacts (its brain's task list, plan and
    // walkthrough) are a section of their own, their Markdown rendered.
    let page = browser.load(&dir.join("0bb5c533-0f37-4e6b-8578-b94607c75201.html"));
    let at = page
        .dom
        .find("<section class=\"artifacts\">")
        .expect("an artifacts section");
    let artifacts = &page.dom[at..];
    for part in [
        "<h2>Artifacts</h2>",
        ">implementation_plan.md</span>",
        ">task.md</span>",
        ">walkthrough.md</span>",
        "<h1>Implementation plan</h1>",
        "<table>",
        "Find the cause</li>",
        "type=\"checkbox\"",
        "<time datetime=\"2026-08-10T09:10:39Z\">",
    ] {
        assert!(artifacts.contains(part), "no {part} in the artifacts");
    }
    assert!(!page.dom[..at].contains("<h1>Implementation plan</h1>"));
    // The sample's Edit call (conversation 7d254c20) is a diff in the DOM.
    let edit = browser.load(&dir.join("7d254c20-7c6c-4559-88cf-996411ecac8e.html"));
    assert!(edit.dom.contains("<pre class=\"diff\">"));
    assert!(edit.dom.contains("<span class=\"add\">+"));
}

#[test]
fn the_tour_page_loads_clean_with_every_part() {
    let Some(exe) = chromium() else { return };
    let browser = Browser::new(exe, "tour");
    let dir = artifacts("tour");
    run_ok(
        "agy-render",
        &["--out", dir.to_str().unwrap()],
        tour().as_bytes(),
    );
    let page = dir.join("feature-tour.html");
    let load = browser.load(&page);
    assert_clean(&load, "tour");
    for part in [
        "<details class=\"thinking\">",
        "<span class=\"del\">-pub fn parse_row(line: &amp;str) -&gt; Row {</span>",
        "<span class=\"add\">+pub fn read_row(line: &amp;str) -&gt; Row {</span>",
        "<pre class=\"file\">",
        "<div class=\"result error\">",
        "<img alt=\"attached image (image/png)\" src=\"data:image/png;base64,",
        "<section class=\"turn assistant damaged\"",
        "<table>",
    ] {
        assert!(load.dom.contains(part), "no {part}");
    }
    assert_eq!(load.dom.matches("<div class=\"tool\"").count(), 4);
    browser.screenshots(&page);
}

#[test]
fn the_hostile_page_runs_nothing() {
    let Some(exe) = chromium() else { return };
    let browser = Browser::new(exe, "hostile");
    let dir = artifacts("hostile");
    run_ok(
        "agy-render",
        &["--out", dir.to_str().unwrap()],
        hostile().as_bytes(),
    );
    let page = dir.join(format!("{HOSTILE}.html"));
    assert!(page.is_file());
    for page in [page, dir.join("index.html")] {
        let load = browser.load(&page);
        assert_clean(&load, &page.display().to_string());
        // The payloads are in the page, as text.
        assert!(
            load.dom
                .contains("&lt;script&gt;document.body.setAttribute('data-pwned'"),
            "{}",
            page.display()
        );
        browser.screenshots(&page);
    }
}

/// A page long enough that agy-render's spooling thread starts (its body
/// passes the first MiB): from then on every call, and every result of
/// 16 KiB or more, is rendered on that thread (render/body.rs). Each call
/// and result carries a payload and a marker of its own; the browser must
/// run none of them and show every marker as text, in order, so that what
/// the second thread rendered is checked where a reader sees it, not only
/// by its bytes.
#[test]
fn a_long_pages_calls_and_results_from_the_spooling_thread_load_clean() {
    let Some(exe) = chromium() else { return };
    let browser = Browser::new(exe, "long");
    let dir = artifacts("long");
    let c = "long-hostile";
    const ROUNDS: usize = 800;
    let mut stream = line(message(
        c,
        "user",
        "2026-08-10T09:00:00Z",
        json!([{"type": "text", "text": payload()}]),
    ));
    for i in 0..ROUNDS {
        let p = PAYLOADS[i % PAYLOADS.len()];
        let id = format!("call-{i}");
        let input = match i % 4 {
            0 => json!({"command": format!("echo marker-call-{i}: {p}")}),
            1 => {
                // The marker is in the path: a diff shows only the lines
                // near a change.
                json!({"file_path": format!("/w/marker-call-{i}:{p}"), "old_string": p, "new_string": format!("{p}\nmore")})
            }
            2 => {
                json!({"file_path": format!("/w/{i}.md"), "content": format!("marker-call-{i}:\n{p}")})
            }
            _ => json!({p: format!("marker-call-{i}: {p}")}),
        };
        let name = ["Bash", "Edit", "Write", p][i % 4];
        stream += &line(assistant(
            c,
            "2026-08-10T09:00:01Z",
            "gemini-3.9-pro",
            (10, 1),
            json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
        ));
        // Every eighth result is long enough to be deferred too.
        let output = match i % 8 {
            7 => format!(
                "marker-result-{i}: {p}\n{}",
                format!("{p}\n").repeat(20_000 / p.len())
            ),
            _ => format!("marker-result-{i}: {p}"),
        };
        stream += &line(result(
            c,
            "2026-08-10T09:00:02Z",
            &id,
            json!(output),
            i % 5 == 0,
        ));
    }
    stream += &line(meta(c, "long", "/w", "main", "gemini-3.9-pro"));
    run_ok(
        "agy-render",
        &["--out", dir.to_str().unwrap()],
        stream.as_bytes(),
    );
    let page = dir.join(format!("{c}.html"));
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(
        size > 2 << 20,
        "the page ({size} bytes) passes its first MiB well before its end"
    );
    let load = browser.load(&page);
    assert_clean(&load, "long page");
    assert_eq!(load.dom.matches("<div class=\"tool\"").count(), ROUNDS);
    let mut at = 0;
    for i in 0..ROUNDS {
        for marker in [format!("marker-call-{i}:"), format!("marker-result-{i}:")] {
            let found = load.dom[at..]
                .find(&marker)
                .unwrap_or_else(|| panic!("{marker} is not in the DOM after the one before it"));
            at += found + marker.len();
        }
    }
    // The last payloads are in the page, as text.
    let last = PAYLOADS[(ROUNDS - 1) % PAYLOADS.len()];
    let escaped = last
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    assert!(
        load.dom[at..].starts_with(&format!(" {escaped}")),
        "the last result's payload, as text: {}",
        &load.dom[at..at + 200]
    );
}
