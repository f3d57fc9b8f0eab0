"""A reduced sweep of the shelve workflow, as a user runs it
(``faultdriver sweep shelve-unshelve --points spawn --actions raise``).

Invariant: a fault that makes the unshelve's spawn fail ends as Nova's
own rollback of a failed unshelve promises (``_unshelve_instance``:
SHELVED_OFFLOADED on no host, no task state), so on stock Nova neither
``servers-settled`` nor ``outcome-after-failure`` breaks: the sweep
reports nothing.  Before the rollback table had its shelve rows both
cases broke ``servers-settled`` (``s1 SHELVED_OFFLOADED/None``).
"""

import json
import os
import subprocess
import sys

import yaml

from faultdriver.scenario import rollback


def test_a_failed_unshelve_rolled_back_by_design_is_no_finding(tmp_path):
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
         'shelve-unshelve', '--points', 'spawn', '--actions', 'raise',
         '--workers', '1', '--results', str(tmp_path), '-f', 'json'],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert {(c['point'], c['host'], c['phase'], c['verdict'])
            for c in doc['cases']} == {
        ('spawn', 'src', 'before', 'ok'), ('spawn', 'src', 'after', 'ok')}
    assert doc['findings'] == [] and doc['causes'] == []
    # The fault fired and the unshelve failed: the server is offloaded
    # (the case's log says what servers-settled took, and why).
    for case in doc['cases']:
        with open(case['scenario'], encoding='utf-8') as stream:
            [settled] = [e['servers-settled']
                         for e in yaml.safe_load(stream)['expectations']
                         if 'servers-settled' in e]
        assert settled['failure']['point'] == 'spawn'
        log = os.path.join(str(tmp_path), 'logs', os.path.basename(
            case['scenario'])[:-len('.yaml')] + '.log')
        with open(log, encoding='utf-8') as stream:
            text = stream.read()
        assert "s1 SHELVED_OFFLOADED as Nova's rollback of spawn." in text
        row = rollback.promise('shelve', 'spawn', 'source',
                               case['phase'], 'raise')
        assert row.ends == 'shelved-offloaded'
        assert 'rolled back as Nova promises (%s)' % row.nova in text
