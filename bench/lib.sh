# What bench/edit.sh and bench/inplace.sh share: where the data and the
# binaries are, the release build, the 2,000-conversation store, a timed
# pipeline and a median. Sourced, with NAME set to the script's name.

cd "$(dirname "${BASH_SOURCE[0]}")/.."
top=$PWD
quick=${BENCH_QUICK:-}
data=${BENCH_DATA:-$top/target/bench-data${quick:+-quick}}
bin=$top/target/release
scratch=$data/scratch-$NAME
mkdir -p "$data" "$scratch"
say() { printf 'bench/%s: %s\n' "$NAME" "$*" >&2; }

if [[ -z ${BENCH_NO_BUILD:-} ]]; then
    say "building release binaries"
    cargo build --release --examples --bins >&2
fi

# The 2,000-conversation store of bench/run.sh (ROOT2000: 30 steps, brain
# transcripts, 4 KiB pages), generated when run.sh has not: sets `store`
# and `n`.
n=2000
[[ -n $quick ]] && n=20
store=$data/store2000
stamp="edit $n"
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

# The median of the numbers on standard input.
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
