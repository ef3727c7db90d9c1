# shellcheck shell=bash disable=SC2034,SC2154
# agy-decode, agy-encode and agy-render taking turns on big.db's
# conversation: the targets that hold one tool to another (encode and
# render against decode) are judged on runs that take turns, decode,
# encode, render, decode, …, so that a machine that slows down or speeds
# up while the bench runs weighs on all three alike (a tool run right after
# a different one is also about a tenth slower than right after itself:
# the caches). turns_measure fills turn_wall and turn_cpu (medians of wall
# and CPU time over $turn_runs rounds) once tools.sh has measured the
# three; turns gives the cell tools.sh's report shows them in. The same
# turns on examples/sample's conversation (sample_turns_measure), a
# hundred runs a round, give the rows sample_row adds. Sourced by
# bench/run.sh.

declare -A turn_wall turn_cpu sample_wall sample_cpu

# Runs of each tool per round on the sample: one run is about a
# millisecond, most of it starting the process, too short to time alone.
sample_batch=100

# take_turns NAME ROWS MESSAGES BATCH: $turn_runs rounds after a warm-up
# one, each running agy-decode on ROWS, then agy-encode and agy-render on
# MESSAGES, each BATCH times in a row (from one shell when more than
# once: the shell's fork is in every tool's time alike). Each round adds
# "wall cpu" per run to $scratch/NAME.KEY; the medians go into the
# arrays named NAME_wall and NAME_cpu.
take_turns() {
    local name=$1 rows=$2 messages=$3 batch=$4 key input start end
    local -n medians_wall=${name}_wall medians_cpu=${name}_cpu
    for key in decode encode render; do
        : >"$scratch/$name.$key"
    done
    for ((i = 0; i <= turn_runs; i++)); do
        for key in decode encode render; do
            input=$messages
            [[ $key == decode ]] && input=$rows
            start=$(date +%s%N)
            if ((batch == 1)); then
                /usr/bin/time -f '%U %S' -o "$scratch/turn.time" "$bin/agy-$key" <"$input" >/dev/null
            else
                # shellcheck disable=SC2016 # the inner shell expands them
                /usr/bin/time -f '%U %S' -o "$scratch/turn.time" sh -c \
                    'i=0; while [ $i -lt "$3" ]; do "$1" <"$2" >/dev/null; i=$((i + 1)); done' \
                    sh "$bin/agy-$key" "$input" "$batch"
            fi
            end=$(date +%s%N)
            ((i > 0)) && awk -v ns=$((end - start)) -v n="$batch" \
                '{ printf "%.6f %.6f\n", ns / 1e9 / n, ($1 + $2) / n }' \
                "$scratch/turn.time" >>"$scratch/$name.$key"
        done
    done
    # The arrays are associative (declared above), their keys words.
    # shellcheck disable=SC2004
    for key in decode encode render; do
        medians_wall[$key]=$(cut -d' ' -f1 "$scratch/$name.$key" | median)
        medians_cpu[$key]=$(cut -d' ' -f2 "$scratch/$name.$key" | median)
    done
}

# turns_measure: the turns on the big.rows.ndjson and big.messages.ndjson
# tools_measure wrote, one run at a time.
turns_measure() {
    got decode && got encode && got render || return 0
    say "taking turns: decode, encode, render ($turn_runs rounds)"
    take_turns turn "$scratch/big.rows.ndjson" "$scratch/big.messages.ndjson" 1
}

# turns KEY: ", taking turns: Ws / Cs CPU (decode Ws / Cs)", KEY's medians
# when the tools took turns, for the ratio cell; nothing when they did not.
turns() {
    [[ -n ${turn_wall[$1]:-} ]] || return 0
    printf ', taking turns: %.3f s / %.2f s CPU (decode %.3f s / %.2f s)' \
        "${turn_wall[$1]}" "${turn_cpu[$1]}" "${turn_wall[decode]}" "${turn_cpu[decode]}"
}

# sample_turns_measure: the same turns on examples/sample's conversation,
# the other input the issue holds encode and render to decode on,
# $sample_batch runs at a time.
sample_turns_measure() {
    got decode && got encode && got render || return 0
    local rows=$scratch/sample.rows.ndjson messages=$scratch/sample.messages.ndjson
    "$bin/agy-dump" examples/sample >"$rows" && "$bin/agy-decode" <"$rows" >"$messages" || return 0
    say "taking turns on the sample: decode, encode, render ($turn_runs rounds of $sample_batch runs)"
    take_turns sample "$rows" "$messages" "$sample_batch"
}

# ms SECONDS: milliseconds, two decimals.
ms() { awk -v s="$1" 'BEGIN { printf "%.2f", s * 1000 }'; }

# sample_row KEY TARGET FACTOR: the report's row for KEY on the sample,
# held to FACTOR times agy-decode's wall time there, per run.
sample_row() {
    local key=$1 target=$2 factor=$3
    [[ -n ${sample_wall[$key]:-} && -n ${sample_wall[decode]:-} ]] || return 0
    local limit v cell
    limit=$(awk -v d="${sample_wall[decode]}" -v f="$factor" 'BEGIN { print d * f }')
    v=$(verdict "$(le "${sample_wall[$key]}" "$limit")")
    cell="$(ratio "${sample_wall[$key]}" "${sample_wall[decode]}") vs decode ($(ms "${sample_wall[decode]}") ms;"
    cell+=" CPU $(ms "${sample_cpu[$key]}") / $(ms "${sample_cpu[decode]}") ms)"
    row "same, examples/sample (per run, taking turns)" "\`agy-$key < sample\`" \
        "$(ms "${sample_wall[$key]}") ms" "" "$cell" "$target" "$v"
}
