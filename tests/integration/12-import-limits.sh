#!/bin/bash
# Caps and broken input: --max-size, the expansion-ratio check, --max-entries, archives
# that end early, and a full disk each give a clear error and leave the store clean.
. "$(dirname "$0")/lib.sh"

H="$DATA/hostile"
clean_store() {
    [ -z "$(ls "$DSEC_ROOT/layers/tmp" 2>/dev/null)" ] || fail "$1: staging left behind"
    [ -z "$(find "$DSEC_ROOT/layers" -maxdepth 1 -name '*.erofs')" ] || fail "$1: an image was published"
}
refuse() {  # CODE PATTERN import-args...
    local code=$1 pattern=$2
    shift 2
    local out
    out=$(dsec-layer import "$@" 2>/dev/null) && fail "$* succeeded"
    jq -e --arg c "$code" --arg p "$pattern" 'select(.type == "error") | .code == $c and (.message | test($p))' \
        <<<"$out" >/dev/null || fail "$*: unclear error: $out"
    clean_store "$*"
}

refuse bad_input 'size cap' "$H/bomb-100M.tar.gz" --max-size 10M
refuse bad_input 'decompression bomb' "$H/bomb-2G.tar.zst"
refuse bad_input 'more than 10 entries' "$H/many-entries.tar" --max-entries 10
refuse bad_input 'truncated' "$H/truncated.tar"
refuse bad_input 'truncated' "$H/truncated.tar.gz"
# Under the caps, the same archives import.
dsec-layer import "$H/many-entries.tar" --max-entries 100 | jq -e '.files == 50' >/dev/null || fail "under the entry cap"
dsec-layer import "$H/bomb-100M.tar.gz" --max-size 1G --compress lz4 | jq -e '.type == "layer"' >/dev/null ||
    fail "100 MiB of zeros under a 1 GiB cap"

# A full disk: no_space, nothing half-written, and the store works again with room.
mkdir -p "$T/src" "$T/small"
head -c 3000000 /dev/urandom > "$T/src/noise"
tar -C "$T/src" -cf "$T/noise.tar" .
mount -t tmpfs -o size=1m dsec-test-small "$T/small"
DSEC_ROOT="$T/small/root" refuse no_space 'No space left' "$T/noise.tar" --name noise
[ -z "$(ls "$T/small/root/layers/names")" ] || fail "name written for a failed import"
mount -o remount,size=16m "$T/small"
DSEC_ROOT="$T/small/root" dsec-layer import "$T/noise.tar" --name noise | jq -e '.type == "layer"' >/dev/null ||
    fail "import after freeing space"
echo ok
