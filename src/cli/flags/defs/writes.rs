//! What a write does with what it finds in its way, and what a format
//! conversion says it changed or lost.

use crate::cli::flags::{Bin, Doc, Flag, Kind};

pub(super) static FLAGS: &[Flag] = &[
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
        long: "replace-other",
        short: None,
        kind: Kind::Switch(|args| args.replace_other = true),
        docs: &[Doc {
            bins: &[Bin::Pack],
            help: "with --force, also replace a conversation with one that is not the same \
                   conversation (a fork, or one encoded anew)",
            man: r#"With
.BR \-\-force ,
also replace a conversation with one that is not the same conversation:
one whose trajectory is neither the trajectory in place nor one it was
rewound from (a fork given the id of another conversation, a conversation
encoded anew from messages or from another agent's session).
Without it such a conversation is refused, and the one in place is kept.
See
.BR SAFETY .
"#,
        }],
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
];
