"""The Nova test fixture proposed with faultdriver's exports.

``compute_fault.py`` is Nova code, not faultdriver's: an exported test
imports it as ``nova.tests.fixtures.compute_fault`` and the export's
Nova change adds it there (``faultdriver export --fixture FILE`` writes
it; nova-regressions/conftest.py and tools/run-export-in-nova-sdist.sh
put it in place).  It lives in this package so the exporter ships the
text it is linted and unit-tested as (tests/unit/test_compute_fault.py).
"""

import os

#: Where the fixture lands in Nova's tree.
NOVA_PATH = 'nova/tests/fixtures/compute_fault.py'
#: How an exported module imports it (the exporter writes this line).
IMPORT = 'from nova.tests.fixtures import compute_fault'
#: Its file here.
PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    'compute_fault.py')


def used_by(module_text):
    """Whether an exported module imports the fixture."""
    return IMPORT in module_text.splitlines()


def text():
    """The fixture module's source, as it lands in Nova's tree."""
    with open(PATH, encoding='utf-8') as stream:
        return stream.read()
