#!/bin/bash
# dsec-run fork: N new sandboxes from a running one's current files, held to the same
# limits, labels and security, each independent. dsec-run reset: a sandbox back to its
# layers in place (same id, limits, host ids; new processes; upper emptied), with and
# without --disk, also when paused; unknown ids are errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/snap-lib.sh"

make_reset_base

dsec-run create --layers base --id src --memory 64M --pids 64 --label team=a --env FOO=bar > /dev/null
dsec-run exec src -- sh -c 'echo changed > /work/file && echo new > /work/new && rm /etc/group'
out=$(dsec-run fork src --count 3 -P 2) || fail "fork"
[ "$(wc -l <<<"$out")" = 3 ] || fail "fork --count 3 wrote: $out"
jq -se 'all(.type == "sandbox" and .state == "running" and .forked_from == "src" and .labels.team == "a"
    and .limits.memory == 67108864 and .limits.pids == 64) and (map(.id) | unique | length) == 3' <<<"$out" > /dev/null \
    || fail "fork records: $out"
ids=$(jq -r .id <<<"$out")
for id in $ids; do
    [ "$(dsec-run exec "$id" -- cat /work/file /work/new)" = "changed
new" ] || fail "$id: files not forked"
    dsec-run exec "$id" -- test ! -e /etc/group || fail "$id: a deletion was not forked"
    [ "$(dsec-run exec "$id" -- sh -c 'echo $FOO')" = bar ] || fail "$id: environment not forked"
done
# Independent of each other and of the source.
first=$(head -1 <<<"$ids")
dsec-run exec "$first" -- sh -c 'echo mine > /work/file'
for id in src $(tail -n +2 <<<"$ids"); do
    [ "$(dsec-run exec "$id" -- cat /work/file)" = changed ] || fail "$id sees a fork's write"
done
# Different host id ranges.
[ "$(for id in src $ids; do dsec-run inspect "$id" | jq .security.host_uid; done | sort -u | wc -l)" = 4 ] \
    || fail "forks share a host id range"

# A --disk sandbox (upper on the init's tmpfs) forks with its cap; a paused one is
# snapshotted as it is and stays paused.
dsec-run create --layers base --id tmpfs --disk 16M > /dev/null
dsec-run exec tmpfs -- sh -c 'echo on-tmpfs > /work/t'
fork=$(dsec-run fork tmpfs) || fail "fork of a --disk sandbox"
fid=$(jq -r .id <<<"$fork")
[ "$(dsec-run exec "$fid" -- cat /work/t)" = on-tmpfs ] || fail "--disk fork lost its files"
jq -e '.limits.disk == 16777216' <<<"$fork" > /dev/null || fail "--disk cap not forked: $fork"
freeze=$(dsec-run inspect tmpfs | jq -r '.cgroup.dirs[]' | while read -r d; do
    [ -f "$d/cgroup.freeze" ] && echo "$d/cgroup.freeze" && break; done)
if [ -n "$freeze" ]; then
    echo 1 > "$freeze"
    dsec-run snapshot tmpfs > /dev/null || fail "snapshot of a paused sandbox"
    [ "$(cat "$freeze")" = 1 ] || fail "a snapshot thawed a paused sandbox"
    echo 0 > "$freeze"
fi

# reset: back to base, same id and limits, processes restarted.
for mode in plain disk; do
    opts=()
    [ $mode = disk ] && opts=(--disk 32M)
    id="r-$mode"
    dsec-run create --layers base --id "$id" --memory 64M "${opts[@]}" > /dev/null
    before=$(dsec-run inspect "$id")
    dsec-run exec "$id" -- sh -c 'echo changed > /work/file && mkdir /x && echo y > /x/y && rm /etc/passwd'
    dsec-run exec "$id" -- sleep 1000 &
    sleeper=$!
    sleep 0.2
    rec=$(dsec-run reset "$id") || fail "$mode: reset"
    wait $sleeper 2>/dev/null && fail "$mode: a process survived the reset"
    jq -e --argjson b "$before" '.id == $b.id and .pid != $b.pid and .resets == 1 and .state == "running"
        and .limits == $b.limits and .security == $b.security and .cgroup == $b.cgroup' <<<"$rec" > /dev/null \
        || fail "$mode: reset record: $rec"
    [ "$(dsec-run exec "$id" -- cat /work/file)" = base ] || fail "$mode: file not reset"
    dsec-run exec "$id" -- test ! -e /x || fail "$mode: created directory survived the reset"
    dsec-run exec "$id" -- test -f /etc/passwd || fail "$mode: deleted file not back"
    [ "$(dsec-run exec "$id" -- ps -o pid | wc -l)" -le 3 ] || fail "$mode: processes left: $(dsec-run exec "$id" -- ps)"
    dsec-run exec "$id" -- sh -c 'echo again > /work/file' || fail "$mode: not writable after reset"
done
# Only the new init's upper is left (in a directory of its own beside the first's).
[ "$(ls "$DSEC_ROOT/sandboxes/r-plain")" = "$(dsec-run inspect r-plain | jq -r .rootfs.upper | xargs dirname | xargs basename)" ] \
    || fail "reset left old uppers: $(ls "$DSEC_ROOT/sandboxes/r-plain")"

# A sandbox at (or one short of) its --pids limit resets: its dying processes leave room
# for the new init.
dsec-run create --layers base --id full --pids 12 > /dev/null
pids_dir=$(dsec-run inspect full | jq -r '.cgroup.dirs[]' | grep -m1 pids || true)
dsec-run exec full -- sh -c 'i=0; while [ $i -lt 20 ]; do sleep 1000 & i=$((i+1)); done; exec sleep 1000' 2> /dev/null &
if [ -n "$pids_dir" ]; then
    # (the count moves while the exec's own helpers come and go)
    for _ in $(seq 100); do [ "$(cat "$pids_dir/pids.current")" -ge 11 ] && break; sleep 0.05; done
fi
dsec-run reset full > /dev/null || fail "reset of a sandbox at its pids limit"
dsec-run exec full -- true || fail "sandbox at its pids limit not running after reset"

# A paused sandbox resets and runs.
freeze=$(dsec-run inspect r-plain | jq -r '.cgroup.dirs[]' | while read -r d; do
    [ -f "$d/cgroup.freeze" ] && echo "$d/cgroup.freeze" && break; done)
if [ -n "$freeze" ]; then
    echo 1 > "$freeze"
    dsec-run reset r-plain > /dev/null || fail "reset of a paused sandbox"
    [ "$(cat "$freeze")" = 0 ] || fail "paused sandbox still frozen after reset"
    dsec-run exec r-plain -- true || fail "paused sandbox not running after reset"
fi

expect_exit 1 sh -c "dsec-run reset nosuch > '$T/out' 2> /dev/null"
jq -e '.type == "error" and .code == "not_found"' "$T/out" > /dev/null || fail "reset of an unknown id: $(cat "$T/out")"
expect_exit 1 sh -c "dsec-run fork nosuch > '$T/out' 2> /dev/null"
jq -e '.type == "error" and .code == "not_found"' "$T/out" > /dev/null || fail "fork of an unknown id: $(cat "$T/out")"
echo ok
