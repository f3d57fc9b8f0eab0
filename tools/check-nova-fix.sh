#!/bin/bash
# Check a candidate fix of Nova against the exported regression tests:
#
#   tools/check-nova-fix.sh PATCH... [-- PYTEST ARGS]
#
# e.g. tools/check-nova-fix.sh nova-fixes/f6.patch -- -k post_live_migration
#
# Runs, on Nova with the patches applied (faultdriver.novaundertest: a
# private copy first on PYTHONPATH), the shipped stock forms
# (nova-regressions/test_*.py, which assert the bug: each should now FAIL)
# and the fixed forms (faultdriver export --fixed, written to a temporary
# folder: each should PASS).  Exit 0 when every selected stock form failed
# and every fixed form passed; a form that errors (it could not run: the
# changed Nova does not import, a fixture broke) confirms nothing.  Concurrency mode: OS_NOVA_DISABLE_EVENTLET_
# PATCHING (default True, threading).  PYTHON: the interpreter of an
# environment with faultdriver and Nova's test requirements (tox -e py3's).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
PATCHES=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    PATCHES+=("$(realpath "$1")"); shift
done
[ "${1:-}" = -- ] && shift
if [ ${#PATCHES[@]} -eq 0 ]; then
    echo "usage: $0 PATCH... [-- PYTEST ARGS]" >&2; exit 2
fi
NUT=$("$PYTHON" -W ignore -c 'import sys
from faultdriver import novaundertest
print(novaundertest.prepare(sys.argv[1:]).root)' "${PATCHES[@]}") || exit 2
FIXED=$(mktemp -d)
trap 'rm -rf "$FIXED"' EXIT
PYTHON=$PYTHON bash "$ROOT/tools/export-nova-regressions.sh" --fixed \
    "$FIXED" >/dev/null || exit 2
cp "$ROOT/nova-regressions/conftest.py" "$FIXED/"
export OS_NOVA_DISABLE_EVENTLET_PATCHING=${OS_NOVA_DISABLE_EVENTLET_PATCHING:-True}
cd "$ROOT"
run() {
    PYTHONPATH="$NUT:$ROOT" "$PYTHON" -m pytest -q -p no:cacheprovider \
        -W ignore -rA "$@" 2>&1 | grep -E '^(PASSED|FAILED|ERROR) |^[0-9]+ (passed|failed)'
}
echo "== stock forms on the changed Nova (each should FAIL: the bug is gone)"
stock=$(run nova-regressions "$@")
echo "$stock"
echo "== fixed forms on the changed Nova (each should PASS)"
fixed=$(run "$FIXED" "$@")
echo "$fixed"
if ! grep -qE '^(PASSED|ERROR) ' <<<"$stock" && grep -q '^FAILED ' <<<"$stock" && \
        grep -q '^PASSED ' <<<"$fixed" && ! grep -qE '^(FAILED|ERROR) ' <<<"$fixed"; then
    echo "FIX CONFIRMED"
    exit 0
fi
echo "FIX NOT CONFIRMED"
exit 1
