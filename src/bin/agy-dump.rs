//! agy-dump: agy conversation databases to an NDJSON row stream.

use std::path::PathBuf;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::dump::{self, DumpOptions};
use agy_tools::error::{Error, Result};
use agy_tools::io::Output;
use agy_tools::root::{self, Lane};

const NAME: &str = "agy-dump";

const USAGE: &str = "\
Usage: agy-dump [OPTIONS] [DB|ROOT]...

Writes agy conversation databases as newline-delimited JSON records: the
database's user_version, its schema, every row of every table (blobs as hex,
steps last), and the files of its brain/<id>/ directory.

Arguments are conversation .db files or data roots (directories holding
conversations/). With none, the default data root is read:
$GEMINI_HOME/antigravity-cli, else $HOME/.gemini/antigravity-cli.

Options:
      --id ID                dump only conversation ID (repeatable)
      --no-brain             do not emit brain files
      --changed-since STAMP  only conversations whose db, -wal, .meta or brain
                             files changed after STAMP: a file's mtime, or an
                             RFC 3339 time
      --lane LANE            default root of this agy surface: cli (default)
                             or acp
  -h, --help                 print this help
  -V, --version              print the version

A conversation that cannot be read is named on stderr and the others are
still dumped. Exit status: 0 success; 1 when a conversation could not be
dumped (or cut short), on an I/O error, or an --id matched nothing;
2 usage error. See agy-dump(1) for the record formats.
";

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    use lexopt::prelude::*;
    let mut options = DumpOptions {
        brain: true,
        ..DumpOptions::default()
    };
    let mut lane = Lane::Cli;
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("id") => options.ids.push(parser.value()?.string()?),
            Long("no-brain") => options.brain = false,
            Long("changed-since") => {
                options.changed_since = Some(dump::parse_stamp(&parser.value()?)?)
            }
            Long("lane") => lane = Lane::parse(&parser.value()?.string()?)?,
            Short('h') | Long("help") => return cli::print(USAGE),
            Short('V') | Long("version") => return cli::print(&cli::version(NAME)),
            Value(path) => paths.push(PathBuf::from(path)),
            _ => return Err(arg.unexpected().into()),
        }
    }
    if paths.is_empty() {
        paths.push(root::default_root(lane)?);
    }
    let targets = dump::targets(&paths)?;
    let mut out = Output::stdout();
    let mut warn = |message: String| cli::warn(NAME, message);
    let outcome = dump::dump(&targets, &options, &mut out, &mut warn)?;
    out.flush()?;
    if outcome.damaged > 0 {
        cli::warn(
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
    Ok(())
}
