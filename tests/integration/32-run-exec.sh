#!/bin/bash
# dsec-run exec: captured output and its limit, timeouts that kill the whole tree,
# stdin streaming, user switch, destroy during an exec, bad ids.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id ex > /dev/null
on_exit "dsec-run destroy --force ex > /dev/null"

# --json: stdout and stderr apart, exit code and duration.
r=$(dsec-run exec --json ex -- sh -c 'echo out; echo err >&2; exit 4' || true)
echo "$r" | jq -e '.type == "result" and .stdout == "out\n" and .stderr == "err\n" and .exit_code == 4 and .duration_ms >= 0 and .timed_out == false' > /dev/null \
    || fail "json result: $r"

# `yes` cannot fill memory: output beyond the limit is drained and dropped.
r=$(dsec-run exec --json --output-limit 1K --timeout 1s ex -- yes || true)
echo "$r" | jq -e '(.stdout | length) == 1024 and .stdout_truncated == true and .timed_out == true and .signal == 9' > /dev/null \
    || fail "output limit / timeout: $(echo "$r" | jq -c 'del(.stdout)')"

# --timeout kills the tree, children included, and keeps the partial output.
start=$(date +%s%N)
r=$(dsec-run exec --json --timeout 300ms ex -- sh -c 'echo before; (sleep 30; echo child) & sleep 30' || true)
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
echo "$r" | jq -e '.timed_out == true and .stdout == "before\n"' > /dev/null || fail "timeout: $r"
[ "$elapsed" -lt 5000 ] || fail "timeout took ${elapsed}ms"
[ "$(dsec-run exec ex -- sh -c 'ps | grep -c "[s]leep 30" || true')" = 0 ] || fail "the command's children survived the timeout"

# --no-output-timeout: quiet for too long.
r=$(dsec-run exec --json --no-output-timeout 300ms ex -- sh -c 'echo a; sleep 30' || true)
echo "$r" | jq -e '.timed_out == true and .stdout == "a\n"' > /dev/null || fail "no-output-timeout: $r"

# Interactive: stdin streams in, exit status passes through.
[ "$(echo hello | dsec-run exec ex -- cat)" = hello ] || fail "stdin not streamed"
[ "$(dsec-run exec --user 1000:1000 ex -- id -u)" = 1000 ] || fail "--user"
[ "$(dsec-run exec --workdir /tmp ex -- sh -c 'echo $PWD')" = /tmp ] || fail "--workdir"
[ "$(dsec-run exec --env A=1 ex -- sh -c 'echo $A')" = 1 ] || fail "--env"

# A pseudo-terminal with -t.
[ "$(dsec-run exec -t ex -- sh -c 'test -t 0 && test -t 1 && echo tty' < /dev/null | tr -d '\r')" = tty ] || fail "-t gives no tty"

# Bad ids and usage.
expect_exit 1 dsec-run exec nosuch -- true
expect_exit 2 dsec-run exec ex
expect_exit 2 dsec-run create --layers base --memory 12X

# The short flags podman and docker users type: -e, -w, -u (exec, and create/run).
[ "$(dsec-run exec -e X=1 -w /tmp -u 1000:1000 ex -- sh -c 'echo $X $(pwd) $(id -u):$(id -g)')" = "1 /tmp 1000:1000" ] ||
    fail "exec -e -w -u: $(dsec-run exec -e X=1 -w /tmp -u 1000:1000 ex -- sh -c 'echo $X $(pwd) $(id -u)' 2>&1)"
[ "$(dsec-run run --layers base -e Y=2 -w /tmp -u 7 -- sh -c 'echo $Y $(pwd) $(id -u)')" = "2 /tmp 7" ] ||
    fail "run -e -w -u"

# destroy while an exec runs: the exec sees its process killed and says so.
dsec-run exec --json ex -- sleep 30 > "$T/r.json" &
bg=$!
for i in $(seq 1 100); do dsec-run exec ex -- sh -c 'ps | grep -q "[s]leep 30"' && break; sleep 0.05; done
dsec-run destroy ex > /dev/null
wait $bg || true
jq -e '.signal == 9 and .note == "sandbox destroyed during exec"' "$T/r.json" > /dev/null || fail "exec during destroy: $(cat "$T/r.json")"
echo ok
