#!/bin/bash
# dsec-run create/exec/ls/inspect/destroy on one sandbox: namespaces, limits, records,
# and nothing left behind (no host mounts, no cgroups, no state, no upper).
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
cg=/sys/fs/cgroup
mounts_before=$(wc -l < /proc/self/mounts)

rec=$(dsec-run create --layers base --id life1 --memory 64M --cpus 0.5 --pids 50 \
        --env FOO=bar --label team=a --ttl 30m --idle-ttl 5m --hostname box)
echo "$rec" | jq -e '.type == "sandbox" and .id == "life1" and .state == "running" and .pid > 0' > /dev/null \
    || fail "create record: $rec"
echo "$rec" | jq -e '.limits.memory == 67108864 and .ttl == 1800 and .idle_ttl == 300 and .labels.team == "a"' > /dev/null \
    || fail "limits/ttl/labels not recorded: $rec"
# Layer mounts may be added once; a sandbox adds none.
mounts_one=$(wc -l < /proc/self/mounts)
dsec-run create --layers base --id life2 > /dev/null
[ "$(wc -l < /proc/self/mounts)" = "$mounts_one" ] || fail "a sandbox added a host mount"

# Inside: pid 1 is the init, own hostname, loopback up, env, limits visible in the cgroup.
out=$(dsec-run exec life1 -- sh -c 'echo $FOO; hostname; cat /proc/1/cmdline | head -c 9; echo; cat /sys/class/net/lo/operstate 2>/dev/null || ip link 2>/dev/null; ls /proc/1 > /dev/null && echo proc-ok')
echo "$out" | grep -qx bar || fail "env not passed: $out"
echo "$out" | grep -qx box || fail "hostname not set: $out"
echo "$out" | grep -q dsec-init || fail "pid 1 is not dsec-init: $out"
dsec-run exec life1 -- sh -c 'test ! -e /proc/kcore || test ! -s /proc/kcore' || fail "/proc/kcore not masked"
# The overlay is volatile: no sync of the host's filesystem from inside or at teardown.
dsec-run exec life1 -- cat /proc/mounts | grep -q ' / overlay .*fsync=volatile' || fail "root overlay not volatile"
expect_exit 1 dsec-run exec life1 -- sh -c 'echo x > /proc/sys/kernel/hostname'
# /tmp and /dev/shm are sticky and world-writable; /dev, /dev/shm and /tmp share one tmpfs
# (one superblock per sandbox, not three); masked /proc directories are empty and read-only.
modes=$(dsec-run exec life1 -- /bin/busybox stat -c '%n %a %d' /tmp /dev/shm /dev | tr '\n' ' ')
read -r _ tmode tdev _ smode sdev _ dmode ddev <<<"$modes"
[ "$tmode $smode $dmode" = "1777 1777 755" ] || fail "modes of /tmp /dev/shm /dev: $modes"
[ "$tdev" = "$sdev" ] && [ "$sdev" = "$ddev" ] || fail "/tmp, /dev/shm and /dev are separate filesystems: $modes"
dsec-run exec life1 -- sh -c 'echo hi > /tmp/a && echo hi > /dev/shm/b' || fail "/tmp or /dev/shm not writable"
dsec-run exec life1 -- sh -c 'for d in /proc/acpi /proc/driver; do [ -d $d ] || continue;
    [ -z "$(ls -A $d)" ] && ! touch $d/x 2>/dev/null || exit 1; done' || fail "a masked /proc directory is not empty and read-only"
dsec-run exec life1 -- sh -c 'ls /sys | wc -l' | grep -qx 0 || fail "/sys is not empty inside"
# Loopback is up: a server on 127.0.0.1 answers inside (busybox nc may be absent: check flags).
dsec-run exec life1 -- cat /proc/net/dev | grep -q 'lo:' || fail "no loopback"

# Exit codes pass through.
expect_exit 3 dsec-run exec life1 -- sh -c 'exit 3'
expect_exit 127 dsec-run exec life1 -- no-such-command
expect_exit 137 dsec-run exec life1 -- sh -c 'kill -9 $$'

# Limits in the cgroups (v1 file names on hybrid/v1 hosts; v2 otherwise).
if [ -d $cg/memory/$DSEC_CGROUP_PARENT/life1 ]; then
    [ "$(cat $cg/memory/$DSEC_CGROUP_PARENT/life1/memory.limit_in_bytes)" = 67108864 ] || fail "memory limit not set"
    [ "$(cat $cg/cpu/$DSEC_CGROUP_PARENT/life1/cpu.cfs_quota_us)" = 50000 ] || fail "cpu quota not set"
    [ "$(cat $cg/pids/$DSEC_CGROUP_PARENT/life1/pids.max)" = 50 ] || fail "pids limit not set"
else
    [ "$(cat $cg/$DSEC_CGROUP_PARENT/life1/memory.max)" = 67108864 ] || fail "memory.max not set"
fi

# ls and inspect.
dsec-run ls | jq -se 'length == 2 and all(.state == "running") and (map(.id) | sort == ["life1","life2"])' > /dev/null \
    || fail "ls: $(dsec-run ls)"
dsec-run ls --label team=a | jq -se 'length == 1 and .[0].last_exec != null and .[0].memory > 0' > /dev/null \
    || fail "ls --label / last_exec / memory"
dsec-run inspect life2 | jq -e '.rootfs.layers[0].name == "base"' > /dev/null || fail "inspect"
expect_exit 1 dsec-run inspect nosuch
# The last name of a layer in use cannot take the layer with it: refused, nothing changed.
out=$(dsec-layer rm base 2>/dev/null) && fail "rm of a layer in use succeeded"
[ "$(jq -r .code <<<"$out")" = busy ] || fail "rm of a layer in use: $out"
dsec-layer inspect base > /dev/null || fail "rm of a layer in use removed its name"

# destroy: both, then nothing is left.
pid=$(echo "$rec" | jq -r .pid)
dsec-run ls | dsec-run destroy | jq -se 'length == 2 and all(.state == "destroyed")' > /dev/null || fail "destroy"
# (a zombie waiting for its new parent to reap it does not count)
[ ! -e /proc/$pid ] || grep -q "^[0-9]* ([^)]*) Z" /proc/$pid/stat || fail "init still alive"
[ -z "$(ls "$DSEC_RUN/sandboxes")" ] || fail "state left"
[ -z "$(ls "$DSEC_ROOT/sandboxes" 2>/dev/null)" ] || fail "upper left"
for d in $cg/*/$DSEC_CGROUP_PARENT/life1 $cg/$DSEC_CGROUP_PARENT/life1; do [ ! -d "$d" ] || fail "cgroup left: $d"; done
# Unknown ids: an error (exit 1), or "absent" with --force.
expect_exit 1 dsec-run destroy life1
dsec-run destroy --force life1 | jq -e '.state == "absent"' > /dev/null || fail "destroy --force"
# A state directory whose state file is not there (a create that has not written it, a
# destroy removing it) is creating for ls, never broken (the soak saw broken ones).
mkdir "$DSEC_RUN/sandboxes/half"
dsec-run ls | jq -se 'length == 1 and .[0].state == "creating"' > /dev/null || fail "ls of a half-made sandbox: $(dsec-run ls)"
rmdir "$DSEC_RUN/sandboxes/half"
echo "ok"
