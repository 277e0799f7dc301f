# shellcheck shell=bash
# Shared by the red-team tests (4N-sec-*.sh), sourced after lib.sh: a layer with busybox
# and the attack program (dsec-probe, from tests/data/redteam/probe.c), and helpers that
# run one attack inside a sandbox and check its result. The attacks run only inside
# sandboxes (dsec-run exec), never on the host.
#
# dsec-probe prints one line "ATTACK RESULT [DETAIL]": RESULT is "ok" when the attack
# worked, else the errno name of the refusal (or SIGSYS, none, pipe: see probe.c).

# The capability sets every sandbox gets by default (podman's list: CHOWN, DAC_OVERRIDE,
# FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE, SYS_CHROOT, SETFCAP).
export CAPS_DEFAULT=00000000800405fb
export CAPS_NONE=0000000000000000

# A canary file on the host: no attack may change it.
CANARY="$T/canary"
head -c 64 /dev/urandom | base64 > "$CANARY"
CANARY_SUM=$(sha256sum < "$CANARY")

# make_probe_layer: the layer "redteam": busybox, /probe, /probe-suid (a setuid-root
# copy) and /work, writable by everyone.
make_probe_layer() {
    local name=redteam
    [ -x "$DSEC_BIN/dsec-probe" ] || fail "dsec-probe is not built in $DSEC_BIN"
    make_busybox_tree "$T/$name"
    cp "$DSEC_BIN/dsec-probe" "$T/$name/probe"
    cp "$DSEC_BIN/dsec-probe" "$T/$name/probe-suid"
    chown 0:0 "$T/$name/probe-suid"
    chmod 4755 "$T/$name/probe-suid"
    mkdir -p "$T/$name/work"
    chmod 1777 "$T/$name/work"
    dsec-layer build "$T/$name" --name "$name" > /dev/null
}

# new_box ID [CREATE OPTION...]: a sandbox of the probe layer, destroyed at exit.
new_box() {
    local id=$1
    shift
    dsec-run create --layers redteam --id "$id" "$@" > /dev/null || fail "create $id $*"
    on_exit "dsec-run destroy --force $id > /dev/null"
}

# probe BOX ATTACK [ARG...]: runs the attack in BOX (with the exec options in
# $PROBE_OPTS, e.g. PROBE_OPTS="--user 1000") and prints its line (or dsec-run's error).
probe() {
    local box=$1
    shift
    # shellcheck disable=SC2086 # PROBE_OPTS holds several words on purpose
    dsec-run exec ${PROBE_OPTS:-} "$box" -- /probe "$@" < /dev/null 2>&1 || true
}

# result_of LINE: the RESULT word of a probe line.
result_of() { awk 'NR == 1 { print $2 }' <<< "$1"; }

# probe_checked BOX ATTACK [ARG...]: as probe, but fails unless the probe answered (a
# line that starts with the attack's name).
probe_checked() {
    local line
    line=$(probe "$@")
    [ "${line%% *}" = "$2" ] || fail "${PROBE_OPTS:+$PROBE_OPTS }$1: $2: the probe did not answer: ${line:-no output}"
    echo "$line"
}

# expect BOX WANT ATTACK [ARG...]: fails unless the attack's result is WANT.
expect() {
    local box=$1 want=$2
    shift 2
    local line
    line=$(probe_checked "$box" "$@") || exit 1
    [ "$(result_of "$line")" = "$want" ] || fail "${PROBE_OPTS:+$PROBE_OPTS }$box: $*: expected $want, got: ${line:-no output}"
}

# expect_not BOX UNWANTED ATTACK [ARG...]: fails if the attack's result is UNWANTED.
expect_not() {
    local box=$1 unwanted=$2
    shift 2
    local line
    line=$(probe_checked "$box" "$@") || exit 1
    [ "$(result_of "$line")" != "$unwanted" ] || fail "${PROBE_OPTS:+$PROBE_OPTS }$box: $*: must not give $unwanted, got: ${line:-no output}"
}

# field_of LINE KEY: the value of KEY=VALUE in a probe line.
field_of() { tr ' ' '\n' <<< "$1" | sed -n "s/^$2=//p" | head -n 1; }

# no_host_path WHAT TEXT: fails if TEXT names the test's directories (DSEC_ROOT and
# DSEC_RUN are below $T), the build directory or the test's host secret.
no_host_path() {
    local what=$1 text=$2 m
    for m in "$T" "$DSEC_ROOT" "$DSEC_RUN" "$DSEC_BIN" ${HOST_SECRET:+"$HOST_SECRET"}; do
        case $text in *"$m"*) fail "$what reveals the host's $m: $(grep -F -m 3 -- "$m" <<< "$text")" ;; esac
    done
}

# host_unharmed [OTHER_BOX]: the canary is unchanged, the host still forks, and
# OTHER_BOX (if given) still runs a command.
host_unharmed() {
    [ "$(sha256sum < "$CANARY")" = "$CANARY_SUM" ] || fail "the host canary file changed: $(cat "$CANARY")"
    /bin/true || fail "the host cannot run a command"
    if [ -n "${1:-}" ]; then
        [ "$(dsec-run exec "$1" -- echo alive 2>&1)" = alive ] || fail "sandbox $1 no longer runs a command"
    fi
}

# cgroup_file BOX FILE: the path of FILE in whichever of BOX's cgroup directories has it.
cgroup_file() {
    local d
    for d in $(dsec-run inspect "$1" | jq -r '.cgroup.dirs[]'); do
        [ -e "$d/$2" ] && { echo "$d/$2"; return 0; }
    done
    return 1
}
