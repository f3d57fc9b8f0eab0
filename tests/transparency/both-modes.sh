#!/bin/bash
# Run the transparency selection (tests/transparency/run.sh) in both
# concurrency modes at the same time, one process per mode (each is bound
# to one core), then Nova's NUMA live-migration tests in threading mode
# alone: they can deadlock on Nova's own test database lock under CPU load
# (stock Nova too, see selection.txt), so they get the machine to
# themselves and a shorter limit.  Each run's output is printed when it is
# done.  Exit status: the first non-zero of the three.
#
#   tests/transparency/both-modes.sh [PYTEST ARGS...]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
    local name=$1; shift
    start=$(date +%s)
    env "$@" bash "$HERE/run.sh" ${EXTRA[@]+"${EXTRA[@]}"} \
        > "$out/$name.log" 2>&1
    echo $? > "$out/$name.rc"
    echo $(( $(date +%s) - start )) > "$out/$name.seconds"
}
EXTRA=("$@")
NUMA=test_numa_live_migration
run eventlet OS_NOVA_DISABLE_EVENTLET_PATCHING=False &
run threading OS_NOVA_DISABLE_EVENTLET_PATCHING=True TRANSPARENCY_SKIP=$NUMA &
wait
run threading-numa OS_NOVA_DISABLE_EVENTLET_PATCHING=True \
    TRANSPARENCY_MATCH=$NUMA TRANSPARENCY_TIMEOUT=300
status=0
for name in eventlet threading threading-numa; do
    echo "===== transparency, $name: exit $(cat "$out/$name.rc")," \
         "$(cat "$out/$name.seconds")s ====="
    cat "$out/$name.log"
    [ "$status" -ne 0 ] || status=$(cat "$out/$name.rc")
done
exit "$status"
