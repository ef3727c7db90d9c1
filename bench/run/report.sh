# shellcheck shell=bash disable=SC2034,SC2154
# How bench/run.sh writes its report: the cells of a table (seconds,
# MiB, MiB per stage of a pipeline, a ratio, "met" or "missed") and a
# row of the issue-5 table, or why it has no number. The report is
# markdown on stdout, ready for bench/RESULTS.md; each part prints its own
# tables with these. Sourced by bench/run.sh.

# secs KEY, mib KEY: KEY's median wall time, its peak RSS (the largest of
# its stages'); nothing when it was not measured.
secs() { [[ ${status[$1]:-} == ok ]] && awk -v t="${wall[$1]}" 'BEGIN { printf "%.3f s", t }' || true; }
mib() { [[ ${status[$1]:-} == ok ]] && awk -v k="${rss_max[$1]}" 'BEGIN { printf "%.1f MiB", k / 1024 }' || true; }
# Peak RSS of every stage, for pipelines.
mib_stages() {
    [[ ${status[$1]:-} == ok ]] || return 0
    stages_mib "${rss_list[$1]}"
}
# ratio A B: A / B as "0.00x".
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
# verdict OK: "met" or "missed".
verdict() { if [[ $1 == 1 ]]; then echo met; else echo missed; fi; }
# le A B: 1 when A <= B, else 0.
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

# kib_mib KIB: in MiB, one decimal.
kib_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# stages_mib "KIB...": each stage's in MiB, "a/b MiB".
stages_mib() {
    local k out=()
    for k in $1; do out+=("$(kib_mib "$k")"); done
    (
        IFS=/
        echo "${out[*]} MiB"
    )
}
