#!/bin/bash
# Exec served by the init: root's commands with plain pipes are forked by the sandbox's
# init (which already holds its namespaces, cgroups and confinement) through a socket in
# the sandbox's state directory, instead of being joined from outside. What must hold:
# the same confinement and result as a joined command (capabilities, seccomp, exit
# codes, signals, output, stdin, timeouts (and a killed dsec-run) that kill the whole session, the caller's
# umask, nice value, limits and CPUs), only the command's pipes inside, the init itself using no capability, and the
# join kept for other users, oversized requests and sandboxes whose init does not serve.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box s
sock="$DSEC_RUN/sandboxes/s/exec.sock"
[ -S "$sock" ] || fail "no exec socket in the sandbox's state directory"

# Served: the command's parent is the init (a joined one's is outside: 0).
[ "$(dsec-run exec s -- sh -c 'echo $PPID')" = 1 ] || fail "root's command was not forked by the init"
[ "$(PROBE_OPTS="--user 1000" probe s whoami | awk '{print $1}')" = whoami ] || fail "--user 1000 does not run"
[ "$(dsec-run exec --user 1000 s -- sh -c 'echo $PPID')" = 0 ] || fail "another user's command was not joined"
# The join's helper and child run in dsec-run's memory as vfork children: the OOM killer
# passes them by, and the score written for the command stays the command's.
dsec-run exec --user 1000 s -- sleep 3.21 > /dev/null &
joiner=$!
for _ in $(seq 100); do pgrep -f '^sleep 3.21$' > /dev/null && break; sleep 0.05; done
[ "$(cat "/proc/$joiner/oom_score_adj")" = "$(cat /proc/self/oom_score_adj)" ] ||
    fail "dsec-run took the joined command's oom_score_adj: $(cat "/proc/$joiner/oom_score_adj")"
[ "$(cat "/proc/$(pgrep -f '^sleep 3.21$' | head -n 1)/oom_score_adj")" = 1000 ] || fail "the joined command's oom_score_adj"
wait $joiner || fail "the joined sleep"

# The same confinement as a joined command.
line=$(probe s status)
check_served_status() {
    local want
    for want in "CapEff=$CAPS_DEFAULT" "CapPrm=$CAPS_DEFAULT" "CapBnd=$CAPS_DEFAULT" "CapInh=$CAPS_NONE" \
        "CapAmb=$CAPS_NONE" NoNewPrivs=1 Seccomp=2; do
        [ "$(field_of "$1" "${want%%=*}")" = "${want#*=}" ] || fail "served command: ${want%%=*} is not ${want#*=}: $1"
    done
}
check_served_status "$line"
expect s EPERM mount_proc
# Nor can it take the init's descriptors (its exec socket among them) or trace it.
expect s EPERM pidfd_getfd 1
expect s EPERM ptrace 1
# The init keeps the sandbox's capabilities permitted (for its commands' execve) and uses none.
init=$(jq .pid "$DSEC_RUN/sandboxes/s/state.json")
[ "$(awk '/^CapEff:/ {print $2}' "/proc/$init/status")" = "$CAPS_NONE" ] || fail "the init has effective capabilities"
[ "$(awk '/^CapPrm:/ {print $2}' "/proc/$init/status")" = "$CAPS_DEFAULT" ] || fail "the init's permitted set is not the default"
# Nothing of the init's is open in the command: its pipes only.
fds=$(dsec-run exec s -- sh -c 'ls /proc/$$/fd; true' | tr '\n' ' ')
[ "$fds" = "0 1 2 " ] || fail "the served command has descriptors $fds"
# Nor can anything inside reach the init's descriptors (the socket among them): their
# numbers show, not what they are.
# shellcheck disable=SC2016 # the sandbox shell's $f
dsec-run exec s -- sh -c 'for f in /proc/1/fd/*; do readlink "$f" && exit 0; cat "$f" && exit 0; done; exit 1' \
    > /dev/null 2>&1 && fail "a descriptor of the init is reachable inside"

# Results as before: exit status, output on its streams, stdin, a missing command.
out=$(dsec-run exec s -- sh -c 'echo out; echo err >&2; exit 7' 2> "$T/err") && fail "exit 7 reported as success"
[ "$out" = out ] && [ "$(cat "$T/err")" = err ] || fail "streams: '$out' '$(cat "$T/err")'"
expect_exit 7 dsec-run exec s -- sh -c 'exit 7'
[ "$(printf 'in\n' | dsec-run exec s -- cat)" = in ] || fail "stdin not relayed"
expect_exit 127 dsec-run exec s -- no-such-command
{ dsec-run exec --json s -- no-such-command || true; } | jq -e '.exit_code == 127 and .note == "command not found: no-such-command"' \
    > /dev/null || fail "a missing command's note"
{ dsec-run exec --json s -- sh -c 'kill -9 $$' || true; } | jq -e '.exit_code == 137 and .signal == 9' > /dev/null \
    || fail "a killed command's signal"
# A working directory only its owner may enter: root enters it with its capabilities, as
# a joined command does.
dsec-run exec s -- sh -c 'mkdir -p /home/app && chown 1000:1000 /home/app && chmod 700 /home/app'
[ "$(dsec-run exec -w /home/app s -- sh -c 'echo $PPID; cd . && echo in')" = "1
in" ] || fail "root's served command could not enter a directory of user 1000's (mode 700)"
[ "$(umask 027; dsec-run exec s -- sh -c umask)" = 0027 ] || fail "the caller's umask was not the command's"
[ "$(nice -n 7 dsec-run exec s -- cat /proc/self/stat | awk '{print $19}')" = 7 ] || fail "the caller's nice value was not the command's"
# The caller's limits and CPUs, as a joined command (another user's) has them; the
# sandbox's own limits (nofile 1024 by default) stay whatever the caller's.
for u in 0 1000; do
    [ "$(ulimit -s 4096; dsec-run exec --user $u s -- sh -c 'ulimit -s; ulimit -H -s')" = "4096
4096" ] || fail "the caller's stack limit was not user $u's command's"
    [ "$(ulimit -S -t 77; dsec-run exec --user $u s -- sh -c 'ulimit -S -t')" = 77 ] ||
        fail "the caller's CPU-time limit was not user $u's command's"
    [ "$(ulimit -S -n 64; dsec-run exec --user $u s -- sh -c 'ulimit -n')" = 1024 ] ||
        fail "the caller's nofile limit replaced the sandbox's for user $u"
    cpus=$(taskset -c 0 dsec-run exec --user $u s -- cat /proc/self/status | awk '/^Cpus_allowed_list:/ {print $2}')
    [ "$cpus" = 0 ] || fail "the caller's CPU affinity was not user $u's command's: $cpus"
done
[ "$(ulimit -s 4096; dsec-run exec s -- sh -c 'echo $PPID')" = 1 ] || fail "a command with the caller's limits was not served"
# No signal blocked or ignored (the init blocks all, and inherits dsec-run's ignored SIGPIPE).
sigs=$(dsec-run exec s -- cat /proc/self/status | awk '/^Sig(Blk|Ign):/ {print $2}' | sort -u)
[ "$sigs" = 0000000000000000 ] || fail "signals blocked or ignored in a served command: $sigs"

# A timeout kills the session: the command and what it left behind.
{ dsec-run exec --json --timeout 1s s -- sh -c 'sleep 300 & sleep 301' || true; } | jq -e '.timed_out and .exit_code == 137' \
    > /dev/null || fail "timeout not reported"
for _ in $(seq 50); do
    grep -q 'sleep 30[01]' <(dsec-run exec s -- ps -o args 2> /dev/null) || break
    sleep 0.1
done
dsec-run exec s -- ps -o args | grep -q 'sleep 30[01]' && fail "the session outlived its timeout"

# dsec-run exec killed by SIGKILL (a harness's hard timeout): nobody waits for the command
# any more, so the init ends its session as a timeout would; a process that left the
# session on purpose (setsid, a daemon) stays (until the sandbox goes), and the sandbox
# serves on.
# sleeps_in_s PATTERN: how many processes of sandbox s run a command matching PATTERN.
sleeps_in_s() { dsec-run exec s -- ps -o args | grep -c "$1" || true; }
# kill_exec STARTED PATTERN -- EXEC ARGS...: runs `dsec-run EXEC ARGS...` in the background,
# waits until STARTED processes of s match PATTERN, kills dsec-run with SIGKILL, and
# gives what it leaves up to 5 s to go.
kill_exec() {
    local started=$1 pattern=$2 execer
    shift 3
    dsec-run "$@" &
    execer=$!
    for _ in $(seq 50); do [ "$(sleeps_in_s "$pattern")" = "$started" ] && break; sleep 0.1; done
    kill -9 $execer
    wait $execer 2>/dev/null || true
}
gone_soon() { for _ in $(seq 50); do [ "$(sleeps_in_s "$1")" = 0 ] && return; sleep 0.1; done; }
kill_exec 3 '^sleep 31[012]' -- exec s -- sh -c 'setsid sleep 312 & sleep 310 & sleep 311'
gone_soon '^sleep 31[01]'
[ "$(sleeps_in_s '^sleep 31[01]')" = 0 ] || fail "a killed exec's session ran on"
[ "$(sleeps_in_s '^sleep 312')" = 1 ] || fail "a process that left the killed exec's session went too"
# One that changed its ids since (root's may): killed all the same.
dsec-run exec s -- sh -c 'echo "u:x:1000:1000::/:/bin/sh" >> /etc/passwd'
kill_exec 1 '^sleep 315' -- exec s -- busybox su u -c 'exec sleep 315'
gone_soon '^sleep 315'
[ "$(sleeps_in_s '^sleep 315')" = 0 ] || fail "a killed exec's command that changed its ids ran on"
[ "$(awk '/^CapEff:/ {print $2}' "/proc/$init/status")" = "$CAPS_NONE" ] ||
    fail "the init kept an effective capability after killing a session"
# Joined from outside (another user's): the command dies with its dsec-run (its
# parent-death signal), what it started in the background stays until the sandbox goes.
kill_exec 2 '^sleep 31[34]' -- exec --user 1000 s -- sh -c 'sleep 313 & exec sleep 314'
gone_soon '^sleep 314'
[ "$(sleeps_in_s '^sleep 314')" = 0 ] || fail "a killed joined exec's command ran on"

# A process inside that stops every other it can (kill -STOP -1 in a loop, as root of
# the sandbox) catches the init's children before their execve: the init never waits for
# one, so it serves on, and an exec whose command was stopped ends at its --timeout.
dsec-run exec --timeout 30s s -- sh -c 'while :; do kill -STOP -1; done' > /dev/null 2>&1 &
stopper=$!
sleep 0.3
for _ in 1 2 3; do
    t0=$(date +%s)
    timeout -k 1 8 dsec-run exec --timeout 1s s -- true > /dev/null 2>&1 || true
    [ $(($(date +%s) - t0)) -le 4 ] || fail "an exec hung while a process inside stopped the others"
done
# A joined command (another user's) is caught the same way before its execve, while it
# still runs in dsec-run's memory: dsec-run does not wait for it past the exec's
# deadline, nor past SIGTERM without one, and leaves nothing of it behind.
for _ in 1 2 3; do
    t0=$(date +%s)
    rc=0
    timeout -k 1 8 dsec-run exec --json --timeout 1s --user 1000 s -- true > "$T/joined" 2>&1 || rc=$?
    [ $(($(date +%s) - t0)) -le 4 ] || fail "a joined exec hung while a process inside stopped the others"
    [ "$rc" = 137 ] || [ "$rc" = 0 ] || fail "a joined exec under the stopper exited $rc: $(cat "$T/joined")"
    [ "$rc" = 0 ] || jq -e '.timed_out and .signal == 9' "$T/joined" > /dev/null ||
        fail "a joined exec stopped before its start is not a timeout: $(cat "$T/joined")"
done
t0=$(date +%s)
rc=0
timeout -s TERM -k 2 1 dsec-run exec --user 1000 s -- true > /dev/null 2> "$T/joined" || rc=$?
[ $(($(date +%s) - t0)) -le 2 ] || fail "a joined exec stopped before its start outlived SIGTERM"
[ "$rc" = 124 ] || [ "$rc" = 0 ] || fail "a joined exec under the stopper, sent SIGTERM, exited $rc"
kill -TERM $stopper
wait $stopper || true
# (A joined child not yet at its execve shows as a dsec-run.)
left=$(dsec-run exec s -- ps -o pid,stat,args | grep -E 'dsec-run|true$' || true)
[ -z "$left" ] || fail "left inside after the stopper: $left"
[ "$(timeout -k 1 5 dsec-run exec s -- sh -c 'echo $PPID')" = 1 ] || fail "the init no longer serves after its commands were stopped"

# Many at once into one sandbox, beyond what the init serves at once: all run.
for _ in $(seq 80); do dsec-run inspect s; done > "$T/records"
dsec-run exec -P 16 --json -- sh -c 'echo $PPID' < "$T/records" > "$T/results"
[ "$(jq -s 'map(select(.exit_code == 0)) | length' "$T/results")" = 80 ] || fail "a batch of 80: $(jq -c . "$T/results" | head -3)"

# Too large a request for the init's socket: joined.
big=$(head -c 70000 /dev/zero | tr '\0' x)
[ "$(dsec-run exec s -- sh -c 'echo $PPID' "$big")" = 0 ] || fail "an oversized request was not joined"
# No socket (an init that does not serve, as in sandboxes made before): joined.
mv "$sock" "$sock.away"
[ "$(dsec-run exec s -- sh -c 'echo $PPID')" = 0 ] || fail "exec without the socket was not joined"
mv "$sock.away" "$sock"
[ "$(dsec-run exec s -- sh -c 'echo $PPID')" = 1 ] || fail "served again once the socket is back"

# Destroyed meanwhile: the command goes with the sandbox, as a joined one does.
dsec-run exec --json s -- sleep 300 > "$T/killed" &
waiter=$!
for _ in $(seq 50); do
    dsec-run exec s -- ps -o args | grep -q '^sleep 300' && break
    sleep 0.1
done
dsec-run destroy s > /dev/null
wait "$waiter" || true
jq -e '.exit_code == 137 and .note == "sandbox destroyed during exec"' "$T/killed" > /dev/null \
    || fail "exec into a destroyed sandbox: $(cat "$T/killed")"
echo ok
