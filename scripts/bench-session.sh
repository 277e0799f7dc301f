#!/bin/bash
# Sessions against exec, and what open sessions cost the host:
#   scripts/bench-session.sh [BUILD_DIR] [ROUNDS] [SESSIONS]
# Latency: ROUNDS times (default 100), interleaved, `dsec-run exec ID -- true` and
# `dsec-run session exec SESSION -- true`, plain and on a pty session, into one sandbox; medians and p90 in
# microseconds. Memory: SESSIONS sessions (default 300) opened across 10 sandboxes; what
# their memory cgroups are charged, the shells' own memory (Pss) and the host's
# unreclaimable slab, per session. Runs as root in a private mount namespace with its own
# temporary root and run directories (removed at the end).
set -euo pipefail
build=$(cd "${1:-build}" && pwd) rounds=${2:-100} sessions=${3:-300}
src=$(cd "$(dirname "$0")/.." && pwd)
export DSEC_BIN=$build DSEC_SRC=$src
set -- "$build" "$rounds" "$sessions"
# shellcheck source=../tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id lat > /dev/null
on_exit 'dsec-run destroy -P 4 $(dsec-run ls -q) > /dev/null'
s=$(dsec-run session open lat | jq -r .id)
t=$(dsec-run session open --pty lat | jq -r .id)
us() { echo $(( $(date +%s%N) / 1000 )); }
: > "$T/exec"; : > "$T/session"; : > "$T/pty"
for i in $(seq 1 "$rounds"); do
    t0=$(us); dsec-run exec lat -- true
    t1=$(us); dsec-run session exec "$s" -- true > /dev/null
    t2=$(us); dsec-run session exec "$t" -- true > /dev/null
    t3=$(us)
    echo $((t1 - t0)) >> "$T/exec"; echo $((t2 - t1)) >> "$T/session"; echo $((t3 - t2)) >> "$T/pty"
done
stat_of() { sort -n "$1" | awk '{a[NR]=$1} END {printf "median %d us, p90 %d us", a[int((NR+1)/2)], a[int(NR*0.9)]}'; }
echo "exec true:          $(stat_of "$T/exec")"
echo "session exec true:  $(stat_of "$T/session")"
echo "  on a pty session: $(stat_of "$T/pty")"

# What the sandboxes' memory cgroups are charged (their processes' pages and, where the
# kernel accounts it, kernel memory): the host-wide MemAvailable of a shared machine is
# too noisy for a per-session figure.
charged() {
    local total=0 i
    for i in $(seq 1 10); do total=$((total + $(dsec-run stats "m$i" | jq .memory_bytes))); done
    echo $((total / 1024))
}
sunreclaim() { awk '/^SUnreclaim/{print $2}' /proc/meminfo; }
for i in $(seq 1 10); do dsec-run create --layers base --id "m$i" > /dev/null; done
mem0=$(charged) slab0=$(sunreclaim)
for i in $(seq 1 "$sessions"); do dsec-run session open "m$(( (i % 10) + 1 ))" | jq -r .pid; done > "$T/pids"
mem1=$(charged) slab1=$(sunreclaim)
pss=0
while read -r p; do
    v=$(awk '/^Pss:/{print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
    pss=$((pss + v))
done < "$T/pids"
echo "$sessions sessions open: +$(( (mem1 - mem0) / sessions )) KiB charged to the sandboxes per session," \
     "shells' Pss $(( pss / sessions )) KiB; host unreclaimable slab +$(( (slab1 - slab0) / sessions )) KiB per session (noisy)"
