"""A reduced sweep, as a user runs it: ``faultdriver sweep live-migration
--points live_migration --hosts src --actions raise``.

Invariant: the sweep traces the workflow, runs one case per traced phase
of the step, and reports what breaks an invariant with a reproducer that
``scenario run`` replays.  What it finds here is a Nova bug
(doc/findings.rst F4): ``live_migration`` raising MigrationError on the
source before the transfer leaves the move's PCPU allocation on dest
(placement 4 PCPU, 2 pinned, after recovery and periodics).
"""

import json
import os
import subprocess
import sys


def faultdriver(*args, timeout=900):
    return subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main'] + list(args),
        capture_output=True, text=True, timeout=timeout,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))


def test_reduced_sweep_finds_the_leaked_allocation(tmp_path):
    done = faultdriver('sweep', 'live-migration', '--points',
                       'live_migration', '--hosts', 'src', '--actions',
                       'raise', '--results', str(tmp_path), '-f', 'json')
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert {(c['point'], c['host'], c['phase'], c['action'])
            for c in doc['cases']} == {
        ('live_migration', 'src', 'before', 'raise'),
        ('live_migration', 'src', 'after', 'raise')}
    assert not any(c['internal_error'] for c in doc['cases'])
    found = {(f['invariant'], f['phase']): f for f in doc['findings']}
    finding = found[('accounting-matches-placement', 'before')]
    assert finding['actual']['dest'] == '2 pinned / 4 PCPU'

    # Resuming the same results directory runs nothing again.
    again = faultdriver('sweep', 'live-migration', '--points',
                        'live_migration', '--hosts', 'src', '--actions',
                        'raise', '--results', str(tmp_path), '-f', 'json')
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)['cases'] == doc['cases']

    replay = faultdriver('scenario', 'run', finding['scenario'], '-f',
                         'json')
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert json.loads(replay.stdout)['verdicts'] == {
        'stock': 'bug reproduced'}
