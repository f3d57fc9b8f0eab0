#!/bin/bash
# The cloud tier's CI line (issue 42): `faultdriver stack up` keeps a
# process-tier stack running as a cloud (real Keystone, one key-only sshd
# per compute), and a user who is not root and cannot read the stack's
# directory runs through `--cloud` what a user with a cloud would: `cloud
# check`, then the seed scenario (after the standing-stack tests, which
# need the machine's one standing stack).  It runs beside the process tier's
# lines (tests/tier-runs.sh process ...): the stack mostly waits.
#
#   tests/cloud-run.sh [--grant-traverse] [--reduced-sweep]
#                      [--process-run FILE] [SCENARIO-RUN-ARGS...]
#
# --process-run FILE: the seed's run document on the process tier comes
# from another line (tests/tier-runs.sh process --seed-json FILE, the
# same command): wait for it (at most 20 minutes) instead of running it
# here again.
# --reduced-sweep: one case of the 4-case sweep on each tier (CI's time).
# --grant-traverse (CI's disposable machine only): where the runner user
# cannot reach this environment's interpreter (a venv under .tox, made
# 0700 by tox, over a Python under /root), give "others" search (x, not
# read) permission on each directory in the way, each change printed.
# Without it such a run falls back to root and says the non-root
# property is not shown.  Exit status: the first failure's.
set -u
cd "$(dirname "$0")/.."
fd=$(command -v faultdriver)
user=${FAULTDRIVER_CLOUD_USER:-faultdriver-ci}
grant=
reduced=
process_run=
while [ $# -gt 0 ]; do
    case "$1" in
    --grant-traverse) grant=1 ;;
    --reduced-sweep) reduced=1 ;;
    --process-run) process_run=$2; shift ;;
    *) break ;;
    esac
    shift
done

if ! id -u "$user" > /dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$user" || exit 1
fi
# The standing-stack tests bring up and end a standing stack of their
# own, and a machine runs one standing stack at a time: they run here,
# before this line's stack, not in the process tier's tests line beside
# it, where they met this line's stack once this line grew longer.
echo "== the standing-stack tests (tests/process/test_stack_up.py)"
env OS_NOVA_DISABLE_EVENTLET_PATCHING=False python -m pytest -q \
    -p no:cacheprovider tests/process/test_stack_up.py
stack_tests=$?
[ "$stack_tests" -eq 0 ] ||
    echo "== FAILED (exit $stack_tests): tests/process/test_stack_up.py"
out=$(mktemp -d /tmp/faultdriver-cloud.XXXXXX)
chmod 0755 "$out"
echo "== stack up (as $(id -un)), client files in $out for $user"
"$fd" stack up --out "$out" --name ci --owner "$user" || exit $?
trap '"$fd" stack down; rm -rf "$out"' EXIT

# The runner: the non-root user, unless it cannot reach this
# environment's faultdriver (a checkout under a directory only root can
# enter); then root, said loudly: that run does not show the non-root
# property.
python=$(readlink -f "$(dirname "$fd")/python")
# Each directory from / to $1 that others cannot search.
unsearchable() {
    local path=$1 dir=
    while [ "$path" != / ]; do
        dir="$path $dir"
        path=$(dirname "$path")
    done
    for path in $dir; do
        [ -d "$path" ] || continue
        [ "$(( 0$(stat -c %a "$path") & 01 ))" -ne 0 ] || echo "$path"
    done
}
if [ -n "$grant" ]; then
    for path in $(unsearchable "$(dirname "$python")") \
                $(unsearchable "$(dirname "$fd")"); do
        echo "== granting others search (o+x) on $path"
        chmod o+x "$path"
    done
fi
as_user=(setpriv --reuid="$user" --regid="$user" --init-groups
         env HOME="$(getent passwd "$user" | cut -d: -f6)" USER="$user")
if "${as_user[@]}" "$fd" --version > /dev/null 2>&1; then
    runner=("${as_user[@]}")
    echo "== runner: $user (uid $(id -u "$user"))"
    # The supervisor's directory and the stack's own (where a compute's
    # control socket lives): neither readable by the runner.
    socket=$(sed -n 's/^ *socket: *//p' "$out/profile.yaml" | head -n 1)
    for dir in "$HOME/.local/state/faultdriver/stack" \
               "$(dirname "$(dirname "$socket")")"; do
        if "${as_user[@]}" ls "$dir" > /dev/null 2>&1; then
            echo "== FAILED: $user can read the stack's directory $dir"
            exit 1
        fi
        echo "== $user cannot read $dir"
    done
else
    runner=(env)
    echo "== runner: root -- $user cannot run $fd (its path is not" \
         "reachable by other users); the non-root property is NOT shown"
fi

status=$stack_tests
failed() {
    echo "== FAILED: $*"
    [ "$status" -ne 0 ] || status=1
}
as_runner() {
    (cd "$out" && "${runner[@]}" OS_CLIENT_CONFIG_FILE="$out/clouds.yaml" \
        "$@")
}
# step [>FILE] COMMAND...: COMMAND as the runner in $out (stdout to FILE).
step() {
    local to= rc
    case "$1" in '>'*) to=${1#>}; shift ;; esac
    echo "== $*"
    # Not "> /dev/stdout": that opens this line's log file again,
    # truncating it.
    if [ -n "$to" ]; then
        as_runner "$@" > "$to"
    else
        as_runner "$@"
    fi
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "== FAILED (exit $rc): $*"
        [ "$status" -ne 0 ] || status=$rc
    fi
    return "$rc"
}
cloud=(--cloud ci --profile "$out/profile.yaml")
step "$fd" cloud check ci --profile "$out/profile.yaml"

# `cloud init` without --host: the computes the compute API lists
# (through Keystone), each reached over SSH: the profile it writes maps
# src and dest as `stack up`'s own does.
stack_dir=$(dirname "$(dirname "$(sed -n 's/^ *socket: *//p' \
    "$out/profile.yaml" | head -n 1)")")
if step "$fd" cloud init listed --os-cloud ci-admin \
    --clouds-yaml "$out/clouds.yaml" --ssh-config "$out/ssh_config" \
    --ssh 'ci-{host}' --manager stack --unit '{host}' \
    --socket "$stack_dir/compute-{host}/control.sock" \
    --start-rules "$stack_dir/compute-{host}/start-rules.json" \
    --compute-log "$stack_dir/logs/nova-compute-{host}.log" \
    --fault-injection-allowed --profile "$out/listed.yaml"; then
    "$python" - "$out/profile.yaml" "$out/listed.yaml" <<'EOF' ||
import sys, yaml
stack, listed = (yaml.safe_load(open(path)) for path in sys.argv[1:])
sys.exit(0 if stack['hosts'] == listed['hosts'] else
         'hosts differ: %r != %r' % (stack['hosts'], listed['hosts']))
EOF
        failed "cloud init's profile is not stack up's"
fi

# The seed's A/B through --cloud, and the same on the process tier (its
# own in-run stack, as root: that tier needs it), their run documents
# equal after masking the fields faultdriver/cloud/compare.py lists,
# each with why.
step ">$out/cloud.json" "$fd" scenario run stale-error-migration-context \
    "${cloud[@]}" --mode threading -f json "$@"
if [ -z "$process_run" ]; then
    echo "== $fd scenario run stale-error-migration-context --backend process"
    "$fd" scenario run stale-error-migration-context --backend process \
        --mode threading -f json > "$out/process.json" ||
        failed "(exit $?) the seed on the process tier"
else
    # Renamed into place when that run ended (its verdict is that
    # line's to report): a missing file is a run that did not happen.
    echo "== the seed's run on the process tier: $process_run (another line)"
    waited=0
    until [ -e "$process_run" ] || [ "$waited" -ge 1200 ]; do
        sleep 1
        waited=$((waited + 1))
    done
    cp "$process_run" "$out/process.json" ||
        failed "no run document $process_run after ${waited}s"
fi
[ -z "${FAULTDRIVER_CLOUD_KEEP:-}" ] ||
    cp "$out/cloud.json" "$out/process.json" "$FAULTDRIVER_CLOUD_KEEP"
echo "== the two runs, masked, field by field"
"$python" -m faultdriver.cloud.compare "$out/process.json" \
    "$out/cloud.json" || failed "the cloud's run differs from the process tier's"

# A runner killed mid-run (kill -9 of its process group) after the fix
# variant restarted both computes with the run's fixes and the fault
# crashed dest: `cloud check` names the dirty host, `cloud restore`
# undoes what the run left (its fixes, the crashed compute, its server
# and flavor), and `cloud check` then finds clean hosts.
kill_mid_run() {
    local log=$out/killed.log pid waited=0
    echo "== kill -9 of a run on the cloud after its step 4"
    : > "$log"
    (cd "$out" && exec setsid "${runner[@]}" \
        OS_CLIENT_CONFIG_FILE="$out/clouds.yaml" "$fd" scenario run \
        stale-error-migration-context "${cloud[@]}" --variant fix \
        --mode threading -f value) > "$log" 2>&1 &
    pid=$!
    # Step 4 waits until the crash left the migration 'error'; step 5
    # then waits an RPC timeout: nothing changes on the hosts there.
    until grep -q '^\[fix\]  4/22 .* ok' "$log"; do
        if ! kill -0 "$pid" 2> /dev/null || [ "$waited" -ge 600 ]; then
            cat "$log"
            failed "the run ended or took 300 s before its step 4"
            kill -9 -- "-$pid" 2> /dev/null
            return 1
        fi
        sleep 0.5
        waited=$((waited + 1))
    done
    if [ "$(ps -o pgid= -p "$pid" | tr -d ' ')" != "$pid" ]; then
        failed "the run (pid $pid) does not lead its process group"
        kill -9 "$pid"
        return 1
    fi
    kill -9 -- "-$pid"
    wait "$pid" 2> /dev/null
    cat "$log"
    echo "== killed (pid $pid and its group)"
    local said rc
    echo "== cloud check ci (expected: exit 2, src dirty)"
    said=$(as_runner "$fd" cloud check ci --profile "$out/profile.yaml" 2>&1)
    rc=$?
    echo "$said"
    if [ "$rc" -ne 2 ] || ! grep -q \
            "ci-compute1: dirty host (.*fixes stale_migration_context" \
            <<< "$said"; then
        failed "cloud check after the kill: exit $rc, expected 2 naming" \
            "ci-compute1 and its run's fixes"
    fi
    echo "== cloud restore ci"
    said=$(as_runner "$fd" cloud restore ci --profile "$out/profile.yaml" \
        2>&1) || failed "(exit $?) cloud restore"
    echo "$said"
    grep -q "ci-compute1: started again without the run's fixes" \
        <<< "$said" || failed "cloud restore did not restart src"
    grep -q "deleted server" <<< "$said" ||
        failed "cloud restore deleted no server"
    step "$fd" cloud check ci --profile "$out/profile.yaml"
}
# The 4-case sweep (issue 42's done-when): crash and raise before
# pre_live_migration on dest and before live_migration on src, on the
# cloud (cases one after another, the cloud restored between them) and
# on processes (a stack per case); the per-case verdicts must be equal.
# About 10 minutes here (4.5 to 5.5 on each tier: a trace, 4 cases):
# CI's line runs one of the four (--reduced-sweep: crash before
# pre_live_migration on dest, the seed's step), tox -e cloud all four.
if [ -n "$reduced" ]; then
    sweep=(sweep live-migration --points pre_live_migration.before
           --actions crash)
else
    sweep=(sweep live-migration
           --points pre_live_migration.before,live_migration.before
           --actions crash,raise)
fi
sweep+=(--mode threading -f json)
step ">$out/sweep-cloud.json" "$fd" "${sweep[@]}" "${cloud[@]}"
echo "== $fd ${sweep[*]} --backend process"
"$fd" "${sweep[@]}" --backend process > "$out/sweep-process.json" ||
    failed "(exit $?) the 4-case sweep on the process tier"
echo "== the two sweeps, case by case"
"$python" -m faultdriver.cloud.compare "$out/sweep-process.json" \
    "$out/sweep-cloud.json" ||
    failed "the cloud's sweep verdicts differ from the process tier's"

kill_mid_run
exit "$status"
