//! agy-render's flags: where the pages go.

use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};

pub(super) static FLAGS: &[Flag] = &[
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
];
