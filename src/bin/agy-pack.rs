//! agy-pack: an NDJSON row stream to agy conversation databases.

use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::cli::flags::{self, Bin, Program};
use agy_tools::error::{Error, Result};
use agy_tools::pack::{Batch, PackOptions, Packer};
use agy_tools::store::root;
use agy_tools::stream::io::{self, Lines, Output};

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Pack,
    about: "\
Usage: agy-pack [OPTIONS] [FILE]...

Reads the row stream of agy-dump (or agy-encode) from the FILEs, or standard
input when none is given or FILE is -, and writes each conversation to
ROOT/conversations/<id>.db and ROOT/brain/<id>/. Prints the path of each
database written.

A conversation is written to temporary files and renamed into place only
when all its records were good: on an error nothing of it is left behind,
the error is named on stderr and the other conversations are still written.
What a killed run left behind is cleared by the next run into the root.
",
    after: "\
Exit status: 0 every conversation written, 1 some not written (or nothing
could be), 2 usage error.
See agy-pack(1) and agy-dump(1) for the record formats.
",
    man: include_str!("../../man/agy-pack.1"),
};

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

/// `--reindex`: prints each row written; `false` when a database could
/// not be read.
fn reindex(root: &std::path::Path) -> Result<bool> {
    let mut warn = |message: String| agy_tools::error::warn(NAME, message);
    let done = agy_tools::pack::reindex(root, &mut warn)?;
    let mut out = Output::stdout();
    for (what, ids) in [("added", &done.added), ("updated", &done.updated)] {
        for id in ids {
            out.buf()
                .extend_from_slice(format!("{what} {id}\n").as_bytes());
        }
    }
    out.flush()?;
    if done.failed > 0 {
        warn(format!(
            "{} conversation database(s) could not be read (each named above)",
            done.failed
        ));
    }
    Ok(done.failed == 0)
}

/// Packs every input; `false` when something was not written.
fn run() -> Result<bool> {
    let Some(args) = flags::parse(&PROGRAM)? else {
        return Ok(true);
    };
    let root = match args.root {
        Some(dir) => dir,
        None => root::default_root(args.lane)?,
    };
    if args.reindex {
        if !args.paths.is_empty() || args.dry_run || args.force || args.replace_other {
            return Err(Error::usage(
                "--reindex reads no stream and takes no FILE, --dry-run, --force or --replace-other",
            ));
        }
        return reindex(&root);
    }
    if args.replace_other && !args.force {
        return Err(Error::usage("--replace-other goes with --force"));
    }
    let packer = Packer::new(
        PackOptions {
            root,
            force: args.force,
            dry_run: args.dry_run,
            replace_other: args.replace_other,
        },
        Box::new(|message| agy_tools::error::warn(NAME, message)),
    )?;
    let mut out = Output::stdout();
    let mut report = |message: String| eprintln!("{NAME}: {message}");
    let mut batch = Batch::new(packer, &mut out, &mut report);
    for input in io::input_paths(args.paths) {
        match Lines::open(&input) {
            Ok(mut lines) => batch.read(&mut lines)?,
            Err(e) => batch.lost_input(&input.to_string_lossy(), e),
        }
    }
    let summary = batch.end()?;
    out.flush()?;
    if summary.unchanged > 0 {
        eprintln!(
            "{NAME}: {} written, {} unchanged (the same to the byte as the conversation in place, left as it was)",
            summary.written, summary.unchanged
        );
    }
    if !summary.side_files.is_empty() {
        eprintln!(
            "{NAME}: side files brought up to date: {}",
            summary.side_files.join(", ")
        );
    }
    Ok(summary.failed == 0)
}
