# shellcheck shell=bash disable=SC2034,SC2154
# agy-decode, agy-encode and agy-render taking turns on big.db's
# conversation: the targets that hold one tool to another (encode and
# render against decode) are judged on runs that take turns, decode,
# encode, render, decode, …, so that a machine that slows down or speeds
# up while the bench runs weighs on all three alike (a tool run right after
# a different one is also about a tenth slower than right after itself:
# the caches). turns_measure fills turn_wall and turn_cpu (medians of wall
# and CPU time over $turn_runs rounds) once tools.sh has measured the
# three; turns gives the cell tools.sh's report shows them in. Sourced by
# bench/run.sh.

declare -A turn_wall turn_cpu

# turns_measure: $turn_runs rounds after a warm-up one, on the
# big.rows.ndjson and big.messages.ndjson tools_measure wrote.
turns_measure() {
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
}

# turns KEY: ", taking turns: Ws / Cs CPU (decode Ws / Cs)", KEY's medians
# when the tools took turns, for the ratio cell; nothing when they did not.
turns() {
    [[ -n ${turn_wall[$1]:-} ]] || return 0
    printf ', taking turns: %.3f s / %.2f s CPU (decode %.3f s / %.2f s)' \
        "${turn_wall[$1]}" "${turn_cpu[$1]}" "${turn_wall[decode]}" "${turn_cpu[decode]}"
}
