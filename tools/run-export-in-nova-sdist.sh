#!/bin/bash
# Run one exported module as Nova runs its own regression tests: copied to
# nova/tests/functional/regressions/ of an unpacked Nova sdist (the
# installed Nova's version) and run there with `python -m unittest`, with
# nothing of this repository on the path.
#
#   tools/run-export-in-nova-sdist.sh MODULE.py [SDIST_DIR]
#
# SDIST_DIR: an unpacked sdist (nova-34.0.0/); without it the sdist is
# fetched with `pip download --no-deps --no-binary :all: nova==VERSION`
# into a temporary folder.  PYTHON: an interpreter with Nova's test
# requirements (tox -e py3's).  Concurrency mode:
# OS_NOVA_DISABLE_EVENTLET_PATCHING (default True, threading).  FIXTURE:
# the proposed nova/tests/fixtures/compute_fault.py a module imports
# (default: this repository's faultdriver/export/novafixture/).  Exit: the
# test's (0 when it passed), 2 on bad input.
set -uo pipefail
PYTHON=${PYTHON:-python3}
MODULE=${1:?usage: $0 MODULE.py [SDIST_DIR]}
case "$MODULE" in
    *.py) ;;
    *) echo "$0: $MODULE: expected an exported module (test_*.py)" >&2
       exit 2 ;;
esac
[ -f "$MODULE" ] || { echo "$0: $MODULE: no such file" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -n "${2:-}" ]; then
    [ -f "$2/nova/tests/functional/regressions/README.rst" ] || {
        echo "$0: $2: not an unpacked Nova sdist (no" \
             "nova/tests/functional/regressions/README.rst)" >&2; exit 2; }
    cp -a "$2" "$WORK/nova"
else
    VERSION=$("$PYTHON" -c 'import importlib.metadata as m
print(m.version("nova"))') || exit 2
    "$PYTHON" -m pip download -q --no-deps --no-binary :all: \
        "nova==$VERSION" -d "$WORK" || exit 2
    mkdir "$WORK/nova"
    tar -xzf "$WORK/nova-$VERSION.tar.gz" -C "$WORK/nova" \
        --strip-components=1 || exit 2
fi
NAME=$(basename "$MODULE" .py)
cp "$MODULE" "$WORK/nova/nova/tests/functional/regressions/$NAME.py"
# The fixture the export's Nova change adds (nova/tests/fixtures/
# compute_fault.py), where a module imports it.
if grep -q '^from nova.tests.fixtures import compute_fault$' "$MODULE"; then
    FIXTURE=${FIXTURE:-$(dirname "$0")/../faultdriver/export/novafixture/compute_fault.py}
    [ -f "$FIXTURE" ] || { echo "$0: $FIXTURE: no such file (FIXTURE:" \
        "the proposed compute_fault.py)" >&2; exit 2; }
    cp "$FIXTURE" "$WORK/nova/nova/tests/fixtures/compute_fault.py"
fi
cd "$WORK/nova" || exit 2
export OS_NOVA_DISABLE_EVENTLET_PATCHING=${OS_NOVA_DISABLE_EVENTLET_PATCHING:-True}
# -I: the sdist's tree (cwd, added back below) and the interpreter's
# site-packages only: no PYTHONPATH, no faultdriver checkout.
exec "$PYTHON" -I -c 'import sys, unittest
sys.path.insert(0, "")
unittest.main(module=None, argv=["unittest", "-v", sys.argv[1]])' \
    "nova.tests.functional.regressions.$NAME"
