//! `--help`: the binary's own text around an Options list rendered from
//! the definitions.

use crate::cli::flags::{self, Bin, Program};

/// The longest line `--help` writes, so it reads in an 80-column terminal.
const WIDTH: usize = 79;

/// The whole `--help` text of `program`.
pub fn render(program: &Program) -> String {
    format!(
        "{}\nOptions:\n{}\n{}",
        program.about,
        options(program.bin),
        program.after
    )
}

/// The Options list of `bin`: each flag's names, then its help text in a
/// column two spaces right of the longest names, wrapped at [`WIDTH`].
pub fn options(bin: Bin) -> String {
    let rows: Vec<(String, &str)> = flags::of(bin)
        .map(|(flag, doc)| {
            let mut names = match flag.short {
                Some(c) => format!("  -{c}, --{}", flag.long),
                None => format!("      --{}", flag.long),
            };
            if let Some(value) = flag.value_name() {
                names.push(' ');
                names.push_str(value);
            }
            (names, doc.help)
        })
        .collect();
    let column = rows.iter().map(|(names, _)| names.len()).max().unwrap_or(0) + 2;
    let mut out = String::new();
    for (names, help) in rows {
        let mut line = format!("{names:column$}");
        let mut empty = true;
        for word in help.split_whitespace() {
            if !empty && line.len() + 1 + word.len() > WIDTH {
                out.push_str(&line);
                out.push('\n');
                line = " ".repeat(column);
                empty = true;
            }
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
            empty = false;
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
