//! agy-decode over an arbitrary row stream, as its main loop reads one:
//! the canonical fast path first, the record parser for every other line,
//! once without and once with `--all`. Errors are expected (the stream is
//! arbitrary); panics, hangs and unbounded memory are not.
#![no_main]

use agy_fuzz::{lines, sink};
use agy_tools::decode::{Decoder, Options};
use agy_tools::stream::record::Record;
use libfuzzer_sys::fuzz_target;

fn decode(data: &[u8], all: bool) {
    let mut decoder = Decoder::new(Options { all, index: false });
    let mut out = sink();
    let mut input = lines(data);
    while let Ok(Some(line)) = input.next_line() {
        let result = match decoder.canonical_step_line(line, &mut out) {
            Ok(true) => Ok(()),
            Ok(false) => Record::parse(line).and_then(|r| decoder.record(&r, &mut out)),
            Err(e) => Err(e),
        };
        for warning in decoder.take_warnings() {
            assert!(!warning.is_empty());
        }
        if result.is_err() {
            // agy-decode stops at the first bad line.
            return;
        }
        let _ = out.end_record();
    }
    let _ = decoder.finish(&mut out);
    let _ = out.flush();
}

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    decode(data, false);
    decode(data, true);
}
