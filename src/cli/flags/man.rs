//! The OPTIONS section of a man page, rendered from the definitions, and
//! the page with it put in place.

use crate::cli::flags::{self, Bin, Kind};
use crate::error::{Error, Result};

const HEADING: &str = ".SH OPTIONS\n";

/// `page` (a man page in troff) with its OPTIONS section, from its
/// heading to the next one, replaced by [`options`]; the rest of the page
/// is written by hand and kept as it is.
pub fn page(bin: Bin, page: &str) -> Result<String> {
    let missing = || {
        Error::data(format!(
            "the man page of {} has no OPTIONS section",
            bin.name()
        ))
    };
    let start = if page.starts_with(HEADING) {
        0
    } else {
        page.find(&format!("\n{HEADING}")).ok_or_else(missing)? + 1
    };
    let body = start + HEADING.len();
    let end = page[body..]
        .find("\n.SH ")
        .map_or(page.len(), |at| body + at + 1);
    Ok(format!(
        "{}{}{}",
        &page[..start],
        options(bin),
        &page[end..]
    ))
}

/// The OPTIONS section of `bin`'s man page: a `.TP` paragraph per flag,
/// its names in bold and its value in italics, then its text.
pub fn options(bin: Bin) -> String {
    let name = escape(bin.name());
    let mut out = String::from(HEADING);
    for (flag, doc) in flags::of(bin) {
        out.push_str(".TP\n");
        let long = escape(&format!("--{}", flag.long));
        let head = match (flag.short, &flag.kind) {
            (None, Kind::Switch(_)) => format!(".B {long}"),
            (Some(c), Kind::Switch(_)) => format!(".BR \\-{c} \", \" {long}"),
            (None, Kind::Value { name, .. }) => format!(".BI {long} \" {}\"", escape(name)),
            (Some(c), Kind::Value { name, .. }) => {
                format!(".BR \\-{c} \", \" {long} \" \\fI{}\\fR\"", escape(name))
            }
        };
        out.push_str(&head);
        out.push('\n');
        out.push_str(&doc.man.replace("{name}", &name));
        if !doc.man.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// A name as troff prints it: `\-` is the hyphen-minus one types, where a
/// bare `-` may become a typographic hyphen.
fn escape(text: &str) -> String {
    text.replace('-', "\\-")
}
