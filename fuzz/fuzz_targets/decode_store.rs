//! agy-decode reading a database itself against `agy-dump | agy-decode`,
//! over arbitrary bytes as a conversation database and its WAL (the input
//! of sqlite_file: the database's length in four little-endian bytes, the
//! database, then the WAL). Both ways read the same bytes, so they must
//! write the same messages and agree on whether it could be read; neither
//! may panic.
#![no_main]

use agy_fuzz::{decode_rows, scratch};
use agy_tools::decode::{store, Decoder, Options};
use agy_tools::store::dump::{self, DumpOptions};
use agy_tools::stream::io::{Captured, Output};
use libfuzzer_sys::fuzz_target;

const ID: &str = "0bb5c533-0f37-4e6b-8578-b94607c75201";

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let Some((len, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let split = (u32::from_le_bytes(*len) as usize).min(rest.len());
    let (db_bytes, wal_bytes) = rest.split_at(split);
    let conversations = scratch().join("root").join("conversations");
    std::fs::create_dir_all(&conversations).unwrap();
    let db = conversations.join(format!("{ID}.db"));
    std::fs::write(&db, db_bytes).unwrap();
    if !wal_bytes.is_empty() {
        std::fs::write(conversations.join(format!("{ID}.db-wal")), wal_bytes).unwrap();
    }
    // The pipeline: the rows, then the messages of the rows.
    let rows = Captured::default();
    let mut out = Output::captured(&rows);
    let targets = dump::targets(std::slice::from_ref(&db)).expect("listing what was just written");
    let options = DumpOptions {
        brain: true,
        ..DumpOptions::default()
    };
    let dumped = dump::dump(&targets, &options, &mut out, &mut |_| {})
        .expect("only output errors end a dump");
    out.flush().unwrap();
    let piped = decode_rows(&rows.take(), false);
    // The same read in process.
    let messages = Captured::default();
    let read = store::read(
        &db,
        Decoder::new(Options::default()),
        Output::captured(&messages),
        Box::new(|_| {}),
    );
    let (mut decoder, mut out) = (read.decoder, read.messages);
    let direct = read
        .outcome
        .and_then(|outcome| decoder.finish(&mut out).map(|()| outcome))
        .and_then(|outcome| out.flush().map(|()| outcome));
    match (piped, direct) {
        (Ok((piped, _)), Ok(outcome)) => {
            assert_eq!(outcome, dumped, "the dump's outcome differs");
            assert!(piped == messages.take(), "the messages differ");
        }
        (Err(e), Ok(_)) => panic!("the pipeline failed where the direct read did not: {e}"),
        (Ok(_), Err(e)) => panic!("the direct read failed where the pipeline did not: {e}"),
        (Err(_), Err(_)) => {}
    }
}
