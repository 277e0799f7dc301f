#!/bin/bash
# verify catches corruption; gc cleans up after killed builds and unnamed layers; two
# builds of the same tree at once give one intact layer.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
d=$(dsec-layer build "$T/tree" --name base | jq -r .digest)
dsec-layer verify base | jq -e '.ok == true' >/dev/null || fail "verify of a good layer"

# Corrupt a copy of the store's image in place: verify must say so and exit 1.
img="$DSEC_ROOT/layers/${d#sha256:}.erofs"
cp "$img" "$T/good.erofs"
chmod u+w "$img"
printf 'XXXX' | dd of="$img" bs=1 seek=2000 conv=notrunc 2>/dev/null
out=$(dsec-layer verify base 2>/dev/null) && fail "corruption not noticed"
jq -e '.ok == false and (.error | test("digest mismatch"))' <<<"$out" >/dev/null || fail "verify record: $out"
cp "$T/good.erofs" "$img"

# Two builds of the same content at once: one layer, intact.
for i in 1 2 3; do dsec-layer build "$T/tree" --name "same$i" > "$T/par$i" & done
wait
[ "$(cat "$T"/par? | jq -r .digest | sort -u)" = "$d" ] || fail "parallel builds disagree"
[ "$(ls "$DSEC_ROOT/layers" | grep -c '\.erofs$')" = 1 ] || fail "duplicate images"
dsec-layer verify | jq -e '.ok' >/dev/null || fail "store damaged by parallel builds"

# A build killed half-way leaves no visible layer; gc removes its staging leftovers.
big="$T/big"
mkdir -p "$big"
for i in $(seq 1 40); do head -c 2000000 /dev/urandom > "$big/f$i"; done
for delay in 0.02 0.1 0.3; do
    dsec-layer build "$big" --name big --compress lz4hc >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if dsec-layer ls big >/dev/null 2>&1; then
        dsec-layer verify big | jq -e '.ok' >/dev/null || fail "a killed build left a broken layer"
        dsec-layer rm big >/dev/null
    fi
    [ "$(dsec-layer ls | wc -l)" = 1 ] || fail "partial layer visible after kill at $delay"
done
dsec-layer gc > "$T/gc.out"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "staging left after gc"

# A staging directory held by a live build is not touched.
mkdir "$DSEC_ROOT/layers/tmp/build-held"
exec 9<"$DSEC_ROOT/layers/tmp/build-held"
flock -x 9
dsec-layer gc >/dev/null
[ -d "$DSEC_ROOT/layers/tmp/build-held" ] || fail "gc removed a live build's staging"
exec 9<&-
dsec-layer gc | jq -e 'select(.kind == "staging")' >/dev/null || fail "gc missed a dead staging dir"

# Unnamed layers go; named ones and their parents stay; dangling names go.
dsec-layer build "$T/tree" --name tmp1 --compress none >/dev/null
dsec-layer rm --name-only tmp1 >/dev/null
dsec-layer gc --dry-run | jq -e 'select(.kind == "unnamed_layer")' >/dev/null || fail "dry run misses unnamed layer"
[ "$(dsec-layer ls | wc -l)" = 2 ] || fail "dry run removed something"
dsec-layer gc >/dev/null
[ "$(dsec-layer ls | wc -l)" = 1 ] || fail "unnamed layer kept"
dsec-layer verify base | jq -e '.ok' >/dev/null || fail "gc damaged a named layer"
echo "sha256:$(printf '0%.0s' $(seq 64))" > "$DSEC_ROOT/layers/names/ghost"
dsec-layer gc | jq -e 'select(.kind == "dangling_name")' >/dev/null || fail "dangling name kept"
echo ok
