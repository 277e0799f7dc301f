#!/bin/bash
# Regenerates tools/dsec-run/symbol-order.txt: the functions dsec-run runs for an exec
# into a live sandbox and for a one-shot run, which lld places together in the text
# (--symbol-ordering-file, CMakeLists.txt), so that a start touches fewer pages (each
# first touch of a 64 KiB window of the 4.6 MB text is a page fault). The list comes from
# callgrind (valgrind), run as root against a build's dsec-run in a temporary root and a
# private mount namespace (tests/integration/lib.sh). Names that a later change removes
# are skipped by the linker, so a stale list costs only the gain.
#   scripts/symbol-order.sh [BUILD-DIR]      (default ./build)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export DSEC_BIN=${1:-$src/build} DSEC_SRC=$src
command -v valgrind > /dev/null || { echo "symbol-order.sh: needs valgrind" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# lib.sh runs the script that sources it again in a private mount namespace: a file.
cat > "$out/profile.sh" << 'EOS'
. "$DSEC_SRC/tests/integration/lib.sh"
make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id order > /dev/null
cg() { valgrind --tool=callgrind --demangle=no --callgrind-out-file="$OUT/$1" "$DSEC_BIN/dsec-run" "${@:2}" > /dev/null 2>&1 || true; }
cg exec exec order -- /bin/true
# Under valgrind a one-shot stops at fsopen (valgrind does not know it): its start and
# the first half of create are profiled.
cg run run --layers base -- /bin/true
dsec-run destroy order > /dev/null
EOS
OUT=$out bash "$out/profile.sh"
list=$src/tools/dsec-run/symbol-order.txt
grep -ohE '^c?fn=\([0-9]+\) .*' "$out"/* | sed -E 's/^c?fn=\([0-9]+\) //' |
    grep -vE '^\(below main\)|^0x' | LC_ALL=C sort -u > "$out/ran"
# The C library picks a string function's variant for the CPU at start (an ifunc), and
# valgrind's CPU runs the AVX2 ones: every variant of each string function that ran is
# listed (about 100, a few pages), for hosts with AVX-512 or without AVX2.
bases=$(sed -nE 's/^__([a-z]+)_(sse|ssse|avx|evex).*/\1/p' "$out/ran" | sort -u | paste -sd '|')
nm --defined-only "$DSEC_BIN/dsec-run" | awk '{print $3}' | grep -E "^__($bases)_(sse|ssse|avx|evex)" |
    LC_ALL=C sort -u | grep -vxFf "$out/ran" > "$out/variants" || true
# Last, the marker after which dsec-run's start maps no code ahead (lib/start/prefault.c).
cat "$out/ran" "$out/variants" > "$list"
echo dsec_hot_text_end >> "$list"
echo "tools/dsec-run/symbol-order.txt: $(wc -l < "$list") functions"
