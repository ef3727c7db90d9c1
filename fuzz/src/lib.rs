//! What the fuzz targets share: the library's own line reader over the
//! fuzzer's bytes, an [`Output`] whose bytes can be read back, a scratch
//! directory per process for the targets that need files, and [`measure`],
//! which holds each input to the limits.
//!
//! Why a heap count of our own: libFuzzer's `-rss_limit_mb` limits the
//! whole process, and the process also holds libFuzzer's in-memory corpus
//! (tens of MB of row streams after a few minutes), so at 64 MB it fails on
//! the corpus, not on an input. The Rust heap this allocator counts is what
//! one input makes the library allocate; SQLite's own C allocations are not
//! in it (its page cache is bounded by SQLite).

use std::io::Cursor;
use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Instant;

use agy_tools::stream::io::{Captured, Lines, Output};

/// `data` as the tools read a file: through [`Lines`], so blank lines,
/// `\r\n` and a missing last newline go through the real reader.
pub fn lines(data: &[u8]) -> Lines {
    Lines::from_reader("fuzz", Box::new(Cursor::new(data.to_vec())))
}

/// An output that discards everything, as `> /dev/null` would.
pub fn sink() -> Output {
    Output::to(Box::new(std::io::sink()))
}

/// This process's scratch directory, emptied: each input starts from
/// nothing, so a run depends on its input alone.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir =
        DIR.get_or_init(|| std::env::temp_dir().join(format!("agy-fuzz-{}", std::process::id())));
    if dir.exists() {
        std::fs::remove_dir_all(dir).expect("emptying the scratch directory");
    }
    std::fs::create_dir_all(dir).expect("creating the scratch directory");
    dir
}

/// What agy-decode writes for `rows`, and the warnings it says on stderr;
/// the error of the first line it refuses.
pub fn decode_rows(rows: &[u8], all: bool) -> agy_tools::error::Result<(Vec<u8>, Vec<String>)> {
    use agy_tools::decode::{Decoder, Options};
    let captured = Captured::default();
    let mut out = Output::captured(&captured);
    let mut decoder = Decoder::new(Options { all, index: false });
    let mut warnings = Vec::new();
    let mut input = lines(rows);
    while let Some(line) = input.next_line()? {
        let result = decoder.line(line, &mut out);
        let place = input.place();
        result.map_err(|e| e.context(place.clone()))?;
        warnings.extend(
            decoder
                .take_warnings()
                .into_iter()
                .map(|w| format!("{place}: {w}")),
        );
        out.end_record()?;
    }
    decoder.finish(&mut out)?;
    out.flush()?;
    Ok((captured.take(), warnings))
}

/// What agy-encode writes for the message stream `messages`.
pub fn encode_messages(messages: &[u8], generic: bool) -> agy_tools::error::Result<Vec<u8>> {
    use agy_tools::encode::{self, Encoder, Options};
    let captured = Captured::default();
    let mut out = Output::captured(&captured);
    let mut encoder = Encoder::new(Options { generic, id: None });
    let mut input = lines(messages);
    while let Some(line) = input.next_line()? {
        let result = encode::parse_line(line).and_then(|r| encoder.record(&r, &mut out));
        result.map_err(|e| e.context(input.place()))?;
    }
    encoder.finish(&mut out)?;
    out.flush()?;
    Ok(captured.take())
}

/// The most Rust heap one input may hold at once.
pub const HEAP_LIMIT: usize = 64 << 20;

/// The system allocator, counting the bytes live and their peak.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = unsafe { std::alloc::System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        let p = unsafe { std::alloc::System.realloc(ptr, layout, size) };
        if !p.is_null() {
            let live = LIVE.fetch_add(size, Relaxed) + size;
            PEAK.fetch_max(live, Relaxed);
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static MAX_HEAP: AtomicUsize = AtomicUsize::new(0);
static MAX_NANOS: AtomicU64 = AtomicU64::new(0);

/// Runs one input's work, then fails it (a crash libFuzzer saves) when it
/// held more than [`HEAP_LIMIT`] of heap at once. The largest heap peak and
/// the slowest input so far are written, whenever either grows, to the file
/// named by `AGY_FUZZ_STATS` (fuzz/run.sh reads it for RESULTS.md); the
/// one-second limit on time is libFuzzer's `-timeout=1`.
pub fn measure<R>(work: impl FnOnce() -> R) -> R {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let start = Instant::now();
    let result = work();
    let nanos = start.elapsed().as_nanos() as u64;
    let heap = PEAK.load(Relaxed).saturating_sub(base);
    let more_heap = heap > MAX_HEAP.fetch_max(heap, Relaxed);
    let slower = nanos > MAX_NANOS.fetch_max(nanos, Relaxed);
    if more_heap || slower {
        if let Some(path) = std::env::var_os("AGY_FUZZ_STATS") {
            let stats = format!(
                "peak_heap_bytes {}\nslowest_input_ms {:.3}\n",
                MAX_HEAP.load(Relaxed),
                MAX_NANOS.load(Relaxed) as f64 / 1e6
            );
            let _ = std::fs::write(path, stats);
        }
    }
    assert!(
        heap <= HEAP_LIMIT,
        "one input held {heap} bytes of heap at once (limit {HEAP_LIMIT})"
    );
    result
}
