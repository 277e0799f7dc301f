#!/bin/bash
# A shared store that becomes unreachable (its GlusterFS volume stopped under the nodes'
# FUSE clients): commands fail with a clear error within seconds, no hang; a sandbox
# already running gets an I/O error for what it has not read yet; a publish leaves no
# layer; nothing is left mounted. Once the volume is back, the nodes work again.
. "$(dirname "$0")/cluster-lib.sh"

gluster_up shared 2
gluster_mount shared "$T/nodeA"
gluster_mount shared "$T/nodeB" ro
make_data_tree "$T/tree" 8
DSEC_STORE=$T/nodeA/layers dsec-layer build "$T/tree" --name base > /dev/null || fail "build"
dsec-layer build "$T/tree" --name local > /dev/null
echo 2 > "$T/tree/v" && dsec-layer build "$T/tree" --name local2 > /dev/null

export DSEC_STORE=$T/nodeB/layers
dsec-run create --layers base --id s > /dev/null || fail "create"
on_exit "dsec-run destroy --force s > /dev/null"
dsec-run exec s -- cat /data/f1 > /dev/null || fail "reading f1"

gl volume stop shared force > /dev/null || fail "stopping the volume"
# within SECONDS CMD...: CMD fails, and in under SECONDS; its output goes to $last.
within() {
    local limit=$1 start out rc=0; shift
    start=$(date +%s%N)
    out=$(timeout $((limit + 5)) "$@" 2> "$T/err") || rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    [ "$rc" != 0 ] || fail "succeeded with the store down: $*"
    [ "$rc" != 124 ] || fail "hung with the store down: $*"
    [ "$ms" -lt $((limit * 1000)) ] || fail "took $ms ms to fail: $*"
    echo "cluster: store down: $* failed in $ms ms: $(head -n 1 "$T/err")"
    last=$out
}
within 15 dsec-layer ls base
jq -e '.type == "error"' <<<"$last" > /dev/null || fail "no error record: $last"
within 15 dsec-run create --layers base --id t
jq -e '.type == "error" and .code != "not_found"' <<<"$last" > /dev/null || fail "the store's failure reads as a missing layer: $last"
[ ! -e "$DSEC_RUN/sandboxes/t" ] || fail "a failed create left state"
# The running sandbox: what it read is in the page cache; what it did not read fails.
within 15 dsec-run exec s -- cat /data/f5
within 15 env DSEC_STORE='' dsec-layer publish local --to "$T/nodeA/layers"

gl volume start shared > /dev/null || fail "starting the volume again"
# The FUSE clients reconnect to the bricks on their own (every few seconds).
# Back: both bricks count both nodes' clients again.
back() {
    gl volume status shared clients 2> /dev/null |
        awk '/^Clients connected/ { n++; if ($NF >= 2) ok++ } END { exit !(n == 2 && ok == 2) }'
}
start=$(date +%s)
for _ in $(seq 300); do back && break; sleep 0.2; done
echo "cluster: the store was back for both nodes after $(($(date +%s) - start)) s"
back || fail "the store did not come back: $(gl volume status shared clients 2>&1)"
dsec-layer ls local > /dev/null 2>&1 && fail "a publish to a store that was down left a layer"
DSEC_STORE='' dsec-layer publish local2 --to "$T/nodeA/layers" > /dev/null || fail "publish after the store came back"
dsec-run destroy --force s > /dev/null || fail "destroying the sandbox"
dsec-mount release > /dev/null
[ "$(dsec-mount ls | wc -l)" = 0 ] || fail "layers still mounted: $(dsec-mount ls)"
echo ok
