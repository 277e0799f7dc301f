#!/bin/bash
# Core scheduling for --class latency: the sandbox record and inspect say whether the
# sandbox got a core-scheduling cookie and, when not, why (this kind of host has no SMT:
# the kernel answers ENODEV); the create never fails for it, and every door (init, exec,
# cp) still works. Batch sandboxes never get a cookie. Where the host has SMT, the
# latency sandbox's commands carry a cookie (PR_SCHED_CORE_GET on them is not 0).
. "$(dirname "$0")/lib.sh"
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id lat > "$T/lat.json"
dsec-run create --layers base --id bat --class batch > "$T/bat.json"
jq -e '.state == "running" and .class == "latency" and (.core_sched | type == "boolean")' "$T/lat.json" > /dev/null \
    || { cat "$T/lat.json" >&2; fail "latency record without core_sched"; }
jq -e '.core_sched == false and .core_sched_reason == "batch class"' "$T/bat.json" > /dev/null \
    || { cat "$T/bat.json" >&2; fail "batch sandbox with a cookie"; }
# inspect reads it from the state.
[ "$(dsec-run inspect lat | jq -c '[.core_sched, .core_sched_reason]')" = "$(jq -c '[.core_sched, .core_sched_reason]' "$T/lat.json")" ] \
    || fail "inspect does not show core_sched as create said"

smt=$(cat /sys/devices/system/cpu/smt/active 2> /dev/null || echo 0)
if [ "$smt" = 1 ] && jq -e .core_sched "$T/lat.json" > /dev/null; then
    # The command's own cookie, read by the host (the kernel refuses nothing here).
    dsec-run exec lat -- sh -c 'sleep 5 & echo $! > /tmp/pid; wait' &
    sleep 1
    pid=$(pgrep -f '^sleep 5$' | head -1)
    cookie=$(python3 -c "import ctypes,sys; l=ctypes.CDLL(None); c=ctypes.c_ulong(0); r=l.prctl(62,0,int(sys.argv[1]),0,ctypes.byref(c)); print(c.value if r==0 else -1)" "$pid")
    [ "$cookie" != 0 ] && [ "$cookie" != -1 ] || fail "an exec'd command of a latency sandbox has no cookie"
    wait
else
    # No SMT here: the record says so instead of failing the create.
    jq -e '.core_sched == false and (.core_sched_reason | test("SMT|CONFIG_SCHED_CORE"))' "$T/lat.json" > /dev/null \
        || { cat "$T/lat.json" >&2; fail "no reason given for the missing cookie"; }
fi
# Every door still works in both classes.
for id in lat bat; do
    [ "$(dsec-run exec "$id" -- echo hi)" = hi ] || fail "exec into $id"
    echo data > "$T/in.txt"
    dsec-run cp "$T/in.txt" "$id:/tmp/in.txt" > /dev/null || fail "cp into $id"
    [ "$(dsec-run exec "$id" -- cat /tmp/in.txt)" = data ] || fail "cp into $id lost data"
done
dsec-run destroy lat bat > /dev/null
echo ok
