//! agy-encode: chat messages to an agy row stream.

use std::ffi::OsString;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::encode::{self, Encoder, Options};
use agy_tools::error::{Error, Result};
use agy_tools::format::{claude_code_read, Format};
use agy_tools::io::{self, Lines, Output};
use agy_tools::onto::{self, Merger};

const NAME: &str = "agy-encode";

const USAGE: &str = "\
Usage: agy-encode [OPTIONS] [FILE]...

Reads a message stream (from agy-decode, or converted from another agent's
transcript) and writes the row stream of a complete agy conversation for
agy-pack: the database's schema, one step per message and per tool call, the
trajectory metadata and the brain transcripts. System messages (from
agy-decode --all) become their bookkeeping steps again.

With no FILE, or when FILE is -, reads standard input.

Options:
      --id ID     conversation id of records that carry no \"conversation\"
      --generic   write every tool step as GENERIC, as agy 1.1 and later do
      --onto ROWS write the messages back onto the row stream they were
                  decoded from (agy-dump's output, a file or a pipe):
                  unchanged messages keep their steps byte for byte, edited
                  ones change only what they show, deleted ones lose their
                  steps, and every other row and brain file is carried over
  -a, --all       (with --onto) the messages were decoded with --all, so a
                  bookkeeping step no message names was deleted
      --format F  what FILE holds: messages (the default) or claude-code
                  (Claude Code session files, one session each)
  -v, --verbose   claude-code: say on stderr what was left out
  -h, --help      print this help
  -V, --version   print the version

Exit status: 0 success, 1 bad input or I/O error, 2 usage error.
See agy-encode(1) for how messages become steps.
";

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    use lexopt::prelude::*;
    let mut options = Options::default();
    let mut format = Format::Messages;
    let mut verbose = false;
    let mut paths: Vec<OsString> = Vec::new();
    let mut onto_path: Option<OsString> = None;
    let mut all = false;
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("id") => {
                let id = parser.value()?.string()?;
                if id.is_empty() {
                    return Err(Error::usage("--id needs a non-empty conversation id"));
                }
                options.id = Some(id);
            }
            Long("generic") => options.generic = true,
            Long("onto") => onto_path = Some(parser.value()?),
            Short('a') | Long("all") => all = true,
            Long("format") => {
                let name = parser.value()?.string()?;
                format = Format::parse(&name, &[Format::Messages, Format::ClaudeCode])?;
            }
            Short('v') | Long("verbose") => verbose = true,
            Short('h') | Long("help") => return cli::print(USAGE),
            Short('V') | Long("version") => return cli::print(&cli::version(NAME)),
            Value(path) => paths.push(path),
            _ => return Err(arg.unexpected().into()),
        }
    }
    if all && onto_path.is_none() {
        return Err(Error::usage("--all is for --onto"));
    }
    if format == Format::ClaudeCode && onto_path.is_some() {
        return Err(Error::usage(
            "--onto reads a message stream, not --format claude-code",
        ));
    }
    let mut out = Output::stdout();
    if let Some(onto_path) = onto_path {
        let messages_on_stdin = paths.is_empty() || paths.iter().any(|p| p == "-");
        if onto_path == "-" && messages_on_stdin {
            return Err(Error::usage(
                "--onto - and the messages cannot both be standard input",
            ));
        }
        let merge = onto::Options {
            all,
            generic: options.generic,
        };
        let mut merger = Merger::open(&onto_path, merge)?;
        for path in io::input_paths(paths) {
            let mut lines = Lines::open(&path)?;
            while let Some(line) = lines.next_line()? {
                if let Err(err) = merger.line(line, &mut out) {
                    return Err(err.context(lines.place()));
                }
            }
        }
        merger.finish(&mut out)?;
        return out.flush();
    }
    let mut encoder = Encoder::new(options);
    for path in io::input_paths(paths) {
        let mut lines = Lines::open(&path)?;
        if format == Format::ClaudeCode {
            claude_code_read::encode(&mut lines, &mut encoder, &mut out, verbose)?;
            continue;
        }
        while let Some(line) = lines.next_line()? {
            let result =
                encode::parse_line(line).and_then(|record| encoder.record(record, &mut out));
            if let Err(err) = result {
                return Err(err.context(lines.place()));
            }
        }
    }
    encoder.finish(&mut out)?;
    out.flush()
}
