#!/bin/bash
# Red team, copies out: what a sandbox prepares for `dsec-run cp` to bring to the host
# lands as plain files of the caller. No setuid or setgid bit, no owner of the sandbox's
# choosing, no device node, whatever the sandbox made.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box cpo

# A setuid-and-setgid copy of a program, owned by ids of the sandbox's choosing, and one
# owned by root inside.
dsec-run exec cpo -- sh -c 'mkdir -p /work/out && busybox cp /probe /work/out/suid &&
    busybox cp /probe /work/out/suid-root && busybox chown 1234:2345 /work/out/suid &&
    busybox chmod 6755 /work/out/suid /work/out/suid-root' || fail "preparing the files inside"
[ "$(dsec-run exec cpo -- busybox stat -c %a /work/out/suid)" = 6755 ] || fail "the sandbox could not set the bits: nothing to test"

me="$(id -u):$(id -g)"
# check_plain DIR: no setuid/setgid file, no device, nothing owned by another than the caller.
check_plain() {
    local bad
    bad=$(find "$1" -perm /6000 -type f)
    [ -z "$bad" ] || fail "cp reproduced setuid/setgid bits on the host: $bad"
    bad=$(find "$1" \( -type c -o -type b \))
    [ -z "$bad" ] || fail "cp made a device node on the host: $bad"
    bad=$(find "$1" ! -user "$(id -u)" -o ! -group "$(id -g)")
    [ -z "$bad" ] || fail "cp gave host files the sandbox's owners (the caller is $me): $bad"
}

# One file, a whole directory, and into an existing directory.
dsec-run cp cpo:/work/out/suid "$T/suid" > /dev/null || fail "cp of one file"
check_plain "$T/suid"
[ -x "$T/suid" ] || fail "cp dropped the execute bits with the setuid bit"
mkdir "$T/into"
dsec-run cp cpo:/work/out "$T/tree" > /dev/null || fail "cp of a directory"
dsec-run cp cpo:/work/out "$T/into" > /dev/null || fail "cp into a directory"
check_plain "$T/tree"
check_plain "$T/into"

# Device nodes: the sandbox's /dev holds binds of the host's null, zero, ...; copying them
# out is refused or gives no device.
mkdir "$T/dev"
dsec-run cp cpo:/dev/null "$T/dev/null" > /dev/null 2>&1 || true
dsec-run cp cpo:/dev "$T/dev/all" > /dev/null 2>&1 || true
check_plain "$T/dev"

host_unharmed cpo
echo ok
