#!/bin/bash
# dsec-guard check: every example policy in the repository is valid and prints what it
# compiles to; each should-fail policy in tests/data/policies is an error record plus one
# line on stderr naming the field, exit 1; dsec-run create refuses a bad policy before
# it makes anything.
. "$(dirname "$0")/lib.sh"

for f in "$DSEC_SRC"/examples/policies/*.json; do
    out=$(dsec-guard check "$f" 2> "$T/err") || fail "example $f: $(cat "$T/err")"
    [ "$(jq -r .type <<< "$out")" = policy ] || fail "$f: not a policy record: $out"
    [ "$(jq -r .path <<< "$out")" = "$(realpath "$f")" ] || fail "$f: path: $out"
    [ "$(jq -r '.digest | length' <<< "$out")" = 64 ] || fail "$f: digest: $out"
    [ "$(jq -r .network.egress <<< "$out")" = deny ] || fail "$f: egress is not default deny: $out"
    [ "$(jq -r .seccomp.instructions <<< "$out")" -gt 20 ] || fail "$f: seccomp not compiled: $out"
done
# What eval.json compiles to, field by field.
out=$(dsec-guard check "$DSEC_SRC/examples/policies/eval.json")
[ "$(jq -c .files.hidden <<< "$out")" = '["/answers","/grader","/root/.cache"]' ] || fail "eval hidden: $out"
[ "$(jq -r .limits.memory <<< "$out")" = 2147483648 ] || fail "eval memory: $out"
[ "$(jq -c .syscalls.deny <<< "$out")" = '["io_uring_setup","io_uring_enter","io_uring_register"]' ] || fail "eval deny: $out"
# An allowed call the default never refuses is pointed out; ptrace is not.
echo '{"syscalls": {"allow": ["ptrace", "getpid"]}}' > "$T/noop.json"
[ "$(dsec-guard check "$T/noop.json" | jq -c .seccomp.allowed_already)" = '["getpid"]' ] || fail "allowed_already"
# Several at once: one record each.
[ "$(dsec-guard check "$DSEC_SRC"/examples/policies/*.json 2>/dev/null | jq -s length)" = \
  "$(ls "$DSEC_SRC"/examples/policies/*.json | wc -l)" ] || fail "one record per policy"
# Domain rules are printed as they are; check resolves nothing (that is create's and
# refresh's, test 94).
out=$(dsec-guard check "$DSEC_SRC/examples/policies/install.json" 2> "$T/err")
[ ! -s "$T/err" ] || fail "check said something about a valid policy: $(cat "$T/err")"
[ "$(jq -r '.network.allow[1].domain' <<< "$out")" = pypi.org ] || fail "domain rule: $out"

# The should-fail policies: each names its field.
declare -A want=(
    [bad-json.json]="policy: top level: not valid JSON"
    [bad-hidden-relative.json]="policy: files.hidden[0]: not an absolute path"
    [bad-allow-mount.json]="policy: syscalls.allow[0]: \"mount\" can never be allowed"
    [bad-cidr.json]="policy: network.allow[0].cidr: \"10.0.0.1/8\" has bits set past its prefix length"
    [bad-unknown-key.json]="policy: top level: unknown key \"syscall\""
    [bad-limits.json]="policy: limits.memory: "
)
for name in "${!want[@]}"; do
    f="$DATA/policies/$name"
    rc=0
    dsec-guard check "$f" > "$T/out" 2> "$T/err" || rc=$?
    [ "$rc" = 1 ] || fail "$name: exit $rc, expected 1"
    [ "$(jq -r .type "$T/out")" = error ] || fail "$name: no error record: $(cat "$T/out")"
    [ "$(jq -r .code "$T/out")" = bad_input ] || fail "$name: code: $(cat "$T/out")"
    grep -qF -- "${want[$name]}" "$T/err" || fail "$name: stderr does not name the field: $(cat "$T/err")"
    [ "$(wc -l < "$T/err")" = 1 ] || fail "$name: more than one line on stderr: $(cat "$T/err")"
done
# A bad one among good ones: the good ones still print, exit 1.
rc=0
n=$(dsec-guard check "$DSEC_SRC/examples/policies/eval.json" "$DATA/policies/bad-cidr.json" \
    "$DSEC_SRC/examples/policies/debugger.json" 2>/dev/null | jq -r .type | sort | uniq -c | tr -s ' ' | xargs) || rc=$?
[ "$n" = "1 error 2 policy" ] || fail "mixed batch gave: $n"
expect_exit 2 dsec-guard check
expect_exit 1 dsec-guard check "$T/no-such-policy.json"

# create refuses a bad policy before it makes anything: no sandbox, no state, no cgroup
# (a name that does not resolve: test 94).
make_busybox_tree "$T/base"
dsec-layer build "$T/base" --name base > /dev/null
for f in "$DATA/policies/bad-hidden-relative.json"; do
    rc=0
    dsec-run create --layers base --id refused --policy "$f" > "$T/out" 2> "$T/err" || rc=$?
    [ "$rc" = 1 ] || fail "create with $f: exit $rc"
    [ "$(jq -r .type "$T/out")" = error ] || fail "create with $f: no error record: $(cat "$T/out")"
    grep -q "policy: " "$T/err" || fail "create with $f: $(cat "$T/err")"
    [ -z "$(dsec-run ls)" ] || fail "create with $f left a sandbox: $(dsec-run ls)"
    [ ! -e "$DSEC_RUN/sandboxes/refused" ] || fail "create with $f left a state directory"
done
echo ok
