# shellcheck shell=bash disable=SC2034,SC2154
# How bench/run.sh measures a command: its median wall time over $runs
# runs (time_median: hyperfine when installed, else `date +%s%N`), the
# peak RSS of each of its stages (peak_rss: one more run, every stage
# under /usr/bin/time), both at once under a key (measure, got); and which
# of our tools exist to be measured (have_tool, have_cmd, say_versions).
# Sourced by bench/run.sh, once bin and scratch are set.
#
# A command is a bash string; its stages are separated by " | ".

# Our tools.
dump=$bin/agy-dump
decode=$bin/agy-decode
encode=$bin/agy-encode
pack=$bin/agy-pack
render=$bin/agy-render
ls=$bin/agy-ls

# Which of our tools exist. A stub binary (`fn main(){}`) exits 0 silently,
# so "real" means `--version` prints something.
have_tool() {
    local exe=$bin/$1
    [[ -x $exe ]] && [[ -n $("$exe" --version 2>/dev/null || true) ]]
}
have_cmd() { command -v "$1" >/dev/null 2>&1; }

# say_versions: each tool's version, or that it is not built yet, on stderr.
say_versions() {
    local tool
    for tool in agy-dump agy-decode agy-encode agy-pack agy-render; do
        if have_tool "$tool"; then say "$tool: $("$bin/$tool" --version)"; else say "$tool: not built yet"; fi
    done
}

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
# got KEY: whether KEY was measured.
got() { [[ ${status[$1]:-} == ok ]]; }
