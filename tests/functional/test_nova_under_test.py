"""Nova under test: a Nova change (a unified diff written for this test,
which reverts a stale ``error`` migration's context right after the
periodic applies it) run against a scenario and a sweep, as a Nova
developer checks a fix.

Invariant: every process of the run imports the changed Nova and says
so in its report; the change's effect is what Nova with it does: the
stale-context seed (doc/findings.rst F1) is not reproduced, and the
A/B sweep of the seed's step reports F1's finding removed, none added,
no regression (that sweep: tests/functional/test_sweep.py).
"""

import json
import os
import shutil
import subprocess
import sys

import yaml

from faultdriver.scenario import model

DIFF = os.path.join(os.path.dirname(__file__), 'data',
                    'revert-stale-error-context.diff')


def faultdriver(*args, timeout=900):
    return subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main'] + list(args),
        capture_output=True, text=True, timeout=timeout,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))


def mode():
    return ('threading' if os.environ.get(
        'OS_NOVA_DISABLE_EVENTLET_PATCHING', 'True') == 'True'
        else 'eventlet')


def test_a_variant_runs_on_the_nova_its_scenario_names(tmp_path):
    """Per-variant ``nova-patches`` (relative to the scenario file):
    stock and changed Nova side by side in one run."""
    seed = model.load('stale-error-migration-context')
    data = yaml.safe_load(open(seed.path))
    stock = data['variants']['stock']
    data['variants'] = {'stock': stock, 'changed': dict(
        stock, description='stock tracker, Nova with the test change',
        **{'nova-patches': ['data/change.diff']})}
    (tmp_path / 'data').mkdir()
    shutil.copy(DIFF, tmp_path / 'data' / 'change.diff')
    path = tmp_path / 'seed-on-changed-nova.yaml'
    path.write_text(yaml.safe_dump(dict(data, name='seed-on-changed-nova')))
    done = faultdriver('scenario', 'run', str(path), '--mode', mode(),
                       '-f', 'json')
    # The changed variant no longer shows the bug it expects: exit 1.
    assert done.returncode == 1, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result['verdicts'] == {'stock': 'bug reproduced',
                                  'changed': 'bug not reproduced'}
    changed = result['variants']['changed']
    [patch] = changed['nova']['patches']
    assert patch['file'] == 'change.diff'
    assert changed['nova']['base'].startswith('nova 34.')
    assert result['variants']['stock']['nova']['patches'] == []
    errors = [e for e in changed['expectations']
              if e['expectation'] == 'periodic errors on dest >= 1']
    assert errors[0]['actual'] == 0
    assert 'Nova under test: nova 34' in faultdriver(
        'scenario', 'report', _saved(tmp_path, done.stdout)).stdout


def _saved(folder, text):
    path = folder / 'run.json'
    path.write_text(text)
    return str(path)


def test_a_change_to_code_faultdriver_pins_disables_only_that_feature():
    """A diff that fixes F1 in the periodic's own loop condition (the
    code ``tracker.apply_migration_context`` and the
    ``stale_migration_context`` override rely on): the run goes on, the
    stock variant no longer shows F1, and the override is unavailable,
    with the report saying why (it took no decision: its log line is
    absent)."""
    change = os.path.join(os.path.dirname(DIFF),
                          'context-for-its-migration-only.diff')
    done = faultdriver('scenario', 'run', 'stale-error-migration-context',
                       '--mode', mode(), '--nova-patch', change, '-f', 'json')
    assert done.returncode == 1, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result['verdicts'] == {'stock': 'bug not reproduced',
                                  'fix': 'expectations not met'}
    stock, fix = result['variants']['stock'], result['variants']['fix']
    assert list(stock['unavailable']) == ['tracker.apply_migration_context']
    assert sorted(fix['unavailable']) == [
        'fix stale_migration_context', 'tracker.apply_migration_context']
    assert 'its loop over migrations now applies' in \
        fix['unavailable']['fix stale_migration_context']
    decided = [e for e in fix['expectations'] if e['expectation'] ==
               "log 'not applying the migration context' count >= 2"]
    assert decided[0]['actual'] == 0
    assert 'FAULTDRIVER-UNAVAILABLE feature=tracker.apply_migration_context' \
        in done.stderr
