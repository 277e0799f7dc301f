#!/bin/sh
# Install what is missing, build, and run every test (unit and integration, as root);
# then build again with ASan + UBSan (scripts/build.sh --sanitize) and run there the
# unit tests, a short run of every fuzz target (test 09) and the integration tests of
# $sanitized below. Any sanitizer report fails its test.
#   scripts/test.sh [CTEST-ARGS...]                 both builds
#   scripts/test.sh --sanitize [CTEST-ARGS...]      only the sanitizer build
#   scripts/test.sh --no-sanitize [CTEST-ARGS...]   only the normal build
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${DSEC_BUILD_DIR:-$src/build}
export DSEC_SANITIZE_BUILD_DIR=${DSEC_SANITIZE_BUILD_DIR:-$build-san}
normal=1 sanitize=1
case "${1:-}" in
--sanitize) normal=0; shift ;;
--no-sanitize) sanitize=0; shift ;;
esac
# Under the sanitizers: the tests that read hostile input or take the main paths through
# the library. Left out: benchmarks (they measure a pristine binary), the reclaim and
# guard tests (host-wide or covered by the unit tests), the Debian test (minutes), and,
# for the time budget, the slow ones whose point is timing: 31 (load), 38 and 39 (races
# and hangs), 63 (a minute under ASan). About 4 minutes at -j 2.
sanitized='^(unit|09-fuzz-short|1[0-7]-|19-run-|5[78]-run-|2[0-5]-mount-|3[0-7]-run-|4[0-9]-run-|6[0-7]-sec-|9[0-3]-snap-)'
unsanitized='^(31-|38-|39-|63-)'

# How long each step took, at the end (where the time goes differs from host to host).
t0=$(date +%s) steps=""
step() { t=$(date +%s); steps="$steps  $1 $((t - t0)) s;"; t0=$t; }
trap 'echo "dsec: test.sh took:$steps" >&2' EXIT

"$src/scripts/install-deps.sh"
step install
status=0
if [ $normal = 1 ]; then
    "$src/scripts/build.sh"
    step build
    # Two at a time: the Debian test mostly waits; benchmarks, the soak and the reclaim
    # tests run alone (RUN_SERIAL), about 115 s at the end. Three at a time took 399 s
    # on a fresh clone against 442 s; the two tests that failed under that load before
    # are mended (92 raced its snapshot's end, 78 froze a process that forked every
    # second), but until more runs at -j 3 pass, two at a time is what CI has passed.
    (cd "$build" && ctest --output-on-failure --timeout 300 -j 2 "$@") || status=1
    step tests
fi
if [ $sanitize = 1 ]; then
    "$src/scripts/build.sh" --sanitize
    step sanitizer-build
    export UBSAN_OPTIONS=print_stacktrace=1
    (cd "$DSEC_SANITIZE_BUILD_DIR" && ctest --output-on-failure --timeout 300 -j 2 -R "$sanitized" -E "$unsanitized" "$@") || status=1
    step sanitizer-tests
fi
exit $status
