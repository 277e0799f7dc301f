#!/bin/bash
# scripts/dsec-slurm against a real Slurm (munged, slurmctld, slurmd, started here as a
# one-node cluster): a batch of sandboxes from a layer published to GlusterFS, spread
# as an sbatch array; the records come back merged in sandbox order with a summary;
# failures are counted, a bad job description is refused with one clear error, and
# the same batch run without Slurm (--local) gives the launcher's overhead.
. "$(dirname "$0")/cluster-lib.sh"

launcher=$DSEC_SRC/scripts/dsec-slurm
gluster_up shared 2
gluster_mount shared "$T/shared"
gluster_mount shared "$T/ro" ro
slurm_up 2

make_busybox_tree "$T/tree"
mkdir "$T/shared/layers" "$T/shared/results"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-layer publish base --to "$T/shared/layers" > /dev/null || fail "publish"

job() {  # job FILE COUNT TASKS PER_NODE COMMAND...: a job description (policy: $policy)
    local file=$1 count=$2 tasks=$3 per=$4 cmd='[]' a; shift 4
    for a in "$@"; do cmd=$(jq -c --arg a "$a" '. + [$a]' <<<"$cmd"); done
    jq -n --arg store "$T/ro/layers" --argjson count "$count" --argjson tasks "$tasks" --argjson per "$per" \
        --argjson cmd "$cmd" --arg policy "${policy:-}" '{layers: ["base"], count: $count, tasks: $tasks,
          per_node: $per, store: $store, limits: {memory: "64M", pids: 64, timeout: "30s"}, command: $cmd}
          + if $policy == "" then {} else {policy: $policy} end' > "$file"
}

# Eight sandboxes in two array tasks, two at a time on the node, under a policy (from the
# shared filesystem) that hides /etc/group.
echo '{"files": {"hidden": ["/etc/group"]}}' > "$T/shared/policy.json"
# shellcheck disable=SC2016 # the sandbox's shell expands it
policy=$T/shared/policy.json job "$T/job.json" 8 2 2 sh -c '[ ! -s /etc/group ] && echo sandbox $DSEC_INDEX'
"$launcher" "$T/job.json" --results "$T/shared/results/one" > "$T/out" || fail "the batch failed: $(cat "$T/out")"
jq -se '[.[] | select(.type == "task") | .index] == [range(8)]' "$T/out" > /dev/null || fail "records not in order: $(cat "$T/out")"
jq -se 'all(.[] | select(.type == "task"); .ok and .stdout == "sandbox \(.index)\n" and .node != null)' "$T/out" > /dev/null ||
    fail "task records: $(cat "$T/out")"
jq -se '[.[] | select(.type == "task") | .array_task] | unique == [0, 1]' "$T/out" > /dev/null || fail "not two array tasks"
sum=$(tail -n 1 "$T/out")
jq -e '.type == "summary" and .count == 8 and .ok == 8 and .failed == 0 and (.job | test("^[0-9]+$"))' <<<"$sum" > /dev/null ||
    fail "summary: $sum"
[ "$(find "$T/shared/results/one" -name 'task-*.jsonl' | wc -l)" = 2 ] || fail "task files: $(ls "$T/shared/results/one")"

# Failing commands are counted; the launcher exits 1 and still merges everything.
# shellcheck disable=SC2016 # the sandbox's shell expands it
job "$T/fail.json" 4 2 2 sh -c 'exit $((DSEC_INDEX % 2))'
"$launcher" "$T/fail.json" --results "$T/shared/results/fail" > "$T/fout" && fail "a batch with failures exited 0"
jq -se '[.[] | select(.type == "task") | [.index, .ok, .exit_code]] == [[0,true,0],[1,false,1],[2,true,0],[3,false,1]]' \
    "$T/fout" > /dev/null || fail "failure records: $(cat "$T/fout")"
tail -n 1 "$T/fout" | jq -e '.ok == 2 and .failed == 2' > /dev/null || fail "failure summary: $(tail -n 1 "$T/fout")"

# An array task that goes away mid-batch (cancelled, as when its node dies): its
# sandboxes are reported lost, the others complete, nothing is left on the node.
# shellcheck disable=SC2016 # the sandbox's shell expands it
job "$T/lost.json" 4 2 2 sh -c '[ $DSEC_INDEX -lt 2 ] || sleep 60'
"$launcher" "$T/lost.json" --results "$T/shared/results/lost" > "$T/lout" & lpid=$!
for _ in $(seq 100); do
    running=$(squeue -h -r -t R -o %i | grep '_1$' || true)
    [ -n "$running" ] && [ -e "$T/shared/results/lost/task-0.jsonl" ] && break
    sleep 0.2
done
[ -n "$running" ] || fail "array task 1 never ran"
sleep 1
scancel "$running"
rc=0; timeout 60 tail --pid=$lpid -f /dev/null || fail "the launcher hangs after a lost task"
wait $lpid || rc=$?
[ "$rc" = 1 ] || fail "a batch with a lost task exited $rc"
jq -se '[.[] | select(.type == "task") | [.index, .ok, (.error.code // "")]] == [[0,true,""],[1,true,""],[2,false,"lost"],[3,false,"lost"]]' \
    "$T/lout" > /dev/null || fail "lost records: $(cat "$T/lout")"
tail -n 1 "$T/lout" | jq -e '.lost == 2 and .ok == 2' > /dev/null || fail "lost summary: $(tail -n 1 "$T/lout")"
for _ in $(seq 50); do [ -z "$(ls "$DSEC_RUN/sandboxes" 2>/dev/null)" ] && break; sleep 0.2; done
[ -z "$(ls "$DSEC_RUN/sandboxes" 2>/dev/null)" ] || fail "a cancelled task left sandboxes: $(ls "$DSEC_RUN/sandboxes")"

# Rerunning only what did not succeed is one command; here with a job that now succeeds.
job "$T/fixed.json" 4 2 2 true
"$launcher" --rerun "$T/shared/results/lost" --results "$T/shared/results/rerun" "$T/fixed.json" > "$T/rout" ||
    fail "the rerun failed: $(cat "$T/rout")"
jq -se '[.[] | select(.type == "task") | [.index, .ok]] == [[2,true],[3,true]]' "$T/rout" > /dev/null ||
    fail "rerun records: $(cat "$T/rout")"
tail -n 1 "$T/rout" | jq -e '.count == 2 and .ok == 2' > /dev/null || fail "rerun summary: $(tail -n 1 "$T/rout")"

# A bad job description: one line on stderr, an error record, nothing submitted.
echo '{"layers": [], "count": 2, "command": ["true"]}' > "$T/bad.json"
out=$("$launcher" "$T/bad.json" --results "$T/shared/results/bad" 2> "$T/err") && fail "a bad job was accepted"
jq -e '.type == "error" and .code == "bad_input" and .tool == "dsec-slurm"' <<<"$out" > /dev/null || fail "no error record: $out"
[ "$(wc -l < "$T/err")" = 1 ] || fail "stderr: $(cat "$T/err")"
[ ! -e "$T/shared/results/bad" ] || fail "a refused job left a results directory"
"$launcher" "$T/job.json" --results "$T/shared/results/one" > /dev/null 2>&1 && fail "reused a results directory"

# The same batch, larger, through Slurm and without it.
job "$T/big.json" 24 2 4 true
"$launcher" "$T/big.json" --results "$T/shared/results/slurm" > "$T/s" || fail "24 through Slurm: $(tail -n 1 "$T/s")"
"$launcher" "$T/big.json" --results "$T/shared/results/local" --local > "$T/l" || fail "24 locally: $(tail -n 1 "$T/l")"
echo "cluster: 24 sandboxes (2 array tasks x 4 at once) through Slurm: $(tail -n 1 "$T/s" | jq -r '"\(.seconds) s, \(.per_second)/s"');" \
     "without Slurm: $(tail -n 1 "$T/l" | jq -r '"\(.seconds) s, \(.per_second)/s"')"
[ -z "$(ls "$DSEC_RUN/sandboxes" 2>/dev/null)" ] || fail "sandboxes left: $(ls "$DSEC_RUN/sandboxes")"

# The launcher's options are in its man page and completions (test 01 covers the binaries).
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$DSEC_SRC/man/dsec-slurm.1" > "$T/man"
for opt in $("$launcher" --help | sed -n '/^Options:/,/^$/p' | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
    for f in "$T/man" "$DSEC_SRC/completions/bash/dsec-slurm" "$DSEC_SRC/completions/zsh/_dsec-slurm"; do
        grep -qF -- "$opt" "$f" || fail "$opt is not in $f"
    done
    grep -qE -- "-l ${opt#--}( |\$)" "$DSEC_SRC/completions/fish/dsec-slurm.fish" || fail "$opt is not in the fish completion"
done
echo ok
