//! agy-decode: an agy row stream to chat messages.

use std::ffi::OsString;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::decode::{Decoder, Options};
use agy_tools::error::{Error, Result};
use agy_tools::format::{self, Format, Sink, Thinking};
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
  -a, --all            also write bookkeeping steps (checkpoints, notices, task
                       boundaries, errors, ...) and step kinds nothing here
                       understands as \"system\" messages
      --format FORMAT  messages (the default), anthropic (one Messages API
                       request per conversation) or claude-code (Claude Code
                       session lines)
      --thinking MODE  anthropic, claude-code: drop thinking (the default) or
                       turn it into text
      --out-dir DIR    claude-code: write DIR/<slug>/<id>.jsonl per
                       conversation (DIR ~/.claude/projects makes it
                       resumable) and print each path
      --cwd DIR        claude-code: the project directory of every session,
                       instead of each conversation's own
      --force          claude-code: replace session files that exist
  -v, --verbose        anthropic, claude-code: say on stderr what was
                       changed or dropped
  -h, --help           print this help
  -V, --version        print the version

Exit status: 0 success, 1 bad input or I/O error, 2 usage error.
See agy-decode(1) for the message stream.
";

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    use lexopt::prelude::*;
    let mut options = Options::default();
    let mut output = format::Options::default();
    let mut output_format = Format::Messages;
    let mut paths: Vec<OsString> = Vec::new();
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('a') | Long("all") => options.all = true,
            Long("format") => {
                let name = parser.value()?.string()?;
                output_format = Format::parse(
                    &name,
                    &[Format::Messages, Format::Anthropic, Format::ClaudeCode],
                )?;
            }
            Long("thinking") => output.thinking = Thinking::parse(&parser.value()?.string()?)?,
            Long("out-dir") => output.out_dir = Some(parser.value()?.into()),
            Long("cwd") => output.cwd = Some(parser.value()?.string()?),
            Long("force") => output.force = true,
            Short('v') | Long("verbose") => output.verbose = true,
            Short('h') | Long("help") => return cli::print(USAGE),
            Short('V') | Long("version") => return cli::print(&cli::version(NAME)),
            Value(path) => paths.push(path),
            _ => return Err(arg.unexpected().into()),
        }
    }
    let claude_code_only = output.out_dir.is_some() || output.cwd.is_some() || output.force;
    if claude_code_only && output_format != Format::ClaudeCode {
        return Err(Error::usage(
            "--out-dir, --cwd and --force go with --format claude-code",
        ));
    }
    let converting = output.verbose || output.thinking != Thinking::default();
    if converting && output_format == Format::Messages {
        return Err(Error::usage(
            "--thinking and --verbose go with --format anthropic or claude-code",
        ));
    }
    let mut decoder = Decoder::new(options);
    let mut sink = Sink::new(output_format, output, Output::stdout());
    for path in io::input_paths(paths) {
        let mut lines = Lines::open(&path)?;
        while let Some(line) = lines.next_line()? {
            let out = sink.output();
            let result = match decoder.canonical_step_line(line, out) {
                Ok(true) => Ok(()),
                Ok(false) => Record::parse(line).and_then(|record| decoder.record(&record, out)),
                Err(e) => Err(e),
            };
            if let Err(err) = result.and_then(|()| sink.end_record()) {
                return Err(err.context(lines.place()));
            }
            for warning in decoder.take_warnings() {
                cli::warn(NAME, format_args!("{}: {warning}", lines.place()));
            }
        }
    }
    decoder.finish(sink.output())?;
    sink.finish()
}
