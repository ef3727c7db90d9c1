//! Flags several binaries share: the data root's surface, the message
//! stream's bookkeeping steps, and the four flags named --format.

use lexopt::ValueExt;

use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};
use crate::format::Format;
use crate::store::root::Lane;

pub(super) static FLAGS: &[Flag] = &[
    // The data root's surface, read by agy-dump and written by agy-pack.
    Flag {
        long: "lane",
        short: None,
        kind: Kind::Value {
            name: "LANE",
            complete: Complete::Choices(&["cli", "acp", "desktop"]),
            update: |args, value| {
                args.lane = Lane::parse(&value.string()?)?;
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Dump, Bin::Pack, Bin::Ls, Bin::Usage],
            help: "default root of this agy surface: cli (default), acp or desktop",
            man: r#"Which surface's default data root to use:
.B cli
(the default,
.IR antigravity-cli ),
.B acp
.RI ( antigravity-acp ,
the ACP server) or
.B desktop
.RI ( antigravity ,
the desktop app, Antigravity 2.x).
"#,
        }],
    },
    // The message stream's bookkeeping steps, on either side of it:
    // agy-decode writes them as system messages, agy-encode is told its
    // input has them all.
    Flag {
        long: "all",
        short: Some('a'),
        kind: Kind::Switch(|args| args.all = true),
        docs: &[
            Doc {
                bins: &[Bin::Decode],
                help: "also write bookkeeping steps (checkpoints, notices, task boundaries, \
                       errors, ...) and step kinds nothing here understands as \"system\" \
                       messages",
                man: r#"Also write the bookkeeping steps (checkpoints, conversation history, system
and ephemeral messages, task boundaries, notices to the user, error messages,
directory rules) and every step kind nothing here understands, as
.B system
messages.
Without it the output is the same as that of earlier versions.
"#,
            },
            Doc {
                bins: &[Bin::Encode],
                help: "(with --onto) the messages were decoded with --all, so a bookkeeping \
                       step no message names was deleted",
                man: r#"With
.BR \-\-onto :
the messages were decoded with
.BR "agy\-decode \-\-all" ,
so a bookkeeping step that no message names was deleted.
Without it that is learnt from the first system message of a conversation,
and bookkeeping steps before it are kept.
"#,
            },
        ],
    },
    // Four flags are named --format: what agy-decode writes, what
    // agy-encode reads, and what agy-render and agy-ls write.
    Flag {
        long: "format",
        short: None,
        kind: Kind::Value {
            name: "FORMAT",
            complete: Complete::Choices(&[
                "messages",
                "anthropic",
                "claude-code",
                "codex",
                "gemini-cli",
                "opencode",
            ]),
            update: |args, value| {
                let offered: Vec<Format> = Format::all()
                    .filter(|f| *f == Format::Messages || f.writer().is_some())
                    .collect();
                args.format = Format::parse(&value.string()?, &offered)?;
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Decode],
            help: "messages (the default), anthropic (one Messages API request per \
                   conversation), claude-code (Claude Code session lines), codex (Codex \
                   CLI rollout lines), gemini-cli (Gemini CLI session lines) or opencode \
                   (what opencode import takes)",
            man: r#".B messages
(the default) writes the message stream below.
.B anthropic
writes one Messages API request per conversation,
.B claude\-code
a Claude Code session,
.B codex
a Codex CLI session (rollout),
.B gemini\-cli
a Gemini CLI session, and
.B opencode
an OpenCode session as
.B opencode import
takes it; see
.BR "OTHER FORMATS" .
"#,
        }],
    },
    Flag {
        long: "format",
        short: None,
        kind: Kind::Value {
            name: "FORMAT",
            complete: Complete::Choices(&[
                "messages",
                "claude-code",
                "codex",
                "gemini-cli",
                "opencode",
            ]),
            update: |args, value| {
                let offered: Vec<Format> = Format::all()
                    .filter(|f| *f == Format::Messages || f.reader().is_some())
                    .collect();
                args.format = Format::parse(&value.string()?, &offered)?;
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Encode],
            help: "what FILE holds: messages (the default), claude-code (Claude Code \
                   session files), codex (Codex CLI rollout files), gemini-cli (Gemini CLI \
                   session files) or opencode (what opencode export prints), one session each",
            man: r#"What each
.I FILE
holds:
.B messages
(the default),
.B claude\-code
for Claude Code session files (see
.BR "CLAUDE CODE SESSIONS" ),
.B codex
for Codex CLI rollout files (see
.BR "CODEX SESSIONS" ),
.B gemini\-cli
for Gemini CLI session files (see
.BR "GEMINI CLI SESSIONS" ),
or
.B opencode
for what
.B opencode export
prints (see
.BR "OPENCODE SESSIONS" ),
one session each.
"#,
        }],
    },
    Flag {
        long: "format",
        short: Some('f'),
        kind: Kind::Value {
            name: "FORMAT",
            complete: Complete::Choices(&["html", "markdown", "md"]),
            update: |args, value| {
                args.render_format = crate::render::Format::parse(&value.string()?)?;
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Render],
            help: "html (default) or markdown",
            man: r#".B html
(the default) or
.B markdown
.RB ( md ).
"#,
        }],
    },
    Flag {
        long: "format",
        short: None,
        kind: Kind::Value {
            name: "FORMAT",
            complete: Complete::Choices(&["json", "table"]),
            update: |args, value| {
                args.list_format = crate::list::Format::parse(&value.string()?)?;
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Ls],
            help: "json (the default: one object a line) or table (aligned columns for people)",
            man: r#".B json
(the default) writes one JSON object a line, described below;
.B table
writes aligned columns with a header line: last activity, step count,
index, id, directory and title.
"#,
        }],
    },
];
