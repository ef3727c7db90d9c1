//! agy-pack over an arbitrary row stream into a scratch data root, as its
//! main loop runs (every conversation that is good is written, the others
//! are reported), then once more with `--force` over what the first run
//! wrote. Afterwards no temporary is left, nothing was written outside the
//! root, and agy-dump reads every conversation written: none is skipped as
//! not agy's and none fails.
#![no_main]

use agy_fuzz::{lines, scratch, sink};
use agy_tools::pack::{Batch, PackOptions, Packer};
use agy_tools::store::dump::{self, DumpOptions};
use libfuzzer_sys::fuzz_target;

fn pack(root: &std::path::Path, data: &[u8], force: bool) {
    let options = PackOptions {
        root: root.to_path_buf(),
        force,
        dry_run: false,
        replace_other: false,
    };
    let Ok(packer) = Packer::new(options, Box::new(|_| {})) else {
        return;
    };
    let mut out = sink();
    let mut report = |_: String| {};
    let mut batch = Batch::new(packer, &mut out, &mut report);
    batch
        .read(&mut lines(data))
        .expect("only output errors end a batch");
    batch.end().expect("only output errors end a batch");
}

/// Names under `dir` (one level) that a finished run must not leave.
fn leftovers(dir: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n.ends_with(".agy-pack.tmp")
                || n.ends_with(".agy-pack.ready")
                || n.ends_with(".agy-pack.gone")
                || n.ends_with(".agy-pack.old")
        })
        .collect()
}

fuzz_target!(|data: &[u8]| agy_fuzz::measure(|| run(data)));

fn run(data: &[u8]) {
    let scratch = scratch();
    let root = scratch.join("root");
    for force in [false, true] {
        pack(&root, data, force);
        for dir in ["conversations", "brain"] {
            let left = leftovers(&root.join(dir));
            assert!(left.is_empty(), "temporaries left in {dir}: {left:?}");
        }
    }
    let outside: Vec<_> = std::fs::read_dir(scratch)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "root")
        .collect();
    assert!(outside.is_empty(), "written outside the root: {outside:?}");
    if root.join("conversations").is_dir() {
        let targets = dump::targets(std::slice::from_ref(&root)).expect("listing the root");
        let options = DumpOptions {
            brain: true,
            ..DumpOptions::default()
        };
        let mut skipped = Vec::new();
        let mut warn = |w: String| {
            if w.contains("not an agy conversation") {
                skipped.push(w);
            }
        };
        if let Err(e) = dump::dump(&targets, &options, &mut sink(), &mut warn) {
            panic!("agy-dump fails on what agy-pack wrote: {e}");
        }
        assert!(
            skipped.is_empty(),
            "agy-pack wrote what agy-dump skips: {skipped:?}"
        );
    }
}
