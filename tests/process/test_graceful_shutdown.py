"""The shutdown action in real nova-compute processes: a real SIGTERM from
the process to itself, oslo.service's graceful shutdown, the process
exits; ``scenario run --backend process`` as a user runs it.

Invariants: the bundled scenario whose migration outlives the manager's
wait ends as written on this tier (F11 reproduced), the journal has the
fired rule and the ``signalled`` shutdown entry, and the report carries
what the real stop logged (nova.service's and nova.manager's lines from
the compute's own log).  The stop the manager waits out
(``graceful-shutdown-live-migration``, the same SIGTERM path) is not
repeated here for CI's time budget: the embedded tier runs it in CI and
``scenario run graceful-shutdown-live-migration --backend process`` runs
it here (ok, 2026-12-03, both modes).
"""

import json
import subprocess
import sys

import pytest

from tests import stacks

MODE = stacks.MODE


def run(name):
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         name, '--backend', 'process', '--mode', MODE, '-f', 'json'],
        capture_output=True, text=True, timeout=900)
    return done, json.loads(done.stdout) if done.stdout else None


@pytest.mark.parametrize('name, verdict, waited', [
    ('graceful-shutdown-outlived-live-migration', 'bug reproduced',
     'Graceful shutdown timed out with 1 tasks still in progress: '
     'live_migration'),
])
def test_a_real_sigterm_stops_nova_compute_gracefully(name, verdict, waited):
    done, result = run(name)
    assert done.returncode == 0, done.stderr[-3000:]
    assert result['verdicts'] == {'stock': verdict}
    report = result['variants']['stock']
    assert [(f['kind'], f.get('action'), f.get('outcome'))
            for f in report['state']['faults'] if f['host'] == 'src'] == [
        ('fault', 'shutdown', None), ('shutdown', None, 'signalled')]
    lines = '\n'.join(report['shutdown_log'])
    assert 'nova-compute service graceful shutdown finished.' in lines
    assert waited in lines
