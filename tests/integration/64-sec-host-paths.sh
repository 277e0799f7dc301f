#!/bin/bash
# Red team, host paths: nothing a sandbox can read names where dsec keeps its state on
# the host ($DSEC_ROOT, $DSEC_RUN) or where its binaries are ($DSEC_BIN): not the init's
# argv or executable, not the mount table (overlay options included), not the cgroup
# paths, not any process's cmdline, environ, exe, cwd, root or descriptors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box hp
new_box hpdisk --disk 16M # the upper on a tmpfs of its own

for box in hp hpdisk; do
    # The init: argv, executable, environment.
    line=$(probe $box cmdline 1)
    [ "$(result_of "$line")" = ok ] || fail "$box: /proc/1/cmdline unreadable: $line"
    no_host_path "$box: /proc/1/cmdline" "$line"
    no_host_path "$box: /proc/1/exe" "$(probe $box exe 1)"
    no_host_path "$box: /proc/1/environ" "$(probe $box environ 1)"
    # The mount table, seen by a command and by the init.
    for f in /proc/self/mountinfo /proc/self/mounts /proc/1/mountinfo; do
        no_host_path "$box: $f" "$(dsec-run exec $box -- cat $f 2>&1)"
    done
    # Cgroup paths: the namespace's root only, without the host's group names.
    cg=$(dsec-run exec $box -- cat /proc/self/cgroup)
    case $cg in *"$DSEC_CGROUP_PARENT"*) fail "$box: /proc/self/cgroup names the host's cgroups: $cg" ;; esac
    # Every process of the sandbox, with one more running (a shell with a child).
    dsec-run exec $box -- sh -c 'sleep 30 & sleep 30' > /dev/null 2>&1 &
    bg=$!
    for _ in $(seq 1 50); do
        [ "$(dsec-run exec $box -- ps | grep -c '[s]leep 30')" = 2 ] && break
        sleep 0.05
    done
    line=$(probe $box scan 0 "$DSEC_ROOT" "$DSEC_RUN" "$DSEC_BIN" "$T")
    [ "$(result_of "$line")" = none ] || fail "$box: a process inside names the host: $line"
    kill $bg 2> /dev/null || true
    wait $bg 2> /dev/null || true
done
echo ok
