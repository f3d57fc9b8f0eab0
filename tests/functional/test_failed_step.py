"""A run whose step failed before it reached the scenario's rule: the
expectations' follow-up moves run with the rule disarmed.

Seen on a real devstack: a ``1*shutdown`` rule left armed by a failed
step fired inside moves-again and stopped the source compute, which the
next run then found down.  Invariant: the rule never fires (the journal
shows no crash) and moves-again moves the server away and back; the
verdict is still the failed step.
"""

import json
import os

from tests.functional.test_bundled_scenarios import mode
from tests.functional.test_scenario_cli import run_cli

SCENARIO = os.path.join(os.path.dirname(__file__), 'data',
                        'failed-step-leaves-a-rule.yaml')


def test_a_failed_step_disarms_the_scenario_s_rules():
    done = run_cli('scenario', 'run', SCENARIO, '--mode', mode(),
                   '-f', 'json')
    assert done.returncode == 1, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result['verdicts'] == {'stock': 'step failed'}
    report = result['variants']['stock']
    assert [e['status'] for e in report['timeline']] == ['ok', 'failed']
    met = {e['expectation']: (e['met'], e['actual'])
           for e in report['expectations']}
    assert met['every ACTIVE server live-migrates away and back'] == (
        True, 'all moved')
    assert not [f for f in report['state']['faults']
                if f.get('action') == 'crash']
