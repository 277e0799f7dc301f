#!/bin/bash
# A policy's file rules at create: a hidden reference-answer directory and file that no
# trick inside reveals (find, grep, hard link, /proc/self/root, /proc/1/root, unmounting
# or remounting the cover, a new mount namespace, a detached mount view, file handles),
# root inside included and through every door (exec, cp, run); "/" read-only but for
# /work (and /tmp, a mount of its own); the same layer without the policy shows
# everything, so each check could fail. The tricks run inside the sandbox only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

secret=REFERENCE-ANSWER-$RANDOM$RANDOM
make_busybox_tree "$T/task"
for app in find grep ln mv cp sed readlink xargs; do ln -sf busybox "$T/task/bin/$app"; done
cp "$DSEC_BIN/dsec-probe" "$T/task/probe"
mkdir -p "$T/task/answers/deep" "$T/task/work"
echo "$secret" > "$T/task/answers/deep/ref.txt"
echo "$secret" > "$T/task/etc/grader-token"
chmod 1777 "$T/task/work"
dsec-layer build "$T/task" --name task > /dev/null

cat > "$T/policy.json" <<'JSON'
{"files": {"read_only": ["/"], "read_write": ["/work"], "hidden": ["/answers", "/etc/grader-token", "/not-there"]}}
JSON
# The layers and the covers of hidden paths are mounted once per host (run directory).
host_mounts() { grep -vcE " $DSEC_RUN/(layers|guard|init|rootns)" /proc/self/mounts; }
mounts_before=$(host_mounts)
dsec-run create --layers task --id open > /dev/null
on_exit "dsec-run destroy --force open > /dev/null"
dsec-run create --layers task --id guarded --policy "$T/policy.json" > "$T/created" || fail "create with the policy"
on_exit "dsec-run destroy --force guarded > /dev/null"
[ "$(jq -r .guard.files.hidden[0] "$T/created")" = /answers ] || fail "no guard object in the record: $(cat "$T/created")"
[ "$(dsec-run inspect guarded | jq -r .policy)" = "$T/policy.json" ] || fail "inspect does not show the policy"

# Without the policy the secret is there: the checks below can fail.
dsec-run exec open -- cat /answers/deep/ref.txt | grep -qx "$secret" || fail "the open sandbox lacks the answer"
dsec-run exec open -- cat /etc/grader-token | grep -qx "$secret" || fail "the open sandbox lacks the token"

# The covers are clones of the host's one cover tmpfs: no superblock per sandbox, and the
# sandbox's mount table names no host path.
[ "$(dsec-run exec guarded -- stat -c %d /answers)" = "$(stat -c %d "$DSEC_RUN/guard")" ] \
    || fail "the cover of /answers is not the host's cover tmpfs"
[ "$(dsec-run exec guarded -- stat -c %d /etc/grader-token)" = "$(stat -c %d "$DSEC_RUN/guard")" ] \
    || fail "the cover of /etc/grader-token is not the host's cover tmpfs"
no_host_path "the guarded sandbox's mountinfo" "$(dsec-run exec guarded -- cat /proc/self/mountinfo)"

# The tricks, each of which must print nothing of the secret (root inside).
# shellcheck disable=SC2016 # the sandbox's shell expands these
tricks=(
    'cat /answers/deep/ref.txt'
    'cat /etc/grader-token'
    'ls -laR /answers'
    'find / -xdev -name ref.txt'
    'find / -xdev -type f | xargs grep -l REFERENCE-ANSWER'
    'grep -r REFERENCE-ANSWER /answers /etc /root /work /tmp'
    'ln /answers/deep/ref.txt /work/link && cat /work/link'
    'ln /etc/grader-token /work/link2 && cat /work/link2'
    'cat /proc/self/root/answers/deep/ref.txt'
    'cat /proc/1/root/answers/deep/ref.txt'
    'cd /proc/1/root/answers 2>/dev/null && cat deep/ref.txt'
    'cat /proc/$$/root/etc/grader-token'
    'cp -a /answers /work/copy && cat /work/copy/deep/ref.txt'
    'mv /answers /work/moved; cat /work/moved/deep/ref.txt'
)
for t in "${tricks[@]}"; do
    out=$(dsec-run exec guarded -- sh -c "$t" 2>&1 || true)
    case $out in *"$secret"*) fail "trick reveals the hidden answer: $t" ;; esac
done
# As another user, and through cp: the same cover.
out=$(dsec-run exec --user 1000 guarded -- sh -c 'cat /answers/deep/ref.txt' 2>&1 || true)
case $out in *"$secret"*) fail "user 1000 sees the hidden answer: $out" ;; esac
[ -z "$(dsec-run exec --user 1000 guarded -- ls -A /answers)" ] || fail "user 1000 sees the hidden directory's entries"
rc=0
dsec-run cp guarded:/answers/deep/ref.txt "$T/copied" > /dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] && [ ! -s "$T/copied" ] || fail "dsec-run cp copied the hidden answer out"
[ -z "$(dsec-run exec guarded -- ls -A /answers)" ] || fail "the hidden directory is not empty"
[ -z "$(dsec-run exec guarded -- cat /etc/grader-token)" ] || fail "the hidden file is not empty"

# A one-shot sandbox (dsec-run run) takes the same policy.
out=$(dsec-run run --layers task --policy "$T/policy.json" -- cat /answers/deep/ref.txt 2>&1 || true)
case $out in *"$secret"*) fail "dsec-run run --policy shows the hidden answer" ;; esac

# The attacks on the cover itself, through dsec-probe.
expect guarded EPERM umount /answers
expect guarded EPERM umount /etc/grader-token
expect guarded EPERM setattr_rw /answers
expect guarded EPERM remount_rw /answers
expect guarded EPERM open_tree /
expect guarded EPERM open_tree /answers
expect guarded EPERM unshare_ns
expect guarded EPERM clone_ns
expect guarded EPERM unshare_user
expect guarded EPERM name_to_handle_at /answers
expect guarded EPERM open_by_handle_at /
expect guarded EPERM mount_proc
expect guarded EPERM fsopen tmpfs
expect_not guarded ok open_write /answers/deep/ref.txt

# Read-only "/": nothing written, renamed or removed; /work and /tmp stay writable.
for t in 'touch /new' 'echo x > /etc/passwd' 'rm /bin/busybox' 'mv /etc /etc2' 'mkdir /usr/x' 'rmdir /work'; do
    if dsec-run exec guarded -- sh -c "$t" 2> /dev/null; then fail "read-only root: '$t' worked"; fi
done
err=$(dsec-run exec guarded -- touch /new 2>&1 || true)
grep -q "Read-only file system" <<< "$err" || fail "touch /new: not EROFS: $err"
dsec-run exec guarded -- sh -c 'echo data > /work/out && cat /work/out' | grep -qx data || fail "/work is not writable"
dsec-run exec guarded -- sh -c 'echo data > /tmp/out && cat /tmp/out' | grep -qx data || fail "/tmp is not writable"
dsec-run exec open -- touch /new || fail "the open sandbox's root is not writable"
expect guarded EPERM remount_rw /
expect guarded EPERM setattr_rw /
# dsec-run cp goes through the same mounts: refused into /etc and under the cover.
echo copied-in > "$T/in"
expect_exit 1 dsec-run cp "$T/in" guarded:/etc/in > /dev/null 2>&1
expect_exit 1 dsec-run cp "$T/in" guarded:/answers/in > /dev/null 2>&1
dsec-run cp "$T/in" guarded:/work/in > /dev/null || fail "cp into /work"
[ "$(dsec-run exec guarded -- cat /work/in)" = copied-in ] || fail "cp into /work did not land"

# A second exec still sees the same (the mounts live in the sandbox's namespace).
[ -z "$(dsec-run exec guarded -- ls -A /answers)" ] || fail "the cover is gone on a later exec"

# The policy holds across a reset (a new init, a new mount namespace) and in forks (they
# start from a snapshot stacked on the same layers, the answer among them).
dsec-run reset guarded > /dev/null || fail "reset"
[ -z "$(dsec-run exec guarded -- ls -A /answers)" ] || fail "the cover is gone after a reset"
expect_exit 1 dsec-run exec guarded -- touch /etc/after-reset
fork=$(dsec-run fork guarded --count 1 | jq -r .id) || fail "fork"
on_exit "dsec-run destroy --force $fork > /dev/null"
[ -z "$(dsec-run exec "$fork" -- ls -A /answers)" ] || fail "the answer shows in a fork"
dsec-run exec "$fork" -- cat /answers/deep/ref.txt 2> /dev/null && fail "a fork reads the answer"
dsec-run destroy "$fork" > /dev/null

# Nothing reached the host's mount table; destroy takes everything.
[ "$(host_mounts)" = "$mounts_before" ] || fail "the host's mount table changed"
dsec-run destroy guarded > /dev/null
[ ! -e "$DSEC_RUN/sandboxes/guarded" ] || fail "destroy left the state"
echo ok
