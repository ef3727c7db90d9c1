//! The flags of every binary, each defined once.
//!
//! The order here is the order of `--help` and of the man pages: a
//! binary's own flags first, in the order its readers meet them, then the
//! flags every binary has. Texts follow the house style: `help` is a
//! lower-case phrase, `man` is troff with one sentence per line, and
//! `{name}` in `man` stands for the program's name.

use lexopt::ValueExt;

use crate::agy::paths::Dir;
use crate::cli::flags::{Bin, Complete, Doc, Flag, Generate, Kind, Special};
use crate::error::Error;
use crate::format::{Format, Thinking};
use crate::store::dump;
use crate::store::root::Lane;

const ALL_BINS: &[Bin] = &Bin::ALL;

pub static FLAGS: &[Flag] = &[
    // agy-dump: which conversations, and what of them.
    //
    // agy-encode's `--id` (below) is another flag: it names the
    // conversation of records that carry none.
    Flag {
        long: "id",
        short: None,
        kind: Kind::Value {
            name: "ID",
            complete: Complete::Text,
            update: |args, value| {
                args.ids.push(value.string()?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Dump],
            help: "dump only conversation ID (repeatable)",
            man: r#"Dump only the conversation
.IR ID ;
repeatable.
An
.I ID
that matches nothing is an error.
"#,
        }],
    },
    Flag {
        long: "no-brain",
        short: None,
        kind: Kind::Switch(|args| args.no_brain = true),
        docs: &[Doc {
            bins: &[Bin::Dump],
            help: "do not emit brain files",
            man: r#"Do not write
.B file
records.
"#,
        }],
    },
    Flag {
        long: "changed-since",
        short: None,
        kind: Kind::Value {
            name: "STAMP",
            complete: Complete::File,
            update: |args, value| {
                args.changed_since = Some(dump::parse_stamp(&value)?);
                Ok(())
            },
        },
        docs: &[
            Doc {
                bins: &[Bin::Dump],
                help: "only conversations whose db, -wal, .meta or brain files changed after \
                   STAMP: a file's mtime, or an RFC 3339 time",
                man: r#"Dump only the conversations of which something changed after
.IR STAMP :
the database, its
.I \-wal
or
.I .meta
sidecar, or any file or directory under its brain directory (a directory's
time changes when a file in it is added or removed; symbolic links are
looked at, not followed).
.I STAMP
is a file, whose modification time is used, or an RFC 3339 time such as
.BR 2026\-08\-10T09:00:00Z ;
anything else is a usage error, so a mistyped stamp never means everything.
"After" is strictly later, to the nanosecond the file system keeps.
Without
.BR \-\-id ,
an unchanged conversation is not even opened.
"#,
            },
            Doc {
                bins: &[Bin::Ls],
                help: "only conversations whose db, -wal, .meta or brain files changed after \
                   STAMP: a file's mtime, or an RFC 3339 time",
                man: r#"List only the conversations of which something changed after
.IR STAMP ,
as
.BR "agy\-dump \-\-changed\-since"
decides it: the database, its
.I \-wal
or
.I .meta
sidecar, or anything under its brain directory.
.I STAMP
is a file, whose modification time is used, or an RFC 3339 time; anything
else is a usage error.
An unchanged conversation is not opened.
"#,
            },
        ],
    },
    // agy-ls: which conversations, by their project's directory.
    Flag {
        long: "under",
        short: None,
        kind: Kind::Value {
            name: "DIR",
            complete: Complete::Dir,
            update: |args, value| {
                args.under = Some(Dir::parse(&value.string()?)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Ls],
            help: "only conversations whose project is DIR or under it (what agy-edit move DIR \
                   NEW would move)",
            man: r#"List only the conversations whose project is
.I DIR
or a directory under it, component by component
.RI ( /a/b
holds
.I /a/b
and
.IR /a/b/c ,
never
.IR /a/bc ):
those where any place names its project so (the trajectory metadata's
workspace folders, git roots and workspace URIs, the index row's
.BR workspace_uris ,
the ACP sidecar's
.BR cwd ),
in any form agy writes a path in (plain or a
.B file://
URI, a Windows drive in either case).
These are the conversations
.BI "agy\-edit move " "DIR NEW"
moves: see what a move will touch before making it.
"#,
        }],
    },
    // agy-encode: how messages become steps.
    //
    // agy-dump's `--id` (above) is another flag: it selects conversations.
    Flag {
        long: "id",
        short: None,
        kind: Kind::Value {
            name: "ID",
            complete: Complete::Text,
            update: |args, value| {
                let id = value.string()?;
                if id.is_empty() {
                    return Err(Error::usage("--id needs a non-empty conversation id"));
                }
                args.id = Some(id);
                Ok(())
            },
        },
        docs: &[
            Doc {
                bins: &[Bin::Encode],
                help: "conversation id of records that carry no \"conversation\"",
                man: r#"The conversation of records that carry no
.BR conversation .
Without it such a record is an error.
"#,
            },
            Doc {
                bins: &[Bin::Edit],
                help: "fork: the new conversation's id (default: derived from the parent and \
                   the cut)",
                man: r#"For
.BR fork :
the new conversation's id.
Without it the id is derived from the parent's id and the cut, so the same
fork of the same conversation gets the same id, and the output can be
compared with
.BR cmp (1).
"#,
            },
        ],
    },
    Flag {
        long: "generic",
        short: None,
        kind: Kind::Switch(|args| args.generic = true),
        docs: &[Doc {
            bins: &[Bin::Encode],
            help: "write every tool step as GENERIC, as agy 1.1 and later do",
            man: r#"Write every tool step as GENERIC (132), as agy 1.1 and later do, instead of
the typed kinds of agy 1.0.16.
A structured result (a directory listing, an edit outcome) still uses its
typed step, because GENERIC holds only text.
"#,
        }],
    },
    Flag {
        long: "onto",
        short: None,
        kind: Kind::Value {
            name: "ROWS",
            complete: Complete::File,
            update: |args, value| {
                args.onto = Some(value);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Encode],
            help: "write the messages back onto the row stream they were decoded from \
                   (agy-dump's output, a file or a pipe): unchanged messages keep their \
                   steps byte for byte, edited ones change only what they show, deleted \
                   ones lose their steps, and every other row and brain file is carried \
                   over",
            man: r#"Write the messages back onto
.IR ROWS ,
the row stream of
.BR agy\-dump (1)
that they were decoded from (a file, or a pipe such as
.BR "<(agy\-dump x.db)" ).
See
.BR "WRITING BACK" .
"#,
        }],
    },
    // agy-edit: where a fork or a rewind cuts.
    Flag {
        long: "at",
        short: None,
        kind: Kind::Value {
            name: "STEP",
            complete: Complete::Text,
            update: |args, value| {
                args.at = Some(step_number("--at", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "fork: keep the steps up to and with step STEP",
            man: r#"For
.BR fork :
the fork keeps the steps up to and with step
.I STEP
(the
.B idx
that
.BR agy\-decode (1)
shows on each message).
"#,
        }],
    },
    Flag {
        long: "turn",
        short: None,
        kind: Kind::Value {
            name: "N",
            complete: Complete::Text,
            update: |args, value| {
                args.turn = Some(turn_count("--turn", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "fork: keep the first N user turns and their replies",
            man: r#"For
.BR fork :
the fork keeps the first
.I N
user turns, each with everything that followed it up to the next one (the
reply, its tool calls, bookkeeping steps).
"#,
        }],
    },
    Flag {
        long: "to",
        short: None,
        kind: Kind::Value {
            name: "STEP",
            complete: Complete::Text,
            update: |args, value| {
                args.to = Some(step_number("--to", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "rewind: remove step STEP and every step after it",
            man: r#"For
.BR rewind :
remove step
.I STEP
and every step after it, as agy's
.B /rewind
to that message does.
"#,
        }],
    },
    Flag {
        long: "turns",
        short: None,
        kind: Kind::Value {
            name: "N",
            complete: Complete::Text,
            update: |args, value| {
                args.turns = Some(turn_count("--turns", value)?);
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "rewind: remove the last N user turns and what followed them",
            man: r#"For
.BR rewind :
remove the last
.I N
user turns and everything that followed them.
"#,
        }],
    },
    // agy-edit move: how far a move reaches.
    Flag {
        long: "everywhere",
        short: None,
        kind: Kind::Switch(|args| args.everywhere = true),
        docs: &[Doc {
            bins: &[Bin::Edit],
            help: "move: also move the paths inside steps, other rows and brain files",
            man: r#"For
.BR move :
also rewrite every path at or under
.I OLD
inside the conversations moved: in every blob of their steps (tool inputs and
results, user text, at every depth), their
.B gen_metadata
and
.B executor_metadata
rows, the whole trajectory metadata, the index row's title, preview and
summary, the sidecar, and the text of their brain files (transcripts with
their escaped forms).
Without it only the places where a conversation names its project move.
"#,
        }],
    },
    // agy-pack: where to write.
    Flag {
        long: "root",
        short: None,
        kind: Kind::Value {
            name: "DIR",
            complete: Complete::Dir,
            update: |args, value| {
                args.root = Some(value.into());
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Pack],
            help: "data root to write under (default: $GEMINI_HOME/antigravity-cli, \
                   else $HOME/.gemini/antigravity-cli)",
            man: r#"The data root to write under; created when missing.
Default:
.IB $GEMINI_HOME /antigravity-cli
when
.B GEMINI_HOME
is set, else
.IB $HOME /.gemini/antigravity-cli\fR.
"#,
        }],
    },
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
            bins: &[Bin::Dump, Bin::Pack, Bin::Ls],
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
    // agy-render: where the pages go.
    Flag {
        long: "out",
        short: Some('o'),
        kind: Kind::Value {
            name: "DIR",
            complete: Complete::Dir,
            update: |args, value| {
                args.out = Some(value.into());
                Ok(())
            },
        },
        docs: &[Doc {
            bins: &[Bin::Render],
            help: "write DIR/<id>.html (or .md) per conversation and an index of every \
                   conversation in DIR; without it, one document with every conversation \
                   goes to stdout",
            man: r#"Write a page per conversation and the index into
.IR DIR ,
creating it if needed.
"#,
        }],
    },
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
    // Replacing what a write finds in its way: Claude Code sessions
    // (agy-decode), conversations (agy-pack).
    Flag {
        long: "force",
        short: Some('f'),
        kind: Kind::Switch(|args| args.force = true),
        docs: &[
            Doc {
                bins: &[Bin::Decode],
                help: "claude-code, codex, gemini-cli, opencode: replace session files that exist",
                man: r#"With
.B \-\-out\-dir
and
.BR claude\-code ,
.BR codex ,
.B gemini\-cli
or
.BR opencode :
replace session files that exist.
Without it an existing file is an error and is left as it was: Claude Code,
Codex and Gemini CLI append to a session they resume.
"#,
            },
            Doc {
                bins: &[Bin::Pack],
                help: "replace conversations that already exist",
                man: "Replace conversations that already exist.\n",
            },
        ],
    },
    Flag {
        long: "dry-run",
        short: Some('n'),
        kind: Kind::Switch(|args| args.dry_run = true),
        docs: &[Doc {
            bins: &[Bin::Pack],
            help: "check the stream, write nothing",
            man: r#"Check the whole stream, building each conversation in a private temporary
directory, and write nothing under the root.
The paths that would be written are printed.
"#,
        }],
    },
    Flag {
        long: "reindex",
        short: None,
        kind: Kind::Switch(|args| args.reindex = true),
        docs: &[Doc {
            bins: &[Bin::Pack],
            help: "read no stream: rebuild the missing and stale rows of the root's index \
                   (conversation_summaries.db) from its conversation databases",
            man: r#"Read no stream: rebuild the root's index,
.IR conversation_summaries.db ,
from its conversation databases.
A conversation the index does not list gets a row; a row whose step count or
last user input disagrees with its database is brought up to date (keeping a
non-empty title and every column the database says nothing of); a row that
agrees keeps its bytes, and rows of conversations not in the root are left
alone.
Prints
.BI "added " ID
or
.BI "updated " ID
for each row written.
See
.BR "THE INDEX" .
"#,
        }],
    },
    // What a format conversion changed or lost, said on stderr.
    Flag {
        long: "verbose",
        short: Some('v'),
        kind: Kind::Switch(|args| args.verbose = true),
        docs: &[
            Doc {
                bins: &[Bin::Decode],
                help: "anthropic, claude-code, codex, gemini-cli, opencode: say on stderr what \
                       was changed or dropped",
                man: r#"With
.BR anthropic ,
.BR claude\-code ,
.BR codex ,
.B gemini\-cli
and
.BR opencode :
say on standard error, per conversation and in total, what was changed or
dropped, with counts.
"#,
            },
            Doc {
                bins: &[Bin::Encode],
                help: "claude-code, codex, gemini-cli, opencode: say on stderr what was left out",
                man: r#"With
.BR claude\-code ,
.BR codex ,
.B gemini\-cli
and
.BR opencode :
say on standard error, per session, what was left out, with counts.
"#,
            },
        ],
    },
    // Every binary: what is generated from this table, help, version.
    Flag {
        long: "generate",
        short: None,
        kind: Kind::Value {
            name: "KIND",
            complete: Complete::Choices(&[
                Generate::Man.name(),
                Generate::CompleteBash.name(),
                Generate::CompleteZsh.name(),
                Generate::CompleteFish.name(),
            ]),
            update: |args, value| {
                let generate = Generate::parse(&value.string()?)?;
                args.special = Some(Special::Generate(generate));
                Ok(())
            },
        },
        docs: &[Doc {
            bins: ALL_BINS,
            help: "print the man page (man) or a shell completion script (complete-bash, \
                   complete-zsh, complete-fish)",
            man: r#"Print
.I KIND
and exit:
.B man
is this manual page as troff, and
.BR \%complete\-bash ,
.B \%complete\-zsh
and
.B \%complete\-fish
are scripts that complete the program's flags and their values in those
shells.
A shell loads its script at start-up from a line in
.IR ~/.bashrc ,
.I ~/.zshrc
(after
.BR compinit )
or
.IR ~/.config/fish/config.fish :
.RS
.IP "" 4
.nf
source <({name} \-\-generate complete\-bash)
source <({name} \-\-generate complete\-zsh)
{name} \-\-generate complete\-fish | source
.fi
.RE
"#,
        }],
    },
    Flag {
        long: "help",
        short: Some('h'),
        kind: Kind::Switch(|args| args.special = Some(Special::Help)),
        docs: &[Doc {
            bins: ALL_BINS,
            help: "print this help",
            man: "Print a summary of usage and exit.\n",
        }],
    },
    Flag {
        long: "version",
        short: Some('V'),
        kind: Kind::Switch(|args| args.special = Some(Special::Version)),
        docs: &[Doc {
            bins: ALL_BINS,
            help: "print the version",
            man: "Print the version and exit.\n",
        }],
    },
];

/// A step's idx from the command line.
fn step_number(flag: &str, value: std::ffi::OsString) -> Result<i64, Error> {
    let text = value.string()?;
    text.parse::<i64>().ok().filter(|&n| n >= 0).ok_or_else(|| {
        Error::usage(format!(
            "{flag} takes a step number (0 or more), not {text:?}"
        ))
    })
}

/// A count of user turns from the command line.
fn turn_count(flag: &str, value: std::ffi::OsString) -> Result<u64, Error> {
    let text = value.string()?;
    text.parse::<u64>().ok().filter(|&n| n >= 1).ok_or_else(|| {
        Error::usage(format!(
            "{flag} takes a number of turns (1 or more), not {text:?}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::flags::{self, Kind};

    /// Completion offers for `--format` what the tool takes: the formats
    /// of the format table with a writer (agy-decode) or a reader
    /// (agy-encode), and the message stream.
    #[test]
    fn format_choices_are_the_formats_of_the_table() {
        for bin in [Bin::Decode, Bin::Encode] {
            let takes = |f: Format| match bin {
                Bin::Decode => f.writer().is_some(),
                _ => f.reader().is_some(),
            };
            let (flag, _) = flags::of(bin).find(|(f, _)| f.long == "format").unwrap();
            let Kind::Value {
                complete: Complete::Choices(names),
                ..
            } = flag.kind
            else {
                panic!("{} --format offers no choices", bin.name())
            };
            let want: Vec<&str> = Format::all()
                .filter(|f| *f == Format::Messages || takes(*f))
                .map(Format::name)
                .collect();
            assert_eq!(names, want, "{}", bin.name());
        }
    }

    /// The parser finds a flag by its name among those of the binary, so
    /// one binary must not see two flags of one name.
    #[test]
    fn names_are_unique_within_each_binary() {
        for bin in Bin::ALL {
            let mut longs = Vec::new();
            let mut shorts = Vec::new();
            for (flag, _) in flags::of(bin) {
                assert!(
                    !longs.contains(&flag.long),
                    "{} --{}",
                    bin.name(),
                    flag.long
                );
                longs.push(flag.long);
                if let Some(c) = flag.short {
                    assert!(!shorts.contains(&c), "{} -{c}", bin.name());
                    shorts.push(c);
                }
            }
            for every in ["help", "version", "generate"] {
                assert!(longs.contains(&every), "{} --{every}", bin.name());
            }
        }
    }

    #[test]
    fn each_flag_has_one_text_per_binary() {
        for flag in FLAGS {
            assert!(!flag.docs.is_empty(), "--{}", flag.long);
            for bin in Bin::ALL {
                let texts = flag.docs.iter().filter(|d| d.bins.contains(&bin)).count();
                assert!(
                    texts <= 1,
                    "--{} has {texts} texts in {}",
                    flag.long,
                    bin.name()
                );
            }
        }
    }

    /// The texts keep the house style the renderers rely on: a help
    /// phrase wraps on spaces and has no period; man text is whole troff
    /// lines, none blank or starting with a space or `'` (a blank line or
    /// a leading space breaks the paragraph, `'` starts a request).
    #[test]
    fn texts_fit_their_renderers() {
        for flag in FLAGS {
            assert!(flag.long.len() > 1 && !flag.long.starts_with('-'));
            if let Kind::Value { name, .. } = flag.kind {
                assert!(name.chars().all(|c| c.is_ascii_uppercase()), "{name}");
            }
            for doc in flag.docs {
                let help = doc.help;
                assert!(
                    !help.is_empty() && !help.ends_with('.'),
                    "--{}: {help}",
                    flag.long
                );
                assert!(
                    !help.contains("  ") && !help.contains('\n'),
                    "--{}: {help}",
                    flag.long
                );
                assert!(doc.man.ends_with('\n'), "--{}", flag.long);
                for line in doc.man.lines() {
                    let bad = line.trim().is_empty()
                        || line.starts_with(' ')
                        || line.starts_with('\'')
                        || line.ends_with(' ');
                    assert!(!bad, "--{}: man line {line:?}", flag.long);
                }
            }
        }
    }
}
