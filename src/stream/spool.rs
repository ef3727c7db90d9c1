//! An append-only byte store for output that cannot be written yet: held in
//! memory up to [`Spool::IN_MEMORY`] bytes and in an unlinked temporary file
//! beyond, so that whatever is waiting does not pin its size in memory.
//!
//! agy-decode holds a conversation's messages in one while a tool result
//! waits for its spilled full text, which the row stream carries only after
//! the last step.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::stream::io::Output;
use crate::stream::json;

#[derive(Default)]
pub struct Spool {
    /// The bytes after the ones in `file`.
    buf: Vec<u8>,
    file: Option<File>,
    /// Bytes already moved to `file`.
    on_disk: u64,
    /// How far the file's blocks are set aside ahead of the writes
    /// ([`ROOM_AHEAD`]); `None` once the system would not.
    room: Option<u64>,
    /// The temporary file's path while it still has one (on Unix it is
    /// unlinked as soon as it is open).
    path: Option<PathBuf>,
}

/// Blocks of the temporary file set aside at a time, ahead of the bytes
/// that will fill them. ext4 reserves the blocks of each page written past
/// the end one by one (delayed allocation); a whole range set aside at once
/// (fallocate, the file's size unchanged) and then filled took a fifth less
/// system time: 38 ms against 48 ms for 160 MiB written a MiB at a time and
/// closed, which is agy-render's spooling of the large conversation. 4 MiB
/// and 64 MiB did as well.
const ROOM_AHEAD: u64 = 16 << 20;

/// Numbers the temporary files of this process.
static SPOOLS: AtomicU64 = AtomicU64::new(0);

fn io_error(e: std::io::Error) -> Error {
    Error::io("temporary spool file", e)
}

impl Spool {
    pub const IN_MEMORY: usize = 1 << 20;

    /// Bytes appended so far.
    pub fn len(&self) -> u64 {
        self.on_disk + self.buf.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn append(&mut self, bytes: &[u8]) -> Result<()> {
        if self.buf.len() + bytes.len() <= Self::IN_MEMORY {
            self.buf.extend_from_slice(bytes);
            return Ok(());
        }
        // Bound for the file anyway: written from where they are, not first
        // copied into a buffer grown to hold them.
        self.write_to_file(bytes)
    }

    /// Appends `text` escaped for the inside of a JSON string (no quotes).
    pub fn append_json_str_body(&mut self, text: &str) -> Result<()> {
        json::write_str_body(&mut self.buf, text);
        self.settle()
    }

    /// Moves the in-memory bytes to the temporary file once they are many.
    fn settle(&mut self) -> Result<()> {
        if self.buf.len() <= Self::IN_MEMORY {
            return Ok(());
        }
        self.write_to_file(&[])
    }

    /// Moves the in-memory bytes, then `more`, to the end of the file.
    fn write_to_file(&mut self, more: &[u8]) -> Result<()> {
        if self.file.is_none() {
            let n = SPOOLS.fetch_add(1, Ordering::Relaxed);
            let path =
                std::env::temp_dir().join(format!("agy-tools-{}-{n}.spool", std::process::id()));
            let file = File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|e| Error::io(path.display(), e))?;
            // Where the system allows it, the open file outlives its name and
            // nothing is left behind if the process dies.
            self.path = std::fs::remove_file(&path).is_err().then_some(path);
            self.file = Some(file);
            self.room = Some(0);
        }
        let end = self.on_disk + (self.buf.len() + more.len()) as u64;
        let file = self.file.as_mut().expect("just created");
        if let Some(room) = self.room.filter(|&room| room < end) {
            // Only an economy: where it fails (a file system without it, a
            // full disk) the writes go on as they would have, and say why.
            let len = (end - room).max(ROOM_AHEAD);
            self.room = set_aside(file, room, len).then_some(room + len);
        }
        // A read of an earlier range may have moved the position.
        file.seek(SeekFrom::End(0)).map_err(io_error)?;
        file.write_all(&self.buf).map_err(io_error)?;
        file.write_all(more).map_err(io_error)?;
        self.on_disk += (self.buf.len() + more.len()) as u64;
        self.buf.clear();
        Ok(())
    }

    /// Streams the bytes at `range` (offsets of [`Spool::len`]) through
    /// `out`, in chunks, so a large spool never sits in the output buffer
    /// whole.
    pub fn copy_range(&mut self, range: Range<u64>, out: &mut Output) -> Result<()> {
        let Located { on_disk, in_memory } = self.locate(range)?;
        if let Some((file, len)) = on_disk {
            out.copy_from_file(file, len)?;
        }
        out.buf().extend_from_slice(in_memory);
        Ok(())
    }

    /// Appends the bytes at `range` (offsets of [`Spool::len`]) to `into`.
    pub fn read_range(&mut self, range: Range<u64>, into: &mut Vec<u8>) -> Result<()> {
        let Located { on_disk, in_memory } = self.locate(range)?;
        if let Some((file, len)) = on_disk {
            let at = into.len();
            into.resize(at + len as usize, 0);
            file.read_exact(&mut into[at..]).map_err(io_error)?;
        }
        into.extend_from_slice(in_memory);
        Ok(())
    }

    /// Where the bytes at `range` are, the file positioned at the first of
    /// them it holds.
    fn locate(&mut self, range: Range<u64>) -> Result<Located<'_>> {
        let Range { start, end } = range;
        let mut on_disk = None;
        if start < self.on_disk {
            let file = self.file.as_mut().expect("bytes on disk have a file");
            file.seek(SeekFrom::Start(start)).map_err(io_error)?;
            on_disk = Some((file, end.min(self.on_disk) - start));
        }
        let from = (start.max(self.on_disk) - self.on_disk) as usize;
        let to = (end.max(self.on_disk) - self.on_disk) as usize;
        Ok(Located {
            on_disk,
            in_memory: &self.buf[from..to],
        })
    }
}

/// Sets aside the blocks of `file` at `at..at + len` without changing its
/// size (so its end stays where the bytes end); whether the system did.
#[cfg(target_os = "linux")]
fn set_aside(file: &File, at: u64, len: u64) -> bool {
    use std::os::fd::AsRawFd;
    let (Ok(at), Ok(len)) = (libc::off_t::try_from(at), libc::off_t::try_from(len)) else {
        return false;
    };
    // SAFETY: fallocate takes only integers; the descriptor is `file`'s,
    // open for writing while it is borrowed.
    unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, at, len) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn set_aside(_file: &File, _at: u64, _len: u64) -> bool {
    false
}

/// The bytes of a range of a [`Spool`]: first those in its file, then
/// those in memory.
struct Located<'a> {
    /// The file, positioned at the first of them, and how many it holds;
    /// `None` when they are all in memory.
    on_disk: Option<(&'a mut File, u64)>,
    in_memory: &'a [u8],
}

impl Drop for Spool {
    fn drop(&mut self) {
        self.file = None;
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::io::Captured;

    #[test]
    fn ranges_across_memory_and_disk_come_back_exactly() {
        let mut spool = Spool::default();
        let data: Vec<u8> = (0..3 * Spool::IN_MEMORY + 12345)
            .map(|i| (i % 251) as u8)
            .collect();
        for piece in data.chunks(70_001) {
            spool.append(piece).unwrap();
        }
        assert_eq!(spool.len(), data.len() as u64);
        assert!(spool.on_disk > 0, "large spools move to disk");
        let len = data.len() as u64;
        for range in [0..len, 5..17, len - 10..len, 1_000_000..2_200_000, 7..7] {
            let sink = Captured::default();
            let mut out = Output::captured(&sink);
            spool.copy_range(range.clone(), &mut out).unwrap();
            out.flush().unwrap();
            let got = sink.take();
            assert_eq!(got, &data[range.start as usize..range.end as usize]);
            let mut read = b"before".to_vec();
            spool.read_range(range.clone(), &mut read).unwrap();
            assert_eq!(&read[..6], b"before");
            assert_eq!(read[6..], data[range.start as usize..range.end as usize]);
        }
        // Appending after a read still appends at the end.
        spool.append(b"tail").unwrap();
        assert_eq!(spool.len(), len + 4);
    }

    #[test]
    fn blocks_set_aside_ahead_leave_the_end_where_the_bytes_end() {
        let mut spool = Spool::default();
        let room = ROOM_AHEAD as usize;
        // Small pieces up to past the first room, then one longer than a
        // room, then small pieces again.
        let data: Vec<u8> = (0..3 * room + 777).map(|i| (i % 253) as u8).collect();
        let (small, rest) = data.split_at(room + 5000);
        let (long, tail) = rest.split_at(room + 3);
        for piece in small.chunks(1 << 20) {
            spool.append(piece).unwrap();
        }
        spool.append(long).unwrap();
        for piece in tail.chunks(300_001) {
            spool.append(piece).unwrap();
        }
        let file = spool.file.as_ref().unwrap();
        // The file ends where its bytes do, whatever was set aside after.
        assert_eq!(file.metadata().unwrap().len(), spool.on_disk);
        if cfg!(target_os = "linux") {
            if let Some(room) = spool.room {
                assert!(room >= spool.on_disk, "{room} {}", spool.on_disk);
            }
        }
        let len = data.len() as u64;
        let edge = ROOM_AHEAD;
        for range in [0..len, edge - 9..edge + 9, len - 5..len] {
            let mut read = Vec::new();
            spool.read_range(range.clone(), &mut read).unwrap();
            assert!(read == data[range.start as usize..range.end as usize]);
        }
    }

    #[test]
    fn json_bodies_are_escaped_without_quotes() {
        let mut spool = Spool::default();
        spool.append_json_str_body("a\"b\n\u{1}é").unwrap();
        assert_eq!(spool.buf, b"a\\\"b\\n\\u0001\xc3\xa9");
    }
}
