#!/bin/bash
# dsec-run snapshot under faults: unknown and destroyed sandboxes, a kill in the middle
# (no partial layer, the sandbox thawed by the watchdog at once), the holder and its
# watchdog both killed (the next snapshot thaws it), and a store that fills up while
# packing (no_space, nothing published, nothing left in staging, the sandbox unharmed).
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
ln -sf busybox "$T/base/bin/dd"
dsec-layer build "$T/base" --name base > /dev/null
on_exit 'dsec-run ls | dsec-run destroy --force > /dev/null'

one_error() {  # CODE: stdout is one error record with CODE, stderr one line
    jq -e --arg c "$1" '.type == "error" and .code == $c' "$T/out" > /dev/null || fail "want $1, got $(cat "$T/out")"
    [ "$(wc -l < "$T/err")" = 1 ] || fail "stderr is not one line: $(cat "$T/err")"
}
expect_exit 1 sh -c "dsec-run snapshot nosuch > '$T/out' 2> '$T/err'"
one_error not_found
dsec-run create --layers base --id gone > /dev/null
dsec-run destroy gone > /dev/null
expect_exit 1 sh -c "dsec-run snapshot gone > '$T/out' 2> '$T/err'"
one_error not_found

# A sandbox whose init died: not_running; reset starts it again.
dsec-run create --layers base --id dead > /dev/null
kill -9 "$(dsec-run inspect dead | jq -r .pid)"
for _ in $(seq 100); do [ "$(dsec-run inspect dead | jq -r .state)" = dead ] && break; sleep 0.02; done
expect_exit 1 sh -c "dsec-run snapshot dead > '$T/out' 2> '$T/err'"
one_error not_running
dsec-run reset dead > /dev/null || fail "reset of a sandbox whose init died"
dsec-run exec dead -- true || fail "reset did not bring a dead sandbox back"

layers_before=$(dsec-layer ls | jq -r .digest | sort)
dsec-run create --layers base --id big > /dev/null
# The freezer dsec uses: cgroup.freeze on the unified tree, else the v1 freezer.
dirs=$(dsec-run inspect big | jq -r '.cgroup.dirs[]')
freeze_file=$(for d in $dirs; do [ -f "$d/cgroup.freeze" ] && echo "$d/cgroup.freeze"; done | head -1)
[ -n "$freeze_file" ] || freeze_file=$(for d in $dirs; do [ -f "$d/freezer.state" ] && echo "$d/freezer.state"; done | head -1)
[ -n "$freeze_file" ] || skip "no cgroup freezer for the sandbox"
frozen() {  # read without a fork: kill_when_frozen must act within the frozen window
    local v
    read -r v < "$freeze_file" || return 1
    [[ $v == 1 || $v == FROZEN || $v == FREEZING ]]
}
dsec-run exec big -- sh -c 'for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/big$i bs=1M count=100 2>/dev/null; done'

# Catches the snapshot (the holder) with the sandbox frozen and stops it there (SIGSTOP):
# the frozen window lasts as long as the upper's copy, and on a loaded host what follows
# (finding the watchdog, the kills) took longer, so the snapshot had thawed the sandbox
# and ended before it was killed.
kill_when_frozen() {
    dsec-run snapshot big > "$T/out" 2> "$T/err" &
    holder=$!
    for _ in $(seq 2000); do frozen && break; sleep 0.005; done
    kill -STOP $holder
    frozen || fail "never saw the sandbox frozen during a snapshot"
}
# A snapshot a failure leaves stopped goes with the test.
on_exit 'kill -9 $(jobs -p) 2> /dev/null || true'

# Killed while the sandbox is frozen: kill -9.
kill_when_frozen
kill -9 $holder
wait $holder 2>/dev/null || true
for _ in $(seq 100); do frozen || break; sleep 0.02; done
frozen && fail "sandbox still frozen 2 s after its snapshot was killed"
dsec-run exec big -- true || fail "sandbox unusable after a killed snapshot"
[ "$(dsec-layer ls | jq -r .digest | sort)" = "$layers_before" ] || fail "a killed snapshot published a layer"
ls "$DSEC_ROOT"/layers/*.erofs | grep -qv "$(dsec-layer ls base | jq -r '.digest | ltrimstr("sha256:")')" \
    && fail "a killed snapshot left an image in the store"
dsec-layer gc > /dev/null
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "gc left the killed snapshot's staging: $(ls "$DSEC_ROOT/layers/tmp")"

# SIGTERM: stops at once (exit 130), thaws, clears its mark, removes its staging.
kill_when_frozen
kill -TERM $holder
kill -CONT $holder
rc=0
wait $holder || rc=$?
[ "$rc" = 130 ] || fail "snapshot interrupted by SIGTERM exited $rc"
frozen && fail "sandbox frozen after an interrupted snapshot"
dsec-run inspect big | jq -e '.snapshot == null' > /dev/null || fail "an interrupted snapshot left its mark"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "an interrupted snapshot left staging: $(ls "$DSEC_ROOT/layers/tmp")"
[ "$(dsec-layer ls | jq -r .digest | sort)" = "$layers_before" ] || fail "an interrupted snapshot published a layer"

# The holder and its watchdog both killed: frozen, marked; the next snapshot thaws it.
kill_when_frozen
# The watchdog is the holder's child that is dsec-run itself (by then the holder may
# also be running mkfs.erofs: left to die with its parent).
# (ps fails when it finds no child: the check below says so, not a silent exit.)
watchdog=$(ps -o pid=,comm= --ppid $holder | awk '$2 == "dsec-run" {print $1}' || true)
[ "$(wc -w <<< "$watchdog")" = 1 ] || fail "no single watchdog beside the snapshot: $(ps -o pid=,comm= --ppid $holder)"
kill -9 "$watchdog" $holder
wait $holder 2>/dev/null || true
frozen || fail "expected the sandbox left frozen"
dsec-run inspect big | jq -e '.snapshot.pid > 0' > /dev/null || fail "no snapshot mark in the state"
dsec-run snapshot big > /dev/null || fail "snapshot after an abandoned one"
frozen && fail "the abandoned freeze was not thawed"
dsec-run inspect big | jq -e '.snapshot == null' > /dev/null || fail "snapshot mark left in the state"
dsec-layer gc > /dev/null

# A store whose staging fills up: no_space, nothing published, the sandbox unharmed.
layers_before=$(dsec-layer ls | jq -r .digest | sort)
mount -t tmpfs -o size=16M full "$DSEC_ROOT/layers/tmp"
on_exit "umount -l '$DSEC_ROOT/layers/tmp'"
expect_exit 1 sh -c "dsec-run snapshot big > '$T/out' 2> '$T/err'"
one_error no_space
frozen && fail "sandbox left frozen after a full disk"
dsec-run exec big -- sh -c 'test -s /big6 && echo ok > /after' || fail "sandbox unusable after a full disk"
[ "$(dsec-layer ls | jq -r .digest | sort)" = "$layers_before" ] || fail "a failed snapshot published a layer"
[ -z "$(ls -A "$DSEC_ROOT/layers/tmp")" ] || fail "staging left after a full disk: $(ls -A "$DSEC_ROOT/layers/tmp")"
echo ok
