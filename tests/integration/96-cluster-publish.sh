#!/bin/bash
# dsec-layer publish into a store on GlusterFS: two nodes (each its own local store)
# publishing the same layer at once end with one layer; a third node, read-only,
# watching the store during a publish sees a whole layer or none, and starts a
# sandbox from it; a publish killed midway leaves nothing a reader can see, and gc
# clears its staging.
. "$(dirname "$0")/cluster-lib.sh"

gluster_up shared 2
gluster_mount shared "$T/nodeA"
gluster_mount shared "$T/nodeB"
gluster_mount shared "$T/nodeC" ro
mkdir "$T/nodeA/layers"
node() {  # node A|B CMD...: the command with that node's local store
    local n=$1; shift
    DSEC_STORE=$T/root$n/layers DSEC_ROOT=$T/root$n "$@"
}
reader() { DSEC_STORE=$T/nodeC/layers DSEC_ROOT=$T/rootC "$@"; }

# The same tree built on two nodes gives the same digest; both publish it at once.
make_busybox_tree "$T/tree"
da=$(node A dsec-layer build "$T/tree" --name base | jq -r .digest)
db=$(node B dsec-layer build "$T/tree" --name base | jq -r .digest)
[ "$da" = "$db" ] || fail "builds differ: $da $db"
node A dsec-layer publish base --to "$T/nodeA/layers" > "$T/pa" & pa=$!
node B dsec-layer publish base --to "$T/nodeB/layers" > "$T/pb" & pb=$!
wait $pa || fail "publish on node A"
wait $pb || fail "publish on node B"
jq -e --arg d "$da" '.type == "layer" and .digest == $d and .name == "base"' "$T/pa" "$T/pb" > /dev/null ||
    fail "publish records: $(cat "$T/pa" "$T/pb")"
[ "$(reader dsec-layer ls | wc -l)" = 1 ] || fail "two publishes of one layer left $(reader dsec-layer ls | wc -l) layers"
# (A rename on a distributed volume may leave a DHT link file, mode 01000 and empty,
# on the brick of the old name: a pointer, not a copy.)
[ "$(find "$T/bricks" -name '*.erofs' ! -perm -1000 | wc -l)" = 1 ] ||
    fail "images on the bricks: $(find "$T/bricks" -name '*.erofs' -printf '%p %s %m\n')"
[ -z "$(ls -A "$T/nodeA/layers/tmp")" ] || fail "staging left: $(ls -A "$T/nodeA/layers/tmp")"
# Again: nothing copied.
node A dsec-layer publish base --to "$T/nodeA/layers" | jq -e '.copied == false' > /dev/null || fail "republished"

# Node C starts a sandbox from the published layer, through its read-only view.
reader dsec-run create --layers base --id c > /dev/null || fail "create from the published layer"
on_exit "DSEC_STORE=$T/nodeC/layers DSEC_ROOT=$T/rootC dsec-run destroy --force c > /dev/null"
[ "$(reader dsec-run exec c -- cat /etc/group)" = "root:x:0:" ] || fail "reading the published layer"

# A new version published under the same name while node C runs the old one: the
# running sandbox keeps its files, the next one gets the new version.
echo v2 > "$T/tree/version"
node A dsec-layer build "$T/tree" --name base > /dev/null
node A dsec-layer publish base --to "$T/nodeA/layers" | jq -e '.copied' > /dev/null || fail "publishing v2"
reader dsec-run exec c -- test ! -e /version || fail "the running sandbox saw the new version"
[ "$(reader dsec-run exec c -- cat /etc/group)" = "root:x:0:" ] || fail "the running sandbox lost its layer"
# Node C sees the name move once its FUSE client's metadata cache lets go of the old entry.
start=$(date +%s%N)
for _ in $(seq 50); do
    [ "$(reader dsec-layer ls base | jq -r .digest)" = "$(node A dsec-layer ls base | jq -r .digest)" ] && break
    sleep 0.2
done
echo "cluster: node C saw the name move after $(( ($(date +%s%N) - start) / 1000000 )) ms"
[ "$(reader dsec-run run --layers base -- cat /version)" = v2 ] || fail "a new sandbox did not get v2"
reader dsec-run destroy c > /dev/null
reader dsec-mount release > /dev/null

# A larger layer published while node C watches: every look finds no layer, or the
# whole image with its metadata.
mkdir -p "$T/big/data"
for i in $(seq 16); do head -c 2M /dev/urandom > "$T/big/data/f$i"; done
node A dsec-layer build "$T/big" --name big --compress none > /dev/null
size=$(node A dsec-layer ls big | jq -r .size)
watch() {
    local seen=0 rec img
    while [ ! -e "$T/done" ]; do
        rec=$(reader dsec-layer ls big 2>/dev/null) || continue
        img=$(jq -r .image <<<"$rec")
        [ "$(stat -c %s "$img")" = "$(jq -r .size <<<"$rec")" ] || { echo "partial: $rec" >&2; return 1; }
        seen=$((seen + 1))
    done
    echo "$seen"
}
watch > "$T/seen" & watcher=$!
start=$(date +%s%N)
node A dsec-layer publish big --to "$T/nodeA/layers" > /dev/null || fail "publishing big"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
sleep 0.3
touch "$T/done"
wait $watcher || fail "a reader saw a partial layer"
echo "cluster: published $size bytes to GlusterFS in $ms ms; the reader saw the complete layer $(cat "$T/seen") times"
reader dsec-layer verify big | jq -e .ok > /dev/null || fail "the published image does not verify"

# A publish killed midway: no layer a reader can see, or a complete one; gc clears the rest.
mkdir -p "$T/big2/data" && cp "$T/big/data/"* "$T/big2/data/" && echo 2 > "$T/big2/v"
node A dsec-layer build "$T/big2" --name big2 --compress none > /dev/null
DSEC_STORE=$T/rootA/layers dsec-layer publish big2 --to "$T/nodeA/layers" > /dev/null 2>&1 & victim=$!
sleep 0.5
kill -KILL $victim 2>/dev/null || true
wait $victim 2>/dev/null || true
if rec=$(reader dsec-layer ls big2 2>/dev/null); then
    echo "cluster: the publish finished before the kill"
    reader dsec-layer verify big2 | jq -e .ok > /dev/null || fail "a killed publish left a bad layer: $rec"
fi
DSEC_STORE=$T/nodeA/layers dsec-layer gc > /dev/null || fail "gc of the shared store"
[ -z "$(ls -A "$T/nodeA/layers/tmp")" ] || fail "gc left staging: $(ls -A "$T/nodeA/layers/tmp")"
node A dsec-layer publish big2 --to "$T/nodeA/layers" > /dev/null || fail "publishing again after the kill"
reader dsec-layer verify big2 | jq -e .ok > /dev/null || fail "big2 after the second publish"
# base (v2), big and big2: gc took base v1, unnamed since v2 took its name.
[ "$(reader dsec-layer ls | wc -l)" = 3 ] || fail "layers in the shared store: $(reader dsec-layer ls -q)"
echo ok
