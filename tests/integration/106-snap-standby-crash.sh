#!/bin/bash
# A standby after kills: what a reset or a standby's making killed at any point leaves
# (an init the state does not name, an upper neither the rootfs nor the standby names) is
# removed by `dsec-reclaim gc`, the sandbox keeps running or is dead and destroyed by gc,
# and destroy leaves nothing behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/snap-lib.sh"

make_busybox_tree "$T/base"
dsec-layer build "$T/base" --name base > /dev/null
on_exit 'dsec-run ls | dsec-run destroy --force > /dev/null'

inits_in() {  # pids in the sandbox's cgroup that are pid 1 of a namespace of their own
    local procs pid
    procs="$(dsec-run inspect "$1" | jq -r '.cgroup.dirs[0]')/cgroup.procs"
    for pid in $(cat "$procs"); do
        [ "$(awk '/^NSpid:/ {print NF, $NF}' "/proc/$pid/status" 2>/dev/null)" = "3 1" ] && echo "$pid"
    done
    true
}
named_dirs() {  # the upper directories the state names, as names in the data directory
    local upper
    for upper in $(dsec-run inspect "$1" | jq -r '.rootfs.upper, (.standby.upper // empty)'); do
        # (the rootfs's first upper and work lie in the data directory itself)
        if [ "$(dirname "$upper")" = "$DSEC_ROOT/sandboxes/$1" ]; then printf 'upper\nwork\n'; else basename "$(dirname "$upper")"; fi
    done | sort
}
settled() {  # ID: only its init and its standby run, only their uppers are on disk
    local id=$1 want
    want=$(dsec-run inspect "$id" | jq -r '.pid, (.standby.pid // empty)' | sort)
    for _ in $(seq 100); do [ "$(inits_in "$id" | sort)" = "$want" ] && break; sleep 0.02; done
    [ "$(inits_in "$id" | sort)" = "$want" ] || fail "$id: inits $(inits_in "$id" | xargs) against named $(echo $want)"
    [ "$(ls "$DSEC_ROOT/sandboxes/$id" | sort)" = "$(named_dirs "$id")" ] \
        || fail "$id: uppers on disk $(ls "$DSEC_ROOT/sandboxes/$id" | xargs) against named $(named_dirs "$id" | xargs)"
}

dsec-run create --layers base --id box > /dev/null
dsec-run reset --standby box > /dev/null

# A kill between a standby's start and the state write that names it: an unnamed init.
spid=$(dsec-run inspect box | jq -r .standby.pid)
state="$DSEC_RUN/sandboxes/box/state.json"
jq -c 'del(.standby)' "$state" > "$T/s" && cp "$T/s" "$state"
dsec-reclaim gc --grace 0s > "$T/gc" || fail "gc"
jq -se --arg p "$spid" 'map(select(.kind == "orphan_standby" and .path == $p)) | length == 1' "$T/gc" > /dev/null \
    || fail "gc did not report the orphan standby: $(cat "$T/gc")"
jq -se 'map(select(.kind == "orphan_upper")) | length == 1' "$T/gc" > /dev/null || fail "gc left its upper: $(cat "$T/gc")"
gone "$spid" || fail "gc left the orphan standby running"
settled box
dsec-run exec box -- true || fail "gc harmed the running sandbox"

# A kill after a swap's state write and before the old init's kill: an unnamed old init.
dsec-run reset --standby box > /dev/null
st=$(dsec-run inspect box)
old=$(jq -r .pid <<<"$st")
spid=$(jq -r .standby.pid <<<"$st")
kill -CONT "$spid"
jq -c '.pid = .standby.pid | .pid_start = .standby.pid_start | .rootfs.upper = .standby.upper
    | .rootfs.work = .standby.work | del(.standby)' "$state" > "$T/s" && cp "$T/s" "$state"
dsec-run reset --standby box > /dev/null || fail "reset after a half-made swap"
settled box
gone "$old" || fail "the unnamed old init survived the next standby's making"

# kill -9 of dsec-run reset --standby at many points: running or dead, never a leftover
# after gc.
for delay in 0 0.001 0.002 0.003 0.005 0.007 0.01 0.013 0.016 0.02 0.03 0.04 0.06; do
    dsec-run reset --standby box > /dev/null 2>&1 &
    p=$!
    sleep "$delay"
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
    # gc leaves a sandbox whose lock is held to the next pass; the lock outlives the kill
    # while a child cloned just before it still exits.
    [ ! -e "$DSEC_RUN/sandboxes/box/lock" ] || flock -w 5 "$DSEC_RUN/sandboxes/box/lock" true
    dsec-reclaim gc --grace 0s > /dev/null || fail "gc after a kill at $delay s"
    # A kill between the old init's kill and the state write naming the new one leaves
    # the sandbox dead (gc may still have seen the old init exiting, and killed the
    # unnamed new one): the next gc destroys it.
    if [ "$(dsec-run ls --json | jq -r 'select(.id == "box") | .state')" = dead ]; then
        dsec-reclaim gc --grace 0s > /dev/null || fail "second gc after a kill at $delay s"
    fi
    if dsec-run inspect box > "$T/st" 2>/dev/null; then
        settled box
        dsec-run exec box -- true || fail "running sandbox does not exec after a kill at $delay s"
    else
        # gc destroyed a sandbox left without an init; nothing of it may be left.
        [ ! -e "$DSEC_ROOT/sandboxes/box" ] || fail "gc left the uppers of a dead sandbox"
        dsec-run create --layers base --id box > /dev/null
    fi
done

# destroy takes the standby with it.
dsec-run reset --standby box > /dev/null
spid=$(dsec-run inspect box | jq -r .standby.pid)
cg=$(dsec-run inspect box | jq -r '.cgroup.dirs[]')
dsec-run destroy box > /dev/null || fail "destroy"
gone "$spid" || fail "destroy left the standby"
[ -z "$(ls "$DSEC_ROOT/sandboxes")" ] || fail "destroy left: $(ls "$DSEC_ROOT/sandboxes")"
for d in $cg; do [ ! -e "$d" ] || fail "destroy left the cgroup $d"; done
echo ok
