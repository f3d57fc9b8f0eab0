"""The decide-resize step waits until the compute handled the decision,
not only until the migration is terminal.

On Nova with bug 1879878's pre-fix shape the confirm saves the migration
``confirmed`` first; the periodic in the window frees the old pinning,
the claim drop then fails, the instance goes ERROR and only then the
migration ``error``.  A delay after the periodic (before the tracker
lock) widens that gap to seconds: a step that stopped at the terminal
``confirmed`` let the checks see it (a loaded CI machine did, without
the delay, in a sweep).

Invariant: the checks after decide-resize see what the confirm ended
with: the server ERROR, its migration ``error``.
"""

import json
import os
import subprocess
import sys

import yaml

from faultdriver.scenario import model

SHAPE = os.path.join(os.path.dirname(model.bundled()['bug-1879878']),
                     'nova-changes', 'bug-1879878-pre-fix-shape.diff')
WINDOW = 'tracker.drop_move_claim_at_source.unlocked'


def mode():
    return ('threading' if os.environ.get(
        'OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True') == 'True'
        else 'eventlet')


def test_decide_resize_waits_for_the_confirm_to_end(tmp_path):
    scenario = {
        'name': 'decide-resize-waits',
        'description': 'The confirm fails seconds after the migration '
                       'was saved confirmed.',
        'topology': {'hosts': ['src', 'dest'], 'pinned': True},
        'rules': {'src': [WINDOW + ': 1*periodic',
                          WINDOW + ': 1*delay(5)']},
        'variants': {'pre-fix': {
            'description': 'Nova 34 with the pre-fix shape of 1879878.',
            'nova-patches': [SHAPE], 'expect': 'bug'}},
        'expectations': [
            {'migrations': {'server': 's1', 'statuses': ['error']}},
            {'server': {'server': 's1', 'status': 'ERROR', 'host': 'dest'}},
        ],
        'steps': [
            {'boot': {'server': 's1', 'host': 'src'}},
            {'migrate': {'server': 's1'}},
            {'wait-server': {'server': 's1', 'status': 'VERIFY_RESIZE',
                             'host': 'dest'}},
            {'decide-resize': {'decision': 'confirm'}},
        ],
    }
    path = tmp_path / 'decide-resize-waits.yaml'
    path.write_text(yaml.safe_dump(scenario))
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         str(path), '--mode', mode(), '-f', 'json'],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    variant = result['variants']['pre-fix']
    assert result['verdicts'] == {'pre-fix': 'bug reproduced'}, [
        (e['expectation'], e['actual']) for e in variant['expectations']]
