#!/bin/bash
# dsec-run reset --standby: after each reset a stopped init waits for the next one, and
# that reset only swaps to it. Each reset gives fresh state (files, /tmp, /dev/shm,
# SysV IPC, hostname, processes) with the same id, limits and policy; the standby has
# namespaces and an upper of its own, counts in the sandbox's cgroup, is shown in
# inspect, is not reachable from the running sandbox, and goes with destroy.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/snap-lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/base/work" "$T/base/answers" "$T/base/lib/x86_64-linux-gnu" "$T/base/lib64"
echo base > "$T/base/work/file"
echo secret > "$T/base/answers/key"
cp /usr/bin/ipcmk "$T/base/bin/"
cp /lib/x86_64-linux-gnu/libc.so.6 "$T/base/lib/x86_64-linux-gnu/"
cp /lib64/ld-linux-x86-64.so.2 "$T/base/lib64/"
for app in hostname grep; do ln -sf busybox "$T/base/bin/$app"; done
dsec-layer build "$T/base" --name base > /dev/null
echo '{"files": {"hidden": ["/answers"]}}' > "$T/policy.json"
on_exit 'dsec-run ls | dsec-run destroy --force > /dev/null'

ns_of() { for n in mnt pid net ipc uts user; do readlink "/proc/$1/ns/$n"; done; }
cgroup_procs() { cat "$(dsec-run inspect box | jq -r '.cgroup.dirs[0]')/cgroup.procs"; }

for mode in plain disk; do
    opts=()
    [ $mode = disk ] && opts=(--disk 32M)
    dsec-run create --layers base --id box --memory 64M --pids 64 --policy "$T/policy.json" "${opts[@]}" > /dev/null
    before=$(dsec-run inspect box)
    # The first reset has no standby yet: it starts an init, then makes one.
    dsec-run reset --standby box > /dev/null || fail "$mode: first reset --standby"
    for round in 1 2 3; do
        st=$(dsec-run inspect box)
        spid=$(jq -r '.standby.pid // empty' <<<"$st")
        [ -n "$spid" ] || fail "$mode/$round: inspect shows no standby: $st"
        ipid=$(jq -r .pid <<<"$st")
        # Stopped, in the sandbox's cgroup, with namespaces and an upper of its own.
        [ "$(awk '{print $3}' "/proc/$spid/stat")" = T ] || fail "$mode/$round: standby not stopped"
        cgroup_procs | grep -qx "$spid" || fail "$mode/$round: standby not in the sandbox's cgroup"
        [ -z "$(comm -12 <(ns_of "$ipid" | sort) <(ns_of "$spid" | sort))" ] \
            || fail "$mode/$round: standby shares a namespace with the init"
        [ "$(jq -r .standby.upper <<<"$st")" != "$(jq -r .rootfs.upper <<<"$st")" ] || fail "$mode/$round: shared upper"

        # An episode: files, /tmp, /dev/shm, SysV IPC, hostname, a process left running.
        dsec-run exec box -- sh -c 'echo changed > /work/file && echo t > /tmp/t && echo s > /dev/shm/s &&
            ipcmk -M 4096 > /dev/null && ipcmk -Q > /dev/null && (hostname planted 2>/dev/null || true)'
        [ "$(dsec-run exec box -- sh -c 'tail -n +2 /proc/sysvipc/shm | wc -l')" = 1 ] || fail "$mode/$round: no shm made"
        # Root inside signals every process it can see: not the standby.
        dsec-run exec box -- sh -c 'sleep 100 & kill -CONT -1 && kill -9 -1' || fail "$mode/$round: kill -1 inside"
        [ "$(awk '{print $3}' "/proc/$spid/stat")" = T ] || fail "$mode/$round: the sandbox reached its standby"
        dsec-run exec box -- sleep 1000 &
        sleeper=$!
        # Running, not only asked for: until its execve, the init's child for it is a dsec-init too.
        for _ in $(seq 100); do dsec-run exec box -- sh -c 'ps -o comm | grep -qx sleep' && break; sleep 0.02; done
        # Hostile view: the standby is nowhere the sandbox can see or name.
        [ "$(dsec-run exec box -- ps -o pid,comm | grep -c dsec-init)" = 1 ] || fail "$mode/$round: sandbox sees two inits"
        [ ! -e "$(jq -r .standby.upper <<<"$st")/work" ] || fail "$mode/$round: a write reached the standby's upper"
        dsec-run exec box -- cat /answers/key 2>/dev/null && fail "$mode/$round: policy not applied"

        rec=$(dsec-run reset --standby box) || fail "$mode/$round: reset"
        wait $sleeper 2>/dev/null && fail "$mode/$round: a process survived the reset"
        jq -e --argjson b "$before" --argjson s "$spid" '.id == $b.id and .pid == $s and .state == "running"
            and .limits == $b.limits and .security == $b.security and .cgroup == $b.cgroup and .guard == $b.guard
            and .hostname == $b.hostname' <<<"$rec" > /dev/null || fail "$mode/$round: reset record: $rec"
        [ "$(awk '{print $3}' "/proc/$spid/stat")" != T ] || fail "$mode/$round: new init still stopped"
        gone "$ipid" || fail "$mode/$round: old init alive"
        [ "$(dsec-run exec box -- cat /work/file)" = base ] || fail "$mode/$round: file not reset"
        dsec-run exec box -- sh -c 'test ! -e /tmp/t && test ! -e /dev/shm/s' || fail "$mode/$round: /tmp or /dev/shm kept"
        [ "$(dsec-run exec box -- sh -c 'tail -n +2 /proc/sysvipc/shm | wc -l; tail -n +2 /proc/sysvipc/msg | wc -l')" = "0
0" ] || fail "$mode/$round: SysV IPC kept"
        [ "$(dsec-run exec box -- hostname)" = box ] || fail "$mode/$round: hostname kept"
        [ "$(dsec-run exec box -- ps -o pid | wc -l)" -le 3 ] || fail "$mode/$round: processes left"
        dsec-run exec box -- cat /answers/key 2>/dev/null && fail "$mode/$round: policy lost at reset"
        [ "$(dsec-run inspect box | jq -r '.standby.pid')" != "$spid" ] || fail "$mode/$round: no new standby"
    done
    # Only the running init's upper and the standby's are left on disk.
    st=$(dsec-run inspect box)
    [ "$(ls "$DSEC_ROOT/sandboxes/box" | sort)" = "$(jq -r '.rootfs.upper, .standby.upper' <<<"$st" | xargs -n1 dirname | xargs -n1 basename | sort)" ] \
        || fail "$mode: uppers left: $(ls "$DSEC_ROOT/sandboxes/box")"
    # kill signals the sandbox's processes, never the standby; a snapshot freezes and
    # thaws the cgroup the standby is in, and leaves it stopped.
    spid=$(jq -r .standby.pid <<<"$st")
    dsec-run snapshot box > /dev/null || fail "$mode: snapshot of a sandbox with a standby"
    [ "$(awk '{print $3}' "/proc/$spid/stat")" = T ] || fail "$mode: a snapshot continued the standby"
    dsec-run kill box > /dev/null 2>&1 || true
    [ "$(awk '{print $3}' "/proc/$spid/stat")" = T ] || fail "$mode: dsec-run kill reached the standby"
    # A plain reset (no --standby) uses the standby and makes none.
    dsec-run reset box > /dev/null || fail "$mode: reset without --standby"
    [ "$(dsec-run inspect box | jq -r .pid)" = "$spid" ] || fail "$mode: the standby was not used"
    dsec-run inspect box | jq -e 'has("standby") | not' > /dev/null || fail "$mode: a standby without --standby"
    dsec-run reset --standby box > /dev/null
    spid=$(dsec-run inspect box | jq -r .standby.pid)
    dsec-run destroy box > /dev/null
    gone "$spid" || fail "$mode: destroy left the standby running"
    [ ! -e "$DSEC_ROOT/sandboxes/box" ] || fail "$mode: destroy left uppers"
done

# create --standby: the first reset already swaps to a ready init (batch too).
dsec-layer ls base | dsec-mount --count 2 | dsec-run create --standby -P 2 > "$T/made" || fail "create --standby"
for id in $(jq -r .id "$T/made"); do
    spid=$(dsec-run inspect "$id" | jq -r '.standby.pid // empty')
    [ -n "$spid" ] || fail "create --standby made no standby for $id"
    [ "$(dsec-run reset "$id" | jq -r .pid)" = "$spid" ] || fail "the first reset of $id did not use its standby"
done

# A standby whose init died (OOM, a kill by hand) is not used: the reset starts one.
dsec-run create --layers base --id dead > /dev/null
dsec-run reset --standby dead > /dev/null
spid=$(dsec-run inspect dead | jq -r .standby.pid)
kill -9 "$spid"
gone "$spid" || fail "the standby did not die"
rec=$(dsec-run reset dead) || fail "reset with a dead standby"
[ "$(jq -r .pid <<<"$rec")" != "$spid" ] || fail "a dead standby was used"
dsec-run exec dead -- true || fail "not running after a reset with a dead standby"
expect_exit 1 sh -c "dsec-run reset --standby nosuch > '$T/out' 2> /dev/null"
jq -e '.type == "error" and .code == "not_found"' "$T/out" > /dev/null || fail "reset --standby of an unknown id: $(cat "$T/out")"
echo ok
