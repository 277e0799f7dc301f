#!/bin/bash
# The cost of egress (a policy allowing one mirror) against none:
#   scripts/bench-egress.sh BUILD_DIR [N] [MIB]
# 1. create and exec latency: N interleaved rounds, each creating a sandbox without a
#    policy and one with egress, exec'ing /bin/true into each and destroying them
#    (medians and the median per-round ratio, as bench-policy.sh prints them).
# 2. throughput of an allowed connection: MIB MiB sent over one TCP connection to a
#    "mirror" in a network namespace this script makes, 5 rounds each, from the host
#    itself (no sandbox), from the egress sandbox with its programs detached (veth and
#    NAT only), and from the egress sandbox with its programs.
# Runs as root in a private mount namespace with its own root and run directories.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [N] [MIB]" >&2; exit 2; }
bin=$(cd "$1" && pwd) n=${2:-40} mib=${3:-512}
src=$(cd "$(dirname "$0")/.." && pwd)
export DSEC_BIN=$bin DSEC_SRC=$src
set -- "$bin" "$n" "$mib"
# shellcheck source=../tests/integration/lib.sh
. "$src/tests/integration/lib.sh"
# shellcheck source=../tests/integration/net-lib.sh
. "$src/tests/integration/net-lib.sh"
make_net_layer
start_mirror "dbench$$" 198.18.99
# A sink: every connection's bytes are read and dropped.
mkfifo "$T/sink-hold"
nsenter --net=/proc/"$MIRROR_PID"/ns/net sh -c "exec 3<>'$T/sink-hold'
    while true; do busybox nc -l -p 9001 <&3 > /dev/null; done" &
on_exit "stop_loop $!"
egress_policy "$T/mirror.json" "$MIRROR/32"
dsec-run create --layers netbox --id warm > /dev/null && dsec-run destroy warm > /dev/null
# shellcheck source=bench-pairs-lib.sh
. "$src/scripts/bench-pairs-lib.sh"
policy_rounds netbox "$n" egress "$T/mirror.json" > "$T/rounds"
report_pairs "$T/rounds" none egress create exec

# Throughput: MiB/s of one connection, median of 5.
dsec-run create --layers netbox --id tput --policy "$T/mirror.json" > /dev/null
on_exit "dsec-run destroy --force tput > /dev/null 2>&1"
send() {  # WHERE: host, or a sandbox id
    local t0 t1
    t0=$(us)
    if [ "$1" = host ]; then
        busybox dd if=/dev/zero bs=64k count=$((mib * 16)) 2>/dev/null | busybox nc "$MIRROR" 9001
    else
        dsec-run exec "$1" -- sh -c "dd if=/dev/zero bs=64k count=$((mib * 16)) 2>/dev/null | nc $MIRROR 9001" < /dev/null
    fi
    t1=$(us)
    echo "$mib $((t1 - t0))" | awk '{printf "%.0f\n", $1 / ($2 / 1e6)}'
}
rate() { for _ in 1 2 3 4 5; do send "$1"; sleep 0.2; done | median; }
host=$(rate host)
with=$(rate tput)
# The same path without the programs: unpinning the links detaches them.
for l in connect4 connect6 sendmsg4 sendmsg6 sock_create; do rm -f "$DSEC_RUN/bpf/-egress/$l"; done
without=$(rate tput)
echo "throughput: host ${host} MiB/s, sandbox veth+NAT ${without} MiB/s, with egress programs ${with} MiB/s" \
     "(with/without $(awk -v a="$with" -v b="$without" 'BEGIN{printf "%.3f", a/b}'))"
