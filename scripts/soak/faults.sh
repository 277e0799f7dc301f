# shellcheck shell=bash
# shellcheck disable=SC2154 # the settings and paths are soak.sh's globals
# The soak's fault loop (sourced by scripts/soak.sh): every few seconds one host-side
# fault, one line FAULT<TAB>DETAIL in $work/faults.tsv; and the listing loop, which checks
# that `dsec-run ls` parses (its outcomes in $work/ops/listing.tsv).

# Fills the filesystem holding DIR with DIR/ballast for a moment (ENOSPC for everyone).
fill_for() {  # DIR SECONDS
    fallocate -l "$(($(stat -f -c '%a * %S' "$1")))" "$1/ballast" 2> /dev/null \
        || head -c 1G /dev/zero > "$1/ballast" 2> /dev/null || true
    sleep "$2"
    rm -f "$1/ballast"
}

# SIGKILL to one dsec tool of this soak (a process of our mount namespace, so never
# another user's), picked at random among those running; tries for a second or so.
# Prints what it killed.
kill_random_tool() {
    local pids p try what
    for ((try = 0; try < 20; try++)); do
        # pgrep warns that a pattern past 15 characters matches no process name; this
        # one is a regex whose matches are all shorter.
        mapfile -t pids < <(pgrep --ns $$ --nslist mnt -x 'dsec-run|dsec-mount|dsec-layer|dsec-reclaim' 2> /dev/null)
        if [ ${#pids[@]} -gt 0 ]; then
            p=${pids[RANDOM % ${#pids[@]}]}
            what=$({ tr '\0' ' ' < "/proc/$p/cmdline"; } 2> /dev/null | cut -c1-80)
            kill -KILL "$p" 2> /dev/null && echo "$what" && return 0
        fi
        sleep 0.05
    done
}

# A check that every listed sandbox parses and none is broken (a state file that does
# not parse): a corrupt listing is a failure of the soak.
check_listing() {
    local out rc=0 detail="" t0=$EPOCHREALTIME
    out=$(timeout -k 5 "$op_timeout" dsec-run ls --json 2> "$work/ls.err") || rc=$?
    if [ "$rc" -ge 124 ] && [ "$rc" != 130 ]; then
        detail="ls rc=$rc"
    elif ! jq -se 'all(.[]; (.type == "error") or (.id and .state))' <<< "$out" > /dev/null 2>&1; then
        detail="unparsable ls output: $(head -c 300 <<< "$out")"
    elif jq -se 'any(.[]; .state == "broken")' <<< "$out" > /dev/null 2>&1; then
        detail="broken: $(jq -c 'select(.state == "broken")' <<< "$out" | head -c 300)"
    fi
    local t1=$EPOCHREALTIME ms
    ms=$(((${t1/./} - ${t0/./}) / 1000))
    if [ -n "$detail" ]; then
        printf 'ls\tcorrupt_state\t%s\t%s\n' "$ms" "$(tr '\t\n' '  ' <<< "$detail")" >> "$work/ops/listing.tsv"
    else
        printf 'ls\tok\t%s\t\n' "$ms" >> "$work/ops/listing.tsv"
    fi
}

# listing_loop DEADLINE: `dsec-run ls` checked again and again until the deadline or the
# stop file; and unnamed snapshot layers, which pile up in the store, collected now and
# then beside everything else (dsec-layer gc keeps what is mounted).
listing_loop() {
    set +e
    : > "$work/ops/listing.tsv"
    local tick=0
    while ((EPOCHSECONDS < $1)) && [ ! -e "$work/stop" ]; do
        check_listing
        tick=$((tick + 1))
        ((tick % 10 == 0)) && timeout -k 5 "$op_timeout" dsec-layer gc > /dev/null 2>&1
        sleep 0.5
    done
}

# fault_loop DEADLINE: one fault every few seconds, until the deadline or the stop file.
fault_loop() {
    set +e
    RANDOM=$((seed * 100 + 99))
    : > "$work/faults.tsv"
    : > "$work/ops/faults.tsv"
    local next=$((EPOCHSECONDS + fault_every)) f layer killed
    while ((EPOCHSECONDS < $1)) && [ ! -e "$work/stop" ]; do
        sleep 0.2
        ((EPOCHSECONDS >= next)) || continue
        next=$((EPOCHSECONDS + 1 + RANDOM % (2 * fault_every)))
        local kinds=(root_full run_full umount kill kill gc)
        f=${kinds[RANDOM % ${#kinds[@]}]}
        fault_on "$f" || continue
        case $f in
        root_full)
            fill_for "$DSEC_ROOT" "$((RANDOM % 2)).$((RANDOM % 10))"
            printf 'root_full\t\n' >> "$work/faults.tsv" ;;
        run_full)
            fill_for "$DSEC_RUN" "$((RANDOM % 2)).$((RANDOM % 10))"
            printf 'run_full\t\n' >> "$work/faults.tsv" ;;
        umount)
            # A layer mount taken away (lazily) under the live sandboxes that use it.
            local layers=("$DSEC_RUN"/layers/*)
            layer=${layers[RANDOM % ${#layers[@]}]}
            if [ -d "$layer" ] && mountpoint -q "$layer" && umount -l "$layer"; then
                printf 'umount\t%s\n' "${layer##*/}" >> "$work/faults.tsv"
            else
                printf 'umount_none\t\n' >> "$work/faults.tsv"
            fi ;;
        kill)
            killed=$(kill_random_tool)
            if [ -n "$killed" ]; then
                printf 'kill\t%s\n' "$killed" >> "$work/faults.tsv"
            else
                printf 'kill_none\t\n' >> "$work/faults.tsv"
            fi ;;
        gc)
            # gc beside the workers (default grace): takes sandboxes whose init died.
            local rc=0
            timeout -k 5 "$op_timeout" dsec-reclaim gc > "$work/gc.out" 2> "$work/gc.err" || rc=$?
            printf 'gc\t%s\n' "$(jq -rs 'map(.kind // .code) | join(",")' "$work/gc.out" 2> /dev/null)" >> "$work/faults.tsv"
            if [ "$rc" -ge 124 ]; then
                printf 'gc\thang\t0\trc=%s %s\n' "$rc" "$(head -c 200 "$work/gc.err" | tr '\t\n' '  ')" >> "$work/ops/faults.tsv"
            else
                printf 'gc\t%s\t0\t\n' "$(jq -rs 'map(select(.type == "error") | .code) | first // "ok"' "$work/gc.out" 2> /dev/null || echo no_record)" >> "$work/ops/faults.tsv"
            fi ;;
        esac
    done
}
