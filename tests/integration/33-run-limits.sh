#!/bin/bash
# Limits that bite: out of memory kills inside the sandbox only (the init survives and
# the kill is counted), --disk caps what the sandbox can write, --pids caps forks.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id lim --memory 32M --pids 20 --disk 2M > /dev/null
on_exit "dsec-run destroy --force lim > /dev/null"

# What enters the sandbox is the OOM killer's first choice; the init is not.
[ "$(dsec-run exec lim -- cat /proc/self/oom_score_adj)" = 1000 ] || fail "exec'd commands are not the OOM killer's first choice"
[ "$(dsec-run exec lim -- cat /proc/1/oom_score_adj)" != 1000 ] || fail "the init is as likely an OOM victim as the commands"
# A one-shot's command too, and what it forks at once, though they cannot write it
# themselves (their init is a copy of dsec-run); the init only while it forks them.
[ "$(dsec-run run --layers base -- sh -c 'cat /proc/self/oom_score_adj & wait')" = 1000 ] ||
    fail "a one-shot's command is not the OOM killer's first choice"
[ "$(dsec-run run --layers base -- sh -c 'sleep 0.2; cat /proc/1/oom_score_adj')" != 1000 ] ||
    fail "a one-shot's init is as likely an OOM victim as its command"

# Every command is in each of the sandbox's groups, the init's: one the init forks, and
# one joined from outside (another user), whose helper enters the v1 groups by their
# `tasks` files and the unified tree's at its clone (CLONE_INTO_CGROUP).
init_cgroups=$(cat "/proc/$(dsec-run inspect lim | jq -r .pid)/cgroup")
grep -q 'lim$' <<< "$init_cgroups" || fail "the init is in no group of the sandbox: $init_cgroups"
for how in served joined; do
    if [ $how = served ]; then opts=(); else opts=(--user 1000); fi
    dsec-run exec "${opts[@]}" lim -- sleep 2913 > /dev/null 2>&1 &
    cmd=
    for i in $(seq 1 50); do cmd=$(pgrep -f '^sleep 2913$') && break; sleep 0.1; done
    [ -n "$cmd" ] || fail "$how: the command did not start"
    [ "$(cat "/proc/$cmd/cgroup")" = "$init_cgroups" ] ||
        fail "$how: the command's groups differ from the init's: $(cat "/proc/$cmd/cgroup")"
    kill "$cmd"
    wait
done

# A shell that holds 100 MB in a variable is killed by the OOM killer.
r=$(dsec-run exec --json lim -- sh -c 'a=$(yes | head -c 100000000); echo survived' || true)
echo "$r" | jq -e '.signal == 9 and (.stdout | contains("survived") | not)' > /dev/null || fail "no OOM kill: $(echo "$r" | jq -c 'del(.stdout)')"
dsec-run exec lim -- true || fail "the sandbox did not survive its OOM"
dsec-run inspect lim | jq -e '.state == "running" and .oom_kills >= 1' > /dev/null || fail "oom not reported: $(dsec-run inspect lim)"

# --disk: the upper is capped.
expect_exit 1 dsec-run exec lim -- sh -c 'head -c 4000000 /dev/zero > /big'
dsec-run exec lim -- rm -f /big
dsec-run exec lim -- sh -c 'head -c 100000 /dev/zero > /small' || fail "a small write failed under --disk"
[ -z "$(ls "$DSEC_ROOT/sandboxes/lim/upper" 2>/dev/null)" ] || fail "--disk wrote to the on-disk upper"

# --pids: a fork bomb stops at the limit, and the sandbox still works.
out=$(dsec-run exec lim -- sh -c 'for i in $(seq 1 40); do sleep 1 & done 2>&1; wait' 2>&1 || true)
echo "$out" | grep -q "Resource temporarily unavailable\|can't fork" || fail "--pids did not stop the forks: $out"
# Once the sleeps end (and the init has reaped them) the sandbox takes commands again.
for i in $(seq 1 30); do dsec-run exec lim -- true 2> /dev/null > /dev/null && break; sleep 0.1; done
dsec-run exec lim -- true || fail "the sandbox is unusable after hitting --pids"
echo ok
