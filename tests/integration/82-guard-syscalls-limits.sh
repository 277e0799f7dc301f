#!/bin/bash
# A policy's syscall changes and limits at create: an allowed call that the default
# profile refuses works (io_uring_setup), a denied call is refused (mkdir, mkdirat), both
# only in the sandbox whose policy says so; the compiled filter is cached by digest (a
# second sandbox with the same policy shares it); the policy's limits are tighter than
# the defaults and than --pids, and never looser than --memory.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
cat > "$T/policy.json" <<'JSON'
{"syscalls": {"allow": ["io_uring_setup"], "deny": ["mkdir", "mkdirat"]},
 "limits": {"pids": 64, "memory": "1G", "nofile": 512}}
JSON
new_box plain
new_box tuned --policy "$T/policy.json" --pids 128 --memory 256M
new_box twin --policy "$T/policy.json"

# io_uring: refused by default, allowed by the policy.
expect plain EPERM io_uring_setup
line=$(probe_checked tuned io_uring_setup)
[ "$(result_of "$line")" != EPERM ] || fail "io_uring_setup still refused under the policy: $line"
# mkdir: works by default, refused by the policy.
dsec-run exec plain -- mkdir /work/d || fail "mkdir refused without a policy"
err=$(dsec-run exec tuned -- mkdir /work/d 2>&1) && fail "mkdir worked under a policy that denies it"
grep -q "Operation not permitted" <<< "$err" || fail "mkdir under the policy: $err"
# The rest of the default profile still holds.
expect tuned EPERM keyctl
expect tuned EPERM fsopen tmpfs
expect tuned EPERM ptrace self

# One compiled filter for both sandboxes of the same policy, another for the default.
a=$(stat -c %i "$DSEC_RUN/sandboxes/tuned/seccomp.bpf")
b=$(stat -c %i "$DSEC_RUN/sandboxes/twin/seccomp.bpf")
c=$(stat -c %i "$DSEC_RUN/sandboxes/plain/seccomp.bpf")
[ "$a" = "$b" ] || fail "two sandboxes of one policy have different filters"
[ "$a" != "$c" ] || fail "the policy's filter is the default one"
[ "$(ls "$DSEC_RUN/seccomp" | wc -l)" = 2 ] || fail "expected two cached filters: $(ls "$DSEC_RUN/seccomp")"

# Limits: pids 64 (policy below --pids 128), memory 256M (--memory below the policy's 1G),
# nofile 512; the twin gets the policy's pids below the default 4096.
[ "$(cat "$(cgroup_file tuned pids.max)")" = 64 ] || fail "pids.max of tuned: $(cat "$(cgroup_file tuned pids.max)")"
[ "$(cat "$(cgroup_file twin pids.max)")" = 64 ] || fail "pids.max of twin"
[ "$(cat "$(cgroup_file plain pids.max)")" = 4096 ] || fail "pids.max of plain"
mem=$(cgroup_file tuned memory.max || cgroup_file tuned memory.limit_in_bytes) || fail "no memory limit file"
[ "$(cat "$mem")" = $((256 << 20)) ] || fail "memory limit of tuned: $(cat "$mem")"
[ "$(dsec-run exec tuned -- sh -c 'ulimit -n')" = 512 ] || fail "nofile of tuned: $(dsec-run exec tuned -- sh -c 'ulimit -n')"
[ "$(dsec-run inspect tuned | jq -r .limits.pids)" = 64 ] || fail "the state does not record the policy's pids"

# A policy that changes syscalls needs a profile to change.
expect_exit 1 dsec-run create --layers redteam --id nope --policy "$T/policy.json" --seccomp unconfined > /dev/null 2>&1
[ ! -e "$DSEC_RUN/sandboxes/nope" ] || fail "a refused create left a state"
echo ok
