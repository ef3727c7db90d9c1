//! `Lines::next_batch` held to `Lines::next_line`: over any bytes, read a
//! few bytes at a time (the read sizes come from the input), batches of any
//! size give the same lines at the same numbers, none split or lost.
#![no_main]

use std::io::{self, Read};

use agy_tools::stream::io::{LineBatch, Lines};
use libfuzzer_sys::fuzz_target;

/// Reads `data` in pieces whose sizes come round from `steps` (1 to 256
/// bytes each), or all at once when there are none.
struct Pieces {
    data: Vec<u8>,
    at: usize,
    steps: Vec<u8>,
    turn: usize,
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let step = match self.steps.get(self.turn % self.steps.len().max(1)) {
            Some(&step) => usize::from(step) + 1,
            None => usize::MAX,
        };
        self.turn += 1;
        let n = step.min(buf.len()).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let [choice, count, rest @ ..] = data else {
        return;
    };
    let (steps, text) = rest.split_at(usize::from(*count % 8).min(rest.len()));
    let want = [1, 2, 7, 64, 4096, 1 << 16, 1 << 18][usize::from(*choice) % 7];

    let mut expected = Vec::new();
    let mut lines = agy_fuzz::lines(text);
    while let Some(line) = lines.next_line().expect("a slice does not fail") {
        expected.push((line.to_vec(), lines.line_number()));
    }

    let pieces = Pieces {
        data: text.to_vec(),
        at: 0,
        steps: steps.to_vec(),
        turn: 0,
    };
    let mut lines = Lines::from_reader("fuzz", Box::new(pieces));
    let mut batch = LineBatch::default();
    let mut got = Vec::new();
    loop {
        let more = lines.next_batch(want, &mut batch).expect("pieces do not fail");
        for (i, &number) in batch.numbers.iter().enumerate() {
            got.push((batch.line(i).to_vec(), number));
        }
        if !more {
            break;
        }
    }
    assert!(got == expected, "want {want}, steps {steps:?}");
}
