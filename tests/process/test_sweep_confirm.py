"""``faultdriver sweep --confirm process``: the seed a reduced embedded
sweep finds is replayed on real processes (MariaDB, RabbitMQ, nova
services, nova-compute killed for real) and marked confirmed there.

Invariant: a finding is ``confirmed`` only when its own reproducer,
replayed on the process tier, shows its own invariant broken again.
"""

import json
import os
import subprocess
import sys


def test_the_seed_found_by_a_sweep_is_confirmed_on_processes(tmp_path):
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
         'live-migration', '--points', 'pre_live_migration', '--hosts',
         'dest', '--actions', 'crash', '--confirm', 'process', '--mode',
         'threading', '--results', str(tmp_path), '-f', 'json'],
        capture_output=True, text=True, timeout=1200,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    seeds = [f for f in doc['findings']
             if f['known'] == 'F1']
    assert {f['phase'] for f in seeds} == {'before', 'after'}
    for finding in seeds:
        assert finding['invariant'] == 'periodics-clean'
        assert finding['confirmed'] is True, finding
        assert finding['confirmed_on'] == 'process'
