"""Fixtures the control-socket tests share, and the suite's one
concurrency mode.

The unit tests run in one process.  Importing Nova's functional test
package (``nova.tests.fixtures``, which some tests need for fakelibvirt
or the embedded harness) monkey-patches the process with eventlet unless
``OS_NOVA_DISABLE_EVENTLET_PATCHING`` says not to; every test after it
would then run green, with modules imported before the patch still
blocking for real (a stand-in's HTTP server thread and its client hung
each other that way), so a test's outcome depended on which tests ran
before it.  The suite runs on native threads throughout, as Nova 34's
services do (the functional suites run both modes).
"""

import os
import shutil
import tempfile

from nova import monkey_patch
import pytest

from faultdriver import engine as engine_module
from faultdriver import journal as journal_module
from tests.unit import fakes

# Nova settles the mode once, before anything imports eventlet (futurist
# does, with nova.context), as its services do at start.
os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True')
monkey_patch.patch()


@pytest.fixture
def sock_dir():
    """A short private directory: AF_UNIX paths are limited to 107 bytes
    and pytest's tmp_path can be longer."""
    path = tempfile.mkdtemp(prefix='fdc', dir='/tmp')
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def engine():
    """An enabled engine of host h1 with the test actions, no rules."""
    engine = engine_module.Engine('h1', fakes.ACTIONS, [], enabled=True,
                                  journal=journal_module.Journal())
    yield engine
    engine.close()
