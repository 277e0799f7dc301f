#!/bin/bash
# The cost of a typical policy (examples/policies/eval.json: "/" read-only but /work,
# three hidden paths, io_uring denied, tighter limits) against none, interleaved one
# sandbox at a time:
#   scripts/bench-policy.sh BUILD_DIR [N] [POLICY]
# Each round creates a sandbox without and one with the policy, execs /bin/true into each
# and destroys them. Prints the medians (microseconds) and the medians of the per-round
# with/without ratios. Runs as root in a private mount namespace with its own temporary
# root and run directories (removed at the end).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [N] [POLICY]" >&2; exit 2; }
bin=$(cd "$1" && pwd) n=${2:-40}
src=$(cd "$(dirname "$0")/.." && pwd)
policy=$(realpath "${3:-$src/examples/policies/eval.json}")
export DSEC_BIN=$bin DSEC_SRC=$src
set -- "$bin" "$n" "$policy"
# shellcheck source=../tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_busybox_tree "$T/tree"
# The paths eval.json hides and opens, so that every rule makes its mount.
mkdir -p "$T/tree/answers" "$T/tree/grader" "$T/tree/root/.cache" "$T/tree/work"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id warm > /dev/null && dsec-run destroy warm > /dev/null
# shellcheck source=bench-pairs-lib.sh
. "$src/scripts/bench-pairs-lib.sh"
policy_rounds base "$n" policy "$policy" > "$T/rounds"
report_pairs "$T/rounds" none policy create exec
