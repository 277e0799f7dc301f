#!/bin/bash
# Compares two builds of dsec on the same machine, interleaved one sandbox at a time:
#   scripts/bench-pair.sh OLD_BUILD_DIR NEW_BUILD_DIR [N]
# For each of N rounds and each build: create a sandbox from a busybox tree, exec /bin/true
# into it, run a one-shot sandbox, destroy. Prints the medians (microseconds) and the
# medians of the per-round new/old ratios. Runs as root in a private mount namespace with
# its own temporary root and run directories (removed at the end).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR [N]" >&2; exit 2; }
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd) n=${3:-40}
src=$(cd "$(dirname "$0")/.." && pwd)
export DSEC_BIN=$new DSEC_SRC=$src
# lib.sh gives the private mount namespace, the temporary directories and the cleanup.
set -- "$old" "$new" "$n"
# shellcheck source=../tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
# shellcheck source=bench-pairs-lib.sh
. "$src/scripts/bench-pairs-lib.sh"
make_busybox_tree "$T/tree"
us() { echo $(( $(date +%s%N) / 1000 )); }
for b in old new; do
    mkdir -p "$T/$b/root" "$T/$b/run"
    drop_cgroup_parent_at_exit "$T/$b/run"
    bin=$old; [ $b = new ] && bin=$new
    DSEC_ROOT=$T/$b/root DSEC_RUN=$T/$b/run "$bin/dsec-layer" build "$T/tree" --name base > /dev/null
done
for i in $(seq 1 "$n"); do
    for b in old new; do
        bin=$old; [ $b = new ] && bin=$new
        export DSEC_ROOT=$T/$b/root DSEC_RUN=$T/$b/run
        t0=$(us); "$bin/dsec-run" create --layers base --id "p$i" > /dev/null
        t1=$(us); "$bin/dsec-run" exec "p$i" -- true
        t2=$(us); "$bin/dsec-run" run --layers base -- true
        t3=$(us); "$bin/dsec-run" destroy "p$i" > /dev/null
        echo "$b $((t1 - t0)) $((t2 - t1)) $((t3 - t2))"
    done
done > "$T/rounds"
report_pairs "$T/rounds" old new create exec run
