//! The sequencing rules, case by case.

use super::*;
use crate::stream::message::{self, ImageSource, ResultContent, ToolInput};
use serde_json::json;
use std::borrow::Cow;

fn msg(role: Role, content: Vec<Block<'static>>) -> Msg {
    Msg {
        role,
        content,
        ..Msg::default()
    }
}

fn call(id: &str) -> Block<'static> {
    Block::ToolUse {
        id: Cow::Owned(id.into()),
        name: "Bash".into(),
        input: ToolInput::Object(vec![("command".into(), json!("ls"))]),
        signature: Some("00ff".into()),
    }
}

fn result(id: &str, text: &str) -> Block<'static> {
    Block::ToolResult {
        tool_use_id: Cow::Owned(id.into()),
        content: ResultContent::Text(Cow::Owned(text.into())),
        is_error: false,
    }
}

fn content(turn: &Turn) -> Value {
    Value::Array(turn.clone().into_content())
}

fn rules() -> Rules {
    Rules {
        thinking: Thinking::Drop,
        keep_system: true,
        ..Rules::default()
    }
}

#[test]
fn parallel_results_become_one_user_turn_with_results_first() {
    let messages = vec![
        msg(Role::User, vec![Block::text("go".into())]),
        msg(Role::Assistant, vec![call("a"), call("b"), call("c")]),
        msg(Role::User, vec![result("b", "B")]),
        msg(Role::User, vec![Block::text("also this".into())]),
        msg(Role::User, vec![result("a", "A")]),
        msg(Role::Assistant, vec![Block::text("done".into())]),
        msg(Role::User, vec![result("c", "late")]),
    ];
    let mut report = Report::default();
    let s = sequence(messages.clone(), rules(), &mut report);
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    assert_eq!(
        content(&s.turns[2]),
        json!([
            {"type": "tool_result", "tool_use_id": "b", "content": "B"},
            {"type": "tool_result", "tool_use_id": "a", "content": "A"},
            {"type": "tool_result", "tool_use_id": "c", "content": NO_RESULT, "is_error": true},
            {"type": "text", "text": "also this"}
        ])
    );
    assert_eq!(
        content(&s.turns[4]),
        json!([{"type": "text", "text": "Tool result for c: late"}])
    );
    assert_eq!(report.count(change::UNANSWERED), 1);
    assert_eq!(report.count(change::ORPHANS), 1);
    assert_eq!(report.count(change::USER_MERGED), 2);
    assert_eq!(report.count(change::SIGNATURES_DROPPED), 3);
    assert_eq!(s.tool_names, ["Bash"]);
}

#[test]
fn openings_blanks_thinking_and_system() {
    let messages = vec![
        msg(
            Role::Assistant,
            vec![Block::Thinking {
                thinking: "hm".into(),
                signature: Some("sig".into()),
            }],
        ),
        msg(Role::Assistant, vec![Block::text("hello".into())]),
        msg(Role::Assistant, vec![Block::text("again".into())]),
        Msg {
            step_type: Some("CHECKPOINT".into()),
            ..msg(Role::System, vec![Block::text("title".into())])
        },
        msg(Role::User, vec![Block::text(" \n".into())]),
    ];
    let mut report = Report::default();
    let s = sequence(messages.clone(), rules(), &mut report);
    assert_eq!(s.turns.len(), 2);
    assert_eq!(
        content(&s.turns[0]),
        json!([{"type": "text", "text": OPENING}])
    );
    assert_eq!(
        content(&s.turns[1]),
        json!([{"type": "text", "text": "hello"}, {"type": "text", "text": "again"}])
    );
    assert_eq!(s.system, ["[CHECKPOINT] title"]);
    for (what, n) in [
        (change::THINKING_DROPPED, 1),
        (change::EMPTY_MESSAGES, 2),
        (change::ASSISTANT_MERGED, 1),
        (change::BLANK_TEXT, 1),
        (change::OPENING, 1),
        (change::SYSTEM_KEPT, 1),
    ] {
        assert_eq!(report.count(what), n, "{what}");
    }
    let text = sequence(
        messages[..1].to_vec(),
        Rules {
            thinking: Thinking::Text,
            keep_system: false,
            ..Rules::default()
        },
        &mut Report::default(),
    );
    assert_eq!(
        content(&text.turns[1]),
        json!([{"type": "text", "text": "<thinking>\nhm\n</thinking>"}])
    );
}

#[test]
fn ids_names_inputs_and_media_are_made_acceptable() {
    let messages = vec![
        msg(
            Role::User,
            vec![
                Block::Image {
                    source: ImageSource {
                        source_type: "base64".into(),
                        media_type: Some("image/heic".into()),
                        data: Some("AAAA".into()),
                        url: None,
                    },
                },
                Block::Document {
                    source: ImageSource {
                        source_type: "base64".into(),
                        media_type: Some("text/plain".into()),
                        data: Some(message::base64_encode(b"notes").into()),
                        url: None,
                    },
                },
            ],
        ),
        msg(
            Role::Assistant,
            vec![
                Block::ToolUse {
                    id: "call.1".into(),
                    name: "mcp:github/list".into(),
                    input: ToolInput::Other(json!("not json")),
                    signature: None,
                },
                call("call_1"),
            ],
        ),
        msg(
            Role::User,
            vec![Block::ToolResult {
                tool_use_id: "call.1".into(),
                content: ResultContent::Structured(json!({"file": "/a", "edited": true})),
                is_error: true,
            }],
        ),
    ];
    let mut report = Report::default();
    let s = sequence(messages.clone(), rules(), &mut report);
    assert_eq!(
        content(&s.turns[0]),
        json!([
            {"type": "text", "text": "[image not included: image/heic, inline data]"},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}}
        ])
    );
    assert_eq!(
        content(&s.turns[1]),
        json!([
            {"type": "tool_use", "id": "call_1", "name": "mcp_github_list", "input": {"arguments": "not json"}},
            {"type": "tool_use", "id": "call_1_2", "name": "Bash", "input": {"command": "ls"}}
        ])
    );
    assert_eq!(
        content(&s.turns[2]),
        json!([
            {"type": "tool_result", "tool_use_id": "call_1", "content": "{\"file\":\"/a\",\"edited\":true}", "is_error": true},
            {"type": "tool_result", "tool_use_id": "call_1_2", "content": NO_RESULT, "is_error": true}
        ])
    );
    assert_eq!(report.count(change::IDS), 2);
    assert_eq!(report.count(change::NAMES), 1);
    assert_eq!(report.count(change::INPUTS), 1);
    assert_eq!(report.count(change::STRUCTURED), 1);
    assert_eq!(report.count(change::MEDIA_NOTES), 1);
}
