#!/bin/bash
# --user by name, as podman users type it: looked up in the sandbox's own /etc/passwd and
# /etc/group at each exec, never in the host's, and never through a link, FIFO or huge
# file the sandbox plants there.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
mkdir -p "$T/tree/etc"
printf 'root:x:0:0:root:/root:/bin/sh\nalice:x:1234:2345::/home/alice:/bin/sh\n' > "$T/tree/etc/passwd"
printf 'root:x:0:\nstaff:x:77:alice\n' > "$T/tree/etc/group"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-run create --layers base --id un > /dev/null
on_exit "dsec-run destroy --force un > /dev/null"
dsec-run create --layers base --id un2 --user alice:staff > /dev/null
on_exit "dsec-run destroy --force un2 > /dev/null"

[ "$(dsec-run exec -u alice un -- id -u):$(dsec-run exec -u alice un -- id -g)" = 1234:2345 ] ||
    fail "alice: $(dsec-run exec -u alice un -- id)"
[ "$(dsec-run exec -u alice:staff un -- id -g)" = 77 ] || fail "alice:staff"
[ "$(dsec-run exec -u 1234:staff un -- id -g)" = 77 ] || fail "1234:staff"
[ "$(dsec-run exec un2 -- id -u):$(dsec-run exec un2 -- id -g)" = 1234:77 ] || fail "create --user alice:staff"
# A name the image does not have: a clear error naming it (the host has a "daemon" user).
grep -q '^daemon:' /etc/passwd || echo 'daemon user missing on the host: the check below proves less' >&2
out=$(dsec-run exec -u daemon un -- true 2>&1) && fail "a host-only user name was accepted"
grep -q "no \"daemon\" in the sandbox's /etc/passwd" <<<"$out" || fail "unknown name: $out"
expect_exit 2 dsec-run exec -u 'Bad Name' un -- true 2> /dev/null
expect_exit 2 dsec-run create --layers base -u 'x:' 2> /dev/null
# Names are looked up at each exec: root inside may add a user.
dsec-run exec un -- sh -c 'echo "carol:x:4321:4321::/:/bin/sh" >> /etc/passwd'
[ "$(dsec-run exec -u carol un -- id -u)" = 4321 ] || fail "a user added inside"

# Hostile: /etc/passwd a link out of the sandbox resolves inside it (the host's file,
# with a "daemon" entry, is never read); /etc/group a FIFO is refused, not waited on.
dsec-run exec un -- sh -c 'rm /etc/passwd; ln -s ../../../../../../../etc/host-passwd /etc/passwd;
    printf "daemon:x:4444:4444::/:/bin/sh\n" > /etc/host-passwd'
[ "$(dsec-run exec -u daemon un -- id -u)" = 4444 ] || fail "the link did not resolve inside the sandbox"
dsec-run exec un -- sh -c 'rm /etc/passwd; ln -s /proc/self/root/etc/shadow /etc/passwd'
out=$(dsec-run exec -u alice un -- true 2>&1) && fail "a magic link was followed"
dsec-run exec un -- sh -c 'rm /etc/group; mkfifo /etc/group'
rc=0
out=$(timeout 10 dsec-run exec -u 1234:staff un -- true 2>&1) || rc=$?
[ "$rc" != 124 ] || fail "a FIFO as /etc/group made exec hang"
[ "$rc" != 0 ] || fail "a FIFO as /etc/group was read"
grep -q 'not a regular file' <<<"$out" || fail "FIFO error: $out"
echo ok
