//! agy-decode: an agy row stream to chat messages.

use std::path::Path;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::cli::flags::{self, Bin, Program};
use agy_tools::decode::{store, Decoder, Options};
use agy_tools::error::{Error, Result};
use agy_tools::format::{self, Format, Sink, Thinking};
use agy_tools::stream::io::{self, Lines, Output};

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Decode,
    about: "\
Usage: agy-decode [OPTIONS] [FILE]...

Reads the row stream of agy-dump and writes each conversation as chat
messages, one JSON object per line: user and assistant messages with text,
thinking, tool_use, tool_result and image blocks, then one meta record.

With no FILE, or when FILE is -, reads standard input. A FILE that is a
conversation database or a data root is read as `agy-dump FILE` would write
it, in this process (the same output; its brain transcripts are not read).
",
    after: "\
Exit status: 0 success, 1 bad input, a conversation not whole or not read,
or an I/O error; 2 usage error. See agy-decode(1) for the message stream.
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
    // Conversations of a store that could not be read at all.
    let mut unread = 0;
    for path in io::input_paths(args.paths) {
        if path != "-" && store::is_store(Path::new(&path)) {
            let warn = Box::new(|message: String| agy_tools::error::warn(NAME, message));
            let read = store::read(Path::new(&path), decoder, sink, warn);
            (decoder, sink) = (read.decoder, read.messages);
            let outcome = read.outcome?;
            unread += outcome.failed - outcome.cut_short;
            continue;
        }
        let mut lines = Lines::open(&path)?;
        while let Some(line) = lines.next_line()? {
            let result = decoder
                .line(line, sink.output())
                .and_then(|()| sink.end_record());
            if let Err(err) = result {
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
    let mut problems = Vec::new();
    if unread > 0 {
        problems.push(format!(
            "{unread} conversation(s) could not be read (each named above)"
        ));
    }
    if decoder.incomplete > 0 {
        problems.push(format!(
            "{} conversation(s) not whole (each named above, and marked \"incomplete\" in its meta record)",
            decoder.incomplete
        ));
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(Error::data(problems.join("; "))),
    }
}
