#!/bin/bash
# The findings exported as Nova regression tests (nova-regressions/) on
# stock Nova, in both concurrency modes at the same time (one pytest
# process per mode, one core each; see tests/functional/both-modes.sh).
#
#   tests/nova-regressions-both-modes.sh [PYTEST ARGS...]
set -u
cd "$(dirname "$0")/.."
. tests/runs.sh
pytest_in() {
    env "$@" python -m pytest -q -p no:cacheprovider nova-regressions \
        ${EXTRA[@]+"${EXTRA[@]}"}
}
EXTRA=("$@")
run "nova-regressions, eventlet mode" pytest_in \
    OS_NOVA_DISABLE_EVENTLET_PATCHING=False &
run "nova-regressions, threading mode" pytest_in \
    OS_NOVA_DISABLE_EVENTLET_PATCHING=True &
wait
report "nova-regressions, eventlet mode" "nova-regressions, threading mode"
