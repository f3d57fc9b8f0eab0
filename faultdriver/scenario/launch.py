"""Run variants of a scenario, each in a process of its own (the
concurrency mode must be chosen before Nova is imported), and collect
their reports."""

import json
import os
import subprocess
import sys
import tempfile

from faultdriver.scenario import runner

VERDICT_EXIT = {'ok': 0, 'bug reproduced': 0}


def verdict(report):
    """One of: ok, bug reproduced, bug not reproduced, expectations not
    met, step failed, internal error."""
    if 'expectations' not in report:
        return 'internal error'
    if report.get('step_failed'):
        return 'step failed'
    met = all(e['met'] for e in report['expectations'])
    if report.get('expect') == 'bug':
        return 'bug reproduced' if met else 'bug not reproduced'
    return 'ok' if met else 'expectations not met'


def run(scenario, variants, mode, parallel=True):
    """Reports by variant, in the order asked."""
    env = dict(os.environ, PYTHONWARNINGS='ignore',
               OS_NOVA_DISABLE_EVENTLET_PATCHING=runner.MODES[mode])
    with tempfile.TemporaryDirectory(prefix='faultdriver-') as tmp:
        started = {}
        for variant in variants:
            out = os.path.join(tmp, variant + '.json')
            process = subprocess.Popen(
                [sys.executable, '-m', 'faultdriver.scenario.runner',
                 scenario.path, variant, mode, out],
                env=env, stdout=sys.stderr, stdin=subprocess.DEVNULL)
            started[variant] = (process, out)
            if not parallel:
                process.wait()
        reports = {}
        for variant, (process, out) in started.items():
            code = process.wait()
            try:
                with open(out, encoding='utf-8') as stream:
                    reports[variant] = json.load(stream)
            except (OSError, ValueError):
                reports[variant] = {
                    'variant': variant, 'mode': mode,
                    'internal_error': 'runner exited %d without a report'
                                      % code}
            reports[variant]['verdict'] = verdict(reports[variant])
    return reports
