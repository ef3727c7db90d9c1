//! agy-encode over an arbitrary message stream: the message reader
//! (`encode::parse_line`) and the encoder, as its main loop runs them,
//! plain and `--generic`.
#![no_main]

use agy_fuzz::{lines, sink};
use agy_tools::encode::{self, Encoder, Options};
use libfuzzer_sys::fuzz_target;

fn encode(data: &[u8], generic: bool) {
    let mut encoder = Encoder::new(Options {
        generic,
        id: Some("fuzz-conversation".to_string()),
    });
    let mut out = sink();
    let mut input = lines(data);
    while let Ok(Some(line)) = input.next_line() {
        let result = encode::parse_line(line).and_then(|r| encoder.record(r, &mut out));
        if result.is_err() {
            return;
        }
    }
    let _ = encoder.finish(&mut out);
    let _ = out.flush();
}

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    encode(data, false);
    encode(data, true);
}
