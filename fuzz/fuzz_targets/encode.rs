//! agy-encode over an arbitrary message stream: the message reader (a
//! batch of lines at a time, `stream::ahead::Records`) and the encoder, as
//! its main loop runs them, plain and `--generic`.
#![no_main]

use agy_fuzz::{lines, sink};
use agy_tools::encode::{Encoder, Options};
use agy_tools::stream::ahead::Records;
use libfuzzer_sys::fuzz_target;

fn encode(data: &[u8], generic: bool) {
    let mut encoder = Encoder::new(Options {
        generic,
        id: Some("fuzz-conversation".to_string()),
    });
    let mut out = sink();
    let read = Records::new(lines(data)).for_each(|_, record| {
        record.and_then(|record| encoder.record(record, &mut out))
    });
    if read.is_err() {
        return;
    }
    let _ = encoder.finish(&mut out);
    let _ = out.flush();
}

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    encode(data, false);
    encode(data, true);
}
