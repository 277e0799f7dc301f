#!/bin/bash
# A node that only reads a shared store: ls, inspect, verify work on a read-only store;
# writes fail with a clear error and leave the store as it was.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
d=$(dsec-layer build "$T/tree" --name base | jq -r .digest)
mount --bind -o ro "$DSEC_ROOT/layers" "$DSEC_ROOT/layers"
mount -o remount,bind,ro "$DSEC_ROOT/layers"
touch "$DSEC_ROOT/layers/x" 2>/dev/null && fail "store is not read-only"

[ "$(dsec-layer ls base | jq -r .digest)" = "$d" ] || fail "ls on a read-only store"
dsec-layer inspect base | jq -e '.names == ["base"]' >/dev/null || fail "inspect"
dsec-layer verify base | jq -e '.ok' >/dev/null || fail "verify"

out=$(dsec-layer build "$T/tree" --name other 2>/dev/null) && fail "build on a read-only store succeeded"
jq -e '.type == "error" and .code == "read_only"' <<<"$out" >/dev/null || fail "unclear error: $out"
out=$(dsec-layer tag base other 2>/dev/null) && fail "tag on a read-only store succeeded"
jq -e '.type == "error"' <<<"$out" >/dev/null || fail "no error record: $out"
umount "$DSEC_ROOT/layers"
[ "$(dsec-layer ls | wc -l)" = 1 ] || fail "store changed"
echo ok
