//! The flags every binary has: what is generated from this table, help,
//! version.

use lexopt::ValueExt;

use crate::cli::flags::{Complete, Doc, Flag, Generate, Kind, Special};

use super::ALL_BINS;

pub(super) static FLAGS: &[Flag] = &[
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
