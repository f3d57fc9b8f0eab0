#!/bin/bash
# A process tier's CI runs: its pytest suite and its bundled scenario
# runs in two lines side by side, each line one stack at a time (a test
# module or scenario may go with the other line to even the lines).  A stack
# of Nova processes mostly waits (RPC replies, polls, a crashed service's
# timeouts), so two stacks share two cores; each stack has its own ports,
# loopback addresses, broker, database and cgroups, and reaps only its
# own processes (faultdriver/process/stack.py).  Each line's output is
# printed when both are done.  Exit status: the first non-zero.
#
#   tests/tier-runs.sh process|libvirt [--seed-json FILE] [COMMAND...]
#
# --seed-json FILE (process): the scenarios line's seed run also writes
# its run document to FILE (through FILE.part, renamed when the run
# ended, passed or not), which the cloud line compares its own run with
# (tests/cloud-run.sh --process-run FILE) instead of running it again.
#
# Each COMMAND runs as a line of its own beside the tier's (CI runs the
# recall benchmark's embedded sweep beside the libvirt tier's lines,
# whose stacks mostly wait).
set -u
cd "$(dirname "$0")/.."
. tests/runs.sh
# Every command is run, also after one failed: the first failure's
# status, and the failed commands named again at the line's end.
in_turn() {
    local status=0 line rc failed=()
    for line in "$@"; do
        echo "== $line"
        eval "$line"
        rc=$?
        if [ "$rc" -ne 0 ]; then
            failed+=("exit $rc: $line")
            [ "$status" -ne 0 ] || status=$rc
        fi
    done
    for line in "${failed[@]}"; do
        echo "== FAILED ($line)"
    done
    return "$status"
}
tier=${1:-}
[ $# -gt 0 ] && shift
seed_json=
if [ "${1:-}" = --seed-json ]; then
    seed_json=$2
    shift 2
    rm -f "$seed_json" "$seed_json.part"
fi
beside=("$@")
# The seed's process-tier run; with --seed-json, its run document to
# that file (the progress lines, on stderr, stay in the line's log).
seed_run() {
    local run="faultdriver scenario run stale-error-migration-context --backend process --mode threading"
    if [ -z "$seed_json" ]; then
        echo "$run"
    else
        echo "$run -f json > '$seed_json.part'; rc=\$?; mv '$seed_json.part' '$seed_json'; (exit \$rc)"
    fi
}
case "$tier" in
process)
    # The sweep confirm test (a sweep, then its finding replayed on
    # processes: the longest) goes with the scenarios, evening the lines.
    # The standing-stack tests run in tests/cloud-run.sh, before its own
    # standing stack (one per machine; tox -e cloud).
    tests=("env OS_NOVA_DISABLE_EVENTLET_PATCHING=False python -m pytest -q -p no:cacheprovider --durations=5 tests/process --ignore=tests/process/test_sweep_confirm.py --ignore=tests/process/test_keystone.py --ignore=tests/process/test_stack_up.py"
           # F16: a graceful stop (a real SIGTERM) during a move's
           # pre-check.
           "faultdriver scenario run graceful-stop-between-move-steps --backend process --mode threading"
           # F19 with no crash: an abort whose rollback skips dest leaves
           # dest's task; its real graceful stop (SIGTERM) times out on it.
           "faultdriver scenario run abort-leaves-dest-task-tracked --backend process")
    scenarios=(
        # The seed, stock vs fix, a real crash, threading mode.
        "$(seed_run)"
        # F6's stock variant: a crash in a resource update with the timer
        # periodic off (the functional tests run both variants embedded).
        "faultdriver scenario run source-crash-in-post-live-migration-update --backend process --variant stock"
        # F4 with the seed's server (from a volume, one port): the
        # block-storage and network stand-ins show what is left attached
        # and bound where.
        "faultdriver scenario run source-failure-in-live-migration-bfv --backend process"
        # F18 without a restart: src's periodic through its control
        # socket (peer_control_sockets) inside dest's claim drop.
        "faultdriver scenario run source-periodic-during-revert --backend process --mode eventlet"
        "env OS_NOVA_DISABLE_EVENTLET_PATCHING=False python -m pytest -q -p no:cacheprovider tests/process/test_sweep_confirm.py"
        # Keystone in the stack (401 without a token): evens the lines.
        "env OS_NOVA_DISABLE_EVENTLET_PATCHING=False python -m pytest -q -p no:cacheprovider tests/process/test_keystone.py"
        # A service-side failure: the Neutron stand-in answers the
        # conductor's port binding 500 (its pseudo-host's rule).
        "faultdriver scenario run neutron-fails-conductors-binding --backend process --mode threading"
        # The broker restarted while dest holds pre_live_migration: the
        # move completes or rolls back cleanly (#43's control plane).
        "faultdriver scenario run broker-restart-while-dest-prepares --backend process --mode eventlet")
    ;;
libvirt)
    # Two lines, as the process tier's (tests/libvirt/test_tier.py counts
    # only its own stack's QEMU processes).
    tests=("python -m pytest -q -p no:cacheprovider --durations=5 tests/libvirt"
           # The seed, stock vs fix, a real crash.
           "faultdriver scenario run stale-error-migration-context --backend libvirt"
           # F14: a graceful stop (SIGTERM) of a libvirt compute mid-move.
           "faultdriver scenario run graceful-stop-libvirt --backend libvirt"
           # F16 with nothing widened: F14 holds the window open.
           "faultdriver scenario run graceful-stop-between-move-steps-libvirt --backend libvirt --mode eventlet")
    # The scenarios only a real hypervisor can show.
    scenarios=(
        "faultdriver scenario run source-crash-after-live-migration --backend libvirt"
        "faultdriver scenario run dest-crash-after-pre-live-migration --backend libvirt"
        "faultdriver scenario run compute-crash-running-guest --backend libvirt"
        "faultdriver scenario run dest-crash-in-evacuation-libvirt --backend libvirt"
        # F11 with a real QEMU transfer in flight during a graceful stop.
        "faultdriver scenario run graceful-stop-during-transfer-libvirt --backend libvirt"
        # The seed report's server (pinned, from a volume, one port) moved
        # by real QEMU: a loop device per volume, a tap per port in each
        # host's network namespace.
        "faultdriver scenario run live-migration-bfv-libvirt --backend libvirt")
    ;;
*)
    echo "usage: $0 process|libvirt" >&2
    exit 2
    ;;
esac
run "$tier tier: tests" in_turn "${tests[@]}" &
lines=("$tier tier: tests")
if [ ${#scenarios[@]} -gt 0 ]; then
    run "$tier tier: scenarios" in_turn "${scenarios[@]}" &
    lines+=("$tier tier: scenarios")
fi
# A line's name names its output files: no command text (slashes) in it.
for index in "${!beside[@]}"; do
    run "beside the $tier tier $((index + 1))" in_turn "${beside[$index]}" &
    lines+=("beside the $tier tier $((index + 1))")
done
wait
report "${lines[@]}"
