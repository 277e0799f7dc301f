#!/bin/bash
# dsec-layer build: reproducible digests, names, labels, listing order, inspect, tag, rm.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/a"
# The same tree copied elsewhere (owners, modes and mtimes kept), in another store.
cp -a "$T/a" "$T/b"

one=$(dsec-layer build "$T/a" --name base --label os=busybox --label tier=0)
two=$(dsec-layer --root "$T/other" build "$T/b" --name base)
d1=$(jq -r .digest <<<"$one")
d2=$(jq -r .digest <<<"$two")
[ "$d1" = "$d2" ] || fail "same tree, different digests: $d1 $d2"
# Files keep their mtimes in the image: another mtime is another layer.
touch -d 2001-01-01 "$T/b/etc/passwd"
d3=$(dsec-layer --root "$T/other" build "$T/b" --name retimed | jq -r .digest)
[ "$d3" != "$d1" ] || fail "an mtime changed and the digest did not"
[[ $d1 =~ ^sha256:[0-9a-f]{64}$ ]] || fail "bad digest $d1"
[ "$(jq -r .type <<<"$one")" = layer ] || fail "not a layer record"
[ "$(jq -r .v <<<"$one")" = 1 ] || fail "no version"
[ "$(jq -r .labels.os <<<"$one")" = busybox ] || fail "label lost"
[ "$(jq -r .files <<<"$one")" -gt 20 ] || fail "file count"
img=$(jq -r .image <<<"$one")
[ -f "$img" ] || fail "image missing"
[ "$(stat -c %s "$img")" = "$(jq -r .size <<<"$one")" ] || fail "size mismatch"
[ "sha256:$(sha256sum "$img" | cut -d' ' -f1)" = "$d1" ] || fail "digest is not the image's sha256"

# Compression choices give different images; an unknown one is a usage error.
none=$(dsec-layer build "$T/a" --name base-raw --compress none | jq -r .digest)
[ "$none" != "$d1" ] || fail "compression ignored"
expect_exit 2 dsec-layer build "$T/a" --name x --compress gzip
expect_exit 2 dsec-layer build "$T/a"
expect_exit 1 dsec-layer build "$T/a" --name ../evil
[ ! -e "$DSEC_ROOT/layers/names/../evil" ] || fail "name escaped"

# A second layer on top, then ls in the order asked (base first).
mkdir -p "$T/top/work" && echo hello > "$T/top/work/hello.txt"
dt=$(dsec-layer build "$T/top" --name task --label tier=1 | jq -r .digest)
[ "$(dsec-layer ls task base | jq -r .name | paste -sd,)" = "task,base" ] || fail "ls order"
[ "$(dsec-layer ls base task | jq -r .digest | paste -sd,)" = "$d1,$dt" ] || fail "ls digests"
[ "$(dsec-layer ls "${d1:7:12}" | jq -r .digest)" = "$d1" ] || fail "digest prefix"
[ "$(dsec-layer ls "$d1" | jq -r .name)" = base ] || fail "full digest"
[ "$(dsec-layer ls label=tier=1 | jq -r .name)" = task ] || fail "label select"
[ "$(dsec-layer ls | wc -l)" = 3 ] || fail "ls all"

# An unknown reference fails the whole listing and says which.
out=$(dsec-layer ls base nope 2>/dev/null) && fail "unknown ref accepted"
[ "$(jq -r .type <<<"$out")" = error ] || fail "no error record: $out"
[ "$(jq -r .code <<<"$out")" = not_found ] || fail "wrong code: $out"
[ "$(wc -l <<<"$out")" = 1 ] || fail "partial stack written"

# inspect shows all names; tag adds one; rm --name-only drops one.
dsec-layer tag base base-v1 >/dev/null
[ "$(dsec-layer inspect base | jq -c .names)" = '["base","base-v1"]' ] || fail "names"
dsec-layer rm --name-only base-v1 >/dev/null
[ "$(dsec-layer inspect base | jq -c .names)" = '["base"]' ] || fail "untag"

# rm NAME removes that name only while the layer has others (as podman rmi of a tag);
# ls shows every name; the layer goes with its last name.
dsec-layer tag task task-v2 >/dev/null
[ "$(dsec-layer ls task | jq -c .names)" = '["task","task-v2"]' ] || fail "ls names: $(dsec-layer ls task)"
rec=$(dsec-layer rm task)
jq -e '.type == "removed" and .layer_removed == false and .names_left == ["task-v2"]' <<<"$rec" >/dev/null ||
    fail "rm of one name: $rec"
[ -e "$DSEC_ROOT/layers/${dt#sha256:}.erofs" ] || fail "rm of one name removed the image"
expect_exit 1 dsec-layer inspect task
rec=$(dsec-layer rm task-v2)
jq -e '.layer_removed == true and .names_left == []' <<<"$rec" >/dev/null || fail "rm of the last name: $rec"
[ ! -e "$DSEC_ROOT/layers/${dt#sha256:}.erofs" ] || fail "image left"
# By digest, or with --all-names, the layer goes with all its names.
dsec-layer tag base b1 >/dev/null && dsec-layer tag base b2 >/dev/null
dsec-layer rm --all-names b1 | jq -e '.layer_removed' >/dev/null || fail "rm --all-names"
expect_exit 1 dsec-layer inspect b2
[ ! -e "$DSEC_ROOT/layers/${d1#sha256:}.erofs" ] || fail "image left after --all-names"
expect_exit 2 dsec-layer rm --all-names --name-only task 2>/dev/null

# Malformed CLI input: exit 2 with an error record.
out=$(dsec-layer ls --bogus 2>/dev/null) && fail "bad option accepted"
[ "$(jq -r .code <<<"$out")" = usage ] || fail "usage record"
echo ok
