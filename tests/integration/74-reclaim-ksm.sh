#!/bin/bash
# Every process in a sandbox (its init, exec'd commands and their children) is eligible
# for KSM merging; dsec-reclaim ksm on merges the identical pages of two sandboxes and
# status reports what it saves; off stops ksmd. The host's KSM settings are put back.
. "$(dirname "$0")/lib.sh"
# Whatever a failure leaves running goes (gc also takes what lost its state).
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

ksm=/sys/kernel/mm/ksm
[ -w $ksm/run ] || skip "the kernel has no KSM"
[ -e /proc/self/ksm_stat ] || skip "no /proc/PID/ksm_stat to check PR_SET_MEMORY_MERGE by"
saved_settings="$(cat $ksm/run) $(cat $ksm/pages_to_scan) $(cat $ksm/sleep_millisecs)"
read -r run0 scan0 sleep0 <<< "$saved_settings"
on_exit "echo $scan0 > $ksm/pages_to_scan; echo $sleep0 > $ksm/sleep_millisecs; echo $run0 > $ksm/run"

make_busybox_tree "$T/tree"
# 24 MB of one 16-byte pattern in a shell variable: every page alike, in both sandboxes.
make_holder "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
for s in k1 k2; do
    dsec-run create --layers base --id $s > /dev/null
    dsec-run exec $s -- sh -c '/holder > /dev/null 2>&1 & while [ ! -e /tmp/ready ]; do sleep 0.1; done' \
        || fail "holder in $s"
done
for s in k1 k2; do
    for f in /sys/fs/cgroup/pids/"$DSEC_CGROUP_PARENT"/$s/cgroup.procs /sys/fs/cgroup/unified/"$DSEC_CGROUP_PARENT"/$s/cgroup.procs; do
        [ -f "$f" ] && break
    done
    for pid in $(cat "$f"); do
        # A `sleep 1` of the holder's loop may have exited since the list was read.
        stat=$(cat "/proc/$pid/ksm_stat" 2> /dev/null) || continue
        grep -q 'ksm_merge_any: yes' <<< "$stat" || fail "pid $pid in $s is not eligible for merging"
    done
done

echo 4000 > $ksm/pages_to_scan
echo 10 > $ksm/sleep_millisecs
dsec-reclaim ksm on | jq -e '.type == "ksm" and .running == true' > /dev/null || fail "ksm on"
for _ in $(seq 300); do
    [ "$(dsec-reclaim ksm status | jq '.saved > 30000000')" = true ] && break
    sleep 0.1
done
status=$(dsec-reclaim ksm status)
echo "$status" | jq -e '.saved > 30000000 and .pages_sharing > 0' > /dev/null || fail "little merged: $status"
dsec-reclaim ksm off | jq -e '.running == false' > /dev/null || fail "ksm off"
expect_exit 2 dsec-reclaim ksm sideways
dsec-run destroy k1 k2 > /dev/null
echo "ok: two sandboxes holding 24 MB of alike pages each: $(echo "$status" | jq -c '{pages_shared, pages_sharing, saved}')"
