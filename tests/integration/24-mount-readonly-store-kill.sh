#!/bin/bash
# A store on a read-only filesystem still mounts (dsec-mount writes only below $DSEC_RUN
# and $DSEC_ROOT/sandboxes); a kill at any point leaves complete layer mounts or none.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/task/work" && echo t > "$T/task/work/t"
base=$(dsec-layer build "$T/base" --name base | jq -r .digest)
dsec-layer build "$T/task" --name task >/dev/null

# The store itself made read-only in place (a read-only bind of itself).
mount --bind "$DSEC_ROOT/layers" "$DSEC_ROOT/layers"
mount -o remount,bind,ro "$DSEC_ROOT/layers"
touch "$DSEC_ROOT/layers/probe" 2>/dev/null && fail "store is not read-only"
out=$(dsec-layer ls base task | dsec-mount --verify --count 2)
[ "$(wc -l <<<"$out")" = 2 ] || fail "no records from a read-only store"
[ "$(cat "$(head -1 <<<"$out" | jq -r '.lowerdirs[0]')/work/t")" = t ] || fail "content"
dsec-mount release >/dev/null

# The store elsewhere (--store / DSEC_STORE), read-only, with the root holding only uppers.
mkdir -p "$T/shared"
mount --bind "$DSEC_ROOT/layers" "$T/shared"
mount -o remount,bind,ro "$T/shared"
out=$(DSEC_STORE=$T/shared DSEC_ROOT=$T/root2 dsec-mount base task)
[ "$(jq -r .upper <<<"$out")" = "$T/root2/sandboxes/$(jq -r .id <<<"$out")/upper" ] || fail "upper not under root"
grep -q " - erofs $T/shared/${base#sha256:}.erofs " /proc/self/mountinfo || fail "not mounted from --store"
[ ! -e "$T/root2/layers" ] || fail "a store was created under the root"
dsec-mount release >/dev/null

# SIGTERM in the middle of a large batch: exit 130 with an interrupted error record.
# (Its uppers go to a tmpfs: thousands of directories are slow to remove from a disk.)
mkdir -p "$T/batchroot" && mount -t tmpfs batch-root "$T/batchroot"
dsec-mount --root "$T/batchroot" --store "$DSEC_ROOT/layers" --count 1000000 base task \
    > "$T/batch.out" 2>/dev/null & pid=$!
sleep 0.5
kill -TERM $pid
rc=0; wait $pid || rc=$?
[ "$rc" = 130 ] || fail "interrupted batch exited $rc"
[ "$(tail -1 "$T/batch.out" | jq -r .code)" = interrupted ] || fail "no interrupted record: $(tail -1 "$T/batch.out")"
[ "$(wc -l < "$T/batch.out")" -gt 1 ] || fail "the batch was killed before its first record"
head -n -1 "$T/batch.out" | jq -e 'select(.type != "rootfs")' >/dev/null && fail "half a record written"
dsec-mount release >/dev/null

# SIGKILL at random points of first mounts: afterwards each layer is either a complete
# erofs mount or absent, and the next run mounts the rest.
for delay in 0 0.001 0.002 0.003 0.005 0.008 0.01 0.02; do
    dsec-mount release >/dev/null
    dsec-mount base task >/dev/null 2>&1 & pid=$!
    sleep $delay
    kill -KILL $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    for d in "$DSEC_RUN"/layers/*; do
        [ -e "$d" ] || continue
        if grep -q " $d " /proc/self/mountinfo; then
            grep -q " $d .* - erofs " /proc/self/mountinfo || fail "not an erofs mount at $d"
            ls "$d" >/dev/null || fail "unreadable mount at $d"
        else
            [ -z "$(ls -A "$d")" ] || fail "files in an unmounted mountpoint $d"
        fi
    done
    out=$(dsec-mount base task) || fail "run after a kill (delay $delay) failed"
    for l in $(jq -r '.lowerdirs[]' <<<"$out"); do
        [ "$(grep -c " $l " /proc/self/mountinfo)" = 1 ] || fail "after a kill: $l mounted $(grep -c " $l " /proc/self/mountinfo) times"
    done
done
echo ok
