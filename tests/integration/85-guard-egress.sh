#!/bin/bash
# A policy with network.allow gives the sandbox a veth, NAT and the egress programs:
# an allowed destination answers, everything else is refused at connect (EPERM, no
# timeout): another port of the same host, the host's own addresses (the veth's gateway
# and the mirror-side address), the cloud metadata address. A sandbox without a policy
# keeps loopback only. destroy leaves no interface or pin behind, gc then no NAT table or
# programs; past DSEC_EGRESS_SLOTS a create is refused whole.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net-lib.sh"

make_net_layer
start_mirror "dt85m$$" 198.18.85
# A listener on the host itself, on every address: the sandbox must not reach it.
busybox nc -l -p 7785 > /dev/null &
on_exit "kill $! 2>/dev/null"

egress_policy "$T/mirror.json" "$MIRROR/32=[8080]"
out=$(dsec-run create --layers netbox --id egress --policy "$T/mirror.json") || fail "create with egress: $out"
on_exit "dsec-run destroy --force egress > /dev/null 2>&1"
dsec-run create --layers netbox --id plain > /dev/null || fail "create without policy"
on_exit "dsec-run destroy --force plain > /dev/null 2>&1"

# What create recorded: the interface, the addresses, the pins.
hostif=$(egress_if egress)
[ -n "$hostif" ] || fail "no egress in the state: $(dsec-run inspect egress)"
gw=$(dsec-run inspect egress | jq -r .egress.gateway)
ip link show "$hostif" > /dev/null || fail "no host interface $hostif"
# Made with one queue each way (no queue cut after it is registered, see netlink.cc).
queues=$(ip -d link show "$hostif" | grep -o 'num[rt]xqueues [0-9]*' | tr '\n' ' ')
[ "$queues" = "numtxqueues 1 numrxqueues 1 " ] || fail "$hostif was made with $queues"
[ -d "$DSEC_RUN/bpf/egress" ] || fail "no pins"
nft list table inet "$NET_TABLE" > "$T/table"
# The run directory's table names no sandbox: every sandbox interface (dsec-n*) and the pool.
[[ $hostif == dsec-n* ]] || fail "interface $hostif is not a dsec-n* one"
grep -q 'oifname "dsec-n\*" drop' "$T/table" || fail "no forward rule in the NAT table: $(cat "$T/table")"
grep -q 'ip saddr 100.64.0.0/10 oifname != "dsec-n\*" masquerade' "$T/table" || fail "no masquerade: $(cat "$T/table")"
# The programs hang on the run directory's cgroup parent and are in force (inherited)
# on the sandbox's unified cgroup; the plain sandbox inherits them too, and having no
# rules, is left alone by them (it has no route out).
parent=/sys/fs/cgroup/unified/$DSEC_CGROUP_PARENT
cg=$parent/egress
progs="connect4|connect6|sendmsg4|sendmsg6|sock_create"
attached=$(bpftool cgroup show "$parent" 2>/dev/null | grep -cE "$progs" || true)
[ "$attached" = 5 ] || fail "expected 5 programs on $parent, got $attached: $(bpftool cgroup show "$parent")"
attached=$(bpftool cgroup show "$cg" effective 2>/dev/null | grep -cE "$progs" || true)
[ "$attached" = 5 ] || fail "expected 5 programs in force on $cg, got $attached: $(bpftool cgroup show "$cg" effective)"

# Allowed: the mirror's HTTP port, through NAT.
got=$(fetch egress "http://$MIRROR:8080/mirror")
[ "$got" = mirror-ok ] || fail "allowed destination: $got"
# Refused at once, not timed out: another port, the host's addresses, metadata.
for url in "http://$MIRROR:9000/" "http://$gw:7785/" "http://$MIRROR_HOST:7785/" "http://169.254.169.254/" \
           "http://10.0.0.1/"; do
    start=$(date +%s%N)
    got=$(fetch egress "$url")
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    grep -q "not permitted" <<< "$got" || fail "$url: expected a refusal, got: $got"
    [ "$ms" -lt 3000 ] || fail "$url: refused only after $ms ms"
done
# Loopback inside stays the sandbox's own.
dsec-run exec egress -- sh -c 'busybox httpd -p 127.0.0.1:8081 -h /etc && timeout 5 wget -q -O /dev/null http://127.0.0.1:8081/passwd && echo lo-ok' \
    < /dev/null 2>&1 | grep -q lo-ok || fail "loopback inside an egress sandbox"

# Without a policy: loopback only, no route anywhere.
got=$(fetch plain "http://$MIRROR:8080/mirror")
[ "$got" != mirror-ok ] || fail "a sandbox without a policy reached the mirror"
dsec-run exec plain -- ip link < /dev/null | grep -q eth0 && fail "a sandbox without a policy has eth0"
[ -z "$(dsec-run inspect plain | jq -r '.egress // empty')" ] || fail "plain has egress"

# destroy takes everything down; the last one takes the NAT table too.
dsec-run destroy egress > /dev/null || fail "destroy"
dsec-run destroy plain > /dev/null || fail "destroy plain"
assert_net_clean
# A create whose egress cannot be made (more rules than the programs hold) fails whole
# and leaves nothing either.
ports=$(seq -s, 1 300)
echo "{\"network\": {\"allow\": [{\"cidr\": \"$MIRROR/32\", \"ports\": [$ports]}]}}" > "$T/big.json"
expect_exit 1 dsec-run create --layers netbox --id big --policy "$T/big.json" > /dev/null 2> "$T/err"
grep -q "rules" "$T/err" || fail "too many rules: $(cat "$T/err")"
[ ! -e "$DSEC_RUN/sandboxes/big" ] || fail "a failed create left its state"
assert_net_clean
# An id with a dot (bpffs refuses dots in names: its pins are named with ':').
dsec-run create --layers netbox --id dot.ted --policy "$T/mirror.json" > /dev/null || fail "create dot.ted"
on_exit "dsec-run destroy --force dot.ted > /dev/null 2>&1"
egress_if dot.ted > /dev/null
[ "$(fetch dot.ted "http://$MIRROR:8080/mirror")" = mirror-ok ] || fail "dot.ted: the allowed mirror"
grep -q "not permitted" <<< "$(fetch dot.ted "http://$MIRROR:9000/")" || fail "dot.ted: another port"
dsec-run destroy dot.ted > /dev/null || fail "destroy dot.ted"
assert_net_clean
# Past DSEC_EGRESS_SLOTS (read when the programs load) an egress create is refused whole.
DSEC_EGRESS_SLOTS=1 dsec-run create --layers netbox --id one --policy "$T/mirror.json" > /dev/null || fail "one slot"
on_exit "dsec-run destroy --force one > /dev/null 2>&1"
egress_if one > /dev/null
expect_exit 1 dsec-run create --layers netbox --id two --policy "$T/mirror.json" > "$T/out" 2> /dev/null
[ "$(jq -r .code "$T/out")" = exhausted ] || fail "a create past the slots: $(cat "$T/out")"
[ ! -e "$DSEC_RUN/sandboxes/two" ] && [ ! -e "$DSEC_RUN/bpf/two" ] || fail "a create past the slots left something"
dsec-run destroy one > /dev/null || fail "destroy one"
assert_net_clean
echo ok
