//! agy-render: agy-decode's message stream as HTML pages or Markdown.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::error::{Error, Result};
use agy_tools::render::{self, Format, RenderOptions};

const NAME: &str = "agy-render";

const USAGE: &str = "\
Usage: agy-render [OPTIONS] [FILE]...

Reads the message stream of agy-decode (plain or --all) and writes each
conversation for people: one self-contained HTML page (no external assets,
light and dark themes, no script) or Markdown. FILE '-' or none is stdin.

Options:
  -f, --format FORMAT  html (default) or markdown
  -o, --out DIR        write DIR/<id>.html (or .md) per conversation and an
                       index of every conversation in DIR; without it, one
                       document with every conversation goes to stdout
  -h, --help           print this help
  -V, --version        print the version

Exit status: 0 success; 1 when a conversation or input line could not be
rendered (the others are still written, each failure is named on stderr)
or on an I/O error; 2 usage error. See agy-render(1).
";

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    use lexopt::prelude::*;
    let mut options = RenderOptions::default();
    let mut inputs: Vec<OsString> = Vec::new();
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Short('f') | Long("format") => {
                options.format = Format::parse(&parser.value()?.string()?)?
            }
            Short('o') | Long("out") => options.out_dir = Some(PathBuf::from(parser.value()?)),
            Short('h') | Long("help") => return cli::print(USAGE),
            Short('V') | Long("version") => return cli::print(&cli::version(NAME)),
            Value(path) => inputs.push(path),
            _ => return Err(arg.unexpected().into()),
        }
    }
    if inputs.is_empty() {
        inputs.push(OsString::from("-"));
    }
    let mut warn = |message: String| cli::warn(NAME, message);
    let outcome = render::render(&inputs, &options, &mut warn)?;
    if outcome.is_clean() {
        return Ok(());
    }
    let mut parts = Vec::new();
    if outcome.failed > 0 {
        parts.push(format!(
            "{} of {} conversations failed",
            outcome.failed, outcome.conversations
        ));
    }
    if outcome.unreadable_lines > 0 {
        parts.push(format!(
            "{} input lines could not be read",
            outcome.unreadable_lines
        ));
    }
    Err(Error::data(format!(
        "{} (each named above)",
        parts.join("; ")
    )))
}
