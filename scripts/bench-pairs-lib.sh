# shellcheck shell=bash
# Shared by bench-pair.sh and bench-policy.sh: the summary of interleaved rounds.
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
