//! txcript 0.14.4 reading an agy data root: every conversation it discovers,
//! loaded, converted to its common messages and written as one JSON line
//! (`{"meta":…,"messages":[…]}`). Usage: `txcript-driver ROOT > out.ndjson`.
use std::io::{BufWriter, Write};
use txcript::harness::antigravity::{Antigravity, AntigravityStore};
use txcript::{Codec, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args_os()
        .nth(1)
        .ok_or("usage: txcript-driver ROOT")?;
    let store = AntigravityStore::new(root);
    let mut out = BufWriter::new(std::io::stdout().lock());
    for found in store.discover()? {
        let native = store.load(&found.reference)?;
        let common = Antigravity::to_common(&native)?;
        out.write_all(b"{\"meta\":")?;
        serde_json::to_writer(&mut out, &common.meta)?;
        out.write_all(b",\"messages\":")?;
        serde_json::to_writer(&mut out, &common.body)?;
        out.write_all(b"}\n")?;
    }
    out.flush()?;
    Ok(())
}
