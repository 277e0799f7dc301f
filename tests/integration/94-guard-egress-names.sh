#!/bin/bash
# Egress by domain name, with no real DNS: the host's resolver is the test's own (an
# /etc/hosts and an nsswitch.conf asking nothing else, bound over the host's in this
# test's mount namespace). A name resolves on the host at create into single-address
# rules and into the sandbox's /etc/hosts (read-only: root inside cannot change it);
# the allowed name answers, another address does not; `refresh` after the mapping
# changed moves the allow (old address refused, new one allowed, /etc/hosts follows);
# a name that stops resolving keeps its addresses with a warning; a name that does not
# resolve fails create whole (nothing left) and changes nothing at `net allow`. Images
# without /etc/hosts or /etc get them (empty, owned by root inside) under the bind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/net-lib.sh"

printf '127.0.0.1 localhost\n' > "$T/hosts"
echo 'hosts: files' > "$T/nsswitch.conf"
mount --bind "$T/hosts" /etc/hosts
mount --bind "$T/nsswitch.conf" /etc/nsswitch.conf
# map NAME ADDRESS...: the host's resolver says NAME is at the ADDRESSes (the file is
# rewritten in place: the bind holds its inode).
map() {
    local name=$1 line
    shift
    grep -v " $name\$" "$T/hosts" > "$T/hosts.next" || true
    for line in "$@"; do echo "$line $name" >> "$T/hosts.next"; done
    cat "$T/hosts.next" > "$T/hosts"
}

make_net_layer
start_mirror "dt94a$$" 198.18.94
A=$MIRROR
A_PID=$MIRROR_PID
start_mirror "dt94b$$" 198.18.194
B=$MIRROR
map mirror.test "$A"
echo '{"network": {"allow": [{"domain": "mirror.test", "ports": [8080, 9000], "protocol": "tcp"}]}}' > "$T/names.json"

out=$(dsec-run create --layers netbox --id named --policy "$T/names.json") || fail "create with a name: $out"
on_exit "dsec-run destroy --force named > /dev/null 2>&1"
egress_if named > /dev/null
# The record and inspect say what the name resolved to, and when.
[ "$(jq -c '.egress.names["mirror.test"].addresses' <<< "$out")" = "[\"$A\"]" ] || fail "create record: $out"
[ -n "$(jq -r '.egress.names["mirror.test"].resolved // empty' <<< "$out")" ] || fail "no resolution time: $out"
[ "$(dsec-run inspect named | jq -r '.guard.network.allow[0].domain')" = mirror.test ] || fail "inspect: rules"
[ "$(dsec-run inspect named | jq -c '.egress.names["mirror.test"].addresses')" = "[\"$A\"]" ] || fail "inspect: names"

# Inside, the name is in /etc/hosts (no DNS needed), and the image's own line is kept.
hosts_inside() { dsec-run exec named -- cat /etc/hosts < /dev/null; }
grep -q "^$A mirror.test\$" <<< "$(hosts_inside)" || fail "/etc/hosts inside: $(hosts_inside)"
grep -q "^127.0.0.1 localhost" <<< "$(hosts_inside)" || fail "the image's lines are gone: $(hosts_inside)"
# The agent's way: the address /etc/hosts gives for the name answers; the name's other
# port is allowed too; another address, another port, the metadata address are refused.
at=$(dsec-run exec named -- awk '$2 == "mirror.test" {print $1; exit}' /etc/hosts < /dev/null)
[ "$at" = "$A" ] || fail "the name resolves inside to '$at'"
[ "$(fetch named "http://$at:8080/mirror")" = mirror-ok ] || fail "the allowed name"
for url in "http://$B:8080/mirror" "http://$A:7000/" "http://169.254.169.254/"; do
    grep -q "not permitted" <<< "$(fetch named "$url")" || fail "$url: expected a refusal"
done
# Root inside cannot change the file dsec binds there (nor remove or replace it).
for cmd in "echo '$B mirror.test' >> /etc/hosts" "rm -f /etc/hosts" "echo x > /tmp/h && mv /tmp/h /etc/hosts"; do
    dsec-run exec named -- sh -c "$cmd" < /dev/null > /dev/null 2>&1 && fail "root inside could: $cmd"
done
grep -q "$B" <<< "$(hosts_inside)" && fail "root inside changed /etc/hosts"

# A connection held to the old address, to be cut when refresh moves the name.
hold_connection named "$A" "$A_PID"

# Nothing changed: refresh says so and changes nothing.
out=$(dsec-guard refresh named) || fail "refresh: $out"
[ "$(jq -r '.type, .changed' <<< "$out" | paste -sd,)" = refresh,false ] || fail "refresh without change: $out"
# The name moves: refresh moves the allow, cuts the held connection, rewrites /etc/hosts.
map mirror.test "$B"
out=$(dsec-guard refresh) || fail "refresh after the move: $out"
[ "$(jq -r .id <<< "$out")" = named ] || fail "refresh of every sandbox: $out"
[ "$(jq -r .changed <<< "$out")" = true ] || fail "refresh did not see the move: $out"
[ "$(jq -c '.names["mirror.test"].was' <<< "$out")" = "[\"$A\"]" ] || fail "refresh record, was: $out"
[ "$(jq -c '.names["mirror.test"].addresses' <<< "$out")" = "[\"$B\"]" ] || fail "refresh record: $out"
[ "$(jq -r .cut <<< "$out")" -ge 1 ] || fail "the connection to the old address was not cut: $out"
grep -q "not permitted" <<< "$(fetch named "http://$A:8080/mirror")" || fail "the old address is still allowed"
[ "$(fetch named "http://$B:8080/mirror")" = mirror-ok ] || fail "the new address is not allowed"
grep -q "^$B mirror.test\$" <<< "$(hosts_inside)" || fail "/etc/hosts after refresh: $(hosts_inside)"
grep -q "$A" <<< "$(hosts_inside)" && fail "/etc/hosts still has the old address: $(hosts_inside)"
[ "$(dsec-run inspect named | jq -c '.egress.names["mirror.test"].addresses')" = "[\"$B\"]" ] || fail "state after refresh"

# The name stops resolving: a warning, the addresses it had are kept.
map mirror.test
out=$(dsec-guard refresh named 2> "$T/err") || fail "refresh of a lost name failed: $out"
grep -q "^dsec-guard: warning: .*mirror.test" "$T/err" || fail "no warning: $(cat "$T/err")"
[ -n "$(jq -r '.names["mirror.test"].error // empty' <<< "$out")" ] || fail "no error in the record: $out"
[ "$(jq -c '.names["mirror.test"].addresses' <<< "$out")" = "[\"$B\"]" ] || fail "addresses not kept: $out"
[ "$(fetch named "http://$B:8080/mirror")" = mirror-ok ] || fail "a lost name lost its allow"
map mirror.test "$B"

# Live: a new name is resolved at net allow (and goes at net deny); one that does not
# resolve changes nothing.
map other.test "$A"
out=$(dsec-guard net allow named other.test,8080,tcp) || fail "net allow by name: $out"
[ "$(jq -c '.names["other.test"].addresses' <<< "$out")" = "[\"$A\"]" ] || fail "net allow record: $out"
[ "$(fetch named "http://$A:8080/mirror")" = mirror-ok ] || fail "the name allowed live"
grep -q "^$A other.test\$" <<< "$(hosts_inside)" || fail "/etc/hosts after net allow: $(hosts_inside)"
# Denying a name takes its addresses (unless another rule allows them) and its lines away.
out=$(dsec-guard net deny named other.test) || fail "net deny by name: $out"
[ "$(jq -c '.names | keys' <<< "$out")" = '["mirror.test"]' ] || fail "net deny record: $out"
grep -q "other.test" <<< "$(hosts_inside)" && fail "/etc/hosts after net deny: $(hosts_inside)"
grep -q "not permitted" <<< "$(fetch named "http://$A:8080/mirror")" || fail "the denied name is still allowed"
before=$(dsec-run inspect named | jq -c .guard.network)
expect_exit 1 dsec-guard net allow named nowhere.test > "$T/out" 2> "$T/err"
[ "$(jq -r .code "$T/out")" = unresolved ] || fail "net allow of a lost name: $(cat "$T/out")"
[ "$(wc -l < "$T/err")" = 1 ] || fail "more than one line on stderr: $(cat "$T/err")"
[ "$(dsec-run inspect named | jq -c .guard.network)" = "$before" ] || fail "a refused allow changed the rules"

# create with a name that does not resolve: one error, nothing made.
links=$(ip -o link show | grep -c dsec-n || true)
echo '{"network": {"allow": [{"domain": "nowhere.test", "ports": [443]}]}}' > "$T/lost.json"
expect_exit 1 dsec-run create --layers netbox --id lost --policy "$T/lost.json" > "$T/out" 2> "$T/err"
[ "$(jq -r .code "$T/out")" = unresolved ] || fail "create with a lost name: $(cat "$T/out")"
grep -q nowhere.test "$T/err" || fail "the error does not name the name: $(cat "$T/err")"
[ ! -e "$DSEC_RUN/sandboxes/lost" ] || fail "a failed create left its state"
[ ! -e "$DSEC_RUN/bpf/lost" ] || fail "a failed create left its pins"
[ ! -e "/sys/fs/cgroup/unified/$DSEC_CGROUP_PARENT/lost" ] || fail "a failed create left its cgroup"
[ "$(ip -o link show | grep -c dsec-n || true)" = "$links" ] || fail "a failed create left an interface"

# Images without /etc/hosts (one with /etc, one without any /etc) get an empty file
# (and /etc) owned by root inside under the bind; one whose /etc/hosts is a link is refused whole.
make_busybox_tree "$T/nohosts"
cp "$DSEC_BIN/dsec-probe" "$T/nohosts/probe"
dsec-layer build "$T/nohosts" --name nohosts > /dev/null
cp -a "$T/nohosts" "$T/noetc" && rm -rf "$T/noetc/etc"
dsec-layer build "$T/noetc" --name noetc > /dev/null
for layer in nohosts noetc; do
    out=$(dsec-run create --layers "$layer" --id "$layer" --policy "$T/names.json") || fail "create on $layer: $out"
    on_exit "dsec-run destroy --force $layer > /dev/null 2>&1"
    inside=$(dsec-run exec "$layer" -- cat /etc/hosts < /dev/null)
    grep -q "^$B mirror.test\$" <<< "$inside" || fail "$layer: /etc/hosts inside: $inside"
    # (/etc/hosts shows the host's file, as over an image's own; what it covers is not
    # to be seen.)
    owner=$(dsec-run exec "$layer" -- stat -c '%u:%g %a' /etc < /dev/null)
    [ "$owner" = "0:0 755" ] || fail "$layer: /etc inside is $owner"
    dsec-run exec "$layer" -- sh -c "echo x >> /etc/hosts" < /dev/null > /dev/null 2>&1 && fail "$layer: root inside wrote /etc/hosts"
    dsec-run destroy "$layer" > /dev/null || fail "destroy $layer"
done
cp -a "$T/nohosts" "$T/linkhosts" && ln -s /proc/self/environ "$T/linkhosts/etc/hosts"
dsec-layer build "$T/linkhosts" --name linkhosts > /dev/null
expect_exit 1 dsec-run create --layers linkhosts --id linkhosts --policy "$T/names.json" > "$T/out" 2> "$T/err"
grep -q "hosts" "$T/err" || fail "a linked /etc/hosts: $(cat "$T/err")"
[ ! -e "$DSEC_RUN/sandboxes/linkhosts" ] || fail "a refused create left its state"

dsec-run destroy named > /dev/null || fail "destroy"
assert_net_clean
echo ok
