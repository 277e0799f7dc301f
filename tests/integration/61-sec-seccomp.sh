#!/bin/bash
# Red team, seccomp: every system call the default profile closes gives its intended
# answer inside (EPERM; ENOSYS for clone3; the process killed with SIGSYS for the x32 and
# i386 ABIs), ioctl requests also with high bits set in the 64-bit register. Where the
# capability cut alone would refuse with the same EPERM, the same attack in a sandbox
# with --seccomp unconfined gives another answer, which shows seccomp is the barrier.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box sc
new_box un --seccomp unconfined
line=$(probe sc status)
[ "$(field_of "$line" Seccomp)" = 2 ] || fail "no seccomp filter by default: $line"
line=$(probe un status)
[ "$(field_of "$line" Seccomp)" = 0 ] || fail "--seccomp unconfined still filters: $line"

sysctl_is() { [ "$(cat "/proc/sys/$1" 2>/dev/null)" = "$2" ]; }

# both ATTACK... : refused with EPERM by the profile, and not EPERM without it (seccomp is
# the only barrier: no capability is needed for these).
both() {
    expect sc EPERM "$@"
    expect_not un EPERM "$@"
}
both unshare_user
both clone_user
both setns /proc/self/ns/user # joining one's own user namespace: EINVAL without seccomp
both add_key
both keyctl
both request_key
both userfaultfd
both personality
both ptrace child
both vm_read child
both pidfd_getfd child
both name_to_handle_at /tmp
both perf_event_open
both clock_settime # CLOCK_MONOTONIC: EINVAL once past seccomp
both tiocsti
both tiocsti hi
both tioclinux
# clone3 cannot be filtered on its flags (they sit in memory): ENOSYS, so that libcs
# fall back to clone, whose flags the filter sees.
expect sc ENOSYS clone3
expect sc ENOSYS clone3_user
expect un ok clone3

# Where the host's sysctls let an unprivileged process through, seccomp is what stops it.
for a in bpf_map bpf_prog; do
    expect sc EPERM $a
    if sysctl_is kernel/unprivileged_bpf_disabled 0; then expect un ok $a; fi
done
expect sc EPERM io_uring_setup
if sysctl_is kernel/io_uring_disabled 0; then expect un ok io_uring_setup; fi
expect sc EPERM syslog
if sysctl_is kernel/dmesg_restrict 0; then expect un ok syslog; fi

# Refused by the profile (the missing capability would refuse them too).
for a in unshare_ns clone_ns init_module finit_module kexec_load reboot acct swapon pivot_root \
         mount_proc mount_devtmpfs open_tree fsopen "open_by_handle_at /"; do
    # shellcheck disable=SC2086 # an attack and its argument
    expect sc EPERM $a
done

# The file-data ioctls, on a file in /tmp, as such and with bit 32 set: EPERM from the
# profile; without it the kernel answers for the filesystem (EOPNOTSUPP, ENOTTY, ...),
# the same with and without the high bit.
for req in ficlone ficlonerange fideduperange fiemap xfs_swapext xfs_exchange_range; do
    expect sc EPERM ioctl $req
    expect sc EPERM ioctl $req hi
    lo=$(result_of "$(probe un ioctl $req)")
    hi=$(result_of "$(probe un ioctl $req hi)")
    { [ -n "$lo" ] && [ "$lo" != EPERM ] && [ "$lo" = "$hi" ]; } \
        || fail "ioctl $req without seccomp: expected the filesystem's answer, the same with the high bit; got $lo and $hi"
done

# Other ABIs: the process is killed (SIGSYS), not merely refused.
expect sc SIGSYS x32
expect_not un SIGSYS x32
# Some hosts make no i386 system calls at all (int $0x80 faults, SIGSEGV, even without a
# filter, as in some virtual machines): there it cannot get through either way.
int80_un=$(result_of "$(probe_checked un int80)")
if [ "$int80_un" = SIGSEGV ]; then
    echo "note: int \$0x80 faults on this host even without seccomp: no i386 system calls to kill" >&2
    expect sc SIGSEGV int80
else
    [ "$int80_un" != SIGSYS ] || fail "un: int80: must not give SIGSYS"
    expect sc SIGSYS int80
fi

# Raw and packet sockets: even with CAP_NET_RAW added, the profile refuses them (with any
# flags in the type); only without it does the capability let them through.
new_box rawsc --cap-add NET_RAW
new_box rawun --cap-add NET_RAW --seccomp unconfined
for a in packet packet_dgram raw raw6 raw_flags; do
    expect sc EPERM $a
    expect rawsc EPERM $a
done
expect rawun ok packet
expect rawun ok raw
# ping needs neither: ICMP datagram sockets are open to every user of the sandbox.
# The kernel compares groups with the range by host id: root's group, the first and the
# last (whose host ids are the ends of the sandbox's rotated range) are all in it.
for ids in 1000:1000 0:0 1:65408 65534:65534 2:65535; do
    PROBE_OPTS="--user $ids" expect sc ok icmp_dgram
done

# The filter holds for every user and across execve (no_new_privs keeps it installed).
PROBE_OPTS="--user 1000" expect sc EPERM keyctl
expect sc EPERM keyctl
[ "$(dsec-run exec sc -- sh -c 'exec /probe status' | tr ' ' '\n' | grep '^Seccomp=')" = Seccomp=2 ] \
    || fail "the filter is gone after execve"

host_unharmed sc
echo ok
