#!/bin/bash
# dsec-layer import-image: a docker save archive and an OCI image layout (built here with
# tar, sha256sum and jq) give one layer per image layer, base first, with parents, names
# NAME.1.. and the image config; --squash applies the layers into one; --platform picks
# a manifest; a blob that does not match its digest is refused.
. "$(dirname "$0")/lib.sh"

# Two layers: a base, and an OCI layer that deletes a file and makes a directory opaque.
mkdir -p "$T/l1/bin" "$T/l1/etc" "$T/l1/dir" "$T/l2/etc" "$T/l2/dir" "$T/l2/usr"
cp /bin/busybox "$T/l1/bin/sh"
echo base > "$T/l1/etc/os-release"
echo doomed > "$T/l1/etc/remove-me"
echo a > "$T/l1/dir/a"
touch "$T/l2/etc/.wh.remove-me" "$T/l2/dir/.wh..wh..opq"
echo b > "$T/l2/dir/b"
echo new > "$T/l2/usr/new"
for l in l1 l2; do tar -C "$T/$l" --numeric-owner -cf "$T/$l.tar" .; done
sha() { sha256sum "$1" | cut -d' ' -f1; }
config='{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin"],"WorkingDir":"/work",
  "Entrypoint":["/bin/sh"],"Cmd":["-c","true"],"User":"1000"},"rootfs":{"type":"layers","diff_ids":[]}}'

# docker save (classic layout): <id>/layer.tar, <config>.json, manifest.json.
D="$T/docker"
mkdir -p "$D/aaa" "$D/bbb"
cp "$T/l1.tar" "$D/aaa/layer.tar"
cp "$T/l2.tar" "$D/bbb/layer.tar"
echo "$config" > "$D/cfg.json"
echo '[{"Config":"cfg.json","RepoTags":["t:latest"],"Layers":["aaa/layer.tar","bbb/layer.tar"]}]' > "$D/manifest.json"
tar -C "$D" -cf "$T/docker.tar" .

out=$(dsec-layer import-image "$T/docker.tar" --name img --label from=docker)
[ "$(wc -l <<<"$out")" = 2 ] || fail "docker: expected 2 records: $out"
base=$(sed -n 1p <<<"$out")
top=$(sed -n 2p <<<"$out")
jq -e '.name == "img.1" and .parents == [] and .labels.from == "docker" and (.source | endswith("#0"))' \
    <<<"$base" >/dev/null || fail "docker base record: $base"
jq -e --argjson b "$base" '.name == "img" and .parents == [$b.digest] and .config.workdir == "/work" and
    .config.entrypoint == ["/bin/sh"] and .config.env == ["PATH=/bin"] and .config.user == "1000" and
    (.source | startswith("docker:"))' <<<"$top" >/dev/null || fail "docker top record: $top"
dump.erofs --path=/etc/remove-me "$(jq -r .image <<<"$top")" | grep -q 'char dev' || fail "whiteout missing in top"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "staging left behind"

# The same image as an OCI layout (gzip layers named by digest) gives the same layers.
O="$T/oci"
mkdir -p "$O/blobs/sha256"
blob() {  # FILE -> stores it, prints its digest
    local h
    h=$(sha "$1")
    cp "$1" "$O/blobs/sha256/$h"
    echo "sha256:$h"
}
gzip -kn "$T/l1.tar" "$T/l2.tar"
g1=$(blob "$T/l1.tar.gz")
g2=$(blob "$T/l2.tar.gz")
echo "$config" > "$T/config.json"
c=$(blob "$T/config.json")
manifest() {  # LAYER-DIGESTS... -> manifest blob digest
    jq -n --arg c "$c" --args '{schemaVersion:2, mediaType:"application/vnd.oci.image.manifest.v1+json",
        config:{mediaType:"application/vnd.oci.image.config.v1+json", digest:$c, size:1},
        layers:[$ARGS.positional[] | {mediaType:"application/vnd.oci.image.layer.v1.tar+gzip", digest:., size:1}]}' \
        "$@" > "$T/manifest.json"
    blob "$T/manifest.json"
}
m_amd=$(manifest "$g1" "$g2")
m_arm=$(manifest "$g1")
jq -n --arg a "$m_amd" --arg r "$m_arm" '{schemaVersion:2, manifests:[
    {mediaType:"application/vnd.oci.image.manifest.v1+json", digest:$a, size:1, platform:{os:"linux",architecture:"amd64"}},
    {mediaType:"application/vnd.oci.image.manifest.v1+json", digest:$r, size:1, platform:{os:"linux",architecture:"arm64"}}]}' \
    > "$O/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' > "$O/oci-layout"

out2=$(dsec-layer import-image "$O" --name oimg)
[ "$(jq -r .digest <<<"$out2")" = "$(jq -r .digest <<<"$out")" ] || fail "OCI layout and docker save disagree"
jq -e -s '.[1].name == "oimg" and .[0].name == "oimg.1" and (.[1].source | startswith("oci:"))' <<<"$out2" >/dev/null ||
    fail "OCI records: $out2"
arm=$(dsec-layer import-image "$O" --platform linux/arm64)
[ "$(wc -l <<<"$arm")" = 1 ] || fail "--platform linux/arm64 should pick the one-layer manifest"
expect_exit 1 dsec-layer import-image "$O" --platform linux/s390x >/dev/null 2>&1
# An OCI layout packed in a tar works as well.
tar -C "$O" -cf "$T/oci.tar" .
[ "$(dsec-layer import-image "$T/oci.tar" | jq -r .digest)" = "$(jq -r .digest <<<"$out")" ] || fail "OCI archive"

# --squash: one layer, whiteouts applied (deleted), opaque directory cleared.
sq=$(dsec-layer import-image "$T/docker.tar" --squash --name flat)
jq -e '.name == "flat" and .parents == [] and .config.cmd == ["-c","true"]' <<<"$sq" >/dev/null || fail "squash: $sq"
mkdir "$T/x"
fsck.erofs --extract="$T/x" "$(jq -r .image <<<"$sq")" >/dev/null
[ ! -e "$T/x/etc/remove-me" ] && [ "$(ls "$T/x/dir")" = b ] && [ -f "$T/x/usr/new" ] && [ -f "$T/x/etc/os-release" ] ||
    fail "squashed tree wrong: $(cd "$T/x" && find . | sort | tr '\n' ' ')"
[ -z "$(find "$T/x" -name '.wh.*' -o -type c)" ] || fail "whiteouts left in a squashed layer"

# Lower layers stay through the parents chain when only the top is named.
dsec-layer rm --name-only img.1 oimg.1 >/dev/null
dsec-layer gc >/dev/null
dsec-layer verify "$(jq -r .digest <<<"$base")" | jq -e .ok >/dev/null || fail "gc removed a parent"

# A blob that does not hash to its digest.
cp -r "$O" "$T/bad"
cp "$T/l1.tar.gz" "$T/bad/blobs/sha256/${g2#sha256:}"
err=$(dsec-layer import-image "$T/bad" --name bad 2>/dev/null) && fail "mismatched blob accepted"
jq -e 'select(.type == "error") | .code == "bad_input" and (.message | test("does not match its digest"))' \
    <<<"$err" >/dev/null || fail "mismatch error: $err"
[ ! -e "$DSEC_ROOT/layers/names/bad.1" ] || fail "a refused image's lower layer was published"
# A manifest pointing outside the image.
jq '.[0].Layers = ["../../etc/passwd"]' "$D/manifest.json" > "$T/m.json" && cp "$T/m.json" "$D/manifest.json"
err=$(dsec-layer import-image "$D" 2>/dev/null) && fail "escaping layer path accepted"
jq -e 'select(.type == "error") | .code == "bad_input"' <<<"$err" >/dev/null || fail "escape error: $err"
[ -z "$(ls "$DSEC_ROOT/layers/tmp")" ] || fail "staging left behind"
echo ok
