#!/bin/bash
# Imports at the same time give one intact layer; an import killed (SIGKILL) at any
# point leaves no visible layer, and gc removes its staging leftovers.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/src"
for i in $(seq 1 30); do head -c 1000000 /dev/urandom > "$T/src/f$i"; done
make_busybox_tree "$T/src/root"
tar -C "$T/src" -czf "$T/a.tar.gz" .

for i in 1 2 3; do dsec-layer import "$T/a.tar.gz" --name "same$i" > "$T/par$i" & done
wait
d=$(cat "$T"/par? | jq -r .digest | sort -u)
[ "$(wc -l <<<"$d")" = 1 ] || fail "parallel imports disagree: $d"
[ "$(ls "$DSEC_ROOT/layers" | grep -c '\.erofs$')" = 1 ] || fail "duplicate images"
dsec-layer verify | jq -e .ok >/dev/null || fail "store damaged by parallel imports"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "staging left by finished imports"

# Kill imports at several points: while extracting, while mkfs.erofs runs, near the end.
for delay in 0.05 0.1 0.2 0.3 0.5; do
    dsec-layer import "$T/a.tar.gz" --name killed >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if dsec-layer ls killed >/dev/null 2>&1; then
        dsec-layer verify killed | jq -e .ok >/dev/null || fail "a killed import left a broken layer"
        # It finished before the kill: same content as the others, so drop only its name.
        dsec-layer rm --name-only killed >/dev/null
    fi
    [ "$(dsec-layer ls | wc -l)" = 1 ] || fail "partial layer visible after a kill at $delay s"
done
# mkfs.erofs may outlive its killed parent for a moment: let it finish.
while pgrep -f "mkfs.erofs.*$DSEC_ROOT" >/dev/null; do sleep 0.1; done
dsec-layer gc > "$T/gc.out"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "staging left after gc: $(ls "$DSEC_ROOT/layers/tmp")"
dsec-layer verify | jq -e .ok >/dev/null || fail "store damaged"
echo ok
