#!/bin/bash
# A sandbox's mount namespace is copied from its run directory's template (a small
# read-only tmpfs holding nothing of the host's, made once and kept at RUN/rootns), and
# its init moves its root onto the namespace's root and chroots into it instead of
# calling pivot_root, which walks every thread on the host. What that must keep: no
# host path or template mount in sight, ".." at the root stays there (a chroot escape
# with the default CAP_SYS_CHROOT gets nowhere), setns lands on the sandbox's root,
# joins (exec, cp) see the same root, and a run directory whose template went away
# gets a new one; one where it cannot be made remembers why and pivots. Its /dev nodes
# are made, read-only, or bound from the host's where none may be made. --userns=host
# keeps the pivot_root start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box a
new_box b
[ "$(stat -f -c %T "$DSEC_RUN/rootns")" = nsfs ] || fail "no template namespace at RUN/rootns"
init_a=$(jq .pid "$DSEC_RUN/sandboxes/a/state.json")
init_b=$(jq .pid "$DSEC_RUN/sandboxes/b/state.json")
tr '\0' ' ' < "/proc/$init_a/cmdline" | grep -q ' chroot ' || fail "the init did not start from the template: $(tr '\0' ' ' < "/proc/$init_a/cmdline")"
# Each sandbox has a namespace of its own, copied from the one template.
[ "$(readlink "/proc/$init_a/ns/mnt")" != "$(readlink "/proc/$init_b/ns/mnt")" ] || fail "two sandboxes share a mount namespace"
[ "$(readlink "/proc/$init_a/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] || fail "the sandbox is in the host's mount namespace"

# Inside: only the sandbox's own mounts, one at "/", the overlay; nothing of the template.
# (/dev and /proc come first in the table: they are made before the overlay.)
mountinfo=$(dsec-run exec a -- cat /proc/self/mountinfo)
[ "$(awk '$5 == "/" { for (i = 7; i < NF; i++) if ($i == "-") { print $(i + 1); break } }' <<< "$mountinfo")" = overlay ] ||
    fail "not one overlay, alone, at / inside: $mountinfo"
! grep -q 'dsec-root\| /r \|rootns' <<< "$mountinfo" || fail "a template mount is in sight: $mountinfo"
! grep -q "$T" <<< "$mountinfo" || fail "a host path is in the mount table: $mountinfo"
[ "$(dsec-run exec a -- stat -c %d:%i /)" = "$(dsec-run exec a -- stat -c %d:%i /..)" ] || fail "/.. is not /"

# The classic chroot escape, with the default capabilities (CAP_SYS_CHROOT among them).
expect a none chroot_escape
# Joining one's own mount namespace (it would land on the namespace's root): refused.
expect_not a ok setns /proc/self/ns/mnt

# Root inside allowed everything (CAP_SYS_ADMIN, no seccomp) detaches its root and joins
# its own namespace again: beneath lie only the template's /dev nodes, its empty proc and
# the init's scratch, no layer, no upper, nothing of the host's. (That sandbox is left
# without a root: one of its own.)
new_box adm --cap-add SYS_ADMIN --seccomp unconfined
expect adm none beneath_root
# Nor can it change the template's /dev, whose nodes every sandbox's /dev binds: its
# read-only flag is locked, and no device node can be made.
new_box adm2 --cap-add SYS_ADMIN --seccomp unconfined
expect adm2 EPERM template_dev
# The nodes, as the host's (device and mode), written to by a user of the sandbox.
[ "$(dsec-run exec a -- stat -c '%t:%T %a' /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty | xargs)" = \
    "$(stat -c '%t:%T %a' /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty | xargs)" ] ||
    fail "the sandbox's /dev nodes are not the host's: $(dsec-run exec a -- stat -c '%n %t:%T %a' /dev/null /dev/tty)"
dsec-run exec --user 1000 a -- sh -c 'echo x > /dev/null && ! echo x > /dev/full && head -c 1 /dev/urandom > /dev/null' ||
    fail "a user of the sandbox cannot use its /dev nodes"

# The init keeps a descriptor of its upper's mount (fd 5, for dsec-run snapshot), which
# --cap-add SYS_PTRACE opens to root inside: ".." from it must lead nowhere (the mount is
# detached), not to the layers' own mounts beside it.
new_box pt --cap-add SYS_PTRACE
up=$(dsec-run exec pt -- ls -a /proc/1/fd/5/ | xargs)
[ "$up" = ". .. upper work" ] || fail "fd 5 of the init is not the upper's mount: $up"
[ "$(dsec-run exec pt -- ls -a /proc/1/fd/5/.. | xargs)" = "$up" ] ||
    fail "\"..\" from the init's upper leads somewhere: $(dsec-run exec pt -- ls -a /proc/1/fd/5/.. | xargs)"

# From the host: setns into the namespace lands on the sandbox's root (the kernel
# follows the mounts on the namespace's root), as nsenter and dsec's joins rely on.
dsec-run exec a -- sh -c 'echo mark > /work/mark'
[ "$(nsenter -t "$init_a" -m cat /work/mark)" = mark ] || fail "setns into the mount namespace did not land on the sandbox's root"
dsec-run cp a:/work/mark "$T/mark" > /dev/null
[ "$(cat "$T/mark")" = mark ] || fail "cp out of the sandbox"

# The template goes (a reboot of the run directory's tmpfs, an admin's umount): the next
# create makes another; running sandboxes keep theirs.
umount "$DSEC_RUN/rootns"
new_box c
[ "$(stat -f -c %T "$DSEC_RUN/rootns")" = nsfs ] || fail "the template was not made again"
[ "$(dsec-run exec c -- cat /work/mark 2>&1 || true)" != mark ] || fail "c sees a's files"
dsec-run exec a -- true || fail "a no longer runs commands"

# Where no device node may be made (no CAP_MKNOD), the template binds the host's nodes.
umount "$DSEC_RUN/rootns"
capsh --drop=cap_mknod -- -c "dsec-run create --layers redteam --id nomknod > /dev/null" || fail "create without CAP_MKNOD"
on_exit "dsec-run destroy --force nomknod > /dev/null"
tr '\0' ' ' < "/proc/$(jq .pid "$DSEC_RUN/sandboxes/nomknod/state.json")/cmdline" | grep -q ' chroot ' ||
    fail "without CAP_MKNOD, no template: $(cat "$DSEC_RUN/rootns.unusable" 2>/dev/null)"
dsec-run exec nomknod -- sh -c 'echo x > /dev/null && head -c 1 /dev/zero > /dev/null' || fail "nomknod's /dev nodes"
[ "$(dsec-run exec nomknod -- stat -c %t:%T /dev/null)" = 1:3 ] || fail "nomknod's /dev/null"
null_source() { awk '$5 == "/dev/null" { for (i = 7; i < NF; i++) if ($i == "-") { print $(i + 2); exit } }'; }
[ "$(dsec-run exec a -- cat /proc/self/mountinfo | null_source)" = dev ] || fail "a's /dev/null is not the template's own node"
[ "$(dsec-run exec nomknod -- cat /proc/self/mountinfo | null_source)" != dev ] || fail "without CAP_MKNOD, the template made nodes"

# A host where the template could not be made says why in RUN/rootns.unusable, and
# creates go on with pivot_root without trying again until the file is removed.
umount "$DSEC_RUN/rootns"
echo "refused here" > "$DSEC_RUN/rootns.unusable"
new_box d
tr '\0' ' ' < "/proc/$(jq .pid "$DSEC_RUN/sandboxes/d/state.json")/cmdline" | grep -q ' pivot ' || fail "d did not pivot"
[ "$(stat -f -c %T "$DSEC_RUN/rootns")" != nsfs ] || fail "a template was made despite rootns.unusable"
dsec-run exec d -- true || fail "d runs no command"
rm "$DSEC_RUN/rootns.unusable"
new_box e
tr '\0' ' ' < "/proc/$(jq .pid "$DSEC_RUN/sandboxes/e/state.json")/cmdline" | grep -q ' chroot ' || fail "e did not start from a new template"

# --userns=host keeps the pivot_root start (its root could leave a chroot).
dsec-run create --layers redteam --id h --userns=host > /dev/null
on_exit "dsec-run destroy --force h > /dev/null"
init_h=$(jq .pid "$DSEC_RUN/sandboxes/h/state.json")
tr '\0' ' ' < "/proc/$init_h/cmdline" | grep -q ' pivot ' || fail "--userns=host did not pivot"
[ "$(dsec-run exec h -- stat -c %d:%i /)" = "$(dsec-run exec h -- stat -c %d:%i /..)" ] || fail "/.. is not / (pivot)"
echo ok
