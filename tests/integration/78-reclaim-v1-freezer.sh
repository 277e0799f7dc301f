#!/bin/bash
# The v1 side of pause and resume: with the unified tree unmounted in this test's own
# mount namespace, dsec sees a pure cgroup v1 host, and idle freezes through the v1
# freezer (freezer.state), exec thaws, a paused sandbox is destroyed, and gc cleans up.
. "$(dirname "$0")/lib.sh"
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

[ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer hierarchy"
grep -q ' /sys/fs/cgroup/unified cgroup2 ' /proc/self/mounts && umount /sys/fs/cgroup/unified
grep -q ' cgroup2 ' /proc/self/mounts && skip "a cgroup2 tree other than /sys/fs/cgroup/unified is mounted"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id v1 > /dev/null
jq -e '.cgroup.mode == "v1"' "$DSEC_RUN/sandboxes/v1/state.json" > /dev/null || fail "not created as on a v1 host"
# A process to freeze that uses no CPU: blocked opening a FIFO no one writes (a loop
# forking a sleep every second could, on a loaded host, keep the sandbox from idling).
dsec-run exec v1 -- sh -c 'echo kept > /root/mark; mkfifo /tmp/hold; (read -r _ < /tmp/hold) > /dev/null 2>&1 &'
state=/sys/fs/cgroup/freezer/$DSEC_CGROUP_PARENT/v1/freezer.state

out=$(dsec-reclaim idle --after 0s --sample 1s 2>&1)
jq -e '.id == "v1" and .event == "paused"' <<< "$out" > /dev/null || fail "not paused: $out"
[ "$(cat "$state")" = FROZEN ] || fail "freezer.state is $(cat "$state")"
st=$(dsec-reclaim status | jq -c 'select(.id == "v1")')
[ "$(jq -r .state <<< "$st")" = paused ] || fail "status: $st"
[ "$(dsec-run exec v1 -- cat /root/mark)" = kept ] || fail "exec into a frozen v1 sandbox"
[ "$(cat "$state")" = THAWED ] || fail "exec did not thaw: $(cat "$state")"

out=$(dsec-reclaim idle --after 0s --sample 1s 2>&1)
jq -e '.id == "v1" and .event == "paused"' <<< "$out" > /dev/null || fail "second pause: $out"
out=$(dsec-reclaim resume v1 2>&1)
jq -e '.was_paused == true' <<< "$out" > /dev/null || fail "resume: $out"
[ "$(cat "$state")" = THAWED ] || fail "resume did not thaw"
dsec-reclaim idle --after 0s --sample 1s > /dev/null
dsec-run destroy v1 | jq -e '.state == "destroyed"' > /dev/null || fail "destroy of a frozen v1 sandbox"
dsec-reclaim gc > /dev/null
! ls -d /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT" 2> /dev/null || fail "cgroups left"
echo ok
