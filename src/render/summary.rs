//! What a conversation's header says: the meta record's facts and the
//! totals counted over its messages.

use std::ops::ControlFlow;

use super::stream::{Block, Record, Role, Tokens};
use super::text::{LongText, Text};
use crate::stream::message::{title_from_text, TITLE_CHARS};
use crate::time::Timestamp;

/// The header of one conversation, filled in as its records are read.
#[derive(Debug, Default)]
pub struct Summary {
    /// The conversation id of the stream.
    pub id: String,
    pub meta_seen: bool,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub branch: Option<String>,
    pub parent: Option<String>,
    pub forked_from: Option<String>,
    /// Models in the order they first answered; the meta record's model
    /// when no message names one.
    pub models: Vec<String>,
    /// The meta record's creation time.
    pub created: Option<Timestamp>,
    /// The earliest and latest message times.
    pub first: Option<Timestamp>,
    pub last: Option<Timestamp>,
    pub tokens: Tokens,
    pub user_turns: u64,
    pub assistant_turns: u64,
    pub tool_calls: u64,
    pub tool_errors: u64,
    pub system_messages: u64,
    pub damaged: u64,
    /// Input lines of this conversation that could not be read.
    pub unreadable: u64,
    /// The first thing the user typed, for a title when the meta record
    /// has none.
    pub first_user_text: Option<String>,
}

impl Summary {
    pub fn new(id: &str) -> Summary {
        Summary {
            id: id.to_string(),
            ..Summary::default()
        }
    }

    /// Counts one message record, whose blocks are `blocks`.
    pub fn message(&mut self, record: &Record, blocks: &[Block]) {
        if let Some(time) = record.message_time() {
            self.first = Some(self.first.map_or(time, |f| f.min(time)));
            self.last = Some(self.last.map_or(time, |l| l.max(time)));
        }
        if record.damage().is_some() {
            self.damaged += 1;
        }
        match record.role() {
            Some(Role::Assistant) => {
                self.assistant_turns += 1;
                self.tokens.add(record.tokens());
                if let Some(model) = record.model() {
                    if !self.models.iter().any(|m| *m == model) {
                        self.models.push(model.into_owned());
                    }
                }
                self.tool_calls += blocks
                    .iter()
                    .filter(|b| matches!(b, Block::ToolUse { .. }))
                    .count() as u64;
            }
            Some(Role::User) => {
                let mut turn = false;
                for block in blocks {
                    match block {
                        Block::ToolResult { is_error, .. } => {
                            self.tool_errors += u64::from(*is_error);
                        }
                        Block::Text { text, .. } => {
                            turn = true;
                            if self.first_user_text.is_none() && !record.is_implicit() {
                                self.first_user_text = title(text);
                            }
                        }
                        _ => turn = true,
                    }
                }
                self.user_turns += u64::from(turn);
            }
            Some(Role::System) => self.system_messages += 1,
            None => {}
        }
    }

    /// Takes in the meta record.
    pub fn meta(&mut self, record: &Record) {
        self.meta_seen = true;
        self.title = record
            .title()
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.into_owned());
        self.cwd = record.cwd().map(|t| t.into_owned());
        self.branch = record.git_branch().map(|t| t.into_owned());
        self.parent = record.parent_conversation_id().map(|t| t.into_owned());
        self.forked_from = record.forked_from().map(|t| t.into_owned());
        self.created = record.timestamp().and_then(|t| Timestamp::parse(&t).ok());
        if self.models.is_empty() {
            if let Some(model) = record.model() {
                self.models.push(model.into_owned());
            }
        }
    }

    /// The title to show: the meta record's, else the first user text,
    /// else one made of the id.
    pub fn title(&self) -> String {
        self.title
            .clone()
            .or_else(|| self.first_user_text.clone())
            .unwrap_or_else(|| format!("Conversation {}", self.id))
    }

    /// When the conversation started: the meta record's time, else the
    /// first message's.
    pub fn started(&self) -> Option<Timestamp> {
        match (self.created, self.first) {
            (Some(c), Some(f)) => Some(c.min(f)),
            (c, f) => c.or(f),
        }
    }

    /// User and assistant turns; tool results and system messages are not
    /// turns.
    pub fn turns(&self) -> u64 {
        self.user_turns + self.assistant_turns
    }
}

impl Summary {
    /// `1 user, 4 assistant; 4 tool calls, 1 failed; 1 system message`
    pub fn turns_line(&self) -> String {
        let mut line = format!(
            "{} user, {} assistant; {}",
            grouped(self.user_turns),
            grouped(self.assistant_turns),
            counted(self.tool_calls, "tool call", "tool calls")
        );
        if self.tool_errors > 0 {
            line.push_str(&format!(", {} failed", grouped(self.tool_errors)));
        }
        if self.system_messages > 0 {
            line.push_str("; ");
            line.push_str(&counted(
                self.system_messages,
                "system message",
                "system messages",
            ));
        }
        line
    }

    /// `5,020 in total: input 4,300, output 720, cache write 0, cache read 0`
    pub fn tokens_line(&self) -> String {
        let t = &self.tokens;
        format!(
            "{} in total: input {}, output {}, cache write {}, cache read {}",
            grouped(t.total()),
            grouped(t.input),
            grouped(t.output),
            grouped(t.cache_creation),
            grouped(t.cache_read)
        )
    }

    /// What the header must warn about: no meta record, damaged steps,
    /// lines that could not be read.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if !self.meta_seen {
            warnings.push(String::from(
                "The stream held no meta record for this conversation: title, directory and branch are unknown.",
            ));
        }
        if self.damaged > 0 {
            warnings.push(format!(
                "{} marked below: only what could be read of {} is shown.",
                counted(self.damaged, "damaged step is", "damaged steps are"),
                if self.damaged == 1 { "it" } else { "them" }
            ));
        }
        if self.unreadable > 0 {
            warnings.push(format!(
                "{} could not be read; each is marked where it was.",
                counted(self.unreadable, "input line", "input lines")
            ));
        }
        warnings
    }
}

/// `1 tool call`, `2 tool calls`.
/// The title a user's text gives, trimmed; `None` when it is blank.
fn title(text: &Text) -> Option<String> {
    match text {
        Text::Read(text) => {
            let text = text.trim();
            (!text.is_empty()).then(|| title_from_text(text))
        }
        Text::Long(long) => long_title(long),
    }
}

/// [`title_from_text`] of a long text, trimmed, reading only as far as the
/// title goes: the first line after the leading whitespace, its first
/// [`TITLE_CHARS`] characters, trimmed at the end unless the line goes on
/// past them with more than whitespace.
fn long_title(text: &LongText) -> Option<String> {
    let mut title = String::new();
    let mut chars = 0;
    let mut started = false;
    let mut goes_on = false;
    text.pieces(|piece| {
        for c in piece.chars() {
            if !started && c.is_whitespace() {
                continue;
            }
            started = true;
            if c == '\n' {
                return ControlFlow::Break(());
            }
            if chars < TITLE_CHARS {
                title.push(c);
                chars += 1;
            } else if !c.is_whitespace() {
                goes_on = true;
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    if !goes_on {
        title.truncate(title.trim_end().len());
    }
    started.then_some(title)
}

pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

/// `2026-08-10 09:09:39 UTC`: to the second, for people.
pub fn display_time(time: Timestamp) -> String {
    match time.format_seconds() {
        Some(text) => format!("{} {} UTC", &text[..10], &text[11..19]),
        None => String::from("?"),
    }
}

/// The full RFC 3339 form, for machines (`datetime` attributes, the index).
pub fn iso_time(time: Timestamp) -> String {
    time.format().unwrap_or_default()
}

/// `12,345`: digits grouped by three, the same everywhere.
pub fn grouped(n: u64) -> String {
    let mut out = Vec::with_capacity(26);
    write_grouped(&mut out, n);
    String::from_utf8(out).expect("digits and commas")
}

/// [`grouped`] written straight into `out`: a page writes one or two for
/// each of tens of thousands of turns.
pub fn write_grouped(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut rest = n;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let digits = &digits[start..];
    for (i, &digit) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(b',');
        }
        out.push(digit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::markdown::MARKDOWN_LIMIT;

    #[test]
    fn a_long_text_gives_the_title_its_whole_text_would() {
        let pad = |c: &str| c.repeat(MARKDOWN_LIMIT + 1);
        let x80 = "x".repeat(TITLE_CHARS);
        for text in [
            format!("{}  Fix the parser  \r\nplease", pad(" \n")),
            format!("Fix the parser{}", pad(" ")),
            format!("{x80}   {}\n", pad("y")),
            format!("{x80}{}z", pad(" ")),
            format!("{x80}{}\nz", pad(" ")),
            format!("é😀 a\rb \u{2028}c{}", pad("\t")),
            pad(" \n\t"),
        ] {
            let Text::Long(long) = Text::of_str(&text) else {
                panic!("a text over the limit is long");
            };
            let whole = Some(text.trim())
                .filter(|t| !t.is_empty())
                .map(title_from_text);
            assert_eq!(long_title(&long), whole);
        }
    }

    fn count(s: &mut Summary, line: &str) {
        let record = Record::parse(line.as_bytes()).unwrap();
        s.message(&record, &record.blocks());
    }

    #[test]
    fn totals_and_times_come_from_the_messages() {
        let mut s = Summary::new("c");
        count(
            &mut s,
            r#"{"conversation":"c","kind":"message","role":"user","timestamp":"2026-08-10T09:00:00.5Z","content":[{"type":"text","text":"  Fix the parser\nplease"}]}"#,
        );
        count(
            &mut s,
            r#"{"conversation":"c","kind":"message","role":"assistant","timestamp":"2026-08-10T09:00:01Z","model":"m1","usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":100},"content":[{"type":"tool_use","id":"a","name":"Bash","input":{}}]}"#,
        );
        count(
            &mut s,
            r#"{"conversation":"c","kind":"message","role":"user","timestamp":"2026-08-10T09:00:00Z","content":[{"type":"tool_result","tool_use_id":"a","content":"x","is_error":true}]}"#,
        );
        count(
            &mut s,
            r#"{"conversation":"c","kind":"message","role":"assistant","timestamp":"2026-08-10T09:00:03Z","model":"m2","usage":{"input_tokens":1},"damaged":true,"content":[]}"#,
        );
        assert_eq!(s.turns(), 3);
        assert_eq!((s.tool_calls, s.tool_errors, s.damaged), (1, 1, 1));
        assert_eq!(s.models, ["m1", "m2"]);
        assert_eq!(s.tokens.total(), 113);
        assert_eq!(
            s.first.map(display_time).as_deref(),
            Some("2026-08-10 09:00:00 UTC")
        );
        assert_eq!(
            s.last.map(iso_time).as_deref(),
            Some("2026-08-10T09:00:03Z")
        );
        assert_eq!(s.title(), "Fix the parser");
        let meta = r#"{"conversation":"c","kind":"meta","title":"T","model":"m3","timestamp":"2026-08-10T08:59:59Z"}"#;
        s.meta(&Record::parse(meta.as_bytes()).unwrap());
        assert_eq!(s.title(), "T");
        assert_eq!(s.models, ["m1", "m2"]);
        assert_eq!(
            s.started().map(iso_time).as_deref(),
            Some("2026-08-10T08:59:59Z")
        );
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
        // Every length of number, against the plain reading of the rule.
        let mut n = 1u64;
        for _ in 0..19 {
            for m in [n, n * 9 / 7 + 1, n.saturating_mul(10) - 1] {
                let digits = m.to_string();
                let mut want = String::new();
                for (i, c) in digits.chars().enumerate() {
                    if i > 0 && (digits.len() - i) % 3 == 0 {
                        want.push(',');
                    }
                    want.push(c);
                }
                assert_eq!(grouped(m), want, "{m}");
            }
            n *= 10;
        }
    }
}
