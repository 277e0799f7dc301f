#!/bin/bash
# Red team, limits with no flag given: a fork bomb stops at the default pids limit (4096)
# while the host and another sandbox carry on; filling /dev/shm stops at the scratch
# tmpfs's size, and the space comes back; RLIMIT_CORE is 0, RLIMIT_NOFILE is capped, and
# neither hard limit can be raised from inside.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box bomb
new_box other

# The pids limit is there before anything runs: without it the bomb below would take
# the host's pids (kernel.pid_max is 32768 here), so it is not even tried.
f=$(cgroup_file bomb pids.max) || fail "no pids controller for the sandbox"
[ "$(cat "$f")" = 4096 ] || fail "default pids limit: $f is $(cat "$f"), expected 4096"

# Fork until refused, hold the children 5 s while the host and the other sandbox are
# checked, then kill them.
dsec-run exec bomb -- /probe forkbomb 5000 5 > "$T/bomb.out" 2>&1 &
bomber=$!
for _ in $(seq 1 600); do
    [ -s "$T/bomb.out" ] && break
    sleep 0.1
done
line=$(cat "$T/bomb.out")
[ "$(result_of "$line")" = EAGAIN ] || fail "the fork bomb was not stopped with EAGAIN: ${line:-no output}"
n=$(awk '{ print $3 }' <<< "$line")
{ [ "$n" -lt 4096 ] && [ "$n" -gt 3000 ]; } || fail "the fork bomb made $n processes, expected just under 4096"
[ "$(cat "$(cgroup_file bomb pids.current)")" -le 4096 ] || fail "pids.current above the limit"
host_unharmed other
wait $bomber || fail "the fork bomb's exec failed: $(cat "$T/bomb.out")"
# Once the children are gone (and reaped by the init) the sandbox takes commands again.
for _ in $(seq 1 50); do
    dsec-run exec bomb -- true 2> /dev/null && break
    sleep 0.1
done
[ "$(dsec-run exec bomb -- echo alive)" = alive ] || fail "the sandbox is unusable after the fork bomb"

# /dev/shm (one tmpfs with /tmp and /dev) has a size well below the host's memory: a
# tmpfs without one may take half of it. Filling it stops there with ENOSPC.
mem_total=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024))
line=$(probe bomb statfs /dev/shm)
size=$(field_of "$line" total)
{ [ -n "$size" ] && [ "$size" -gt 0 ] && [ "$size" -lt $((mem_total / 4)) ] && [ "$size" -le $((4 << 30)) ]; } \
    || fail "the scratch tmpfs has no size of its own (host memory $mem_total): $line"
line=$(probe bomb fill /dev/shm/fill $((size + (64 << 20))))
[ "$(result_of "$line")" = ENOSPC ] || fail "filling /dev/shm did not stop with ENOSPC: $line"
written=$(awk '{ print $3 }' <<< "$line")
[ "$written" -le "$size" ] || fail "wrote $written bytes into a tmpfs of $size"
# The probe removed its file: /tmp (the same tmpfs) is usable again, and the other
# sandbox's scratch space was never touched.
dsec-run exec bomb -- sh -c 'echo x > /tmp/after && rm /tmp/after' || fail "/tmp unusable after the fill"
line=$(probe other statfs /dev/shm)
[ "$(field_of "$line" free)" -gt $((size / 2)) ] || fail "the other sandbox's /dev/shm filled too: $line"

# Resource limits: no core dumps, a capped number of files, and no way up.
line=$(probe bomb rlimits)
[ "$(field_of "$line" core)" = 0/0 ] || fail "RLIMIT_CORE is not 0: $line"
nofile=$(field_of "$line" nofile)
{ [ "${nofile#*/}" != inf ] && [ "${nofile#*/}" -le 1048576 ]; } || fail "RLIMIT_NOFILE not capped: $line"
expect bomb EPERM rlimit_raise core
expect bomb EPERM rlimit_raise nofile
PROBE_OPTS="--user 1000" expect bomb EPERM rlimit_raise nofile

host_unharmed other
echo ok
