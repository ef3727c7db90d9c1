//! agy-pack: an NDJSON row stream to agy conversation databases.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::error::Result;
use agy_tools::io::{self, Lines, Output};
use agy_tools::pack::{Batch, PackOptions, Packer};
use agy_tools::root::{self, Lane};

const NAME: &str = "agy-pack";

const USAGE: &str = "\
Usage: agy-pack [OPTIONS] [FILE]...

Reads the row stream of agy-dump (or agy-encode) from the FILEs, or standard
input when none is given or FILE is -, and writes each conversation to
ROOT/conversations/<id>.db and ROOT/brain/<id>/. Prints the path of each
database written.

A conversation is written to temporary files and renamed into place only
when all its records were good: on an error nothing of it is left behind,
the error is named on stderr and the other conversations are still written.
What a killed run left behind is cleared by the next run into the root.

Options:
      --root DIR     data root to write under (default: $GEMINI_HOME/antigravity-cli,
                     else $HOME/.gemini/antigravity-cli)
      --lane LANE    default root of this agy surface: cli (default) or acp
  -f, --force        replace conversations that already exist
  -n, --dry-run      check the stream, write nothing
  -h, --help         print this help
  -V, --version      print the version

Exit status: 0 every conversation written, 1 some not written (or nothing
could be), 2 usage error.
See agy-pack(1) and agy-dump(1) for the record formats.
";

fn main() -> ExitCode {
    let mut all_written = true;
    let code = cli::run(NAME, || {
        all_written = run()?;
        Ok(())
    });
    if all_written {
        code
    } else {
        ExitCode::from(1)
    }
}

/// Packs every input; `false` when something was not written.
fn run() -> Result<bool> {
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
            Short('h') | Long("help") => return cli::print(USAGE).map(|()| true),
            Short('V') | Long("version") => return cli::print(&cli::version(NAME)).map(|()| true),
            Value(path) => inputs.push(path),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let root = match root_dir {
        Some(dir) => dir,
        None => root::default_root(lane)?,
    };
    let packer = Packer::new(
        PackOptions {
            root,
            force,
            dry_run,
        },
        Box::new(|message| cli::warn(NAME, message)),
    )?;
    let mut out = Output::stdout();
    let mut report = |message: String| eprintln!("{NAME}: {message}");
    let mut batch = Batch::new(packer, &mut out, &mut report);
    for input in io::input_paths(inputs) {
        match Lines::open(&input) {
            Ok(mut lines) => batch.read(&mut lines)?,
            Err(e) => batch.lost_input(&input.to_string_lossy(), e),
        }
    }
    let summary = batch.end()?;
    out.flush()?;
    Ok(summary.failed == 0)
}
