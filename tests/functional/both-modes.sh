#!/bin/bash
# Run faultdriver's functional tests in both concurrency modes at the same
# time, one pytest process per mode, and print each mode's output when both
# are done.  A test process is bound to one core (one OS thread under
# eventlet, the GIL under native threads), so two of them share two cores
# well.  Exit status: the first non-zero of the two.
#
#   tests/functional/both-modes.sh [PYTEST ARGS...]
#
# Each mode runs its share (tests/functional/conftest.py): eventlet a
# sample of the step matrices and the bundled scenarios, threading the
# whole matrices and the reduced sweeps; every other test runs in both.
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
    local mode=$1; shift
    start=$(date +%s)
    env "$@" python -m pytest -q -p no:cacheprovider --durations=10 \
        tests/functional ${EXTRA[@]+"${EXTRA[@]}"} > "$out/$mode.log" 2>&1
    echo $? > "$out/$mode.rc"
    echo $(( $(date +%s) - start )) > "$out/$mode.seconds"
}
EXTRA=("$@")
run eventlet OS_NOVA_DISABLE_EVENTLET_PATCHING=False FAULTDRIVER_CI_SHARE=eventlet &
run threading OS_NOVA_DISABLE_EVENTLET_PATCHING=True FAULTDRIVER_CI_SHARE=threading &
wait
status=0
for mode in eventlet threading; do
    echo "===== functional tests, $mode mode: exit $(cat "$out/$mode.rc")," \
         "$(cat "$out/$mode.seconds")s ====="
    cat "$out/$mode.log"
    [ "$status" -ne 0 ] || status=$(cat "$out/$mode.rc")
done
exit "$status"
