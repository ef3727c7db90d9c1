# shellcheck shell=bash disable=SC2034,SC2154
# Issues 20, 26 and 42: `agy-dump ROOT | agy-decode`, and agy-decode
# reading ROOT itself, against txcript (through bench/txcript's driver) on
# the same data root, in every store and every
# shape agy leaves a store in (checkpointed, -wal only, -wal and -shm),
# runs interleaved (ours, txcript, ours, …) so that load from other work
# on the machine falls on both alike; the medians of wall and CPU time and
# their ratios are what counts. vs_measure runs the rows (the WAL-mode
# stores for BENCH_ONLY=shapes, and issue 20's for vs), vs_report prints
# the "## Against txcript" tables and whether our output was the same in
# every shape and both ways. Sourced by bench/run.sh.

declare -A vs_wall vs_cpu vs_rss vs_load vs_spread
# vs KEY SIDE CMD: one timed run of CMD, appended to $scratch/vs.KEY.SIDE as
# "wall cpu rss" (s, s, KiB; CPU is user + system of every process), after
# (untimed) $vs_prepare.
vs_once() {
    local key=$1 side=$2 cmd=$3 start end
    bash -c "$vs_prepare"
    start=$(date +%s%N)
    /usr/bin/time -f '%U %S %M' -o "$scratch/vs.time" bash -c "set -o pipefail; $cmd" || return 1
    end=$(date +%s%N)
    awk -v ns=$((end - start)) '{ printf "%.4f %.2f %d\n", ns / 1e9, $1 + $2, $3 }' "$scratch/vs.time" >>"$scratch/vs.$key.$side"
}
# versus KEY ROOT MODE OURS THEIRS: one warm-up each, then $vs_runs
# interleaved runs, each on ROOT at rest (MODE rest), in a shape agy
# leaves (MODE wal or shm, see in_shape), or all with the sidecars
# txcript's warm-up left (MODE sidecars). Rows not in BENCH_VS_STORES are
# skipped.
versus() {
    local key=$1 root=$2 mode=$3 ours=$4 theirs=$5 i side wanted=""
    if [[ -n $vs_stores ]]; then
        for side in ${vs_stores//,/ }; do [[ $key == "$side"* ]] && wanted=1; done
        [[ -n $wanted ]] || return 0
    fi
    vs_prepare=true
    [[ $mode == rest ]] && vs_prepare="$(declare -f at_rest); at_rest '$root'"
    [[ $mode == wal || $mode == shm ]] && vs_prepare="$(declare -f in_shape); in_shape '$root' $mode"
    bash -c "$vs_prepare"
    # What each side writes in this shape, kept for a look (and compared
    # across shapes in vs_report).
    bash -c "set -o pipefail; ${ours% > /dev/null}" | sha1sum | cut -c1-40 >"$scratch/vs.$key.ours.sha1"
    bash -c "$vs_prepare"
    bash -c "${theirs% > /dev/null}" | wc -l >"$scratch/vs.$key.theirs.lines"
    bash -c "$vs_prepare"
    say "versus $key: $ours  ~  $theirs"
    rm -f "$scratch/vs.$key.ours" "$scratch/vs.$key.theirs"
    bash -c "$theirs" && bash -c "set -o pipefail; $ours" || {
        status[vs_$key]=failed
        return
    }
    for ((i = 0; i < vs_runs; i++)); do
        vs_once "$key" ours "$ours" && vs_once "$key" theirs "$theirs" || {
            status[vs_$key]=failed
            return
        }
    done
    for side in ours theirs; do
        vs_wall[$key.$side]=$(cut -d' ' -f1 "$scratch/vs.$key.$side" | median)
        vs_cpu[$key.$side]=$(cut -d' ' -f2 "$scratch/vs.$key.$side" | median)
    done
    # The spread: each run's ratio to the other side's run beside it.
    vs_spread[$key]=$(paste -d' ' "$scratch/vs.$key.ours" "$scratch/vs.$key.theirs" | awk '
        { w = $1 / $4; c = $2 / $5
          if (NR == 1 || w < wl) wl = w; if (NR == 1 || w > wh) wh = w
          if (NR == 1 || c < cl) cl = c; if (NR == 1 || c > ch) ch = c }
        END { printf "%.2f-%.2fx; %.2f-%.2fx", wl, wh, cl, ch }')
    vs_load[$key]=$(cut -d' ' -f1-3 /proc/loadavg)
    # Peak RSS per stage, one run each.
    vs_rss[$key.ours]=$(peak_rss "$ours" "$vs_prepare") || true
    vs_rss[$key.theirs]=$(peak_rss "$theirs" "$vs_prepare") || true
    case $mode in
    rest) at_rest "$root" ;;
    wal | shm) in_shape "$root" wal ;;
    esac
    status[vs_$key]=ok
}

# vs_pair KEY ROOT MODE: versus with our pipeline and txcript on ROOT, then
# (as KEY_one) with agy-decode reading ROOT itself, in one process.
vs_pair() {
    versus "$1" "$2" "$3" "'$dump' '$2' | '$decode' > /dev/null" "'$txcript' '$2' > /dev/null"
    versus "$1_one" "$2" "$3" "'$decode' '$2' > /dev/null" "'$txcript' '$2' > /dev/null"
}

# vs_built: whether our two tools and the driver are built.
vs_built() { have_tool agy-dump && have_tool agy-decode && [[ -x $txcript ]]; }

# vs_measure: every row wanted (BENCH_ONLY), when vs_built.
vs_measure() {
    if vs_built; then
        # Issue 26: the WAL-mode stores in each shape agy leaves.
        vs_pair rootwal_ckpt "$rootwal_ckpt" rest
        vs_pair rootwal_wal "$rootwal" wal
        vs_pair rootwal_shm "$rootwal" shm
        vs_pair bigwal_ckpt "$bigwal_ckpt" rest
        vs_pair bigwal_wal "$bigwal" wal
        vs_pair bigwal_shm "$bigwal" shm
    fi
    if want vs && vs_built; then
        # Issue 20's rows: stores generated checkpointed.
        vs_pair bigbrain "$bigbrain" rest
        vs_pair store "$store" rest
        vs_pair store32 "$store32" rest
        vs_pair store_sidecars "$store" sidecars
    fi
}

# vs_row KEY NAME TARGET: KEY's row, held to TARGET when there is one.
vs_row() {
    local key=$1 name=$2 target=$3
    if [[ ${status[vs_$key]:-} != ok ]]; then
        printf '| %s | %s |  |  |  |  |  |  | %s |  |\n' "$name" "$([[ -x $txcript ]] && echo "${status[vs_$key]:-not measured}" || echo "txcript not built")" "$target"
        return
    fi
    local ow=${vs_wall[$key.ours]} oc=${vs_cpu[$key.ours]} tw=${vs_wall[$key.theirs]} tc=${vs_cpu[$key.theirs]}
    local wr cr v=""
    wr=$(ratio "$ow" "$tw")
    cr=$(ratio "$oc" "$tc")
    [[ -n $target ]] && v=$(verdict "$(($(le "$ow" "$(awk -v a="$tw" 'BEGIN { print a * 0.3 }')") * $(le "$oc" "$(awk -v a="$tc" 'BEGIN { print a * 0.5 }')")))")
    printf '| %s | %.3f s, %.2f s | %.3f s, %.2f s | %s | %s | %s | %s; %s | %s | %s | %s |\n' "$name" "$ow" "$oc" "$tw" "$tc" "$wr" "$cr" "${vs_spread[$key]}" \
        "$(stages_mib "${vs_rss[$key.ours]}")" "$(stages_mib "${vs_rss[$key.theirs]}")" "${vs_load[$key]}" "${target:-(information)}" "$v"
}
# mb DIR: its size in MB.
mb() { du -sm --apparent-size "$1" | cut -f1; }
# same_output KEY...: whether our output was the same bytes in each shape.
same_output() {
    local k first="" all=yes
    for k in "$@"; do
        [[ -f $scratch/vs.$k.ours.sha1 ]] || return 0
        [[ -z $first ]] && first=$(cat "$scratch/vs.$k.ours.sha1")
        [[ $(cat "$scratch/vs.$k.ours.sha1") == "$first" ]] || all=no
    done
    echo "$all"
}
# txcript_lines KEY: how many conversations (lines) txcript wrote.
txcript_lines() { cat "$scratch/vs.$1.theirs.lines" 2>/dev/null || echo "?"; }

# vs_report: the tables, a row for every store and shape wanted: the
# pipeline's, then agy-decode's reading each store itself.
vs_report() {
    echo "## Against txcript 0.14.4 (issues 20, 26 and 42)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $(nproc) cores"
    echo "- $vs_runs runs of each side, interleaved after a warm-up each; medians. CPU is user + system time of"
    echo "  every process (/usr/bin/time on the whole pipeline); peak RSS per process from one more run."
    echo "- txcript through bench/txcript (\`discover()\`, \`load()\`, \`to_common()\`, one JSON line per conversation)"
    echo
    vs_table "" "agy-dump ROOT \| agy-decode" "dump/decode"
    echo
    echo "Each run starts from its store in its shape: ROOTW and BIGW as agy leaves them (the -wal and -shm put"
    echo "back as generated before every run of either side, since txcript's readers create a -shm where there is"
    echo "none and write into it), the older rows at rest (no -wal or -shm beside a database; the last keeps the"
    echo "empty -wal and -shm txcript leaves, and agy-dump then reads every database as a live one)."
    echo "\`agy-dump | agy-decode\` wrote the same bytes in the three shapes: ROOTW $(same_output rootwal_ckpt rootwal_wal rootwal_shm),"
    echo "BIGW $(same_output bigwal_ckpt bigwal_wal bigwal_shm). txcript's conversations (lines) in the three shapes: ROOTW"
    echo "$(txcript_lines rootwal_ckpt)/$(txcript_lines rootwal_wal)/$(txcript_lines rootwal_shm), BIGW $(txcript_lines bigwal_ckpt)/$(txcript_lines bigwal_wal)/$(txcript_lines bigwal_shm)."
    echo
    echo "### \`agy-decode ROOT\`: the same, read in one process"
    echo
    echo "agy-decode given the data root reads it itself (agy-decode(1)): the same stores, shapes and runs."
    echo
    vs_table _one "agy-decode ROOT" "decode"
    echo
    local k same=yes
    for k in rootwal_ckpt rootwal_wal rootwal_shm bigwal_ckpt bigwal_wal bigwal_shm bigbrain store store32 store_sidecars; do
        [[ -f $scratch/vs.$k.ours.sha1 && -f $scratch/vs.${k}_one.ours.sha1 ]] || continue
        cmp -s "$scratch/vs.$k.ours.sha1" "$scratch/vs.${k}_one.ours.sha1" || same="no ($k)"
    done
    echo "\`agy-decode ROOT\` wrote the same bytes as \`agy-dump ROOT | agy-decode\` in every row measured: $same."
    echo
}

# vs_table SUFFIX OURS RSS: the table of the rows KEY$SUFFIX, our side's
# command and its stages named OURS and RSS.
vs_table() {
    local suffix=$1 ours=$2 stages=$3
    echo "| store | $ours: wall, CPU | txcript: wall, CPU | wall ratio | CPU ratio | spread of the runs' ratios (wall; CPU) | peak RSS ($stages; txcript) | load avg after | target | met? |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |"
    local rootw_kb wal_kb target
    rootw_kb=$(du -sk --apparent-size "$rootwal_ckpt/conversations" | awk -v n="$(find "$rootwal_ckpt/conversations" -name '*.db' | wc -l)" '{ printf "%.0f", $1 * 1.024 / n }')
    wal_kb=$(find "$rootwal.sidecars" -name '*.db-wal' -printf '%s\n' | awk '{ s += $1; n++ } END { if (n) printf "%.0f", s / n / 1000 }')
    target="wall <= 0.3x, CPU <= 0.5x"
    vs_row rootwal_ckpt$suffix "ROOTW: 2,000 WAL-mode conversations ($rootw_kb KB per db, $(mb "$rootwal_ckpt") MB with brain files), checkpointed" "$target"
    vs_row rootwal_wal$suffix "same, last 5 steps in a -wal ($wal_kb KB), no -shm (agy exited)" "$target"
    vs_row rootwal_shm$suffix "same, -wal and -shm (agy killed or running)" "$target"
    vs_row bigwal_ckpt$suffix "BIGW: big.db's conversation in WAL mode, 4 KiB pages, with brain files ($(mb "$bigwal_ckpt") MB), checkpointed" "$target"
    vs_row bigwal_wal$suffix "same, last 400 steps in a -wal, no -shm" "$target"
    vs_row bigwal_shm$suffix "same, -wal and -shm" "$target"
    if want vs; then
        vs_row bigbrain$suffix "big.db's conversation with its brain files, 32 KiB pages ($(mb "$bigbrain") MB)" "$target"
        vs_row store$suffix "ROOT2000 (4 KiB pages)" "$target"
        vs_row store32$suffix "ROOT2000-32K" ""
        vs_row store_sidecars$suffix "ROOT2000 with the -wal and -shm txcript leaves" ""
    fi
}
