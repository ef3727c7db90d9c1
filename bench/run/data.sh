# shellcheck shell=bash disable=SC2034,SC2154
# The data every part of bench/run.sh measures on: the synthetic stores of
# examples/gen_store.rs (make_data, which also sets the paths the parts
# use: big, store, store32, db1k, db50k, db1, bigbrain, bigmsg, rootwal,
# rootwal_ckpt, bigwal, bigwal_ckpt), and the shapes a store is put in
# before a run (at_rest, in_shape), since what lies beside a database
# (-wal, -shm) changes how it is read. Sourced by bench/run.sh.
#
# Each store is regenerated only when its flags or the generator's source
# changed; the generation time is kept beside it for the report.

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

# q N: N, or N / 100 in quick mode (sizes of the data).
q() { if [[ -n $quick ]]; then echo $(($1 / 100)); else echo "$1"; fi; }

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

# make_data: generates (or reuses) every store and sets the paths to them.
make_data() {
    gen_source_hash=$(sha1sum examples/gen_store.rs | cut -c1-12)

    # (a) one long agent run: ~216 MB, 52,000 steps, outputs up to 4 MiB. The
    # target counts row bytes; SQLite's pages add about 4 %, so 207.3 MB of rows
    # make a ~216 MB file. No brain files: the work measured is the db's.
    # Sizes divided by 100 in quick mode.
    dataset big --steps "$(q 52000)" --target-bytes "$(q 207300000)" --max-output 4194304 --no-brain --seed 1
    # (b) 2,000 conversations of ~125 KB files with brain transcripts. 4 KiB
    # pages, as in the issue's measurement (a 32 KiB-page agy db is at least
    # 320 KiB before it holds a step); (b') is the same store at agy's page size.
    local store_flags=(--conversations "$(q 2000)" --steps 30 --target-bytes 62000 --max-output 65536 --seed 2)
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
    local rootw_flags=(--conversations "$(q 2000)" --steps 40 --target-bytes 160000 --max-output 16384 --page-size 4096 --artifacts --seed 5)
    dataset rootwal-ckpt "${rootw_flags[@]}"
    dataset rootwal "${rootw_flags[@]}" --wal-steps 5 --shm
    local bigw_flags=(--steps "$(q 52000)" --target-bytes "$(q 207300000)" --max-output 4194304 --page-size 4096 --artifacts --seed 1)
    dataset bigwal-ckpt "${bigw_flags[@]}"
    dataset bigwal "${bigw_flags[@]}" --wal-steps 400 --shm

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
}

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
