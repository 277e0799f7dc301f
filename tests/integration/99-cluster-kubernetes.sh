#!/bin/bash
# The Kubernetes manifests (deploy/kubernetes), checked offline: every document parses and
# holds together (kinds, volumes each mount names, the node state on hostPaths, the store
# read-only, privileged containers, an Indexed Job with one completion per task of its
# job description), and what their pods run works: each Job pod's script, run here with
# its completion index, writes its share of the records, `dsec-slurm merge` puts them in
# order with a summary, and one round of the DaemonSet's housekeeping runs clean.
# (`kubectl apply --dry-run` needs an API server even on the client side; with kubectl
# here, `kubectl kustomize` renders the node side offline.)
. "$(dirname "$0")/lib.sh"

k8s=$DSEC_SRC/deploy/kubernetes
export PATH="$DSEC_SRC/scripts:$PATH"  # dsec-slurm, installed beside the tools in the image
python3 -c 'import yaml' 2> /dev/null || skip "no python3-yaml"
python3 - "$k8s" > "$T/pods.json" <<'PY' || fail "manifests do not hold together"
import json, os, sys, yaml
d = sys.argv[1]
docs = {}
for f in sorted(os.listdir(d)):
    if f.endswith(".yaml"):
        for doc in yaml.safe_load_all(open(os.path.join(d, f))):
            docs.setdefault(doc["kind"], []).append(doc)
def need(cond, why):
    if not cond:
        sys.exit("manifest: " + why)
kust = docs["Kustomization"][0]
for r in kust["resources"]:
    need(os.path.exists(os.path.join(d, r)), "kustomization names a missing " + r)
for kind in ("Namespace", "PersistentVolumeClaim", "DaemonSet", "Job", "ConfigMap"):
    need(kind in docs, "no " + kind)
for kind in ("PersistentVolumeClaim", "DaemonSet", "Job", "ConfigMap"):
    for doc in docs[kind]:
        need(doc["metadata"].get("namespace") == "dsec", kind + " outside the dsec namespace")
claims = {c["metadata"]["name"]: c for c in docs["PersistentVolumeClaim"]}
need(claims["dsec-store"]["spec"]["accessModes"] == ["ReadOnlyMany"], "the store is not ReadOnlyMany")
out = {}
for kind in ("DaemonSet", "Job"):
    doc = docs[kind][0]
    spec = doc["spec"]["template"]["spec"]
    vols = {v["name"]: v for v in spec["volumes"]}
    hostpaths = {v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
    need({"/var/lib/dsec", "/run/dsec", "/sys/fs/cgroup"} <= hostpaths, kind + ": node state not on hostPaths")
    if kind == "DaemonSet":
        need(doc["spec"]["selector"]["matchLabels"].items() <= doc["spec"]["template"]["metadata"]["labels"].items(),
             "DaemonSet selector does not match its pods")
    for c in spec["containers"]:
        need(c["securityContext"].get("privileged") is True, kind + ": not privileged")
        need(c["image"] == "dsec:0.1.0", kind + ": image " + c["image"])
        mounts = {m["name"]: m for m in c["volumeMounts"]}
        for name in mounts:
            need(name in vols, kind + ": mount of unknown volume " + name)
        need(mounts["store"].get("readOnly") is True and vols["store"]["persistentVolumeClaim"].get("readOnly") is True,
             kind + ": store writable")
        need(vols["store"]["persistentVolumeClaim"]["claimName"] in claims, kind + ": unknown claim")
        env = {e["name"]: e["value"] for e in c["env"]}
        need(env.get("DSEC_STORE") == mounts["store"]["mountPath"], kind + ": DSEC_STORE is not the store mount")
        out[kind] = {"env": env, "script": c["args"][0]}
job = docs["Job"][0]["spec"]
need(job["completionMode"] == "Indexed", "the Job is not Indexed")
cm = json.loads(docs["ConfigMap"][0]["data"]["job.json"])
need(job["completions"] == cm.get("tasks", 1), "completions differ from the job's tasks")
need(docs["ConfigMap"][0]["metadata"]["name"] in
     [v["configMap"]["name"] for v in docs["Job"][0]["spec"]["template"]["spec"]["volumes"] if "configMap" in v],
     "the Job does not mount its ConfigMap")
out["job"] = cm
out["completions"] = job["completions"]
print(json.dumps(out))
PY

# The store the pods read, with the layer the job names.
make_busybox_tree "$T/tree"
dsec-layer build "$T/tree" --name base > /dev/null
dsec-layer publish base --to "$T/store" > /dev/null || fail "publish"
mkdir -p "$T/job" "$T/results"
jq --arg store "$T/store" '.job | .store = $store' "$T/pods.json" > "$T/job/job.json"
paths() { sed -e "s|/job/|$T/job/|g" -e "s|/results/|$T/results/|g"; }
results=$(jq -r '.Job.env.RESULTS' "$T/pods.json" | paths)
script=$(jq -r '.Job.script' "$T/pods.json" | paths)
# Each Job pod: its completion index, the environment the manifest gives it.
n=$(jq -r .completions "$T/pods.json")
for ((k = 0; k < n; k++)); do
    JOB_COMPLETION_INDEX=$k RESULTS=$results DSEC_STORE=$T/store sh -c "$script" || fail "pod $k failed"
done
dsec-slurm merge "$T/job/job.json" "$results" > "$T/merged" || fail "merge: $(cat "$T/merged")"
count=$(jq -r .job.count "$T/pods.json")
jq -se --argjson n "$count" '(map(select(.type == "task")) | map(.index)) == [range($n)]
    and (.[-1] | .type == "summary" and .ok == $n and .failed == 0)' "$T/merged" > /dev/null ||
    fail "merged records: $(cat "$T/merged")"
[ "$(jq -r 'select(.type == "task") | .stdout | rtrimstr("\n")' "$T/merged" | head -n 2 | tr '\n' ' ')" = "sandbox 0 sandbox 1 " ] ||
    fail "outputs: $(cat "$T/merged")"
[ -z "$(dsec-run ls)" ] || fail "the pods left sandboxes"
# A pod that never ran: its sandboxes are lost, the merge says so and exits 1.
rm "$results/task-1.jsonl"
dsec-slurm merge "$T/job/job.json" "$results" > "$T/merged" && fail "a merge with a lost task succeeded"
[ "$(jq -s '.[-1].lost' "$T/merged")" = "$((count - count / n))" ] || fail "lost count: $(tail -n 1 "$T/merged")"

# One round of the DaemonSet's housekeeping (its loop body, without the sleep).
ds=$(jq -r '.DaemonSet.script' "$T/pods.json")
for cmd in "dsec-reclaim ttl" "dsec-reclaim idle --after 10m" "dsec-reclaim gc"; do
    grep -qF "$cmd" <<<"$ds" || fail "the DaemonSet does not run $cmd"
    $cmd > /dev/null || fail "$cmd failed"
done
if command -v kubectl > /dev/null; then
    kubectl kustomize "$k8s" > /dev/null || fail "kubectl kustomize"
fi
echo ok
