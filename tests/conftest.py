"""What every suite shares: the Nova-compatibility plugin, and the
control-socket fixtures the unit tests and the process tier's cloud
transport tests use."""

import shutil
import tempfile

import pytest

pytest_plugins = ['tests.pytest_nova_compat']


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
    # Imported here: the functional suites load this file too.
    from faultdriver import engine as engine_module
    from faultdriver import journal as journal_module
    from tests.unit import fakes
    engine = engine_module.Engine('h1', fakes.ACTIONS, [], enabled=True,
                                  journal=journal_module.Journal())
    yield engine
    engine.close()
