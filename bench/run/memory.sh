# shellcheck shell=bash disable=SC2034,SC2154
# Issues 20 and 26: the peak memory of every tool on one conversation
# whose first user text is 50 MB (bigmsg), and of agy-render on the
# other large things a conversation can hold (bigcase), each against the
# longest line (row or message) that tool reads or writes: a tool streams
# what it reads, so its memory is bounded by twice that line, whatever
# the size of the conversation. memory_measure fills bm_rss and bm_line,
# memory_report prints the two tables. Sourced by bench/run.sh.

bm=$scratch/bigmsg
declare -A bm_rss bm_line
# bigmsg_rss KEY CMD [PREPARE]
bigmsg_rss() {
    say "peak memory $1: $2"
    bm_rss[$1]=$(peak_rss "$2" "${3:-true}") || bm_rss[$1]=failed
}

# memory_measure: every tool built, on bigmsg and on each bigcase.
memory_measure() {
    if have_tool agy-dump && have_tool agy-decode; then
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
        # Reading the store itself: its row is never a line, but the line
        # the pipeline would carry is the bound all the same.
        bigmsg_rss decode_store "'$decode' '$bigmsg' > /dev/null"
        bm_line[decode_store]=$max_line
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
    if have_tool agy-render; then
        for case in call_input unknown_block edit edit_rewrite system; do
            bigcase "$case"
            line=$(longest "$bm.$case.ndjson")
            bigmsg_rss "render_$case" "'$render' < '$bm.$case.ndjson' > /dev/null"
            bm_line[render_$case]=$line
            bigmsg_rss "render_md_$case" "'$render' --format markdown < '$bm.$case.ndjson' > /dev/null"
            bm_line[render_md_$case]=$line
        done
    fi
}

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

# bm_row KEY CMD: the row of KEY, measured as CMD, if it was.
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

# memory_report: the two tables, of the rows measured.
memory_report() {
    echo "## Peak memory with one 50 MB user text (issue 20)"
    echo
    if [[ -n ${rows_line:-} ]]; then
        echo "The conversation \`gen-store --steps 3 --first-prompt-bytes 50000000 --seed 4\`: its longest row line is"
        echo "$(kib_mib $((rows_line / 1024))) MiB, its longest message line $(kib_mib $((msgs_line / 1024))) MiB. The bound is twice the longest line a tool reads or writes."
        echo "\`edited\` is the message stream with the big text's first words changed, so that --onto re-encodes its row."
        echo
        echo "| tool | command | peak RSS | longest line handled | ratio | target | met? |"
        echo "| --- | --- | ---: | ---: | ---: | --- | --- |"
        bm_row dump "agy-dump BIGMSG"
        bm_row decode "agy-decode < rows"
        bm_row anthropic "agy-decode --format anthropic < rows"
        bm_row decode_store "agy-decode BIGMSG"
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
}
