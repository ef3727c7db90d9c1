//! Line-oriented input and buffered output for the filters.
//!
//! Every binary reads NDJSON through [`Lines`], which names the current
//! `file:line` for error messages, and writes through one [`Output`] per
//! process: records are formatted straight into its buffer, which is handed
//! to stdout in large writes.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};

use crate::error::{Error, Result};

/// Reads newline-delimited records from one input (`-` is stdin).
pub struct Lines {
    reader: BufReader<Box<dyn Read>>,
    name: String,
    line_number: u64,
    buf: Vec<u8>,
}

impl Lines {
    /// Opens `path`, or standard input for `-`.
    pub fn open(path: &OsStr) -> Result<Lines> {
        if path == "-" {
            grow_pipe(0);
            return Ok(Lines::from_reader("stdin", Box::new(io::stdin())));
        }
        let name = path.to_string_lossy().into_owned();
        let file = File::open(path).map_err(|e| Error::io(&name, e))?;
        Ok(Lines::from_reader(&name, Box::new(file)))
    }

    pub fn from_reader(name: &str, reader: Box<dyn Read>) -> Lines {
        Lines {
            reader: BufReader::with_capacity(1 << 16, reader),
            name: name.to_string(),
            line_number: 0,
            buf: Vec::new(),
        }
    }

    /// The next non-blank line without its line ending, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>> {
        loop {
            self.buf.clear();
            let n = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::io(&self.name, e))?;
            if n == 0 {
                return Ok(None);
            }
            self.line_number += 1;
            let mut line = &self.buf[..];
            while let [rest @ .., b'\n' | b'\r'] = line {
                line = rest;
            }
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let len = line.len();
            return Ok(Some(&self.buf[..len]));
        }
    }

    /// `name:line` of the line last returned.
    pub fn place(&self) -> String {
        format!("{}:{}", self.name, self.line_number)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn line_number(&self) -> u64 {
        self.line_number
    }
}

/// The inputs named on a command line; none means stdin.
pub fn input_paths(paths: Vec<OsString>) -> Vec<OsString> {
    if paths.is_empty() {
        vec![OsString::from("-")]
    } else {
        paths
    }
}

/// A process's standard output: records are formatted into [`Output::buf`]
/// and flushed once the buffer passes a threshold.
pub struct Output {
    buf: Vec<u8>,
    sink: Box<dyn Write>,
}

const FLUSH_AT: usize = 1 << 17;

impl Output {
    pub fn stdout() -> Output {
        grow_pipe(1);
        Output::to(Box::new(io::stdout().lock()))
    }

    pub fn to(sink: Box<dyn Write>) -> Output {
        Output {
            buf: Vec::with_capacity(FLUSH_AT * 2),
            sink,
        }
    }

    /// The buffer to append whole records to; call [`Output::end_record`]
    /// after each.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Writes the buffer out once it is large enough.
    pub fn end_record(&mut self) -> Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.write_out()?;
        }
        Ok(())
    }

    fn write_out(&mut self) -> Result<()> {
        self.sink
            .write_all(&self.buf)
            .map_err(|e| Error::io("stdout", e))?;
        self.buf.clear();
        if self.buf.capacity() > FLUSH_AT * 8 {
            // One huge record must not pin its memory for the rest of the run.
            self.buf.shrink_to(FLUSH_AT * 2);
        }
        Ok(())
    }

    /// Writes everything buffered and flushes the sink.
    pub fn flush(&mut self) -> Result<()> {
        self.write_out()?;
        self.sink.flush().map_err(|e| Error::io("stdout", e))
    }
}

/// Asks Linux for a 1 MiB pipe buffer on `fd` when it is a pipe (it is 64
/// KiB by default). A pipeline of agy tools moves hundreds of megabytes, and
/// with the default buffer the writer and reader wake each other for every
/// 64 KiB: on two cores that context switching cost as much as the work.
/// Best effort: anything but success is ignored.
#[cfg(target_os = "linux")]
pub fn grow_pipe(fd: i32) {
    extern "C" {
        fn fcntl(fd: i32, cmd: i32, ...) -> i32;
    }
    const F_SETPIPE_SZ: i32 = 1031;
    // SAFETY: fcntl with F_SETPIPE_SZ takes an int and touches no memory;
    // on a non-pipe descriptor it fails with EBADF/EINVAL, which we ignore.
    unsafe {
        fcntl(fd, F_SETPIPE_SZ, 1i32 << 20);
    }
}

#[cfg(not(target_os = "linux"))]
pub fn grow_pipe(_fd: i32) {}
