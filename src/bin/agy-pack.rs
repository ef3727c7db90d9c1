//! agy-pack: an NDJSON row stream to agy conversation databases.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::error::{Error, Result};
use agy_tools::io::{self, Lines, Output};
use agy_tools::pack::{PackOptions, Packer};
use agy_tools::record::Record;
use agy_tools::root::{self, Lane};

const NAME: &str = "agy-pack";

const USAGE: &str = "\
Usage: agy-pack [OPTIONS] [FILE]...

Reads the row stream of agy-dump (or agy-encode) from the FILEs, or standard
input when none is given or FILE is -, and writes each conversation to
ROOT/conversations/<id>.db and ROOT/brain/<id>/. Prints the path of each
database written.

A conversation is written to temporary files and renamed into place only
when all its records were good: on an error nothing of it is left behind.
What a killed run left behind is cleared by the next run into the root.

Options:
      --root DIR     data root to write under (default: $GEMINI_HOME/antigravity-cli,
                     else $HOME/.gemini/antigravity-cli)
      --lane LANE    default root of this agy surface: cli (default) or acp
  -f, --force        replace conversations that already exist
  -n, --dry-run      check the stream, write nothing
  -h, --help         print this help
  -V, --version      print the version

Exit status: 0 success, 1 bad data or I/O error, 2 usage error.
See agy-pack(1) and agy-dump(1) for the record formats.
";

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    use lexopt::prelude::*;
    let mut root_dir: Option<PathBuf> = None;
    let mut lane = Lane::Cli;
    let mut force = false;
    let mut dry_run = false;
    let mut inputs: Vec<OsString> = Vec::new();
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("root") => root_dir = Some(PathBuf::from(parser.value()?)),
            Long("lane") => lane = Lane::parse(&parser.value()?.string()?)?,
            Short('f') | Long("force") => force = true,
            Short('n') | Long("dry-run") => dry_run = true,
            Short('h') | Long("help") => return cli::print(USAGE),
            Short('V') | Long("version") => return cli::print(&cli::version(NAME)),
            Value(path) => inputs.push(path),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let root = match root_dir {
        Some(dir) => dir,
        None => root::default_root(lane)?,
    };
    let mut packer = Packer::new(
        PackOptions {
            root,
            force,
            dry_run,
        },
        Box::new(|message| cli::warn(NAME, message)),
    )?;
    let mut out = Output::stdout();
    let report = |out: &mut Output, path: Option<PathBuf>| -> Result<()> {
        if let Some(path) = path {
            out.buf()
                .extend_from_slice(path.as_os_str().as_encoded_bytes());
            out.buf().push(b'\n');
            out.flush()?;
        }
        Ok(())
    };
    for input in io::input_paths(inputs) {
        let mut lines = Lines::open(&input)?;
        loop {
            let line = match lines.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => return Err(abandon(&mut packer, e)),
            };
            let written = Record::parse(line).and_then(|record| {
                let mut path = None;
                if packer
                    .pending_id()
                    .is_some_and(|id| id != record.conversation())
                {
                    path = packer.finish()?;
                }
                packer.add(record).map(|()| path)
            });
            match written {
                Ok(path) => report(&mut out, path)?,
                Err(e) => return Err(abandon(&mut packer, e).context(lines.place())),
            }
        }
    }
    let path = packer.finish().map_err(|e| abandon(&mut packer, e))?;
    report(&mut out, path)?;
    out.flush()
}

/// Discards the conversation in progress and says so in the error.
fn abandon(packer: &mut Packer, err: Error) -> Error {
    match packer.abandon() {
        Some(id) => Error::data(format!("{err} (conversation {id:?} not written)")),
        None => err,
    }
}
