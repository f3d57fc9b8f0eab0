#!/bin/bash
# Write nova-regressions/test_*.py again from nova-regressions/exports.txt
# (faultdriver export on each listed scenario).  With --fixed DIR: write
# the fixed forms (they assert the correct state) to DIR instead.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FOLDER=$ROOT/nova-regressions
OUT=$FOLDER
FIXED=False
if [ "${1:-}" = --fixed ]; then
    FIXED=True
    OUT=${2:?--fixed DIR}
fi
mkdir -p "$OUT"
PYTHON=${PYTHON:-python3}
"$PYTHON" -W ignore - "$FOLDER" "$OUT" "$FIXED" <<'PY'
import os
import sys

from faultdriver.export import shipped

folder, out, fixed = sys.argv[1], sys.argv[2], sys.argv[3] == 'True'
for name, text in shipped.written(folder, fixed).items():
    with open(os.path.join(out, name), 'w', encoding='utf-8') as stream:
        stream.write(text)
    print(os.path.join(out, name))
PY
