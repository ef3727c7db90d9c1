//! Errors that say where and what.
//!
//! Every binary maps an [`Error`] to its exit status: usage mistakes exit 2,
//! everything else 1. A write to a closed pipe is not an error for a Unix
//! filter (`agy-dump | head`), so it has a kind of its own that the binaries
//! turn into a quiet, successful exit.

use std::fmt;
use std::io;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad command line: exit status 2.
    Usage,
    /// Bad input data or a failed operation: exit status 1.
    Data,
    /// The reader of our standard output went away.
    BrokenPipe,
    /// Writing our own output failed (a full disk, say): exit status 1,
    /// and the end of a batch, since nothing after it can be written.
    Output,
}

#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn usage(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Usage,
            message: message.into(),
        }
    }

    pub fn data(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Data,
            message: message.into(),
        }
    }

    /// An I/O error on `what` (a path, "stdout", ...). A broken pipe keeps
    /// its own kind so the caller can exit quietly.
    pub fn io(what: impl fmt::Display, err: io::Error) -> Error {
        if err.kind() == io::ErrorKind::BrokenPipe {
            return Error {
                kind: ErrorKind::BrokenPipe,
                message: format!("{what}: {err}"),
            };
        }
        Error::data(format!("{what}: {err}"))
    }

    /// A failure writing our own output, told apart by its kind (not by
    /// its text) from a failure reading one of many inputs.
    pub fn output(err: io::Error) -> Error {
        match Error::io("stdout", err) {
            e if e.kind == ErrorKind::BrokenPipe => e,
            e => Error {
                kind: ErrorKind::Output,
                ..e
            },
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// Prefixes the message with where it happened (`file:line`, a table).
    pub fn context(mut self, place: impl fmt::Display) -> Error {
        self.message = format!("{place}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Adds a place to the error of a `Result`.
pub trait Context<T> {
    fn context(self, place: impl fmt::Display) -> Result<T>;
    fn with_context<D: fmt::Display>(self, place: impl FnOnce() -> D) -> Result<T>;
}

impl<T> Context<T> for Result<T> {
    fn context(self, place: impl fmt::Display) -> Result<T> {
        self.map_err(|e| e.context(place))
    }

    fn with_context<D: fmt::Display>(self, place: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.context(place()))
    }
}

impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Error {
        Error::data(format!("sqlite: {err}"))
    }
}

/// Prints a warning line on stderr, prefixed with the program's name: data
/// that could be read only in part, or input that was changed to fit.
pub fn warn(name: &str, message: impl std::fmt::Display) {
    eprintln!("{name}: warning: {message}");
}
