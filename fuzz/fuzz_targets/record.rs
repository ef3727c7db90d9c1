//! The row-stream record parser, agy-pack's (and agy-decode's) input: one
//! line of arbitrary bytes. It must never panic, and a record it accepts
//! must survive being written back by the writers agy-dump uses.
#![no_main]

use agy_tools::stream::record::{self, Cell, Column, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|line: &[u8]| agy_fuzz::measure(|| run(line)));

fn run(line: &[u8]) {
    let Ok(parsed) = Record::parse(line) else {
        return;
    };
    let conversation = parsed.conversation().to_string();
    let mut out = Vec::new();
    match &parsed {
        Record::Db {
            user_version,
            closed,
            ..
        } => {
            record::write_db(&mut out, &conversation, *user_version, *closed);
        }
        Record::Schema {
            object_type,
            name,
            sql,
            ..
        } => {
            record::write_schema(&mut out, &conversation, object_type, name, sql);
        }
        Record::Row { table, row, .. } => {
            for (_, cell) in &row.0 {
                let _ = cell.blob_bytes();
                let _ = cell.as_i64();
                let _ = cell.as_text();
            }
            // Each column once as plain text affinity and once as BLOB
            // affinity: the cells that convert are written and read back.
            for blob_affinity in [false, true] {
                let cells: Option<Vec<Cell>> = row
                    .0
                    .iter()
                    .map(|(_, c)| c.to_cell(blob_affinity).ok())
                    .collect();
                let Some(cells) = cells else { continue };
                let columns: Vec<Column> = row
                    .0
                    .iter()
                    .map(|(name, _)| Column {
                        name: name.to_string(),
                        blob_affinity,
                    })
                    .collect();
                let mut written = Vec::new();
                record::write_row(&mut written, &conversation, table, &columns, cells.clone());
                let again = Record::parse(written.strip_suffix(b"\n").unwrap())
                    .unwrap_or_else(|e| panic!("written row does not parse: {e}"));
                let Record::Row {
                    row: again_row,
                    table: again_table,
                    ..
                } = &again
                else {
                    panic!("a row came back as {again:?}");
                };
                assert_eq!(again_table, table);
                let again_cells: Vec<Cell> = again_row
                    .0
                    .iter()
                    .map(|(_, c)| c.to_cell(blob_affinity).expect("written cell converts"))
                    .collect();
                assert_eq!(
                    again_cells, cells,
                    "cells change when written and read back"
                );
            }
            return;
        }
        Record::Index {
            user_version, row, ..
        } => {
            // An index row is written back in the form each value was read in.
            record::write_index(
                &mut out,
                &conversation,
                *user_version,
                row.0.iter().map(|(name, cell)| (&**name, cell)),
            );
        }
        Record::File { content, .. } => {
            let _ = content.to_bytes();
            return;
        }
        Record::Side { side, .. } => side.write(&mut out, &conversation),
        Record::End { end, .. } => end.write(&mut out, &conversation),
    }
    let again = Record::parse(out.strip_suffix(b"\n").unwrap())
        .unwrap_or_else(|e| panic!("written record does not parse: {e}"));
    assert_eq!(again, parsed);
}
