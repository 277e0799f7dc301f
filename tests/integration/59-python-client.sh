#!/bin/bash
# The Python client (python/dsec, standard library only) against the real binaries:
# python3 -m unittest over python/tests, with a busybox layer to make sandboxes from.
. "$(dirname "$0")/lib.sh"

command -v python3 > /dev/null || fail "python3 is missing (scripts/install-deps.sh installs it)"
make_busybox_tree "$T/tree"
ln -sf busybox "$T/tree/bin/hostname"
dsec-layer build "$T/tree" --name pybase > /dev/null
export DSEC_TEST_LAYER=pybase
# Nothing written into the source tree (no __pycache__).
export PYTHONDONTWRITEBYTECODE=1
cd "$T"
PYTHONPATH="$DSEC_SRC/python" python3 -m unittest discover -s "$DSEC_SRC/python/tests" -v > "$T/py.log" 2>&1 || { cat "$T/py.log"; fail "python unit tests"; }
grep -q "skipped" "$T/py.log" && { cat "$T/py.log"; fail "python tests skipped"; }
tail -n 3 "$T/py.log"
# The example: a toy RL-style loop, its best sandbox snapshotted, every log kept.
python3 "$DSEC_SRC/examples/rl_loop.py" --layers pybase --count 3 --steps 3 --logs "$T/logs" > "$T/rl.json" ||
    fail "examples/rl_loop.py"
jq -e '(.rewards | length) == 3 and .reward >= 0 and (.layer | startswith("sha256:")) and .log_position > 0' "$T/rl.json" > /dev/null ||
    fail "rl_loop output: $(cat "$T/rl.json")"
[ "$(ls "$T/logs" | wc -l)" = 3 ] || fail "rl_loop kept $(ls "$T/logs" | wc -l) logs"
# Every sandbox the tests made is gone.
[ "$(dsec-run ls -q | wc -l)" = 0 ] || fail "sandboxes left: $(dsec-run ls -q)"
echo ok
