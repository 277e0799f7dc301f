#!/bin/bash
# Red team, user namespaces: root inside is an unprivileged host id. Each sandbox maps
# 0..65535 onto its own range of host ids at or above 1073741824 (root rotated within it); two sandboxes' ranges
# do not overlap; the sandbox's processes, seen from the host, run as the range's ids,
# never as host root; files written to the upper are stored with the ids they have
# inside; ids outside the range cannot be used inside.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box u1
new_box u2
pool=1073741824

# map_of BOX FILE: "ROOT FIRST" of the map in FILE (id_map), after checking the range
# is in the pool.
map_of() {
    local root first
    read -r root first < <(id_map "$(dsec-run exec "$1" -- cat "$2")")
    [ "$first" -ge $pool ] || fail "$1: $2 maps to host ids from $first, below the pool at $pool"
    echo "$root $first"
}
read -r b1 f1 < <(map_of u1 /proc/self/uid_map)
[ "$(map_of u1 /proc/self/gid_map)" = "$b1 $f1" ] || fail "uid and gid maps differ: $(map_of u1 /proc/self/gid_map)"
read -r _ f2 < <(map_of u2 /proc/self/uid_map)
[ $((f1 - f2)) -ge 65536 ] || [ $((f2 - f1)) -ge 65536 ] || fail "the ranges of two sandboxes overlap: from $f1 and from $f2"

# uids_of PID: the real, effective, saved and filesystem uids of a host process.
uids_of() { awk '/^Uid:/ { print $2, $3, $4, $5 }' /proc/"$1"/status 2> /dev/null; }

# From the host: the init and the commands run as the range's ids, not as root.
init=$(dsec-run inspect u1 | jq -r .pid)
[ "$(uids_of "$init")" = "$b1 $b1 $b1 $b1" ] || fail "the init runs as host uids $(uids_of "$init"), expected $b1"
dsec-run exec u1 -- sh -c 'exec sleep 300' > /dev/null 2>&1 &
root_exec=$!
dsec-run exec --user 1000 u1 -- sh -c 'exec sleep 301' > /dev/null 2>&1 &
user_exec=$!
on_exit "kill $root_exec $user_exec 2> /dev/null"
# host_uid_of ARGS: the host uid of the sandbox's process running "sleep ARGS".
host_uid_of() {
    local p
    for _ in $(seq 1 100); do
        while read -r p; do
            if [ "$(tr '\0' ' ' < /proc/"$p"/cmdline 2> /dev/null)" = "sleep $1 " ]; then
                ps -o uid= -p "$p" | tr -d ' '
                return 0
            fi
        done < "$(cgroup_file u1 cgroup.procs)"
        sleep 0.05
    done
    fail "no process 'sleep $1' in u1's cgroup"
}
[ "$(host_uid_of 300)" = "$b1" ] || fail "root inside runs as host uid $(host_uid_of 300), expected $b1"
[ "$(host_uid_of 301)" = $((b1 + 1000)) ] || fail "user 1000 inside runs as host uid $(host_uid_of 301), expected $((b1 + 1000))"
# No process of the sandbox is host root.
while read -r p; do
    u=$(uids_of "$p")
    case " $u " in *" 0 "*) fail "process $p of the sandbox runs with host uid 0 ($u): $(tr '\0' ' ' < /proc/"$p"/cmdline)" ;; esac
done < "$(cgroup_file u1 cgroup.procs)"

# The upper keeps the ids of inside: 0 and 1000 on disk, not the host range.
dsec-run exec u1 -- sh -c 'echo r > /work/by-root'
dsec-run exec --user 1000 u1 -- sh -c 'echo u > /work/by-user'
upper=$(dsec-run inspect u1 | jq -r .rootfs.upper)
[ -d "$upper" ] || fail "no upper directory: $upper"
[ "$(stat -c %u:%g "$upper/work/by-root")" = 0:0 ] || fail "a file of root inside is stored as $(stat -c %u:%g "$upper/work/by-root")"
[ "$(stat -c %u "$upper/work/by-user")" = 1000 ] || fail "a file of user 1000 inside is stored as $(stat -c %u "$upper/work/by-user")"
# Inside, they look the same.
[ "$(dsec-run exec u1 -- busybox stat -c %u /work/by-root /work/by-user | tr '\n' ' ')" = "0 1000 " ] \
    || fail "owners inside: $(dsec-run exec u1 -- busybox stat -c %u /work/by-root /work/by-user)"

# Ids beyond the range do not exist inside: no chown to them, no setuid to them.
dsec-run exec u1 -- busybox chown 70000 /work/by-root 2> /dev/null && fail "chown to an unmapped id worked"
dsec-run exec --user 70000 u1 -- true 2> /dev/null && fail "an exec as an unmapped user worked"

host_unharmed u2
echo ok
