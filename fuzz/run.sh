#!/bin/sh
# Runs every fuzz target for MINUTES each and prints, per target, a row of
# the table fuzz/RESULTS.md keeps. Usage: fuzz/run.sh MINUTES [TARGET...]
# JOBS=2 runs two targets at a time (the default is one: the machine's
# cores are shared). Seeds a target's corpus first when it has none.
#
# Limits on every input: -timeout=1 (an input slower than a second is a
# crash), and a Rust heap of at most 64 MiB at once (counted in the
# harness, see src/lib.rs; a larger one is a crash). libFuzzer's process
# limits are -malloc_limit_mb=64 (no single allocation, C or Rust, over
# 64 MiB) and -rss_limit_mb=2048: the process also holds libFuzzer's
# in-memory corpus, which alone passes 64 MB within minutes and some
# hundreds of MB in half an hour (onto, decode).
#
# Logs and stats go to fuzz/results/TARGET.{log,stats}; what failed is
# saved in fuzz/artifacts/TARGET/ (crash-*, timeout-*, oom-*).
set -eu
fuzz=$(cd "$(dirname "$0")" && pwd)
minutes=${1:?usage: fuzz/run.sh MINUTES [TARGET...]}
shift
# libFuzzer reads -max_total_time=0 as "no limit".
[ "$minutes" -ge 1 ] 2>/dev/null || { echo "run.sh: MINUTES must be a whole number, 1 or more" >&2; exit 2; }
targets=${*:-wire record decode encode lines onto pack dump sqlite_file decode_store roundtrip escape scan hex html_json side usage}
jobs=${JOBS:-1}

cd "$fuzz"
nice -n 10 cargo fuzz build -s none >&2
bin=$fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release
[ -d corpus/wire ] || ./seed.sh >&2
mkdir -p results

run_one() {
    t=$1
    mkdir -p "corpus/$t" "artifacts/$t"
    rm -f "results/$t.stats"
    # The targets' scratch directories go here, and go when the run ends.
    tmp=$fuzz/results/tmp-$t
    mkdir -p "$tmp"
    TMPDIR=$tmp AGY_FUZZ_STATS=$fuzz/results/$t.stats nice -n 10 "$bin/$t" "corpus/$t" \
        -max_total_time=$((minutes * 60)) -timeout=1 \
        -malloc_limit_mb=64 -rss_limit_mb=2048 \
        -artifact_prefix="artifacts/$t/" -print_final_stats=1 \
        > "results/$t.log" 2>&1 || true
    rm -rf "$tmp"
}

running=0
for t in $targets; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait
        running=0
    fi
done
wait

echo "| target | executions | exec/s | corpus (files, KiB) | crashes | slowest input (ms) | peak heap per input (MiB) | peak process RSS (MB) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for t in $targets; do
    log=results/$t.log
    stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
    files=$(find "corpus/$t" -type f | wc -l)
    kib=$(( $(cat "corpus/$t"/* 2>/dev/null | wc -c) / 1024 ))
    crashes=$(find "artifacts/$t" -type f | wc -l)
    slowest=$(sed -n 's/^slowest_input_ms //p' "results/$t.stats" 2>/dev/null)
    heap=$(sed -n 's/^peak_heap_bytes //p' "results/$t.stats" 2>/dev/null)
    heap=$(awk -v b="${heap:-0}" 'BEGIN { printf "%.1f", b / 1048576 }')
    echo "| $t | $(stat number_of_executed_units) | $(stat average_exec_per_sec) | $files, $kib | $crashes | ${slowest:-?} | $heap | $(stat peak_rss_mb) |"
done
