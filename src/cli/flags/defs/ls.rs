//! agy-ls's flags: which conversations, by their project's directory.

use lexopt::ValueExt;

use crate::agy::paths::Dir;
use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};

pub(super) static FLAGS: &[Flag] = &[
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
];
