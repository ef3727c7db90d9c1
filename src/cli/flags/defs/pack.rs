//! agy-pack's flags: where to write.

use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};

pub(super) static FLAGS: &[Flag] = &[
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
];
