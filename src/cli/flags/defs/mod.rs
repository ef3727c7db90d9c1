//! The flags of every binary, each defined once.
//!
//! The order here is the order of `--help` and of the man pages: a
//! binary's own flags first, in the order its readers meet them, then the
//! flags every binary has. Texts follow the house style: `help` is a
//! lower-case phrase, `man` is troff with one sentence per line, and
//! `{name}` in `man` stands for the program's name.
//!
//! The table is in groups, a file each, in that order: [`GROUPS`] lists
//! them and [`all`] walks their flags.

mod decode;
mod dump;
mod edit;
mod encode;
mod every;
mod ls;
mod pack;
mod render;
mod shared;
mod usage;
mod writes;

use crate::cli::flags::{Bin, Flag};

const ALL_BINS: &[Bin] = &Bin::ALL;

/// The groups of the table, in the order of `--help`.
static GROUPS: &[&[Flag]] = &[
    dump::FLAGS,
    ls::FLAGS,
    usage::FLAGS,
    encode::FLAGS,
    edit::FLAGS,
    pack::FLAGS,
    shared::FLAGS,
    render::FLAGS,
    decode::FLAGS,
    writes::FLAGS,
    every::FLAGS,
];

/// Every flag of every binary, in the order of `--help` and the man pages.
pub fn all() -> impl Iterator<Item = &'static Flag> {
    GROUPS.iter().flat_map(|group| group.iter())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::flags::{self, Complete, Kind};
    use crate::format::Format;

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
        for flag in all() {
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
        for flag in all() {
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
