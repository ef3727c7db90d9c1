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
