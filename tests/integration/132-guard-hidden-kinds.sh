#!/bin/bash
# Hidden paths are looked up in the sandbox's own root, as the sandbox sees them, to pick
# each one's cover (an empty directory or an empty file) before it is attached: a path
# that is a directory in the image and a file on the host (/etc/os-release), a file in
# the image and a directory on the host (/srv), an absolute symlink that leads to the
# image's file (resolved inside the sandbox, not on the host, where it would lead to a
# directory), and a path the image lacks but the host has (nothing to hide). Each kind
# is hidden for root inside, on every exec and after a reset; the same layer without
# the policy shows every secret, so each check could fail. A rule on a symlink applies to
# what it leads to: hiding only the link hides the target under its own name too, and a
# read_only link makes its target read-only. The image cannot steer a rule: a read_write
# path that is a symlink (to the grader, say) is refused, and so is a hidden link to "/";
# a file hidden by its name and by a link to it still needs its other hard links hidden.
. "$(dirname "$0")/lib.sh"

secret=HIDDEN-$RANDOM$RANDOM
[ -f /etc/os-release ] && [ -d /srv ] && [ -e /etc/hostname ] || skip "the host lacks /etc/os-release, /srv or /etc/hostname"
make_busybox_tree "$T/task"
mkdir -p "$T/task/etc/os-release"
echo "$secret" > "$T/task/etc/os-release/inside"
echo "$secret" > "$T/task/srv"
ln -s /srv "$T/task/etc/alias"
rm -f "$T/task/etc/hostname"
mkdir -p "$T/task/opt/grader" "$T/task/data"
echo "$secret" > "$T/task/opt/grader/answer"
ln -s /opt/grader/answer "$T/task/etc/only-link"
ln -s ../opt/grader "$T/task/grader-dir"
ln -s /data "$T/task/ro-link"
ln -s /opt/grader "$T/task/work"
ln -s / "$T/task/etc/root-link"
mkdir -p "$T/task/keys"
echo "$secret" > "$T/task/keys/key"
ln "$T/task/keys/key" "$T/task/keys/key-copy"
ln -s /keys/key "$T/task/keys/key-link"
dsec-layer build "$T/task" --name task > /dev/null

cat > "$T/policy.json" <<'JSON'
{"files": {"hidden": ["/etc/os-release", "/srv", "/etc/alias", "/etc/hostname", "/etc/only-link"],
           "read_only": ["/ro-link"]}}
JSON
dsec-run create --layers task --id open > /dev/null
on_exit "dsec-run destroy --force open > /dev/null"
dsec-run create --layers task --id guarded --policy "$T/policy.json" > /dev/null || fail "create with the policy"
on_exit "dsec-run destroy --force guarded > /dev/null"

# Without the policy every secret shows: the checks below can fail.
[ "$(dsec-run exec open -- cat /etc/os-release/inside)" = "$secret" ] || fail "the open sandbox lacks the directory"
[ "$(dsec-run exec open -- cat /srv)" = "$secret" ] || fail "the open sandbox lacks the file"
[ "$(dsec-run exec open -- cat /etc/alias)" = "$secret" ] || fail "the open sandbox's symlink does not lead to the file"
[ "$(dsec-run exec open -- cat /opt/grader/answer)" = "$secret" ] || fail "the open sandbox lacks the link's target"
dsec-run exec open -- touch /data/written || fail "the open sandbox's /data is not writable"

check_hidden() {
    local when=$1
    [ "$(dsec-run exec guarded -- stat -c %F /etc/os-release)" = directory ] || fail "$when: /etc/os-release is not a directory"
    [ -z "$(dsec-run exec guarded -- ls -A /etc/os-release)" ] || fail "$when: the hidden directory shows entries"
    [ "$(dsec-run exec guarded -- stat -c %F /srv)" = "regular empty file" ] || fail "$when: /srv is not an empty file"
    local out
    for path in /etc/os-release/inside /srv /etc/alias /etc/only-link /opt/grader/answer /grader-dir/answer; do
        out=$(dsec-run exec guarded -- cat "$path" 2>&1 || true)
        case $out in *"$secret"*) fail "$when: $path shows the secret" ;; esac
    done
    # Covers are the host's cover tmpfs (one superblock per host).
    [ "$(dsec-run exec guarded -- stat -c %d /srv)" = "$(stat -c %d "$DSEC_RUN/guard")" ] || fail "$when: /srv has no cover"
    dsec-run exec guarded -- test -e /etc/hostname && fail "$when: a path the image lacks appeared"
    # The link itself still reads as a link; what it names is covered.
    [ "$(dsec-run exec guarded -- stat -c %N /etc/only-link)" = "'/etc/only-link' -> '/opt/grader/answer'" ] || fail "$when: the link was replaced"
    for path in /data/written /ro-link/written; do
        out=$(dsec-run exec guarded -- touch "$path" 2>&1) && fail "$when: $path is writable"
        case $out in *"Read-only file system"*) ;; *) fail "$when: touch $path: $out" ;; esac
    done
    return 0
}
# The image cannot steer a rule: each of these policies is refused at create.
refused() {
    local name=$1 policy=$2 want=$3
    echo "$policy" > "$T/$name.json"
    dsec-run create --layers task --id "$name" --policy "$T/$name.json" > /dev/null 2> "$T/$name.err" &&
        { dsec-run destroy --force "$name" > /dev/null; fail "$name: created"; }
    grep -q "$want" "$T/$name.err" || fail "$name: $(cat "$T/$name.err")"
    dsec-run inspect "$name" > /dev/null 2>&1 && fail "$name: a sandbox was left"
    return 0
}
refused rw-link '{"files": {"read_only": ["/"], "read_write": ["/work"]}}' "must not be or pass through a symlink"
refused rw-through '{"files": {"read_write": ["/grader-dir/answer"]}}' "must not be or pass through a symlink"
refused root-link '{"files": {"hidden": ["/etc/root-link"]}}' "leads to /"
# /keys/key by name and by link, /keys/key-copy not: the copy would show it.
refused hard-link '{"files": {"hidden": ["/keys/key", "/keys/key-link"]}}' "other hard links"
dsec-run create --layers task --id all-links --policy <(echo '{"files": {"hidden": ["/keys/key", "/keys/key-link", "/keys/key-copy"]}}') \
    > /dev/null || fail "every link hidden: refused"
out=$(dsec-run exec all-links -- cat /keys/key-copy 2>&1 || true)
case $out in *"$secret"*) fail "the hidden copy shows the secret" ;; esac
dsec-run destroy all-links > /dev/null

check_hidden "after create"
dsec-run reset guarded > /dev/null || fail "reset"
check_hidden "after a reset"
dsec-run destroy guarded > /dev/null
echo ok
