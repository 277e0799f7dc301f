#!/bin/bash
# Hidden paths are looked up in the sandbox's own root, as the sandbox sees them, to pick
# each one's cover (an empty directory or an empty file) before it is attached: a path
# that is a directory in the image and a file on the host (/etc/os-release), a file in
# the image and a directory on the host (/srv), a path the image lacks but the host has
# (nothing to hide). Each kind is hidden for root inside, on every exec and after a
# reset, also through a symlink of the image that leads to it; the same layer without
# the policy shows every secret, so each check could fail.
# The image, which may be an agent's (a snapshot), cannot steer a rule with symlinks: a
# policy whose path is or passes through one (a magic link in /proc included) is
# refused at create, whatever the rule; a hidden file whose other hard link is not
# hidden is refused too.
. "$(dirname "$0")/lib.sh"

secret=HIDDEN-$RANDOM$RANDOM
[ -f /etc/os-release ] && [ -d /srv ] && [ -e /etc/hostname ] || skip "the host lacks /etc/os-release, /srv or /etc/hostname"
make_busybox_tree "$T/task"
mkdir -p "$T/task/etc/os-release"
echo "$secret" > "$T/task/etc/os-release/inside"
echo "$secret" > "$T/task/srv"
ln -s /srv "$T/task/etc/alias"
rm -f "$T/task/etc/hostname"
mkdir -p "$T/task/opt/grader" "$T/task/data" "$T/task/keys"
echo "$secret" > "$T/task/opt/grader/answer"
ln -s ../opt/grader "$T/task/grader-dir"
ln -s /opt/grader "$T/task/work"
ln -s /data "$T/task/ro-link"
echo "$secret" > "$T/task/keys/key"
ln "$T/task/keys/key" "$T/task/keys/key-copy"
dsec-layer build "$T/task" --name task > /dev/null

cat > "$T/policy.json" <<'JSON'
{"files": {"hidden": ["/etc/os-release", "/srv", "/etc/hostname", "/opt/grader/answer"]}}
JSON
dsec-run create --layers task --id open > /dev/null
on_exit "dsec-run destroy --force open > /dev/null"
dsec-run create --layers task --id guarded --policy "$T/policy.json" > /dev/null || fail "create with the policy"
on_exit "dsec-run destroy --force guarded > /dev/null"

# Without the policy every secret shows: the checks below can fail.
[ "$(dsec-run exec open -- cat /etc/os-release/inside)" = "$secret" ] || fail "the open sandbox lacks the directory"
[ "$(dsec-run exec open -- cat /srv)" = "$secret" ] || fail "the open sandbox lacks the file"
[ "$(dsec-run exec open -- cat /etc/alias)" = "$secret" ] || fail "the open sandbox's symlink does not lead to the file"
[ "$(dsec-run exec open -- cat /grader-dir/answer)" = "$secret" ] || fail "the open sandbox lacks the grader's file"

check_hidden() {
    local when=$1
    [ "$(dsec-run exec guarded -- stat -c %F /etc/os-release)" = directory ] || fail "$when: /etc/os-release is not a directory"
    [ -z "$(dsec-run exec guarded -- ls -A /etc/os-release)" ] || fail "$when: the hidden directory shows entries"
    [ "$(dsec-run exec guarded -- stat -c %F /srv)" = "regular empty file" ] || fail "$when: /srv is not an empty file"
    # Through the image's links too: they lead to the covers.
    [ -z "$(dsec-run exec guarded -- cat /etc/os-release/inside /srv /etc/alias /opt/grader/answer /grader-dir/answer 2>/dev/null)" ] ||
        fail "$when: a hidden file shows contents"
    [ "$(dsec-run exec guarded -- stat -L -c %F /etc/alias)" = "regular empty file" ] || fail "$when: /etc/alias leads elsewhere"
    # Covers are the host's cover tmpfs (one superblock per host).
    [ "$(dsec-run exec guarded -- stat -c %d /srv)" = "$(stat -c %d "$DSEC_RUN/guard")" ] || fail "$when: /srv has no cover"
    dsec-run exec guarded -- test -e /etc/hostname && fail "$when: a path the image lacks appeared"
    return 0
}

# Refused at create, with the reason, and nothing left: each rule kind, a symlink at the
# end of the path or on the way, a magic link; and a hard link left out.
refused() {
    local name=$1 policy=$2 want=$3
    echo "$policy" > "$T/$name.json"
    on_exit "dsec-run destroy --force $name > /dev/null 2>&1"
    dsec-run create --layers task --id "$name" --policy "$T/$name.json" > /dev/null 2> "$T/$name.err" &&
        fail "$name: created"
    grep -q "$want" "$T/$name.err" || fail "$name: $(cat "$T/$name.err")"
    dsec-run inspect "$name" > /dev/null 2>&1 && fail "$name: a sandbox was left"
    return 0
}
link="must not be or pass through a symlink"
refused rw-link '{"files": {"read_only": ["/"], "read_write": ["/work"]}}' "$link"
refused rw-through '{"files": {"read_write": ["/grader-dir/answer"]}}' "$link"
refused ro-link '{"files": {"read_only": ["/ro-link"]}}' "$link"
refused hidden-link '{"files": {"hidden": ["/etc/alias"]}}' "$link"
refused hidden-through '{"files": {"hidden": ["/grader-dir/answer"]}}' "$link"
refused magic '{"files": {"hidden": ["/proc/1/root/opt/grader/answer"]}}' "$link"
refused hard-link '{"files": {"hidden": ["/keys/key"]}}' "other hard links"

echo '{"files": {"hidden": ["/keys/key", "/keys/key-copy"]}}' > "$T/all-links.json"
on_exit "dsec-run destroy --force all-links > /dev/null 2>&1"
dsec-run create --layers task --id all-links --policy "$T/all-links.json" > /dev/null || fail "every link hidden: refused"
[ -z "$(dsec-run exec all-links -- cat /keys/key /keys/key-copy)" ] || fail "a hidden link shows the secret"
dsec-run destroy all-links > /dev/null

check_hidden "after create"
dsec-run reset guarded > /dev/null || fail "reset"
check_hidden "after a reset"
dsec-run destroy guarded > /dev/null
echo ok
