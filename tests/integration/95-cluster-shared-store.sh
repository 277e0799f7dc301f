#!/bin/bash
# A layer store on GlusterFS (two bricks, served over loopback, mounted with its FUSE
# client): node A writes layers into it; node B, with a read-only view and its own root,
# starts sandboxes straight from it. Only the blocks a sandbox reads cross the volume
# (the bricks' own counters), nothing is copied to node B first, and node B writes
# nothing to the volume.
. "$(dirname "$0")/cluster-lib.sh"

gluster_up shared 2
gluster_mount shared "$T/nodeA"
gluster_mount shared "$T/nodeB" ro

# A large layer: a busybox base and 64 files of 1 MiB that do not compress.
make_data_tree "$T/tree" 64
rec=$(DSEC_STORE=$T/nodeA/layers dsec-layer build "$T/tree" --name big --compress none) || fail "build on the volume"
size=$(jq -r .size <<<"$rec")
hex=$(jq -r .digest <<<"$rec" | cut -c8-)
[ "$size" -gt $((64 << 20)) ] || fail "image is only $size bytes"
[ -n "$(find "$T/bricks" -name "$hex.erofs" -size +1M)" ] || fail "the image is not on a brick"

# Node B: read-only view of the store, its own root; its run dir is lib.sh's tmpfs.
export DSEC_STORE=$T/nodeB/layers DSEC_ROOT=$T/rootB
touch "$DSEC_STORE/probe" 2>/dev/null && fail "node B's view of the store is writable"
listing() { (cd "$T/nodeA" && find . -printf '%p %s %T@\n' | sort); }
before_list=$(listing)
read0=$(gluster_bytes shared read) written0=$(gluster_bytes shared written) rchar0=$(gluster_client_rchar "$T/nodeB")

dsec-run create --layers big --id s > /dev/null || fail "create from the shared store"
on_exit "dsec-run destroy --force s > /dev/null"
for f in f07 f32 f60; do
    [ "$(dsec-run exec s -- cat /data/$f | sha256sum)" = "$(sha256sum < "$T/tree/data/$f")" ] || fail "reading /data/$f"
done
dsec-run exec s -- sh -c 'echo hi > /data/new && cat /data/new' | grep -qx hi || fail "writing in the sandbox"

read=$(( $(gluster_bytes shared read) - read0 ))
written=$(( $(gluster_bytes shared written) - written0 ))
rchar=$(( $(gluster_client_rchar "$T/nodeB") - rchar0 ))
echo "cluster: a sandbox reading 3 MiB of a $size-byte layer on GlusterFS: the bricks served $read bytes" \
     "($(( read * 100 / size ))% of the image), node B's FUSE client read $rchar bytes; node B wrote $written bytes"
[ "$read" -gt $((3 << 20)) ] || fail "the volume served $read bytes, less than the sandbox read: counters wrong?"
[ "$read" -lt $((size / 4)) ] || fail "the volume served $read bytes of a $size-byte image: copied, not read on demand"
[ "$written" = 0 ] || fail "node B wrote $written bytes to the volume"

# Mounted from the volume itself (file-backed or through a loop device), not from a copy.
src=$(dsec-mount ls | jq -r --arg h "$hex" 'select(.digest == "sha256:" + $h) | .image')
echo "cluster: node B mounts the layer from $src"
case "$src" in
    "$DSEC_STORE/$hex.erofs") ;;
    /dev/loop*) losetup -nO BACK-FILE "$src" | grep -qx "$DSEC_STORE/$hex.erofs" || fail "loop device backs $(losetup -nO BACK-FILE "$src")" ;;
    *) fail "layer mounted from \"$src\"" ;;
esac
used=$(du -sxm "$DSEC_ROOT" "$DSEC_RUN" | awk '{ s += $1 } END { print s }')
[ "$used" -lt 8 ] || fail "node B holds $used MiB locally: the image was copied"

dsec-run destroy s > /dev/null
dsec-mount release > /dev/null
[ "$(dsec-mount ls | wc -l)" = 0 ] || fail "layers still mounted: $(dsec-mount ls)"
[ "$(losetup -a | grep -c "$hex" || true)" = 0 ] || fail "a loop device still holds the image"
[ "$(listing)" = "$before_list" ] || fail "the shared store changed while node B used it"
# A writer's command on node B fails cleanly and leaves the store alone.
out=$(dsec-layer tag big other 2>/dev/null) && fail "tag through a read-only view succeeded"
jq -e '.type == "error"' <<<"$out" > /dev/null || fail "no error record: $out"
[ "$(listing)" = "$before_list" ] || fail "a refused write changed the store"
echo ok
