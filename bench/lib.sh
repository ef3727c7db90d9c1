# shellcheck shell=bash
# What the bench scripts share, one definition of each: where the data
# is (top, quick, data), a progress message, the build, a timed pipeline,
# a median, a file's longest line, the commit measured. Sourcing it sets
# those three variables, defines the functions and does nothing else
# (formats.sh, whose arguments are relative to where it was started,
# and run.sh source it so). edit.sh, inplace.sh and usage.sh set NAME to
# the script's name and then call `setup`: the release build and the
# 2,000-conversation store.

top=$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
quick=${BENCH_QUICK:-}
data=${BENCH_DATA:-$top/target/bench-data${quick:+-quick}}

# say MESSAGE: progress on stderr, as "bench/NAME: MESSAGE" (run.sh, which
# sets no NAME: "bench: MESSAGE").
say() { printf 'bench%s: %s\n' "${NAME:+/$NAME}" "$*" >&2; }

# build_bins PROFILE: builds the binaries and examples (gen-store) of
# PROFILE, release or debug.
build_bins() {
    say "building $1 binaries"
    if [[ $1 == release ]]; then
        cargo build --release --examples --bins >&2
    else
        cargo build --examples --bins >&2
    fi
}

# timed CMD FILE: runs CMD (a pipeline) in bash and prints "wall cpu" in
# seconds, CPU being every stage's user and system time (bash's `times`
# of its children), FILE the scratch file for them.
timed() {
    local start end
    start=$(date +%s%N)
    bash -c "$1; times" > "$2"
    end=$(date +%s%N)
    awk -v w="$(( end - start ))" 'NR == 2 {
        split($1, u, /[ms]/); split($2, s, /[ms]/)
        printf "%.4f %.4f\n", w / 1e9, u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$2"
}

# The median of the numbers on standard input, separated by spaces or
# newlines (0 when there are none).
median() { tr ' ' '\n' | awk NF | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# longest FILE: bytes in its longest line.
# (perl, not awk: mawk takes minutes over a line of hundreds of MB.)
longest() { perl -ne '$m = length if length > $m; END { print $m + 0, "\n" }' "$1"; }

# What was measured: the tree as it was built, HEAD's short hash and
# "+ uncommitted changes" when the work tree differs from it.
tree_commit() {
    local commit
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    [[ -z $(git status --porcelain 2>/dev/null) ]] || commit+=" + uncommitted changes"
    printf '%s\n' "$commit"
}

# setup: what edit.sh, inplace.sh and usage.sh start with, NAME set. Goes
# to the top of the repository, sets bin (the release binaries) and
# scratch (DATA/scratch-NAME), builds unless BENCH_NO_BUILD, and sets
# `store` and `n` to the 2,000-conversation store of run.sh (ROOT2000: 30
# steps, brain transcripts, 4 KiB pages), generated when run.sh has not.
setup() {
    cd "$top" || exit
    bin=$top/target/release
    scratch=$data/scratch-$NAME
    mkdir -p "$data" "$scratch"
    [[ -n ${BENCH_NO_BUILD:-} ]] || build_bins release

    n=2000
    [[ -z $quick ]] || n=20
    store=$data/store2000
    local stamp="edit $n"
    if [[ ! -d $store/conversations ]]; then
        store=$data/edit-store$n
        if [[ ! -f $store/.stamp || $(cat "$store/.stamp") != "$stamp" ]]; then
            say "generating $store"
            rm -rf "$store"
            "$bin/examples/gen-store" --root "$store" --conversations "$n" --steps 30 \
                --target-bytes 62000 --max-output 65536 --seed 2 --page-size 4096 >&2
            echo "$stamp" > "$store/.stamp"
        fi
    fi
}
