#!/bin/bash
# A short run of every fuzz target (tests/fuzz), so that a regression fails the suite:
# first each file under tests/data/fuzz/TARGET (crashes found before, kept as
# regression inputs), then DSEC_FUZZ_SECONDS (default 4) of fuzzing from the committed
# seed corpus. The targets exist only in the sanitizer build (-DDSEC_SANITIZE=ON).
. "$(dirname "$0")/lib.sh"

seconds=${DSEC_FUZZ_SECONDS:-4}
shopt -s nullglob
targets=("$DSEC_BIN"/dsec-fuzz-*)
[ ${#targets[@]} -gt 0 ] || skip "no fuzz targets in $DSEC_BIN: they are built with -DDSEC_SANITIZE=ON (scripts/test.sh --sanitize)"

# Every source has its target, and every target its seed corpus.
for src in "$DSEC_SRC"/tests/fuzz/fuzz_*.cc; do
    name=$(basename "$src" .cc)
    [ -x "$DSEC_BIN/dsec-${name//_/-}" ] || fail "$src has no built target dsec-${name//_/-}"
    [ -n "$(ls "$DSEC_SRC/tests/fuzz/corpus/${name#fuzz_}")" ] || fail "no seed corpus for $name"
done

# Scratch directories of the targets go below the test's root.
export TMPDIR=$T
for bin in "${targets[@]}"; do
    name=$(basename "$bin")
    short=${name#dsec-fuzz-}
    short=${short//-/_}
    regressions=("$DATA/fuzz/$short"/*)
    if [ ${#regressions[@]} -gt 0 ]; then
        "$bin" "${regressions[@]}" >"$T/$short-regress.log" 2>&1 ||
            { tail -40 "$T/$short-regress.log" >&2; fail "$name fails on a kept regression input"; }
    fi
    # libFuzzer adds what it finds to the first corpus directory: a copy, not the tree.
    mkdir -p "$T/corpus-$short" "$T/artifacts-$short"
    cp "$DSEC_SRC/tests/fuzz/corpus/$short"/* "$T/corpus-$short/"
    dict=()
    case $short in
    records | image_config) dict=(-dict="$DSEC_SRC/tests/fuzz/dict/records.dict") ;;
    policy) dict=(-dict="$DSEC_SRC/tests/fuzz/dict/policy.dict") ;;
    image) dict=(-dict="$DSEC_SRC/tests/fuzz/dict/image.dict") ;;
    tar_import | cp_tar) dict=(-dict="$DSEC_SRC/tests/fuzz/dict/tar.dict") ;;
    esac
    if ! "$bin" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$T/artifacts-$short/" "$T/corpus-$short" >"$T/$short.log" 2>&1; then
        tail -60 "$T/$short.log" >&2
        fail "$name found a failure: $(ls "$T/artifacts-$short")"
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/$short.log")
    [ "${runs:-0}" -gt 0 ] || { tail -20 "$T/$short.log" >&2; fail "$name executed nothing"; }
    echo "$name: $runs executions in ${seconds}s"
done
# Nothing left behind by the targets themselves.
leftover=$(find "$T" -maxdepth 1 -name 'dsec-fuzz.*')
[ -z "$leftover" ] || fail "fuzz scratch directories left behind: $leftover"
echo ok
