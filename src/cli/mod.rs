//! The shell around a binary: exit statuses, `--help` / `--version`, the
//! turning of errors into one line on stderr, [`flags`], where every
//! command-line flag is defined once, and [`heap`], the allocator of a
//! binary that frees on one thread what another allocated.
//!
//! The top layer: it may import every layer below (the flags name the tools'
//! formats and lanes); nothing in the library imports it.

pub mod flags;
pub mod heap;

use std::process::ExitCode;

use crate::error::{Error, ErrorKind, Result};

impl From<lexopt::Error> for Error {
    fn from(err: lexopt::Error) -> Error {
        Error::usage(err.to_string())
    }
}

/// `NAME VERSION`, for `--version`.
pub fn version(name: &str) -> String {
    format!("{name} {}\n", env!("CARGO_PKG_VERSION"))
}

/// Runs a binary's body and maps its outcome to Unix manners: 0 on success
/// (and when stdout's reader went away), 1 for bad data, 2 for bad usage;
/// the message goes to stderr prefixed with the program name.
pub fn run(name: &str, body: impl FnOnce() -> Result<()>) -> ExitCode {
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => match err.kind() {
            ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            ErrorKind::Usage => {
                eprintln!("{name}: {err}");
                eprintln!("Try '{name} --help' for more information.");
                ExitCode::from(2)
            }
            ErrorKind::Data | ErrorKind::Output => {
                eprintln!("{name}: {err}");
                ExitCode::from(1)
            }
        },
    }
}

/// Writes `text` to stdout for `--help` / `--version`, ignoring a closed pipe.
pub fn print(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) => Err(Error::io("stdout", e)),
    }
}
