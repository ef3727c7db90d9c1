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
# conversations: checks the script), BENCH_SIDE_FILES=1 (issue 40: the
# store gets the side files of agy 1.2.12+, an entry of every conversation
# in each, as agy lays them out, so that this build's dump carries them and
# its pack compares them). Prints a markdown table on stdout.
set -euo pipefail

old_bin=$(cd "${1:?usage: bench/inplace.sh OLD_BIN}" && pwd)
NAME=inplace
runs=${BENCH_RUNS:-3}
source "$(dirname "$0")/lib.sh"
setup

# Each side works on its own copy, indexed as agy keeps a store, so that
# every conversation has an index row to keep.
copy() {
    rm -rf "$2"
    cp -r "$1" "$2"
    find "$2/conversations" \( -name '*-wal' -o -name '*-shm' \) -delete
    "$bin/agy-pack" --reindex --root "$2" > /dev/null
    [[ -n ${BENCH_SIDE_FILES:-} ]] && side_files "$2"
    return 0
}
# The side files of a CLI store of agy 1.2.12+, every conversation in each:
# its directory in cache/last_conversations.json, its value in
# cache/conversation_metadata.json, an entry in jetbox_summaries_proto.pb
# (1 id, 2 {1 title, 2 steps}), a prompt in history.jsonl.
side_files() {
    python3 - "$1" <<'PY'
import json, os, sys
root = sys.argv[1]
ids = sorted(n[:-3] for n in os.listdir(os.path.join(root, "conversations")) if n.endswith(".db"))
def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80); n >>= 7
    out.append(n)
    return bytes(out)
def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload
os.makedirs(os.path.join(root, "cache"), exist_ok=True)
last = {f"/home/me/src/p{i:04d}": c for i, c in enumerate(ids)}
with open(os.path.join(root, "cache/last_conversations.json"), "w") as f:
    f.write(json.dumps(last, indent=2, sort_keys=True))
meta = {"conversations": {c: {"is_internal": False} for c in ids}}
with open(os.path.join(root, "cache/conversation_metadata.json"), "w") as f:
    f.write(json.dumps(meta, indent=2, sort_keys=True))
with open(os.path.join(root, "jetbox_summaries_proto.pb"), "wb") as f:
    for c in ids:
        summary = field(1, f"Title of {c}".encode()) + bytes([0x10, 0x07])
        f.write(field(1, field(1, c.encode()) + field(2, summary)))
with open(os.path.join(root, "history.jsonl"), "w") as f:
    for i, c in enumerate(ids):
        f.write(json.dumps({"display": "go", "timestamp": i, "workspace": f"/home/me/src/p{i:04d}"}, separators=(",", ":")) + "\n")
PY
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

commit=$(tree_commit)
echo "No-op \`agy-dump R | agy-edit settle | agy-pack --force --root R\` over $conversations conversations ($(du -sh --apparent-size "$scratch/root-new" | cut -f1)), commit $commit against $old_bin, $(date -u +%F), $runs interleaved runs, medians:"
echo
echo "| build | wall | CPU | every file's inode and time kept |"
echo "| --- | ---: | ---: | --- |"
ow=$(median <<< "${wall[old]}"); oc=$(median <<< "${cpu[old]}")
nw=$(median <<< "${wall[new]}"); nc=$(median <<< "${cpu[new]}")
printf '| before (%s) | %.3f s | %.3f s | |\n' "$(basename "$old_bin")" "$ow" "$oc"
printf '| this one | %.3f s | %.3f s | %s |\n' "$nw" "$nc" "$untouched"
awk -v ow="$ow" -v oc="$oc" -v nw="$nw" -v nc="$nc" \
    'BEGIN { printf "\nThis build takes %.2fx the wall time and %.2fx the CPU of the one before.\n", nw / ow, nc / oc }'
