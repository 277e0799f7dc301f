#!/bin/bash
# dsec-layer export: a deterministic zstd tar stream of a layer's tree; importing it into
# another store gives the same digest, whiteouts and opaque directories included.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/src"
mkdir -p "$T/src/home/u" "$T/src/opaque"
echo hi > "$T/src/home/u/f"
ln "$T/src/home/u/f" "$T/src/home/u/hard"
chown -R 1000:1000 "$T/src/home/u"
touch "$T/src/.wh.gone" "$T/src/opaque/.wh..wh..opq"
tar -C "$T/src" -cf "$T/src.tar" .
d=$(dsec-layer import "$T/src.tar" --oci-layer --name l | jq -r .digest)

dsec-layer export l > "$T/a.tar.zst"
rec=$(dsec-layer export l -o "$T/b.tar.zst" --level 3)
jq -e --arg d "$d" '.type == "export" and .digest == $d and .bytes > 0' <<<"$rec" >/dev/null || fail "export record: $rec"
cmp -s "$T/a.tar.zst" "$T/b.tar.zst" || fail "two exports differ"
zstd -t -q "$T/a.tar.zst" || fail "not a zstd stream"
listing=$(zstd -dc "$T/a.tar.zst" | tar -tv --numeric-owner)
grep -q '^c.* 0,0 .* gone$' <<<"$listing" || fail "whiteout not exported as a 0/0 device: $listing"
grep -q '^h.*home/u/hard link to home/u/f' <<<"$listing" || fail "hard link not kept"
grep -q ' 1000/1000 ' <<<"$listing" || fail "numeric owner lost"
[ "$(zstd -dc "$T/a.tar.zst" | tar -t | head -1)" = ./ ] || fail "root entry missing"
[ "$(zstd -dc "$T/a.tar.zst" | tar -t | tail -n +2)" = "$(zstd -dc "$T/a.tar.zst" | tar -t | tail -n +2 | LC_ALL=C sort)" ] ||
    fail "entries not sorted"

# Round trip: the export imported elsewhere is the same layer, bit for bit.
got=$(DSEC_ROOT="$T/other" dsec-layer import "$T/a.tar.zst" | jq -r .digest)
[ "$got" = "$d" ] || fail "round trip gives $got, want $d"
# Another level is another stream, same tree.
dsec-layer export l --level 19 -o "$T/c.tar.zst" >/dev/null
got=$(DSEC_ROOT="$T/third" dsec-layer import "$T/c.tar.zst" | jq -r .digest)
[ "$got" = "$d" ] || fail "level 19 round trip"

expect_exit 1 dsec-layer export nosuchlayer -o "$T/x.tar.zst" >/dev/null 2>&1
expect_exit 2 dsec-layer export l --level 99 -o "$T/x.tar.zst" >/dev/null 2>&1
[ ! -e "$T/x.tar.zst" ] && [ -z "$(ls "$T" | grep '\.tmp\.')" ] || fail "a failed export left a file"

# A failure while the stream goes to stdout is said on stderr only, never inside the stream.
img=$(dsec-layer inspect l | jq -r .image)
truncate -s 4096 "$img"
expect_exit 1 dsec-layer export l > "$T/bad.out" 2> "$T/bad.err"
! grep -q '"type":"error"' "$T/bad.out" || fail "an error record went into the tar stream"
grep -q 'dsec-layer: ' "$T/bad.err" || fail "no error on stderr: $(cat "$T/bad.err")"
echo ok
