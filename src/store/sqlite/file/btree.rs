//! Pages, from the database file or its WAL, and the rows of a table's
//! b-tree in key order.
//!
//! A table is a b-tree of pages keyed by rowid: interior pages (type 5)
//! hold child page numbers with the largest key of each child's subtree,
//! plus a right-most child; leaf pages (type 13) hold the rows, each a
//! cell of payload length, rowid and the record's first bytes, the rest in
//! a chain of overflow pages when the record is too large for the page.
//! (sqlite.org/fileformat2.html, "B-tree Pages".)

use std::cell::RefCell;
use std::fs::File;
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;

use super::record::varint;
use super::wal;
use crate::error::{Error, Result};

/// A b-tree deeper than this is a damaged one: SQLite's own limit is 20,
/// a depth a tree of 4 KiB pages never reaches below 2^60 rows.
const MAX_DEPTH: usize = 40;

/// The pages of one snapshot of a database: its WAL's committed frames
/// over its file.
pub(super) struct Pages {
    pub db: File,
    pub wal_file: Option<File>,
    pub wal: wal::Index,
    pub page_size: usize,
    /// The page size less the bytes reserved at each page's end.
    pub usable: usize,
    /// The database's size in pages.
    pub count: u32,
    /// The database file's pages read ahead of where they were asked for.
    pub ahead: RefCell<Ahead>,
}

/// Pages of the database file read ahead, as the kernel reads a file
/// ahead: one page a read while reads jump about, and twice as many each
/// time the pages asked for follow on from the last, up to
/// [`AHEAD_BYTES`]. A conversation's rows are mostly written in page
/// order (a leaf, then its rows' overflow pages), and a read a page was
/// 54,000 reads for the 216 MB conversation; a reader that skips the
/// overflow pages (agy-usage) jumps and reads no more than before. Pages
/// are used where they lie ([`Pages::with_page`]), not copied out first.
#[derive(Default)]
pub(super) struct Ahead {
    /// The first page in `bytes`, and how many pages they hold.
    first: u32,
    pages: u32,
    bytes: Vec<u8>,
    /// The last page of the file read or served, and the pages the next
    /// read that follows on from it takes.
    last: u32,
    size: u32,
    /// The last page read from the WAL.
    wal_page: Vec<u8>,
}

/// The most read ahead at once.
const AHEAD_BYTES: usize = 128 << 10;

impl Pages {
    /// Reads page `number` (from 1) into `buf`, `page_size` long. A page
    /// past the file's end reads as zeros, as it does for SQLite.
    pub fn read(&self, number: u32, buf: &mut [u8]) -> Result<()> {
        self.with_page(number, |page| buf.copy_from_slice(page))
    }

    /// Calls `use_page` with page `number` (from 1), as [`Pages::read`]
    /// reads it, where it was read to.
    pub fn with_page<R>(&self, number: u32, use_page: impl FnOnce(&[u8]) -> R) -> Result<R> {
        if number == 0 || number > self.count {
            return Err(corrupt(number, "is not in the database"));
        }
        let mut ahead = self.ahead.borrow_mut();
        let ahead = &mut *ahead;
        if let (Some(offset), Some(wal)) = (self.wal.offset(number), &self.wal_file) {
            ahead.wal_page.resize(self.page_size, 0);
            read_full(wal, offset, &mut ahead.wal_page, "its WAL")?;
            return Ok(use_page(&ahead.wal_page));
        }
        let held = number
            .checked_sub(ahead.first)
            .filter(|&at| at < ahead.pages);
        let at = match held {
            Some(at) => at,
            None => {
                let most = (AHEAD_BYTES / self.page_size).max(1) as u32;
                ahead.size = match number == ahead.last.wrapping_add(1) {
                    true => (ahead.size * 2).clamp(1, most),
                    false => 1,
                };
                let pages = ahead.size.min(self.count - number + 1);
                // Forgotten first, so a failed read leaves no stale pages.
                ahead.pages = 0;
                ahead.bytes.resize(pages as usize * self.page_size, 0);
                let offset = u64::from(number - 1) * self.page_size as u64;
                read_full(&self.db, offset, &mut ahead.bytes, "it")?;
                ahead.first = number;
                ahead.pages = pages;
                0
            }
        };
        ahead.last = number;
        let at = at as usize * self.page_size;
        Ok(use_page(&ahead.bytes[at..at + self.page_size]))
    }
}

/// Fills `buf` from `file` at `offset`; what lies past the file's end reads
/// as zeros, as it does for SQLite.
fn read_full(file: &File, offset: u64, buf: &mut [u8], what: &str) -> Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::data(format!("reading {what}: {e}"))),
        }
    }
    buf[filled..].fill(0);
    Ok(())
}

/// Damage, in SQLite's words and then where.
fn corrupt(page: u32, what: &str) -> Error {
    Error::data(format!(
        "database disk image is malformed: page {page} {what}"
    ))
}

/// One page on the way down the tree, and how far its children are read.
struct Level {
    number: u32,
    page: Vec<u8>,
    /// The next child to read: cells in order, then the right-most.
    next: usize,
}

/// Calls `each` with the rowid and record of every row of the table whose
/// root page is `root`, in rowid order, until it breaks. Every page is
/// read once; a tree that names a page twice, or runs deeper than any real
/// one, is reported as damaged rather than followed.
pub(super) fn each_row(
    pages: &Pages,
    root: u32,
    each: impl FnMut(i64, &[u8]) -> Result<ControlFlow<()>>,
) -> Result<()> {
    each_row_prefix(pages, root, None, each)
}

/// [`each_row`], each record cut after its first `columns` columns when
/// that is given: the overflow pages that hold only later columns (a
/// step's payload) are not read.
pub(super) fn each_row_prefix(
    pages: &Pages,
    root: u32,
    columns: Option<usize>,
    mut each: impl FnMut(i64, &[u8]) -> Result<ControlFlow<()>>,
) -> Result<()> {
    let mut stack: Vec<Level> = Vec::new();
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let mut spill = Vec::new();
    let mut visited = 0u32;
    let mut down = |number: u32, stack: &mut Vec<Level>, spare: &mut Vec<Vec<u8>>| {
        visited += 1;
        if visited > pages.count {
            return Err(corrupt(number, "is reached twice (a loop in the tree)"));
        }
        if stack.len() >= MAX_DEPTH {
            return Err(corrupt(
                number,
                &format!("is deeper than {MAX_DEPTH} levels"),
            ));
        }
        let mut page = spare.pop().unwrap_or_else(|| vec![0u8; pages.page_size]);
        pages.read(number, &mut page)?;
        stack.push(Level {
            number,
            page,
            next: 0,
        });
        Ok(())
    };
    down(root, &mut stack, &mut spare)?;
    while let Some(level) = stack.last_mut() {
        let node = Node::of(level.number, &level.page, pages.usable)?;
        let child = match node.kind {
            Kind::Leaf => {
                for i in 0..node.cells {
                    let (rowid, record) = node.leaf_cell(i, pages, columns, &mut spill)?;
                    if each(rowid, record)?.is_break() {
                        return Ok(());
                    }
                }
                None
            }
            Kind::Interior if level.next < node.cells => Some(node.left_child(level.next)?),
            Kind::Interior if level.next == node.cells => Some(node.right_child()),
            Kind::Interior => None,
        };
        match child {
            Some(child) => {
                level.next += 1;
                down(child, &mut stack, &mut spare)?;
            }
            None => spare.extend(stack.pop().map(|level| level.page)),
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Interior,
    Leaf,
}

/// A table b-tree page's header, read.
struct Node<'p> {
    number: u32,
    page: &'p [u8],
    kind: Kind,
    cells: usize,
    /// Where the cell pointer array starts.
    pointers: usize,
    usable: usize,
}

impl<'p> Node<'p> {
    fn of(number: u32, page: &'p [u8], usable: usize) -> Result<Node<'p>> {
        // Page 1 starts with the 100-byte database header.
        let start = if number == 1 { 100 } else { 0 };
        let kind = match page[start] {
            5 => Kind::Interior,
            13 => Kind::Leaf,
            other => {
                return Err(corrupt(
                    number,
                    &format!("is of type {other}, not a table's"),
                ))
            }
        };
        let cells = usize::from(u16::from_be_bytes([page[start + 3], page[start + 4]]));
        let pointers = start + if kind == Kind::Leaf { 8 } else { 12 };
        if pointers + 2 * cells > usable {
            return Err(corrupt(number, "has more cells than room"));
        }
        Ok(Node {
            number,
            page,
            kind,
            cells,
            pointers,
            usable,
        })
    }

    /// The bytes of cell `i`, to the end of the usable page.
    fn cell(&self, i: usize) -> Result<&'p [u8]> {
        let at = self.pointers + 2 * i;
        let offset = usize::from(u16::from_be_bytes([self.page[at], self.page[at + 1]]));
        if offset < self.pointers + 2 * self.cells || offset >= self.usable {
            return Err(corrupt(
                self.number,
                &format!("has cell {i} outside its page"),
            ));
        }
        Ok(&self.page[offset..self.usable])
    }

    fn left_child(&self, i: usize) -> Result<u32> {
        match self.cell(i)? {
            [a, b, c, d, ..] => Ok(u32::from_be_bytes([*a, *b, *c, *d])),
            _ => Err(corrupt(self.number, &format!("has cell {i} cut short"))),
        }
    }

    fn right_child(&self) -> u32 {
        let start = if self.number == 1 { 100 } else { 0 };
        u32::from_be_bytes(self.page[start + 8..start + 12].try_into().unwrap())
    }

    /// Leaf cell `i`: its rowid and whole record, borrowed from the page,
    /// or gathered into `spill` from its overflow pages.
    fn leaf_cell<'s>(
        &self,
        i: usize,
        pages: &Pages,
        columns: Option<usize>,
        spill: &'s mut Vec<u8>,
    ) -> Result<(i64, &'s [u8])>
    where
        'p: 's,
    {
        let cell = self.cell(i)?;
        let short = || corrupt(self.number, &format!("has cell {i} cut short"));
        let (len, a) = varint(cell).ok_or_else(short)?;
        let (rowid, b) = varint(&cell[a..]).ok_or_else(short)?;
        let rowid = rowid as i64;
        let body = &cell[a + b..];
        let local = local_size(len, self.usable);
        if local as u64 == len {
            let record = body.get(..local).ok_or_else(short)?;
            return Ok((rowid, record));
        }
        // The first `local` bytes here, then the first overflow page's
        // number; each overflow page is the next one's number and its part.
        let (head, next) = match body.get(..local + 4) {
            Some(head) => head.split_at(local),
            None => return Err(short()),
        };
        // Each overflow page holds `usable - 4` bytes, and no page is in
        // two chains: a record longer than the database could hold is no
        // record.
        let part = self.usable - 4;
        if len > u64::from(pages.count) * part as u64 {
            return Err(corrupt(
                self.number,
                &format!("has cell {i} longer than the database"),
            ));
        }
        // Of a record cut after its first columns, only what they take.
        let len = match columns.and_then(|n| super::record::prefix_len(head, n)) {
            Some(need) if need <= local => return Ok((rowid, head)),
            Some(need) => need.min(len as usize),
            None => len as usize,
        };
        spill.clear();
        spill.try_reserve(len).map_err(|_| short())?;
        spill.extend_from_slice(head);
        let mut next = u32::from_be_bytes(next.try_into().unwrap());
        while spill.len() < len {
            if next == 0 {
                return Err(corrupt(
                    self.number,
                    &format!("has cell {i} whose overflow ends early"),
                ));
            }
            let take = part.min(len - spill.len());
            next = pages.with_page(next, |page| {
                spill.extend_from_slice(&page[4..4 + take]);
                u32::from_be_bytes(page[..4].try_into().unwrap())
            })?;
        }
        Ok((rowid, spill.as_slice()))
    }
}

/// How many bytes of a table leaf cell's record of `len` bytes stay on
/// the page (the rest overflows), by SQLite's rule for table leaves.
fn local_size(len: u64, usable: usize) -> usize {
    let usable = usable as u64;
    let max_local = usable - 35;
    if len <= max_local {
        return len as usize;
    }
    let min_local = (usable - 12) * 32 / 255 - 23;
    let k = min_local + (len - min_local) % (usable - 4);
    (if k <= max_local { k } else { min_local }) as usize
}
