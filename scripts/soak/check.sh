# shellcheck shell=bash
# shellcheck disable=SC2154 # the settings and paths are soak.sh's globals
# The soak's end (sourced by scripts/soak.sh): gc, then every sandbox that survived must
# run a command and own everything that is left; then all are destroyed and nothing may
# be left at all. Leaks go into $work/leaks, one per line; the soak record sums it all.

# Mount points at or below DIR in this mount namespace, one per line, sorted.
mounts_under() { awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort; }

leak() { echo "$*" >> "$work/leaks"; }

# Every cgroup hierarchy's directory for this run directory's sandboxes.
cgroup_parents() {
    local d
    for d in /sys/fs/cgroup/"$cg_parent" /sys/fs/cgroup/*/"$cg_parent"; do [ -d "$d" ] && echo "$d"; done
    return 0
}

# leaks_beyond IDS...: what is left that belongs to none of these sandboxes.
leaks_beyond() {
    local ids=" $* " d name p owner
    for d in "$DSEC_RUN"/sandboxes/* "$DSEC_ROOT"/sandboxes/*; do
        [ -e "$d" ] || continue
        name=${d##*/}
        [[ $ids == *" $name "* ]] || leak "${d%/*}: $name left"
    done
    for d in "$DSEC_RUN"/userns/*; do
        [ -f "$d" ] || continue
        owner=$(cat "$d" 2> /dev/null) || true
        [[ $ids == *" $owner "* ]] || leak "id range ${d##*/} left (owner '$owner')"
    done
    while read -r d; do
        for p in "$d"/*/; do
            [ -d "$p" ] || continue
            name=${p%/}
            name=${name##*/}
            [[ $ids == *" $name "* ]] || leak "cgroup $p left"
        done
    done < <(cgroup_parents)
    # Processes in this run directory's cgroups: only the survivors' inits and their own.
    # A zombie is none (a destroyed init waits there for its reaper, the host's init),
    # nor is a process still on its way out: each is looked at again a second later.
    local suspects=()
    for p in /proc/[0-9]*; do
        name=$(sandbox_of_process "$p")
        [ -n "$name" ] && [[ $ids != *" $name "* ]] && suspects+=("$p")
    done
    [ ${#suspects[@]} -gt 0 ] && sleep 1
    for p in "${suspects[@]}"; do
        name=$(sandbox_of_process "$p")
        [ -n "$name" ] && leak "process ${p#/proc/} ($(cat "$p/comm" 2> /dev/null)) in cgroup of '$name'"
    done
    return 0
}

# The sandbox whose cgroup holds the process /proc/PID, unless it is a zombie or gone.
sandbox_of_process() {
    grep -q '^State:[[:space:]]*Z' "$1/status" 2> /dev/null && return 0
    grep -o "/$cg_parent/[^/ ]*" "$1/cgroup" 2> /dev/null | head -1 | cut -d/ -f3 || true
}

# Nothing at all: no sandbox, no cgroup, no dsec process, no descriptor into the soak's
# directories, no mount beyond those of the start, no layer mount, no staging.
leaks_none() {
    leaks_beyond
    local d me p
    while read -r d; do leak "cgroup parent $d left"; done < <(cgroup_parents)
    me=$(readlink /proc/self/ns/mnt)
    for p in /proc/[0-9]*; do
        [ "${p#/proc/}" = $$ ] && continue
        case $(cat "$p/comm" 2> /dev/null) in
        dsec-*) [ "$(readlink "$p/ns/mnt" 2> /dev/null)" = "$me" ] && leak "process ${p#/proc/} ($(cat "$p/comm")) left" ;;
        esac
        if find "$p/fd" -maxdepth 1 -lname "$work/*" 2> /dev/null | grep -q .; then
            leak "process ${p#/proc/} ($(cat "$p/comm" 2> /dev/null)) holds descriptors into $work"
        fi
    done
    local after
    after=$(mounts_under "$work")
    [ "$after" = "$mounts_before" ] || leak "mounts left: $(comm -13 <(echo "$mounts_before") <(echo "$after") | tr '\n' ' ')"
    [ -z "$(dsec-mount ls 2> /dev/null)" ] || leak "layer mounts left: $(dsec-mount ls | jq -r .digest | tr '\n' ' ')"
    [ -z "$(ls -A "$DSEC_ROOT/layers/tmp" 2> /dev/null)" ] || leak "layer staging left: $(ls -A "$DSEC_ROOT/layers/tmp")"
    [ -z "$(ls -A "$DSEC_RUN/bpf" 2> /dev/null)" ] || leak "egress pins left: $(ls -A "$DSEC_RUN/bpf")"
}

# A failing outcome of the end phase, counted as an operation.
final_op() { printf '%s\t%s\t0\t%s\n' "$1" "$2" "$(tr '\t\n' '  ' <<< "${3:-}")" >> "$work/ops/final.tsv"; }

final_checks() {
    : > "$work/leaks"
    : > "$work/ops/final.tsv"
    local rc=0
    timeout -k 5 $((op_timeout * 4)) dsec-reclaim gc --grace 0s > "$work/gc-final.jsonl" 2> "$work/gc-final.err" || rc=$?
    if [ $rc -ge 124 ]; then
        final_op gc_final hang "rc=$rc"
    elif [ $rc != 0 ]; then
        # An item gc could not remove is an error record; what it left shows below.
        final_op gc_final "$(jq -rs 'map(select(.type == "error") | .code) | first // "no_record"' "$work/gc-final.jsonl")" "$(head -c 300 "$work/gc-final.err")"
    else
        final_op gc_final ok
    fi

    # What survived: running, and runs a command (the keepers still have their file).
    local ids=() id state out
    while read -r id state; do
        ids+=("$id")
        if [ "$state" != running ] && [ "$state" != paused ]; then
            leak "sandbox $id in state $state after gc"
            continue
        fi
        out=$(timeout -k 5 "$op_timeout" dsec-run exec --json "$id" -- sh -c 'cat /root/mark 2> /dev/null; true' 2>&1) || true
        if ! jq -e '.exit_code == 0' <<< "$out" > /dev/null 2>&1; then
            final_op survivor_exec dead_survivor "$id: $(head -c 300 <<< "$out")"
        elif [[ $id == keep* ]] && [ "$(jq -r .stdout <<< "$out")" != "$id" ]; then
            final_op survivor_exec wrong_output "$id lost its file: $(head -c 300 <<< "$out")"
        else
            final_op survivor_exec ok
        fi
    done < <(dsec-run ls --json | jq -r '"\(.id) \(.state)"')
    survivors=${#ids[@]}
    leaks_beyond "${ids[@]}"

    # Then everything goes, and nothing may be left.
    dsec-run ls --json | timeout -k 5 $((op_timeout * 4)) dsec-run destroy -P 4 > "$work/destroy-final.jsonl" 2>&1 \
        || final_op destroy_final "$(jq -rs 'map(select(.type? == "error") | .code) | first // "no_record"' "$work/destroy-final.jsonl" 2> /dev/null)" "$(head -c 300 "$work/destroy-final.jsonl")"
    timeout -k 5 $((op_timeout * 4)) dsec-reclaim gc --grace 0s > /dev/null 2>&1 || final_op gc_final2 failed
    timeout -k 5 $((op_timeout * 4)) dsec-layer gc > /dev/null 2>&1 || final_op layer_gc failed
    leaks_none
}

# The soak record on stdout (and the summary on stderr); exit 1 on a failing cause or leak.
report() {
    local elapsed=$1
    cat "$work"/ops/*.tsv | jq -cR 'split("\t") | {kind: .[0], cause: .[1], ms: (.[2] | tonumber? // 0), detail: .[3]}' > "$work/ops.jsonl"
    jq -cR 'split("\t") | {fault: .[0], detail: .[1]}' "$work/faults.tsv" > "$work/faults.jsonl"
    jq -n --slurpfile ops "$work/ops.jsonl" --slurpfile faults "$work/faults.jsonl" --rawfile leaks "$work/leaks" \
        --arg failing "$failing_causes" --argjson elapsed "$elapsed" --argjson workers "$workers" \
        --argjson seed "$seed" --arg fault_set "$faults" --argjson survivors "$survivors" \
        --arg cg_parent "$cg_parent" '
        ($failing | split(" ")) as $bad
        | ($ops | map(select(.kind != "cycle" and .kind != "ls" and .kind != "kill_init"))) as $real
        | {type: "soak", v: 1, ok: false, seconds: $elapsed, workers: $workers, seed: $seed, faults_enabled: $fault_set, cgroup_parent: $cg_parent,
           cycles: ($ops | map(select(.kind == "cycle")) | length),
           operations: ($real | length),
           listings: ($ops | map(select(.kind == "ls")) | length),
           by_kind: ($real | group_by(.kind) | map({key: .[0].kind, value: {count: length,
                      ok: map(select(.cause == "ok")) | length,
                      median_ms: (map(.ms) | sort | .[length / 2 | floor])}}) | from_entries),
           causes: ($ops | map(select(.cause != "ok")) | group_by(.cause) | map({key: .[0].cause, value: length}) | from_entries),
           cause_examples: ($ops | map(select(.cause != "ok" and (.detail | length) > 0)) | group_by(.cause)
                            | map({key: .[0].cause, value: "\(.[0].kind): \(.[0].detail)"}) | from_entries),
           faults: ($faults | group_by(.fault) | map({key: .[0].fault, value: length}) | from_entries
                    + {kill_init: ($ops | map(select(.kind == "kill_init")) | length)}),
           failures: ($ops | map(select(.cause as $c | $bad | index($c))) | group_by(.cause)
                      | map({key: .[0].cause, value: length}) | from_entries),
           failure_examples: ($ops | map(select(.cause as $c | $bad | index($c))) | .[:10] | map("\(.kind) \(.cause): \(.detail)")),
           survivors: $survivors,
           leaks: ($leaks | split("\n") | map(select(length > 0)))}
        | .ok = ((.failures | length) == 0 and (.leaks | length) == 0)' > "$work/soak.json"
    cat "$work/soak.json"
    jq -r '"soak: \(.cycles) cycles, \(.operations) operations in \(.seconds) s with \(.workers) workers (seed \(.seed))",
           "  by kind:  \(.by_kind | to_entries | map("\(.key) \(.value.count)") | join(", "))",
           "  causes:   \(.causes | to_entries | map("\(.key) \(.value)") | join(", "))",
           "  faults:   \(.faults | to_entries | map("\(.key) \(.value)") | join(", "))",
           "  failures: \(if (.failures | length) == 0 then "none" else (.failures | tostring) end)",
           (.failure_examples[] | "    \(.)"),
           "  leaks:    \(if (.leaks | length) == 0 then "none (\(.survivors) survivors checked)" else (.leaks | join("; ")) end)",
           (if .ok then "soak: ok" else "soak: FAILED" end)' "$work/soak.json" >&2
    jq -e .ok "$work/soak.json" > /dev/null
}
