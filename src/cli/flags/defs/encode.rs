//! agy-encode's flags: how messages become steps.

use lexopt::ValueExt;

use crate::cli::flags::{Bin, Complete, Doc, Flag, Kind};
use crate::error::Error;

pub(super) static FLAGS: &[Flag] = &[
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
                super::edit::once("--id", args.id.is_some())?;
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
];
