"""Fixtures the control-socket tests share."""

import shutil
import tempfile

import pytest

from faultdriver import engine as engine_module
from faultdriver import journal as journal_module
from tests.unit import fakes


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
