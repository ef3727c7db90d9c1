//! agy-ls: the conversations of an agy data root, newest first.

use std::path::PathBuf;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::cli::flags::{self, Bin, Program};
use agy_tools::error::{Error, Result};
use agy_tools::list::{self, Format, ListOptions};
use agy_tools::store::{dump, root};
use agy_tools::stream::io::Output;

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Ls,
    about: "\
Usage: agy-ls [OPTIONS] [DB|ROOT]...

Lists agy conversations, newest first, one JSON object a line: id, title,
directory, branch, times, step count, models, lane, parent, bytes on disk,
and whether agy's index lists it truly. It reads the index and each
database's metadata, not every step.

Arguments are conversation .db files or data roots (directories holding
conversations/). With none, the default data root is read:
$GEMINI_HOME/antigravity-cli, else $HOME/.gemini/antigravity-cli.
",
    after: "\
A conversation that cannot be read is named on stderr and the others are
still listed. Exit status: 0 success; 1 when a conversation (or a root's
index) could not be read, or on an I/O error; 2 usage error. See agy-ls(1).
",
    man: include_str!("../../man/agy-ls.1"),
};

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    let Some(args) = flags::parse(&PROGRAM)? else {
        return Ok(());
    };
    let mut paths: Vec<PathBuf> = args.paths.into_iter().map(PathBuf::from).collect();
    if paths.is_empty() {
        paths.push(root::default_root(args.lane)?);
    }
    let targets = dump::targets(&paths)?;
    let options = ListOptions {
        changed_since: args.changed_since,
        under: args.under,
    };
    let mut warn = |message: String| agy_tools::error::warn(NAME, message);
    let (entries, failed) = list::list(&targets, &options, &mut warn)?;
    let mut out = Output::stdout();
    match args.list_format {
        Format::Json => {
            for entry in &entries {
                entry.write_json(out.buf());
                out.end_record()?;
            }
        }
        Format::Table => list::write_table(&entries, out.buf()),
    }
    out.flush()?;
    if failed > 0 {
        return Err(Error::data(format!(
            "{failed} conversation(s) or index(es) could not be read (each named above)"
        )));
    }
    Ok(())
}
