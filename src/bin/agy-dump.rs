//! agy-dump: agy conversation databases to an NDJSON row stream.

use std::path::PathBuf;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::cli::flags::{self, Bin, Program};
use agy_tools::error::{Error, Result};
use agy_tools::store::dump::{self, DumpOptions};
use agy_tools::store::root;
use agy_tools::stream::io::Output;

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Dump,
    about: "\
Usage: agy-dump [OPTIONS] [DB|ROOT]...

Writes agy conversation databases as newline-delimited JSON records: the
database's user_version, its schema, every row of every table (blobs as hex,
steps last), and the files of its brain/<id>/ directory.

Arguments are conversation .db files or data roots (directories holding
conversations/). With none, the default data root is read:
$GEMINI_HOME/antigravity-cli, else $HOME/.gemini/antigravity-cli.
",
    after: "\
A conversation that cannot be read is named on stderr and the others are
still dumped. Exit status: 0 success; 1 when a conversation could not be
dumped (or cut short), on an I/O error, or an --id matched nothing;
2 usage error. See agy-dump(1) for the record formats.
",
    man: include_str!("../../man/agy-dump.1"),
};

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    let Some(args) = flags::parse(&PROGRAM)? else {
        return Ok(());
    };
    let options = DumpOptions {
        ids: args.ids,
        brain: !args.no_brain,
        changed_since: args.changed_since,
        sides: None,
    };
    let mut paths: Vec<PathBuf> = args.paths.into_iter().map(PathBuf::from).collect();
    if paths.is_empty() {
        paths.push(root::default_root(args.lane)?);
    }
    let targets = dump::targets(&paths)?;
    let mut out = Output::stdout();
    let mut warn = |message: String| agy_tools::error::warn(NAME, message);
    let outcome = dump::dump(&targets, &options, &mut out, &mut warn)?;
    out.flush()?;
    if outcome.damaged > 0 {
        agy_tools::error::warn(
            NAME,
            format!(
                "{} conversation(s) hold damaged rows (each named above); they are dumped whole",
                outcome.damaged
            ),
        );
    }
    if outcome.failed > 0 {
        return Err(Error::data(format!(
            "{} of {} conversations could not be dumped (each named above)",
            outcome.failed,
            outcome.dumped + outcome.unchanged + outcome.failed
        )));
    }
    if outcome.index_failed > 0 {
        return Err(Error::data(format!(
            "the index of {} data root(s) could not be read (each named above); their conversations are dumped without index rows",
            outcome.index_failed
        )));
    }
    Ok(())
}
