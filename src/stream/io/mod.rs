//! Line-oriented input and buffered output for the filters.
//!
//! Every binary reads NDJSON through [`Lines`], which names the current
//! `file:line` for error messages, and writes through one [`Output`] per
//! process: records are formatted straight into its buffer, which is handed
//! to stdout in large writes.

mod lines;

use std::fs::File;
use std::io::{self, Read, Write};

pub use lines::{input_paths, LineBatch, Lines, Place};

use crate::error::{Error, Result};
use crate::stream::heads::{LineHeads, Tally};
use crate::stream::json;
use crate::stream::writer::{Writer, WRITE_HERE_OVER};

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
