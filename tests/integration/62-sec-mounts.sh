#!/bin/bash
# Red team, mounts and file handles: no forged file handle opens anything (the "shocker"
# attack, relative to "/", to the init's executable and to the device nodes bound from
# outside); no filesystem can be mounted (devtmpfs, cgroup v1 and v2, proc, through
# mount(2) or the new mount API); the read-only and masked parts of /proc stay so; no
# device node can be made; chroot gets no higher than the sandbox's root. The host's
# mount table and files are untouched afterwards.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sec-lib.sh"

make_probe_layer
new_box mnt
new_box other
mounts_before=$(wc -l < /proc/self/mounts)

# Forged handles: inode 2 (the root of an ext4 filesystem) as FILEID_INO32_GEN.
expect mnt EPERM name_to_handle_at /
expect mnt EPERM open_by_handle_at /
expect mnt EPERM open_by_handle_at /dev/null # a node bound from outside the sandbox
# The init's executable: opening it is refused (the init is not dumpable), else the handle.
expect_not mnt ok open_by_handle_at /proc/1/exe

# Mounts, old and new API.
expect mnt EPERM mount_devtmpfs
expect mnt EPERM mount_cgroup_pids
expect mnt EPERM mount_cgroup2
expect mnt EPERM mount_proc
expect mnt EPERM fsopen tmpfs
expect mnt EPERM fsopen cgroup2
expect mnt EPERM open_tree /proc # /proc without its masks
expect mnt EPERM pivot_root

# /proc/sys read-only: no remount (nor of "/" without nosuid), no write.
expect mnt EPERM remount_rw /proc/sys
expect mnt EPERM setattr_rw /proc/sys
expect mnt EPERM remount_rw /
expect_not mnt ok open_write /proc/sys/kernel/hostname
expect_not mnt ok open_write /proc/sys/kernel/core_pattern
mountinfo=$(dsec-run exec mnt -- cat /proc/self/mountinfo)
grep -q ' /proc/sys ro,' <<< "$mountinfo" || fail "/proc/sys is not mounted read-only: $(grep ' /proc/sys ' <<< "$mountinfo")"

# The masks stay: none can be unmounted, the masked files read empty, the masked
# directories are empty. Where the host's file is already shut to every id of the
# sandbox (mode 0400, owned by the host's root), there is no mask, and it stays shut.
# shellcheck disable=SC2016 # $p is the sandbox shell's
masks=$(dsec-run exec mnt -- sh -c 'for p in /proc/kcore /proc/kallsyms /proc/keys /proc/timer_list \
    /proc/sysrq-trigger /proc/acpi /proc/driver /proc/scsi /proc/kpageflags /proc/kmsg /proc/slabinfo \
    /proc/tty/driver /proc/zoneinfo; do if [ -e $p ]; then echo $p; fi; done')
[ -n "$masks" ] || fail "none of the masked /proc paths exists inside: nothing to test"
mountinfo=$(dsec-run exec mnt -- cat /proc/self/mountinfo)
mounted=0
for p in $masks; do
    if grep -q " $p " <<< "$mountinfo"; then
        expect mnt EPERM umount "$p"
        mounted=$((mounted + 1))
    else
        expect mnt EACCES open_read "$p"
        [ -d "$p" ] || expect mnt EACCES open_write "$p"
    fi
done
[ "$mounted" -gt 0 ] || fail "no masked /proc path is a mount: $masks"
# A file only the host's root may open gets no mask in a sandbox of its own ids.
if [ "$(stat -c %a:%u /proc/kpageflags 2>/dev/null)" = 400:0 ]; then
    ! grep -q ' /proc/kpageflags ' <<< "$mountinfo" || fail "/proc/kpageflags (mode 0400) is masked all the same"
fi
# /proc/irq, /proc/bus and /proc/fs are not read-only mounts here: none of their files
# may be written by the sandbox's ids.
for f in /proc/irq/default_smp_affinity /proc/irq/0/smp_affinity $(find /proc/bus -type f 2>/dev/null | head -n 2); do
    if [ -e "$f" ]; then expect mnt EACCES open_write "$f"; fi
done
expect mnt EPERM umount /proc/sys
expect mnt EPERM umount /proc
# shellcheck disable=SC2016,SC2086 # $p is the sandbox shell's; $masks, one path a word
dsec-run exec mnt -- sh -c 'for p; do
    if [ -d $p ]; then [ -z "$(ls -A $p 2>/dev/null)" ] || exit 1
    else [ -z "$(head -c 1 $p 2>/dev/null)" ] || exit 1; fi; done' sh $masks \
    || fail "a masked /proc path shows content after the attacks"
# With the host's ids (--userns host) root inside could open those files: all are masked,
# and /proc/irq, /proc/bus and /proc/fs are read-only too.
dsec-run create --layers redteam --id hostids --userns host > /dev/null || fail "create --userns host"
on_exit "dsec-run destroy --force hostids > /dev/null"
mountinfo=$(dsec-run exec hostids -- cat /proc/self/mountinfo)
for p in /proc/kpageflags /proc/kmsg /proc/slabinfo /proc/timer_list; do
    if [ -e "$p" ]; then grep -q " $p " <<< "$mountinfo" || fail "--userns host: $p is not masked"; fi
done
for p in /proc/sys /proc/irq /proc/bus /proc/fs; do
    if [ -e "$p" ]; then grep -q " $p ro," <<< "$mountinfo" || fail "--userns host: $p is not read-only"; fi
done

# Devices: no node can be made, on the scratch tmpfs or on the overlay.
expect mnt EPERM mknod /tmp/mem
expect mnt EPERM mknod /mem
devs=$(dsec-run exec mnt -- ls -la /dev)
! grep '^b' <<< "$devs" || fail "block devices in /dev"

# chroot (SYS_CHROOT is in the list) cannot climb above the sandbox's root ("none"; a
# refused chroot is as good).
expect_not mnt ok chroot_escape

# Nothing reached the host: same mount table, canary intact, another sandbox fine.
[ "$(wc -l < /proc/self/mounts)" = "$mounts_before" ] || fail "the host's mount table changed during the attacks"
host_unharmed other
echo ok
