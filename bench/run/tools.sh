# shellcheck shell=bash disable=SC2034,SC2154
# The table of issue 5: each of our tools on the data a user has (big.db,
# ROOT2000 at both page sizes, 1k/50k/1-step dbs), beside the alternative
# a user has today (sqlite3, cat, the issue's txcript figures), with the
# target the issue sets and whether it is met; agy-encode and agy-render
# are held to agy-decode on the rounds of turns.sh. tools_measure fills
# wall/rss_max/rss_list/status (measure.sh) and writes the pre-dumped
# big.rows.ndjson and big.messages.ndjson the later rows read;
# tools_report prints the "## Benchmark run" header and table. Sourced by
# bench/run.sh.

steps_sql="select idx, step_type, status, has_subtrajectory, hex(metadata), hex(error_details), hex(permissions), hex(task_details), hex(render_info), hex(step_payload), step_format from steps"

# tools_measure: every row of the table, measured.
tools_measure() {
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
        measure decode_big "'$decode' '$big' > /dev/null"
        measure store "'$dump' '$store' | '$decode' > /dev/null"
        measure decode_store "'$decode' '$store' > /dev/null"
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
}

# db_kb ROOT: the mean size of its dbs in KB, ROOT holding $store_n of them.
db_kb() { du -sk --apparent-size "$1/conversations" | awk -v n="$store_n" '{ printf "%.0f", $1 * 1.024 / n }'; }
# us SECONDS: as microseconds per step.
us() { awk -v t="$1" 'BEGIN { printf "%.2f us/step", t * 1e6 }'; }

# tools_report: the header of the run (date, commit, machine, data) and the table.
tools_report() {
    big_mb=$(awk -v b="$(stat -c %s "$big")" 'BEGIN { printf "%.0f", b / 1e6 }')
    big_steps=$(sqlite3 "$big" 'select count(*) from steps' 2>/dev/null || echo 52000)
    store_n=$(find "$store/conversations" -name '*.db' | wc -l)
    store_kb=$(db_kb "$store")
    store32_kb=$(db_kb "$store32")
    timer=$(have_cmd hyperfine && echo "hyperfine $(hyperfine --version | awk '{ print $2 }'), at least $runs runs and 3 s + 1 warm-up" || echo "date +%s%N, $runs runs + 1 warm-up")

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
    got decode_big && row "same, read in one process" "\`agy-decode big.db\`" "$(secs decode_big)" "$(mib decode_big)" "$(ratio "${wall[decode_big]}" 1.45) vs 1.45 s" "(information)" ""
    row "same (alternative)" "txcript, db to messages" "1.45 s (issue)" "746 MiB (issue)" "" "" "not installable here; issue's figure"

    # 3. 2,000 small dbs.
    if got store; then
        v=$(verdict "$(le "${wall[store]}" 1.0)")
        row "2,000 small dbs to chat messages" "\`agy-dump ROOT2000 \| agy-decode\`" "$(secs store)" "$(mib_stages store)" "$(ratio "${wall[store]}" 1.9) vs 1.9 s" "< 1 s" "$v"
    else
        row "2,000 small dbs to chat messages" "\`agy-dump ROOT2000 \| agy-decode\`" "$(missing store agy-dump agy-decode)" "" "" "< 1 s" ""
    fi
    got decode_store && row "same, read in one process" "\`agy-decode ROOT2000\`" "$(secs decode_store)" "$(mib decode_store)" "$(ratio "${wall[decode_store]}" 1.9) vs 1.9 s" "(information)" ""
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

    # 5. encode vs decode.
    if got encode && got decode; then
        # Judged on the turns when they ran, else on the separate medians.
        e=${turn_wall[encode]:-${wall[encode]}} d=${turn_wall[decode]:-${wall[decode]}}
        v=$(verdict "$(le "$e" "$d")")
        row "messages back to rows" "\`agy-encode < big.messages.ndjson\`" "$(secs encode)" "$(mib encode)" "$(ratio "$e" "$d") vs decode$(turns encode)" "<= 1.0x agy-decode" "$v"
    else
        row "messages back to rows" "\`agy-encode < big.messages.ndjson\`" "$(missing encode agy-encode agy-decode agy-dump)" "" "" "<= 1.0x agy-decode" ""
    fi
    sample_row encode "<= 1.0x agy-decode" 1.0
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
        v=$(verdict "$(le "$r" "$(awk -v a="$d" 'BEGIN { print a * 0.8 }')")")
        row "messages to one HTML page" "\`agy-render < big.messages.ndjson\`" "$(secs render)" "$(mib render)" "$(ratio "$r" "$d") vs decode$(turns render)" "<= 0.8x agy-decode" "$v"
    else
        row "messages to one HTML page" "\`agy-render < big.messages.ndjson\`" "$(missing render agy-render agy-decode agy-dump)" "" "" "<= 0.8x agy-decode" ""
    fi
    sample_row render "<= 0.8x agy-decode" 0.8
    if got render_out; then
        row "same, into a page file and index" "\`agy-render --out SITE < big.messages.ndjson\`" "$(secs render_out)" "$(mib render_out)" "" "(information)" ""
    fi

    # 6. linearity.
    lin_cmd="agy-dump N.db \\| agy-decode"
    have_tool agy-decode || lin_cmd="agy-dump N.db"
    if got lin1k && got lin50k; then
        per1k=$(awk -v t="${wall[lin1k]}" 'BEGIN { print t / 1000 }')
        per50k=$(awk -v t="${wall[lin50k]}" 'BEGIN { print t / 50000 }')
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
}
