# shellcheck shell=bash
# shellcheck disable=SC2154 # the settings and paths are soak.sh's globals
# The soak's workers (sourced by scripts/soak.sh): sandbox lifecycles, each operation
# under a watchdog, its outcome classified and appended to $work/ops/W.tsv as
# KIND<TAB>CAUSE<TAB>MS<TAB>DETAIL.

# Causes that fail the soak; every other cause is an outcome a fault may explain.
# cmd_exit_127: every command the soak runs is in the base layer, so "command not found"
# means a sandbox without its layer's files.
failing_causes="hang no_record crash corrupt_state wrong_output cmd_exit_127"

fault_on() { [[ ",$faults," == *",all,"* || ",$faults," == *",$1,"* ]]; }

# op KIND LIMIT CMD...: runs CMD (stdin $op_stdin, else /dev/null; output in $wd/out and $wd/err) under
# a watchdog of LIMIT seconds; sometimes SIGKILLed after a random moment instead, or
# with a low descriptor limit. Sets rc, cause (see classify), injected.
op() {
    local kind=$1 limit=$2
    shift 2
    local nofile="" t0 input=${op_stdin:-/dev/null}
    op_stdin=""
    injected=""
    local guard=(timeout --foreground -k 5 "$limit")
    if fault_on kill && ((RANDOM % 100 < kill_pct)); then
        injected="kill"
        guard=(timeout --foreground -s KILL "0.$((RANDOM % 8))$((RANDOM % 10))")
    fi
    if fault_on fds && ((RANDOM % 100 < fd_pct)); then
        nofile=$((4 + RANDOM % 28))
        injected+=" fds=$nofile"
    fi
    t0=$EPOCHREALTIME
    rc=0
    # In a subshell of its own, so that the shell's note on a killed job stays quiet. The
    # files are opened before the descriptor limit is lowered: under a limit of 4 the
    # shell itself could not open them, and the last operation's output would be read.
    (
        exec > "$wd/out" 2> "$wd/err" < "$input"
        [ -z "$nofile" ] || ulimit -n "$nofile" || exit 1
        "${guard[@]}" "$@"
        exit $?
    ) 2> /dev/null || rc=$?
    local t1=$EPOCHREALTIME
    ms=$(((${t1/./} - ${t0/./}) / 1000))
    classify "$kind" "$limit"
    log_op "$kind" "$cause" "$ms"
}

log_op() {  # KIND CAUSE MS: one line in this worker's file (what went wrong, if it did)
    local detail=""
    if [[ " $failing_causes " == *" $2 "* ]]; then
        detail="rc=$rc injected=[$injected] id=${id:-} out=$(head -c 300 "$wd/out" | tr '\t\n' '  ') err=$(head -c 300 "$wd/err" | tr '\t\n' '  ')"
    elif [ "$2" != ok ]; then
        detail="[$injected] $(cat "$wd/err" "$wd/out" | grep -m1 . | head -c 200 | tr '\t\r' '  ')"
    fi
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$detail" >> "$work/ops/$w.tsv"
}

# The first record of TYPE on $wd/out, compact, or nothing.
record() { jq -cR --arg t "$1" 'fromjson? | select(type == "object" and .type == $t)' "$wd/out" 2> /dev/null | head -1; }

# Sets cause from rc, the time taken and what the tool wrote: a watchdog that had to fire
# is a hang; a sanitizer report or a signal other than SIGKILL a crash; an error record
# gives its code; a result record its command's outcome; a SIGKILL (ours, or the fault
# loop's) is killed; a failure without a record is no_record.
classify() {
    local kind=$1 limit=$2 err_rec res
    if [[ "$injected" != kill* ]] && ((ms >= limit * 1000)); then cause=hang; return; fi
    if grep -qE 'AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:|terminate called|Assertion .* failed' "$wd/err" "$wd/out" 2> /dev/null; then
        cause=crash; return
    fi
    # Ours: timeout(1) says 124 when the tool ended while it was being killed.
    if [[ "$injected" == kill* ]] && { [ "$rc" = 137 ] || [ "$rc" = 124 ]; }; then cause=killed; return; fi
    err_rec=$(record error)
    if [ -n "$err_rec" ]; then
        cause=$(jq -r '.code // "error_without_code"' <<< "$err_rec")
        return
    fi
    res=$(record result)
    if [ -n "$res" ]; then
        cause=$(jq -r 'if .timed_out then "timed_out" elif .signal == 9 then "cmd_killed"
                       elif .exit_code == 0 then "ok" else "cmd_exit_\(.exit_code)" end' <<< "$res")
        return
    fi
    # Under a descriptor limit of a few, the dynamic loader of the tool (or of timeout(1))
    # may find no descriptor to open a library with: the fault's, not dsec's, doing.
    if [[ "$injected" == *fds=* ]] && [ "$rc" = 127 ] && grep -q 'error while loading shared libraries' "$wd/err"; then
        cause=loader_emfile; return
    fi
    case $rc in
    0) cause=ok ;;
    137) cause=killed ;;
    13[0-9] | 14[0-9] | 15[0-9]) cause=crash ;;
    *) cause=no_record ;;
    esac
    # Streaming and pty execs pass the command's status through, without a record;
    # script(1) may itself fail (a low descriptor limit).
    if [ "$cause" = no_record ] && [ "$kind" = exec_pty_script ] && grep -q '^script:' "$wd/err" "$wd/out"; then
        cause=script_failed
    elif [ "$cause" = no_record ] && [[ $kind == exec_pty* ]] && ! grep -q '^dsec-run' "$wd/err" "$wd/out"; then
        cause=cmd_exit_$rc
    elif [ "$cause" = no_record ] && [[ $kind == exec_pty* ]]; then
        cause=tty_error
    fi
}

# An ok outcome whose output is not what the command prints is wrong_output.
expect_out() {  # PATTERN (extended regex, on the result's stdout or the raw output)
    [ "$cause" = ok ] || return 0
    local text
    text=$(jq -r 'select(.type? == "result") | .stdout' "$wd/out" 2> /dev/null || true)
    [ -n "$text" ] || text=$(cat "$wd/out")
    if ! grep -qE "$1" <<< "$text"; then
        cause=wrong_output
        sed -i '$d' "$work/ops/$w.tsv"
        log_op "$kind_last" wrong_output "$ms"
    fi
}

# One operation on sandbox $id, drawn at random.
random_op() {
    local r=$((RANDOM % 100))
    kind_last=""
    if ((r < 24)); then
        kind_last=exec_short
        op exec_short "$op_timeout" dsec-run exec --json "$id" -- sh -c 'echo hi; cat /etc/passwd > /dev/null'
        expect_out '^hi$'
    elif ((r < 30)); then
        kind_last=exec_long
        op exec_long "$op_timeout" dsec-run exec --json --timeout 30s "$id" -- sh -c 'sleep 2; seq 1 20000 | tail -1'
        expect_out '^20000$'
    elif ((r < 33)); then
        kind_last=exec_timeout
        op exec_timeout "$op_timeout" dsec-run exec --json --timeout 500ms "$id" -- sleep 30
    elif ((r < 39)); then
        kind_last=exec_pty
        op exec_pty "$op_timeout" dsec-run exec -t "$id" -- sh -c 'tty; echo pty-ok'
        expect_out 'pty-ok'
    elif ((r < 44)); then
        kind_last=exec_pty_script
        op exec_pty_script "$op_timeout" script -qec "dsec-run exec -t $id -- sh -c 'tty; echo pty-ok'" /dev/null
        expect_out 'pty-ok'
    elif ((r < 54)); then
        kind_last=cp_in
        op cp_in "$op_timeout" dsec-run cp "$work/payload" "$id:/root/"
    elif ((r < 64)); then
        kind_last=cp_out
        rm -rf "$work/out/$w"
        op cp_out "$op_timeout" dsec-run cp "$id:/etc" "$work/out/$w"
    elif ((r < 68)); then
        kind_last=inspect
        op inspect "$op_timeout" dsec-run inspect "$id"
        if [ "$cause" = ok ] && ! record sandbox | jq -e '.id and .state' > /dev/null 2>&1; then
            cause=corrupt_state
            sed -i '$d' "$work/ops/$w.tsv"
            log_op inspect corrupt_state "$ms"
        fi
    elif ((r < 74)); then
        kind_last=exec_keeper
        local k=$((RANDOM % keepers))
        op exec_keeper "$op_timeout" dsec-run exec --json "keep$k" -- cat /root/mark
        expect_out "^keep$k\$"
    elif ((r < 78)); then
        kind_last=snapshot
        op snapshot $((op_timeout * 2)) dsec-run snapshot "$id" --compress none
    elif ((r < 80)); then
        kind_last=fork
        op fork $((op_timeout * 2)) dsec-run fork "$id" --count 1
        local forked
        forked=$(record sandbox | jq -r '.id // empty')
        if [ -n "$forked" ]; then
            local parent=$id
            id=$forked
            op exec_short "$op_timeout" dsec-run exec --json "$id" -- sh -c 'echo hi'
            op destroy "$op_timeout" dsec-run destroy "$id"
            [ "$cause" = ok ] || op destroy "$op_timeout" dsec-run destroy -f "$id"
            id=$parent
        fi
    elif ((r < 85)); then
        kind_last=reset
        op reset "$op_timeout" dsec-run reset "$id"
    elif ((r < 92)) && [[ $variant == *disk* ]] && fault_on disk; then
        # Fills the sandbox's --disk: the write fails inside, the sandbox lives on.
        kind_last=fill
        # shellcheck disable=SC2016 # the sandbox's shell expands it
        op fill "$op_timeout" dsec-run exec --json "$id" -- sh -c 'head -c 8000000 /dev/zero > /root/fill; echo $?'
    elif ((r < 92)) && [[ $variant == *mem* ]] && fault_on oom; then
        # A hog past --memory: the OOM killer takes it, never the init.
        kind_last=hog
        # shellcheck disable=SC2016 # the sandbox's shell expands it
        op hog "$op_timeout" dsec-run exec --json "$id" -- sh -c 'a=$(yes | head -c 100000000); echo survived'
    elif ((r < 95)) && fault_on init; then
        # The init killed under the sandbox: later operations get not_running, reset
        # brings it back, gc or destroy removes it.
        kind_last=kill_init
        local pid
        pid=$(jq -r '.pid // empty' "$DSEC_RUN/sandboxes/$id/state.json" 2> /dev/null || true)
        if [[ "$pid" =~ ^[0-9]+$ ]] && grep -q "$cg_parent/$id" "/proc/$pid/cgroup" 2> /dev/null; then
            kill -KILL "$pid" 2> /dev/null || true
            printf 'kill_init\tok\t0\t\n' >> "$work/ops/$w.tsv"
        fi
    else
        kind_last=exec_short
        op exec_short "$op_timeout" dsec-run exec --json "$id" -- true
    fi
}

# A sandbox's life: created (from --layers, or from a rootfs record of dsec-mount), a few
# operations, destroyed (again without a fault if the first destroy did not finish).
cycle() {
    local n=$1
    id="w$w-$n"
    local opts=()
    case $((RANDOM % 4)) in
    0) variant=plain ;;
    1) variant=disk; opts=(--disk 4M) ;;
    2) variant=mem; opts=(--memory 48M) ;;
    3) variant=disk,mem; opts=(--disk 4M --memory 48M) ;;
    esac
    if ((RANDOM % 5 == 0)); then
        op mount "$op_timeout" dsec-mount --count 1 soak-base
        [ "$cause" = ok ] || return 0
        cp "$wd/out" "$wd/rootfs.jsonl"
        op_stdin="$wd/rootfs.jsonl"
        op create "$op_timeout" dsec-run create --id "$id" "${opts[@]}"
    else
        op create "$op_timeout" dsec-run create --layers soak-base --id "$id" "${opts[@]}"
    fi
    if [ "$cause" = ok ]; then
        local i ops=$((3 + RANDOM % 6))
        for ((i = 0; i < ops; i++)); do random_op; done
    fi
    op destroy "$op_timeout" dsec-run destroy "$id"
    if [ "$cause" != ok ]; then
        op destroy "$op_timeout" dsec-run destroy -f "$id"
    fi
    printf 'cycle\tok\t0\t\n' >> "$work/ops/$w.tsv"
}

# worker W DEADLINE MAX: cycles until the deadline, MAX cycles (0: no cap) or a stop file.
worker() {
    set +e
    w=$1
    local deadline=$2 max=$3 n=0
    RANDOM=$((seed * 100 + w))
    wd="$work/w$w"
    mkdir -p "$wd"
    : > "$work/ops/$w.tsv"
    while ((EPOCHSECONDS < deadline)) && [ ! -e "$work/stop" ] && { [ "$max" = 0 ] || ((n < max)); }; do
        cycle "$n"
        n=$((n + 1))
    done
}
