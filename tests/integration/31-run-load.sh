#!/bin/bash
# Load: 50 sandboxes from one layer at -P 8, a batch exec in each, destroy all, and then
# nothing is left: no mounts, no cgroups under dsec/, no processes, no state, no uppers.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
# The layer's mount and the staged dsec-init's are expected on first use; sandboxes add none.
dsec-run destroy "$(dsec-run create --layers base | jq -r .id)" > /dev/null
mounts_before=$(wc -l < /proc/self/mounts)

n=50
dsec-layer ls base | dsec-mount --count $n | dsec-run create -P 8 --memory 64M > "$T/sandboxes.jsonl"
jq -se "length == $n and all(.type == \"sandbox\" and .state == \"running\")" "$T/sandboxes.jsonl" > /dev/null \
    || fail "create -P 8: $(grep -v '"sandbox"' "$T/sandboxes.jsonl" | head -3)"
[ "$(wc -l < "$T/sandboxes.jsonl")" = $n ] || fail "expected $n sandboxes"
[ "$(wc -l < /proc/self/mounts)" = "$mounts_before" ] || fail "host mount table grew"

dsec-run exec -P 8 --json -- sh -c 'echo $(hostname)' < "$T/sandboxes.jsonl" > "$T/results.jsonl"
[ "$(jq -s 'map(select(.type == "result" and .exit_code == 0 and .stdout == .id + "\n")) | length' "$T/results.jsonl")" = $n ] \
    || fail "batch exec: $(head -3 "$T/results.jsonl")"

dsec-run destroy -P 8 < "$T/sandboxes.jsonl" | jq -se "length == $n and all(.state == \"destroyed\")" > /dev/null \
    || fail "destroy all"
[ -z "$(ls "$DSEC_RUN/sandboxes")" ] || fail "state left: $(ls "$DSEC_RUN/sandboxes" | head)"
[ -z "$(ls "$DSEC_ROOT/sandboxes" 2>/dev/null)" ] || fail "uppers left"
[ "$(wc -l < /proc/self/mounts)" = "$mounts_before" ] || fail "mounts left"
# Only this test's sandboxes: other runs may share the host's cgroup tree.
for id in $(jq -r .id "$T/sandboxes.jsonl"); do
    for d in /sys/fs/cgroup/*/$DSEC_CGROUP_PARENT/$id /sys/fs/cgroup/$DSEC_CGROUP_PARENT/$id; do [ ! -d "$d" ] || fail "cgroup left: $d"; done
done
pgrep -f "dsec-init $DSEC_RUN" > /dev/null && fail "init processes left"
echo ok
