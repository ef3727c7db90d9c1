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
#
# Uses hyperfine when installed, else N runs timed with `date +%s%N`. Peak RSS
# comes from a separate run with every pipeline stage wrapped in
# `/usr/bin/time -f %M`. Times are warm-cache: the data is read once before
# timing starts. Nothing here is part of `cargo test`.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
quick=${BENCH_QUICK:-}
data=${BENCH_DATA:-$top/target/bench-data${quick:+-quick}}
runs=${BENCH_RUNS:-5}
vs_runs=${BENCH_VS_RUNS:-5}
turn_runs=${BENCH_TURN_RUNS:-11}
only=${BENCH_ONLY:-}
[[ $only == issue20 ]] && only=vs,memory
# The median of the numbers on standard input, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# got KEY: whether KEY was measured.
got() { [[ ${status[$1]:-} == ok ]]; }
# want PART: whether PART is to be run.
want() { [[ -z $only || ",$only," == *",$1,"* ]]; }
vs_stores=${BENCH_VS_STORES:-}
profile=${BENCH_PROFILE:-release}
bin=$top/target/$profile
gen=$bin/examples/gen-store
scratch=$data/scratch
mkdir -p "$data" "$scratch"

say() { printf 'bench: %s\n' "$*" >&2; }

if [[ -z ${BENCH_NO_BUILD:-} ]]; then
    say "building $profile binaries"
    if [[ $profile == release ]]; then
        cargo build --release --examples --bins >&2
    else
        cargo build --examples --bins >&2
    fi
    # txcript, the alternative of issue 20, through a driver of ours; always
    # release, in its own target dir. txcript 0.14.4 declares Rust 1.96, and
    # builds and runs on 1.95 too: --ignore-rust-version keeps an older
    # toolchain from refusing it.
    say "building bench/txcript (txcript 0.14.4)"
    cargo build --release --ignore-rust-version --manifest-path bench/txcript/Cargo.toml \
        --target-dir "$top/target/txcript" >&2 || say "bench/txcript did not build; its rows stay empty"
fi
txcript=$top/target/txcript/release/txcript-driver

# What was measured: the tree as it was built.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -n $(git status --porcelain 2>/dev/null) ]] && commit+=" + uncommitted changes"

# ---------------------------------------------------------------------------
# Data. Each store is regenerated only when its flags or the generator's
# source changed; the generation time is kept beside it for the report.

gen_source_hash=$(sha1sum examples/gen_store.rs | cut -c1-12)

# dataset NAME FLAGS...: generates $data/NAME unless an identical one exists.
dataset() {
    local name=$1
    shift
    local dir=$data/$name
    local stamp="$gen_source_hash $*"
    if [[ -f $dir/.stamp && $(cat "$dir/.stamp") == "$stamp" ]]; then
        return
    fi
    say "generating $name: gen-store $*"
    rm -rf "$dir"
    local start end
    start=$(date +%s%N)
    "$gen" --root "$dir" "$@"
    end=$(date +%s%N)
    awk -v ns=$((end - start)) 'BEGIN { printf "%.2f\n", ns / 1e9 }' >"$dir/.gen-seconds"
    printf '%s\n' "$stamp" >"$dir/.stamp"
}

# The one db file of a single-conversation store.
only_db() {
    local dbs=("$data/$1"/conversations/*.db)
    printf '%s\n' "${dbs[0]}"
}

# (a) one long agent run: ~216 MB, 52,000 steps, outputs up to 4 MiB. The
# target counts row bytes; SQLite's pages add about 4 %, so 207.3 MB of rows
# make a ~216 MB file. No brain files: the work measured is the db's.
# Sizes divided by 100 in quick mode.
q() { if [[ -n $quick ]]; then echo $(($1 / 100)); else echo "$1"; fi; }
dataset big --steps "$(q 52000)" --target-bytes "$(q 207300000)" --max-output 4194304 --no-brain --seed 1
# (b) 2,000 conversations of ~125 KB files with brain transcripts. 4 KiB
# pages, as in the issue's measurement (a 32 KiB-page agy db is at least
# 320 KiB before it holds a step); (b') is the same store at agy's page size.
store_flags=(--conversations "$(q 2000)" --steps 30 --target-bytes 62000 --max-output 65536 --seed 2)
dataset store2000 "${store_flags[@]}" --page-size 4096
dataset store2000-32k "${store_flags[@]}"
# (c) the same mix at 1,000 and 50,000 steps, with bytes per step held equal
# to big.db's (the same plan cut at different lengths, outputs scaled to the
# target), and a 1-step conversation for the fixed cost of a run.
dataset steps1k --steps "$(q 1000)" --target-bytes "$(q 3987000)" --max-output 4194304 --no-brain --seed 3
dataset steps50k --steps "$(q 50000)" --target-bytes "$(q 199350000)" --max-output 4194304 --no-brain --seed 3
dataset steps1 --steps 1 --no-brain --seed 3
# (d) issue 20: big.db's conversation with its brain files, as txcript and
# `agy-dump ROOT` read it; and one conversation whose first user text is
# 50 MB, for the peak memory of every tool.
dataset bigbrain --steps "$(q 52000)" --target-bytes "$(q 207300000)" --max-output 4194304 --seed 1
dataset bigmsg --steps 3 --first-prompt-bytes "$(q 50000000)" --seed 4
# (e) issue 26: stores in the shapes agy leaves them (FORMAT.md 15.6),
# built as agy builds its databases (14.1: 4 KiB pages, WAL, user_version
# 1). ROOTW: 2,000 conversations of 40 steps, tool outputs of kilobytes (up
# to 16 KiB), brain transcripts and artifacts. BIGW: big.db's conversation
# with its brain files and artifacts. Each twice: "-ckpt" checkpointed,
# and without it the last steps in a -wal (5 of each ROOTW conversation's,
# 400 of BIGW's) with the -shm a killed agy leaves; the -wal-only shape
# removes that -shm. Every shape holds the same rows.
rootw_flags=(--conversations "$(q 2000)" --steps 40 --target-bytes 160000 --max-output 16384 --page-size 4096 --artifacts --seed 5)
dataset rootwal-ckpt "${rootw_flags[@]}"
dataset rootwal "${rootw_flags[@]}" --wal-steps 5 --shm
bigw_flags=(--steps "$(q 52000)" --target-bytes "$(q 207300000)" --max-output 4194304 --page-size 4096 --artifacts --seed 1)
dataset bigwal-ckpt "${bigw_flags[@]}"
dataset bigwal "${bigw_flags[@]}" --wal-steps 400 --shm

# The -wal and -shm files of a WAL store as generated, kept beside it, so
# that every run can start from them: txcript's readers create a -shm
# where there is none and write into it.
keep_sidecars() {
    local name=$1 dir=$data/$1.sidecars
    if [[ -f $dir/.stamp && $(cat "$dir/.stamp") == "$(cat "$data/$name/.stamp")" ]]; then
        return
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    find "$data/$name/conversations" \( -name '*.db-wal' -o -name '*.db-shm' \) -exec cp -t "$dir" {} +
    cp "$data/$name/.stamp" "$dir/.stamp"
}
keep_sidecars rootwal
keep_sidecars bigwal

big=$(only_db big)
store=$data/store2000
store32=$data/store2000-32k
db1k=$(only_db steps1k)
db50k=$(only_db steps50k)
db1=$(only_db steps1)
bigbrain=$data/bigbrain
bigmsg=$data/bigmsg
rootwal=$data/rootwal
rootwal_ckpt=$data/rootwal-ckpt
bigwal=$data/bigwal
bigwal_ckpt=$data/bigwal-ckpt

# ---------------------------------------------------------------------------
# Which of our tools exist. A stub binary (`fn main(){}`) exits 0 silently,
# so "real" means `--version` prints something.

have_tool() {
    local exe=$bin/$1
    [[ -x $exe ]] && [[ -n $("$exe" --version 2>/dev/null || true) ]]
}
have_cmd() { command -v "$1" >/dev/null 2>&1; }

for tool in agy-dump agy-decode agy-encode agy-pack agy-render; do
    if have_tool "$tool"; then say "$tool: $("$bin/$tool" --version)"; else say "$tool: not built yet"; fi
done

# txcript opens each database read-only, which in WAL mode leaves an empty
# -wal and a -shm beside it (a read-only connection does not remove them
# when it closes). With them there agy-dump takes its path for a live
# database (mode=ro&readonly_shm=1: locks and the shared-memory index), a
# fifth more CPU on ROOT2000. An agy store at rest has neither, so every
# run of either side starts from the store at rest: an empty -wal and its
# -shm are removed (nothing has them open between runs).
at_rest() {
    local wal
    find "$@" -name '*.db-wal' -size 0 -print0 | while IFS= read -r -d '' wal; do
        rm -f "$wal" "${wal%-wal}-shm"
    done
}
# in_shape ROOT SHAPE: puts a WAL store in one of the shapes agy leaves:
# "wal" (agy exited: each -wal as generated, no -shm) or "shm" (agy killed:
# the -wal and the -shm as generated). Whatever a reader left is replaced.
in_shape() {
    local root=$1 shape=$2 saved=$1.sidecars
    find "$root/conversations" -name '*.db-shm' -delete
    find "$saved" -name '*.db-wal' -exec cp -t "$root/conversations" {} +
    if [[ $shape == shm ]]; then
        find "$saved" -name '*.db-shm' -exec cp -t "$root/conversations" {} +
    fi
}

# ---------------------------------------------------------------------------
# Measuring. A command is a bash string; its stages are separated by " | ".

# Median seconds of $runs runs of CMD, after PREPARE (untimed) before each.
time_median() {
    local cmd=$1 prepare=${2:-true}
    if have_cmd hyperfine; then
        local json=$scratch/hyperfine.json
        hyperfine --shell=bash --style basic --warmup 1 --min-runs "$runs" \
            --prepare "$prepare" --export-json "$json" "set -o pipefail; $cmd" >&2
        sed -n 's/.*"median": *\([0-9.eE+-]*\).*/\1/p' "$json" | head -n1
    else
        local i start end times=()
        # What a command prints (agy-pack names the database it wrote)
        # must not join the number this function prints.
        bash -c "$prepare"
        bash -c "set -o pipefail; $cmd" >/dev/null
        for ((i = 0; i < runs; i++)); do
            bash -c "$prepare"
            start=$(date +%s%N)
            bash -c "set -o pipefail; $cmd" >/dev/null
            end=$(date +%s%N)
            times+=($((end - start)))
        done
        printf '%s\n' "${times[@]}" | sort -n |
            awk '{ t[NR] = $1 } END { m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2; printf "%.6f\n", m / 1e9 }'
    fi
}

# Peak RSS in KiB of each stage of CMD, one run, space-separated; fails when
# the pipeline fails.
peak_rss() {
    local cmd=$1 prepare=${2:-true}
    local wrapped="" stage i=0
    local -a stages
    # Split on " | " (no command here has a literal " | " inside a stage).
    local rest=$cmd
    while [[ $rest == *" | "* ]]; do
        stages+=("${rest%% | *}")
        rest=${rest#* | }
    done
    stages+=("$rest")
    for stage in "${stages[@]}"; do
        [[ -n $wrapped ]] && wrapped+=" | "
        wrapped+="/usr/bin/time -f %M -o $scratch/rss.$i $stage"
        i=$((i + 1))
    done
    bash -c "$prepare"
    bash -c "set -o pipefail; $wrapped" >/dev/null || return 1
    local out=()
    for ((i = 0; i < ${#stages[@]}; i++)); do out+=("$(tail -n1 "$scratch/rss.$i")"); done
    echo "${out[*]}"
}

declare -A wall rss_max rss_list status

# measure KEY CMD [PREPARE]: fills wall[KEY] (s), rss_max[KEY] (KiB),
# rss_list[KEY], status[KEY] (ok / failed).
measure() {
    local key=$1 cmd=$2 prepare=${3:-true}
    say "measuring $key: $cmd"
    local rss
    if ! rss=$(peak_rss "$cmd" "$prepare"); then
        status[$key]=failed
        say "$key failed; see the command above"
        return
    fi
    rss_list[$key]=$rss
    rss_max[$key]=$(tr ' ' '\n' <<<"$rss" | sort -n | tail -n1)
    wall[$key]=$(time_median "$cmd" "$prepare")
    status[$key]=ok
}

dump=$bin/agy-dump
decode=$bin/agy-decode
encode=$bin/agy-encode
pack=$bin/agy-pack
render=$bin/agy-render
ls=$bin/agy-ls
steps_sql="select idx, step_type, status, has_subtrajectory, hex(metadata), hex(error_details), hex(permissions), hex(task_details), hex(render_info), hex(step_payload), step_format from steps"

if want tools; then
at_rest "$data"
measure cat "cat '$big' > /dev/null"
if have_cmd sqlite3; then
    measure sqlite_json "sqlite3 -json '$big' '$steps_sql' > /dev/null"
    measure sqlite_restore "sqlite3 '$big' .dump | sqlite3 '$scratch/restore.db'" "rm -f '$scratch/restore.db'"
fi
if have_tool agy-dump; then
    measure dump "'$dump' '$big' > /dev/null"
    # Pre-dumped inputs for the filters further down.
    "$dump" "$big" >"$scratch/big.rows.ndjson"
fi
if have_tool agy-dump && have_tool agy-decode; then
    measure dump_decode "'$dump' '$big' | '$decode' > /dev/null"
    measure store "'$dump' '$store' | '$decode' > /dev/null"
    measure store32 "'$dump' '$store32' | '$decode' > /dev/null"
    measure lin1k "'$dump' '$db1k' | '$decode' > /dev/null"
    measure lin50k "'$dump' '$db50k' | '$decode' > /dev/null"
    measure lin1 "'$dump' '$db1' | '$decode' > /dev/null"
    measure decode "'$decode' < '$scratch/big.rows.ndjson' > /dev/null"
    "$decode" <"$scratch/big.rows.ndjson" >"$scratch/big.messages.ndjson"
elif have_tool agy-dump; then
    # Linearity of the half that exists.
    measure lin1k "'$dump' '$db1k' > /dev/null"
    measure lin50k "'$dump' '$db50k' > /dev/null"
    measure lin1 "'$dump' '$db1' > /dev/null"
fi
if have_tool agy-pack && [[ -s $scratch/big.rows.ndjson ]]; then
    measure pack "'$pack' --root '$scratch/pack-root' '$scratch/big.rows.ndjson'" "rm -rf '$scratch/pack-root'"
fi
if have_tool agy-encode && [[ -s $scratch/big.messages.ndjson ]]; then
    measure encode "'$encode' < '$scratch/big.messages.ndjson' > /dev/null"
    if have_tool agy-pack; then
        measure encode_pack "'$encode' < '$scratch/big.messages.ndjson' | '$pack' --root '$scratch/encode-root' > /dev/null" "rm -rf '$scratch/encode-root'"
    fi
    # Writing the unedited messages back onto their rows (issue 9).
    measure encode_onto "'$encode' --onto '$scratch/big.rows.ndjson' < '$scratch/big.messages.ndjson' > /dev/null"
fi

if have_tool agy-ls; then
    # Issue 18: listing 2,000 conversations, without an index and with one
    # that lists each (built by --reindex in a hard-linked copy, so the
    # shared store stays as generated).
    measure ls "'$ls' '$store' > /dev/null"
    if have_tool agy-pack; then
        rm -rf "$scratch/store-indexed"
        cp -al "$store" "$scratch/store-indexed"
        measure reindex "'$pack' --reindex --root '$scratch/store-indexed' > /dev/null" "rm -f '$scratch/store-indexed/conversation_summaries.db'"
        "$pack" --reindex --root "$scratch/store-indexed" >/dev/null
        measure ls_indexed "'$ls' '$scratch/store-indexed' > /dev/null"
    fi
fi

if have_tool agy-render && [[ -s $scratch/big.messages.ndjson ]]; then
    # Issue 12: rendering the conversation takes no longer than decoding it.
    measure render "'$render' < '$scratch/big.messages.ndjson' > /dev/null"
    measure render_out "'$render' --out '$scratch/render-site' < '$scratch/big.messages.ndjson'" "rm -rf '$scratch/render-site'"
fi

# The targets that hold one tool to another (agy-encode and agy-render
# against agy-decode) are judged on runs that take turns: decode, encode,
# render, decode, …, so that a machine that slows down or speeds up while
# the bench runs weighs on all three alike. Medians of wall and CPU time.
declare -A turn_wall turn_cpu
if got decode && got encode && got render; then
    say "taking turns: decode, encode, render ($turn_runs rounds)"
    for key in decode encode render; do
        : >"$scratch/turns.$key"
    done
    # Round 0 warms up; each later run adds "wall cpu" to its tool's file.
    for ((i = 0; i <= turn_runs; i++)); do
        for key in decode encode render; do
            input=$scratch/big.messages.ndjson
            [[ $key == decode ]] && input=$scratch/big.rows.ndjson
            start=$(date +%s%N)
            /usr/bin/time -f '%U %S' -o "$scratch/turn.time" "$bin/agy-$key" <"$input" >/dev/null
            end=$(date +%s%N)
            ((i > 0)) && awk -v ns=$((end - start)) '{ printf "%.4f %.2f\n", ns / 1e9, $1 + $2 }' \
                "$scratch/turn.time" >>"$scratch/turns.$key"
        done
    done
    for key in decode encode render; do
        turn_wall[$key]=$(cut -d' ' -f1 "$scratch/turns.$key" | median)
        turn_cpu[$key]=$(cut -d' ' -f2 "$scratch/turns.$key" | median)
    done
fi
fi # BENCH_ONLY

# ---------------------------------------------------------------------------
# Issue 20, (a): agy-dump | agy-decode against txcript on the same data root,
# interleaved (ours, txcript, ours, …) so that load from other work on the
# machine falls on both alike; the medians and their ratios are what counts.

declare -A vs_wall vs_cpu vs_rss vs_load
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
    # across shapes below).
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

# vs_pair KEY ROOT MODE: versus with our pipeline and txcript on ROOT.
vs_pair() {
    versus "$1" "$2" "$3" "'$dump' '$2' | '$decode' > /dev/null" "'$txcript' '$2' > /dev/null"
}
if (want vs || want shapes) && have_tool agy-dump && have_tool agy-decode && [[ -x $txcript ]]; then
    # Issue 26: the WAL-mode stores in each shape agy leaves.
    vs_pair rootwal_ckpt "$rootwal_ckpt" rest
    vs_pair rootwal_wal "$rootwal" wal
    vs_pair rootwal_shm "$rootwal" shm
    vs_pair bigwal_ckpt "$bigwal_ckpt" rest
    vs_pair bigwal_wal "$bigwal" wal
    vs_pair bigwal_shm "$bigwal" shm
fi
if want vs && have_tool agy-dump && have_tool agy-decode && [[ -x $txcript ]]; then
    # Issue 20's rows: stores generated checkpointed.
    vs_pair bigbrain "$bigbrain" rest
    vs_pair store "$store" rest
    vs_pair store32 "$store32" rest
    vs_pair store_sidecars "$store" sidecars
fi

# ---------------------------------------------------------------------------
# Issue 20, (b): peak memory of every tool on the conversation with one 50 MB
# user text, against the largest line (row or message) it reads or writes.

bm=$scratch/bigmsg
declare -A bm_rss bm_line
# longest FILE: bytes in its longest line.
# (perl, not awk: mawk takes minutes over a line of hundreds of MB.)
longest() { perl -ne '$m = length if length > $m; END { print $m + 0, "\n" }' "$1"; }
# bigmsg_rss KEY CMD [PREPARE]
bigmsg_rss() {
    say "peak memory $1: $2"
    bm_rss[$1]=$(peak_rss "$2" "${3:-true}") || bm_rss[$1]=failed
}
if want memory && have_tool agy-dump && have_tool agy-decode; then
    "$dump" "$bigmsg" >"$bm.rows.ndjson"
    "$decode" <"$bm.rows.ndjson" >"$bm.messages.ndjson"
    "$decode" --format anthropic <"$bm.rows.ndjson" >"$bm.anthropic.ndjson"
    rows_line=$(longest "$bm.rows.ndjson")
    msgs_line=$(longest "$bm.messages.ndjson")
    max_line=$((rows_line > msgs_line ? rows_line : msgs_line))
    anth_line=$(longest "$bm.anthropic.ndjson")
    bigmsg_rss dump "'$dump' '$bigmsg' > /dev/null"
    bm_line[dump]=$rows_line
    bigmsg_rss decode "'$decode' < '$bm.rows.ndjson' > /dev/null"
    bm_line[decode]=$max_line
    bigmsg_rss anthropic "'$decode' --format anthropic < '$bm.rows.ndjson' > /dev/null"
    bm_line[anthropic]=$((max_line > anth_line ? max_line : anth_line))
    if have_tool agy-encode; then
        bigmsg_rss encode "'$encode' < '$bm.messages.ndjson' > /dev/null"
        bm_line[encode]=$max_line
        bigmsg_rss onto "'$encode' --onto '$bm.rows.ndjson' < '$bm.messages.ndjson' > /dev/null"
        bm_line[onto]=$max_line
        # The same with the big text edited (its first words changed), the
        # case where --onto must re-encode the large row.
        sed '1s/"type":"text","text":"/&Edited: /' "$bm.messages.ndjson" >"$bm.edited.ndjson"
        bigmsg_rss onto_edited "'$encode' --onto '$bm.rows.ndjson' < '$bm.edited.ndjson' > /dev/null"
        bm_line[onto_edited]=$max_line
        # The same from agy-dump of a store the conversation was packed
        # into, whose index row (its preview) and brain transcripts hold
        # the 50 MB text too (issue 39).
        if have_tool agy-pack; then
            rm -rf "$bm.packed"
            "$encode" <"$bm.messages.ndjson" | "$pack" --root "$bm.packed" >/dev/null
            "$dump" "$bm.packed" >"$bm.packed.rows.ndjson"
            "$decode" <"$bm.packed.rows.ndjson" >"$bm.packed.messages.ndjson"
            sed '1s/"type":"text","text":"/&Edited: /' "$bm.packed.messages.ndjson" >"$bm.packed.edited.ndjson"
            bigmsg_rss onto_packed "'$encode' --onto '$bm.packed.rows.ndjson' < '$bm.packed.edited.ndjson' > /dev/null"
            bm_line[onto_packed]=$(longest "$bm.packed.rows.ndjson")
        fi
    fi
    if have_tool agy-pack; then
        bigmsg_rss pack "'$pack' --root '$bm.pack-root' '$bm.rows.ndjson' > /dev/null" "rm -rf '$bm.pack-root'"
        bm_line[pack]=$rows_line
    fi
    if have_tool agy-render; then
        bigmsg_rss render "'$render' < '$bm.messages.ndjson' > /dev/null"
        bm_line[render]=$msgs_line
        bigmsg_rss render_md "'$render' --format markdown < '$bm.messages.ndjson' > /dev/null"
        bm_line[render_md]=$msgs_line
    fi
fi
# Issue 26: agy-render on the other large things a conversation can hold,
# each one message stream of a single conversation (user text, the big
# part, a result) written by perl: a tool call whose input is 50 MB of
# JSON, a content block of a type agy-render does not know holding 50 MB,
# an Edit of a 25 MB file changing a few lines in its middle, and one
# rewriting it whole (both strings 25 MB), and a 50 MB system message
# (Markdown shows text over 1 MiB as written).
bigcase() {
    local name=$1
    BIG_BYTES=$(q 50000000) perl -e '
        my ($name, $id, $n) = (@ARGV, $ENV{BIG_BYTES});
        # Lines of code-like text with the characters JSON and HTML escape.
        sub text { my ($bytes, $seed) = @_; my @l; my $len = 0; my $i = 0;
            while ($len < $bytes) { my $line = sprintf(qq{    let v%d = f("%s", %d) <= g(&x[%d]); // \x27%s\x27 & more\t\n}, $i, "a" x ($i % 23), $i * $seed, $i % 97, "b" x ($i % 11));
                push @l, $line; $len += length $line; $i++ }
            return join "", @l }
        sub js { my $s = shift; $s =~ s/(["\\])/\\$1/g; $s =~ s/\n/\\n/g; $s =~ s/\t/\\t/g; return $s }
        my $head = qq({"conversation":"$id","kind":"message");
        print $head, qq(,"role":"user","idx":0,"content":[{"type":"text","text":"Start."}]}\n);
        if ($name eq "call_input") {
            print $head, qq(,"role":"assistant","idx":1,"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"), js(text($n, 3)), qq(","env":{"A":"1","B":[1,2,{"c":null}]},"timeout":600}}]}\n);
        } elsif ($name eq "unknown_block") {
            print $head, qq(,"role":"assistant","idx":1,"content":[{"type":"mystery","data":{"payload":"), js(text($n, 5)), qq(","n":[1,2,3]}}]}\n);
        } elsif ($name eq "edit" or $name eq "edit_rewrite") {
            my $old = text($n / 2, 7);
            my $new = $old;
            if ($name eq "edit") { my $mid = index($new, "\n", length($new) / 2); substr($new, $mid + 1, 0) = "    inserted();\n    and_another();\n"; }
            else { $new = text($n / 2, 11) }
            print $head, qq(,"role":"assistant","idx":1,"content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/src/big.rs","old_string":"), js($old), qq(","new_string":"), js($new), qq("}}]}\n);
        } elsif ($name eq "system") {
            print $head, qq(,"role":"system","step_type":"SYSTEM_MESSAGE","idx":1,"content":[{"type":"text","text":"), js(text($n, 13)), qq("}]}\n);
        }
        if ($name ne "unknown_block" and $name ne "system") {
            print $head, qq(,"role":"user","idx":2,"content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}\n);
        }
    ' "$name" 0bb5c533-0f37-4e6b-8578-b94607c75201 >"$bm.$name.ndjson"
}
if want memory && have_tool agy-render; then
    for case in call_input unknown_block edit edit_rewrite system; do
        bigcase "$case"
        line=$(longest "$bm.$case.ndjson")
        bigmsg_rss "render_$case" "'$render' < '$bm.$case.ndjson' > /dev/null"
        bm_line[render_$case]=$line
        bigmsg_rss "render_md_$case" "'$render' --format markdown < '$bm.$case.ndjson' > /dev/null"
        bm_line[render_md_$case]=$line
    done
fi

# ---------------------------------------------------------------------------
# Report.

secs() { [[ ${status[$1]:-} == ok ]] && awk -v t="${wall[$1]}" 'BEGIN { printf "%.3f s", t }' || true; }
mib() { [[ ${status[$1]:-} == ok ]] && awk -v k="${rss_max[$1]}" 'BEGIN { printf "%.1f MiB", k / 1024 }' || true; }
# Peak RSS of every stage, for pipelines.
mib_stages() {
    [[ ${status[$1]:-} == ok ]] || return 0
    local k out=()
    for k in ${rss_list[$1]}; do out+=("$(awk -v k="$k" 'BEGIN { printf "%.1f", k / 1024 }')"); done
    local joined
    joined=$(
        IFS=/
        echo "${out[*]}"
    )
    echo "$joined MiB"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
# verdict OK: "met" or "missed".
verdict() { if [[ $1 == 1 ]]; then echo met; else echo missed; fi; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }' && echo 1 || echo 0; }

# row WORK COMMAND WALL RSS RATIO TARGET VERDICT
row() {
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7"
}
# missing KEY TOOL...: why a row has no number.
missing() {
    local t
    for t in "${@:2}"; do
        if [[ $t == agy-* ]] && ! have_tool "$t"; then
            echo "not built yet ($t)"
            return
        elif [[ $t != agy-* ]] && ! have_cmd "$t"; then
            echo "not installed ($t)"
            return
        fi
    done
    if [[ ${status[$1]:-} == failed ]]; then echo "failed (non-zero exit)"; else echo "not measured"; fi
}

big_mb=$(awk -v b="$(stat -c %s "$big")" 'BEGIN { printf "%.0f", b / 1e6 }')
big_steps=$(sqlite3 "$big" 'select count(*) from steps' 2>/dev/null || echo 52000)
store_n=$(find "$store/conversations" -name '*.db' | wc -l)
# Mean db size in KB.
db_kb() { du -sk --apparent-size "$1/conversations" | awk -v n="$store_n" '{ printf "%.0f", $1 * 1.024 / n }'; }
store_kb=$(db_kb "$store")
store32_kb=$(db_kb "$store32")
timer=$(have_cmd hyperfine && echo "hyperfine $(hyperfine --version | awk '{ print $2 }'), at least $runs runs and 3 s + 1 warm-up" || echo "date +%s%N, $runs runs + 1 warm-up")

if want tools; then
echo "## Benchmark run"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- commit: $commit"
echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(free -h | awk '/^Mem:/ { print $2 }') RAM ($(free -h | awk '/^Mem:/ { print $7 }') available)"
echo "- load average when the report was written: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine makes short runs noisy)"
echo "- timing: $timer, warm page cache; peak RSS from /usr/bin/time -f %M per stage"
echo "- big.db: $big_mb MB, $big_steps steps ($(cat "$data/big/.gen-seconds") s to generate)"
echo "- ROOT2000: $store_n conversations, $store_kb KB per db (4 KiB pages), with brain transcripts ($(cat "$store/.gen-seconds") s)"
echo "- ROOT2000-32K: the same at agy's 32 KiB pages, $store32_kb KB per db ($(cat "$store32/.gen-seconds") s)"
echo "- 1k.db / 50k.db: 1,000 and 50,000 steps, same mix and bytes per step ($(cat "$data/steps1k/.gen-seconds") s / $(cat "$data/steps50k/.gen-seconds") s)"
echo
echo "| work | command | median wall | peak RSS | ratio vs alternative | target | met? |"
echo "| --- | --- | ---: | ---: | ---: | --- | --- |"

# 1. dump of the large db.
alt_json=""
got sqlite_json && alt_json=${wall[sqlite_json]}
if got dump; then
    r="" v=""
    if [[ -n $alt_json ]]; then
        r=$(ratio "${wall[dump]}" "$alt_json")
        v=$(verdict "$(($(le "${wall[dump]}" "$(awk -v a="$alt_json" 'BEGIN { print a / 2 }')") * $(le "${rss_max[dump]}" 32768)))")
    fi
    row "one $big_mb MB db to hex-JSON rows" "\`agy-dump big.db\`" "$(secs dump)" "$(mib dump)" "$r" "<= 0.5x sqlite3, <= 32 MiB" "$v"
else
    row "one $big_mb MB db to hex-JSON rows" "\`agy-dump big.db\`" "$(missing dump agy-dump)" "" "" "<= 0.5x sqlite3, <= 32 MiB" ""
fi
if got sqlite_json; then
    row "same (alternative)" "\`sqlite3 -json big.db \"select … hex(…) … from steps\"\`" "$(secs sqlite_json)" "$(mib sqlite_json)" "1.00x" "" ""
else
    row "same (alternative)" "\`sqlite3 -json … hex() … steps\`" "$(missing sqlite_json sqlite3)" "" "" "" ""
fi
row "same (alternative)" "txcript hex-JSON text form" "2.4 s (issue)" "957 MiB (issue)" "" "" "not installable here; issue's figure"
got cat && row "read the file" "\`cat big.db\`" "$(secs cat)" "$(mib cat)" "" "" ""

# 2. the large db to messages.
if got dump_decode; then
    r=$(ratio "${wall[dump_decode]}" 1.45)
    v=$(verdict "$(($(le "${wall[dump_decode]}" 0.725) * $(le "${rss_max[dump_decode]}" 32768)))")
    row "one $big_mb MB db to chat messages" "\`agy-dump big.db \| agy-decode\`" "$(secs dump_decode)" "$(mib_stages dump_decode)" "$r vs 1.45 s" "<= 0.725 s, every process <= 32 MiB" "$v"
else
    row "one $big_mb MB db to chat messages" "\`agy-dump big.db \| agy-decode\`" "$(missing dump_decode agy-dump agy-decode)" "" "" "<= 0.725 s, every process <= 32 MiB" ""
fi
row "same (alternative)" "txcript, db to messages" "1.45 s (issue)" "746 MiB (issue)" "" "" "not installable here; issue's figure"

# 3. 2,000 small dbs.
if got store; then
    v=$(verdict "$(le "${wall[store]}" 1.0)")
    row "2,000 small dbs to chat messages" "\`agy-dump ROOT2000 \| agy-decode\`" "$(secs store)" "$(mib_stages store)" "$(ratio "${wall[store]}" 1.9) vs 1.9 s" "< 1 s" "$v"
else
    row "2,000 small dbs to chat messages" "\`agy-dump ROOT2000 \| agy-decode\`" "$(missing store agy-dump agy-decode)" "" "" "< 1 s" ""
fi
if got store32; then
    row "same, agy's 32 KiB pages (${store32_kb} KB dbs)" "\`agy-dump ROOT2000-32K \| agy-decode\`" "$(secs store32)" "$(mib_stages store32)" "$(ratio "${wall[store32]}" 1.9) vs 1.9 s" "(information)" ""
fi
row "same (alternative)" "txcript, one process" "1.9 s (issue)" "5 MiB (issue)" "" "" "not installable here; issue's figure"

# 3b. list (issue 18).
if got ls; then
    v=$(verdict "$(le "${wall[ls]}" 1.0)")
    row "list 2,000 conversations (no index)" "\`agy-ls ROOT2000\`" "$(secs ls)" "$(mib ls)" "$(ratio "${wall[ls]}" "${wall[store]:-${wall[ls]}}") vs dump \| decode" "< 1 s" "$v"
else
    row "list 2,000 conversations" "\`agy-ls ROOT2000\`" "$(missing ls agy-ls)" "" "" "< 1 s" ""
fi
if got ls_indexed; then
    v=$(verdict "$(le "${wall[ls_indexed]}" 1.0)")
    row "same, every conversation in the index" "\`agy-ls ROOT2000+INDEX\`" "$(secs ls_indexed)" "$(mib ls_indexed)" "" "< 1 s" "$v"
fi
if got reindex; then
    row "build the index of 2,000 conversations" "\`agy-pack --reindex --root ROOT2000+INDEX\`" "$(secs reindex)" "$(mib reindex)" "" "(information)" ""
fi

# 4. pack.
alt_restore=""
got sqlite_restore && alt_restore=${wall[sqlite_restore]}
if got pack; then
    r="" v=""
    if [[ -n $alt_restore ]]; then
        r=$(ratio "${wall[pack]}" "$alt_restore")
        v=$(verdict "$(le "${wall[pack]}" "$(awk -v a="$alt_restore" 'BEGIN { print a / 2 }')")")
    fi
    row "restore the large db from text" "\`agy-pack --root NEW big.rows.ndjson\`" "$(secs pack)" "$(mib pack)" "$r" "<= 0.5x sqlite3 restore" "$v"
else
    row "restore the large db from text" "\`agy-pack --root NEW big.rows.ndjson\`" "$(missing pack agy-pack agy-dump)" "" "" "<= 0.5x sqlite3 restore" ""
fi
if got sqlite_restore; then
    row "same (alternative)" "\`sqlite3 big.db .dump \| sqlite3 NEW.db\`" "$(secs sqlite_restore)" "$(mib_stages sqlite_restore)" "1.00x" "" ""
else
    row "same (alternative)" "\`sqlite3 NEW.db < <(sqlite3 big.db .dump)\`" "$(missing sqlite_restore sqlite3)" "" "" "" ""
fi

# ", taking turns: Ws / Cs CPU (decode Ws / Cs)": KEY's medians when the
# tools took turns, for the ratio cell.
turns() {
    [[ -n ${turn_wall[$1]:-} ]] || return 0
    printf ', taking turns: %.3f s / %.2f s CPU (decode %.3f s / %.2f s)' \
        "${turn_wall[$1]}" "${turn_cpu[$1]}" "${turn_wall[decode]}" "${turn_cpu[decode]}"
}

# 5. encode vs decode.
if got encode && got decode; then
    # Judged on the turns when they ran, else on the separate medians.
    e=${turn_wall[encode]:-${wall[encode]}} d=${turn_wall[decode]:-${wall[decode]}}
    v=$(verdict "$(le "$e" "$(awk -v a="$d" 'BEGIN { print a * 1.2 }')")")
    row "messages back to rows" "\`agy-encode < big.messages.ndjson\`" "$(secs encode)" "$(mib encode)" "$(ratio "$e" "$d") vs decode$(turns encode)" "<= 1.2x agy-decode" "$v"
else
    row "messages back to rows" "\`agy-encode < big.messages.ndjson\`" "$(missing encode agy-encode agy-decode agy-dump)" "" "" "<= 1.2x agy-decode" ""
fi
if got decode; then
    row "rows to messages (reference)" "\`agy-decode < big.rows.ndjson\`" "$(secs decode)" "$(mib decode)" "1.00x" "" ""
else
    row "rows to messages (reference)" "\`agy-decode < big.rows.ndjson\`" "$(missing decode agy-decode agy-dump)" "" "" "" ""
fi
if got encode_onto && got encode; then
    v=$(verdict "$(le "${wall[encode_onto]}" "$(awk -v a="${wall[encode]}" 'BEGIN { print a * 1.3 }')")")
    [[ ${rss_max[encode_onto]} -le $((32 * 1024)) ]] || v=$(verdict 0)
    row "messages back onto their rows" "\`agy-encode --onto big.rows.ndjson < big.messages.ndjson\`" "$(secs encode_onto)" "$(mib encode_onto)" "$(ratio "${wall[encode_onto]}" "${wall[encode]}") vs encode" "<= 1.3x agy-encode, <= 32 MiB" "$v"
fi
if got encode_pack; then
    row "messages to a conversation db" "\`agy-encode < big.messages.ndjson \| agy-pack --root NEW\`" "$(secs encode_pack)" "$(mib_stages encode_pack)" "" "(information)" ""
fi

# 5b. render (issue 12).
if got render && got decode; then
    r=${turn_wall[render]:-${wall[render]}} d=${turn_wall[decode]:-${wall[decode]}}
    v=$(verdict "$(le "$r" "$d")")
    row "messages to one HTML page" "\`agy-render < big.messages.ndjson\`" "$(secs render)" "$(mib render)" "$(ratio "$r" "$d") vs decode$(turns render)" "<= agy-decode of it" "$v"
else
    row "messages to one HTML page" "\`agy-render < big.messages.ndjson\`" "$(missing render agy-render agy-decode agy-dump)" "" "" "<= agy-decode of it" ""
fi
if got render_out; then
    row "same, into a page file and index" "\`agy-render --out SITE < big.messages.ndjson\`" "$(secs render_out)" "$(mib render_out)" "" "(information)" ""
fi

# 6. linearity.
lin_cmd="agy-dump N.db \\| agy-decode"
have_tool agy-decode || lin_cmd="agy-dump N.db"
if got lin1k && got lin50k; then
    per1k=$(awk -v t="${wall[lin1k]}" 'BEGIN { print t / 1000 }')
    per50k=$(awk -v t="${wall[lin50k]}" 'BEGIN { print t / 50000 }')
    us() { awk -v t="$1" 'BEGIN { printf "%.2f us/step", t * 1e6 }'; }
    drift=$(awk -v a="$per50k" -v b="$per1k" 'BEGIN { d = a / b - 1; if (d < 0) d = -d; print d }')
    v=$(verdict "$(le "$drift" 0.2)")
    row "1,000 steps" "\`${lin_cmd/N/1k}\`" "$(secs lin1k) ($(us "$per1k"))" "$(mib_stages lin1k)" "" "" ""
    row "50,000 steps" "\`${lin_cmd/N/50k}\`" "$(secs lin50k) ($(us "$per50k"))" "$(mib_stages lin50k)" "$(ratio "$per50k" "$per1k") per step" "per-step time within 20 %" "$v"
    if got lin1; then
        # What every run pays before its first step; it weighs on the 1,000-step time.
        row "1 step (fixed cost of a run)" "\`${lin_cmd/N/1}\`" "$(secs lin1)" "$(mib_stages lin1)" "" "(information)" ""
        # The same two runs with that fixed cost taken off: the growth alone.
        m1k=$(awk -v t="${wall[lin1k]}" -v f="${wall[lin1]}" 'BEGIN { print (t - f) / 999 }')
        m50k=$(awk -v t="${wall[lin50k]}" -v f="${wall[lin1]}" 'BEGIN { print (t - f) / 49999 }')
        row "per step beyond the 1-step run" "(1k − 1) / 999 and (50k − 1) / 49,999" "$(us "$m1k") and $(us "$m50k")" "" "$(ratio "$m50k" "$m1k") per step" "(information)" ""
    fi
else
    row "1,000 vs 50,000 steps" "\`agy-dump N.db \| agy-decode\`" "$(missing lin1k agy-dump)" "" "" "per-step time within 20 %" ""
fi

echo
echo "Paths: big.db = ${big#"$top"/}; ROOT2000 = ${store#"$top"/}; ROOT2000-32K = ${store32#"$top"/};"
echo "ROOT2000+INDEX = ROOT2000 hard-linked into ${scratch#"$top"/}/store-indexed with an index from agy-pack --reindex;"
echo "1k.db = ${db1k#"$top"/}; 50k.db = ${db50k#"$top"/}; 1.db = ${db1#"$top"/}; big.rows.ndjson and big.messages.ndjson are"
echo "written to ${scratch#"$top"/} by agy-dump and agy-decode before the rows that read them."
echo "Pipelines are timed as a whole; their peak RSS is given per stage (first/second)."
echo
fi # BENCH_ONLY

kib_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
stages_mib() {
    local k out=()
    for k in $1; do out+=("$(kib_mib "$k")"); done
    (
        IFS=/
        echo "${out[*]} MiB"
    )
}
if want vs || want shapes; then
echo "## Against txcript 0.14.4 (issues 20 and 26)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit, $(nproc) cores"
echo "- $vs_runs runs of each side, interleaved after a warm-up each; medians. CPU is user + system time of"
echo "  every process (/usr/bin/time on the whole pipeline); peak RSS per process from one more run."
echo "- txcript through bench/txcript (\`discover()\`, \`load()\`, \`to_common()\`, one JSON line per conversation)"
echo
echo "| store | agy-dump ROOT \| agy-decode: wall, CPU | txcript: wall, CPU | wall ratio | CPU ratio | peak RSS (dump/decode; txcript) | load avg after | target | met? |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |"
vs_row() {
    local key=$1 name=$2 target=$3
    if [[ ${status[vs_$key]:-} != ok ]]; then
        printf '| %s | %s |  |  |  |  |  | %s |  |\n' "$name" "$([[ -x $txcript ]] && echo "${status[vs_$key]:-not measured}" || echo "txcript not built")" "$target"
        return
    fi
    local ow=${vs_wall[$key.ours]} oc=${vs_cpu[$key.ours]} tw=${vs_wall[$key.theirs]} tc=${vs_cpu[$key.theirs]}
    local wr cr v=""
    wr=$(ratio "$ow" "$tw")
    cr=$(ratio "$oc" "$tc")
    [[ -n $target ]] && v=$(verdict "$(($(le "$ow" "$(awk -v a="$tw" 'BEGIN { print a * 0.4 }')") * $(le "$oc" "$(awk -v a="$tc" 'BEGIN { print a * 0.6 }')")))")
    printf '| %s | %.3f s, %.2f s | %.3f s, %.2f s | %s | %s | %s; %s | %s | %s | %s |\n' "$name" "$ow" "$oc" "$tw" "$tc" "$wr" "$cr" \
        "$(stages_mib "${vs_rss[$key.ours]}")" "$(stages_mib "${vs_rss[$key.theirs]}")" "${vs_load[$key]}" "${target:-(information)}" "$v"
}
mb() { du -sm --apparent-size "$1" | cut -f1; }
rootw_kb=$(du -sk --apparent-size "$rootwal_ckpt/conversations" | awk -v n="$(find "$rootwal_ckpt/conversations" -name '*.db' | wc -l)" '{ printf "%.0f", $1 * 1.024 / n }')
wal_kb=$(find "$rootwal.sidecars" -name '*.db-wal' -printf '%s\n' | awk '{ s += $1; n++ } END { if (n) printf "%.0f", s / n / 1000 }')
target="wall <= 0.4x, CPU <= 0.6x"
vs_row rootwal_ckpt "ROOTW: 2,000 WAL-mode conversations ($rootw_kb KB per db, $(mb "$rootwal_ckpt") MB with brain files), checkpointed" "$target"
vs_row rootwal_wal "same, last 5 steps in a -wal ($wal_kb KB), no -shm (agy exited)" "$target"
vs_row rootwal_shm "same, -wal and -shm (agy killed or running)" "$target"
vs_row bigwal_ckpt "BIGW: big.db's conversation in WAL mode, 4 KiB pages, with brain files ($(mb "$bigwal_ckpt") MB), checkpointed" "$target"
vs_row bigwal_wal "same, last 400 steps in a -wal, no -shm" "$target"
vs_row bigwal_shm "same, -wal and -shm" "$target"
if want vs; then
    vs_row bigbrain "big.db's conversation with its brain files, 32 KiB pages ($(mb "$bigbrain") MB)" "$target"
    vs_row store "ROOT2000 (4 KiB pages)" "$target"
    vs_row store32 "ROOT2000-32K" ""
    vs_row store_sidecars "ROOT2000 with the -wal and -shm txcript leaves" ""
fi
echo
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
txcript_lines() { cat "$scratch/vs.$1.theirs.lines" 2>/dev/null || echo "?"; }
echo "Each run starts from its store in its shape: ROOTW and BIGW as agy leaves them (the -wal and -shm put"
echo "back as generated before every run of either side, since txcript's readers create a -shm where there is"
echo "none and write into it), the older rows at rest (no -wal or -shm beside a database; the last keeps the"
echo "empty -wal and -shm txcript leaves, and agy-dump then reads every database as a live one)."
echo "\`agy-dump | agy-decode\` wrote the same bytes in the three shapes: ROOTW $(same_output rootwal_ckpt rootwal_wal rootwal_shm),"
echo "BIGW $(same_output bigwal_ckpt bigwal_wal bigwal_shm). txcript's conversations (lines) in the three shapes: ROOTW"
echo "$(txcript_lines rootwal_ckpt)/$(txcript_lines rootwal_wal)/$(txcript_lines rootwal_shm), BIGW $(txcript_lines bigwal_ckpt)/$(txcript_lines bigwal_wal)/$(txcript_lines bigwal_shm)."
echo
fi # vs, shapes

if want memory; then
echo "## Peak memory with one 50 MB user text (issue 20)"
echo
if [[ -n ${rows_line:-} ]]; then
    echo "The conversation \`gen-store --steps 3 --first-prompt-bytes 50000000 --seed 4\`: its longest row line is"
    echo "$(kib_mib $((rows_line / 1024))) MiB, its longest message line $(kib_mib $((msgs_line / 1024))) MiB. The bound is twice the longest line a tool reads or writes."
    echo "\`edited\` is the message stream with the big text's first words changed, so that --onto re-encodes its row."
    echo
    echo "| tool | command | peak RSS | longest line handled | ratio | target | met? |"
    echo "| --- | --- | ---: | ---: | ---: | --- | --- |"
    bm_row() {
        local key=$1 cmd=$2
        [[ -n ${bm_rss[$key]:-} ]] || return 0
        if [[ ${bm_rss[$key]} == failed ]]; then
            printf '| %s | `%s` | failed |  |  | <= 2x |  |\n' "$key" "$cmd"
            return
        fi
        local line=${bm_line[$key]}
        printf '| %s | `%s` | %s MiB | %s MiB | %s | <= 2x | %s |\n' "${cmd%% *}" "$cmd" "$(kib_mib "${bm_rss[$key]}")" \
            "$(kib_mib $((line / 1024)))" "$(ratio "${bm_rss[$key]}" $((line / 1024)))" "$(verdict "$(le "${bm_rss[$key]}" $((2 * line / 1024)))")"
    }
    bm_row dump "agy-dump BIGMSG"
    bm_row decode "agy-decode < rows"
    bm_row anthropic "agy-decode --format anthropic < rows"
    bm_row encode "agy-encode < messages"
    bm_row onto "agy-encode --onto rows < messages"
    bm_row onto_edited "agy-encode --onto rows < edited"
    bm_row onto_packed "agy-encode --onto rows-of-a-packed-store < edited"
    bm_row pack "agy-pack --root NEW rows"
    bm_row render "agy-render < messages"
    bm_row render_md "agy-render --format markdown < messages"
fi
if [[ -n ${bm_line[render_call_input]:-} ]]; then
    echo
    echo "Issue 26: agy-render on one conversation holding another large thing (written by bench/run.sh's"
    echo "\`bigcase\`): a tool call whose input is 50 MB of JSON (\`call_input\`), a 50 MB block of a type it does not"
    echo "know (\`unknown_block\`), an Edit of a 25 MB file that inserts two lines in its middle (\`edit\`) and one"
    echo "that rewrites it whole (\`edit_rewrite\`), a 50 MB system message (\`system\`)."
    echo
    echo "| tool | command | peak RSS | longest line handled | ratio | target | met? |"
    echo "| --- | --- | ---: | ---: | ---: | --- | --- |"
    for case in call_input unknown_block edit edit_rewrite system; do
        bm_row "render_$case" "agy-render < $case"
        bm_row "render_md_$case" "agy-render --format markdown < $case"
    done
fi
fi # memory
