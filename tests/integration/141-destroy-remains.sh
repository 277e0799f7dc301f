#!/bin/bash
# dsec-run destroy of one sandbox returns once nothing of it runs and its cgroups, state and
# name are gone; what is left (its mount and network namespaces, its upper set aside) a
# dsec-teardown child lets go after it: its id is free at once, nothing of it is held once
# the child is done, the exit status still says an upstream failure, a batch leaves nothing
# aside, and gc removes what a crash left aside, a minute (or the grace) after the rename.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null

# The descriptors of this test's processes that hold namespace inode $1 (net or mnt), as
# "pid comm fd"; a process of another test (another DSEC_RUN) is not ours.
holders() {
    local fd pid
    for fd in /proc/[0-9]*/fd/*; do
        case $(readlink "$fd" 2> /dev/null) in "net:[$1]" | "mnt:[$1]") ;; *) continue ;; esac
        pid=${fd#/proc/}
        pid=${pid%%/*}
        { tr '\0' '\n' < "/proc/$pid/environ"; } 2> /dev/null | grep -qxF "DSEC_RUN=$DSEC_RUN" || continue
        echo "$pid $(cat "/proc/$pid/comm" 2> /dev/null) ${fd##*/}"
    done
}

dsec-run create --layers base --id one > /dev/null
dsec-run exec one -- sh -c 'mkdir -p /work/a/b && echo old > /work/a/b/f'
pid=$(jq -r .pid "$DSEC_RUN/sandboxes/one/state.json")
net=$(stat -L -c %i "/proc/$pid/ns/net")
mnt=$(stat -L -c %i "/proc/$pid/ns/mnt")
cgroups=$(jq -r '.cgroup.dirs[]' "$DSEC_RUN/sandboxes/one/state.json")
[ -n "$cgroups" ] || fail "no cgroup directories in the state"

dsec-run destroy one | jq -e '.state == "destroyed"' > /dev/null || fail "destroy one"
# At its return: no process of it, no cgroup, no state, nothing under its name.
state=$(awk '{print $3}' "/proc/$pid/stat" 2> /dev/null || echo gone)
[ "$state" = gone ] || [ "$state" = Z ] || fail "the init still runs after destroy (state $state)"
for d in $cgroups; do [ ! -e "$d" ] || fail "cgroup $d left after destroy"; done
[ ! -e "$DSEC_RUN/sandboxes/one" ] || fail "state directory left"
[ ! -e "$DSEC_ROOT/sandboxes/one" ] || fail "upper left under its name"
for e in "$DSEC_ROOT"/sandboxes/.[!.]*; do
    [ -e "$e" ] || continue
    case ${e##*/} in .gone-one-*) ;; *) fail "unexpected entry ${e##*/} beside the uppers" ;; esac
done

# The id at once, with a fresh upper.
dsec-run create --layers base --id one > /dev/null || fail "the id is not free after destroy"
[ "$(dsec-run exec one -- sh -c 'cat /work/a/b/f 2>&1 || echo none')" != old ] || fail "the new sandbox sees the old upper"

settle_teardowns || fail "the teardown did not end"
left=$(holders "$net"; holders "$mnt")
[ -z "$left" ] || fail "namespaces of the destroyed sandbox still held: $left"
for e in "$DSEC_ROOT"/sandboxes/.[!.]*; do [ ! -e "$e" ] || fail "left aside after the teardown: ${e##*/}"; done

# Records on stdin after an upstream error: destroyed, and exit status 1 all the same.
rc=0
{ echo '{"type":"error","v":1,"code":"io","message":"upstream broke"}'; dsec-run inspect one; } \
    | dsec-run destroy > "$T/out" 2> /dev/null || rc=$?
[ "$rc" = 1 ] || fail "destroy after an upstream error exited $rc, not 1"
jq -se 'map(select(.id == "one"))[0].state == "destroyed"' "$T/out" > /dev/null || fail "the sandbox was not destroyed: $(cat "$T/out")"

# A batch lets each go in place: nothing aside at its return.
settle_teardowns || fail "the teardown did not end"
dsec-run create --layers base --id b1 > /dev/null
dsec-run create --layers base --id b2 > /dev/null
dsec-run destroy b1 b2 | jq -se 'map(.state) == ["destroyed", "destroyed"]' > /dev/null || fail "batch destroy"
[ -z "$(ls -A "$DSEC_ROOT/sandboxes")" ] || fail "a batch left: $(ls -A "$DSEC_ROOT/sandboxes")"

# What a killed teardown leaves aside, gc removes a minute after it was set aside (its
# ctime), not the whole grace period; with a grace under a minute, after that.
# An old mtime (what the upper had before its rename) does not count; the rename's ctime
# does.
mkdir -p "$DSEC_ROOT/sandboxes/.gone-x-1-0/upper/d" "$DSEC_ROOT/sandboxes/fresh/upper"
touch -d '1 hour ago' "$DSEC_ROOT/sandboxes/.gone-x-1-0"
dsec-reclaim gc > "$T/gc" || fail "gc: $(cat "$T/gc")"
[ -e "$DSEC_ROOT/sandboxes/.gone-x-1-0" ] || fail "gc removed an upper set aside a moment ago"
[ -e "$DSEC_ROOT/sandboxes/fresh" ] || fail "gc removed an upper within the grace period"
dsec-reclaim gc --grace 1s > /dev/null
[ -e "$DSEC_ROOT/sandboxes/.gone-x-1-0" ] || fail "gc removed an upper set aside within a 1 s grace"
sleep 1.2
dsec-reclaim gc --grace 1s > "$T/gc" || fail "gc: $(cat "$T/gc")"
[ ! -e "$DSEC_ROOT/sandboxes/.gone-x-1-0" ] || fail "gc left an upper set aside past the grace"
[ ! -e "$DSEC_ROOT/sandboxes/fresh" ] || fail "gc left an orphan upper past the grace"
echo "ok: destroy left its namespaces and upper to its teardown, which let them go"
