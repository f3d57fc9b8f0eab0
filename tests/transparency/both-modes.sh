#!/bin/bash
# Run the transparency selection (tests/transparency/run.sh) in both
# concurrency modes at the same time, one process per mode (each is bound
# to one core), then Nova's NUMA live-migration tests in threading mode
# alone: they can deadlock on Nova's own test database lock under CPU load
# (stock Nova too, see selection.txt), so they get the machine to
# themselves, a shorter limit and three tries (CI saw two hangs in a row
# on an idle machine).  Each run's output is printed when all
# are done.  Exit status: the first non-zero of the three.
#
#   tests/transparency/both-modes.sh [PYTEST ARGS...]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../runs.sh"
NUMA=test_numa_live_migration
run "transparency, eventlet" env OS_NOVA_DISABLE_EVENTLET_PATCHING=False \
    bash "$HERE/run.sh" "$@" &
run "transparency, threading" env OS_NOVA_DISABLE_EVENTLET_PATCHING=True \
    TRANSPARENCY_SKIP=$NUMA bash "$HERE/run.sh" "$@" &
wait
run "transparency, threading, $NUMA" env \
    OS_NOVA_DISABLE_EVENTLET_PATCHING=True TRANSPARENCY_MATCH=$NUMA \
    TRANSPARENCY_TIMEOUT=300 TRANSPARENCY_ATTEMPTS=3 bash "$HERE/run.sh" "$@"
report "transparency, eventlet" "transparency, threading" \
    "transparency, threading, $NUMA"
