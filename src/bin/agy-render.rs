//! agy-render: agy-decode's message stream as HTML pages or Markdown.

use std::ffi::OsString;
use std::process::ExitCode;

use agy_tools::cli;
use agy_tools::cli::flags::{self, Bin, Program};
use agy_tools::cli::heap::Heap;
use agy_tools::error::{Error, Result};
use agy_tools::render::{self, RenderOptions};

const NAME: &str = PROGRAM.bin.name();

const PROGRAM: Program = Program {
    bin: Bin::Render,
    about: "\
Usage: agy-render [OPTIONS] [FILE]...

Reads the message stream of agy-decode (plain or --all) and writes each
conversation for people: one self-contained HTML page (no external assets,
light and dark themes, no script) or Markdown. FILE '-' or none is stdin.
",
    after: "\
Exit status: 0 success; 1 when a conversation or input line could not be
rendered (the others are still written, each failure is named on stderr)
or on an I/O error; 2 usage error. See agy-render(1).
",
    man: include_str!("../../man/agy-render.1"),
};

// A long page's calls are rendered by a second thread, their inputs
// copied here and freed there; see cli::heap for why that wants its own
// allocator, and why it is named here.
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
    let options = RenderOptions {
        format: args.render_format,
        out_dir: args.out,
        threading: Some(|| HEAP.share()),
    };
    let mut inputs = args.paths;
    if inputs.is_empty() {
        inputs.push(OsString::from("-"));
    }
    let mut warn = |message: String| agy_tools::error::warn(NAME, message);
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
