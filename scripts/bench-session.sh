#!/bin/bash
# Sessions against exec, and what open sessions cost the host:
#   scripts/bench-session.sh [BUILD_DIR] [ROUNDS] [SESSIONS]
# Latency: ROUNDS times (default 100), interleaved, `dsec-run exec ID -- true` and
# `dsec-run session exec SESSION -- true` (and `:`) into one sandbox; medians and p90 in
# microseconds. Memory: SESSIONS sessions (default 300) opened across 10 sandboxes; the
# host's used memory (MemTotal - MemAvailable), unreclaimable slab and the shells' own
# memory (Pss) per session. Runs as root in a private mount namespace with its own
# temporary root and run directories (removed at the end).
set -euo pipefail
build=$(cd "${1:-build}" && pwd) rounds=${2:-100} sessions=${3:-300}
src=$(cd "$(dirname "$0")/.." && pwd)
export DSEC_BIN=$build DSEC_SRC=$src
set --
# shellcheck source=../tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id lat > /dev/null
on_exit "dsec-run ls -q | dsec-run destroy -P 4 > /dev/null"
s=$(dsec-run session open lat | jq -r .id)
us() { echo $(( $(date +%s%N) / 1000 )); }
: > "$T/exec"; : > "$T/session"
for i in $(seq 1 "$rounds"); do
    t0=$(us); dsec-run exec lat -- true
    t1=$(us); dsec-run session exec "$s" -- true > /dev/null
    t2=$(us)
    echo $((t1 - t0)) >> "$T/exec"; echo $((t2 - t1)) >> "$T/session"
done
stat_of() { sort -n "$1" | awk '{a[NR]=$1} END {printf "median %d us, p90 %d us", a[int((NR+1)/2)], a[int(NR*0.9)]}'; }
echo "exec true:          $(stat_of "$T/exec")"
echo "session exec true:  $(stat_of "$T/session")"

mem_used() { awk '/^MemTotal/{t=$2} /^MemAvailable/{a=$2} END {print t - a}' /proc/meminfo; }
sunreclaim() { awk '/^SUnreclaim/{print $2}' /proc/meminfo; }
for i in $(seq 1 10); do dsec-run create --layers base --id "m$i" > /dev/null; done
used0=$(mem_used) slab0=$(sunreclaim)
for i in $(seq 1 "$sessions"); do dsec-run session open "m$(( (i % 10) + 1 ))" | jq -r .pid; done > "$T/pids"
used1=$(mem_used) slab1=$(sunreclaim)
pss=0
while read -r p; do
    v=$(awk '/^Pss:/{print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
    pss=$((pss + v))
done < "$T/pids"
echo "$sessions sessions open: host used +$(( (used1 - used0) / sessions )) KiB per session" \
     "(unreclaimable slab +$(( (slab1 - slab0) / sessions )) KiB), shells' Pss $(( pss / sessions )) KiB per session"
