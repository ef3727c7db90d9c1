#!/usr/bin/env bash
# agy-edit over a whole store (issue 24): each operation in the pipeline a
# user runs, `agy-dump ROOT | agy-edit OP | agy-pack --force --root OUT`,
# against `agy-dump ROOT | agy-pack --root OUT` of the same store (target:
# within 1.5x), runs interleaved, medians of wall and CPU (user+sys) time;
# then agy-edit alone on the dumped rows, with its peak RSS next to the
# longest line of the stream (memory is bounded by the largest row).
#
#   bench/edit.sh                build release, generate (or reuse) the store, measure
#
# Environment: BENCH_RUNS=N interleaved runs (default 5), BENCH_DATA=DIR
# (default target/bench-data), BENCH_NO_BUILD=1, BENCH_QUICK=1 (1/100 of
# the store: checks the script), BENCH_OUT=DIR where agy-pack writes (a
# tmpfs such as /dev/shm keeps the disk's fsyncs out of the comparison).
# Prints a markdown table on stdout.
set -euo pipefail

NAME=edit
runs=${BENCH_RUNS:-5}
source "$(dirname "$0")/lib.sh"
setup

# A store at rest has no sidecars (txcript's runs leave them, see run.sh),
# and, as agy keeps it, an index: every conversation's row is written by
# agy-pack --reindex into a copy, so every pipeline below writes index rows.
find "$store/conversations" \( -name '*-wal' -o -name '*-shm' \) -delete
indexed=$scratch/store
if [[ ! -f $indexed/.from || $(cat "$indexed/.from") != "$store $(cat "$store/.stamp" 2>/dev/null)" ]]; then
    say "copying $store and indexing the copy"
    rm -rf "$indexed"
    cp -r "$store" "$indexed"
    "$bin/agy-pack" --reindex --root "$indexed" >&2
    echo "$store $(cat "$store/.stamp" 2>/dev/null)" > "$indexed/.from"
fi
store=$indexed
conversations=$(find "$store/conversations" -name '*.db' | wc -l)

rows=$scratch/rows.ndjson
"$bin/agy-dump" "$store" > "$rows"
longest=$(longest "$rows")

# The operations, as a user runs them on a whole store.
declare -A ops=(
    [settle]="settle"
    [rewind]="rewind --turns 1"
    [fork]="fork --turn 1"
    [move]="move /home/dev/src /home/dev/work"
    [everywhere]="move --everywhere /home/dev/src /home/dev/work"
    [lane]="lane desktop"
)
order=(pack settle rewind fork move everywhere lane)

# One run of NAME: prints "wall cpu" in seconds.
out_dir=${BENCH_OUT:-$scratch}
mkdir -p "$out_dir"
once() {
    local name=$1 out=$out_dir/out-$1
    rm -rf "$out"
    local cmd
    if [[ $name == pack ]]; then
        cmd="'$bin/agy-dump' '$store' | '$bin/agy-pack' --root '$out' >/dev/null"
    else
        cmd="'$bin/agy-dump' '$store' | '$bin/agy-edit' ${ops[$name]} 2>/dev/null | '$bin/agy-pack' --force --root '$out' >/dev/null"
    fi
    timed "$cmd" "$scratch/time-$name"
}

say "$runs interleaved runs of ${order[*]} over $conversations conversations"
once pack > /dev/null # warm-up: the store read once
declare -A wall cpu
for ((i = 0; i < runs; i++)); do
    for name in "${order[@]}"; do
        read -r w c < <(once "$name")
        wall[$name]+="$w "
        cpu[$name]+="$c "
    done
done

# agy-edit alone on the rows: time and peak RSS.
alone() {
    /usr/bin/time -f '%e %U %S %M' -o "$scratch/alone" "$bin/agy-edit" ${ops[$1]} < "$rows" > /dev/null 2>"$scratch/notes-$1" || true
    # GNU time puts "Command exited with non-zero status" first when it did.
    tail -n 1 "$scratch/alone"
}

commit=$(tree_commit)
echo "agy-edit over $conversations conversations ($store, $(du -sh --apparent-size "$store" | cut -f1)), commit $commit, $(date -u +%F), $runs interleaved runs, medians:"
echo
echo "| operation | pipeline wall | CPU | vs dump \\| pack (wall, CPU) | agy-edit alone (wall, CPU) | agy-edit peak RSS (longest line $((longest / 1024)) KiB) | changed |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
pw=$(median <<< "${wall[pack]}")
pc=$(median <<< "${cpu[pack]}")
printf '| dump \\| pack | %.3f s | %.3f s | | | | |\n' "$pw" "$pc"
for name in "${order[@]:1}"; do
    w=$(median <<< "${wall[$name]}")
    c=$(median <<< "${cpu[$name]}")
    read -r aw au as ar < <(alone "$name")
    changed=$(tail -n 1 "$scratch/notes-$name" | sed 's/^agy-edit: //')
    awk -v n="agy-edit ${ops[$name]}" -v w="$w" -v c="$c" -v pw="$pw" -v pc="$pc" \
        -v aw="$aw" -v ac="$(awk -v u="$au" -v s="$as" 'BEGIN { print u + s }')" -v r="$ar" -v ch="$changed" \
        'BEGIN { printf "| %s | %.3f s | %.3f s | %.2fx, %.2fx | %.3f s, %.3f s | %.1f MiB | %s |\n", n, w, c, w / pw, c / pc, aw, ac, r / 1024, ch }'
done
