"""A Nova change reaches real nova-compute processes: ``scenario run
--backend process --nova-patch`` (a diff written for this test that
reverts a stale ``error`` migration's context right after the periodic
applies it).

Invariant: the computes' periodic runs the changed code (the seed's
CPUPinningInvalid is gone: bug not reproduced) and the report names the
Nova under test.
"""

import json
import os
import subprocess
import sys

DIFF = os.path.join(os.path.dirname(__file__), os.pardir, 'functional',
                    'data', 'revert-stale-error-context.diff')


def test_the_computes_run_the_nova_under_test():
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario', 'run',
         'stale-error-migration-context', '--variant', 'stock', '--backend',
         'process', '--mode', 'threading', '--nova-patch', DIFF, '-f',
         'json'], capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result['verdicts'] == {'stock': 'bug not reproduced'}
    report = result['variants']['stock']
    assert [p['file'] for p in report['nova']['patches']] == [
        'revert-stale-error-context.diff']
    errors = [e for e in report['expectations']
              if e['expectation'] == 'periodic errors on dest >= 1']
    assert errors[0]['actual'] == 0
