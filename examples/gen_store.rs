//! gen-store: writes a synthetic agy data root, deterministically from a seed.
//!
//! The benchmarks need stores nobody can hand us (thousands of conversations,
//! one conversation of hundreds of megabytes), and the README tour needs a
//! small store anyone can open. Both come from here. The output is a function
//! of the flags alone: there is no clock and no randomness outside the
//! seeded generator, so the same command writes byte-identical files.
//!
//! What a conversation looks like follows FORMAT.md: the seven-table schema
//! (`sqlite::AGY_SCHEMA`, user_version 1, WAL, 32 KiB pages), the
//! `trajectory_meta` and `trajectory_metadata_blob` rows, one `gen_metadata`
//! row per model generation, and steps in the order of a real session
//! (section 3.1): USER_INPUT, CONVERSATION_HISTORY, then rounds of
//! PLANNER_RESPONSE and the tool steps that execute its calls, a closing
//! PLANNER_RESPONSE, occasional CHECKPOINT and SYSTEM_MESSAGE steps, and tool
//! steps that fail with status ERROR. A conversation uses either the agy
//! 1.0.x typed tool steps (RUN_COMMAND, VIEW_FILE, … with GENERIC for the
//! rest) or the 1.1+ convention where every tool step is GENERIC. Tool output
//! sizes follow a long-tailed distribution from a few bytes to `--max-output`.
//! Brain transcripts (section 10) mirror the steps.
//!
//! Run `cargo run --example gen-store -- --help` for the flags.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use agy_tools::agy::wire::Writer;
use agy_tools::store::sqlite::{AGY_SCHEMA, AGY_USER_VERSION};
use rusqlite::{params, Connection};
use serde::Serialize;
use serde_json::{json, Value};

type Result<T, E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

const USAGE: &str = "\
Usage: gen-store --root DIR [OPTIONS]

Writes a synthetic agy data root: DIR/conversations/<uuid>.db and
DIR/brain/<uuid>/. The same flags always write the same bytes.

Options:
      --root DIR            data root to write (created if missing; files of
                            the generated conversations are overwritten)
      --conversations N     number of conversations [default: 1]
      --steps N             steps per conversation [default: 60]
      --target-bytes N      grow or shrink tool outputs until each
                            conversation stores about N bytes of row data
                            (about the .db size once N is well above the
                            ten empty pages every agy database has)
      --max-output N        largest tool output in bytes [default: 1048576]
      --seed S              seed of the generator [default: 1]
      --page-size N         SQLite page size [default: 32768, agy's]
      --no-brain            write no brain/ files
      --first-prompt-bytes N
                            make each conversation's first user text about
                            N bytes of prose (the big-message benchmark)
      --wal-steps N         leave each conversation's last N steps in its
                            `-wal`, as agy leaves a conversation on exit:
                            they are written after the switch to WAL, one
                            transaction each, with SQLite's automatic
                            checkpoints, and the database is closed without
                            a checkpoint (the -shm is removed)
      --shm                 with --wal-steps: keep the `-shm` as well, as a
                            killed (or still running) agy leaves it
      --artifacts           write agy's artifacts (task.md, implementation
                            plan, walkthrough) into every brain directory
      --sample              the small, readable store of the README tour:
                            3 conversations of 10-30 steps covering every
                            tool kind, short outputs, 4 KiB pages
  -h, --help                print this help
";

/// agy's page size (FORMAT.md 2.1).
const AGY_PAGE_SIZE: u32 = 32768;

/// 2026-08-10T09:00:00Z: every created_at is an offset from here, so output
/// never depends on when the generator ran.
const BASE_TIME: i64 = 1_786_352_400;

/// The human model name agy records in gen_metadata (ChatModelMetadata.19).
const RESPONSE_MODEL: &str = "gemini-3.8-flash";

/// The numeric model id in usage stats (`MODEL_PLACEHOLDER_M318`).
const MODEL_ID: u64 = 1318;

fn main() {
    if let Err(err) = run() {
        eprintln!("gen-store: {err}");
        std::process::exit(1);
    }
}

#[derive(Clone, Debug)]
struct Options {
    root: PathBuf,
    conversations: usize,
    steps: usize,
    target_bytes: Option<u64>,
    max_output: u64,
    seed: u64,
    page_size: u32,
    brain: bool,
    sample: bool,
    first_prompt_bytes: Option<usize>,
    wal_steps: usize,
    shm: bool,
    artifacts: bool,
}

fn parse_args() -> Result<Option<Options>> {
    use lexopt::prelude::*;
    let mut root = None;
    let mut options = Options {
        root: PathBuf::new(),
        conversations: 1,
        steps: 60,
        target_bytes: None,
        max_output: 1 << 20,
        seed: 1,
        page_size: AGY_PAGE_SIZE,
        brain: true,
        sample: false,
        first_prompt_bytes: None,
        wal_steps: 0,
        shm: false,
        artifacts: false,
    };
    let mut page_size = None;
    let mut max_output = None;
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("root") => root = Some(PathBuf::from(parser.value()?)),
            Long("conversations") => options.conversations = parser.value()?.parse()?,
            Long("steps") => options.steps = parser.value()?.parse()?,
            Long("target-bytes") => options.target_bytes = Some(parser.value()?.parse()?),
            Long("max-output") => max_output = Some(parser.value()?.parse()?),
            Long("seed") => options.seed = parser.value()?.parse()?,
            Long("page-size") => page_size = Some(parser.value()?.parse()?),
            Long("no-brain") => options.brain = false,
            Long("first-prompt-bytes") => {
                options.first_prompt_bytes = Some(parser.value()?.parse()?)
            }
            Long("wal-steps") => options.wal_steps = parser.value()?.parse()?,
            Long("shm") => options.shm = true,
            Long("artifacts") => options.artifacts = true,
            Long("sample") => options.sample = true,
            Short('h') | Long("help") => {
                print!("{USAGE}");
                return Ok(None);
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    options.root = root.ok_or("--root DIR is required (see --help)")?;
    if options.sample {
        // Three conversations a reader can page through; 4 KiB pages keep
        // the committed files small (a 32 KiB-page agy database is at least
        // ten pages, 320 KiB, before it holds a single step).
        options.conversations = 3;
        options.page_size = 4096;
        options.max_output = 400;
    }
    if let Some(size) = page_size {
        options.page_size = size;
    }
    if let Some(max) = max_output {
        options.max_output = max;
    }
    if !options.page_size.is_power_of_two() || !(512..=65536).contains(&options.page_size) {
        return Err("--page-size must be a power of two from 512 to 65536".into());
    }
    if options.shm && options.wal_steps == 0 {
        return Err("--shm needs --wal-steps".into());
    }
    if options.artifacts && !options.brain {
        return Err("--artifacts needs brain directories (drop --no-brain)".into());
    }
    Ok(Some(options))
}

fn run() -> Result<()> {
    let Some(options) = parse_args()? else {
        return Ok(());
    };
    let started = Instant::now();
    fs::create_dir_all(options.root.join("conversations"))?;
    // The salts of a WAL header come from SQLite's generator: seeded, so
    // the -wal and -shm files are the same bytes on every run too.
    if options.wal_steps > 0 {
        seed_sqlite_randomness(options.seed);
    }
    let mut seeds = Rng::new(options.seed);
    let mut totals = Totals::default();
    // Row bytes per output byte depend on the era only; measured once each.
    let mut costs: [Option<OutputCosts>; 2] = [None, None];
    for index in 0..options.conversations {
        let mut rng = seeds.fork();
        let shape = ConversationShape::for_index(&options, index);
        let conversation = Conversation::new(&mut rng, index, shape);
        let plan = plan_steps(&mut rng, &conversation);
        let scale = match options.target_bytes {
            Some(target) if !plan.steps.is_empty() => {
                let cost = *costs[shape.era as usize]
                    .get_or_insert_with(|| output_costs(&conversation, &plan));
                fit_scale(&conversation, &plan, target, shape.max_output, &cost)
            }
            _ => 1.0,
        };
        let sizes = OutputSizes {
            scale,
            max: shape.max_output,
        };
        let wal = WalShape {
            steps: options.wal_steps,
            shm: options.shm,
        };
        totals.add(write_conversation(
            &options.root,
            &conversation,
            &plan,
            sizes,
            wal,
        )?);
        if (options.sample && options.brain && index == 0) || options.artifacts {
            write_artifacts(&options.root, &conversation)?;
        }
    }
    eprintln!(
        "gen-store: {} conversation(s), {} steps, {} bytes of rows, {} bytes of .db files in {:.2} s -> {}",
        options.conversations,
        totals.steps,
        totals.row_bytes,
        totals.db_bytes,
        started.elapsed().as_secs_f64(),
        options.root.display()
    );
    Ok(())
}

#[derive(Default)]
struct Totals {
    steps: u64,
    row_bytes: u64,
    db_bytes: u64,
}

impl Totals {
    fn add(&mut self, other: Totals) {
        self.steps += other.steps;
        self.row_bytes += other.row_bytes;
        self.db_bytes += other.db_bytes;
    }
}

// ---------------------------------------------------------------------------
// The random source.

/// SplitMix64: a few arithmetic operations per number, full period, and
/// good enough statistics for synthetic text. Owned here (not a crate) so
/// that the sequence, and so every generated byte, never changes under us.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6a09_e667_f3bc_c908)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An independent stream, so that what one part draws never shifts the
    /// numbers another part sees.
    fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }

    /// Uniform in `0..n` (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Log-uniform in `[lo, hi)`: as many values in 10..100 as in 100..1000,
    /// which is how tool output sizes spread.
    fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    fn word(&mut self, words: &[&'static str]) -> &'static str {
        words[self.below(words.len() as u64) as usize]
    }

    /// A random version-4 UUID in its text form.
    fn uuid(&mut self) -> String {
        let hi = (self.next_u64() & !0xf000) | 0x4000;
        let lo = (self.next_u64() & !(0xc000 << 48)) | (0x8000 << 48);
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xffff,
            hi & 0xffff,
            lo >> 48,
            lo & 0xffff_ffff_ffff
        )
    }

    /// `n` characters from `alphabet`.
    fn token(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n).map(|_| *self.pick(alphabet) as char).collect()
    }
}

const ALNUM_LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// ---------------------------------------------------------------------------
// Vocabulary. Short lists, combined at random, read like a developer's day.

const PROJECTS: &[&str] = &[
    "tidepool",
    "ledgerline",
    "parcel-sort",
    "quill",
    "orchard",
    "saltmarsh",
    "kestrel",
    "lanternfish",
    "copperplate",
    "driftwood",
];
const BRANCHES: &[&str] = &[
    "main",
    "main",
    "main",
    "fix/flaky-round-trip",
    "feat/streaming-reader",
    "chore/deps",
    "perf/less-copying",
];
const DIRS: &[&str] = &[
    "src",
    "src/store",
    "src/wire",
    "tests",
    "benches",
    "examples",
    "src/cli",
];
const FILES: &[&str] = &[
    "main.rs",
    "lib.rs",
    "reader.rs",
    "writer.rs",
    "config.rs",
    "error.rs",
    "schema.rs",
    "cache.rs",
    "parse.rs",
    "render.rs",
    "index.rs",
    "merge.rs",
];
const IDENTS: &[&str] = &[
    "row", "buf", "offset", "reader", "cursor", "entry", "len", "state", "header", "page", "batch",
    "key", "value", "stream", "record", "slot", "chunk", "limit",
];
const TYPES: &[&str] = &[
    "Row", "Reader", "Config", "Header", "Entry", "Batch", "Cursor", "Page", "Record", "Schema",
    "Writer", "Span",
];
const METHODS: &[&str] = &[
    "read_exact",
    "next_row",
    "flush",
    "as_bytes",
    "len",
    "parse",
    "split_at",
    "extend_from_slice",
    "finish",
    "commit",
    "decode",
    "encode",
];
const CRATES: &[&str] = &[
    "serde",
    "serde_json",
    "memchr",
    "libc",
    "cc",
    "itoa",
    "bstr",
    "rusqlite",
    "lexopt",
    "hashbrown",
    "smallvec",
    "proc-macro2",
    "quote",
    "syn",
];
const TESTS: &[&str] = &[
    "round_trip_keeps_bytes",
    "empty_store_is_fine",
    "truncated_blob_yields_prefix",
    "unicode_survives",
    "pending_call_has_no_result",
    "rewind_reuses_indexes",
    "large_output_streams",
    "schema_is_verbatim",
    "brain_files_are_contained",
];
const NOUNS: &[&str] = &[
    "the reader",
    "the test",
    "the schema",
    "this function",
    "the cache",
    "the parser",
    "the last commit",
    "the benchmark",
    "the error path",
    "the config",
    "that branch",
];
const VERBS: &[&str] = &[
    "allocates per row",
    "drops the last record",
    "panics on empty input",
    "times out on CI",
    "copies the buffer twice",
    "ignores the exit code",
    "reads the whole file",
    "never flushes",
    "mixes up the field numbers",
    "skips the WAL",
];
const ADJECTIVES: &[&str] = &[
    "flaky",
    "slow",
    "noisy",
    "stale",
    "wrong",
    "surprising",
    "brittle",
    "quadratic",
];
const MCP_SERVERS: &[(&str, &[&str])] = &[
    (
        "github",
        &["search_issues", "get_pull_request", "list_commits"],
    ),
    ("linear", &["get_issue", "list_issues"]),
    ("postgres", &["query", "describe_table"]),
];
const URLS: &[&str] = &[
    "https://www.sqlite.org/fileformat2.html",
    "https://protobuf.dev/programming-guides/encoding/",
    "https://doc.rust-lang.org/std/io/trait.BufRead.html",
    "https://docs.rs/rusqlite/latest/rusqlite/",
];
/// A pinch of non-ASCII and of characters JSON must escape, so consumers of
/// the data meet them in every kind of text.
const SPICE: &[&str] = &[
    "caf\u{e9}",
    "\u{2192}",
    "\u{2713}",
    "na\u{ef}ve",
    "\"quoted\"",
    "C:\\tmp\\out",
    "tab\there",
    "\u{65e5}\u{672c}\u{8a9e}",
    "\u{1f680}",
];

// ---------------------------------------------------------------------------
// Text builders.

/// Appends lines from `line` until `out` holds at least `len` bytes, then
/// cuts it to `len` bytes, backing off to a character boundary.
fn fill(rng: &mut Rng, len: usize, mut line: impl FnMut(&mut Rng, &mut String)) -> String {
    let mut out = String::with_capacity(len + 128);
    while out.len() < len {
        line(rng, &mut out);
        out.push('\n');
    }
    let mut cut = len;
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    out.truncate(cut);
    out
}

fn sentence(rng: &mut Rng, out: &mut String) {
    let parts: [&str; 7] = match rng.below(5) {
        0 => [
            "I think ",
            rng.word(NOUNS),
            " ",
            rng.word(VERBS),
            ".",
            "",
            "",
        ],
        1 => [
            "Let me look at ",
            rng.word(DIRS),
            "/",
            rng.word(FILES),
            " before changing anything.",
            "",
            "",
        ],
        2 => [
            "The ",
            rng.word(ADJECTIVES),
            " part is `",
            rng.word(IDENTS),
            ".",
            rng.word(METHODS),
            "()`.",
        ],
        3 => [
            "Running `cargo test ",
            rng.word(TESTS),
            "` should tell us whether ",
            rng.word(NOUNS),
            " still ",
            rng.word(VERBS),
            ".",
        ],
        _ => [
            "`",
            rng.word(TYPES),
            "::",
            rng.word(METHODS),
            "` is called once per ",
            rng.word(IDENTS),
            ", so the fix belongs there.",
        ],
    };
    for part in parts {
        out.push_str(part);
    }
    if rng.chance(0.04) {
        out.push_str(" (");
        out.push_str(rng.word(SPICE));
        out.push(')');
    }
}

/// Prose of a length drawn from `lo..=hi`.
fn prose_between(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let len = rng.range(lo, hi) as usize;
    prose(rng, len)
}

/// Prose of about `len` bytes, a few sentences per paragraph.
fn prose(rng: &mut Rng, len: usize) -> String {
    let mut out = String::with_capacity(len + 160);
    while out.len() < len {
        if !out.is_empty() {
            out.push_str(if rng.chance(0.25) { "\n\n" } else { " " });
        }
        sentence(rng, &mut out);
    }
    out
}

fn code_line(rng: &mut Rng, out: &mut String) {
    match rng.below(8) {
        0 => {
            out.push_str("pub fn ");
            out.push_str(rng.word(METHODS));
            out.push('(');
            out.push_str(rng.word(IDENTS));
            out.push_str(": &");
            out.push_str(rng.word(TYPES));
            out.push_str(") -> Result<");
            out.push_str(rng.word(TYPES));
            out.push_str("> {");
        }
        1 | 2 => {
            out.push_str("    let ");
            out.push_str(rng.word(IDENTS));
            out.push_str(" = ");
            out.push_str(rng.word(IDENTS));
            out.push('.');
            out.push_str(rng.word(METHODS));
            out.push_str("()?;");
        }
        3 => out.push('}'),
        4 => {
            out.push_str("    // ");
            sentence(rng, out);
        }
        5 => {
            out.push_str("    if ");
            out.push_str(rng.word(IDENTS));
            out.push_str(".len() > ");
            out.push_str(&rng.range(1, 4096).to_string());
            out.push_str(" {");
        }
        6 => {
            out.push_str("        return Err(Error::data(\"");
            out.push_str(rng.word(IDENTS));
            out.push_str(" out of range\"));");
        }
        _ => {}
    }
}

fn build_log_line(rng: &mut Rng, out: &mut String) {
    match rng.below(6) {
        0 | 1 => {
            out.push_str("   Compiling ");
            out.push_str(rng.word(CRATES));
            out.push_str(" v");
            out.push_str(&format!(
                "{}.{}.{}",
                rng.below(3),
                rng.below(30),
                rng.below(200)
            ));
        }
        2 | 3 => {
            out.push_str("test ");
            out.push_str(rng.word(IDENTS));
            out.push_str("::");
            out.push_str(rng.word(TESTS));
            out.push_str(if rng.chance(0.95) {
                " ... ok"
            } else {
                " ... FAILED"
            });
        }
        4 => {
            out.push_str("warning: unused variable: `");
            out.push_str(rng.word(IDENTS));
            out.push_str("`\n  --> ");
            out.push_str(rng.word(DIRS));
            out.push('/');
            out.push_str(rng.word(FILES));
            out.push_str(&format!(":{}:{}", rng.range(1, 900), rng.range(1, 80)));
        }
        _ => {
            out.push_str("    Finished `dev` profile [unoptimized + debuginfo] target(s) in ");
            out.push_str(&format!("{}.{:02}s", rng.below(60), rng.below(100)));
        }
    }
}

fn grep_line(rng: &mut Rng, out: &mut String) {
    out.push_str(rng.word(DIRS));
    out.push('/');
    out.push_str(rng.word(FILES));
    out.push_str(&format!(":{}:", rng.range(1, 1200)));
    code_line(rng, out);
}

fn path_line(rng: &mut Rng, out: &mut String, root: &str) {
    out.push_str(root);
    out.push('/');
    out.push_str(rng.word(DIRS));
    out.push('/');
    out.push_str(rng.word(IDENTS));
    out.push('_');
    out.push_str(rng.word(FILES));
}

/// One issue-tracker item, as an MCP server would return it.
fn json_item(rng: &mut Rng, out: &mut String) {
    out.push_str(&format!(
        "{{\"id\": {}, \"title\": \"{} {}\", \"state\": \"{}\"}}",
        rng.range(1, 9999),
        rng.word(NOUNS),
        rng.word(VERBS),
        rng.pick(&["open", "closed", "merged"])
    ));
}

// ---------------------------------------------------------------------------
// Conversations and their plans.

/// The agy release whose tool-step convention a conversation follows
/// (FORMAT.md 3.1 and disagreement 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    /// agy 1.0.x: typed tool steps, GENERIC only for the other tools.
    Typed,
    /// agy 1.1.20+: every tool step is GENERIC.
    Generic,
}

/// How one conversation is shaped. Bench conversations follow a real
/// session's frequencies; `--sample` ones are short, read well, and between
/// them show every step and tool kind.
#[derive(Clone, Copy, Debug)]
struct ConversationShape {
    era: Era,
    steps: usize,
    sample: bool,
    /// Sample mode deals tools like cards, starting here in `Tool::ALL`, so
    /// that the sample's conversations between them call every tool.
    first_tool: usize,
    /// Force one failed tool call and one system message.
    force_rare_steps: bool,
    max_output: u64,
    brain: bool,
    page_size: u32,
    first_prompt_bytes: Option<usize>,
}

impl ConversationShape {
    fn for_index(options: &Options, index: usize) -> ConversationShape {
        let mut shape = ConversationShape {
            // One conversation in four follows the newer GENERIC convention;
            // decided by the index so a store's mix does not depend on the
            // seed.
            era: if index % 4 == 3 {
                Era::Generic
            } else {
                Era::Typed
            },
            steps: options.steps,
            sample: options.sample,
            first_tool: 0,
            force_rare_steps: false,
            max_output: options.max_output,
            brain: options.brain,
            page_size: options.page_size,
            first_prompt_bytes: options.first_prompt_bytes,
        };
        if options.sample {
            (shape.era, shape.steps) =
                [(Era::Typed, 14), (Era::Typed, 16), (Era::Generic, 10)][index % 3];
            shape.first_tool = index * 6;
            shape.force_rare_steps = index == 0;
        }
        shape
    }

    /// Run-command outputs above this many bytes are also spilled to
    /// `brain/<id>/steps/<n>/output.txt`, as agy does for long outputs.
    fn spill_over(&self) -> usize {
        if self.sample {
            300
        } else {
            64 * 1024
        }
    }

    /// The longest prose (thinking, replies) worth putting in front of a
    /// reader of the sample.
    fn prose_cap(&self) -> u64 {
        if self.sample {
            200
        } else {
            u64::MAX
        }
    }
}

/// What stays the same across a conversation.
struct Conversation {
    id: String,
    trajectory_id: String,
    workspace: String,
    branch: &'static str,
    title: String,
    started: i64,
    shape: ConversationShape,
}

impl Conversation {
    fn new(rng: &mut Rng, index: usize, shape: ConversationShape) -> Conversation {
        let id = rng.uuid();
        let trajectory_id = rng.uuid();
        let project = rng.word(PROJECTS);
        let title = format!(
            "Fix {} {} in {}",
            rng.word(ADJECTIVES),
            rng.word(IDENTS),
            rng.word(FILES)
        );
        Conversation {
            id,
            trajectory_id,
            workspace: format!("/home/dev/src/{project}"),
            branch: rng.word(BRANCHES),
            title,
            // Conversations start ninety minutes apart, plus up to an hour.
            started: BASE_TIME + index as i64 * 5400 + rng.below(3600) as i64,
            shape,
        }
    }

    fn workspace_uri(&self) -> String {
        format!("file://{}", self.workspace)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    RunCommand,
    ViewFile,
    ListDir,
    GrepSearch,
    WriteFile,
    ReplaceContent,
    Mcp,
    FindByName,
    ReadUrl,
    SearchWeb,
    CommandStatus,
}

impl Tool {
    /// Every tool, in declaration order, so `tool as usize` indexes tables
    /// laid out like this one.
    const ALL: [Tool; 11] = [
        Tool::RunCommand,
        Tool::ViewFile,
        Tool::ListDir,
        Tool::GrepSearch,
        Tool::WriteFile,
        Tool::ReplaceContent,
        Tool::Mcp,
        Tool::FindByName,
        Tool::ReadUrl,
        Tool::SearchWeb,
        Tool::CommandStatus,
    ];

    /// How often a real session calls each tool, relative.
    fn weight(self) -> u64 {
        match self {
            Tool::RunCommand => 30,
            Tool::ViewFile => 25,
            Tool::GrepSearch => 10,
            Tool::ReplaceContent => 9,
            Tool::ListDir => 8,
            Tool::WriteFile => 6,
            Tool::Mcp => 4,
            Tool::FindByName => 3,
            Tool::ReadUrl | Tool::SearchWeb => 2,
            Tool::CommandStatus => 1,
        }
    }

    fn native_name(self) -> &'static str {
        match self {
            Tool::RunCommand => "run_command",
            Tool::ViewFile => "view_file",
            Tool::ListDir => "list_dir",
            Tool::GrepSearch => "grep_search",
            Tool::WriteFile => "write_to_file",
            Tool::ReplaceContent => "replace_file_content",
            Tool::Mcp => "call_mcp_tool",
            Tool::FindByName => "find_by_name",
            Tool::ReadUrl => "read_url_content",
            Tool::SearchWeb => "search_web",
            Tool::CommandStatus => "command_status",
        }
    }

    /// The typed step of agy 1.0.x: (CortexStepType, Step payload field).
    fn typed_step(self) -> Option<(u64, u32)> {
        match self {
            Tool::RunCommand => Some((21, 28)),
            Tool::ViewFile => Some((8, 14)),
            Tool::ListDir => Some((9, 15)),
            Tool::GrepSearch => Some((7, 13)),
            Tool::WriteFile | Tool::ReplaceContent => Some((5, 10)),
            Tool::Mcp => Some((38, 47)),
            _ => None,
        }
    }

    /// The type name the brain mirror prints for this tool's step.
    fn transcript_type(self, era: Era) -> &'static str {
        match (self, era) {
            (Tool::RunCommand, _) => "RUN_COMMAND",
            (Tool::ViewFile, _) => "VIEW_FILE",
            (Tool::ListDir, _) => "LIST_DIRECTORY",
            (Tool::GrepSearch, _) => "GREP_SEARCH",
            (Tool::WriteFile | Tool::ReplaceContent, Era::Typed) => "CODE_ACTION",
            (Tool::Mcp, Era::Typed) => "MCP_TOOL",
            _ => "GENERIC",
        }
    }
}

/// One tool call: declared by a planner step, executed by a tool step.
#[derive(Clone, Debug)]
struct Call {
    id: String,
    tool: Tool,
    /// Seeds the call's arguments and output, so the planner step and the
    /// tool step rebuild the same call independently.
    seed: u64,
    /// Output size before `--target-bytes` scaling.
    base_len: u64,
    fails: bool,
}

#[derive(Clone, Debug)]
enum Kind {
    UserInput,
    History,
    Planner { calls: Vec<Call> },
    Tool(Call),
    Checkpoint { number: u32 },
    SystemMessage,
}

#[derive(Clone, Debug)]
struct PlannedStep {
    kind: Kind,
    /// Index into `Plan::turns`.
    turn: usize,
    seconds: i64,
    nanos: i32,
    seed: u64,
}

struct Plan {
    steps: Vec<PlannedStep>,
    /// Execution id of each user turn (CortexStepMetadata.12).
    turns: Vec<String>,
}

/// Lays out a conversation's steps: kinds, timing and call sizes, but no
/// text yet. Cheap, so `--target-bytes` can fit sizes on it before any
/// output is generated.
fn plan_steps(rng: &mut Rng, conversation: &Conversation) -> Plan {
    let shape = &conversation.shape;
    let mut plan = Plan {
        steps: Vec::with_capacity(shape.steps + 32),
        turns: Vec::new(),
    };
    let mut clock = conversation.started;
    let mut dealt = shape.first_tool;
    let mut checkpoints = 0;
    let mut forced_failure = !shape.force_rare_steps;
    let total_weight: u64 = Tool::ALL.iter().map(|t| t.weight()).sum();

    while plan.steps.len() < shape.steps {
        let turn = plan.turns.len();
        plan.turns.push(rng.uuid());
        if turn > 0 {
            clock += rng.range(30, 1800) as i64;
        }
        let push =
            |plan: &mut Plan, rng: &mut Rng, kind: Kind, clock: &mut i64, gap: (u64, u64)| {
                *clock += rng.range(gap.0, gap.1) as i64;
                plan.steps.push(PlannedStep {
                    kind,
                    turn,
                    seconds: *clock,
                    nanos: rng.below(1_000_000_000) as i32,
                    seed: rng.next_u64(),
                });
            };
        push(&mut plan, rng, Kind::UserInput, &mut clock, (0, 0));
        push(&mut plan, rng, Kind::History, &mut clock, (0, 1));
        // Agent loops: mostly a handful of tool rounds, now and then a long run.
        let rounds = if shape.sample {
            rng.range(2, 3)
        } else if rng.chance(0.1) {
            rng.range(8, 30)
        } else {
            rng.range(1, 6)
        };
        for _ in 0..rounds {
            let n_calls = match rng.below(10) {
                _ if shape.sample => 1 + rng.below(2),
                0..=6 => 1,
                7 | 8 => 2,
                _ => 3,
            };
            let calls: Vec<Call> = (0..n_calls)
                .map(|_| {
                    let tool = if shape.sample {
                        dealt += 1;
                        Tool::ALL[(dealt - 1) % Tool::ALL.len()]
                    } else {
                        let mut ticket = rng.below(total_weight);
                        *Tool::ALL
                            .iter()
                            .find(|t| {
                                let hit = ticket < t.weight();
                                ticket = ticket.saturating_sub(t.weight());
                                hit
                            })
                            .unwrap()
                    };
                    let mut fails = rng.chance(0.03) && tool != Tool::RunCommand;
                    if !forced_failure && tool == Tool::ViewFile {
                        fails = true;
                        forced_failure = true;
                    }
                    Call {
                        id: rng.token(ALNUM_LOWER, 8),
                        tool,
                        seed: rng.next_u64(),
                        base_len: output_len(rng, shape.max_output),
                        fails,
                    }
                })
                .collect();
            push(
                &mut plan,
                rng,
                Kind::Planner {
                    calls: calls.clone(),
                },
                &mut clock,
                (2, 25),
            );
            for call in calls {
                push(&mut plan, rng, Kind::Tool(call), &mut clock, (0, 12));
            }
        }
        push(
            &mut plan,
            rng,
            Kind::Planner { calls: Vec::new() },
            &mut clock,
            (2, 20),
        );
        if turn == 0 || rng.chance(0.3) {
            checkpoints += 1;
            push(
                &mut plan,
                rng,
                Kind::Checkpoint {
                    number: checkpoints,
                },
                &mut clock,
                (0, 2),
            );
        }
        if rng.chance(0.04) || (shape.force_rare_steps && turn == 0) {
            push(&mut plan, rng, Kind::SystemMessage, &mut clock, (0, 1));
        }
    }
    // A bench conversation has exactly the steps asked for, even if that
    // cuts a turn (as an interrupted session does); the sample ends on a
    // turn boundary so it reads as a finished conversation.
    if !shape.sample {
        plan.steps.truncate(shape.steps);
    }
    plan
}

/// A tool output size: mostly under 2 KiB, a sixth up to 32 KiB, and a few
/// percent up to `max` (log-uniform within each band).
fn output_len(rng: &mut Rng, max: u64) -> u64 {
    let max = max.max(64) as f64;
    let band = rng.unit();
    let (lo, hi): (f64, f64) = if band < 0.80 {
        (12.0, 2048.0)
    } else if band < 0.97 {
        (2048.0, 32768.0)
    } else {
        (32768.0, max)
    };
    let (lo, hi) = (lo.min(max / 4.0), hi.min(max));
    rng.log_uniform(lo, hi.max(lo + 1.0)) as u64
}

/// Turns a planned size into bytes: scaled by the `--target-bytes` fit and
/// capped by `--max-output`.
#[derive(Clone, Copy, Debug)]
struct OutputSizes {
    scale: f64,
    max: u64,
}

impl OutputSizes {
    fn len(self, call: &Call) -> usize {
        ((call.base_len as f64 * self.scale).round() as u64).min(self.max) as usize
    }
}

/// Finds the output scale at which the conversation's rows add up to about
/// `target` bytes. The fixed bytes (envelopes, prompts, thinking) are
/// measured by rendering once with empty outputs, what each output byte
/// costs by rendering probe calls; the scale is then bisected over the
/// planned sizes.
fn fit_scale(
    conversation: &Conversation,
    plan: &Plan,
    target: u64,
    max: u64,
    cost: &OutputCosts,
) -> f64 {
    let empty = OutputSizes { scale: 0.0, max };
    let fixed: u64 = plan
        .steps
        .iter()
        .enumerate()
        .map(|(idx, step)| render_step(conversation, plan, idx, step, empty, false).row_bytes())
        .sum();
    let grown = |scale: f64| -> f64 {
        let sizes = OutputSizes { scale, max };
        plan.steps
            .iter()
            .filter_map(|s| match &s.kind {
                Kind::Tool(call) => Some(sizes.len(call) as f64 * cost[call.tool as usize]),
                _ => None,
            })
            .sum()
    };
    let want = target.saturating_sub(fixed) as f64;
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while grown(hi) < want && hi < 1e9 {
        hi *= 2.0;
    }
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if grown(mid) < want {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Row bytes per byte of tool output, by tool (indexed like `Tool::ALL`).
/// More than one: an edit's text also sits in the call's arguments, which
/// agy stores in the planner step, the tool step's metadata and the
/// metadata column; JSON escaping and line numbers add a little more.
type OutputCosts = [f64; Tool::ALL.len()];

/// The [`OutputCosts`] of a conversation's era, measured on a probe call
/// rendered at two sizes, so they stay right whatever the renderers do.
fn output_costs(conversation: &Conversation, plan: &Plan) -> OutputCosts {
    const PROBE: u64 = 1 << 16;
    let mut cost = [1.0; Tool::ALL.len()];
    for tool in Tool::ALL {
        let call = Call {
            id: "probe".to_string(),
            tool,
            seed: 1,
            base_len: PROBE,
            fails: false,
        };
        let steps = [
            Kind::Planner {
                calls: vec![call.clone()],
            },
            Kind::Tool(call),
        ];
        let bytes = |scale: f64| -> u64 {
            let sizes = OutputSizes {
                scale,
                max: u64::MAX,
            };
            steps
                .iter()
                .map(|kind| {
                    let step = PlannedStep {
                        kind: kind.clone(),
                        turn: 0,
                        seconds: conversation.started,
                        nanos: 0,
                        seed: 1,
                    };
                    render_step(conversation, plan, 0, &step, sizes, false).row_bytes()
                })
                .sum()
        };
        cost[tool as usize] = bytes(1.0).saturating_sub(bytes(0.0)) as f64 / PROBE as f64;
    }
    cost
}

// ---------------------------------------------------------------------------
// Rendering: protobuf rows and brain lines.

/// One step, ready to insert, plus what the brain mirror shows of it.
struct Rendered {
    step_type: u64,
    status: u64,
    metadata: Vec<u8>,
    error_details: Option<Vec<u8>>,
    payload: Vec<u8>,
    /// `gen_metadata.data` for planner steps.
    generation: Option<Vec<u8>>,
    brain: Option<BrainView>,
}

impl Rendered {
    fn row_bytes(&self) -> u64 {
        (self.metadata.len()
            + self.payload.len()
            + self.error_details.as_ref().map_or(0, Vec::len)
            + self.generation.as_ref().map_or(0, Vec::len)) as u64
    }
}

/// The brain transcript's view of a step (FORMAT.md section 10).
#[derive(Default)]
struct BrainView {
    source: &'static str,
    kind: &'static str,
    content: Option<String>,
    thinking: Option<String>,
    tool_calls: Vec<BrainToolCall>,
    exit_code: Option<i32>,
    /// Full output spilled to `steps/<idx>/output.txt`.
    spill: Option<String>,
}

#[derive(Serialize)]
struct BrainToolCall {
    name: &'static str,
    /// Every value is itself JSON text, as agy writes it.
    args: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct TranscriptLine<'a> {
    step_index: usize,
    source: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    status: &'static str,
    created_at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tool_calls: &'a [BrainToolCall],
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
}

const SOURCE_MODEL: u64 = 2;
const SOURCE_USER_EXPLICIT: u64 = 4;
const SOURCE_SYSTEM: u64 = 5;
const STATUS_DONE: u64 = 3;
const STATUS_ERROR: u64 = 7;

fn source_name(source: u64) -> &'static str {
    match source {
        SOURCE_MODEL => "MODEL",
        SOURCE_USER_EXPLICIT => "USER_EXPLICIT",
        _ => "SYSTEM",
    }
}

/// google.protobuf.Timestamp.
fn timestamp(w: &mut Writer, field: u32, seconds: i64, nanos: i32) {
    w.message(field, |t| {
        t.int64(1, seconds);
        if nanos != 0 {
            t.int64(2, i64::from(nanos));
        }
    });
}

/// A call's arguments with their native JSON types. A BTreeMap, because Go's
/// encoding/json (agy's writer) sorts object keys.
fn call_args(
    conversation: &Conversation,
    call: &Call,
    sizes: OutputSizes,
) -> BTreeMap<String, Value> {
    let mut rng = Rng::new(call.seed);
    let ws = &conversation.workspace;
    let file = format!("{ws}/{}/{}", rng.word(DIRS), rng.word(FILES));
    let mut args = BTreeMap::new();
    let mut put = |k: &str, v: Value| {
        args.insert(k.to_string(), v);
    };
    let (action, summary) = match call.tool {
        Tool::RunCommand => {
            let command = match rng.below(5) {
                0 => format!("cargo test {}", rng.word(TESTS)),
                1 => "cargo build --release".to_string(),
                2 => format!("git log --oneline -n {}", rng.range(5, 40)),
                3 => format!("rg -n '{}' {}", rng.word(IDENTS), rng.word(DIRS)),
                _ => "cargo clippy --all-targets -- -D warnings".to_string(),
            };
            put("CommandLine", json!(command));
            put("Cwd", json!(ws));
            put(
                "WaitMsBeforeAsync",
                json!(*rng.pick(&[2000, 2000, 2000, 0, 500, 3000, 5000, 10000])),
            );
            ("Running command", "Shell command")
        }
        Tool::ViewFile => {
            put("AbsolutePath", json!(file));
            let start = if rng.chance(0.6) {
                1
            } else {
                rng.range(10, 400)
            };
            put("StartLine", json!(start));
            put("EndLine", json!(start + rng.range(40, 800)));
            ("Viewing file", "File view")
        }
        Tool::ListDir => {
            put("DirectoryPath", json!(format!("{ws}/{}", rng.word(DIRS))));
            ("Listing directory", "Directory listing")
        }
        Tool::GrepSearch => {
            put("Query", json!(rng.word(METHODS)));
            put("SearchPath", json!(ws));
            put("MatchPerLine", json!(true));
            ("Searching code", "Code search")
        }
        Tool::WriteFile => {
            put("TargetFile", json!(file));
            put("CodeContent", json!(edit_text(call, sizes, 1, 0)));
            put("Overwrite", json!(rng.chance(0.3)));
            put("Description", json!(format!("Create {}", rng.word(FILES))));
            ("Creating file", "New file")
        }
        Tool::ReplaceContent => {
            put("TargetFile", json!(file));
            put("TargetContent", json!(edit_text(call, sizes, 2, 0)));
            put("ReplacementContent", json!(edit_text(call, sizes, 2, 1)));
            put("AllowMultiple", json!(false));
            put("Instruction", json!(format!("Stop {}", rng.word(VERBS))));
            ("Editing file", "File edit")
        }
        Tool::Mcp => {
            let (server, tools) = rng.pick(MCP_SERVERS);
            put("ServerName", json!(server));
            put("ToolName", json!(rng.pick(tools)));
            put(
                "Arguments",
                json!({ "query": rng.word(IDENTS), "limit": rng.range(5, 50) }),
            );
            ("Calling MCP tool", "MCP call")
        }
        Tool::FindByName => {
            put("SearchDirectory", json!(ws));
            put("Pattern", json!(format!("*{}*", rng.word(IDENTS))));
            put("MaxDepth", json!(rng.range(2, 6)));
            ("Finding files", "File search")
        }
        Tool::ReadUrl => {
            put("Url", json!(rng.word(URLS)));
            ("Reading page", "Web page")
        }
        Tool::SearchWeb => {
            put(
                "Query",
                json!(format!(
                    "rust {} {}",
                    rng.word(METHODS),
                    rng.word(ADJECTIVES)
                )),
            );
            ("Searching the web", "Web search")
        }
        Tool::CommandStatus => {
            put("CommandId", json!(rng.uuid()));
            put("WaitDurationSeconds", json!(rng.range(5, 60)));
            put("OutputCharacterCount", json!(rng.range(500, 4000)));
            ("Checking command", "Command status")
        }
    };
    put("toolAction", json!(action));
    put("toolSummary", json!(summary));
    args
}

/// The text an edit call carries in its arguments: `parts` pieces of about
/// the same size (1 for a new file; 2 for a replacement's old and new text).
fn edit_text(call: &Call, sizes: OutputSizes, parts: usize, which: u64) -> String {
    let mut rng = Rng::new(call.seed ^ (0x5eed + which));
    fill(&mut rng, sizes.len(call) / parts, code_line)
}

fn chat_tool_call(conversation: &Conversation, call: &Call, sizes: OutputSizes) -> Vec<u8> {
    let args = call_args(conversation, call, sizes);
    let mut w = Writer::new();
    w.string(1, &call.id)
        .string(2, call.tool.native_name())
        .string(
            3,
            &serde_json::to_string(&args).expect("JSON of plain values"),
        );
    w.into_bytes()
}

/// ModelUsageStats, consistent with itself: output = thinking + response.
fn usage(rng: &mut Rng) -> Vec<u8> {
    let thinking = rng.range(0, 1500);
    let response = rng.range(20, 900);
    let mut w = Writer::new();
    w.varint(1, MODEL_ID)
        .varint(2, rng.range(200, 9000))
        .varint(3, thinking + response)
        .varint(4, rng.range(0, 4000))
        .varint(5, rng.range(5000, 180_000))
        .varint(9, thinking)
        .varint(10, response)
        .string(11, &format!("req_{}", rng.token(ALNUM_LOWER, 20)));
    w.into_bytes()
}

/// A Step: fields in number order, as Go's marshaller writes them, with the
/// error details (field 31) in their place among the payload fields.
fn step_bytes(
    step_type: u64,
    status: u64,
    metadata: &[u8],
    payload_field: u32,
    payload: &[u8],
    error: Option<&[u8]>,
) -> Vec<u8> {
    let mut w = Writer::new();
    w.varint(1, step_type).varint(4, status).bytes(5, metadata);
    if payload_field < 31 {
        w.bytes(payload_field, payload);
    }
    if let Some(error) = error {
        w.bytes(31, error);
    }
    if payload_field > 31 {
        w.bytes(payload_field, payload);
    }
    w.into_bytes()
}

fn render_step(
    conversation: &Conversation,
    plan: &Plan,
    idx: usize,
    step: &PlannedStep,
    sizes: OutputSizes,
    want_brain: bool,
) -> Rendered {
    let era = conversation.shape.era;
    let mut rng = Rng::new(step.seed);
    let mut meta = Writer::new();
    timestamp(&mut meta, 1, step.seconds, step.nanos);
    let source = match &step.kind {
        Kind::UserInput => SOURCE_USER_EXPLICIT,
        Kind::Planner { .. } | Kind::Tool(_) => SOURCE_MODEL,
        _ => SOURCE_SYSTEM,
    };
    meta.varint(3, source);

    let mut brain = BrainView {
        source: source_name(source),
        ..BrainView::default()
    };
    let mut generation = None;
    let mut error_details = None;
    let mut status = STATUS_DONE;
    let (step_type, payload_field, payload) = match &step.kind {
        Kind::UserInput => {
            brain.kind = "USER_INPUT";
            let prompt = user_prompt(&mut rng, conversation, idx == 0);
            if want_brain {
                brain.content = Some(format!(
                    "<USER_REQUEST>\n{prompt}\n</USER_REQUEST>\n<ADDITIONAL_METADATA>\nThe current local time is: {}. The user's workspace is {}.\n</ADDITIONAL_METADATA>",
                    utc_text(step.seconds),
                    conversation.workspace
                ));
            }
            let mut w = Writer::new();
            w.string(2, &prompt).message(3, |item| {
                item.string(1, &prompt);
            });
            (14, 19, w.into_bytes())
        }
        Kind::History => {
            brain.kind = "CONVERSATION_HISTORY";
            (98, 111, Vec::new())
        }
        Kind::Planner { calls } => {
            brain.kind = "PLANNER_RESPONSE";
            let stats = usage(&mut rng);
            meta.bytes(9, &stats);
            let thinking = prose_between(&mut rng, 80, 1600.min(conversation.shape.prose_cap()));
            // Tool-call turns usually say nothing; the closing turn speaks.
            let response = if calls.is_empty() {
                Some(closing_reply(&mut rng, conversation.shape.prose_cap()))
            } else if rng.chance(0.2) {
                Some(prose_between(&mut rng, 40, 200))
            } else {
                None
            };
            let signature_len = rng.range(64, 344) as usize;
            let signature = rng.token(BASE64, signature_len);
            let mut w = Writer::new();
            if let Some(text) = &response {
                w.string(1, text);
            }
            w.string(3, &thinking)
                .string(4, &signature)
                .string(6, &format!("bot-{}", rng.uuid()));
            for call in calls {
                w.bytes(7, &chat_tool_call(conversation, call, sizes));
            }
            if let Some(text) = &response {
                w.string(8, text);
            }
            w.varint(12, if calls.is_empty() { 2 } else { 10 });
            let mut chat_model = Writer::new();
            chat_model.message(1, |m| {
                m.bytes(4, &stats).string(19, RESPONSE_MODEL);
            });
            generation = Some(chat_model.into_bytes());
            if want_brain {
                brain.content = response;
                brain.thinking = Some(thinking);
                brain.tool_calls = calls
                    .iter()
                    .map(|call| BrainToolCall {
                        name: call.tool.native_name(),
                        args: call_args(conversation, call, sizes)
                            .into_iter()
                            .map(|(k, v)| (k, v.to_string()))
                            .collect(),
                    })
                    .collect();
            }
            (15, 20, w.into_bytes())
        }
        Kind::Tool(call) => {
            meta.bytes(4, &chat_tool_call(conversation, call, sizes));
            brain.kind = call.tool.transcript_type(era);
            let out = tool_output(conversation, call, sizes, step.seconds);
            if call.fails {
                status = STATUS_ERROR;
                let mut e = Writer::new();
                e.string(1, &out.error_user)
                    .string(2, &out.error_short)
                    .string(3, &out.error_full);
                error_details = Some(e.into_bytes());
            }
            if want_brain {
                brain.content = Some(if call.fails {
                    out.error_user.clone()
                } else {
                    out.result_text.clone()
                });
                brain.exit_code = out.exit_code;
                if call.tool == Tool::RunCommand && out.body.len() > conversation.shape.spill_over()
                {
                    brain.spill = Some(out.body.clone());
                }
            }
            match (era, call.tool.typed_step()) {
                (Era::Typed, Some((step_type, field))) => (step_type, field, out.typed),
                _ => {
                    // The GENERIC carrier: the string map of arguments, and
                    // the model-facing text as the result.
                    let mut w = Writer::new();
                    for (k, v) in call_args(conversation, call, sizes) {
                        let text = match v {
                            Value::String(s) => s,
                            other => other.to_string(),
                        };
                        w.message(1, |entry| {
                            entry.string(1, &k).string(2, &text);
                        });
                    }
                    if !call.fails {
                        w.message(2, |r| {
                            r.string(1, &out.result_text);
                        });
                    }
                    (132, 140, w.into_bytes())
                }
            }
        }
        Kind::Checkpoint { number } => {
            brain.kind = "CHECKPOINT";
            let intent = format!(
                "{}. {}",
                conversation.title,
                prose_between(&mut rng, 40, 240.min(conversation.shape.prose_cap()))
            );
            if want_brain {
                brain.content = Some(format!("{{{{ CHECKPOINT {number} }}}}\n{intent}"));
            }
            let mut w = Writer::new();
            w.string(4, &intent)
                .bool(9, true)
                .string(10, &conversation.title);
            (23, 30, w.into_bytes())
        }
        Kind::SystemMessage => {
            brain.kind = "SYSTEM_MESSAGE";
            let text = rng
                .pick(&[
                    "The conversation was resumed. Background tasks and subagents from the previous session were stopped.",
                    "The user changed the model settings for this conversation.",
                    "Context was compacted to stay within the model's window.",
                ])
                .to_string();
            let mut w = Writer::new();
            w.string(1, &text).string(3, "resume");
            if want_brain {
                brain.content = Some(text);
            }
            (101, 114, w.into_bytes())
        }
    };
    meta.string(12, &plan.turns[step.turn]);
    let metadata = meta.into_bytes();
    let payload = step_bytes(
        step_type,
        status,
        &metadata,
        payload_field,
        &payload,
        error_details.as_deref(),
    );
    Rendered {
        step_type,
        status,
        metadata,
        error_details,
        payload,
        generation,
        brain: want_brain.then_some(brain),
    }
}

fn user_prompt(rng: &mut Rng, conversation: &Conversation, first: bool) -> String {
    if let (true, Some(len)) = (first, conversation.shape.first_prompt_bytes) {
        return format!("{} \u{2014} {}", conversation.title, prose(rng, len));
    }
    if first {
        return format!(
            "{} \u{2014} {}",
            conversation.title,
            prose_between(rng, 20, 160)
        );
    }
    let mut text = match rng.below(5) {
        0 => format!(
            "Why does `cargo test {}` fail on CI but not locally?",
            rng.word(TESTS)
        ),
        1 => format!("Now make {} stop: it {}.", rng.word(NOUNS), rng.word(VERBS)),
        2 => "Looks good. Can you also add a test for the empty case?".to_string(),
        3 => format!("Please rename `{}` to something clearer.", rng.word(IDENTS)),
        _ => "Run the whole test suite and fix whatever is red.".to_string(),
    };
    // Now and then the user pastes a log.
    if rng.chance(0.05) && !conversation.shape.sample {
        text.push_str("\n\n```\n");
        let len = rng.range(200, 6000) as usize;
        text.push_str(&fill(rng, len, build_log_line));
        text.push_str("\n```");
    }
    text
}

fn closing_reply(rng: &mut Rng, cap: u64) -> String {
    let mut text = prose_between(rng, 60, 400.min(cap));
    if rng.chance(0.5) {
        text.push_str("\n\nChanges:\n");
        for _ in 0..rng.range(2, 4) {
            text.push_str(&format!(
                "- `{}/{}`: {} no longer {}\n",
                rng.word(DIRS),
                rng.word(FILES),
                rng.word(IDENTS),
                rng.word(VERBS)
            ));
        }
    }
    text
}

/// A tool's result in every form agy stores it.
struct ToolOutput {
    /// The kind-specific payload message of the typed step.
    typed: Vec<u8>,
    /// The raw output (for spill files).
    body: String,
    /// What the model sees: GENERIC's result and the brain's content.
    result_text: String,
    exit_code: Option<i32>,
    error_user: String,
    error_short: String,
    error_full: String,
}

fn tool_output(
    conversation: &Conversation,
    call: &Call,
    sizes: OutputSizes,
    at: i64,
) -> ToolOutput {
    let len = sizes.len(call);
    let args = call_args(conversation, call, sizes);
    let arg = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut rng = Rng::new(call.seed ^ 0x0007_7e57);
    let mut w = Writer::new();
    let mut exit_code = None;
    let mut out = ToolOutput {
        typed: Vec::new(),
        body: String::new(),
        result_text: String::new(),
        exit_code: None,
        error_user: String::new(),
        error_short: String::new(),
        error_full: String::new(),
    };
    match call.tool {
        Tool::RunCommand => {
            let code = *rng.pick(&[0, 0, 0, 0, 0, 0, 0, 1, 101, 2]);
            let body = fill(&mut rng, len, build_log_line);
            w.string(2, &arg("Cwd"));
            if code != 0 {
                w.varint(6, code as u64);
            }
            w.bool(11, true).varint(12, 2000).message(21, |o| {
                o.string(1, &body);
            });
            w.string(23, &arg("CommandLine"));
            exit_code = Some(code);
            out.result_text = format!(
                "Created At: {}\nCompleted At: {}\n{}\nOutput:\n{body}",
                utc_text(at - 3),
                utc_text(at),
                if code == 0 {
                    "The command completed successfully.".to_string()
                } else {
                    format!("The command exited with code {code}.")
                }
            );
            out.body = body;
        }
        Tool::ViewFile => {
            let path = arg("AbsolutePath");
            let uri = format!("file://{path}");
            w.string(1, &uri);
            if call.fails {
                out.error_user = format!("Could not read {path}: the file does not exist.");
                out.error_short = "file not found".to_string();
                out.error_full = format!("open {path}: no such file or directory");
            } else {
                let content = fill(&mut rng, len, code_line);
                let lines = content.lines().count() as u64;
                w.varint(2, 1)
                    .varint(3, lines.max(1))
                    .string(4, &content)
                    .varint(11, lines)
                    .varint(12, content.len() as u64);
                let mut text = format!("File Path: `{uri}`\nTotal Lines: {lines}\n");
                for (n, line) in content.lines().enumerate() {
                    text.push_str(&format!("{}: {line}\n", n + 1));
                }
                out.result_text = text;
                out.body = content;
            }
        }
        Tool::ListDir => {
            let dir = arg("DirectoryPath");
            w.string(1, &format!("file://{dir}"));
            let mut text = String::new();
            for _ in 0..(len / 28).max(1) {
                let is_dir = rng.chance(0.25);
                let name = if is_dir {
                    rng.word(IDENTS).to_string()
                } else {
                    format!("{}_{}", rng.word(IDENTS), rng.word(FILES))
                };
                let count = rng.range(1, 40);
                let size = rng.range(10, 90_000);
                w.message(3, |e| {
                    e.string(1, &name);
                    if is_dir {
                        e.bool(2, true).varint(3, count);
                    } else {
                        e.varint(4, size);
                    }
                });
                if is_dir {
                    text.push_str(&format!("{name}/\t{count} children\n"));
                } else {
                    text.push_str(&format!("{name}\t{size} bytes\n"));
                }
            }
            out.result_text = text;
        }
        Tool::GrepSearch => {
            w.string(1, &arg("Query"));
            if call.fails {
                let message = "regex parse error: unclosed group";
                w.string(5, message);
                out.error_user = format!("Search failed: {message}.");
                out.error_short = message.to_string();
                out.error_full = format!("grep_search: {message} at position 7");
            } else {
                let hits = fill(&mut rng, len, grep_line);
                w.string(3, &hits)
                    .varint(7, hits.lines().count() as u64)
                    .string(11, &format!("file://{}", arg("SearchPath")));
                out.result_text = hits;
            }
        }
        Tool::WriteFile | Tool::ReplaceContent => {
            let target = arg("TargetFile");
            let uri = format!("file://{target}");
            let create = call.tool == Tool::WriteFile;
            w.message(1, |spec| {
                if create {
                    spec.message(2, |c| {
                        c.string(1, &arg("CodeContent"))
                            .message(2, |p| {
                                p.string(5, &uri);
                            })
                            .bool(4, true);
                    });
                } else {
                    spec.message(1, |c| {
                        c.string(1, &arg("Instruction"))
                            .bool(2, true)
                            .message(4, |p| {
                                p.string(5, &uri);
                            })
                            .message(9, |chunk| {
                                chunk
                                    .string(1, &arg("TargetContent"))
                                    .string(2, &arg("ReplacementContent"));
                            });
                    });
                }
            });
            if call.fails {
                out.error_user =
                    format!("The edit to {target} could not be applied: target content not found.");
                out.error_short = "target content not found".to_string();
                out.error_full =
                    format!("replace_file_content: no match for TargetContent in {target}");
            } else {
                w.message(2, |result| {
                    result.message(1, |edit| {
                        edit.string(8, &uri);
                        if create {
                            edit.bool(11, true);
                        }
                    });
                });
                w.bool(4, true);
                out.result_text = if create {
                    format!("Created file {target} with the requested content.")
                } else {
                    format!("The following changes were made to {target}:\n@@ edit applied @@")
                };
            }
        }
        Tool::Mcp => {
            let server = arg("ServerName");
            w.string(1, &server)
                .bytes(2, &chat_tool_call(conversation, call, sizes));
            if call.fails {
                out.error_user = format!("MCP server {server} is not connected.");
                out.error_short = "mcp server unavailable".to_string();
                out.error_full = format!("mcp: dial {server}: connection refused");
            } else {
                // Whole items, so the result stays valid JSON at any size.
                let mut body = String::from("{\"items\": [");
                while body.len() < 16 || body.len() + 3 < len {
                    if body.ends_with('}') {
                        body.push(',');
                    }
                    body.push_str("\n  ");
                    json_item(&mut rng, &mut body);
                }
                body.push_str("\n]}");
                w.string(3, &body);
                out.result_text = body;
            }
        }
        Tool::FindByName | Tool::ReadUrl | Tool::SearchWeb | Tool::CommandStatus => {
            if call.fails {
                out.error_user =
                    format!("{} failed: the request timed out.", call.tool.native_name());
                out.error_short = "timeout".to_string();
                out.error_full = "context deadline exceeded".to_string();
            } else {
                out.result_text = match call.tool {
                    Tool::FindByName => {
                        let ws = conversation.workspace.clone();
                        fill(&mut rng, len, |r, o| path_line(r, o, &ws))
                    }
                    Tool::CommandStatus => fill(&mut rng, len, build_log_line),
                    _ => prose(&mut rng, len),
                };
            }
        }
    }
    if call.fails && out.error_user.is_empty() {
        out.error_user = format!("{} failed.", call.tool.native_name());
        out.error_short = "tool error".to_string();
        out.error_full = out.error_user.clone();
    }
    out.typed = w.into_bytes();
    out.exit_code = exit_code;
    out
}

/// `YYYY-MM-DDTHH:MM:SSZ`, as the brain mirror prints times.
fn utc_text(seconds: i64) -> String {
    let mut days = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut year = 1970;
    loop {
        let len = if leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let month_lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 0;
    while days >= month_lengths[month] {
        days -= month_lengths[month];
        month += 1;
    }
    format!(
        "{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        month + 1,
        days + 1,
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

// ---------------------------------------------------------------------------
// Writing.

/// How much of a conversation is left in its WAL (`--wal-steps`, `--shm`).
#[derive(Clone, Copy, Debug)]
struct WalShape {
    /// The last this many steps are written in WAL mode and left there.
    steps: usize,
    /// Keep the `-shm` beside the `-wal` (a killed or running agy).
    shm: bool,
}

/// Seeds SQLite's random number generator, whose output becomes the salts
/// of each WAL header, so a WAL written twice is the same bytes.
fn seed_sqlite_randomness(seed: u64) {
    let seed = (seed as u32) | 1;
    // SAFETY: SQLITE_TESTCTRL_PRNG_SEED takes an int and a database
    // handle, which may be null; it only sets a global before any
    // connection of this process is open.
    unsafe {
        rusqlite::ffi::sqlite3_test_control(
            rusqlite::ffi::SQLITE_TESTCTRL_PRNG_SEED,
            seed as std::ffi::c_int,
            std::ptr::null_mut::<rusqlite::ffi::sqlite3>(),
        );
    }
}

fn write_conversation(
    root: &Path,
    conversation: &Conversation,
    plan: &Plan,
    sizes: OutputSizes,
    wal: WalShape,
) -> Result<Totals> {
    let shape = &conversation.shape;
    let db_path = root
        .join("conversations")
        .join(format!("{}.db", conversation.id));
    let sidecar = |suffix: &str| {
        let mut name = db_path.clone().into_os_string();
        name.push(suffix);
        PathBuf::from(name)
    };
    for suffix in ["", "-wal", "-shm", "-journal"] {
        match fs::remove_file(sidecar(suffix)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    let brain_dir = root.join("brain").join(&conversation.id);
    if brain_dir.exists() {
        fs::remove_dir_all(&brain_dir)?;
    }

    let conn = Connection::open(&db_path)?;
    conn.pragma_update(None, "page_size", shape.page_size)?;
    // Built without a journal (nothing to roll back to in a new file), then
    // switched to WAL below so the header says what agy's does.
    conn.pragma_update(None, "journal_mode", "OFF")?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    let mut transcripts = if shape.brain {
        let logs = brain_dir.join(".system_generated").join("logs");
        fs::create_dir_all(&logs)?;
        Some(Transcripts {
            compact: BufWriter::new(fs::File::create(logs.join("transcript.jsonl"))?),
            full: BufWriter::new(fs::File::create(logs.join("transcript_full.jsonl"))?),
        })
    } else {
        None
    };

    let mut totals = Totals::default();
    conn.execute_batch("BEGIN")?;
    for (_, _, sql) in AGY_SCHEMA {
        conn.execute(sql, [])?;
    }
    conn.pragma_update(None, "user_version", AGY_USER_VERSION)?;
    conn.execute(
        "INSERT INTO trajectory_meta (trajectory_id, cascade_id, trajectory_type, source) VALUES (?1, ?2, 4, 17)",
        params![conversation.trajectory_id, conversation.id],
    )?;
    let trajectory_metadata = trajectory_metadata(conversation);
    totals.row_bytes += trajectory_metadata.len() as u64;
    conn.execute(
        "INSERT INTO trajectory_metadata_blob (id, data) VALUES ('main', ?1)",
        params![trajectory_metadata],
    )?;
    // The steps before `in_wal` go in the first transaction; the rest, one
    // transaction each, after the switch to WAL.
    let in_wal = plan.steps.len().saturating_sub(wal.steps);
    let mut generations = 0i64;
    let mut last_turn = None;
    for (idx, step) in plan.steps.iter().enumerate() {
        if idx == in_wal {
            conn.execute_batch("COMMIT")?;
            switch_to_wal(&conn, &db_path)?;
            if wal.steps > 0 {
                // As agy's SQLite: durable commits, automatic checkpoints
                // every 1,000 pages, and none when it closes.
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                conn.set_db_config(
                    rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                    true,
                )?;
            }
        }
        if idx >= in_wal {
            conn.execute_batch("BEGIN")?;
        }
        if last_turn != Some(step.turn) {
            last_turn = Some(step.turn);
            let mut w = Writer::new();
            w.message(10, |config| {
                config.message(1, |planner| {
                    planner.string(28, "gemini-3.5-flash-low");
                });
            });
            let data = w.into_bytes();
            totals.row_bytes += data.len() as u64;
            conn.prepare_cached("INSERT INTO executor_metadata (idx, data) VALUES (?1, ?2)")?
                .execute(params![step.turn as i64, data])?;
        }
        let rendered = render_step(conversation, plan, idx, step, sizes, transcripts.is_some());
        totals.row_bytes += rendered.row_bytes();
        totals.steps += 1;
        conn.prepare_cached(
            "INSERT INTO steps (idx, step_type, status, has_subtrajectory, metadata, error_details, permissions, task_details, render_info, step_payload, step_format) \
             VALUES (?1, ?2, ?3, 0, ?4, ?5, NULL, NULL, NULL, ?6, 0)",
        )?
        .execute(params![
            idx as i64,
            rendered.step_type as i64,
            rendered.status as i64,
            rendered.metadata,
            rendered.error_details,
            rendered.payload,
        ])?;
        if let Some(data) = &rendered.generation {
            conn.prepare_cached("INSERT INTO gen_metadata (idx, data, size) VALUES (?1, ?2, ?3)")?
                .execute(params![generations, data, data.len() as i64])?;
            generations += 1;
        }
        if let (Some(t), Some(view)) = (transcripts.as_mut(), &rendered.brain) {
            t.write(idx, step, rendered.status, view)?;
            if let Some(spill) = &view.spill {
                let dir = brain_dir.join("steps").join(idx.to_string());
                fs::create_dir_all(&dir)?;
                fs::write(dir.join("output.txt"), spill)?;
            }
        }
        if idx >= in_wal {
            conn.execute_batch("COMMIT")?;
        }
    }
    if in_wal == plan.steps.len() {
        conn.execute_batch("COMMIT")?;
        switch_to_wal(&conn, &db_path)?;
    }
    // Closing the last connection checkpoints and removes -wal and -shm,
    // unless the steps are to stay in the WAL.
    conn.close().map_err(|(_, e)| e)?;
    if wal.steps > 0 && !wal.shm {
        fs::remove_file(sidecar("-shm"))?;
    }
    if let Some(t) = transcripts {
        t.finish()?;
    }
    totals.db_bytes = fs::metadata(&db_path)?.len();
    Ok(totals)
}

fn switch_to_wal(conn: &Connection, db_path: &Path) -> Result<()> {
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))?;
    if mode != "wal" {
        return Err(format!(
            "{}: could not switch to WAL (got {mode})",
            db_path.display()
        )
        .into());
    }
    Ok(())
}

/// The artifacts agy keeps at the top of a conversation's brain directory
/// (FORMAT.md 1): a task list, an implementation plan with its metadata
/// companion, and a walkthrough, as Markdown. The sample's first
/// conversation has them, so the tour shows agy-render's artifacts.
fn write_artifacts(root: &Path, conversation: &Conversation) -> Result<()> {
    let dir = root.join("brain").join(&conversation.id);
    let title = &conversation.title;
    let workspace = &conversation.workspace;
    let files = [
        (
            "task.md",
            format!(
                "# Task: {title}\n\n- [x] Reproduce it in `{workspace}`\n- [x] Find the cause\n- [x] Fix it\n- [ ] Add a regression test\n"
            ),
        ),
        (
            "implementation_plan.md",
            format!(
                "# Implementation plan\n\n## Goal\n\n{title}, without changing the public API.\n\n## Steps\n\n1. Read the failing path and its tests.\n2. Change the one function at fault.\n3. Run the whole suite.\n\n| Risk | Mitigation |\n| --- | --- |\n| other callers | run every test |\n\n```sh\ncargo test\n```\n"
            ),
        ),
        (
            "implementation_plan.md.metadata.json",
            format!(
                "{{\"artifactType\":\"ARTIFACT_TYPE_IMPLEMENTATION_PLAN\",\"summary\":\"How to {}\",\"updatedAt\":\"{}\",\"version\":\"1\"}}\n",
                title.to_lowercase(),
                utc_text(conversation.started + 60)
            ),
        ),
        (
            "walkthrough.md",
            format!(
                "# Walkthrough\n\n{title}: done. The change is small and covered by the existing tests.\n\n> Run `cargo test` to check it again.\n"
            ),
        ),
    ];
    for (name, text) in files {
        fs::write(dir.join(name), text)?;
    }
    Ok(())
}

/// CortexTrajectoryMetadata, the `trajectory_metadata_blob` "main" row.
fn trajectory_metadata(conversation: &Conversation) -> Vec<u8> {
    let uri = conversation.workspace_uri();
    let mut w = Writer::new();
    w.message(1, |ws| {
        ws.string(1, &uri)
            .string(2, &uri)
            .string(4, conversation.branch);
    });
    timestamp(&mut w, 2, conversation.started, 0);
    w.string(6, &conversation.id)
        .string(7, &uri)
        .string(18, "default-cli-project");
    w.into_bytes()
}

struct Transcripts {
    compact: BufWriter<fs::File>,
    full: BufWriter<fs::File>,
}

/// Values longer than this are cut in `transcript.jsonl` (the full file
/// keeps them).
const COMPACT_LIMIT: usize = 2048;

impl Transcripts {
    fn write(
        &mut self,
        idx: usize,
        step: &PlannedStep,
        status: u64,
        view: &BrainView,
    ) -> Result<()> {
        let created_at = utc_text(step.seconds);
        let mut line = TranscriptLine {
            step_index: idx,
            source: view.source,
            kind: view.kind,
            status: if status == STATUS_ERROR {
                "ERROR"
            } else {
                "DONE"
            },
            created_at: &created_at,
            content: view.content.as_deref(),
            thinking: view.thinking.as_deref(),
            tool_calls: &view.tool_calls,
            exit_code: view.exit_code,
        };
        serde_json::to_writer(&mut self.full, &line)?;
        self.full.write_all(b"\n")?;
        let content = view.content.as_deref().map(compact);
        let thinking = view.thinking.as_deref().map(compact);
        line.content = content.as_deref();
        line.thinking = thinking.as_deref();
        serde_json::to_writer(&mut self.compact, &line)?;
        self.compact.write_all(b"\n")?;
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        self.compact.flush()?;
        self.full.flush()?;
        Ok(())
    }
}

/// The compact transcript's form of a long value: its head and a marker.
fn compact(text: &str) -> String {
    if text.len() <= COMPACT_LIMIT {
        return text.to_string();
    }
    let mut cut = COMPACT_LIMIT / 2;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n<truncated {} bytes>", &text[..cut], text.len() - cut)
}
