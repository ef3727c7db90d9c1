//! agy-encode: chat messages to an agy row stream.

use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::cli::flags::{self, Bin, Program};
use agy_tools::cli::heap::Heap;
use agy_tools::encode::onto::{self, Merger};
use agy_tools::encode::{Encoder, Options};
use agy_tools::error::{Error, Result};
use agy_tools::format::{read, Format};
use agy_tools::stream::ahead::Records;
use agy_tools::stream::io::{self, Lines, Output};

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Encode,
    about: "\
Usage: agy-encode [OPTIONS] [FILE]...

Reads a message stream (from agy-decode, or converted from another agent's
transcript) and writes the row stream of a complete agy conversation for
agy-pack: the database's schema, one step per message and per tool call, the
trajectory metadata and the brain transcripts. System messages (from
agy-decode --all) become their bookkeeping steps again.

With no FILE, or when FILE is -, reads standard input.
",
    after: "\
Exit status: 0 success, 1 bad input or I/O error, 2 usage error.
See agy-encode(1) for how messages become steps.
",
    man: include_str!("../../man/agy-encode.1"),
};

// Records are parsed on a second thread once the input is long (and freed
// there); see cli::heap for why it has mimalloc for small blocks from
// then on, and why it is named here.
#[global_allocator]
static HEAP: Heap<mimalloc::MiMalloc> =
    Heap::new(mimalloc::MiMalloc, libmimalloc_sys::mi_is_in_heap_region);

fn main() -> ExitCode {
    cli::run(NAME, run)
}

fn run() -> Result<()> {
    let Some(args) = flags::parse(&PROGRAM)? else {
        return Ok(());
    };
    if args.all && args.onto.is_none() {
        return Err(Error::usage("--all is for --onto"));
    }
    if args.format != Format::Messages && args.onto.is_some() {
        let read = Format::names(Format::all().filter(|f| f.reader().is_some()));
        return Err(Error::usage(format!(
            "--onto reads a message stream, not --format {read}"
        )));
    }
    let mut out = Output::stdout();
    let paths = args.paths;
    if let Some(onto_path) = args.onto {
        let messages_on_stdin = paths.is_empty() || paths.iter().any(|p| p == "-");
        if onto_path == "-" && messages_on_stdin {
            return Err(Error::usage(
                "--onto - and the messages cannot both be standard input",
            ));
        }
        let merge = onto::Options {
            all: args.all,
            generic: args.generic,
        };
        let mut merger = Merger::open(&onto_path, merge)?;
        for path in io::input_paths(paths) {
            let mut lines = Lines::open(&path)?;
            while let Some(line) = lines.next_line()? {
                if let Err(err) = merger.line(line, &mut out) {
                    return Err(err.context(lines.place()));
                }
                for warning in merger.take_warnings() {
                    agy_tools::error::warn(NAME, format_args!("{}: {warning}", lines.place()));
                }
                // The merger keeps what it needs of a long message; its
                // buffer goes back before the step it names is settled.
                lines.shed();
            }
        }
        merger.finish(&mut out)?;
        for warning in merger.take_warnings() {
            agy_tools::error::warn(NAME, format_args!("{warning}"));
        }
        return out.flush();
    }
    let mut encoder = Encoder::new(Options {
        generic: args.generic,
        id: args.id,
    });
    for path in io::input_paths(paths) {
        if let Some(reader) = args.format.reader() {
            let mut lines = Lines::open(&path)?;
            read::encode(reader, &mut lines, &mut encoder, &mut out, args.verbose)?;
            continue;
        }
        // The records are parsed a batch ahead, on a second thread once
        // the input is long.
        let records = Records::open(&path)?.when_threading(|| HEAP.share());
        records.for_each(|place, record| {
            if let Err(err) = record.and_then(|record| encoder.record(record, &mut out)) {
                return Err(err.context(place));
            }
            for warning in encoder.take_warnings() {
                agy_tools::error::warn(NAME, format_args!("{place}: {warning}"));
            }
            Ok(())
        })?;
    }
    encoder.finish(&mut out)?;
    out.flush()
}
