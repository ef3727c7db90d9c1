//! Every command-line flag of every binary, defined once.
//!
//! A flag used to live in three hand-kept copies per binary: the parser's
//! match arm, the Options list of `--help` and the OPTIONS section of its
//! man page, and they drifted. Now the table of [`defs`] holds one [`Flag`] per
//! flag: its names, the value it takes, the binaries that have it, its text
//! for `--help` and for the man page, and what it sets in [`Args`]. From
//! that list
//!
//! - [`mod@parse`] reads a command line with lexopt,
//! - [`help`] writes the Options list of `--help`,
//! - [`man`] writes the OPTIONS section of `man/<binary>.1`, and
//! - [`complete`] writes completion scripts for bash, zsh and fish,
//!
//! so a flag added, renamed or documented in `defs` is so everywhere. The
//! design follows ripgrep's `crates/core/flags`, scaled down: a flat table
//! of plain data rather than a type per flag, since none of ours needs
//! more than a function to store its value.
//!
//! The rest of a man page (its description, formats, examples) is written
//! by hand in `man/`; `agy-X --generate man` prints that page with its
//! OPTIONS section rendered from the definitions, and `tests/flags.rs`
//! fails when a checked-in page differs from it. After changing a flag,
//! regenerate the pages with a built binary (it holds the page it was
//! built with, so writing over the file is safe):
//!
//! ```text
//! cargo build --bins
//! for b in dump decode encode edit pack render ls usage; do
//!     target/debug/agy-$b --generate man > man/agy-$b.1
//! done
//! ```
//!
//! What flags go with what (`agy-encode --all` needs `--onto`, say) is
//! checked in each binary's main, once [`Args`] is complete, since the
//! answer depends on flags that may come later on the command line.

pub mod complete;
mod defs;
pub mod help;
pub mod man;
mod parse;

pub use defs::all;
pub use parse::{parse, parse_from, Args, Generate, Program, Special};

use std::ffi::OsString;

use crate::error::Result;

/// The binaries, so a flag can say which of them have it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Dump,
    Decode,
    Encode,
    Edit,
    Pack,
    Render,
    Ls,
    Usage,
}

impl Bin {
    pub const ALL: [Bin; 8] = [
        Bin::Dump,
        Bin::Decode,
        Bin::Encode,
        Bin::Edit,
        Bin::Pack,
        Bin::Render,
        Bin::Ls,
        Bin::Usage,
    ];

    /// The program's name, as installed and as its messages start.
    pub const fn name(self) -> &'static str {
        match self {
            Bin::Dump => "agy-dump",
            Bin::Decode => "agy-decode",
            Bin::Encode => "agy-encode",
            Bin::Edit => "agy-edit",
            Bin::Pack => "agy-pack",
            Bin::Render => "agy-render",
            Bin::Ls => "agy-ls",
            Bin::Usage => "agy-usage",
        }
    }
}

/// One flag: `--long`, maybe `-s`, and what it takes and does.
///
/// Two flags may share a long name when they mean different things in
/// different binaries (`--id` selects conversations in agy-dump and names
/// one in agy-encode); their `docs` then name disjoint binaries. One
/// binary never sees two flags of the same name (a test checks).
#[derive(Debug)]
pub struct Flag {
    /// The name after `--`.
    pub long: &'static str,
    /// The letter after `-`, if the flag has one.
    pub short: Option<char>,
    pub kind: Kind,
    /// The flag's text in each binary that has it: a binary not named in
    /// any entry does not have the flag. One meaning can be worded for
    /// each binary (agy-decode's `--verbose` reports per conversation,
    /// agy-encode's per session), so there may be several entries.
    pub docs: &'static [Doc],
}

/// A switch, or a flag that takes a value.
#[derive(Debug)]
pub enum Kind {
    /// Takes no value; sets something in [`Args`].
    Switch(fn(&mut Args)),
    /// Takes the next argument (or `--long=VALUE`) as its value.
    Value {
        /// The value's name in `--help` and the man page: `DIR`, `FORMAT`.
        name: &'static str,
        /// What a shell offers to complete the value.
        complete: Complete,
        /// Checks the value and stores it; an error here is a usage error.
        update: fn(&mut Args, OsString) -> Result<()>,
    },
}

/// What a completion script offers for a flag's value.
#[derive(Debug)]
pub enum Complete {
    /// Free text (an id): nothing to offer.
    Text,
    /// A path to a file (or one of the shell's usual path completions).
    File,
    /// A directory.
    Dir,
    /// One of these words.
    Choices(&'static [&'static str]),
}

/// A flag's text for some binaries.
#[derive(Debug)]
pub struct Doc {
    pub bins: &'static [Bin],
    /// For `--help`: a phrase, lower case, no final period; wrapped to
    /// fit 80 columns when printed. Completion scripts show it as the
    /// flag's description.
    pub help: &'static str,
    /// For the man page: troff (`-man` macros) placed after the `.TP`
    /// line that names the flag, one sentence per line as the pages are
    /// written; `{name}` stands for the program's name.
    pub man: &'static str,
}

impl Flag {
    /// The flag's text in `bin`, or `None` when `bin` does not have it.
    pub fn doc(&self, bin: Bin) -> Option<&'static Doc> {
        self.docs.iter().find(|doc| doc.bins.contains(&bin))
    }

    /// The value's name, for a flag that takes one.
    pub fn value_name(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Switch(_) => None,
            Kind::Value { name, .. } => Some(name),
        }
    }
}

/// The flags of `bin` with their text there, in the order of [`all`]
/// (which is the order of `--help` and the man page).
pub fn of(bin: Bin) -> impl Iterator<Item = (&'static Flag, &'static Doc)> {
    all().filter_map(move |flag| flag.doc(bin).map(|doc| (flag, doc)))
}
