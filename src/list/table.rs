//! `agy-ls --format table`: the entries as aligned columns for people.
//!
//! Columns are padded to their widest cell, counted in characters; the
//! title comes last and is not padded, so a long one only makes its own
//! line long. Control characters in a title or directory are shown as
//! `?`, so a crafted title cannot move the terminal's cursor.

use super::Entry;

const HEADER: [&str; 6] = ["LAST ACTIVE", "STEPS", "INDEX", "ID", "DIRECTORY", "TITLE"];

/// Writes the header and one line per entry.
pub fn write_table(entries: &[Entry], out: &mut Vec<u8>) {
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|e| {
            [
                e.last_active
                    .and_then(|t| t.format_seconds())
                    .map(|t| t.replacen('T', " ", 1).trim_end_matches('Z').to_string())
                    .unwrap_or_else(|| "-".into()),
                e.step_count.to_string(),
                e.index.name().to_string(),
                printable(&e.id),
                printable(e.cwd.as_deref().unwrap_or("-")),
                printable(e.title.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let header = HEADER.map(str::to_string);
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            match i {
                // Counts read best aligned right.
                1 => line.push_str(&format!("{}{cell}", " ".repeat(pad))),
                5 => line.push_str(cell),
                _ => line.push_str(&format!("{cell}{}", " ".repeat(pad))),
            }
            if i < 5 {
                line.push_str("  ");
            }
        }
        out.extend_from_slice(line.trim_end().as_bytes());
        out.push(b'\n');
    }
}

fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list::Indexed;
    use crate::time::Timestamp;

    #[test]
    fn columns_line_up_and_control_characters_are_shown_harmless() {
        let entry = |id: &str, steps: i64, title: &str| Entry {
            id: id.into(),
            title: Some(title.into()),
            cwd: Some("/src/ü".into()),
            branch: None,
            created: None,
            last_active: Some(Timestamp {
                seconds: 1_782_640_000,
                nanos: 5,
            }),
            step_count: steps,
            models: Vec::new(),
            lane: "cli",
            parent: None,
            bytes: 0,
            index: Indexed::Stale,
        };
        let mut out = Vec::new();
        write_table(
            &[entry("a", 120, "Fix\x1b[2J it"), entry("bb", 7, "")],
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "LAST ACTIVE          STEPS  INDEX  ID  DIRECTORY  TITLE\n\
             2026-06-28 09:46:40    120  stale  a   /src/ü     Fix?[2J it\n\
             2026-06-28 09:46:40      7  stale  bb  /src/ü\n"
        );
    }
}
