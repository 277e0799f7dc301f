#!/bin/bash
# A policy that parses but fails to apply (a read-only path the image lacks; a hidden
# file with a hard link the policy leaves visible) leaves no sandbox: no state, no init,
# no cgroup, no mount, a clear error naming the step and path; the same create without
# the bad rule then works with the same id. File rules with SYS_ADMIN kept are refused.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/base"
mkdir -p "$T/base/srv"
echo token > "$T/base/etc/token"
ln "$T/base/etc/token" "$T/base/srv/token-link"
dsec-layer build "$T/base" --name base > /dev/null
cat > "$T/bad.json" <<'JSON'
{"files": {"hidden": ["/etc/passwd"], "read_only": ["/usr", "/no/such/dir"]}}
JSON
# The layers and the covers of hidden paths are mounted once per host (run directory).
host_mounts() { grep -vcE " $DSEC_RUN/(layers|guard|init|rootns)" /proc/self/mounts; }
mounts_before=$(host_mounts)
# Should a create wrongly succeed, the sandbox still goes at the end.
on_exit "dsec-run destroy --force half > /dev/null 2>&1"
rc=0
dsec-run create --layers base --id half --policy "$T/bad.json" > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] || fail "create with a policy that cannot apply: exit $rc"
[ "$(jq -r .type "$T/out")" = error ] || fail "no error record: $(cat "$T/out")"
grep -q "applying the policy" "$T/err" || fail "the error does not say what failed: $(cat "$T/err")"
grep -q "/no/such/dir" "$T/err" || fail "the error does not name the path: $(cat "$T/err")"
[ "$(wc -l < "$T/err")" = 1 ] || fail "more than one line on stderr: $(cat "$T/err")"
[ -z "$(dsec-run ls)" ] || fail "a sandbox is left: $(dsec-run ls)"
[ ! -e "$DSEC_RUN/sandboxes/half" ] || fail "the state directory is left"
[ "$(host_mounts)" = "$mounts_before" ] || fail "mounts are left"
for d in /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT"/half /sys/fs/cgroup/"$DSEC_CGROUP_PARENT"/half; do
    [ ! -e "$d" ] || fail "cgroup left: $d"
done
# A hidden file with a second link elsewhere: refused; with both links hidden: fine.
echo '{"files": {"hidden": ["/etc/token"]}}' > "$T/link.json"
rc=0
dsec-run create --layers base --id half --policy "$T/link.json" > /dev/null 2> "$T/err" || rc=$?
[ "$rc" = 1 ] || fail "create hiding one of two links: exit $rc"
grep -q "hard links /etc/token" "$T/err" || fail "the error does not name the link: $(cat "$T/err")"
[ ! -e "$DSEC_RUN/sandboxes/half" ] || fail "the state directory is left after the link refusal"
echo '{"files": {"hidden": ["/etc/token", "/srv/token-link"]}}' > "$T/links.json"
dsec-run create --layers base --id links --policy "$T/links.json" > /dev/null || fail "create hiding both links"
on_exit "dsec-run destroy --force links > /dev/null"
[ -z "$(dsec-run exec links -- cat /etc/token /srv/token-link)" ] || fail "a link shows the token"

# The same id, the policy without the bad path: created, and the rest applied.
sed -i 's|, "/no/such/dir"||' "$T/bad.json"
# File rules with SYS_ADMIN kept: refused before anything is made (the covers are not
# locked mounts; root inside could take them off).
rc=0
dsec-run create --layers base --id half --policy "$T/bad.json" --cap-add SYS_ADMIN > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] || fail "file rules with SYS_ADMIN: exit $rc"
grep -q "SYS_ADMIN" "$T/err" || fail "the refusal does not say why: $(cat "$T/err")"
[ ! -e "$DSEC_RUN/sandboxes/half" ] || fail "a refused create left its state directory"
dsec-run create --layers base --id half --policy "$T/bad.json" > /dev/null || fail "create after fixing the policy"
[ -z "$(dsec-run exec half -- cat /etc/passwd)" ] || fail "/etc/passwd is not hidden"
if dsec-run exec half -- touch /usr/x 2> /dev/null; then fail "/usr is writable"; fi
echo ok
