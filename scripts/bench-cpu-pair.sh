#!/bin/bash
# Compares the CPU time (perf stat task-clock, children included) of two builds,
# interleaved one invocation at a time; on a busy machine this separates builds that
# wall-clock times cannot:
#   scripts/bench-cpu-pair.sh OLD_BUILD_DIR NEW_BUILD_DIR [N]
# Per round and build: exec /bin/true into a live sandbox, a one-shot run, `dsec-run
# --version`, `bwrap --unshare-all` and the tree's /bin/true (the baselines, run in both
# builds' rounds). Prints the medians and the medians of the per-round new/old ratios,
# then each build's exec/true and run/bwrap. Runs as root in a private mount namespace
# with its own temporary directories (removed at the end); needs perf and bwrap.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR [N]" >&2; exit 2; }
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd) n=${3:-40}
src=$(cd "$(dirname "$0")/.." && pwd)
for t in perf bwrap; do command -v $t > /dev/null || { echo "$0: needs $t" >&2; exit 1; }; done
export DSEC_BIN=$new DSEC_SRC=$src
set -- "$old" "$new" "$n"
# shellcheck source=../tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
# shellcheck source=bench-pairs-lib.sh
. "$src/scripts/bench-pairs-lib.sh"
make_busybox_tree "$T/tree"
declare -A bin=([old]=$old [new]=$new) id
for b in old new; do
    mkdir -p "$T/$b/root" "$T/$b/run"
    drop_cgroup_parent_at_exit "$T/$b/run"
    export DSEC_ROOT=$T/$b/root DSEC_RUN=$T/$b/run
    "${bin[$b]}/dsec-layer" build "$T/tree" --name base > /dev/null
    id[$b]=$("${bin[$b]}/dsec-run" create --layers base | jq -r .id)
    on_exit "DSEC_ROOT=$T/$b/root DSEC_RUN=$T/$b/run ${bin[$b]}/dsec-run destroy ${id[$b]} > /dev/null"
done
# CPU microseconds of one command (its output is not wanted).
cpu_us() { perf stat -x, -e task-clock "$@" 2>&1 > /dev/null | tail -1 | awk -F, '{printf "%d", $1 * 1000}'; }
for _ in $(seq 1 "$n"); do
    for b in old new; do
        export DSEC_ROOT=$T/$b/root DSEC_RUN=$T/$b/run
        r=${bin[$b]}/dsec-run
        echo "$b $(cpu_us "$r" exec "${id[$b]}" -- /bin/true) $(cpu_us "$r" run --layers base -- /bin/true)" \
            "$(cpu_us "$r" --version)" \
            "$(cpu_us bwrap --unshare-all --die-with-parent --ro-bind "$T/tree" / --proc /proc --dev /dev /bin/true)" \
            "$(cpu_us "$T/tree/bin/true")"
    done
done > "$T/rounds"
report_pairs "$T/rounds" old new exec run version bwrap true
for b in old new; do
    echo "$b: exec/true $(awk -v l=$b '$1==l{print $2/$6}' "$T/rounds" | median)," \
        "run/bwrap $(awk -v l=$b '$1==l{print $3/$5}' "$T/rounds" | median) (medians of per-round ratios)"
done
