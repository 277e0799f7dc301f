# shellcheck shell=bash
# Set-up for the cluster tests (9x-cluster-*.sh), sourced instead of lib.sh:
#
#   . "$(dirname "$0")/cluster-lib.sh"
#
# The test runs in its own network namespace (with lib.sh's mount namespace inside it),
# so the daemons it starts (glusterd and its bricks, munged, slurmctld, slurmd) listen
# only there and cannot meet another test's or the host's. Their fixed state and log
# directories (/run, /var/lib/glusterd, /var/log/glusterfs) are covered by directories
# under the test's temp root, so nothing of theirs is left on the host. At exit every
# process still in the namespace is killed by pid (the test's own shell aside): a
# daemon that forked away from its parent goes too, even when the test failed midway.
if [ "${DSEC_CLUSTER_NET:-}" != "1" ]; then
    if [ "$(id -u)" != "0" ]; then
        echo "SKIP: integration tests run as root" >&2
        exit 77
    fi
    export DSEC_CLUSTER_NET=1
    exec unshare --net bash "$0" "$@"
fi
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The address the daemons serve on: GlusterFS refuses bricks on 127.0.0.0/8.
CLUSTER_ADDR=10.201.0.1
ip link set lo up
ip addr add "$CLUSTER_ADDR/32" dev lo
mount -t tmpfs -o mode=0755 cluster-run /run

# Kills what is left in this network namespace: TERM, then KILL what is left a second later.
cluster_reap() {
    local sig i
    for sig in TERM KILL; do
        cluster_signal "$sig" || return 0
        # Up to a second for them to go.
        for i in $(seq 10); do
            sleep 0.1
            cluster_signal 0 || return 0
        done
    done
}
cluster_signal() {  # SIGNAL: sends it to every process in this network namespace but the
    local p found=1  # test itself; fails when there is none
    for p in /proc/[0-9]*; do
        if [ "${p#/proc/}" != "$$" ] && [ "$p/ns/net" -ef /proc/$$/ns/net ]; then
            kill -s "$1" "${p#/proc/}" 2>/dev/null && found=0
        fi
    done
    return $found
}
on_exit cluster_reap

# Runs a gluster CLI command without prompts, bounded in time.
gl() { timeout 60 gluster --mode=script "$@"; }

# gluster_up VOLUME BRICKS: starts glusterd and a started distributed volume of BRICKS
# bricks (directories under $T/bricks; `force` because they sit on the root filesystem).
gluster_up() {
    local vol=$1 n=$2 i bricks=()
    mkdir -p "$T/glusterd" "$T/glusterlog" "$T/bricks"
    mount --bind "$T/glusterd" /var/lib/glusterd
    mount --bind "$T/glusterlog" /var/log/glusterfs
    glusterd -p /run/glusterd.pid || fail "glusterd did not start"
    for i in $(seq 50); do gl pool list >/dev/null 2>&1 && break; sleep 0.2; done
    gl pool list >/dev/null || fail "glusterd does not answer"
    for i in $(seq "$n"); do bricks+=("$CLUSTER_ADDR:$T/bricks/$vol-$i"); done
    gl volume create "$vol" "${bricks[@]}" force >/dev/null || fail "gluster volume create"
    gl volume start "$vol" >/dev/null || fail "gluster volume start"
    gl volume profile "$vol" start >/dev/null || fail "gluster volume profile start"
    on_exit "gl volume stop $vol force >/dev/null 2>&1"
}

# make_data_tree DIR COUNT: a busybox tree with COUNT files of 1 MiB that do not compress
# under /data (f1..fCOUNT, zero-padded to the same width).
make_data_tree() {
    local i
    make_busybox_tree "$1"
    mkdir "$1/data"
    for i in $(seq -w 1 "$2"); do head -c 1M /dev/urandom > "$1/data/f$i"; done
}

# gluster_mount VOLUME DIR [ro]: a node's view of the volume through its own FUSE client.
gluster_mount() {
    local vol=$1 dir=$2 opts=${3:-rw}
    mkdir -p "$dir"
    mount -t glusterfs -o "$opts" "$CLUSTER_ADDR:/$vol" "$dir" || fail "mounting $vol on $dir"
    on_exit "umount -l '$dir'"
}

# gluster_bytes VOLUME read|written: the bytes the bricks served since the profile
# started, summed over the bricks (the volume's own counters).
gluster_bytes() {
    local what=Read
    [ "$2" = written ] && what=Written
    gl volume profile "$1" info cumulative |
        awk -v w="$what:" '$1 == "Data" && $2 == w { s += $3 } END { printf "%d\n", s }'
}

# gluster_client_rchar DIR: the bytes the FUSE client serving DIR has read (its sockets
# to the bricks included), from /proc/PID/io.
gluster_client_rchar() {
    local p
    for p in /proc/[0-9]*; do
        tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -qF -- " $1 " || continue
        awk '$1 == "rchar:" { print $2 }' "$p/io"
        return 0
    done
    fail "no FUSE client serves $1"
}

# slurm_up CPUS: munged with a key made for this test, then slurmctld and one slurmd
# (node "dsec-n1", CPUS CPUs) on 127.0.0.1, every file of theirs under $T/slurm;
# exports SLURM_CONF for the client commands. Debian's Slurm is built without
# multiple-slurmd and front-end support, so the cluster has one node name.
slurm_up() {
    local cpus=$1 s=$T/slurm i
    # munged wants its socket's directories open to all: it goes on the private /run.
    mkdir -p "$s/munge" "$s/state" "$s/spool" "$s/log" /run/munge
    chmod 0700 "$s/munge"
    mungekey --create --keyfile="$s/munge/munge.key" || fail "mungekey"
    munged --key-file="$s/munge/munge.key" --socket=/run/munge/munge.socket --pid-file=/run/munge/munged.pid \
        --log-file="$s/log/munged.log" --seed-file="$s/munge/munged.seed" || fail "munged did not start"
    export SLURM_CONF=$s/slurm.conf
    cat > "$SLURM_CONF" <<CONF
ClusterName=dsectest
SlurmctldHost=$(hostname -s)(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=/run/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdTimeout=30
MinJobAge=10
KillWait=5
NodeName=dsec-n1 NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=dsec Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
    slurmctld -i || fail "slurmctld did not start"
    slurmd -N dsec-n1 || fail "slurmd did not start"
    for i in $(seq 100); do
        sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle && return 0
        sleep 0.2
    done
    fail "the node did not come up: $(sinfo -N 2>&1); $(tail -5 "$s/log/slurmd.log" "$s/log/slurmctld.log" 2>&1)"
}
