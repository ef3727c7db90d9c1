//! A `-wal` read as SQLite's recovery reads it: which frame holds the
//! newest committed copy of each page.
//!
//! The WAL is a 32-byte header (magic, format version, page size,
//! checkpoint sequence, two salts, a checksum of the first 24 bytes), then
//! frames: a 24-byte frame header (page number, the database's size in
//! pages after a commit or 0, the two salts, a running checksum) and one
//! page. A frame counts when its salts are the header's and its checksum,
//! carried on from the previous frame's over the frame header's first 8
//! bytes and the page, matches; the first frame that fails ends the log (a
//! torn write, or the leftovers of a WAL restarted with new salts). Only
//! frames up to the last commit frame are the database; the rest belong to
//! a transaction that never finished. (sqlite.org/fileformat2.html,
//! "The Write-Ahead Log", and `walIndexRecover` in SQLite's wal.c.)

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;

use super::checksum::checksum;

const HEADER: usize = 32;
const FRAME_HEADER: usize = 24;
/// The magic number's low bit says which byte order the checksums read
/// their 32-bit words in: 0 little-endian, 1 big-endian.
const MAGIC: u32 = 0x377f_0682;
const VERSION: u32 = 3_007_000;

/// The committed frames of a WAL.
#[derive(Debug, Default)]
pub(super) struct Index {
    /// Page number to the file offset of its newest committed copy.
    pages: HashMap<u32, u64>,
    /// The database's size in pages after the last commit; `None` when
    /// the WAL holds no commit and the database file alone is the truth.
    pub db_pages: Option<u32>,
}

impl Index {
    /// Where the newest committed copy of `page` is in the WAL, if any.
    pub fn offset(&self, page: u32) -> Option<u64> {
        self.pages.get(&page).copied()
    }
}

/// Reads the WAL `file`, `len` bytes long, of a database of
/// `page_size`-byte pages. A WAL whose header is not valid holds nothing,
/// as for SQLite. `None` when it cannot be read, or its page size is not
/// the database's: SQLite is left to make sense of those.
pub(super) fn read(file: &File, len: u64, page_size: usize) -> Option<Index> {
    let mut reader = file;
    let mut header = [0u8; HEADER];
    if !read_full(&mut reader, &mut header).ok()? {
        return Some(Index::default());
    }
    let Some(wal_page_size) = valid_header(&header) else {
        return Some(Index::default());
    };
    let word = |i: usize| u32::from_be_bytes(header[i..i + 4].try_into().unwrap());
    let big_endian = word(0) & 1 == 1;
    let mut sum = (word(24), word(28));
    if wal_page_size != page_size {
        return None;
    }
    let salts = &header[16..24];
    let mut index = Index::default();
    // Frames since the last commit: not the database's until one commits.
    let mut pending: Vec<(u32, u64)> = Vec::new();
    // Whole frames are read a MiB's worth at a time, and no more than the
    // file holds (most of agy's WALs are a few pages, and a buffer never
    // touched still costs faults), and summed where they were read.
    let frame_len = FRAME_HEADER + page_size;
    let frames = len.saturating_sub(HEADER as u64).div_ceil(frame_len as u64);
    let capacity = frames.clamp(1, ((1 << 20) / frame_len).max(1) as u64) * frame_len as u64;
    let mut chunk = Vec::with_capacity(capacity as usize);
    let mut offset = HEADER as u64;
    loop {
        chunk.clear();
        reader.take(capacity).read_to_end(&mut chunk).ok()?;
        for frame in chunk.chunks_exact(frame_len) {
            let word = |i: usize| u32::from_be_bytes(frame[i..i + 4].try_into().unwrap());
            let (page, db_pages) = (word(0), word(4));
            if page == 0 || &frame[8..16] != salts {
                return Some(index);
            }
            sum = checksum(big_endian, sum, &frame[..8]);
            sum = checksum(big_endian, sum, &frame[FRAME_HEADER..]);
            if sum != (word(16), word(20)) {
                return Some(index);
            }
            pending.push((page, offset + FRAME_HEADER as u64));
            if db_pages != 0 {
                index.pages.extend(pending.drain(..));
                index.db_pages = Some(db_pages);
            }
            offset += frame_len as u64;
        }
        // A torn frame at the end is no frame.
        if (chunk.len() as u64) < capacity {
            return Some(index);
        }
    }
}

/// The page size a WAL header gives, when the header is valid: its magic
/// number, format version, page size and checksum SQLite's. A WAL whose
/// header is not valid holds no frames.
pub(in crate::store::sqlite) fn valid_header(header: &[u8; HEADER]) -> Option<usize> {
    let word = |i: usize| u32::from_be_bytes(header[i..i + 4].try_into().unwrap());
    if word(0) & !1 != MAGIC || word(4) != VERSION {
        return None;
    }
    // Unlike the database header's, the WAL's page size is written as it
    // is, 65536 too: SQLite's recovery takes no other value.
    let page_size = word(8) as usize;
    let sum = checksum(word(0) & 1 == 1, (0, 0), &header[..24]);
    (sum == (word(24), word(28)) && valid_page_size(page_size)).then_some(page_size)
}

/// Fills `buf` whole: `false` when the file ends first (a torn frame is no
/// frame).
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => return Ok(false),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// A power of two from 512 to 65536.
pub(super) fn valid_page_size(size: usize) -> bool {
    size.is_power_of_two() && (512..=65536).contains(&size)
}
