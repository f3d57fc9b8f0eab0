"""Run the exported regression tests on the installed Nova with pytest.

Glue for this environment, not part of the tests (which run in Nova's
tree unchanged): Nova's ConfFixture points ``[wsgi] api_paste_config``
at the source tree's ``etc/nova/api-paste.ini``; the nova wheel installs
it under ``<sys.prefix>/etc/nova``.  pytest needs
``tests.pytest_nova_compat`` to run tests on Nova's TestCase at all.  And
the fixture the exports' Nova change adds,
``nova/tests/fixtures/compute_fault.py``, is found where faultdriver ships
it (``faultdriver/export/novafixture/``), not copied into the installed
Nova.
"""

# Nova's functional package decides eventlet patching (from
# OS_NOVA_DISABLE_EVENTLET_PATCHING) when first imported.
import nova.tests.functional  # noqa: F401  isort:skip

import functools
import os
import sys

import nova.tests.fixtures
from nova.tests.fixtures import conf as conf_fixture

from faultdriver.export import novafixture

pytest_plugins = ['tests.pytest_nova_compat']

API_PASTE = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')


def _with_api_paste(set_up):
    @functools.wraps(set_up)
    def setUp(self):
        set_up(self)
        self.conf.set_default('api_paste_config', API_PASTE, group='wsgi')
    return setUp


def pytest_configure(config):
    nova.tests.fixtures.__path__.append(os.path.dirname(novafixture.PATH))
    conf_fixture.ConfFixture.setUp = _with_api_paste(
        conf_fixture.ConfFixture.setUp)
