//! agy-dump over arbitrary bytes as a conversation database in a data
//! root (SQLite's own parser, then ours over whatever tables it finds).
//! A file that is no database, or a damaged one, is a warning and a
//! failed count, never a panic.
#![no_main]

use agy_fuzz::{scratch, sink};
use agy_tools::store::dump::{self, DumpOptions};
use libfuzzer_sys::fuzz_target;

const ID: &str = "0bb5c533-0f37-4e6b-8578-b94607c75201";

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let root = scratch().join("root");
    let conversations = root.join("conversations");
    std::fs::create_dir_all(&conversations).unwrap();
    let db = conversations.join(format!("{ID}.db"));
    std::fs::write(&db, data).unwrap();
    let options = DumpOptions {
        brain: true,
        ..DumpOptions::default()
    };
    // The file named as a database, and the root that holds it.
    for path in [db, root] {
        let targets = dump::targets(&[path]).expect("listing what was just written");
        let mut out = sink();
        let outcome = dump::dump(
            &targets,
            &options,
            &mut out,
            &mut |w| assert!(!w.is_empty()),
        )
        .expect("only output errors end a dump");
        assert!(outcome.dumped + outcome.unchanged + outcome.failed <= 1);
        out.flush().unwrap();
    }
}
