#!/bin/sh
# Seeds every fuzz target's corpus (fuzz/corpus/TARGET/) from the sample
# store in examples/sample, through the tools themselves:
#   wire       every blob column of every row (step payloads, metadata), as bytes
#   record     every line agy-dump and agy-encode write
#   decode     each conversation's row stream (agy-dump, and agy-encode's,
#              plain and --generic)
#   encode     each conversation's message stream (agy-decode, plain and --all)
#   onto       each row stream, a NUL, then its messages: whole, with the last
#              message dropped, and with every "text" edited
#   pack       the row streams of decode
#   dump       the sample .db files
#   sqlite_file, decode_store
#              each sample .db after its length, and again in WAL mode with
#              its last steps written again into a -wal after it (python3's
#              sqlite3 makes it)
#   roundtrip  none: its input is the fuzzer's own encoding of a message
#              stream, which it builds from nothing
#   escape     every message line, as text to escape
#   scan, html_json
#              every message line escaped once: a JSON string body holding
#              JSON, as a brain transcript line is held
#   hex        every blob of wire
#   usage      the row streams of pack
#   side       agy's side files as agy lays them out (an indented map, the
#              metadata file, a compact one, a settings file), and every
#              blob of wire as a summaries file
# Seeds are named by their SHA-1, as libFuzzer names what it adds, so a
# rerun adds nothing twice. Needs jq and xxd. Usage: fuzz/seed.sh
set -eu
fuzz=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$fuzz")
sample=$repo/examples/sample
corpus=$fuzz/corpus

(cd "$repo" && nice -n 10 cargo build --quiet --bins)
bin=$repo/target/debug

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# put TARGET FILE: copies FILE into TARGET's corpus under its hash.
put() {
    mkdir -p "$corpus/$1"
    cp "$2" "$corpus/$1/$(sha1sum < "$2" | cut -c1-40)"
}

# put_lines TARGET FILE: each line of FILE as a seed of its own.
put_lines() {
    n=0
    while IFS= read -r line; do
        n=$((n + 1))
        printf '%s\n' "$line" > "$tmp/line"
        put "$1" "$tmp/line"
    done < "$2"
}

for db in "$sample"/conversations/*.db; do
    id=$(basename "$db" .db)
    put dump "$db"

    "$bin/agy-dump" --id "$id" "$sample" > "$tmp/$id.rows"
    "$bin/agy-decode" "$tmp/$id.rows" > "$tmp/$id.msgs"
    "$bin/agy-decode" --all "$tmp/$id.rows" > "$tmp/$id.all"
    "$bin/agy-encode" "$tmp/$id.msgs" > "$tmp/$id.enc"
    "$bin/agy-encode" --generic "$tmp/$id.msgs" > "$tmp/$id.gen"

    for rows in "$tmp/$id.rows" "$tmp/$id.enc" "$tmp/$id.gen"; do
        put decode "$rows"
        put pack "$rows"
        put usage "$rows"
        put_lines record "$rows"
    done
    put encode "$tmp/$id.msgs"
    put encode "$tmp/$id.all"
    put_lines escape "$tmp/$id.all"
    jq -R . "$tmp/$id.all" | sed 's/^"//; s/"$//' > "$tmp/$id.bodies"
    put_lines scan "$tmp/$id.bodies"
    put_lines html_json "$tmp/$id.bodies"

    # onto: original, NUL, messages (whole, last one dropped, texts edited).
    sed '$d' "$tmp/$id.all" > "$tmp/$id.short"
    jq -c 'if .content then (.content[] | select(.type == "text") | .text) |= . + " (edited)" else . end' \
        "$tmp/$id.all" > "$tmp/$id.edited"
    for msgs in "$tmp/$id.all" "$tmp/$id.short" "$tmp/$id.edited"; do
        { cat "$tmp/$id.rows"; printf '\0'; cat "$msgs"; } > "$tmp/onto"
        put onto "$tmp/onto"
    done

    # wire: every hex blob of every row, as bytes.
    jq -r 'select(.kind == "row") | .row[] | strings | select(test("^([0-9a-f]{2})+$"))' \
        "$tmp/$id.rows" | while IFS= read -r blob; do
        printf '%s' "$blob" | xxd -r -p > "$tmp/blob"
        put wire "$tmp/blob"
        put hex "$tmp/blob"
    done
done

# sqlite_file: the database's length (4 bytes, little-endian), the
# database, then its WAL.
for db in "$sample"/conversations/*.db; do
    python3 - "$db" "$tmp/sf" <<'PY'
import os, shutil, sqlite3, struct, sys
src, out = sys.argv[1], sys.argv[2]
def seed(name, db, wal=b""):
    with open(out + "." + name, "wb") as f:
        f.write(struct.pack("<I", len(db)) + db + wal)
seed("plain", open(src, "rb").read())
shutil.copy(src, out + ".db")
c = sqlite3.connect(out + ".db")
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
c.execute("UPDATE steps SET status = status WHERE idx >= (SELECT max(idx) - 2 FROM steps)")
c.commit()
seed("wal", open(out + ".db", "rb").read(), open(out + ".db-wal", "rb").read())
c.close()
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(out + ".db" + suffix):
        os.remove(out + ".db" + suffix)
PY
    for t in sqlite_file decode_store; do
        put $t "$tmp/sf.plain"
        put $t "$tmp/sf.wal"
    done
done
mkdir -p "$corpus/roundtrip"
printf '{\n  "/home/me/app": "c1",\n  "C:\\\\Users\\\\me": "c2"\n}' > "$tmp/side.last"
printf '{\n  "conversations": {\n    "c1": {\n      "is_internal": false\n    }\n  }\n}' > "$tmp/side.meta"
printf '{"a":1,"b":[true,null,{"c":"\\u003e"}]}' > "$tmp/side.compact"
printf '{\n  "trustedWorkspaces": [\n    "/home/me/app"\n  ]\n}\n' > "$tmp/side.settings"
for f in last meta compact settings; do put side "$tmp/side.$f"; done
for f in "$corpus"/wire/*; do put side "$f"; done

for dir in "$corpus"/*; do
    printf '%-10s %4d seeds %8d bytes\n' "$(basename "$dir")" \
        "$(find "$dir" -type f | wc -l)" "$(cat "$dir"/* 2>/dev/null | wc -c)"
done
