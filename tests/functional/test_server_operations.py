"""The server operation step kinds and the bundled shelve and rebuild
workflows run on Nova, as a user runs them, in the concurrency mode of
the test run.

Invariant: each operation reaches the end state Nova's API defines for
it (a ``wait-server`` step after each fails the run otherwise), the
bundled ``shelve-unshelve`` workflow passes through SHELVED and
SHELVED_OFFLOADED (its ``settle`` steps say where each ended), the
``rebuild`` workflow's server was rebuilt (its instance action's compute
event succeeded), and every invariant of the runs holds.  The bundled
workflows' plain pass/fail is test_bundled_scenarios'; this test checks
that their operations really happened.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from faultdriver.scenario import serverops

DATA = pathlib.Path(__file__).parent / 'data'


def mode():
    return ('threading' if os.environ.get(
        'OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True') == 'True'
        else 'eventlet')


def run(name):
    """``scenario run NAME -f json``: its stock report (exit 0 asserted)."""
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         name, '--mode', mode(), '-f', 'json'],
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result['verdicts'] == {'stock': 'ok'}
    report = result['variants']['stock']
    assert all(e['status'] == 'ok' for e in report['timeline'])
    assert all(e['met'] for e in report['expectations'])
    return report


def details(report, kind):
    return [e['detail'] for e in report['timeline'] if e['kind'] == kind]


def test_every_operation_reaches_its_end():
    report = run(str(DATA / 'server-operations.yaml'))
    kinds = [e['kind'] for e in report['timeline']]
    assert kinds[1:-1:2] == ['stop-server', 'start-server', 'reboot-server',
                             'rebuild', 'shelve', 'unshelve']
    # Every kind is run here or (the offload) by the shelve workflow.
    assert set(kinds[1:-1:2]) | {'shelve-offload'} == {
        kind.name for kind in serverops.KINDS}


@pytest.mark.parametrize('name, settled', [
    ('shelve-unshelve', ['SHELVED on src, shelve: Success',
                         'SHELVED_OFFLOADED on None, shelveOffload: Success',
                         'unshelve: Success']),
    ('rebuild', ['ACTIVE on src, rebuild: Success']),
])
def test_the_workflows_operations_happen(name, settled):
    report = run(name)
    seen = details(report, 'settle')
    assert len(seen) == len(settled)
    for detail, wanted in zip(seen, settled):
        assert wanted in detail.split('s2:')[0], seen
