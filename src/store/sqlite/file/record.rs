//! SQLite's record format: the bytes of one table row as cells.
//!
//! A record is a header (its own length, then one "serial type" per
//! column, all varints) followed by the values in column order. The serial
//! type says both the kind and the length: 0 NULL, 1-6 big-endian integers
//! of 1, 2, 3, 4, 6 and 8 bytes, 7 a big-endian IEEE double, 8 and 9 the
//! integers 0 and 1 without a byte, then blobs (even, `(n - 12) / 2` bytes)
//! and text (odd, `(n - 13) / 2` bytes). (sqlite.org/fileformat2.html,
//! "Record Format".)

use std::borrow::Cow;

use crate::error::{Error, Result};
use crate::stream::record::Cell;

/// Reads the varint at the start of `bytes`: big-endian groups of seven
/// bits, the high bit set on every byte but the last, at most nine bytes of
/// which the ninth gives all eight of its bits. Returns the value and its
/// length; `None` when `bytes` ends inside it.
pub(super) fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(8).enumerate() {
        value = (value << 7) | u64::from(b & 0x7f);
        if b < 0x80 {
            return Some((value, i + 1));
        }
    }
    let &ninth = bytes.get(8)?;
    Some(((value << 8) | u64::from(ninth), 9))
}

/// What a column holds when a record ends before it: the column's
/// `DEFAULT`, as SQLite gives it for rows written before a column was
/// added.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Default {
    Null,
    Integer(i64),
    Text(&'static str),
}

impl Default {
    pub(super) fn cell(&self) -> Cell<'static> {
        match self {
            Default::Null => Cell::Null,
            Default::Integer(v) => Cell::Integer(*v),
            Default::Text(t) => Cell::Text(Cow::Borrowed(t.as_bytes())),
        }
    }
}

/// How a table's records become its columns' cells.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// The column that is an alias of the rowid (`INTEGER PRIMARY KEY`):
    /// its record holds NULL, and its value is the row's key.
    pub rowid_alias: Option<usize>,
    /// Each column's default, in table order.
    pub defaults: Vec<Default>,
}

/// Decodes `payload`, the record of the row keyed `rowid`: one cell per
/// column of `layout`, borrowing text and blobs from `payload`.
pub(super) fn cells<'p>(payload: &'p [u8], rowid: i64, layout: &Layout) -> Result<Vec<Cell<'p>>> {
    first_cells(payload, rowid, layout, layout.defaults.len())
}

/// How many bytes of a record hold its header and the values of its first
/// `columns` columns, read from `head`, the record's first bytes; `None`
/// when `head` ends within the header (or the header is not one).
pub(super) fn prefix_len(head: &[u8], columns: usize) -> Option<usize> {
    let (header_len, mut at) = varint(head)?;
    let header_len = usize::try_from(header_len).ok().filter(|&n| n >= at)?;
    let header = head.get(..header_len)?;
    let mut body = header_len;
    let mut seen = 0;
    while at < header_len && seen < columns {
        let (serial, n) = varint(&header[at..])?;
        at += n;
        body += serial_len(serial)?;
        seen += 1;
    }
    Some(body)
}

/// The bytes a value of serial type `serial` takes; `None` for the
/// reserved types.
fn serial_len(serial: u64) -> Option<usize> {
    Some(match serial {
        0 | 8 | 9 => 0,
        1..=4 => serial as usize,
        5 => 6,
        6 | 7 => 8,
        10 | 11 => return None,
        n => ((n - 12) / 2) as usize,
    })
}

/// [`cells`] of the first `limit` columns only: `payload` need hold no
/// more of the record than they take ([`prefix_len`]).
pub(super) fn first_cells<'p>(
    payload: &'p [u8],
    rowid: i64,
    layout: &Layout,
    limit: usize,
) -> Result<Vec<Cell<'p>>> {
    let limit = limit.min(layout.defaults.len());
    let mut out = Vec::with_capacity(limit);
    let bad = |what: &str| Error::data(format!("row {rowid}: its record {what}"));
    let (header_len, mut at) = varint(payload).ok_or_else(|| bad("ends in its header"))?;
    let header_len = usize::try_from(header_len)
        .ok()
        .filter(|&n| n >= at && n <= payload.len())
        .ok_or_else(|| bad("has a header longer than itself"))?;
    let mut body = header_len;
    while at < header_len && out.len() < limit {
        let (serial, n) =
            varint(&payload[at..header_len]).ok_or_else(|| bad("ends in its header"))?;
        at += n;
        let len = serial_len(serial)
            .ok_or_else(|| bad(&format!("holds reserved serial type {serial}")))?;
        let value = payload
            .get(body..)
            .and_then(|rest| rest.get(..len))
            .ok_or_else(|| bad("ends before its values do"))?;
        body += len;
        out.push(match serial {
            0 => Cell::Null,
            8 => Cell::Integer(0),
            9 => Cell::Integer(1),
            1..=6 => Cell::Integer(big_endian(value)),
            7 => Cell::Real(f64::from_bits(big_endian(value) as u64)),
            n if n % 2 == 0 => Cell::Blob(Cow::Borrowed(value)),
            _ => Cell::Text(Cow::Borrowed(value)),
        });
    }
    // A record shorter than its table (written before a column was added)
    // reads as the missing columns' defaults.
    out.extend(
        layout.defaults[out.len()..limit]
            .iter()
            .map(|d| -> Cell<'p> { d.cell() }),
    );
    if let Some(alias) = layout.rowid_alias.filter(|&a| a < limit) {
        out[alias] = Cell::Integer(rowid);
    }
    Ok(out)
}

/// A big-endian two's-complement integer of 1 to 8 bytes.
fn big_endian(bytes: &[u8]) -> i64 {
    let unsigned = bytes.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
    let unused = 64 - 8 * bytes.len() as u32;
    // Shifting up then arithmetically down carries the sign bit.
    ((unsigned << unused) as i64) >> unused
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite's varint of `v`, written out by its definition.
    fn encode_varint(v: u64) -> Vec<u8> {
        if v >> 56 != 0 {
            let mut out: Vec<u8> = (0..8).map(|i| 0x80 | (v >> (57 - 7 * i)) as u8).collect();
            out.push(v as u8);
            return out;
        }
        let mut groups = vec![(v & 0x7f) as u8];
        let mut rest = v >> 7;
        while rest != 0 {
            groups.push(0x80 | (rest & 0x7f) as u8);
            rest >>= 7;
        }
        groups.reverse();
        groups
    }

    #[test]
    fn varints_read_back_at_every_length() {
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, u64::MAX >> (63 - shift)] {
                let bytes = encode_varint(v);
                assert_eq!(varint(&bytes), Some((v, bytes.len())), "{v:#x}");
                assert_eq!(varint(&bytes[..bytes.len() - 1]), None, "{v:#x} cut");
            }
        }
    }

    #[test]
    fn integers_of_every_width_keep_their_sign() {
        assert_eq!(big_endian(&[0xff]), -1);
        assert_eq!(big_endian(&[0x7f]), 127);
        assert_eq!(big_endian(&[0x80, 0x00, 0x00]), -(1 << 23));
        assert_eq!(big_endian(&[0, 0, 0, 0, 0, 0, 1]), 1);
        assert_eq!(big_endian(&i64::MIN.to_be_bytes()), i64::MIN);
    }

    #[test]
    fn a_record_short_of_its_table_reads_as_defaults_and_the_alias_as_the_key() {
        let layout = Layout {
            rowid_alias: Some(0),
            defaults: vec![
                Default::Null,
                Default::Text("main"),
                Default::Integer(0),
                Default::Null,
            ],
        };
        // Header of 3 bytes: NULL (the alias), a 2-byte text; nothing more.
        let payload = [3, 0, 17, b'h', b'i'];
        assert_eq!(
            cells(&payload, 42, &layout).unwrap(),
            [
                Cell::Integer(42),
                Cell::Text(Cow::Borrowed(b"hi")),
                Cell::Integer(0),
                Cell::Null
            ]
        );
        let err = cells(&[3, 0, 19, b'h'], 7, &layout).unwrap_err();
        assert!(err.to_string().contains("row 7"), "{err}");
        let err = cells(&[2, 10], 7, &layout).unwrap_err();
        assert!(err.to_string().contains("reserved serial type 10"), "{err}");
    }
}
