#!/bin/bash
# The cloud tier's CI line (issue 42): `faultdriver stack up` keeps a
# process-tier stack running as a cloud (real Keystone, one key-only sshd
# per compute), and a user who is not root and cannot read the stack's
# directory runs through `--cloud` what a user with a cloud would: `cloud
# check`, then the seed scenario.  It runs beside the process tier's
# lines (tests/tier-runs.sh process ...): the stack mostly waits.
#
#   tests/cloud-run.sh [--grant-traverse] [SCENARIO-RUN-ARGS...]
#
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
if [ "${1:-}" = --grant-traverse ]; then
    grant=1
    shift
fi

if ! id -u "$user" > /dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$user" || exit 1
fi
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

status=0
step() {
    echo "== $*"
    (cd "$out" && "${runner[@]}" OS_CLIENT_CONFIG_FILE="$out/clouds.yaml" \
        "$@")
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "== FAILED (exit $rc): $*"
        [ "$status" -ne 0 ] || status=$rc
    fi
}
step "$fd" cloud check ci --profile "$out/profile.yaml"
step "$fd" scenario run stale-error-migration-context --cloud ci \
    --profile "$out/profile.yaml" --mode threading --no-html "$@"
exit "$status"
