"""How fast a sweep runs, and where a case's time goes.

Runs ``faultdriver sweep WORKFLOW`` (whole, or reduced with the extra
arguments) and reports, from its JSON: cases per minute, the wall time,
and per case the medians of Nova's start-up, the workflow's steps, its
settle and recover steps, and what is left (expectations: the
invariants, which run periodics and a follow-up move).  The issue's
target: the whole live-migration sweep in under 10 minutes on 2 cores.

    python benchmarks/sweep.py live-migration [--workers 2] [SWEEP ARGS...]
"""

import json
import statistics
import subprocess
import sys
import tempfile


def main(argv):
    workflow, *extra = argv or ['live-migration']
    with tempfile.TemporaryDirectory(prefix='faultdriver-bench-') as tmp:
        done = subprocess.run(
            [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
             workflow, '--results', tmp, '-f', 'json'] + extra,
            capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        return done.returncode
    doc = json.loads(done.stdout)
    cases = [c for c in doc['cases'] if not c['internal_error']]
    wall = doc['wall_seconds']

    def median(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else float('nan')
    per_case = median(c['seconds'] for c in cases)
    setup = median(c['setup_seconds'] for c in cases)
    steps = median(c['steps_seconds'] for c in cases)
    settle = median(c['step_seconds'].get('settle') for c in cases)
    recover = median(c['step_seconds'].get('recover') for c in cases)
    print('sweep %s: %d cases (%d traced steps), %d findings, wall %.0f s '
          '= %.1f cases/min' % (workflow, len(doc['cases']),
                                len(doc['trace']), len(doc['findings']),
                                wall, len(doc['cases']) / wall * 60))
    print('per case (median): %.1f s = Nova up %.1f + steps %.1f (of which '
          'settle %.1f, recover %.1f) + expectations and teardown %.1f' % (
              per_case, setup, steps, settle, recover,
              per_case - setup - steps))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
