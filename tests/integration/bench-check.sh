# Helpers for the dsec-bench tests (50-*.sh .. 59-*.sh); sourced after lib.sh.

# Checks the shape every bench record has and that each figure is ordered.
check_bench() {
    jq -e --arg name "$1" '
        .type == "bench" and .v == 1 and .name == $name and (.what | length > 0)
        and (.machine | .cores >= 1 and .memory_bytes > 0 and (.kernel | length > 0)
             and (.cgroup_mode | IN("v1", "v2", "hybrid", "none"))
             and (.state_fs.type | length > 0) and (.state_fs.path | startswith("/")))
        and (.counts | type == "object") and (.ratios | type == "object")
        and (.baselines | type == "object")
        and (.figures | length > 0)
        and ([.figures[] | .n >= 1 and .min >= 0 and .min <= .median and .median <= .p90
              and .p90 <= .p99 and .p99 <= .max and (.unit | IN("ms", "bytes"))] | all)' "$2" >/dev/null \
        || { cat "$2" >&2; fail "$1: bench record has the wrong shape"; }
}

# Temporary directories dsec-bench made and left (should stay as many as before).
leftovers() { find "${TMPDIR:-/tmp}" -maxdepth 1 -name "dsec-bench.*" | wc -l; }
before=$(leftovers)

# The benchmark's own state is gone and the caller's DSEC_ROOT was not touched.
check_clean() {
    [ "$(leftovers)" = "$before" ] || fail "temporary directory left behind"
    [ -z "$(ls -A "$DSEC_ROOT")" ] || fail "the caller's DSEC_ROOT was written to"
}
