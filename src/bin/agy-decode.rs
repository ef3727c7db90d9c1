//! agy-decode: an agy row stream to chat messages.

use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::cli::flags::{self, Bin, Program};
use agy_tools::decode::{Decoder, Options};
use agy_tools::error::{Error, Result};
use agy_tools::format::{self, Format, Sink, Thinking};
use agy_tools::stream::io::{self, Lines, Output};
use agy_tools::stream::record::Record;

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Decode,
    about: "\
Usage: agy-decode [OPTIONS] [FILE]...

Reads the row stream of agy-dump and writes each conversation as chat
messages, one JSON object per line: user and assistant messages with text,
thinking, tool_use, tool_result and image blocks, then one meta record.

With no FILE, or when FILE is -, reads standard input.
",
    after: "\
Exit status: 0 success, 1 bad input or I/O error, 2 usage error.
See agy-decode(1) for the message stream.
",
    man: include_str!("../../man/agy-decode.1"),
};

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    let Some(args) = flags::parse(&PROGRAM)? else {
        return Ok(());
    };
    let options = Options {
        all: args.all,
        index: false,
    };
    let output = format::Options {
        thinking: args.thinking,
        verbose: args.verbose,
        out_dir: args.out_dir,
        cwd: args.cwd,
        force: args.force,
    };
    let output_format = args.format;
    let sessions_only = output.out_dir.is_some() || output.cwd.is_some() || output.force;
    if sessions_only && !output_format.is_session() {
        let sessions = Format::names(Format::all().filter(|f| f.is_session()));
        return Err(Error::usage(format!(
            "--out-dir, --cwd and --force go with --format {sessions}"
        )));
    }
    let converting = output.verbose || output.thinking != Thinking::default();
    if converting && output_format.writer().is_none() {
        let written = Format::names(Format::all().filter(|f| f.writer().is_some()));
        return Err(Error::usage(format!(
            "--thinking and --verbose go with --format {written}"
        )));
    }
    let mut decoder = Decoder::new(options);
    let mut sink = Sink::new(output_format, output, Output::stdout());
    for path in io::input_paths(args.paths) {
        let mut lines = Lines::open(&path)?;
        while let Some(line) = lines.next_line()? {
            let out = sink.output();
            let fast = decoder
                .canonical_step_line(line, out)
                .and_then(|done| Ok(done || decoder.canonical_file_line(line, out)?));
            let result = match fast {
                Ok(true) => Ok(()),
                Ok(false) => Record::parse(line).and_then(|record| decoder.record(&record, out)),
                Err(e) => Err(e),
            };
            if let Err(err) = result.and_then(|()| sink.end_record()) {
                return Err(err.context(lines.place()));
            }
            for warning in decoder.take_warnings() {
                agy_tools::error::warn(NAME, format_args!("{}: {warning}", lines.place()));
            }
        }
    }
    decoder.finish(sink.output())?;
    for warning in decoder.take_warnings() {
        agy_tools::error::warn(NAME, format_args!("{warning}"));
    }
    sink.finish()?;
    match decoder.incomplete {
        0 => Ok(()),
        n => Err(Error::data(format!(
            "{n} conversation(s) not whole (each named above, and marked \"incomplete\" in its meta record)"
        ))),
    }
}
