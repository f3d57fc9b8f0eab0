"""The shutdown action in real nova-compute processes: a real SIGTERM from
the process to itself, oslo.service's graceful shutdown, the process
exits; ``scenario run --backend process`` as a user runs it.

Invariants: the bundled graceful-shutdown scenarios end as written on
this tier (the stop waited for the migration: ok; the migration outlived
the wait: the bug reproduced), the journal has the fired rule and the
``signalled`` shutdown entry, and the report carries what the real stop
logged (nova.service's lines from the compute's own log).
"""

import json
import os
import subprocess
import sys

import pytest

MODE = ('threading' if os.environ.get('OS_NOVA_DISABLE_EVENTLET_PATCHING',
                                      'True').lower() == 'true'
        else 'eventlet')


def run(name):
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         name, '--backend', 'process', '--mode', MODE, '-f', 'json'],
        capture_output=True, text=True, timeout=900)
    return done, json.loads(done.stdout) if done.stdout else None


@pytest.mark.parametrize('name, verdict, waited', [
    ('graceful-shutdown-live-migration', 'ok',
     'Graceful shutdown: all in-progress tasks finished. completed tasks: '
     '1, failed tasks: 0'),
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
