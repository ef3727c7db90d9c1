//! Line-oriented input and buffered output for the filters.
//!
//! Every binary reads NDJSON through [`Lines`], which names the current
//! `file:line` for error messages, and writes through one [`Output`] per
//! process: records are formatted straight into its buffer, which is handed
//! to stdout in large writes.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};

use crate::error::{Error, Result};
use crate::stream::heads::{LineHeads, Tally};
use crate::stream::json;
use crate::stream::writer::{Writer, WRITE_HERE_OVER};

/// Reads newline-delimited records from one input (`-` is stdin).
///
/// Lines are returned as slices of one buffer, found with `memchr`: a line
/// is copied only when it straddles two reads (and then once), not into a
/// second buffer as `BufRead::read_until` would. The buffer grows to the
/// longest line and no further.
pub struct Lines {
    reader: Box<dyn Read + Send>,
    name: String,
    line_number: u64,
    buf: Vec<u8>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
}

/// Room made in the buffer: [`FIRST_READ`] at first, so that a small
/// input touches (and zero-fills) little memory, then, whenever less than
/// `FIRST_READ` is left, as much again as the buffer holds, up to a MiB (a
/// pipe's whole buffer); each read asks for at most [`READ_CAP`] of it.
/// Growing by a MiB at once zero-filled (and faulted in) a MiB for an input
/// of a few hundred KiB: a tenth of agy-decode's run on examples/sample.
const READ_SIZE: usize = 1 << 20;
const FIRST_READ: usize = 1 << 16;

/// The most one read asks for, however much room the buffer has. A buffer
/// grown to a long line (megabytes) was filled whole by each read: the
/// kernel's copy then went out to memory and the parse read it back from
/// there. A read of a few hundred KiB stays in the cache until it is
/// parsed: agy-decode on BIGW's rows, from a file, took 0.65 s CPU and
/// then 0.60 s (64, 128 and 256 KiB did alike); agy-encode and agy-render
/// on its messages 4 % less.
const READ_CAP: usize = 256 << 10;

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

    pub fn from_reader(name: &str, reader: Box<dyn Read + Send>) -> Lines {
        Lines {
            reader,
            name: name.to_string(),
            line_number: 0,
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
        }
    }

    /// The next non-blank line without its line ending, or `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>> {
        Ok(self.next_line_span()?.map(|span| &self.buf[span]))
    }

    /// [`Lines::next_line`] with its line number, for a reader that keeps
    /// the line while it may still have to say where it was: the place is
    /// [`Lines::name`] and the number, formatted only when needed.
    pub fn next_numbered_line(&mut self) -> Result<Option<(u64, &[u8])>> {
        Ok(self
            .next_line_span()?
            .map(|span| (self.line_number, &self.buf[span])))
    }

    /// Where in `buf` the next non-blank line is, without its line ending.
    fn next_line_span(&mut self) -> Result<Option<std::ops::Range<usize>>> {
        loop {
            let (line_start, line_end) = match self.next_span()? {
                Some(span) => span,
                None => return Ok(None),
            };
            self.line_number += 1;
            let mut line = &self.buf[line_start..line_end];
            while let [rest @ .., b'\n' | b'\r'] = line {
                line = rest;
            }
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            return Ok(Some(line_start..line_start + line.len()));
        }
    }

    /// The span of the next line in `buf`, reading more as needed; the last
    /// line may lack its newline.
    fn next_span(&mut self) -> Result<Option<(usize, usize)>> {
        let mut searched = self.start;
        loop {
            if let Some(at) = memchr::memchr(b'\n', &self.buf[searched..self.end]) {
                let span = (self.start, searched + at + 1);
                self.start = span.1;
                return Ok(Some(span));
            }
            searched = self.end;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let span = (self.start, self.end);
                self.start = self.end;
                return Ok(Some(span));
            }
            // Make room: move the partial line to the front, then grow.
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                searched -= self.start;
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() - self.end < FIRST_READ {
                let room = self.buf.len().clamp(FIRST_READ, READ_SIZE);
                self.buf.resize(self.end + room, 0);
            }
            let n = loop {
                let room = self.buf.len().min(self.end + READ_CAP);
                match self.reader.read(&mut self.buf[self.end..room]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Error::io(&self.name, e)),
                }
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
    }

    /// [`Lines::next_line`] into `line`, owned, for a reader that keeps it:
    /// a line over [`KEEP_AT_MOST`] is not copied but takes the buffer it
    /// was read into (the few bytes read after it move to a new one), so
    /// that the row is never in memory twice. False at the end.
    pub fn next_line_into(&mut self, line: &mut Vec<u8>) -> Result<bool> {
        let Some(span) = self.next_line_span()? else {
            return Ok(false);
        };
        if span.len() <= KEEP_AT_MOST {
            line.clear();
            line.extend_from_slice(&self.buf[span]);
            return Ok(true);
        }
        let rest = self.buf[self.start..self.end].to_vec();
        let mut taken = std::mem::replace(&mut self.buf, rest);
        self.end -= self.start;
        self.start = 0;
        taken.truncate(span.end);
        // A line longer than a read was moved to the front to grow.
        taken.drain(..span.start);
        *line = taken;
        Ok(true)
    }

    /// Gives back a buffer that a line over [`KEEP_AT_MOST`] grew, keeping
    /// the bytes not yet returned: for a reader that has copied that line
    /// out (agy-encode --onto keeps the original row while it merges), so
    /// the row is not held twice.
    pub fn shed(&mut self) {
        if self.buf.capacity() > KEEP_AT_MOST {
            self.buf = self.buf[self.start..self.end].to_vec();
            self.end -= self.start;
            self.start = 0;
        }
    }

    /// `name:line` of the line last returned.
    pub fn place(&self) -> String {
        Place {
            name: &self.name,
            line: self.line_number,
        }
        .to_string()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn line_number(&self) -> u64 {
        self.line_number
    }
}

/// `name:line`, where a record was read, formatted only when something
/// is said about it (for a reader that keeps records past the next line:
/// [`Lines::next_numbered_line`]).
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    pub name: &'a str,
    pub line: u64,
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.name, self.line)
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

/// Buffers that are reused from record to record keep their allocation up
/// to this size. Keeping the largest row's buffer saves faulting its pages
/// in again for the next large one; beyond this, a row of tens of MB, the
/// buffer is given back once used ([`shed`]), or the copies a tool keeps of
/// such a row (its line, its payload, its output) would all stay at once
/// and put peak memory at three or four times the row.
pub const KEEP_AT_MOST: usize = 32 << 20;

/// Gives `buf`'s allocation back when it is over [`KEEP_AT_MOST`].
pub fn shed(buf: &mut Vec<u8>) {
    if buf.capacity() > KEEP_AT_MOST {
        *buf = Vec::new();
    }
}

/// A process's standard output: records are formatted into [`Output::buf`]
/// and flushed once the buffer passes a threshold.
pub struct Output {
    buf: Vec<u8>,
    sink: Sink,
    /// The thread writing the buffers, when standard output is a pipe.
    writer: Option<Writer>,
    /// The heads of the lines written, when a writer counts its records
    /// ([`Output::count_lines`]), and how much of `buf` they have seen.
    heads: Option<Box<(LineHeads, usize)>>,
}

enum Sink {
    /// Our own descriptor for standard output.
    File(File),
    Writer(Box<dyn Write>),
}

/// The buffer is written out once it holds this much. Each write into a
/// pipe hands the buffer to the writer thread and wakes it, and the thread's
/// write wakes the reader: on a virtual machine every wakeup of a thread
/// on the other core is an interrupt between processors, which costs the
/// hypervisor's round trip. `agy-dump | agy-decode` on 2,000 conversations
/// with their `-wal` (15 shuffled rounds): 128 KiB 1.19 s wall, 1.99 s CPU;
/// 256 KiB and 512 KiB both about 6 % less CPU and 8 % less wall; 1 MiB
/// between. Memory stays a few MiB: two buffers this size, and one more
/// that the thread writes.
const FLUSH_AT: usize = 1 << 19;

/// Bytes read per round when a file is copied to a sink that is not a file.
const COPY_CHUNK: usize = 1 << 16;

impl Output {
    /// Standard output, written through a duplicate of its descriptor: std's
    /// `Stdout` is line-buffered and searches every write for its last
    /// newline, and a plain file lets [`Output::copy_from_file`] hand the
    /// copying to the kernel.
    ///
    /// To a pipe the buffers are written by a thread of their own
    /// ([`Writer`]), so that the next records are made while the last are
    /// copied into the pipe.
    pub fn stdout() -> Output {
        use std::os::fd::AsFd;
        grow_pipe(1);
        match io::stdout().as_fd().try_clone_to_owned() {
            Ok(fd) => Output::file(File::from(fd)),
            Err(_) => Output::to(Box::new(io::stdout().lock())),
        }
    }

    /// A file, written like standard output: what [`Output::copy_from_file`]
    /// copies into it is moved by the kernel, and a pipe is written by a
    /// thread of its own.
    pub fn file(file: File) -> Output {
        use std::os::unix::fs::FileTypeExt;
        let pipe = file.metadata().is_ok_and(|m| m.file_type().is_fifo());
        // Best effort: without a second descriptor or thread, the buffers
        // are written here.
        let writer = pipe
            .then(|| file.try_clone().ok().and_then(|f| Writer::start(f).ok()))
            .flatten();
        Output {
            writer,
            ..Output::with_sink(Sink::File(file))
        }
    }

    pub fn to(sink: Box<dyn Write>) -> Output {
        Output::with_sink(Sink::Writer(sink))
    }

    /// An output into `captured`, read back with [`Captured::take`].
    pub fn captured(captured: &Captured) -> Output {
        Output::to(Box::new(captured.clone()))
    }

    fn with_sink(sink: Sink) -> Output {
        Output {
            buf: Vec::with_capacity(FLUSH_AT * 2),
            sink,
            writer: None,
            heads: None,
        }
    }

    /// Hands the head of every line written from now on to `tally` (the
    /// lines buffered so far go to the one before, which is given back).
    /// Every byte is then looked at once more (a `memchr` for line ends),
    /// and a file is copied through the buffer.
    pub fn count_lines(&mut self, tally: Box<dyn Tally>) -> Option<Box<dyn Tally>> {
        self.see_buffered();
        match &mut self.heads {
            Some(heads) => Some(heads.0.replace(tally)),
            None => {
                let seen = self.buf.len();
                self.heads = Some(Box::new((LineHeads::new(tally), seen)));
                None
            }
        }
    }

    /// Shows the heads what was added to the buffer since they last looked.
    fn see_buffered(&mut self) {
        if let Some(heads) = &mut self.heads {
            let (lines, seen) = &mut **heads;
            lines.see(&self.buf[*seen..]);
            *seen = self.buf.len();
        }
    }

    fn sink(&mut self) -> &mut dyn Write {
        match &mut self.sink {
            Sink::File(file) => file,
            Sink::Writer(writer) => writer,
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

    /// [`Output::end_record`] for a record appended to the buffer whole
    /// from byte `start` of it ([`Output::buf`]'s length before it): one
    /// line, its `\n` last and no other, whose head the heads take without
    /// looking through it ([`LineHeads::see_line`]). What came before it
    /// is looked through as ever.
    pub fn end_line(&mut self, start: usize) -> Result<()> {
        if let Some(heads) = &mut self.heads {
            let (lines, seen) = &mut **heads;
            // A record part of which went out already (a long blob's hex)
            // had its head taken then; `start`, from before that, is now
            // past the buffer or inside what followed, and either way
            // see_line finds a line in progress and looks through it.
            if *seen <= start && start <= self.buf.len() {
                lines.see(&self.buf[*seen..start]);
                lines.see_line(&self.buf[start..]);
            } else {
                lines.see(&self.buf[*seen..]);
            }
            *seen = self.buf.len();
        }
        self.end_record()
    }

    fn write_out(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.see_buffered();
        if let Some(heads) = &mut self.heads {
            heads.1 = 0;
        }
        if let Some(writer) = &mut self.writer {
            if self.buf.len() <= WRITE_HERE_OVER {
                let buf = std::mem::take(&mut self.buf);
                self.buf = writer.hand_over(buf).map_err(Error::output)?;
                return Ok(());
            }
            // A large record: written here, after what the thread holds.
            writer.settle().map_err(Error::output)?;
        }
        // The buffer keeps what the largest record made it grow to: giving
        // that back after each such record made every later one fault the
        // same pages in again.
        let buf = std::mem::take(&mut self.buf);
        let written = self.sink().write_all(&buf);
        self.buf = buf;
        self.buf.clear();
        shed(&mut self.buf);
        written.map_err(Error::output)
    }

    /// Appends `bytes` as a quoted hex string, as [`json::write_hex`] does,
    /// but writes the buffer out as it fills: the hex of a blob of tens of
    /// MB (a 50 MB user text is a 100 MB payload, a 200 MB line) never sits
    /// in the buffer whole.
    pub fn write_hex_str(&mut self, bytes: &[u8]) -> Result<()> {
        self.buf.push(b'"');
        self.write_hex_body(bytes)?;
        self.buf.push(b'"');
        Ok(())
    }

    /// [`Output::write_hex_str`] without the quotes.
    pub fn write_hex_body(&mut self, bytes: &[u8]) -> Result<()> {
        for piece in bytes.chunks(FLUSH_AT) {
            json::write_hex_body(&mut self.buf, piece);
            self.end_record()?;
        }
        Ok(())
    }

    /// Writes `bytes` after everything buffered, straight to the sink
    /// rather than through the buffer, for a large piece of a record that
    /// is already in memory elsewhere.
    pub fn write_through(&mut self, bytes: &[u8]) -> Result<()> {
        self.write_through_seen(bytes, LineHeads::see)
    }

    /// [`Output::write_through`] for bytes inside a line (escaped JSON
    /// text), which hold no line end: the heads take them without looking
    /// for one ([`LineHeads::see_within`]).
    pub fn write_through_within_line(&mut self, bytes: &[u8]) -> Result<()> {
        self.write_through_seen(bytes, LineHeads::see_within)
    }

    fn write_through_seen(&mut self, bytes: &[u8], see: fn(&mut LineHeads, &[u8])) -> Result<()> {
        self.write_out()?;
        self.settle()?;
        if let Some(heads) = &mut self.heads {
            see(&mut heads.0, bytes);
        }
        self.sink().write_all(bytes).map_err(Error::output)
    }

    /// Waits until the writing thread, if any, has written everything it
    /// was given, before this thread writes to the sink itself.
    fn settle(&mut self) -> Result<()> {
        match &mut self.writer {
            Some(writer) => writer.settle().map_err(Error::output),
            None => Ok(()),
        }
    }

    /// Writes `len` bytes of `file`, from its current position, after
    /// everything buffered. To standard output the kernel moves them
    /// (`copy_file_range`, `sendfile` or `splice`, as std's `io::copy`
    /// chooses), so they never pass through this process's memory.
    pub fn copy_from_file(&mut self, file: &mut File, len: u64) -> Result<()> {
        const SPOOL: &str = "temporary spool file";
        if matches!(self.sink, Sink::File(_)) && self.heads.is_none() {
            self.write_out()?;
            self.settle()?;
            let Sink::File(sink) = &mut self.sink else {
                unreachable!("checked just above")
            };
            let copied = io::copy(&mut Read::take(&mut *file, len), sink)
                .map_err(|e| Error::io(format!("copying a {SPOOL} to stdout"), e))?;
            if copied != len {
                let e = io::Error::new(io::ErrorKind::UnexpectedEof, "file ended early");
                return Err(Error::io(SPOOL, e));
            }
            return Ok(());
        }
        let mut left = len;
        while left > 0 {
            let want = left.min(COPY_CHUNK as u64) as usize;
            let at = self.buf.len();
            self.buf.resize(at + want, 0);
            file.read_exact(&mut self.buf[at..])
                .map_err(|e| Error::io(SPOOL, e))?;
            left -= want as u64;
            self.end_record()?;
        }
        Ok(())
    }

    /// Writes everything buffered and flushes the sink.
    pub fn flush(&mut self) -> Result<()> {
        self.write_out()?;
        self.settle()?;
        self.sink().flush().map_err(Error::output)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read, so lines
    /// straddle reads.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn a_long_line_is_taken_with_its_buffer() {
        let long = "y".repeat(KEEP_AT_MOST + 3);
        let text = format!("short\n{long}\nnext\nlast");
        let reader = Trickle {
            data: text.into_bytes(),
            at: 0,
            step: usize::MAX,
        };
        let mut lines = Lines::from_reader("t", Box::new(reader));
        let mut line = Vec::new();
        let mut got = Vec::new();
        while lines.next_line_into(&mut line).unwrap() {
            got.push(String::from_utf8(line.clone()).unwrap());
        }
        assert_eq!(got, ["short", long.as_str(), "next", "last"]);
        assert!(
            lines.buf.capacity() <= KEEP_AT_MOST,
            "the buffer went with the line"
        );
    }

    /// An output into a pipe, and a thread reading everything from it,
    /// slowly, so that the pipe is full and the writing thread waits with
    /// buffers in hand while the output goes on.
    fn piped_output() -> (Output, std::thread::JoinHandle<Vec<u8>>) {
        let (mut reader, writer) = io::pipe().unwrap();
        let drain = std::thread::spawn(move || {
            let mut all = Vec::new();
            let mut piece = vec![0; 1 << 18];
            std::thread::sleep(std::time::Duration::from_millis(30));
            loop {
                std::thread::sleep(std::time::Duration::from_millis(2));
                match reader.read(&mut piece).unwrap() {
                    0 => return all,
                    n => all.extend_from_slice(&piece[..n]),
                }
            }
        });
        let file = File::from(std::os::fd::OwnedFd::from(writer));
        (Output::file(file), drain)
    }

    #[test]
    fn a_pipe_gets_every_byte_in_order_from_the_writing_thread() {
        let (mut out, drain) = piped_output();
        assert!(out.writer.is_some(), "a pipe is written by a thread");
        let mut expected = Vec::new();
        let mut spool = tempfile_with(b"spooled bytes\n");
        for i in 0..3000u32 {
            let record = format!(
                "{{\"n\":{i},\"pad\":\"{}\"}}\n",
                "p".repeat(i as usize % 700)
            );
            out.buf().extend_from_slice(record.as_bytes());
            expected.extend_from_slice(record.as_bytes());
            out.end_record().unwrap();
            match i {
                // A record over what is handed to the thread, written here.
                1000 => {
                    let big = vec![b'b'; WRITE_HERE_OVER + 10];
                    out.buf().extend_from_slice(&big);
                    expected.extend_from_slice(&big);
                    out.end_record().unwrap();
                }
                2000 => {
                    out.write_through(b"through\n").unwrap();
                    expected.extend_from_slice(b"through\n");
                }
                2500 => {
                    use std::io::Seek;
                    spool.rewind().unwrap();
                    out.copy_from_file(&mut spool, 14).unwrap();
                    expected.extend_from_slice(b"spooled bytes\n");
                }
                _ => {}
            }
        }
        out.flush().unwrap();
        drop(out);
        assert!(drain.join().unwrap() == expected);
    }

    /// A file holding `bytes`, unlinked.
    fn tempfile_with(bytes: &[u8]) -> File {
        let path = std::env::temp_dir().join(format!("agy-io-test-{}", std::process::id()));
        let mut file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        file.write_all(bytes).unwrap();
        file
    }

    #[test]
    fn a_closed_pipe_is_reported_by_the_writing_thread() {
        let (reader, writer) = io::pipe().unwrap();
        drop(reader);
        let mut out = Output::file(File::from(std::os::fd::OwnedFd::from(writer)));
        let mut failed = None;
        for _ in 0..100 {
            out.buf().extend_from_slice(&[b'x'; 1 << 16]);
            if let Err(e) = out.end_record().and_then(|()| out.flush()) {
                failed = Some(e);
                break;
            }
        }
        let failed = failed.expect("writing into a closed pipe fails");
        assert_eq!(
            failed.kind(),
            crate::error::ErrorKind::BrokenPipe,
            "{failed}"
        );
    }

    #[test]
    fn lines_survive_any_read_size() {
        let long = "x".repeat(3 * READ_SIZE + 7);
        let text = format!("a\r\n\n  \n{long}\nb\nlast");
        for step in [1, 2, 7, 4096, READ_SIZE, usize::MAX] {
            let reader = Trickle {
                data: text.clone().into_bytes(),
                at: 0,
                step,
            };
            let mut lines = Lines::from_reader("t", Box::new(reader));
            let mut got = Vec::new();
            while let Some(line) = lines.next_line().unwrap() {
                got.push((String::from_utf8(line.to_vec()).unwrap(), lines.place()));
            }
            let expected = vec![
                ("a".to_string(), "t:1".to_string()),
                (long.clone(), "t:4".to_string()),
                ("b".to_string(), "t:5".to_string()),
                ("last".to_string(), "t:6".to_string()),
            ];
            assert_eq!(got, expected, "step {step}");
        }
    }
}

/// Bytes written to an [`Output`] kept in memory, for a reader in the same
/// process: agy-decode's format conversion reads its own message stream
/// back this way, and tests and fuzz targets read what a tool wrote.
#[derive(Clone, Default)]
pub struct Captured(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Captured {
    /// What was written (and flushed) since the last take.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.borrow_mut())
    }

    /// Hands a taken buffer back, emptied, so the next writes reuse its
    /// allocation (unless something was written meanwhile).
    pub fn give_back(&self, mut bytes: Vec<u8>) {
        bytes.clear();
        shed(&mut bytes);
        let mut buffer = self.0.borrow_mut();
        if buffer.is_empty() {
            *buffer = bytes;
        }
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
