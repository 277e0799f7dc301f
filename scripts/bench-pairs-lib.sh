# shellcheck shell=bash
# Shared by bench-pair.sh, bench-policy.sh and bench-egress.sh: interleaved rounds and
# their summary.
#
# policy_rounds LAYER N LABEL POLICY: N rounds, each a create, an exec of `true` and a
# destroy without a policy (label "none") and then with POLICY (label LABEL); prints
# "LABEL CREATE_US EXEC_US" per sandbox, for report_pairs.
policy_rounds() {
    local layer=$1 n=$2 label=$3 policy=$4 i b t0 t1 t2 opts
    us() { echo $(( $(date +%s%N) / 1000 )); }
    for i in $(seq 1 "$n"); do
        for b in none "$label"; do
            opts=()
            [ "$b" = none ] || opts=(--policy "$policy")
            t0=$(us); dsec-run create --layers "$layer" --id "$b$i" "${opts[@]}" > /dev/null
            t1=$(us); dsec-run exec "$b$i" -- true
            t2=$(us); dsec-run destroy "$b$i" > /dev/null
            echo "$b $((t1 - t0)) $((t2 - t1))"
        done
    done
}
#
# drop_cgroup_parent_at_exit RUN_DIR: removes, at exit, the cgroup parent dsec-run derives
# from RUN_DIR (lib.sh removes only that of its own DSEC_RUN).
drop_cgroup_parent_at_exit() {
    local parent
    parent="dsec-$(printf %s "$1" | sha256sum | cut -c1-12)"
    on_exit "rmdir /sys/fs/cgroup/*/$parent /sys/fs/cgroup/$parent 2>/dev/null"
}
#
# report_pairs ROUNDS A B WHAT...: ROUNDS has lines "LABEL T1 T2 ..." (microseconds), one
# per round and label; for each WHAT (the columns in order) prints the median of A, of B,
# and the median of the per-round B/A ratios.
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
report_pairs() {
    local rounds=$1 a=$2 b=$3 col=2 what x y r n
    shift 3
    n=$(awk -v a="$a" '$1==a' "$rounds" | wc -l)
    for what in "$@"; do
        x=$(awk -v c=$col -v l="$a" '$1==l{print $c}' "$rounds" | median)
        y=$(awk -v c=$col -v l="$b" '$1==l{print $c}' "$rounds" | median)
        r=$(paste <(awk -v c=$col -v l="$a" '$1==l{print $c}' "$rounds") \
                  <(awk -v c=$col -v l="$b" '$1==l{print $c}' "$rounds") | awk '{print $2/$1}' | median)
        echo "$what: $a ${x} us, $b ${y} us, $b/$a ${r} (median of $n pairs)"
        col=$((col + 1))
    done
}
