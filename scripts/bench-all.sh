#!/bin/sh
# Runs every dsec-bench subcommand at its default size and keeps the records and plots:
#   scripts/bench-all.sh [OUTDIR]    (default docs/bench)
# OUTDIR gets bench.jsonl (one bench record per subcommand) and one SVG per subcommand.
# Extra arguments after OUTDIR go to every subcommand (e.g. --scale 0.2).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/docs/bench}
[ $# -gt 0 ] && shift
build=${DSEC_BUILD_DIR:-$src/build}
bench=$build/dsec-bench
[ -x "$bench" ] || { echo "dsec-bench is not built: run scripts/build.sh" >&2; exit 1; }
mkdir -p "$out"
: > "$out/bench.jsonl"
for sub in compare run exec create density image import; do
    echo "dsec-bench $sub" >&2
    "$bench" "$sub" --plot "$out/$sub.svg" "$@" >> "$out/bench.jsonl"
done
echo "records: $out/bench.jsonl" >&2
