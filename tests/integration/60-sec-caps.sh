#!/bin/bash
# Red team, capabilities: with no flag a sandbox's root holds podman's default list only
# (bounding, effective, permitted; nothing inheritable or ambient), no_new_privs and a
# seccomp filter; --user 1000 holds nothing; neither a setuid-root binary (from a layer
# or made inside) nor a file capability lifts a user; --cap-drop/--cap-add change exactly
# the capability named.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box caps

# check_status LINE FIELD=WANT...: fails unless each field of the status line matches.
check_status() {
    local line=$1 kv
    shift
    for kv in "$@"; do
        [ "$(field_of "$line" "${kv%%=*}")" = "${kv#*=}" ] || fail "expected ${kv}: $line"
    done
}

# Root inside: the default list, nothing to pass on, no_new_privs, seccomp filtering (2).
line=$(probe caps status)
check_status "$line" CapEff="$CAPS_DEFAULT" CapPrm="$CAPS_DEFAULT" CapBnd="$CAPS_DEFAULT" \
    CapInh="$CAPS_NONE" CapAmb="$CAPS_NONE" NoNewPrivs=1 Seccomp=2
# It cannot give itself more.
expect caps EPERM capset_all
expect caps EPERM ambient_raise 21 # CAP_SYS_ADMIN

# --user 1000: no capabilities at all; the bounding set is at most the default list.
line=$(PROBE_OPTS="--user 1000" probe caps status)
check_status "$line" CapEff="$CAPS_NONE" CapPrm="$CAPS_NONE" CapInh="$CAPS_NONE" CapAmb="$CAPS_NONE" \
    NoNewPrivs=1 Seccomp=2
bnd=$(field_of "$line" CapBnd)
{ [ -n "$bnd" ] && (( (0x$bnd & ~0x$CAPS_DEFAULT) == 0 )); } || fail "--user 1000: bounding set beyond the default list: $line"
PROBE_OPTS="--user 1000" expect caps EPERM setuid0
PROBE_OPTS="--user 1000" expect caps EPERM capset_all

# A setuid-root binary from a layer does not make user 1000 root (no_new_privs, nosuid).
[ "$(dsec-run exec caps -- busybox stat -c '%a %u' /probe-suid)" = "4755 0" ] \
    || fail "the layer lost /probe-suid's setuid bit: the escalation below would prove nothing"
line=$(dsec-run exec --user 1000 caps -- /probe-suid whoami)
{ [ "$(field_of "$line" euid)" = 1000 ] && [ "$(field_of "$line" suid)" = 1000 ]; } \
    || fail "a setuid-root binary from a layer gave user 1000 another identity: $line"
line=$(dsec-run exec --user 1000 caps -- /probe-suid status)
check_status "$line" CapEff="$CAPS_NONE" CapPrm="$CAPS_NONE"

# Nor one made setuid root inside (on the overlay and on the scratch tmpfs).
# shellcheck disable=SC2016 # $f is the sandbox shell's
dsec-run exec caps -- sh -c 'for f in /suid-made /tmp/suid-made; do busybox cp /probe $f &&
    busybox chmod 4755 $f || exit 1; done' || fail "root inside cannot make a setuid file"
for f in /suid-made /tmp/suid-made; do
    line=$(dsec-run exec --user 1000 caps -- "$f" whoami)
    [ "$(field_of "$line" euid)" = 1000 ] || fail "setuid-root $f made inside gave user 1000 euid $(field_of "$line" euid): $line"
done

# A file capability (root inside may set one: SETFCAP is in the list) grants nothing:
# user 1000 gets no capability from it, root none beyond the default list. (Every
# capability, permitted, not effective: what the exec hands over shows in CapPrm.)
dsec-run exec caps -- busybox cp /probe /fcap
line=$(probe caps setfcap /fcap)
case $(result_of "$line") in
    ok)
        line=$(dsec-run exec --user 1000 caps -- /fcap status)
        check_status "$line" CapEff="$CAPS_NONE" CapPrm="$CAPS_NONE"
        line=$(dsec-run exec caps -- /fcap status)
        check_status "$line" CapPrm="$CAPS_DEFAULT" CapBnd="$CAPS_DEFAULT"
        ;;
    EPERM | EACCES | EOPNOTSUPP) ;;
    *) fail "setfcap: $line" ;;
esac

# The same for a sandbox whose default user is 1000.
new_box capsu --user 1000
line=$(probe capsu status)
check_status "$line" CapEff="$CAPS_NONE" CapPrm="$CAPS_NONE" CapAmb="$CAPS_NONE" NoNewPrivs=1 Seccomp=2
line=$(dsec-run exec capsu -- /probe-suid whoami)
[ "$(field_of "$line" euid)" = 1000 ] || fail "--user 1000 at create: a setuid-root binary gave euid $(field_of "$line" euid)"

# --cap-drop takes exactly one capability away (CHOWN: bit 0) and the kernel enforces it;
# --cap-add adds exactly one (NET_RAW: bit 13).
new_box capsdrop --cap-drop CHOWN
line=$(probe capsdrop status)
check_status "$line" CapEff=00000000800405fa CapBnd=00000000800405fa
dsec-run exec capsdrop -- sh -c 'touch /tmp/f && busybox chown 1:1 /tmp/f' 2> /dev/null \
    && fail "--cap-drop CHOWN: chown still works"
new_box capsadd --cap-add NET_RAW
line=$(probe capsadd status)
check_status "$line" CapEff=00000000800425fb CapBnd=00000000800425fb CapAmb="$CAPS_NONE"

host_unharmed caps
echo ok
