#!/usr/bin/env bash
# Whether this build writes the same bytes as an older one, tool by tool,
# on the bench's stores: what a speed change must keep.
#
#   bench/same.sh OLD_BIN [STORE...]
#
# OLD_BIN holds the older build's binaries (e.g. a worktree's
# target/release). The stores default to examples/sample and the bench's
# big.db, BIGW (with its -wal), ROOTW (with its -wal) and ROOT2000, as
# bench/run.sh generates them (run it first). For each store, both builds
# run agy-dump, agy-decode (and --all), agy-encode, agy-render (HTML and
# Markdown), agy-ls, agy-usage (--json --no-cost), agy-edit settle and
# agy-pack (into a new root, compared by `diff -r`), and each pair of
# outputs is compared with `cmp`.
# A line per comparison on stdout ("same" or "DIFFERENT"); the exit status
# is 1 when any differs. Each tool's input is the older build's output of
# the step before, so a difference is the tool's own.
set -euo pipefail

NAME=same
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

[[ $# -ge 1 ]] || { echo "usage: bench/same.sh OLD_BIN [STORE...]" >&2; exit 2; }
old=$(cd "$1" && pwd)
shift
new=$top/target/release
stores=("$@")
[[ ${#stores[@]} -gt 0 ]] || stores=("$top/examples/sample" "$data/big" "$data/bigwal" "$data/rootwal" "$data/store2000")
work=$(mktemp -d "${TMPDIR:-/tmp}/agy-same.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0

# same WHAT CMD...: CMD (a string run by bash, with $B the binaries) under
# both builds, outputs compared.
same() {
    local what=$1 cmd=$2
    B=$old bash -c "$cmd" >"$work/old" 2>/dev/null || true
    B=$new bash -c "$cmd" >"$work/new" 2>/dev/null || true
    if cmp -s "$work/old" "$work/new"; then
        printf 'same       %s (%s bytes)\n' "$what" "$(stat -c %s "$work/new")"
    else
        printf 'DIFFERENT  %s\n' "$what"
        failed=1
    fi
}

for store in "${stores[@]}"; do
    name=$(basename "$store")
    say "$name"
    "$old/agy-dump" "$store" >"$work/rows"
    "$old/agy-decode" <"$work/rows" >"$work/messages"
    export ROWS=$work/rows MESSAGES=$work/messages STORE=$store
    same "$name: agy-dump" '"$B/agy-dump" "$STORE"'
    same "$name: agy-decode" '"$B/agy-decode" < "$ROWS"'
    same "$name: agy-decode --all" '"$B/agy-decode" --all < "$ROWS"'
    same "$name: agy-encode" '"$B/agy-encode" < "$MESSAGES"'
    same "$name: agy-render" '"$B/agy-render" < "$MESSAGES"'
    same "$name: agy-render --format markdown" '"$B/agy-render" --format markdown < "$MESSAGES"'
    same "$name: agy-ls" '"$B/agy-ls" "$STORE"'
    same "$name: agy-usage" '"$B/agy-usage" --json --no-cost "$STORE"'
    same "$name: agy-edit settle" '"$B/agy-edit" settle < "$ROWS"'
    for side in old new; do
        rm -rf "$work/pack.$side"
        B=${!side}
        "$B/agy-pack" --root "$work/pack.$side" "$work/rows" >/dev/null 2>&1 || true
    done
    if diff -r "$work/pack.old" "$work/pack.new" >/dev/null; then
        printf 'same       %s: agy-pack (every file of the new root)\n' "$name"
    else
        printf 'DIFFERENT  %s: agy-pack\n' "$name"
        failed=1
    fi
    rm -rf "$work/pack.old" "$work/pack.new"
done
exit "$failed"
