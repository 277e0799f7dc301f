# shellcheck shell=bash
# Shared by the egress tests (85-89), sourced after lib.sh and sec-lib.sh: a "mirror"
# host in a network namespace the test makes itself, reached from the host through a
# veth of its own (never any address outside this machine), and checks that the test
# leaves no interface, NAT table, pin or netns behind.

# The NAT table and interfaces this run directory's sandboxes use. The table and the
# egress programs are the run directory's, kept after its last egress sandbox until gc:
# whatever a test leaves of them goes at exit.
NET_TABLE=$DSEC_CGROUP_PARENT
on_exit "nft delete table inet $NET_TABLE 2>/dev/null"

# start_mirror NAME NET: a netns held by a sleeping process, veth "NAME" on the host
# with NET.1/30, eth0 inside with NET.2/30 serving HTTP on 8080 (the file "mirror"
# says "mirror-ok") and a plain TCP listener on 9000 that holds each connection open.
# Sets MIRROR (NET.2), MIRROR_HOST (NET.1) and MIRROR_PID.
start_mirror() {
    local name=$1 net=$2
    mkdir -p "$T/www-$name"
    echo mirror-ok > "$T/www-$name/mirror"
    unshare --net sleep infinity &
    local pid=$!
    for _ in $(seq 100); do
        [ "$(readlink /proc/"$pid"/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
        sleep 0.05
    done
    [ "$(readlink /proc/"$pid"/ns/net)" != "$(readlink /proc/self/ns/net)" ] || fail "mirror netns did not start"
    MIRROR_PID=$pid
    on_exit "kill $pid 2>/dev/null; ip link del $name 2>/dev/null"
    ip link add "$name" type veth peer name eth0 netns "$pid"
    ip addr add "$net.1/30" dev "$name"
    ip link set "$name" up
    # Replies to a sandbox come in here and are forwarded to its veth.
    echo 1 > "/proc/sys/net/ipv4/conf/$name/forwarding"
    nsenter --net=/proc/"$pid"/ns/net sh -c "
        ip link set lo up; ip addr add $net.2/30 dev eth0; ip link set eth0 up
        ip route add default via $net.1"
    nsenter --net=/proc/"$pid"/ns/net busybox httpd -f -p 8080 -h "$T/www-$name" &
    on_exit "kill $! 2>/dev/null"
    # One listener per connection, again and again: each holds its peer until closed (its
    # stdin a FIFO the loop holds open for writing too, so it never reads an end).
    mkfifo "$T/hold-$name"
    nsenter --net=/proc/"$pid"/ns/net sh -c "exec 3<>'$T/hold-$name'
        while true; do busybox nc -l -p 9000 <&3 > /dev/null; done" &
    on_exit "stop_loop $!"
    MIRROR=$net.2
    MIRROR_HOST=$net.1
    for _ in $(seq 100); do
        nsenter --net=/proc/"$pid"/ns/net busybox wget -q -O - "http://127.0.0.1:8080/mirror" 2>/dev/null | grep -q mirror-ok && return 0
        sleep 0.05
    done
    fail "mirror $name does not serve"
}

# stop_loop PID: ends a shell loop and the child it is waiting for (stopped first, so
# that it cannot start another).
stop_loop() {
    kill -STOP "$1" 2>/dev/null || return 0
    pkill -P "$1" 2>/dev/null || true
    kill -9 "$1" 2>/dev/null || true
}

# make_net_layer: the layer "netbox": busybox with its network applets and dsec-probe,
# and an /etc/hosts as images have.
make_net_layer() {
    make_busybox_tree "$T/netbox"
    for app in wget nc ip ping timeout nslookup dd awk mv; do ln -sf busybox "$T/netbox/bin/$app"; done
    cp "$DSEC_BIN/dsec-probe" "$T/netbox/probe"
    echo "127.0.0.1 localhost" > "$T/netbox/etc/hosts"
    dsec-layer build "$T/netbox" --name netbox > /dev/null
}

# policy FILE CIDR[:PORTS-JSON]...: a policy allowing tcp to each CIDR (on the ports).
egress_policy() {
    local file=$1
    shift
    local allow="" d cidr ports
    for d in "$@"; do
        cidr=${d%%=*}
        ports=""
        [ "$d" != "$cidr" ] && ports=", \"ports\": ${d#*=}"
        allow="$allow${allow:+, }{\"cidr\": \"$cidr\"$ports, \"protocol\": \"tcp\"}"
    done
    echo "{\"network\": {\"allow\": [$allow]}}" > "$file"
}

# hold_connection BOX ADDR PID: a TCP connection from BOX to ADDR port 9000 held open
# until it is cut (then the process inside writes /tmp/ended); waits until the mirror
# whose network namespace is PID's sees it established.
hold_connection() {
    local n=0
    dsec-run exec "$1" -- sh -c "mkfifo /tmp/hold; exec 3<>/tmp/hold; nc $2 9000 <&3; echo ended > /tmp/ended" \
        < /dev/null > /dev/null 2>&1 &
    on_exit "kill $! 2>/dev/null"
    for _ in $(seq 100); do
        n=$(nsenter --net=/proc/"$3"/ns/net ss -Htn state established '( sport = :9000 )' | wc -l)
        [ "$n" -ge 1 ] && return 0
        sleep 0.05
    done
    fail "the held connection to $2 did not open"
}

# fetch BOX URL: what wget inside BOX gets (stdout), or its error (on stdout too).
fetch() { dsec-run exec "$1" -- timeout 5 wget -q -O - "$2" 2>&1 < /dev/null || true; }

# assert_net_clean: nothing of this run's egress is left on the host: no sandbox's pins
# or interface once its sandbox is gone, and, after dsec-reclaim gc, neither the run
# directory's programs nor its NAT table.
assert_net_clean() {
    local left
    # Directories only: maps.debug and progs.debug are the kernel's own; -egress holds the
    # run directory's programs.
    left=$(find "$DSEC_RUN/bpf" -mindepth 1 -maxdepth 1 -type d ! -name -egress 2>/dev/null || true)
    [ -z "$left" ] || fail "pins are left: $left"
    for i in "${NET_IFS[@]:-}"; do
        [ -z "$i" ] && continue
        if ip link show "$i" > /dev/null 2>&1; then fail "interface $i is left"; fi
    done
    dsec-reclaim gc > "$T/gc-net" || fail "gc: $(cat "$T/gc-net")"
    if nft list table inet "$NET_TABLE" > /dev/null 2>&1; then fail "NAT table $NET_TABLE is left after gc"; fi
    [ ! -e "$DSEC_RUN/bpf/-egress" ] || fail "the egress programs are left after gc"
}

# egress_if BOX: the host interface of BOX's egress (remembered for assert_net_clean).
NET_IFS=()
egress_if() {
    local i
    i=$(dsec-run inspect "$1" | jq -r '.egress.interface // empty')
    [ -n "$i" ] && NET_IFS+=("$i")
    echo "$i"
}
