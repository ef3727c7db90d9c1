//! Reading a command line through the definitions, and answering
//! `--help`, `--version` and `--generate`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::cli;
use crate::cli::flags::{all, complete, help, man, Bin, Kind};
use crate::error::{Error, Result};
use crate::store::root::Lane;

/// A binary's own text around what the definitions generate.
#[derive(Debug)]
pub struct Program {
    pub bin: Bin,
    /// `--help` before its Options list: the usage line and what the
    /// program does, ending in a newline.
    pub about: &'static str,
    /// `--help` after the Options list: exit statuses, where to read
    /// more.
    pub after: &'static str,
    /// The man page as checked in (`include_str!`), whose OPTIONS section
    /// `--generate man` replaces with the one the definitions render.
    pub man: &'static str,
}

/// What `--generate` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generate {
    Man,
    CompleteBash,
    CompleteZsh,
    CompleteFish,
}

impl Generate {
    pub const ALL: [Generate; 4] = [
        Generate::Man,
        Generate::CompleteBash,
        Generate::CompleteZsh,
        Generate::CompleteFish,
    ];

    /// The word `--generate` takes for it.
    pub const fn name(self) -> &'static str {
        match self {
            Generate::Man => "man",
            Generate::CompleteBash => "complete-bash",
            Generate::CompleteZsh => "complete-zsh",
            Generate::CompleteFish => "complete-fish",
        }
    }

    pub fn parse(name: &str) -> Result<Generate> {
        match Generate::ALL.into_iter().find(|g| g.name() == name) {
            Some(generate) => Ok(generate),
            None => Err(Error::usage(format!(
                "--generate takes man, complete-bash, complete-zsh or complete-fish, not {name:?}"
            ))),
        }
    }
}

/// Asked for instead of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    Help,
    Version,
    Generate(Generate),
}

/// What a command line said, for every binary at once: each flag's update
/// writes its field, and a binary's main reads the fields of its flags.
/// A field is the flag's value as given, checked but not yet combined with
/// others; the main does that. The defaults are those of no flag given.
#[derive(Debug, Default)]
pub struct Args {
    /// `--help`, `--version` or `--generate`: answered by [`parse`], which
    /// stops reading at it, as the binaries always have.
    pub special: Option<Special>,
    /// The arguments that are not flags, in order.
    pub paths: Vec<OsString>,
    /// `-a, --all` (agy-decode, agy-encode).
    pub all: bool,
    /// `-v, --verbose` (agy-decode, agy-encode).
    pub verbose: bool,
    /// `-f, --force` (agy-decode, agy-pack).
    pub force: bool,
    /// agy-pack `--replace-other`.
    pub replace_other: bool,
    /// `--lane` (agy-dump, agy-pack).
    pub lane: Lane,
    /// `--format` of agy-decode and agy-encode.
    pub format: crate::format::Format,
    /// agy-dump `--id`, each one given.
    pub ids: Vec<String>,
    /// agy-dump `--no-brain`.
    pub no_brain: bool,
    /// agy-dump `--changed-since`, read into a time.
    pub changed_since: Option<SystemTime>,
    /// agy-decode `--thinking`.
    pub thinking: crate::format::Thinking,
    /// agy-decode `--out-dir`.
    pub out_dir: Option<PathBuf>,
    /// agy-decode `--cwd`.
    pub cwd: Option<String>,
    /// agy-encode `--id`.
    pub id: Option<String>,
    /// agy-encode `--generic`.
    pub generic: bool,
    /// agy-encode `--onto`.
    pub onto: Option<OsString>,
    /// agy-pack `--root`.
    pub root: Option<PathBuf>,
    /// agy-pack `-n, --dry-run`.
    pub dry_run: bool,
    /// agy-pack `--reindex`.
    pub reindex: bool,
    /// agy-render `-f, --format`.
    pub render_format: crate::render::Format,
    /// agy-ls `--format`.
    pub list_format: crate::list::Format,
    /// agy-render `-o, --out`.
    pub out: Option<PathBuf>,
    /// agy-edit `--at` (fork).
    pub at: Option<i64>,
    /// agy-edit `--turn` (fork).
    pub turn: Option<u64>,
    /// agy-edit `--to` (rewind).
    pub to: Option<i64>,
    /// agy-edit `--turns` (rewind).
    pub turns: Option<u64>,
    /// agy-edit `--everywhere` (move).
    pub everywhere: bool,
    /// agy-ls `--under`.
    pub under: Option<crate::agy::paths::Dir>,
    /// agy-usage `--since` and `--until`.
    pub since: Option<crate::time::Day>,
    pub until: Option<crate::time::Day>,
    /// agy-usage `--json`.
    pub json: bool,
    /// agy-usage `-b, --breakdown`.
    pub breakdown: bool,
    /// agy-usage `--by-project`.
    pub by_project: bool,
    /// agy-usage `--no-cost`.
    pub no_cost: bool,
    /// agy-usage `--prices`.
    pub prices: Option<PathBuf>,
    /// agy-usage `--now`.
    pub now: Option<crate::time::Timestamp>,
}

/// Reads this process's command line for `program`. `None` means it asked
/// for `--help`, `--version` or `--generate`, which has been answered on
/// stdout: the binary has nothing more to do.
pub fn parse(program: &Program) -> Result<Option<Args>> {
    parse_from(program, std::env::args_os().skip(1))
}

/// [`parse`] of the given arguments (without the program name).
pub fn parse_from<I>(program: &Program, raw: I) -> Result<Option<Args>>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let bin = program.bin;
    let mut args = Args::default();
    let mut parser = lexopt::Parser::from_args(raw);
    while let Some(arg) = parser.next()? {
        let found = match arg {
            lexopt::Arg::Value(path) => {
                args.paths.push(path);
                continue;
            }
            lexopt::Arg::Short(c) => all().find(|f| f.short == Some(c) && f.doc(bin).is_some()),
            lexopt::Arg::Long(name) => all().find(|f| f.long == name && f.doc(bin).is_some()),
        };
        let Some(flag) = found else {
            return Err(arg.unexpected().into());
        };
        match flag.kind {
            Kind::Switch(update) => update(&mut args),
            Kind::Value { update, .. } => update(&mut args, parser.value()?)?,
        }
        if let Some(special) = args.special {
            answer(program, special)?;
            return Ok(None);
        }
    }
    Ok(Some(args))
}

/// Prints what `special` asks for.
fn answer(program: &Program, special: Special) -> Result<()> {
    let bin = program.bin;
    let text = match special {
        Special::Help => help::render(program),
        Special::Version => cli::version(bin.name()),
        Special::Generate(Generate::Man) => man::page(bin, program.man)?,
        Special::Generate(Generate::CompleteBash) => complete::bash(bin),
        Special::Generate(Generate::CompleteZsh) => complete::zsh(bin),
        Special::Generate(Generate::CompleteFish) => complete::fish(bin),
    };
    cli::print(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::format::{Format, Thinking};

    fn parse(bin: Bin, raw: &[&str]) -> Result<Args> {
        let program = Program {
            bin,
            about: "",
            after: "",
            man: "",
        };
        Ok(parse_from(&program, raw)?.expect("not --help, --version or --generate"))
    }

    #[test]
    fn flags_reach_their_fields_in_every_spelling() {
        let raw = [
            "-av",
            "--format=anthropic",
            "--thinking",
            "text",
            "x",
            "-",
            "--",
            "-f",
        ];
        let args = parse(Bin::Decode, &raw).unwrap();
        assert!(args.all && args.verbose && !args.force);
        assert_eq!(args.format, Format::Anthropic);
        assert_eq!(args.thinking, Thinking::Text);
        assert_eq!(args.paths, ["x", "-", "-f"]);

        // One letter, two flags: -f is --format in agy-render, --force
        // in agy-pack.
        let args = parse(Bin::Render, &["-fmd", "-o", "out"]).unwrap();
        assert_eq!(args.render_format, crate::render::Format::Markdown);
        assert_eq!(args.out, Some(PathBuf::from("out")));
        let args = parse(Bin::Pack, &["-fn", "--lane=acp"]).unwrap();
        assert!(args.force && args.dry_run);
        assert_eq!(args.lane, Lane::Acp);

        let args = parse(Bin::Dump, &["--id", "a", "--id=b", "--no-brain"]).unwrap();
        assert_eq!(args.ids, ["a", "b"]);
        assert!(args.no_brain);
        let args = parse(Bin::Encode, &["--id", "d", "--onto", "rows"]).unwrap();
        assert_eq!(args.id.as_deref(), Some("d"));
        assert_eq!(args.onto, Some(OsString::from("rows")));
        // A value that names one thing, given twice, is a mistake.
        for (bin, flag) in [
            (Bin::Encode, "--id"),
            (Bin::Edit, "--at"),
            (Bin::Edit, "--to"),
        ] {
            let err = parse(bin, &[flag, "5", flag, "6"]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Usage);
            assert_eq!(err.message(), format!("{flag} is given twice"));
        }
    }

    #[test]
    fn a_flag_of_another_binary_is_unknown() {
        for (bin, flag) in [
            (Bin::Encode, "-f"),
            (Bin::Dump, "--onto"),
            (Bin::Render, "--all"),
            (Bin::Pack, "--format"),
        ] {
            let err = parse(bin, &[flag, "x"]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Usage);
            assert_eq!(err.message(), format!("invalid option '{flag}'"));
        }
    }
}
