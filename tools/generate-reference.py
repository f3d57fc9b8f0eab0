"""Write the generated parts of the reference pages (doc/source/*.rst:
actions, points, fixes, the rollback table, scenario keys, Nova
assumptions) from this repository's faultdriver and the installed Nova;
``--check`` only says which are behind (exit 1).
tests/unit/test_reference_pages.py checks them too."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# This repository's faultdriver, not an installed copy.
sys.path[:0] = [ROOT, os.path.join(ROOT, 'doc', 'source', '_ext')]

from faultdriver_docs import generate  # noqa: E402


def main(argv):
    behind = generate.stale()
    for path, text in sorted(behind.items()):
        if '--check' in argv:
            print('%s: behind its sources' % path)
        else:
            path.write_text(text, encoding='utf-8')
            print('%s: written' % path)
    return 1 if behind and '--check' in argv else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
