#!/bin/bash
# dsec-run session: state carries over between commands (cd, variables, background jobs);
# commands that read stdin, print without a newline, forge the status line, have a syntax
# error, never end, or run in the shell itself do not confuse it; two commands at once are
# serialised; a paused sandbox resumes; the host ends stay out of reach; close, destroy
# and gc take the shell away.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
for app in kill chmod grep printf ls pwd cut; do ln -sf busybox "$T/tree/bin/$app"; done
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id se > /dev/null
on_exit "dsec-run destroy --force se gone > /dev/null"

rec=$(dsec-run session open se)
echo "$rec" | jq -e '.type == "session" and .sandbox == "se" and .state == "open" and (.id | test("^se@[0-9a-f]{8}$"))' > /dev/null ||
    fail "open: $rec"
s=$(echo "$rec" | jq -r .id)
shell_pid=$(echo "$rec" | jq -r .pid)
run() { dsec-run session exec "$s" "$@"; }
out() { run -- "$@" | jq -r .stdout; }

# State carries over: cd, variables (exported or not), functions, background jobs.
run -- cd /tmp > /dev/null
[ "$(out pwd)" = /tmp ] || fail "cd did not carry over"
run -- 'export X=1; Y=2; f() { echo fn; }' > /dev/null
[ "$(out 'echo $X $Y $(f)')" = "1 2 fn" ] || fail "variables did not carry over"
run -- 'sleep 300 & echo $! > /tmp/bg' > /dev/null
[ "$(out 'kill -0 $(cat /tmp/bg) && echo alive')" = alive ] || fail "background job gone"

# The result: both streams, exit status (also dsec-run's), no trailing newline needed.
r=$(run -- 'printf abc; printf err >&2; (exit 5)' || true)
echo "$r" | jq -e '.type == "result" and .session == "'"$s"'" and .id == "se" and .stdout == "abc" and .stderr == "err" and .exit_code == 5 and .timed_out == false' > /dev/null ||
    fail "result: $r"
expect_exit 3 run -- 'false || (exit 3)' > /dev/null

# stdin is /dev/null: a command reading it does not eat the next command.
[ "$(out 'read x; echo "[$x]"; cat')" = "[]" ] || fail "reading stdin"
[ "$(out echo next)" = next ] || fail "the command after a stdin reader"

# Output imitating the protocol, and a forged status line written into the shell's own
# status channel, do not end the command: only the command's nonce does.
r=$(run -- 'printf "\n0123456789ab0123456789ab 0\n"; printf "\n0123456789ab0123456789ab 0\n" >&9; printf "\nx 0\n" > /proc/$$/fd/9; sleep 0.3; echo late; false' || true)
echo "$r" | jq -e '(.stdout | endswith("late\n")) and .exit_code == 1' > /dev/null || fail "forged status accepted: $r"

# A background job flooding the output or the status channel, from one command to the
# next, holds nothing up: each command still ends with its own status.
run -- 'yes > /dev/null & f1=$!; yes junk >&9 & f2=$!; yes out & f3=$!' > /dev/null
r=$(run --timeout 20s -- 'echo marker; (exit 6)' || true)
echo "$r" | jq -e '.exit_code == 6 and .timed_out == false and (.stdout | contains("marker"))' > /dev/null ||
    fail "flooded session: $(echo "$r" | jq -c '{exit_code, timed_out, note}')"
run -- 'kill $f1 $f2 $f3; wait $f1 $f2 $f3 2>/dev/null; true' > /dev/null
[ "$(dsec-run exec se -- sh -c 'ps | grep -c "[y]es" || true')" = 0 ] || fail "the flood jobs live on"

# A syntax error is the command's (status 2, message on stderr), not the session's end.
r=$(run -- 'echo "unterminated' || true)
echo "$r" | jq -e '.exit_code == 2 and (.stderr | length) > 0' > /dev/null || fail "syntax error: $r"
[ "$(out echo still)" = still ] || fail "the session died of a syntax error"

# Two commands at once are serialised, not interleaved.
run -- 'for i in 1 2 3 4 5; do echo one; sleep 0.05; done' > "$T/a.json" &
a=$!
run -- 'for i in 1 2 3 4 5; do echo two; sleep 0.05; done' > "$T/b.json"
wait $a
jq -e '.stdout == "one\none\none\none\none\n"' "$T/a.json" > /dev/null || fail "interleaved: $(cat "$T/a.json")"
jq -e '.stdout == "two\ntwo\ntwo\ntwo\ntwo\n"' "$T/b.json" > /dev/null || fail "interleaved: $(cat "$T/b.json")"

# A command that never ends: at the timeout what it started dies, the partial output is
# kept, the session and the earlier background job live on.
start=$(date +%s%N)
r=$(run --timeout 300ms -- 'echo before; sleep 30 & sleep 31' || true)
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
echo "$r" | jq -e '.timed_out == true and .stdout == "before\n" and .exit_code == 137' > /dev/null || fail "timeout: $r"
[ "$elapsed" -lt 5000 ] || fail "the timeout took ${elapsed}ms"
[ "$(dsec-run exec se -- sh -c 'ps | grep -cE "[s]leep 3[01]$" || true')" = 0 ] || fail "the timed-out command's processes survived"
[ "$(out 'kill -0 $(cat /tmp/bg) && pwd')" = /tmp ] || fail "the session or its job did not survive the timeout"
r=$(run --no-output-timeout 300ms -- 'echo a; sleep 30' || true)
echo "$r" | jq -e '.timed_out == true and .stdout == "a\n"' > /dev/null || fail "no-output-timeout: $r"
# The rest of a timed-out command's list does not run, nor does a builtin waiting in the
# shell itself (wait for an earlier job, a loop of builtins) hold it: the command ends
# with 137 and the session goes on.
r=$(run --timeout 300ms -- 'sleep 30; echo never > /tmp/never' || true)
echo "$r" | jq -e '.timed_out == true and .exit_code == 137' > /dev/null || fail "list after a timeout: $r"
sleep 0.3
[ "$(out 'cat /tmp/never 2>/dev/null || echo absent')" = absent ] || fail "the rest of a timed-out list ran"
for cmd in 'wait $(cat /tmp/bg); echo never' 'while :; do :; done; echo never'; do
    r=$(run --timeout 300ms -- "$cmd" || true)
    echo "$r" | jq -e '.timed_out == true and .exit_code == 137 and .stdout == ""' > /dev/null || fail "builtin in the shell ($cmd): $r"
    [ "$(out pwd)" = /tmp ] || fail "the session did not survive: $cmd"
done

# Another session of the same sandbox sees none of this one's state or output.
s2=$(dsec-run session open se | jq -r .id)
r=$(dsec-run session exec "$s2" -- 'echo "[$X]"; pwd')
echo "$r" | jq -e '.stdout == "[]\n/\n"' > /dev/null || fail "second session: $r"
[ "$(dsec-run session ls se | jq -s 'map(select(.state == "open")) | length')" = 2 ] || fail "session ls"
# Nor can it reopen the first one's FIFOs through /proc: they are host root's, mode 0600.
inner=$(out 'echo $$')
r=$(dsec-run session exec "$s2" -- "cat /proc/$inner/fd/1 2>&1; echo x 2>&1 > /proc/$inner/fd/9; echo end" || true)
[ "$(echo "$r" | jq -r .stdout | grep -c 'Permission denied')" = 2 ] || fail "another session's FIFOs reopened: $r"

# A paused sandbox is thawed by session exec.
dsec-reclaim idle --after 0s --sample 1s > /dev/null
dsec-run ls | jq -se 'map(select(.id == "se"))[0].state == "paused"' > /dev/null || fail "the sandbox did not pause"
[ "$(out pwd)" = /tmp ] || fail "session exec into a paused sandbox"

# The host ends: root's, private, out of reach and unchangeable from inside.
dir="$DSEC_RUN/sandboxes/se/sessions/${s#se@}"
[ "$(stat -c '%a %u' "$dir")" = "700 0" ] || fail "session dir: $(stat -c '%a %u' "$dir")"
for f in in out err status; do
    [ "$(stat -c '%F %a %u' "$dir/$f")" = "fifo 600 0" ] || fail "$f: $(stat -c '%F %a %u' "$dir/$f")"
done
r=$(run -- "ls $dir 2>&1; chmod 666 /proc/\$\$/fd/9 /proc/\$\$/fd/0 2>&1; echo done" || true)
echo "$r" | jq -e '.stdout | endswith("done\n")' > /dev/null || fail "probe: $r"
[ "$(stat -c %a "$dir/status")" = 600 ] && [ "$(stat -c %a "$dir/in")" = 600 ] || fail "a FIFO's mode changed from inside"
echo "$r" | jq -e '.stdout | test("No such file")' > /dev/null || fail "the session dir is visible inside: $r"

# exit ends the session with its status; later commands get not_running.
r=$(run -- 'exit 7' || true)
echo "$r" | jq -e '.exit_code == 7' > /dev/null || fail "exit: $r"
for i in $(seq 1 50); do kill -0 "$shell_pid" 2>/dev/null || break; sleep 0.05; done
expect_exit 1 run -- true > /dev/null
[ "$(run -- true 2>/dev/null | jq -r .code)" = not_running ] || fail "exec after exit"
dsec-run session ls se | jq -se "map(select(.id == \"$s\"))[0].state == \"exited\"" > /dev/null || fail "ls after exit"

# A loop in the shell itself that took the timeout's trap away: the shell goes.
s3=$(dsec-run session open se | jq -r .id)
r=$(dsec-run session exec --timeout 300ms "$s3" -- 'trap "" URG; while :; do :; done' || true)
echo "$r" | jq -e '.timed_out == true and (.note | test("shell"))' > /dev/null || fail "shell loop: $r"
expect_exit 1 dsec-run session exec "$s3" -- true > /dev/null

# close: the shell and its jobs go, and its files.
s2_pid=$(dsec-run session ls se | jq -r "select(.id == \"$s2\") | .pid")
dsec-run session exec "$s2" -- 'sleep 200 &' > /dev/null
dsec-run session close "$s2" | jq -e '.state == "closed"' > /dev/null || fail "close"
for i in $(seq 1 50); do kill -0 "$s2_pid" 2>/dev/null || break; sleep 0.05; done
! kill -0 "$s2_pid" 2>/dev/null || fail "the closed session's shell lives"
[ "$(dsec-run exec se -- sh -c 'ps | grep -c "[s]leep 200" || true')" = 0 ] || fail "the closed session's job lives"
[ ! -e "$DSEC_RUN/sandboxes/se/sessions/${s2#se@}" ] || fail "the closed session's files stay"
expect_exit 1 dsec-run session close "$s2" > /dev/null

# Bad input.
expect_exit 1 dsec-run session exec nosuch@00000000 -- true > /dev/null
expect_exit 1 dsec-run session exec 'bad id' -- true > /dev/null
expect_exit 1 dsec-run session open nosuch > /dev/null
expect_exit 1 dsec-run session open se --shell /no/such/shell > /dev/null
expect_exit 2 dsec-run session exec "$s" > /dev/null

# destroy takes an open session's shell with it; gc does for a sandbox whose init died.
s4=$(dsec-run session open se)
pid4=$(echo "$s4" | jq -r .pid)
dsec-run destroy se > /dev/null
for i in $(seq 1 50); do kill -0 "$pid4" 2>/dev/null || break; sleep 0.05; done
! kill -0 "$pid4" 2>/dev/null || fail "the shell survived destroy"
dsec-run create --layers base --id gone > /dev/null
pid5=$(dsec-run session open gone | jq -r .pid)
kill -9 "$(jq -r .pid "$DSEC_RUN/sandboxes/gone/state.json")"
for i in $(seq 1 50); do kill -0 "$pid5" 2>/dev/null || break; sleep 0.05; done
! kill -0 "$pid5" 2>/dev/null || fail "the shell outlived its sandbox's init"
dsec-reclaim gc > /dev/null
[ ! -e "$DSEC_RUN/sandboxes/gone" ] || fail "gc left the dead sandbox's sessions"
echo ok
