#!/bin/bash
# dsec-reclaim gc removes every kind of leftover a crash makes (dead and zombie inits,
# half-created and half-destroyed sandboxes, a state directory without a state file, a
# lost run directory whose init still runs, a stray cgroup with a process in it, an upper
# without a sandbox, id ranges, an unused layer mount, build temp files) and nothing of a
# live sandbox; --dry-run only lists; a second pass finds nothing; the cgroup parent goes
# with the last sandbox. dsec-run ls calls a zombie init dead.
. "$(dirname "$0")/lib.sh"
# Whatever a failure leaves running goes (gc also takes what lost its state).
on_exit 'dsec-run ls 2> /dev/null | jq -r .id | xargs -r dsec-run destroy -f > /dev/null 2>&1; dsec-reclaim gc --grace 0s > /dev/null 2>&1'

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
mkdir -p "$T/tree2" && echo other > "$T/tree2/file"
dsec-layer build "$T/tree2" --name other > /dev/null

dsec-run create --layers base --id live > /dev/null
dsec-run exec live -- sh -c 'echo kept > /root/mark'

# A dead init, and a zombie one: its parent (a subreaper here) never reaps it.
dsec-run create --layers base --id dead > /dev/null
kill -9 "$(jq -r .pid "$DSEC_RUN/sandboxes/dead/state.json")"
perl -e 'syscall(157, 36, 1, 0, 0, 0) == 0 or die "prctl"; $| = 1;
         system("dsec-run create --layers base --id zombie > /dev/null") == 0 or die "create";
         print "ready\n"; sleep 600' > "$T/reaper.out" &
reaper=$!
on_exit "kill $reaper 2> /dev/null"
for _ in $(seq 100); do grep -q ready "$T/reaper.out" 2> /dev/null && break; sleep 0.1; done
zpid=$(jq -r .pid "$DSEC_RUN/sandboxes/zombie/state.json")
kill -9 "$zpid"
for _ in $(seq 50); do [ "$(awk '{print $3}' "/proc/$zpid/stat")" = Z ] && break; sleep 0.1; done
[ "$(awk '{print $3}' "/proc/$zpid/stat")" = Z ] || fail "the init of zombie is not a zombie"
dsec-run ls | jq -se 'map(select(.id == "zombie"))[0].state == "dead"' > /dev/null || fail "ls calls a zombie init running"

# Half-created and half-destroyed (their tools were killed), and a bare state directory.
for s in creating destroying; do
    dsec-run create --layers base --id "half-$s" > /dev/null
    jq -c ".state = \"$s\"" "$DSEC_RUN/sandboxes/half-$s/state.json" > "$T/s" && mv "$T/s" "$DSEC_RUN/sandboxes/half-$s/state.json"
done
mkdir "$DSEC_RUN/sandboxes/nostate"
# A run directory lost while its init runs on, and a stray cgroup with a process inside.
dsec-run create --layers base --id lost > /dev/null
lost_pid=$(jq -r .pid "$DSEC_RUN/sandboxes/lost/state.json")
rm -rf "$DSEC_RUN/sandboxes/lost"
sleep 600 &
stray=$!
on_exit "kill -9 $stray 2> /dev/null"
for d in /sys/fs/cgroup/pids /sys/fs/cgroup/memory /sys/fs/cgroup/unified; do
    [ -d "$d/$DSEC_CGROUP_PARENT" ] && mkdir "$d/$DSEC_CGROUP_PARENT/stray" && echo $stray > "$d/$DSEC_CGROUP_PARENT/stray/cgroup.procs"
done
# An upper dsec-mount made for a create that never came, on a layer nothing else uses.
dsec-layer ls other | dsec-mount > "$T/orphan.jsonl"
orphan=$(jq -r .id "$T/orphan.jsonl")
# An overlay a person looks into (dsec-mount --at) has an upper without a sandbox: it stays.
dsec-mount --at "$T/look" base > "$T/look.jsonl"
look=$(jq -r .id "$T/look.jsonl")
# What an interrupted layer build leaves.
mkdir -p "$DSEC_ROOT/layers/tmp/build-x1" && echo partial > "$DSEC_ROOT/layers/tmp/build-x1/image"
echo partial > "$DSEC_ROOT/layers/abc.json.tmp.123"
slots_before=$(ls "$DSEC_RUN/userns" | grep -vc '^\.lock$')

# --dry-run lists every kind and removes nothing.
dsec-reclaim gc --dry-run --grace 0s > "$T/dry.jsonl"
kinds=$(jq -sr 'map(.kind) | unique | join(" ")' "$T/dry.jsonl")
for k in dead_init half_created half_destroyed orphan_cgroup orphan_idrange orphan_upper layer_staging layer_temp; do
    [[ " $kinds " == *" $k "* ]] || fail "dry run lists no $k: $kinds"
done
jq -se 'all(.type == "event" and .event == "gc" and .dry_run == true)' "$T/dry.jsonl" > /dev/null || fail "dry-run records"
[ -d "$DSEC_RUN/sandboxes/dead" ] && [ -d "$DSEC_ROOT/sandboxes/$orphan" ] && kill -0 "$lost_pid" \
    || fail "--dry-run removed something"

# The default grace period spares fresh debris: a create may be on its way to it.
dsec-reclaim gc > "$T/graced.jsonl"
[ -d "$DSEC_ROOT/sandboxes/$orphan" ] && [ -d "$DSEC_RUN/sandboxes/nostate" ] || fail "gc ignored the grace period"
jq -se 'any(.id == "dead")' "$T/graced.jsonl" > /dev/null || fail "a dead init waits for no grace period"

dsec-reclaim gc --grace 0s > "$T/gc.jsonl"
for id in dead zombie half-creating half-destroying nostate lost; do
    [ ! -e "$DSEC_RUN/sandboxes/$id" ] || fail "state of $id left"
    [ ! -e "$DSEC_ROOT/sandboxes/$id" ] || fail "upper of $id left"
done
[ ! -e "$DSEC_ROOT/sandboxes/$orphan" ] || fail "orphan upper left"
# Gone, or dead and waiting for its parent to reap it.
gone() { [ ! -e "/proc/$1/stat" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2> /dev/null)" = Z ]; }
gone "$lost_pid" || fail "the init of the lost sandbox still runs"
gone $stray || fail "the process in the stray cgroup still runs"
left=$(ls -d /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT"/*/ 2> /dev/null | xargs -rn1 basename | sort -u | tr '\n' ' ')
[ "$left" = "live " ] || fail "cgroups left: $left"
[ "$(ls "$DSEC_RUN/userns" | grep -vc '^\.lock$')" = 1 ] || fail "id ranges left: $(ls "$DSEC_RUN/userns") (before: $slots_before)"
[ "$(dsec-mount ls | jq -r .name)" = base ] || fail "layer mounts left: $(dsec-mount ls | jq -c .)"
[ ! -e "$DSEC_ROOT/layers/tmp/build-x1" ] && [ ! -e "$DSEC_ROOT/layers/abc.json.tmp.123" ] || fail "layer build temp files left"
dsec-layer ls other > /dev/null || fail "gc removed a layer from the store"

[ -d "$DSEC_ROOT/sandboxes/$look" ] && [ -e "$T/look/bin/sh" ] || fail "gc removed the upper of a mounted overlay"
dsec-mount umount "$T/look"
dsec-reclaim gc --grace 0s | jq -se "any(.kind == \"orphan_upper\" and .id == \"$look\")" > /dev/null \
    || fail "the upper of an unmounted --at overlay stays"
# The live sandbox lost nothing; a second pass finds nothing.
[ "$(dsec-run exec live -- cat /root/mark)" = kept ] || fail "the live sandbox was touched"
[ -z "$(dsec-reclaim gc --grace 0s)" ] || fail "a second pass found more"

# With the last sandbox gone, its cgroup parent goes too.
dsec-run destroy live > /dev/null
dsec-reclaim gc | jq -se 'any(.kind == "empty_cgroup_parent")' > /dev/null || fail "no empty_cgroup_parent event"
! ls -d /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT" 2> /dev/null || fail "cgroup parent left"
echo "ok: removed $(jq -sr '[.[] | .kind] | join(" ")' "$T/graced.jsonl" "$T/gc.jsonl")"
