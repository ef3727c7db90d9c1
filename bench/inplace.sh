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

old_bin=$(cd "${1:?usage: bench/inplace.sh OLD_BIN}" && pwd)
NAME=inplace
runs=${BENCH_RUNS:-3}
source "$(dirname "$0")/lib.sh"

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
    local side=$1 dir=$2 root=$scratch/root-$1
    timed "'$dir/agy-dump' '$root' | '$dir/agy-edit' settle 2>/dev/null | '$dir/agy-pack' --force --root '$root' >/dev/null 2>&1" \
        "$scratch/time-$side"
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
