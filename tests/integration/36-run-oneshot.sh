#!/bin/bash
# dsec-run run: the function kind. Create, exec once, destroy in one command; output and
# exit status pass through; --json gives one result record; nothing is left afterwards.
. "$(dirname "$0")/lib.sh"

make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
mkdir -p "$T/tools/opt" && printf '#!/bin/sh\necho "tool $1"\n' > "$T/tools/opt/tool" && chmod +x "$T/tools/opt/tool"
dsec-layer build "$T/tools" --name tools > /dev/null
# Layers are mounted once, on first use; after that sandboxes add no host mounts.
dsec-run run --layers base,tools -- true || fail "first run"
mounts_before=$(wc -l < /proc/self/mounts)
mounts_list=$(cat /proc/self/mounts)

# Streamed output and exit status, the stack's top layer visible.
[ "$(dsec-run run --layers base,tools -- /opt/tool x)" = "tool x" ] || fail "stack output"
[ "$(echo piped | dsec-run run --layers base -- cat)" = piped ] || fail "stdin not streamed"
expect_exit 7 dsec-run run --layers base -- sh -c 'exit 7'
expect_exit 127 dsec-run run --layers base -- /no/such/command
expect_exit 137 dsec-run run --layers base -- sh -c 'kill -9 $$'
[ "$(dsec-run run --layers base --hostname box -- cat /proc/sys/kernel/hostname)" = box ] || fail "hostname"
[ "$(dsec-run run --layers base --env GREETING=hi -- sh -c 'echo $GREETING')" = hi ] || fail "env"

# The command is asked of the init while it sets itself up (lib/dsec/sandbox/exec.h,
# send_ahead), unless the init cannot serve it: another user, or one named in the
# image's /etc/passwd, runs as before, once the sandbox is running.
[ "$(dsec-run run --layers base --user 1000:1001 -- sh -c 'echo $(id -u):$(id -g)')" = 1000:1001 ] ||
    fail "another user's one-shot"
[ "$(dsec-run run --layers base --user root -- id -u)" = 0 ] || fail "a named user's one-shot"
# An init that fails to set itself up runs nothing of what was asked ahead, and says why.
mkdir -p "$T/bind-src"
out=$(dsec-run run --layers base --bind "$T/bind-src:/bin/busybox/sub" -- echo ran 2>/dev/null) &&
    fail "a bind under a file was accepted"
jq -e '.type == "error" and .errno_name == "ENOTDIR"' <<<"$(head -n 1 <<<"$out")" > /dev/null ||
    fail "failed set-up: $out"
! grep -qx ran <<<"$out" || fail "the command ran in a sandbox that failed to start"

# Streamed output (nothing of it kept, no command log) arrives whole and in order into a
# file, a file opened for appending, a pipe; both streams into one file.
seq 1 300000 > "$T/seq.want"
dsec-run run --layers base -- seq 1 300000 > "$T/seq.out" || fail "run into a file"
cmp -s "$T/seq.out" "$T/seq.want" || fail "output into a file differs"
echo first > "$T/seq.app"
dsec-run run --layers base -- seq 1 300000 >> "$T/seq.app" || fail "run into a file appended to"
cmp -s <(tail -n +2 "$T/seq.app") "$T/seq.want" || fail "output appended to a file differs"
[ "$(dsec-run run --layers base -- seq 1 300000 | sha256sum)" = "$(sha256sum < "$T/seq.want")" ] ||
    fail "output into a pipe differs"
dsec-run run --layers base -- sh -c 'echo out; echo err >&2; echo out2' > "$T/both" 2>&1 || fail "run into one file"
[ "$(sort "$T/both" | tr '\n' ' ')" = "err out out2 " ] || fail "both streams into one file: $(cat "$T/both")"

# Writes go to a throwaway upper: the next run starts clean.
dsec-run run --layers base -- sh -c 'echo x > /root/left' || fail "write"
dsec-run run --layers base -- cat /root/left 2>/dev/null && fail "a one-shot sandbox kept state"

# The one-shot upper is in memory: nothing on the host's disk while the command runs,
# and --disk caps it. With --upper-on-disk it is on disk, as for create.
# upper_dirs_while_running [OPTIONS]: how many sandbox directories $DSEC_ROOT holds while
# a one-shot command that wrote to its upper waits on its stdin.
upper_dirs_while_running() {
    rm -f "$T/in" "$T/out"
    mkfifo "$T/in" "$T/out"
    dsec-run run --layers base "$@" -- sh -c 'echo x > /root/f && cat /root/f && read line' < "$T/in" > "$T/out" &
    local running=$! got
    exec 3> "$T/in"
    read -r got < "$T/out"
    [ "$got" = x ] || fail "write to the upper ($*): $got"
    ls -A "$DSEC_ROOT/sandboxes" 2>/dev/null | wc -l
    echo go >&3
    exec 3>&-
    wait "$running" || fail "one-shot run with a read ($*)"
}
[ "$(upper_dirs_while_running)" = 0 ] || fail "a one-shot run made an upper on disk"
[ "$(upper_dirs_while_running --upper-on-disk)" = 1 ] || fail "--upper-on-disk: no upper on disk"
dsec-run run --layers base --disk 1M -- sh -c 'head -c 2000000 /dev/zero > /big' 2>/dev/null \
    && fail "--disk does not cap the in-memory upper"

# Its init is a copy of dsec-run, not dsec-init executed (lib/dsec/ns/init.h), and shows
# nothing of it inside: its name and command line are dsec-init's (not ours, which holds
# host paths), and its memory, environment, descriptors and executable stay unreadable.
seen=$(dsec-run --root "$DSEC_ROOT" run --layers base --env MARK=inside -- sh -c '
    tr "\0" " " < /proc/1/cmdline; echo; cat /proc/1/comm
    for f in environ mem maps; do head -c 1 /proc/1/$f > /dev/null 2>&1 && echo "read $f"; done
    ls /proc/1/fd > /dev/null 2>&1 && echo "read fd"; readlink /proc/1/exe && echo "read exe"; true')
[ "$(sed -n 1p <<<"$seen" | tr -s " ")" = "dsec-init " ] || fail "pid 1's command line: $seen"
[ "$(sed -n 2p <<<"$seen")" = dsec-init ] || fail "pid 1's name: $seen"
! grep -q "$DSEC_ROOT\|read " <<<"$seen" || fail "pid 1 shows dsec-run's: $seen"
# The init holds a descriptor of its own oom_score_adj, opened by dsec-run as host root
# (lib/dsec/ns/init.c): nothing of it reaches a command, which can neither lower nor
# raise the init's score.
seen=$(dsec-run run --layers base -- sh -c 'ls /proc/self/fd | tr "\n" " "
    echo 1000 > /proc/1/oom_score_adj 2>/dev/null && echo "raised"
    echo -1000 > /proc/1/oom_score_adj 2>/dev/null && echo "lowered"; cat /proc/1/oom_score_adj')
[ "$seen" = "0 1 2 3 $(cat /proc/self/oom_score_adj)" ] || fail "a one-shot's command, its descriptors or its init's score: $seen"

# --json: one result record with the captured output.
r=$(dsec-run run --json --layers base -- sh -c 'echo out; echo err >&2; exit 3') || true
jq -e '.type == "result" and .exit_code == 3 and .stdout == "out\n" and .stderr == "err\n" and .timed_out == false' \
    <<<"$r" > /dev/null || fail "result record: $r"

# An unknown layer: a clear error, no sandbox made.
out=$(dsec-run run --layers nope -- true 2>/dev/null) && fail "unknown layer accepted"
jq -e '.type == "error" and .code == "not_found"' <<<"$out" > /dev/null || fail "unknown layer error: $out"

# A one-shot's init leaves as soon as the one-shot's own command has ended
# (lib/dsec/ns/init.h), and only then: not when another exec served meanwhile ends, nor
# while another exec runs, served or joined from outside. Those are ended by the
# one-shot's destroy, which marks the teardown first, and say so.
# hold_oneshot [RUN OPTIONS]: starts a one-shot whose command waits for a line on
# $T/hold (fd 3 here); sets $oneshot (its pid) and $id (its sandbox) once it runs.
hold_oneshot() {
    settle_teardowns || fail "teardowns left"
    rm -f "$T/hold" "$T/held"
    mkfifo "$T/hold"
    dsec-run run --layers base "$@" -- sh -c 'read line; echo released' < "$T/hold" > "$T/held" &
    oneshot=$!
    exec 3> "$T/hold"
    id=""
    for _ in $(seq 1 200); do
        id=$(ls "$DSEC_RUN/sandboxes" 2>/dev/null | head -n 1)
        [ -n "$id" ] && dsec-run exec "$id" -- true 2>/dev/null && return
        sleep 0.05
    done
    fail "the held one-shot did not start"
}
release_oneshot() {
    echo go >&3
    exec 3>&-
    wait "$oneshot" || fail "the held one-shot ($1) exited $?"
    [ "$(cat "$T/held")" = released ] || fail "the held one-shot ($1) printed: $(cat "$T/held")"
}
# A joined one-shot command (another user's) outlives execs served and ended meanwhile.
hold_oneshot --user 1000:1001
dsec-run exec "$id" -- true || fail "an exec into a one-shot sandbox"
sleep 0.3
release_oneshot "joined, after a served exec"
# Other execs, served and joined, outlive the one-shot's command and end with its sandbox.
for user in root 1000; do
    hold_oneshot
    dsec-run exec --json --user "$user" "$id" -- sleep 30 > "$T/other.json" &
    other=$!
    for _ in $(seq 1 100); do dsec-run exec "$id" -- sh -c 'ps | grep -q "[s]leep 30"' && break; sleep 0.05; done
    release_oneshot "with another exec as $user"
    wait "$other" || true
    jq -e '.signal == 9 and .note == "sandbox destroyed during exec"' "$T/other.json" > /dev/null ||
        fail "an exec as $user into a one-shot sandbox: $(cat "$T/other.json")"
done

# A process inside named like one joined from outside (its name, in /proc/PID/stat, holds
# ") S 0"), left running by the command: the run still ends with the command's status.
rc=0
timeout 20 dsec-run run --layers base -- sh -c 'printf "#!/bin/sh\nsleep 30\n" > "/tmp/) S 0 1 1 1"
    chmod +x "/tmp/) S 0 1 1 1"; "/tmp/) S 0 1 1 1" & sleep 0.2; grep -qF "() S 0 1 1 1) S " /proc/$!/stat || exit 9; exit 7' || rc=$?
[ "$rc" = 7 ] || fail "a one-shot leaving a process named ') S 0 1 1 1' exited $rc (7: its status; 9: not so named; 124: it hung)"

# A one-shot whose command ended with nothing else running inside returns before its
# teardown, which a child finishes (above, settle_teardowns waits for it). A name of the
# caller's is torn down before run returns, so it can be used again at once; so is a
# sandbox whose command left a process running, which has ended when run returns.
for i in 1 2 3; do
    [ "$(dsec-run run --id again --layers base -- echo "$i")" = "$i" ] || fail "run --id again, time $i"
done
dsec-run run --layers base -- sh -c 'sleep 3019 > /dev/null 2>&1 &' || fail "a one-shot leaving a process"
pgrep -f "sleep 3019" > /dev/null && fail "a one-shot's process outlived its run"
settle_teardowns || fail "teardowns left"

# Nothing is left: state, uppers, mounts, processes.
[ -z "$(ls "$DSEC_RUN/sandboxes" 2>/dev/null)" ] || fail "state left: $(ls "$DSEC_RUN/sandboxes")"
[ -z "$(ls "$DSEC_ROOT/sandboxes" 2>/dev/null)" ] || fail "uppers left"
[ "$(wc -l < /proc/self/mounts)" = "$mounts_before" ] || fail "host mount table grew: $(diff <(echo "$mounts_list") /proc/self/mounts)"
pgrep -f "dsec-init $DSEC_RUN" > /dev/null && fail "init processes left"

# A kept one-shot keeps its command log, output hashes and all (the others' log goes with
# their sandbox, so it is not written). Last: it starts dsec-init, whose staging mounts a
# tmpfs in the run directory.
kept=$(dsec-run run --keep --layers base -- echo kept 2>&1 > /dev/null | jq -r 'select(.type == "sandbox") | .id')
[ -n "$kept" ] || fail "run --keep gave no record"
jq -se --arg sha "$(echo kept | sha256sum | cut -d' ' -f1)" \
    'length == 1 and .[0].kind == "exec" and .[0].argv == ["echo","kept"] and .[0].stdout_sha256 == $sha' \
    <<<"$(dsec-run log "$kept")" > /dev/null || fail "the kept one-shot's log: $(dsec-run log "$kept")"
dsec-run destroy "$kept" > /dev/null || fail "destroy the kept one-shot"
# An output of 3 MB: dsec-run probes the CPU for libcrypto's SHA code only once it has
# hashed 16 KiB (lib/start/crypto_cpuid.c); the digest is the same on both sides of that.
kept=$(dsec-run run --keep --layers base -- head -c 3000000 /dev/urandom 2>&1 > "$T/big" |
    jq -r 'select(.type == "sandbox") | .id')
[ "$(stat -c %s "$T/big")" = 3000000 ] || fail "3 MB one-shot: $(stat -c %s "$T/big") bytes"
jq -se --arg sha "$(sha256sum < "$T/big" | cut -d' ' -f1)" '.[0].stdout_sha256 == $sha and .[0].bytes_out == 3000000' \
    <<<"$(dsec-run log "$kept")" > /dev/null || fail "3 MB one-shot's digest: $(dsec-run log "$kept" | jq -c 'del(.stdout)')"
dsec-run destroy "$kept" > /dev/null || fail "destroy the 3 MB one-shot"
echo ok
