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
. tests/runs.sh
pytest_in() {
    env "$@" python -m pytest -q -p no:cacheprovider --durations=10 \
        tests/functional ${EXTRA[@]+"${EXTRA[@]}"}
}
EXTRA=("$@")
run "functional tests, eventlet mode" pytest_in \
    OS_NOVA_DISABLE_EVENTLET_PATCHING=False FAULTDRIVER_CI_SHARE=eventlet &
run "functional tests, threading mode" pytest_in \
    OS_NOVA_DISABLE_EVENTLET_PATCHING=True FAULTDRIVER_CI_SHARE=threading &
wait
report "functional tests, eventlet mode" "functional tests, threading mode"
