"""Every bundled scenario passes ``faultdriver scenario run``, as a user
runs it, in the concurrency mode of the test run.

Invariant: exit 0, every variant's verdict is ``ok`` or (for a variant
written as ``expect: bug``) ``bug reproduced``, every step ran and every
expectation was met.  The stale-context seed A/B has its own, closer test
(test_scenario_cli), and so have the shelve and rebuild workflows
(test_server_operations: their operations happened).
"""

import json
import os
import subprocess
import sys

import pytest

from faultdriver.scenario import model

SEED = 'stale-error-migration-context'
#: Bundled scenarios another test runs with closer checks.
CLOSER = {SEED, 'shelve-unshelve', 'rebuild'}


def mode():
    return ('threading' if os.environ.get(
        'OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True') == 'True'
        else 'eventlet')


def embedded_scenarios():
    """Bundled scenarios for the embedded Nova (not the libvirt-only
    ones, which tests/libvirt runs)."""
    return sorted(name for name in set(model.bundled()) - CLOSER
                  if 'embedded' in model.load(name).backends)


@pytest.mark.parametrize('name', embedded_scenarios())
def test_bundled_scenario_passes(name):
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         name, '--mode', mode(), '-f', 'json'],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    scenario = model.load(name)
    assert set(result['verdicts']) == set(scenario.variants)
    for variant, report in result['variants'].items():
        expected = ('bug reproduced' if scenario.expects_bug(variant)
                    else 'ok')
        assert result['verdicts'][variant] == expected
        assert [e['status'] for e in report['timeline']] == (
            ['ok'] * len(scenario.steps))
        assert report['expectations'] and all(
            e['met'] for e in report['expectations'])
