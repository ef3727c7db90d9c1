#!/usr/bin/env bash
# The benchmark of issue 5: generates the synthetic stores, runs each of our
# tools and each installed alternative side by side on the same data, and
# prints a markdown table of median wall time, peak RSS, ratio to the
# alternative and whether the issue's target is met.
#
#   bench/run.sh                 build release, generate (or reuse) data, measure
#
# Environment:
#   BENCH_RUNS=N      timed runs per command, at least (default 5, plus one
#                     warm-up; hyperfine adds runs until 3 s have passed)
#   BENCH_DATA=DIR    where the generated stores live (default target/bench-data)
#   BENCH_NO_BUILD=1  use the binaries as they are
#   BENCH_QUICK=1     data 1/100 the size, in target/bench-data-quick: checks
#                     the script, not the numbers
#   BENCH_PROFILE=debug  measure the debug build (same caveat)
#   BENCH_ONLY=PARTS  only these parts, comma-separated:
#                       tools   the table of issue 5 (every tool on big.db,
#                               ROOT2000, 1k/50k steps, encode, render, ls)
#                       vs      against txcript: every store and shape
#                       shapes  against txcript: the WAL-mode stores in the
#                               shapes agy leaves (issue 26) only
#                       memory  peak memory on the 50 MB cases
#                       issue20 = vs,memory
#                     (default: all of them)
#   BENCH_VS_STORES=LIST  with vs or shapes: only the rows whose key starts
#                     with one of these (e.g. "rootwal" or "bigwal,store")
#   BENCH_VS_RUNS=N   interleaved runs per side against txcript (default 5)
#   BENCH_TURN_RUNS=N rounds of agy-decode, agy-encode and agy-render taking
#                     turns, on which encode and render are held to decode
#                     (default 11)
#   AGY_DUMP_READER=sqlite  not read here: passed on to every agy-dump run,
#                     which then reads each database through SQLite instead
#                     of the files themselves (the "before" of its reader)
#
# Uses hyperfine when installed, else N runs timed with `date +%s%N`. Peak RSS
# comes from a separate run with every pipeline stage wrapped in
# `/usr/bin/time -f %M`. Times are warm-cache: the data is read once before
# timing starts. Nothing here is part of `cargo test`.
#
# This file is the driver: it builds, makes the data, runs the parts
# BENCH_ONLY asks for, then prints their reports in the same order. Each
# part is a file of bench/run/, whose head says what it measures:
#   data.sh     the stores (gen-store) and the shapes a store is put in
#   measure.sh  timing and peak RSS of a command, which tools exist
#   report.sh   the cells and rows of a table
#   tools.sh    the table of issue 5                       (BENCH_ONLY tools)
#   turns.sh    decode, encode, render taking turns        (tools)
#   vs.sh       against txcript in every store and shape   (vs, shapes)
#   memory.sh   peak memory on the 50 MB cases             (memory)
# Helpers shared with bench/edit.sh and the others (say, median, ...) are
# in bench/lib.sh. The parts read the driver's variables and each other's
# (hence shellcheck's SC2034 and SC2154 off at their heads).
set -euo pipefail

source "$(dirname "$0")/lib.sh"
cd "$top"
runs=${BENCH_RUNS:-5}
vs_runs=${BENCH_VS_RUNS:-5}
turn_runs=${BENCH_TURN_RUNS:-11}
only=${BENCH_ONLY:-}
[[ $only == issue20 ]] && only=vs,memory
# want PART: whether PART is to be run.
want() { [[ -z $only || ",$only," == *",$1,"* ]]; }
vs_stores=${BENCH_VS_STORES:-}
profile=${BENCH_PROFILE:-release}
bin=$top/target/$profile
gen=$bin/examples/gen-store
scratch=$data/scratch
mkdir -p "$data" "$scratch"
txcript=$top/target/txcript/release/txcript-driver

source bench/run/data.sh
source bench/run/measure.sh
source bench/run/report.sh
source bench/run/tools.sh
source bench/run/turns.sh
source bench/run/vs.sh
source bench/run/memory.sh

if [[ -z ${BENCH_NO_BUILD:-} ]]; then
    build_bins "$profile"
    # txcript, the alternative of issue 20, through a driver of ours; always
    # release, in its own target dir. txcript 0.14.4 declares Rust 1.96, and
    # builds and runs on 1.95 too: --ignore-rust-version keeps an older
    # toolchain from refusing it.
    say "building bench/txcript (txcript 0.14.4)"
    cargo build --release --ignore-rust-version --manifest-path bench/txcript/Cargo.toml \
        --target-dir "$top/target/txcript" >&2 || say "bench/txcript did not build; its rows stay empty"
fi
commit=$(tree_commit)

make_data
say_versions

# Measuring: progress on stderr, nothing on stdout.
if want tools; then
    tools_measure
    turns_measure
    sample_turns_measure
fi
if want vs || want shapes; then
    vs_measure
fi
if want memory; then
    memory_measure
fi

# The report, on stdout.
if want tools; then
    tools_report
fi
if want vs || want shapes; then
    vs_report
fi
if want memory; then
    memory_report
fi
