#!/bin/bash
# A full disk during a build: a clear no_space error, nothing half-written in the store,
# and the store still works once there is room.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
mkdir -p "$T/small"
mount -t tmpfs -o size=700k dsec-test-small "$T/small"
export DSEC_ROOT="$T/small/root"
out=$(dsec-layer build "$T/tree" --name base --compress none 2>/dev/null) && fail "build on a full disk succeeded"
jq -e '.type == "error" and .code == "no_space"' <<<"$out" >/dev/null || fail "unclear error: $out"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "staging left behind"
[ -z "$(ls "$DSEC_ROOT/layers/names")" ] || fail "name written for a failed build"
[ "$(find "$DSEC_ROOT/layers" -maxdepth 1 -type f | grep -vc '/\.lock$')" = 0 ] || fail "files left in the store"
mount -o remount,size=16m "$T/small"
dsec-layer build "$T/tree" --name base --compress none | jq -e '.type == "layer"' >/dev/null || fail "build after freeing space"
dsec-layer verify base | jq -e '.ok' >/dev/null || fail "verify"
echo ok
