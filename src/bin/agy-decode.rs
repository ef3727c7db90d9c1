//! agy-decode: an agy row stream to chat messages.

use std::ffi::OsString;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::decode::{Decoder, Options};
use agy_tools::error::Result;
use agy_tools::io::{self, Lines, Output};
use agy_tools::record::Record;

const NAME: &str = "agy-decode";

const USAGE: &str = "\
Usage: agy-decode [OPTIONS] [FILE]...

Reads the row stream of agy-dump and writes each conversation as chat
messages, one JSON object per line: user and assistant messages with text,
thinking, tool_use, tool_result and image blocks, then one meta record.

With no FILE, or when FILE is -, reads standard input.

Options:
  -a, --all       also write bookkeeping steps (checkpoints, notices, task
                  boundaries, errors, ...) and step kinds nothing here
                  understands as \"system\" messages
  -h, --help      print this help
  -V, --version   print the version

Exit status: 0 success, 1 bad input or I/O error, 2 usage error.
See agy-decode(1) for the message stream.
";

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    use lexopt::prelude::*;
    let mut options = Options::default();
    let mut paths: Vec<OsString> = Vec::new();
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('a') | Long("all") => options.all = true,
            Short('h') | Long("help") => return cli::print(USAGE),
            Short('V') | Long("version") => return cli::print(&cli::version(NAME)),
            Value(path) => paths.push(path),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let mut decoder = Decoder::new(options);
    let mut out = Output::stdout();
    for path in io::input_paths(paths) {
        let mut lines = Lines::open(&path)?;
        while let Some(line) = lines.next_line()? {
            let result = match decoder.canonical_step_line(line, &mut out) {
                Ok(true) => Ok(()),
                Ok(false) => {
                    Record::parse(line).and_then(|record| decoder.record(&record, &mut out))
                }
                Err(e) => Err(e),
            };
            if let Err(err) = result {
                return Err(err.context(lines.place()));
            }
            out.end_record()?;
        }
    }
    decoder.finish(&mut out)?;
    out.flush()
}
