#!/bin/bash
# Red team, the way in: what `dsec-run exec` puts into a sandbox gives nothing of the host
# away. A second exec cannot trace, or take descriptors from, the first exec's command or
# the init; the command's stdin is a pipe, so reopening it through /proc cannot write to
# the host file dsec-run read it from; the init's environment, executable and descriptors
# are closed to the sandbox (not dumpable); and a process inside that watches for new
# processes while execs come in never sees the host's environment, the dsec-run binary
# or a host descriptor (the exec helper is not dumpable and closes host fds first).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box ex
new_box other
# A secret in dsec-run's own environment: it must never show inside.
HOST_SECRET="host-secret-$RANDOM$RANDOM"
export HOST_SECRET

# The first exec: a command that stays, its stdin read from a host file.
dsec-run exec ex -- sh -c 'echo $$ > /tmp/held.pid; exec sleep 600' < "$CANARY" > /dev/null 2>&1 &
held_exec=$!
on_exit "kill $held_exec 2> /dev/null; wait $held_exec 2> /dev/null"
for _ in $(seq 1 100); do
    pid=$(dsec-run exec ex -- cat /tmp/held.pid 2> /dev/null || true)
    [ -n "$pid" ] && break
    sleep 0.05
done
[ -n "$pid" ] || fail "the first exec did not start"

# From a second exec: no tracing, no memory, no descriptors of the first.
expect ex EPERM ptrace "$pid"
expect ex EPERM pidfd_getfd "$pid"
# Its stdin is a pipe: reopening it for writing cannot reach the host file.
expect ex pipe fd_write "$pid" 0
# What is readable names nothing of the host.
for a in environ exe fd cmdline; do
    line=$(probe ex $a "$pid")
    [ "$(result_of "$line")" = ok ] || continue
    no_host_path "/proc/$pid/$a of the first exec's command" "$line"
done
# The init: not dumpable, so its environment and descriptors are closed, and whatever of
# it is readable names nothing of the host.
expect ex EPERM ptrace 1
expect ex EPERM pidfd_getfd 1
expect ex EACCES environ 1
for a in exe fd cmdline; do
    line=$(probe ex $a 1)
    no_host_path "/proc/1/$a" "$line"
done

# The command's own stdin, a host file on dsec-run's side: a pipe inside.
line=$(dsec-run exec ex -- /probe fd_write self 0 < "$CANARY" 2>&1)
[ "$(result_of "$line")" = pipe ] || fail "the command's stdin is not a pipe: $line"
host_unharmed

# The race: while execs come in (with and without stdin, as root and as a user), a
# process inside examines every process it sees, again and again, for the host secret,
# the build directory or the test's directories in cmdline, environ, exe, cwd, root and
# descriptors. The window it aims at is the exec helper's, before its execve.
dsec-run exec ex -- /probe scan 120 "$HOST_SECRET" "$DSEC_BIN" "$T" > "$T/scan.out" 2>&1 &
scanner=$!
for _ in $(seq 1 100); do
    [ "$(dsec-run exec ex -- ps 2> /dev/null | grep -c '[p]robe scan')" = 1 ] && break
    sleep 0.05
done
for i in $(seq 1 60); do
    dsec-run exec ex -- true
    dsec-run exec --user 1000 ex -- true
    dsec-run exec ex -- cat > /dev/null < "$CANARY"
    [ $((i % 20)) = 0 ] && dsec-run exec --json ex -- true > /dev/null
done
dsec-run exec ex -- touch /tmp/dsec-probe-scan-stop
wait $scanner || true
line=$(cat "$T/scan.out")
[ "$(result_of "$line")" = none ] || fail "a process inside saw the host: $line"

host_unharmed other
echo ok
