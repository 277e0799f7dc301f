#!/bin/bash
# The soak under faults, short (scripts/soak.sh --short): 8 workers run sandbox
# lifecycles for 30 s (create, exec, ptys, cp both ways, snapshot, fork, reset, destroy)
# while the uppers' and the run directory's filesystems fill up, descriptors run out,
# the OOM killer takes hogs, layer mounts go and dsec tools and inits are SIGKILLed.
# No operation may hang, crash or fail without an error record, no listing may be
# corrupt, every survivor must work and, after gc, nothing may be left.
. "$(dirname "$0")/lib.sh"

"$DSEC_SRC/scripts/soak.sh" --short --work "$T/soak" > "$T/soak.json" 2> "$T/soak.err" \
    || fail "the soak failed: $(cat "$T/soak.err")"
jq -e '.type == "soak" and .ok and .failures == {} and .leaks == []' "$T/soak.json" > /dev/null \
    || fail "soak record: $(cat "$T/soak.json")"
# It did work, and faults did bite.
jq -e '.cycles >= 8 and .operations >= 50 and .by_kind.create.ok >= 4 and .survivors == 4' "$T/soak.json" > /dev/null \
    || fail "too little happened: $(jq -c '{cycles, operations, survivors, by_kind}' "$T/soak.json")"
jq -e '(.causes | length) >= 2 and (.faults | to_entries | map(select(.value > 0)) | length) >= 2' "$T/soak.json" > /dev/null \
    || fail "no faults bit: $(jq -c '{causes, faults}' "$T/soak.json")"
# The soak cleaned up after itself: its directory and its cgroup parent are gone.
[ -z "$(find "$T/soak" -mindepth 1 -maxdepth 1)" ] || fail "the soak left files: $(find "$T/soak" | head -5)"
! ls -d /sys/fs/cgroup/*/dsec-* /sys/fs/cgroup/dsec-* 2> /dev/null | grep -q "$(jq -r .cgroup_parent "$T/soak.json")" \
    || fail "the soak left its cgroup parent"
sed -n 2,4p "$T/soak.err"
echo "ok: $(jq -r '"\(.cycles) cycles, \(.operations) operations, causes \(.causes | tostring)"' "$T/soak.json")"
