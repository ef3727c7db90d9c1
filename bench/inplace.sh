#!/usr/bin/env bash
# The in-place recipe on a whole store with nothing to change (issue 39):
# `agy-dump R | agy-edit settle | agy-pack --force --root R`, by this
# build and by an older one (OLD_BIN, a directory holding its agy-dump,
# agy-edit and agy-pack: the build before agy-pack left unchanged
# conversations alone), runs interleaved, medians of wall and CPU
# (user+sys) time; and whether any file of the store changed its inode or
# its time, which this build must not do.
#
#   bench/inplace.sh OLD_BIN
#
# Environment: BENCH_RUNS=N interleaved runs (default 3), BENCH_DATA=DIR
# (default target/bench-data), BENCH_NO_BUILD=1, BENCH_QUICK=1 (20
# conversations: checks the script). Prints a markdown table on stdout.
set -euo pipefail

old_bin=${1:?usage: bench/inplace.sh OLD_BIN}
cd "$(dirname "$0")/.."
top=$PWD
quick=${BENCH_QUICK:-}
data=${BENCH_DATA:-$top/target/bench-data${quick:+-quick}}
runs=${BENCH_RUNS:-3}
bin=$top/target/release
scratch=$data/scratch-inplace
mkdir -p "$data" "$scratch"
say() { printf 'bench/inplace: %s\n' "$*" >&2; }

if [[ -z ${BENCH_NO_BUILD:-} ]]; then
    say "building release binaries"
    cargo build --release --examples --bins >&2
fi

# The 2,000-conversation store of bench/run.sh and bench/edit.sh (30 steps,
# brain transcripts, 4 KiB pages), generated here when neither made it.
n=2000
[[ -n $quick ]] && n=20
store=$data/store2000
if [[ ! -d $store/conversations ]]; then
    store=$data/edit-store$n
    if [[ ! -d $store/conversations ]]; then
        say "generating $store"
        "$bin/examples/gen-store" --root "$store" --conversations "$n" --steps 30 \
            --target-bytes 62000 --max-output 65536 --seed 2 --page-size 4096 >&2
    fi
fi

# Each side works on its own copy, indexed as agy keeps a store, so that
# every conversation has an index row to keep.
copy() {
    rm -rf "$2"
    cp -r "$1" "$2"
    find "$2/conversations" \( -name '*-wal' -o -name '*-shm' \) -delete
    "$bin/agy-pack" --reindex --root "$2" > /dev/null
}
# Every file and directory under the root but the two a run makes its
# temporaries in, with its inode and modification time.
stamps() {
    (cd "$1" && find . -mindepth 1 ! -path ./conversations ! -path ./brain \
        -printf '%i %T@ %p\n' | sort -k3)
}

# One run of SIDE (new or old) on its root: prints "wall cpu" in seconds.
once() {
    local side=$1 dir=$2 root=$scratch/root-$1 t=$scratch/time-$1
    local cmd="'$dir/agy-dump' '$root' | '$dir/agy-edit' settle 2>/dev/null | '$dir/agy-pack' --force --root '$root' >/dev/null 2>&1"
    local start end
    start=$(date +%s%N)
    bash -c "$cmd; times" > "$t"
    end=$(date +%s%N)
    awk -v w="$(( end - start ))" 'NR == 2 {
        split($1, u, /[ms]/); split($2, s, /[ms]/)
        printf "%.4f %.4f\n", w / 1e9, u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$t"
}

say "copying $store for each side"
copy "$store" "$scratch/root-new"
copy "$store" "$scratch/root-old"
conversations=$(find "$scratch/root-new/conversations" -name '*.db' | wc -l)
before=$(stamps "$scratch/root-new" | md5sum)

say "$runs interleaved runs of each side over $conversations conversations"
declare -A wall cpu
for ((i = 0; i < runs; i++)); do
    for side in old new; do
        dir=$bin
        [[ $side == old ]] && dir=$old_bin
        read -r w c < <(once "$side" "$dir")
        wall[$side]+="$w "
        cpu[$side]+="$c "
    done
done
after=$(stamps "$scratch/root-new" | md5sum)
untouched=no
[[ $before == "$after" ]] && untouched=yes
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -n $(git status --porcelain 2>/dev/null) ]] && commit+=" + uncommitted changes"
echo "No-op \`agy-dump R | agy-edit settle | agy-pack --force --root R\` over $conversations conversations ($(du -sh --apparent-size "$scratch/root-new" | cut -f1)), commit $commit against $old_bin, $(date -u +%F), $runs interleaved runs, medians:"
echo
echo "| build | wall | CPU | every file's inode and time kept |"
echo "| --- | ---: | ---: | --- |"
ow=$(median <<< "${wall[old]}"); oc=$(median <<< "${cpu[old]}")
nw=$(median <<< "${wall[new]}"); nc=$(median <<< "${cpu[new]}")
printf '| before (rewrites every conversation) | %.3f s | %.3f s | no |\n' "$ow" "$oc"
printf '| this one | %.3f s | %.3f s | %s |\n' "$nw" "$nc" "$untouched"
awk -v ow="$ow" -v oc="$oc" -v nw="$nw" -v nc="$nc" \
    'BEGIN { printf "\nThis build takes %.2fx the wall time and %.2fx the CPU of the one before.\n", nw / ow, nc / oc }'
