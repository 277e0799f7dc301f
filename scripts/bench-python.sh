#!/bin/bash
# The Python client's batch API against the same shell pipeline:
#   scripts/bench-python.sh [BUILD_DIR] [COUNT] [ROUNDS]
# Each round (default 3) creates COUNT sandboxes (default 50) and runs `true` in each,
# once as `dsec-layer ls | dsec-mount --count | dsec-run create -P 8 | dsec-run exec -P 16`
# and once through dsec.create_many + dsec.exec_many (the same programs, driven from
# asyncio), then destroys them; prints each round's wall times in milliseconds. Runs as
# root in a private mount namespace with its own temporary root and run directories.
set -euo pipefail
build=$(cd "${1:-build}" && pwd) count=${2:-50} rounds=${3:-3}
src=$(cd "$(dirname "$0")/.." && pwd)
export DSEC_BIN=$build DSEC_SRC=$src
set -- "$build" "$count" "$rounds"
# shellcheck source=../tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
on_exit 'dsec-run destroy -P 4 $(dsec-run ls -q) > /dev/null'
export PYTHONDONTWRITEBYTECODE=1
ms() { echo $(( $(date +%s%N) / 1000000 )); }
for r in $(seq 1 "$rounds"); do
    t0=$(ms)
    dsec-layer ls base | dsec-mount --count "$count" | dsec-run create -P 8 | dsec-run exec -P 16 --json -- true > "$T/shell.jsonl"
    t1=$(ms)
    [ "$(jq -s 'map(select(.exit_code == 0)) | length' "$T/shell.jsonl")" = "$count" ] || fail "shell pipeline results"
    dsec-run destroy -P 8 $(dsec-run ls -q) > /dev/null
    t2=$(ms)
    PYTHONPATH="$src/python" python3 - "$count" <<'PY'
import asyncio, sys
import dsec
async def main(n):
    boxes = await dsec.create_many(n, ["base"], parallel=8)
    results = await dsec.exec_many(boxes, ["true"], parallel=16)
    assert len(boxes) == n and all(r.ok for r in results)
asyncio.run(main(int(sys.argv[1])))
PY
    t3=$(ms)
    dsec-run destroy -P 8 $(dsec-run ls -q) > /dev/null
    echo "round $r: shell pipeline $((t1 - t0)) ms, python create_many + exec_many $((t3 - t2)) ms ($count sandboxes)"
done
