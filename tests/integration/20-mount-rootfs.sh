#!/bin/bash
# dsec-mount: layers mounted once per host (file-backed EROFS, no loop device, directio,
# ro/nodev/nosuid, private propagation), rootfs records with fresh ids and uppers.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/task/work" "$T/task/etc"
echo task > "$T/task/work/hello.txt"
echo "task passwd" > "$T/task/etc/passwd"
base=$(dsec-layer build "$T/base" --name base | jq -r .digest)
task=$(dsec-layer build "$T/task" --name task | jq -r .digest)

out=$(dsec-layer ls base task | dsec-mount --count 3)
[ "$(wc -l <<<"$out")" = 3 ] || fail "expected 3 records: $out"
[ "$(jq -r .type <<<"$out" | sort -u)" = rootfs ] || fail "not rootfs records"
[ "$(jq -r .v <<<"$out" | sort -u)" = 1 ] || fail "no version"
[ "$(jq -r .id <<<"$out" | sort -u | wc -l)" = 3 ] || fail "ids not distinct"
jq -r .id <<<"$out" | grep -qvE '^[0-9a-f]{16}$' && fail "id is not 16 hex digits"
first=$(head -1 <<<"$out")
[ "$(jq -r '.layers | map(.name) | join(",")' <<<"$first")" = base,task ] || fail "layers not base first"
[ "$(jq -r '.layers[0].digest' <<<"$first")" = "$base" ] || fail "digest"
[ "$(jq -r '.lowerdirs[0]' <<<"$first")" = "$DSEC_RUN/layers/${task#sha256:}" ] || fail "lowerdirs not top first"
[ "$(jq -r '.lowerdirs[1]' <<<"$first")" = "$DSEC_RUN/layers/${base#sha256:}" ] || fail "lowerdirs base"
[ "$(jq -c .config <<<"$first")" = "{}" ] || fail "config should be empty"
while read -r id; do
    [ -d "$DSEC_ROOT/sandboxes/$id/upper" ] && [ -d "$DSEC_ROOT/sandboxes/$id/work" ] || fail "no upper/work for $id"
    [ "$(jq -r "select(.id==\"$id\") | .upper" <<<"$out")" = "$DSEC_ROOT/sandboxes/$id/upper" ] || fail "upper path"
done < <(jq -r .id <<<"$out")
[ "$(cat "$DSEC_RUN/layers/${task#sha256:}/work/hello.txt")" = task ] || fail "layer content"

# One mount per layer, whatever the number of records; the image itself is the source.
for d in "$base" "$task"; do
    hex=${d#sha256:}
    lines=$(grep -c " $DSEC_RUN/layers/$hex " /proc/self/mountinfo || true)
    [ "$lines" = 1 ] || fail "layer $hex mounted $lines times"
    line=$(grep " $DSEC_RUN/layers/$hex " /proc/self/mountinfo)
    [[ $line == *" - erofs $DSEC_ROOT/layers/$hex.erofs "* ]] || fail "not file-backed: $line"
    [[ $line == *directio* ]] || fail "no directio: $line"
    opts=$(awk '{print $6}' <<<"$line")
    for o in ro nodev nosuid; do [[ ,$opts, == *,$o,* ]] || fail "mount lacks $o: $opts"; done
done
grep -q "/dev/loop" <(grep " $DSEC_RUN/layers/" /proc/self/mountinfo) && fail "a loop device was used"
# $DSEC_RUN/layers is a private mount: no shared/master tag on it.
ldir=$(grep " $DSEC_RUN/layers " /proc/self/mountinfo) || fail "\$DSEC_RUN/layers is not a mount"
[[ $ldir == *shared:* || $ldir == *master:* ]] && fail "layers dir is not private: $ldir"
# A namespace made afterwards (as a sandbox's is) sees the layer mounts.
unshare -m cat "$DSEC_RUN/layers/${task#sha256:}/work/hello.txt" >/dev/null || fail "new namespace misses layers"

# Names as arguments give the same stack; --id names the rootfs.
named=$(dsec-mount --id task-1 base "${task:0:20}")
[ "$(jq -r .id <<<"$named")" = task-1 ] || fail "--id"
[ "$(jq -c .lowerdirs <<<"$named")" = "$(jq -c .lowerdirs <<<"$first")" ] || fail "args stack differs"
[ -d "$DSEC_ROOT/sandboxes/task-1/upper" ] || fail "--id upper"
expect_exit 2 dsec-mount --id x --count 2 base
expect_exit 1 dsec-mount --id ../evil base
[ ! -e "$DSEC_ROOT/evil" ] || fail "id escaped"
expect_exit 2 dsec-mount </dev/null

# The image config comes from the topmost layer that has one (as an OCI import records it).
meta="$DSEC_ROOT/layers/${base#sha256:}.json"
jq '.config = {env: ["PATH=/bin", "LANG=C"], workdir: "/work", entrypoint: [], cmd: ["/bin/sh"], user: "0"}' \
    "$meta" > "$T/meta" && cat "$T/meta" > "$meta"
cfg=$(dsec-mount base task | jq -c .config)
[ "$(jq -r .workdir <<<"$cfg")" = /work ] || fail "config not carried: $cfg"
[ "$(jq -r '.env | join(",")' <<<"$cfg")" = PATH=/bin,LANG=C ] || fail "config env: $cfg"

# Concurrent first mounts from a clean state: every layer still mounted exactly once.
dsec-mount release >/dev/null
[ -z "$(dsec-mount ls)" ] || fail "release left layers"
for i in $(seq 1 8); do dsec-layer ls base task | dsec-mount --count 5 >"$T/par.$i" & done
wait
[ "$(cat "$T"/par.* | jq -r .id | sort -u | wc -l)" = 40 ] || fail "parallel runs: wrong record count"
for d in "$base" "$task"; do
    n=$(grep -c " $DSEC_RUN/layers/${d#sha256:} " /proc/self/mountinfo || true)
    [ "$n" = 1 ] || fail "parallel runs mounted ${d#sha256:} $n times"
done
echo ok
