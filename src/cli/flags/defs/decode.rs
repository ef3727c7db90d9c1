//! agy-decode's flags: the other agents' formats.

use lexopt::ValueExt;

use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};
use crate::format::Thinking;

pub(super) static FLAGS: &[Flag] = &[
    // agy-decode: the other agents' formats.
    Flag {
        long: "thinking",
        short: None,
        kind: Kind::Value {
            name: "MODE",
            complete: Complete::Choices(&["drop", "text"]),
            update: |args, value| {
                args.thinking = Thinking::parse(&value.string()?)?;
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Decode],
            help: "anthropic, claude-code, codex, gemini-cli, opencode: drop thinking (the \
                   default; codex keeps it for people as events, gemini-cli as thoughts, \
                   neither sent; opencode keeps it as reasoning, which OpenCode may send) \
                   or turn it into text",
            man: r#"With
.BR anthropic ,
.BR claude\-code ,
.BR codex ,
.B gemini\-cli
and
.BR opencode :
.B drop
(the default) leaves thinking out of what the model is sent (with
.BR codex ,
it is kept for people as
.B agent_reasoning
events;
.B gemini\-cli
keeps it as the session's thoughts, which Gemini CLI shows but never sends;
.B opencode
keeps it as the session's reasoning parts, as OpenCode keeps its own, and
OpenCode decides whether to send them);
.B text
turns each thinking block into a text block
.BI <thinking> TEXT </thinking>
at its place.
"#,
        }],
    },
    Flag {
        long: "out-dir",
        short: None,
        kind: Kind::Value {
            name: "DIR",
            complete: Complete::Dir,
            update: |args, value| {
                args.out_dir = Some(value.into());
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Decode],
            help: "claude-code: write DIR/<slug>/<id>.jsonl per conversation (DIR \
                   ~/.claude/projects makes it resumable); codex: write \
                   DIR/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl (DIR ~/.codex); \
                   gemini-cli: DIR/tmp/<slug>/chats/session-<time>-<id>.jsonl and the \
                   project's entry (DIR ~/.gemini); opencode: DIR/<id>.json, for opencode \
                   import; print each path",
            man: r#"With
.BR claude\-code :
write each conversation to
.IB DIR / SLUG / ID .jsonl
instead of standard output, and print the path of each file written.
.B \-\-out\-dir ~/.claude/projects
makes a conversation resumable with
.BI "claude \-\-resume " ID
from its directory.
With
.BR codex :
write each conversation to
.IB DIR /sessions/ YYYY / MM / DD /rollout\- TIME \- ID .jsonl
(dated by its start, in UTC) and print each path;
.B \-\-out\-dir ~/.codex
(Codex's
.BR CODEX_HOME )
makes it resumable with
.BI "codex resume " ID\fR.
With
.BR gemini\-cli :
write each conversation to
.IB DIR /tmp/ SLUG /chats/session\- TIME \- ID8 .jsonl,
registering its project in
.IB DIR /projects.json
(other entries are kept) with its
.B .project_root
markers, and print the path of each file written.
.B \-\-out\-dir ~/.gemini
makes a conversation resumable with
.BI "gemini \-\-resume " ID
from its directory.
With
.BR opencode :
write each conversation to
.IB DIR / ID .json
and print each path;
.BI "opencode import " DIR / ID .json
run in the conversation's directory takes it in.
"#,
        }],
    },
    Flag {
        long: "cwd",
        short: None,
        kind: Kind::Value {
            name: "DIR",
            complete: Complete::Dir,
            update: |args, value| {
                args.cwd = Some(value.string()?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Decode],
            help: "claude-code, codex, gemini-cli, opencode: the project directory of every \
                   session, instead of each conversation's own",
            man: r#"With
.BR claude\-code ,
.BR codex ,
.B gemini\-cli
and
.BR opencode :
the project directory of every session (its
.BR cwd ,
and Claude Code's slug), instead of each conversation's own.
"#,
        }],
    },
];
