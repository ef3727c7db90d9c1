//! `agy-encode --onto`: an edited message stream merged onto its original
//! row stream. The input is the original rows, a NUL byte, then the
//! messages; the original is written to a scratch file because
//! `Merger::open` reads a path, as the tool does. With no NUL the whole
//! input is the original and the message stream is empty.
#![no_main]

use agy_fuzz::{lines, scratch, sink};
use agy_tools::encode::onto::{Merger, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let (original, messages) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let path = scratch().join("original.ndjson");
    std::fs::write(&path, original).expect("writing the original");
    for all in [false, true] {
        let Ok(mut merger) = Merger::open(path.as_os_str(), Options { all, generic: all }) else {
            continue;
        };
        let mut out = sink();
        let mut input = lines(messages);
        let mut failed = false;
        while let Ok(Some(line)) = input.next_line() {
            if merger.line(line, &mut out).is_err() {
                failed = true;
                break;
            }
        }
        if !failed {
            let _ = merger.finish(&mut out);
        }
        let _ = out.flush();
    }
}
