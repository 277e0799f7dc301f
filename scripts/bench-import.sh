#!/bin/bash
# Import speed: `dsec-layer import ARCHIVE` against the same work by hand
# (`tar -xf` into a directory, then `mkfs.erofs` with the same options dsec uses), on
# the same uncompressed tar, median of N runs each, interleaved. Prints one JSON line.
#
#   scripts/bench-import.sh [-n RUNS] [-z lz4|lz4hc|none] [DIR...]   (default DIR: /usr/lib/gcc /usr/lib/python3.11)
#
# DSEC_BIN (default build/) holds dsec-layer. Work files go under $TMPDIR (default /var/tmp).
set -euo pipefail

runs=3
comp=lz4
while getopts n:z: o; do
    case $o in
        n) runs=$OPTARG ;;
        z) comp=$OPTARG ;;
        *) echo "usage: $0 [-n RUNS] [-z lz4|lz4hc|none] [DIR...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- /usr/lib/gcc /usr/lib/python3.11
bin=${DSEC_BIN:-$(cd "$(dirname "$0")/.." && pwd)/build}
layer="$bin/dsec-layer"
[ -x "$layer" ] || { echo "no dsec-layer in $bin (set DSEC_BIN)" >&2; exit 2; }

w=$(mktemp -d "${TMPDIR:-/var/tmp}/dsec-bench-import.XXXXXX")
trap 'rm -rf "$w"' EXIT
tar -cf "$w/in.tar" "$@" 2>/dev/null
bytes=$(stat -c %s "$w/in.tar")
zopt=()
[ "$comp" = none ] || zopt=(-z"$comp")

now() { date +%s.%N; }
by_hand() {
    rm -rf "$w/x" "$w/img"
    mkdir "$w/x"
    local t0
    t0=$(now)
    tar -xf "$w/in.tar" -C "$w/x" --numeric-owner
    mkfs.erofs --quiet -T0 -U00000000-0000-0000-0000-000000000000 "${zopt[@]}" "$w/img" "$w/x"
    awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.3f\n", a - b }'
}
dsec() {
    rm -rf "$w/root"
    local t0
    t0=$(now)
    DSEC_ROOT="$w/root" "$layer" import "$w/in.tar" --compress "$comp" >/dev/null
    awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.3f\n", a - b }'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

sync
hand=() ours=()
for ((i = 0; i < runs; i++)); do
    hand+=("$(by_hand)")
    ours+=("$(dsec)")
done
h=$(printf '%s\n' "${hand[@]}" | median)
d=$(printf '%s\n' "${ours[@]}" | median)
jq -nc --arg h "$h" --arg d "$d" --argjson bytes "$bytes" --arg comp "$comp" --argjson runs "$runs" \
    --arg hs "${hand[*]}" --arg ds "${ours[*]}" \
    '{type:"bench", v:1, name:"import", tar_bytes:$bytes, compression:$comp, runs:$runs,
      by_hand_s:($h|tonumber), dsec_s:($d|tonumber), ratio:(($d|tonumber)/($h|tonumber)),
      by_hand_all:$hs, dsec_all:$ds}'
