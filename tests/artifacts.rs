//! A conversation's artifacts (its plan, task list and walkthrough, kept as
//! Markdown at the top of its brain directory) are records of their own in
//! agy-decode's stream and a section of their own in agy-render's pages.

mod support;

use std::path::Path;

use support::index::real_conversation;
use support::store::json_lines;
use support::{brain_file, run_ok, Scratch};

const A: &str = "0b6f8a8e-1c2d-4e5f-9a0b-1c2d3e4f5a6b";

/// A real-shaped conversation with artifacts and their companions.
fn root_with_artifacts(root: &Path) {
    real_conversation(root, A, &["Plan the login fix"]).close();
    let files: [(&str, &str); 6] = [
        ("task.md", "# Task\n\n- [x] Find it\n- [ ] Fix it\n"),
        (
            "implementation_plan.md",
            "# Plan\n\n1. Read `login.rs`\n2. Fix the race\n\n<script>alert(1)</script>\n\n[x](javascript:alert(2))\n",
        ),
        (
            "implementation_plan.md.metadata.json",
            r#"{"artifactType":"ARTIFACT_TYPE_IMPLEMENTATION_PLAN","updatedAt":"2026-06-28T10:15:42Z","version":"2"}"#,
        ),
        ("implementation_plan.md.resolved", "# Plan (resolved links)\n"),
        ("implementation_plan.md.resolved.0", "# Plan, first version\n"),
        ("walkthrough.md.resolved", "# Walkthrough\n\nDone.\n"),
    ];
    for (name, text) in files {
        brain_file(root, A, name, text.as_bytes());
    }
}

fn decoded(root: &Path, args: &[&str]) -> Vec<u8> {
    let rows = run_ok("agy-dump", &[root.to_str().unwrap()], b"");
    run_ok("agy-decode", args, &rows)
}

#[test]
fn agy_decode_writes_each_artifact_as_a_record_before_the_meta_record() {
    let s = Scratch::new("artifacts-decode");
    root_with_artifacts(&s.path);
    for args in [&[][..], &["--all"][..]] {
        let records = json_lines(&decoded(&s.path, args));
        let kinds: Vec<&str> = records
            .iter()
            .map(|r| r["kind"].as_str().unwrap())
            .collect();
        let first = kinds.iter().position(|k| *k == "artifact").unwrap();
        assert_eq!(
            &kinds[first..],
            ["artifact", "artifact", "artifact", "meta"]
        );
        assert!(kinds[..first].iter().all(|k| *k == "message"));
        let artifacts = &records[first..first + 3];
        assert_eq!(
            artifacts[0],
            serde_json::json!({
                "conversation": A, "kind": "artifact", "name": "implementation_plan.md",
                "time": "2026-06-28T10:15:42Z",
                "text": "# Plan\n\n1. Read `login.rs`\n2. Fix the race\n\n<script>alert(1)</script>\n\n[x](javascript:alert(2))\n"
            })
        );
        assert_eq!(artifacts[1]["name"], "task.md");
        assert!(artifacts[1].get("time").is_none());
        // Only the resolved copy exists: it stands for the document.
        assert_eq!(artifacts[2]["name"], "walkthrough.md");
        assert_eq!(artifacts[2]["text"], "# Walkthrough\n\nDone.\n");
    }
}

#[test]
fn other_formats_leave_artifacts_out() {
    let s = Scratch::new("artifacts-formats");
    root_with_artifacts(&s.path);
    for format in ["anthropic", "claude-code"] {
        let out = decoded(&s.path, &["--format", format]);
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("Fix the race"), "{format}: {text}");
        assert!(text.contains("Plan the login fix"), "{format}");
    }
}

#[test]
fn agy_render_shows_the_artifacts_in_a_section_of_their_own() {
    let s = Scratch::new("artifacts-render");
    root_with_artifacts(&s.path);
    let messages = decoded(&s.path, &["--all"]);
    let html = String::from_utf8(run_ok("agy-render", &[], &messages)).unwrap();
    let section = html
        .find("<section class=\"artifacts\">")
        .expect("a section");
    // After every turn.
    assert!(html[..section].contains("class=\"turn user\""));
    assert!(!html[section..].contains("class=\"turn "));
    let artifacts = &html[section..];
    for name in ["implementation_plan.md", "task.md", "walkthrough.md"] {
        assert!(artifacts.contains(&format!(">{name}</span>")), "{name}");
    }
    // Rendered as Markdown, through the safe path: no script, no
    // javascript: link.
    assert!(artifacts.contains("<h1>Plan</h1>"), "{artifacts}");
    assert!(artifacts.contains("<li>Fix the race</li>"));
    assert!(artifacts.contains("<time datetime=\"2026-06-28T10:15:42Z\">"));
    assert!(!artifacts.contains("<script>"));
    assert!(!artifacts.contains("href=\"javascript"));

    let md = String::from_utf8(run_ok("agy-render", &["--format", "markdown"], &messages)).unwrap();
    let section = md.find("## Artifacts\n").expect("a section");
    assert!(
        md[section..].contains("### implementation\\_plan.md · 2026-06-28 10:15:42 UTC"),
        "{md}"
    );
    assert!(md[section..].contains("- [x] Find it"));
}
