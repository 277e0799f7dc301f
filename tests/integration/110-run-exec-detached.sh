#!/bin/bash
# exec -d: the command runs on after dsec-run returns, with its exec record printed at
# once; logs prints (and -f follows) its output, wait waits for it and passes its status
# through; output on disk is capped whatever the command writes; inspect lists detached
# execs; they die with destroy, and wait ID waits for a sandbox's end.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id dt > /dev/null
on_exit "dsec-run destroy --force dt > /dev/null"

# Returns at once (the command sleeps), even read through a pipe to its end.
start=$(date +%s%N)
rec=$(dsec-run exec -d dt -- sh -c 'echo out1; echo err1 >&2; sleep 2; echo out2; exit 7')
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -lt 1500 ] || fail "exec -d took ${took}ms"
echo "$rec" | jq -e '.type == "exec" and .id == "dt" and (.exec | test("^[0-9a-f]{8}$")) and
    .argv[0] == "sh" and .state == "running"' > /dev/null || fail "exec -d record: $rec"
e=$(echo "$rec" | jq -r .exec)
dsec-run inspect dt | jq -e --arg e "$e" '.execs | length == 1 and .[0].exec == $e and .[0].state == "running"' > /dev/null ||
    fail "inspect while running: $(dsec-run inspect dt | jq -c .execs)"

# logs -f follows until the command ends: stdout and stderr each to their own.
dsec-run logs -f dt "$e" > "$T/out" 2> "$T/err"
[ "$(cat "$T/out")" = "$(printf 'out1\nout2')" ] || fail "logs -f stdout: $(cat "$T/out")"
[ "$(cat "$T/err")" = "err1" ] || fail "logs -f stderr: $(cat "$T/err")"
got=0
dsec-run wait dt "$e" > "$T/result" || got=$?
[ "$got" = 7 ] || fail "wait exit status: $got"
jq -e --arg e "$e" '.type == "result" and .id == "dt" and .exec == $e and .exit_code == 7 and .stdout_bytes == 10' "$T/result" > /dev/null ||
    fail "wait record: $(cat "$T/result")"
dsec-run inspect dt | jq -e '.execs[0].state == "exited" and .execs[0].exit_code == 7' > /dev/null ||
    fail "inspect after: $(dsec-run inspect dt | jq -c .execs)"
# The files are the host's: root's, and nowhere in the sandbox's view.
d="$DSEC_RUN/sandboxes/dt/execs/$e"
[ "$(stat -c '%a %u' "$d" "$d/stdout" | tr '\n' ' ')" = "700 0 600 0 " ] || fail "modes: $(stat -c '%n %a %u' "$d" "$d/stdout")"
dsec-run log dt | jq -se '.[-1].kind == "exec" and .[-1].exit_code == 7' > /dev/null || fail "not in the command log"

# A missing command: status 127 through wait, the reason in the record.
e2=$(dsec-run exec -d dt -- no-such-command | jq -r .exec)
expect_exit 127 dsec-run wait dt "$e2" > "$T/result"
jq -e '.note == "command not found: no-such-command"' "$T/result" > /dev/null || fail "not found: $(cat "$T/result")"

# A flood: 10 MB on stdout, 64 KiB cap: at most two files of 64 KiB are kept, the
# latest output, and the result says how much was dropped. logs without EXEC: the latest.
e3=$(dsec-run exec -d --output-limit 64K dt -- sh -c 'yes hostile | head -c 10000000' | jq -r .exec)
dsec-run wait dt "$e3" > "$T/result" || fail "flood exec failed: $(cat "$T/result")"
d="$DSEC_RUN/sandboxes/dt/execs/$e3"
kept=$(($(stat -c %s "$d/stdout") + $(stat -c %s "$d/stdout.1")))
[ "$kept" -le $((2 * 65536)) ] && [ "$kept" -ge 65536 ] || fail "kept $kept bytes of a 10 MB flood"
jq -e --argjson kept "$kept" '.stdout_bytes == 10000000 and .stdout_dropped == 10000000 - $kept' "$T/result" > /dev/null ||
    fail "flood result (kept $kept): $(cat "$T/result")"
dsec-run logs dt > "$T/out"
[ "$(wc -c < "$T/out")" = "$kept" ] || fail "logs printed $(wc -c < "$T/out") bytes, $kept kept"
[ "$(sort -u "$T/out")" = "hostile" ] || fail "logs of the flood: $(sort -u "$T/out" | head -3)"

# A supervisor killed: the exec is "lost" and wait says why, with no status to pass on.
e5=$(dsec-run exec -d dt -- sleep 1018 | jq -r .exec)
kill -9 "$(jq -r .pid "$DSEC_RUN/sandboxes/dt/execs/$e5/exec.json")"
for i in $(seq 1 30); do
    [ "$(dsec-run inspect dt | jq -r --arg e "$e5" '.execs[] | select(.exec == $e) | .state')" = lost ] && break
    sleep 0.1
done
dsec-run inspect dt | jq -e --arg e "$e5" '.execs[] | select(.exec == $e) | .state == "lost"' > /dev/null ||
    fail "killed supervisor: $(dsec-run inspect dt | jq -c .execs)"
expect_exit 1 dsec-run wait dt "$e5" > /dev/null 2> "$T/err"
grep -q "supervisor was killed" "$T/err" || fail "wait on a lost exec: $(cat "$T/err")"

# Bad input: one line on stderr, an error record, nothing made.
expect_exit 1 dsec-run exec -d nobox -- true > "$T/rec" 2> "$T/err"
[ "$(wc -l < "$T/err")" = 1 ] && jq -e '.type == "error" and .code == "not_found" and .id == "nobox"' "$T/rec" > /dev/null ||
    fail "unknown sandbox: $(cat "$T/err" "$T/rec")"
expect_exit 2 dsec-run exec -d -t dt -- true 2> /dev/null
expect_exit 1 dsec-run logs dt 0badc0de > /dev/null 2>&1
expect_exit 1 dsec-run wait dt ../../x > /dev/null 2>&1
[ "$(ls "$DSEC_RUN/sandboxes/dt/execs" | wc -l)" = 4 ] || fail "execs dir: $(ls "$DSEC_RUN/sandboxes/dt/execs")"

# A detached exec dies with destroy: the command, then its supervisor; wait says so.
dsec-run create --layers base --id dt2 > /dev/null
on_exit "dsec-run destroy --force dt2 > /dev/null"
e4=$(dsec-run exec -d dt2 -- sleep 1017 | jq -r .exec)
sup=$(jq -r .pid "$DSEC_RUN/sandboxes/dt2/execs/$e4/exec.json")
kill -0 "$sup" || fail "no supervisor"
dsec-run wait dt2 "$e4" > /dev/null 2> "$T/wait-err" &
waiter=$!
dsec-run wait dt2 > "$T/wait-sandbox" &
sandbox_waiter=$!
# Both are waiting once each holds a pidfd (of the supervisor, of the init).
for i in $(seq 1 50); do
    n=$(ls -l /proc/$waiter/fd /proc/$sandbox_waiter/fd 2>/dev/null | grep -c pidfd || true)
    [ "$n" -ge 2 ] && break
    sleep 0.1
done
dsec-run destroy dt2 > /dev/null
for i in $(seq 1 30); do kill -0 "$sup" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$sup" 2>/dev/null || fail "the supervisor outlived destroy"
got=0
wait "$waiter" || got=$?
[ "$got" = 1 ] && grep -q "destroyed before exec $e4 ended" "$T/wait-err" || fail "wait across destroy: $got $(cat "$T/wait-err")"
wait "$sandbox_waiter" || fail "wait ID failed"
jq -e '.type == "sandbox" and .id == "dt2" and .state == "exited"' "$T/wait-sandbox" > /dev/null || fail "wait ID: $(cat "$T/wait-sandbox")"
[ ! -e "$DSEC_RUN/sandboxes/dt2" ] || fail "state left: $(find "$DSEC_RUN/sandboxes/dt2")"
! pgrep -f "sleep 1017" > /dev/null || fail "the command outlived destroy"
echo ok
