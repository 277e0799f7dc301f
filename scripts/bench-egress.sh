#!/bin/bash
# The cost of egress (a policy allowing one mirror) against none:
#   scripts/bench-egress.sh BUILD_DIR [N] [MIB]
# 1. create and exec latency: N interleaved rounds, each creating a sandbox without a
#    policy and one with egress, exec'ing /bin/true into each and destroying them
#    (medians and the median per-round ratio, as bench-policy.sh prints them).
# 2. throughput of an allowed connection: MIB MiB sent over one TCP connection (by
#    dsec-probe's `stream`, 1 MiB writes: no shell pipe in the way) to a sink in a
#    "mirror" network namespace this script makes. Two egress sandboxes with the same
#    policy, each in a run directory of its own: in one the egress programs are in
#    force, in the other their links are unpinned (detached: veth and NAT only). N/2
#    interleaved rounds of one send from each, then the host's own rate (no sandbox);
#    medians and the median of the per-round ratios.
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
nsenter --net=/proc/"$MIRROR_PID"/ns/net "$bin/dsec-probe" sink 9001 &
on_exit "kill $! 2>/dev/null"
egress_policy "$T/mirror.json" "$MIRROR/32"
dsec-run create --layers netbox --id warm > /dev/null && dsec-run destroy warm > /dev/null
# shellcheck source=bench-pairs-lib.sh
. "$src/scripts/bench-pairs-lib.sh"
policy_rounds netbox "$n" egress "$T/mirror.json" > "$T/rounds"
report_pairs "$T/rounds" none egress create exec

# Throughput: MiB/s of one connection.
dsec-run create --layers netbox --id tput --policy "$T/mirror.json" > /dev/null
on_exit "dsec-run destroy --force tput > /dev/null 2>&1"
# The same path without the programs, beside it: a second run directory whose links are
# unpinned (which detaches them); gc removes its table, programs and cgroup parent.
bare=$T/run-bare
mkdir -p "$bare"
on_exit "DSEC_RUN=$bare dsec-run destroy --force tputb > /dev/null 2>&1; DSEC_RUN=$bare dsec-reclaim gc > /dev/null 2>&1"
DSEC_RUN=$bare dsec-run create --layers netbox --id tputb --policy "$T/mirror.json" > /dev/null
for l in connect4 connect6 sendmsg4 sendmsg6 sock_create; do rm -f "$bare/bpf/-egress/$l"; done
rate() {  # RUN_DIR ID: MiB/s of one send from that sandbox (host: from here)
    local out
    if [ "$1" = host ]; then
        out=$("$bin/dsec-probe" stream "$MIRROR" 9001 "$mib")
    else
        out=$(DSEC_RUN=$1 dsec-run exec "$2" -- /probe stream "$MIRROR" 9001 "$mib" < /dev/null)
    fi
    case $out in "stream ok "*) echo "$out" | awk '{print $3}' ;; *) echo "send failed: $out" >&2; exit 1 ;; esac
}
# Which one sends first alternates: the second of two sends in a row may find the sink,
# the caches and the CPU in another state.
for i in $(seq 1 $(( (n + 1) / 2 ))); do
    if [ $((i % 2)) = 1 ]; then
        a=$(rate "$DSEC_RUN" tput) b=$(rate "$bare" tputb)
    else
        b=$(rate "$bare" tputb) a=$(rate "$DSEC_RUN" tput)
    fi
    echo "round $a $b"
done > "$T/tput"
sed 's/^/  /' "$T/tput" >&2
host=$(for _ in 1 2 3 4 5; do rate host; done | median)
with=$(awk '{print $2}' "$T/tput" | median)
without=$(awk '{print $3}' "$T/tput" | median)
ratio=$(awk '{print $2 / $3}' "$T/tput" | median)
echo "throughput ($mib MiB, $(wc -l < "$T/tput") rounds): host ${host} MiB/s, sandbox veth+NAT ${without} MiB/s," \
     "with egress programs ${with} MiB/s (with/without ${ratio}, median of the per-round ratios)"
