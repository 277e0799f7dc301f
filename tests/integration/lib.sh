# shellcheck shell=bash
# Shared set-up for integration tests. Source it first thing:
#
#   . "$(dirname "$0")/lib.sh"
#
# It re-executes the test inside its own private mount namespace (so any mount the test
# or the tools make vanishes with it), gives it a fresh DSEC_ROOT and DSEC_RUN under a
# temporary directory, puts the built binaries first on PATH, and removes everything on
# exit. Tests use `fail MSG` to stop with an error and `skip MSG` (exit 77) only when
# the kernel truly lacks a feature.
set -euo pipefail

if [ "${DSEC_TEST_NS:-}" != "1" ]; then
    if [ "$(id -u)" != "0" ]; then
        echo "SKIP: integration tests run as root" >&2
        exit 77
    fi
    export DSEC_TEST_NS=1
    exec unshare --mount --propagation private bash "$0" "$@"
fi

DSEC_BIN=${DSEC_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../build" && pwd)}
DSEC_SRC=${DSEC_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export PATH="$DSEC_BIN:$PATH"
export TESTS_DIR="$DSEC_SRC/tests"
export DATA="$TESTS_DIR/data"

T=$(mktemp -d /tmp/dsec-test.XXXXXX)
export DSEC_ROOT="$T/root" DSEC_RUN="$T/run"
mkdir -p "$DSEC_ROOT" "$DSEC_RUN"
# The run directory holds mounts: a private tmpfs keeps them out of the host's view.
mount -t tmpfs -o mode=0755 dsec-test-run "$DSEC_RUN"
# The cgroup parent of this run directory's sandboxes (derived from it, as dsec-run does);
# it goes at exit, so the host keeps no trace of the test.
DSEC_CGROUP_PARENT="dsec-$(printf %s "$DSEC_RUN" | sha256sum | cut -c1-12)"
export DSEC_CGROUP_PARENT

# Hooks run on exit, last registered first.
_cleanup_hooks=()
on_exit() { _cleanup_hooks+=("$*"); }
_cleanup() {
    local rc=$?
    local i
    settle_teardowns || rc=1
    for ((i = ${#_cleanup_hooks[@]} - 1; i >= 0; i--)); do eval "${_cleanup_hooks[$i]}" || true; done
    # Sandboxes a failed test left behind: their inits and cgroups would outlive it.
    local box
    for box in "$DSEC_RUN"/sandboxes/*; do
        if [ -e "$box" ]; then "$DSEC_BIN/dsec-run" destroy --force "${box##*/}" > /dev/null 2>&1 || true; fi
    done
    # Take down anything still mounted below the test's directory, deepest first.
    grep -o " ${T}[^ ]*" /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
    rm -rf "$T"
    rmdir /sys/fs/cgroup/*/"$DSEC_CGROUP_PARENT" /sys/fs/cgroup/"$DSEC_CGROUP_PARENT" 2>/dev/null || true
    exit $rc
}
trap _cleanup EXIT

# A one-shot returns before its sandbox's teardown, which a child of its own
# (dsec-teardown, in a session of its own) finishes: waits (at most 15 s) until no such
# child of this test's is left (one whose environment cannot be read counts), and says
# which are left if any.
settle_teardowns() {
    local _ pid left env
    for _ in $(seq 300); do
        left=""
        for pid in $(pgrep -x dsec-teardown); do
            [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && continue  # waits for the reaper
            env=$({ tr '\0' '\n' < "/proc/$pid/environ"; } 2>/dev/null || true)
            grep -q '^DSEC_RUN=' <<< "$env" && ! grep -qxF "DSEC_RUN=$DSEC_RUN" <<< "$env" && continue  # another's
            left="$left $pid"
        done
        [ -z "$left" ] && return 0
        sleep 0.05
    done
    echo "FAIL: one-shot teardowns still at work after 15 s:$left" >&2
    return 1
}

fail() { echo "FAIL: $*" >&2; exit 1; }
# A command that ends the test through `set -e` says which, instead of a silent exit.
trap 'echo "FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: \"$BASH_COMMAND\" exited $?" >&2' ERR
skip() { echo "SKIP: $*" >&2; exit 77; }

# jq 1.6 (Debian 12's) exits 0 under -e when it reads no input at all, so
# `producer | jq -e FILTER || fail` passed whatever FILTER said when the producer printed
# nothing. Here, with -e (and none of -n, -s, -f, -R), empty input is an error (exit 5).
jq() {
    local -a args=("$@")
    local i e=0 other=0
    for ((i = 0; i < ${#args[@]}; i++)); do
        case ${args[i]} in
        --arg | --argjson | --slurpfile | --rawfile) ((i += 2)) ;;
        --indent | -L) ((i += 1)) ;;
        --exit-status) e=1 ;;
        --null-input | --slurp | --from-file | --raw-input) other=1 ;;
        --*) ;;
        -*) [[ ${args[i]} == *e* ]] && e=1
            [[ ${args[i]} == *[nsfR]* ]] && other=1 ;;
        *) break ;;
        esac
    done
    if [ $e = 1 ] && [ $other = 0 ] && [ $i -lt ${#args[@]} ]; then
        args[i]="[inputs] | if length == 0 then error(\"no input\") else .[] end | (${args[i]})"
        command jq -n "${args[@]}"
    else
        command jq "$@"
    fi
}

# Asserts that a command fails with the given exit code.
expect_exit() {
    local want=$1; shift
    local got=0
    "$@" || got=$?
    [ "$got" = "$want" ] || fail "expected exit $want, got $got: $*"
}

# id_map TEXT: checks that TEXT (a sandbox's uid_map or gid_map) maps 0..65535 inside
# onto one range of 65,536 host ids: its lines, in order of the ids inside and in order
# of the host ids, each follow on from the one before. Prints "ROOT FIRST" (root's host
# id, the range's first), or fails.
id_map() {
    local by_inside by_host
    by_inside=$(sort -n -k1,1 <<< "$1" | awk 'NR == 1 && $1 != 0 { bad = 1 } NR > 1 && $1 != next_in { bad = 1 }
        { next_in = $1 + $3; n += $3; if ($1 == 0) root = $2 } END { if (!bad && n == 65536) print root }')
    by_host=$(sort -n -k2,2 <<< "$1" | awk 'NR == 1 { first = $2 } NR > 1 && $2 != next_out { bad = 1 }
        { next_out = $2 + $3 } END { if (!bad) print first }')
    [ -n "$by_inside" ] && [ -n "$by_host" ] || fail "not one range of 65536 ids from 0: $1"
    echo "$by_inside $by_host"
}

# Puts /holder in the tree at $1: it holds 24 MB of one 16-byte pattern (every page alike)
# in a shell variable, touches /tmp/ready, and waits until killed, on a FIFO no one opens:
# no CPU at all (a loop forking a sleep every second copies the 24 MB's page tables each
# time, which on a slow host is enough for the sandbox not to look idle).
make_holder() {
    cat > "$1/holder" << 'EOS'
#!/bin/sh
x=$(yes 0123456789abcdef | head -c 24000000)
mkfifo /tmp/hold
touch /tmp/ready
read -r _ < /tmp/hold
EOS
    chmod +x "$1/holder"
}

# Makes a small busybox tree at $1 (the demo's base system).
make_busybox_tree() {
    local dir=$1
    mkdir -p "$dir"/{bin,sbin,etc,tmp,proc,sys,dev,root,usr/bin}
    cp /bin/busybox "$dir/bin/busybox"
    for app in sh ls cat echo true false sleep env id ps mkdir rm touch wc head yes seq test stat chown; do
        ln -sf busybox "$dir/bin/$app"
    done
    echo "root:x:0:0:root:/root:/bin/sh" > "$dir/etc/passwd"
    echo "root:x:0:" > "$dir/etc/group"
}
