"""Run the exported regression tests on the installed Nova with pytest.

Glue for this environment, not part of the tests (which run in Nova's
tree unchanged): Nova's ConfFixture points ``[wsgi] api_paste_config``
at the source tree's ``etc/nova/api-paste.ini``; the nova wheel installs
it under ``<sys.prefix>/etc/nova``.  And pytest needs
``tests.pytest_nova_compat`` to run tests on Nova's TestCase at all.
"""

# Nova's functional package decides eventlet patching (from
# OS_NOVA_DISABLE_EVENTLET_PATCHING) when first imported.
import nova.tests.functional  # noqa: F401  isort:skip

import functools
import os
import sys

from nova.tests.fixtures import conf as conf_fixture

pytest_plugins = ['tests.pytest_nova_compat']

API_PASTE = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')


def _with_api_paste(set_up):
    @functools.wraps(set_up)
    def setUp(self):
        set_up(self)
        self.conf.set_default('api_paste_config', API_PASTE, group='wsgi')
    return setUp


def pytest_configure(config):
    conf_fixture.ConfFixture.setUp = _with_api_paste(
        conf_fixture.ConfFixture.setUp)
