//! agy-dump's reader of SQLite's file format over arbitrary bytes: a
//! database file and, after it, a WAL (the input's first four bytes, little-
//! endian, say how many bytes the database takes; the rest is the WAL, if
//! any). The reader declines what it does not take and reports damage;
//! it never panics, loops or reads outside the files. Where it and SQLite
//! both read every table whole, they read the same rows; and where it reads
//! a table whole, its read of each table's first columns only (what
//! agy-usage reads of a step) is the first columns of those rows. The
//! WAL checksum at every SIMD level is the plain loop's, over the input.
#![no_main]

use agy_fuzz::scratch;
use agy_tools::store::sqlite::{wal_checksum_at, wal_checksum_serial, Snapshot, Source, Tables};
use agy_tools::stream::simd::Level;
use agy_tools::stream::record::Cell;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    checksums_agree(data);
    let Some((len, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let split = (u32::from_le_bytes(*len) as usize).min(rest.len());
    let (db_bytes, wal_bytes) = rest.split_at(split);
    let dir = scratch();
    let db = dir.join("c.db");
    std::fs::write(&db, db_bytes).unwrap();
    if !wal_bytes.is_empty() {
        std::fs::write(dir.join("c.db-wal"), wal_bytes).unwrap();
    }
    let Some(file) = Snapshot::open(&db) else {
        return;
    };
    let Some(ours) = everything(&file) else {
        return;
    };
    prefixes_agree(&file);
    let Ok(sqlite) = Source::open(&db) else {
        return;
    };
    if let Some(theirs) = everything(&sqlite) {
        assert_eq!(ours, theirs, "the file reader and SQLite disagree");
    }
}

/// The user version, the schema, the cascade id and every row of every
/// table, as text for comparing; `None` when any read fails.
fn everything(tables: &dyn Tables) -> Option<String> {
    let mut all = format!(
        "{:?} {:?} {:?}\n",
        tables.user_version().ok()?,
        tables.schema(),
        tables.cascade_id().ok()?
    );
    for name in table_names(tables) {
        tables
            .each_row(&name, &mut |_, cells: &[Cell<'_>]| {
                all.push_str(&format!("{name} {cells:?}\n"));
                Ok(())
            })
            .ok()?;
    }
    Some(all)
}

/// Each table's first 1 to 6 columns, read alone, are those of its whole
/// rows (the reader has just read every table whole).
fn prefixes_agree(tables: &dyn Tables) {
    for name in table_names(tables) {
        let mut rows: Vec<Vec<String>> = Vec::new();
        tables
            .each_row(&name, &mut |_, cells: &[Cell<'_>]| {
                rows.push(cells.iter().map(|c| format!("{c:?}")).collect());
                Ok(())
            })
            .expect("read whole a moment ago");
        for n in 1..=6 {
            let mut got: Vec<Vec<String>> = Vec::new();
            tables
                .each_row_prefix(&name, n, &mut |_, cells: &[Cell<'_>]| {
                    got.push(cells.iter().map(|c| format!("{c:?}")).collect());
                    Ok(())
                })
                .expect("a prefix of rows that read whole reads");
            let want: Vec<Vec<String>> = rows
                .iter()
                .map(|r| r[..n.clamp(1, r.len().max(1)).min(r.len())].to_vec())
                .collect();
            assert_eq!(got, want, "table {name} cut after {n} columns");
        }
    }
}

/// The names of the database's tables.
fn table_names(tables: &dyn Tables) -> Vec<String> {
    tables
        .schema()
        .iter()
        .filter(|o| o.object_type == "table")
        .map(|o| o.name.clone())
        .collect()
}

/// The WAL checksum of the input's whole pairs of words at every level,
/// in either byte order, carried on from a sum its first bytes give.
fn checksums_agree(data: &[u8]) {
    let start = match data.first_chunk::<8>() {
        Some(b) => (
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        ),
        None => (0, 0),
    };
    let words = &data[..data.len() & !7];
    for big_endian in [false, true] {
        let serial = wal_checksum_serial(big_endian, start, words);
        for level in Level::supported_levels() {
            let ours = wal_checksum_at(level, big_endian, start, words);
            assert_eq!(ours, serial, "at {level:?}, big-endian {big_endian}");
        }
    }
}
