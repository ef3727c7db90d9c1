#!/usr/bin/env bash
# The other agents' formats both ways, two builds side by side: each
# agy-decode --format on one row stream, and each agy-encode --format on
# what the newer build wrote, the two builds' runs interleaved so that the
# machine's load falls on both alike. Prints a markdown table of median
# wall and CPU time and peak RSS (from /usr/bin/time), and checks that the
# two builds write the same bytes.
#
#   bench/formats.sh OLD_BIN NEW_BIN ROWS [RUNS]
#
# OLD_BIN and NEW_BIN are directories of release binaries (a format the
# old build does not know is measured on the new one only); ROWS is
# agy-dump's output for a store, e.g. run.sh's big.db:
#
#   target/release/examples/gen-store --root BIG --steps 52000 \
#       --target-bytes 207300000 --max-output 4194304 --no-brain --seed 1
#   target/release/agy-dump BIG > big.rows
#
# Nothing here is part of `cargo test`.
set -euo pipefail

source "$(dirname "$0")/lib.sh"

old=$1 new=$2 rows=$3 runs=${4:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
formats=(anthropic claude-code codex gemini-cli opencode)
readers=(claude-code codex gemini-cli opencode)

knows() { "$1/agy-$2" --format "$3" --help >/dev/null 2>&1; }

# One timed run: appends "LABEL SIDE wall cpu rss_kib" to the log.
log_run() {
    local label=$1 side=$2
    shift 2
    /usr/bin/time -f "$label $side %e %U %S %M" -a -o "$work/raw" "$@"
}

cat "$rows" >/dev/null
for f in "${formats[@]}"; do
    "$new/agy-decode" --format "$f" <"$rows" >"$work/$f.new"
    if knows "$old" decode "$f"; then
        "$old/agy-decode" --format "$f" <"$rows" >"$work/$f.old"
        cmp -s "$work/$f.old" "$work/$f.new" || echo "agy-decode --format $f: the builds differ" >&2
    fi
    mkdir -p "$work/$f.dir"
    # One session per file, as each CLI keeps them.
    case $f in
    anthropic) ;;
    *) "$new/agy-decode" --format "$f" --out-dir "$work/$f.dir" --cwd /bench <"$rows" >"$work/$f.files" 2>/dev/null ;;
    esac
done
for i in $(seq "$runs"); do
    for f in "${formats[@]}"; do
        for side in old new; do
            bin=${!side}
            knows "$bin" decode "$f" || continue
            log_run "decode-$f" "$side" "$bin/agy-decode" --format "$f" <"$rows" >/dev/null
        done
    done
    for f in "${readers[@]}"; do
        for side in old new; do
            bin=${!side}
            knows "$bin" encode "$f" || continue
            # The files written above, each encoded on its own.
            while read -r file; do
                log_run "encode-$f" "$side" "$bin/agy-encode" --format "$f" "$file" >/dev/null
            done <"$work/$f.files"
        done
    done
done
echo "| work | build | median wall | median CPU | peak RSS |"
echo "| --- | --- | ---: | ---: | ---: |"
cut -d' ' -f1,2 "$work/raw" | sort -u | while read -r label side; do
    grep "^$label $side " "$work/raw" >"$work/one"
    wall=$(cut -d' ' -f3 "$work/one" | median)
    cpu=$(awk '{ print $4 + $5 }' "$work/one" | median)
    rss=$(cut -d' ' -f6 "$work/one" | sort -n | tail -1)
    printf '| %s | %s | %.2f s | %.2f s | %d MiB |\n' "$label" "$side" "$wall" "$cpu" $((rss / 1024))
done
