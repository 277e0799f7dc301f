#!/bin/bash
# Crashes and bad input: dsec-run killed with SIGKILL in the middle of a batch create
# and of a one-shot run, half-made sandboxes (truncated state, partial cgroups, no upper, no init), rootfs
# records whose layers are not mounted. destroy always finishes the job.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null

# A rootfs whose layers are not mounted, and a record of the wrong type: clear errors.
out=$(dsec-run create < "$DATA/run/rootfs-not-mounted.jsonl" || true)
echo "$out" | jq -e 'select(.type == "error") | .code == "not_mounted"' > /dev/null || fail "not mounted: $out"
[ -z "$(ls "$DSEC_RUN/sandboxes")" ] || fail "a failed create left state"
expect_exit 1 dsec-run create < "$DATA/run/not-a-rootfs.jsonl"

# SIGKILL in the middle of a batch create.
dsec-layer ls base | dsec-mount --count 30 > "$T/rootfs.jsonl"
dsec-run create -P 4 < "$T/rootfs.jsonl" > /dev/null &
pid=$!
sleep 0.15
kill -9 $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
# Every rootfs id is destroyable, whether its sandbox was made, half made or never begun.
dsec-run destroy -P 4 --force < "$T/rootfs.jsonl" | jq -se 'length == 30 and all(.state == "destroyed" or .state == "absent")' > /dev/null \
    || fail "destroy after a killed create"

# Half-made by hand: a truncated state file, a lone cgroup, no upper, no init.
mkdir -p "$DSEC_RUN/sandboxes/half"
cp "$DATA/run/state-truncated.json" "$DSEC_RUN/sandboxes/half/state.json"
for d in /sys/fs/cgroup/memory /sys/fs/cgroup/pids /sys/fs/cgroup; do
    [ -f "$d/cgroup.procs" ] && mkdir -p "$d/$DSEC_CGROUP_PARENT/half" && break
done
dsec-run ls | jq -se 'map(select(.id == "half")) | .[0].state == "broken"' > /dev/null || fail "ls of a broken state"
dsec-run destroy half | jq -e '.state == "destroyed"' > /dev/null || fail "destroy of a half-made sandbox"

# A sandbox whose init died: exec says so, destroy cleans up.
dsec-run create --layers base --id orphan > /dev/null
kill -9 "$(jq -r .pid "$DSEC_RUN/sandboxes/orphan/state.json")"
sleep 0.1
expect_exit 1 dsec-run exec orphan -- true
dsec-run destroy orphan > /dev/null

# dsec-run run killed by SIGKILL (a harness's hard timeout): its command does not run on
# unread (the one-shot's init dies with it), and gc destroys what is left.
dsec-run run --layers base -- sleep 3017 &
pid=$!
for _ in $(seq 100); do pgrep -f '^sleep 3017$' > /dev/null && break; sleep 0.05; done
pgrep -f '^sleep 3017$' > /dev/null || fail "the one-shot's command did not start"
kill -9 $pid
wait $pid 2>/dev/null || true
for _ in $(seq 50); do pgrep -f '^sleep 3017$' > /dev/null || break; sleep 0.1; done
! pgrep -f '^sleep 3017$' > /dev/null || fail "a one-shot's command outlived its killed dsec-run"
dsec-run ls | jq -se 'length == 1 and .[0].state == "dead"' > /dev/null || fail "the killed one-shot: $(dsec-run ls)"
dsec-reclaim gc --grace 0s > /dev/null
[ -z "$(ls "$DSEC_RUN/sandboxes")" ] || fail "gc left the killed one-shot: $(ls "$DSEC_RUN/sandboxes")"

[ -z "$(ls "$DSEC_RUN/sandboxes")" ] || fail "state left: $(ls "$DSEC_RUN/sandboxes")"
[ -z "$(ls "$DSEC_ROOT/sandboxes" 2>/dev/null)" ] || fail "uppers left: $(ls "$DSEC_ROOT/sandboxes")"
for id in half orphan $(jq -r .id "$T/rootfs.jsonl"); do
    for d in /sys/fs/cgroup/*/$DSEC_CGROUP_PARENT/$id /sys/fs/cgroup/$DSEC_CGROUP_PARENT/$id; do [ ! -d "$d" ] || fail "cgroup left: $d"; done
done
echo ok
