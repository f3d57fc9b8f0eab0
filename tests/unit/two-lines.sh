#!/bin/bash
# The unit suite as two pytest processes side by side (CI, tox -e all):
# one pytest process uses one core, and most of the suite's time is in a
# few files whose tests each start a Python that imports Nova (an
# altered Nova checked at start, the devstack plugin's bash under
# devstack's functions, the sweep's refusals).  Those files are one
# line, every other file the other (about 130 s and 150 s here, against
# 295 s in one process); a new file goes with the rest.  Each line's
# output is printed when both are done.  Exit status: the first
# non-zero.
#
#   tests/unit/two-lines.sh [PYTEST ARGS...]
set -u
cd "$(dirname "$0")/../.."
. tests/runs.sh
SLOW=(tests/unit/test_novacompat.py tests/unit/test_devstack_plugin.py
      tests/unit/test_sweep_not_silent.py)
ignore=()
for path in "${SLOW[@]}"; do
    ignore+=("--ignore=$path")
done
run "unit tests, the Nova-starting files" python -m pytest -q \
    -p no:cacheprovider "${SLOW[@]}" "$@" &
run "unit tests, the rest" python -m pytest -q -p no:cacheprovider \
    tests/unit "${ignore[@]}" "$@" &
wait
report "unit tests, the Nova-starting files" "unit tests, the rest"
