#!/bin/bash
# dsec-run create --memcg shared: two sandboxes in the run directory's one memory cgroup
# (v1/hybrid: <parent>/.shared-memory in the memory hierarchy, the other hierarchies their
# own; v2: their groups nested in it), --memory refused with it, each one's memory figure
# its processes' Pss, a hog past a limit on the shared group killed inside the group,
# dsec-reclaim idle only freezing them, and the last destroy (or gc, for an orphan)
# removing the shared group.
. "$(dirname "$0")/lib.sh"
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

# Where the memory controller is: a v1 hierarchy of its own, else the unified tree.
memroot=$(awk '{for (i = 7; $i != "-"; i++); if ($(i+1) == "cgroup" && $(i+3) ~ /(^|,)memory(,|$)/) print $5}' /proc/self/mountinfo | head -1)
v2root=$(awk '{for (i = 7; $i != "-"; i++); if ($(i+1) == "cgroup2") print $5}' /proc/self/mountinfo | head -1)
if [ -n "$memroot" ]; then
    shared="$memroot/$DSEC_CGROUP_PARENT/.shared-memory"
    limit_file=memory.limit_in_bytes usage_file=memory.usage_in_bytes
    group_of() { echo "/sys/fs/cgroup/pids/$DSEC_CGROUP_PARENT/$1"; }
else
    [ -n "$v2root" ] || skip "no memory controller"
    shared="$v2root/$DSEC_CGROUP_PARENT/.shared-memory"
    limit_file=memory.max usage_file=memory.current
    group_of() { echo "$shared/$1"; }
fi
procs_of() { cat "$shared/cgroup.procs" 2> /dev/null; [ -n "$memroot" ] || cat "$shared"/*/cgroup.procs 2> /dev/null; }

make_busybox_tree "$T/tree"
make_holder "$T/tree"  # 24 MB of anonymous memory until killed
dsec-layer build "$T/tree" --name base > /dev/null

# A per-sandbox limit needs a memory cgroup of its own: a usage error, nothing made.
err=$(dsec-run create --layers base --id bad --memcg shared --memory 64M 2>&1 > /dev/null) && fail "--memory with --memcg shared was taken"
echo "$err" | grep -q -- "--memory" || fail "the refusal does not name --memory: $err"
[ ! -e "$DSEC_RUN/sandboxes/bad" ] || fail "a refused create left a state directory"
expect_exit 2 dsec-run create --layers base --memcg mine

# A one-shot sandbox in the shared group: the group goes with it.
[ "$(dsec-run run --layers base --memcg shared -- echo hi)" = hi ] || fail "run --memcg shared"
settle_teardowns || fail "teardowns left"
[ ! -e "$shared" ] || fail "the shared memory group outlived its only (one-shot) sandbox"

dsec-run create --layers base --id a --memcg shared > /dev/null
dsec-run create --layers base --id b --memcg shared > /dev/null
dsec-run create --layers base --id c > /dev/null
pa=$(dsec-run inspect a | jq -r .pid) pb=$(dsec-run inspect b | jq -r .pid) pc=$(dsec-run inspect c | jq -r .pid)

# Both inits in the one shared group, the own sandbox not; each keeps its pids group.
[ -d "$shared" ] || fail "no shared memory group at $shared"
procs_of | grep -qx "$pa" || fail "a's init is not in the shared memory group"
procs_of | grep -qx "$pb" || fail "b's init is not in the shared memory group"
procs_of | grep -qx "$pc" && fail "c (--memcg own) is in the shared memory group"
grep -qx "$pa" "$(group_of a)/cgroup.procs" || fail "a's init is not in its own pids group"
grep -qx "$pb" "$(group_of a)/cgroup.procs" && fail "b's init is in a's pids group"
[ -z "$memroot" ] || [ ! -e "$memroot/$DSEC_CGROUP_PARENT/a" ] || fail "a has a memory group of its own"
dsec-run inspect a | jq -e '.memcg == "shared"' > /dev/null || fail "the state record does not say memcg shared"
dsec-run inspect c | jq -e '.memcg == "own"' > /dev/null || fail "the state record does not say memcg own"

# Accounting: a's figure is its processes' Pss and grows with what a holds; b's does not.
dsec-run exec a -- sh -c '/holder > /dev/null 2>&1 & while [ ! -e /tmp/ready ]; do sleep 0.1; done'
ma=$(dsec-run stats a | jq -r .memory_bytes) mb=$(dsec-run stats b | jq -r .memory_bytes)
echo "memory figure (Pss): a $ma bytes (holding 24 MB), b $mb bytes; shared group charged $(cat "$shared/$usage_file")"
dsec-run stats a | jq -e '.memcg == "shared"' > /dev/null || fail "stats does not say memcg shared"
[ "$ma" -gt 20000000 ] || fail "a's memory figure $ma does not show the 24 MB it holds"
[ "$mb" -lt 10000000 ] || fail "b's memory figure $mb counts what a holds"
[ "$(cat "$shared/$usage_file")" -gt 20000000 ] || fail "the shared group is not charged with a's memory"
dsec-run ls | jq -se 'map(select(.id == "a"))[0].memory > 20000000' > /dev/null || fail "ls does not show a's figure"

# A limit on the shared group bounds them together: a hog in b past it is the OOM
# killer's choice (the largest), inside the group; the inits and a's holder live on.
# With swap on the host the limit must cover it too, as dsec's own --memory does
# (memsw on v1 with swap accounting, swap.max on v2), or the hog swaps instead.
echo $((64 << 20)) > "$shared/$limit_file"
[ -e "$shared/memory.memsw.limit_in_bytes" ] && echo $((64 << 20)) > "$shared/memory.memsw.limit_in_bytes"
[ -e "$shared/memory.swap.max" ] && echo 0 > "$shared/memory.swap.max"
r=$(dsec-run exec --json b -- sh -c 'h=$(yes | head -c 100000000); echo survived' || true)
echo "$r" | jq -e '.signal == 9 and (.stdout | contains("survived") | not)' > /dev/null || fail "no OOM kill in the shared group: $(echo "$r" | jq -c 'del(.stdout)')"
dsec-run exec a -- sh -c 'ps | grep -q "[h]older"' || fail "a's holder died for b's hog"
dsec-run exec b -- true || fail "b did not survive the OOM kill"
dsec-run inspect b | jq -e '.oom_kills >= 1' > /dev/null || fail "the shared group's OOM kill is not counted"

# Idle: the shared ones are frozen, not reclaimed, and say so; the own one is reclaimed.
dsec-reclaim idle --after 0s --sample 1s > "$T/idle.jsonl"
jq -se 'map(select(.memcg == "shared")) | length == 2 and all(.reclaim | startswith("skipped")) and all(has("after") | not)' "$T/idle.jsonl" > /dev/null \
    || fail "idle on shared sandboxes: $(cat "$T/idle.jsonl")"
jq -se 'map(select(.id == "c"))[0] | .memcg == "own" and has("after")' "$T/idle.jsonl" > /dev/null || fail "idle on c: $(cat "$T/idle.jsonl")"
dsec-reclaim status | jq -se 'map(select(.id == "a"))[0] | .state == "paused" and .memcg == "shared" and .memory > 20000000' > /dev/null \
    || fail "status of a paused shared sandbox: $(dsec-reclaim status | jq -c 'select(.id == "a")')"
dsec-run exec a -- sh -c 'ps | grep -q "[h]older"' || fail "a did not resume with its holder"

# A fork of a shared sandbox joins the shared group too.
f=$(dsec-run fork a | jq -r .id)
dsec-run inspect "$f" | jq -e '.memcg == "shared"' > /dev/null || fail "the fork of a shared sandbox is not shared"
procs_of | grep -qx "$(dsec-run inspect "$f" | jq -r .pid)" || fail "the fork's init is not in the shared memory group"
dsec-run destroy "$f" > /dev/null

# The last sandbox out removes the shared group; an own sandbox does not keep it.
dsec-run destroy a > /dev/null
[ -d "$shared" ] || fail "destroying a removed the group b is in"
dsec-run destroy b > /dev/null
[ ! -e "$shared" ] || fail "the shared memory group outlived its last sandbox"
dsec-run destroy c > /dev/null

# An orphaned shared group (its last destroy killed) goes with gc.
mkdir -p "$shared"
dsec-reclaim gc --grace 0s | jq -se 'map(select(.kind == "empty_shared_memory")) | length == 1' > /dev/null || fail "gc did not remove the orphaned shared group"
[ ! -e "$shared" ] || fail "the orphaned shared group is still there"
for d in /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT" /sys/fs/cgroup/"$DSEC_CGROUP_PARENT"; do
    [ ! -e "$d" ] || fail "left behind: $d"
done
echo ok
