#!/usr/bin/env bash
# agy-usage on the 2,000-conversation store (issue 41), beside what a user
# would run instead, in one run: summing agy-decode's usage with jq, and the
# two readers of agy's usage records on PyPI, vibewatt and tokstat (in a
# venv under the data directory, with HOME pointing at a copy of the store,
# as they read ~/.gemini/antigravity-cli). Interleaved runs, medians of
# wall and CPU (user+sys) time, and each one's input/output total, which
# must agree where they count the same thing.
#
#   bench/usage.sh
#
# Environment: BENCH_RUNS=N (default 3), BENCH_DATA=DIR, BENCH_NO_BUILD=1,
# BENCH_QUICK=1 (20 conversations), BENCH_NO_PEERS=1 (no pip). Prints a
# markdown table on stdout.
set -euo pipefail

NAME=usage
runs=${BENCH_RUNS:-3}
source "$(dirname "$0")/lib.sh"
setup

# The store as agy leaves it at rest, with its index, under a HOME the
# peers read.
home=$scratch/home
root=$home/.gemini/antigravity-cli
if [[ ! -d $root/conversations ]]; then
    say "copying $store"
    mkdir -p "$home/.gemini"
    cp -r "$store" "$root"
    "$bin/agy-pack" --reindex --root "$root" > /dev/null
fi
conversations=$(find "$root/conversations" -name '*.db' | wc -l)

peers=$data/peers-venv
if [[ -z ${BENCH_NO_PEERS:-} && ! -x $peers/bin/vibewatt ]]; then
    say "installing vibewatt and tokstat into $peers"
    python3 -m venv "$peers"
    "$peers/bin/pip" install -q --disable-pip-version-check vibewatt==0.4.1 tokstat==1.25.0 >&2
fi

declare -A cmd
cmd[agy-usage]="'$bin/agy-usage' --json --no-cost '$root'"
cmd[dump-decode-jq]="'$bin/agy-dump' '$root' | '$bin/agy-decode' | jq -n '[inputs | .usage? // empty] | {input: (map(.input_tokens) | add), output: (map(.output_tokens) | add)}'"
if [[ -x $peers/bin/vibewatt ]]; then
    cmd[vibewatt]="HOME='$home' '$peers/bin/vibewatt' json --source antigravity --offline --no-quota --tz UTC"
    cmd[tokstat]="HOME='$home' '$peers/bin/antigravity-token-usage' --export '$scratch/tokstat.json' --period all > /dev/null"
fi
tools=(agy-usage dump-decode-jq)
[[ -n ${cmd[vibewatt]:-} ]] && tools+=(vibewatt tokstat)

# What each one says the totals are: "input output".
totals() {
    case $1 in
        agy-usage) jq -r '"\(.totals.inputTokens) \(.totals.outputTokens)"' ;;
        dump-decode-jq) jq -r '"\(.input) \(.output)"' ;;
        vibewatt) jq -r '"\(.total.input) \(.total.output)"' ;;
        tokstat) jq -r '"\(map(.tokens.input) | add) \(map(.tokens.output) | add)"' "$scratch/tokstat.json" ;;
    esac
}

declare -A wall cpu said
say "$runs interleaved runs over $conversations conversations: ${tools[*]}"
for ((i = 0; i < runs; i++)); do
    for tool in "${tools[@]}"; do
        rm -rf "$home/.cache" "$home/.local" "$home/.config" "$home/.vibewatt" "$home/.tokstat"
        read -r w c < <(timed "${cmd[$tool]} > '$scratch/out-$tool' 2>/dev/null" "$scratch/time-$tool")
        wall[$tool]+="$w "
        cpu[$tool]+="$c "
    done
done
for tool in "${tools[@]}"; do
    said[$tool]=$(totals "$tool" < "$scratch/out-$tool" 2>/dev/null || echo "?")
done

commit=$(tree_commit)
echo "Usage totals of $conversations conversations ($(du -sh --apparent-size "$root" | cut -f1)), commit $commit, $(date -u +%F), $runs interleaved runs, medians, no caches (each peer's cache removed before each run):"
echo
echo "| tool | wall | CPU | vs agy-usage (wall) | input, output tokens it reports |"
echo "| --- | ---: | ---: | ---: | --- |"
base=$(median <<< "${wall[agy-usage]}")
for tool in "${tools[@]}"; do
    w=$(median <<< "${wall[$tool]}"); c=$(median <<< "${cpu[$tool]}")
    printf '| %s | %.3f s | %.3f s | %.1fx | %s |\n' "$tool" "$w" "$c" "$(awk -v a="$w" -v b="$base" 'BEGIN { print a / b }')" "${said[$tool]}"
done
