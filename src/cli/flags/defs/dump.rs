//! agy-dump's flags: which conversations, and what of them.

use lexopt::ValueExt;

use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};
use crate::store::dump;

pub(super) static FLAGS: &[Flag] = &[
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
];
