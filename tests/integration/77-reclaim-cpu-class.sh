#!/bin/bash
# dsec-run create --class batch: every process of a batch sandbox (init, exec'd commands
# and their children) runs SCHED_IDLE and its cgroup has the lowest CPU weight. Measures
# how much a CPU-bound command in a latency sandbox slows down while two spinners per core
# run in batch sandboxes, against the same spinners in latency sandboxes.
. "$(dirname "$0")/lib.sh"
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
expect_exit 2 dsec-run create --layers base --class sometimes
dsec-run create --layers base --id lat > /dev/null
spinners=$(( $(nproc) * 2 ))

# Median wall time (ms) of a CPU-bound loop in the latency sandbox, over 5 runs.
work() {
    for _ in 1 2 3 4 5; do
        dsec-run exec lat --json -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' | jq .duration_ms
    done | sort -n | sed -n 3p
}
# Starts the spinners, one sandbox each, of class $1.
spin() {
    for ((i = 0; i < spinners; i++)); do
        dsec-run create --layers base --id "spin-$1-$i" --class "$1" > /dev/null
        dsec-run exec "spin-$1-$i" -- sh -c '(while :; do :; done) > /dev/null 2>&1 &'
    done
}
stop() { for ((i = 0; i < spinners; i++)); do dsec-run destroy "spin-$1-$i" > /dev/null; done; }

alone=$(work)
spin batch
jq -e '.class == "batch"' "$DSEC_RUN/sandboxes/spin-batch-0/state.json" > /dev/null || fail "class not recorded"
dsec-reclaim status | jq -se 'map(select(.type == "sandbox") | {(.id): .class}) | add | .lat == "latency" and ."spin-batch-0" == "batch"' \
    > /dev/null || fail "status shows no class"
procs=/sys/fs/cgroup/pids/$DSEC_CGROUP_PARENT/spin-batch-0/cgroup.procs
[ -f "$procs" ] || procs=/sys/fs/cgroup/unified/$DSEC_CGROUP_PARENT/spin-batch-0/cgroup.procs
for pid in $(cat "$procs"); do
    # Field 41 of /proc/PID/stat is the scheduling policy: 5 is SCHED_IDLE.
    stat=$(cat "/proc/$pid/stat" 2> /dev/null) || continue
    [ "$(sed 's/.*) //' <<< "$stat" | awk '{print $39}')" = 5 ] || fail "pid $pid of a batch sandbox is not SCHED_IDLE"
done
weight=$(cat /sys/fs/cgroup/cpu/"$DSEC_CGROUP_PARENT"/spin-batch-0/cpu.shares 2> /dev/null ||
         cat /sys/fs/cgroup/unified/"$DSEC_CGROUP_PARENT"/spin-batch-0/cpu.weight)
[ "$weight" = 10 ] || [ "$weight" = 1 ] || fail "batch CPU weight is $weight"
beside_batch=$(work)
stop batch
spin latency
beside_latency=$(work)
stop latency

pct() { awk "BEGIN {printf \"%.1f\", ($1 - $alone) * 100 / $alone}"; }
echo "ok: a latency command takes ${alone} ms alone, ${beside_batch} ms (+$(pct "$beside_batch")%) beside $spinners batch spinners, ${beside_latency} ms (+$(pct "$beside_latency")%) beside $spinners latency-class spinners"
awk "BEGIN {exit !($beside_batch < $beside_latency)}" || fail "batch spinners slow it down as much as latency ones"
