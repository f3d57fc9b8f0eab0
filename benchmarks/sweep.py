"""How fast a sweep runs, and where a case's time goes.

Runs ``faultdriver sweep WORKFLOW`` (whole, or reduced with the extra
arguments), or reads the JSON of one that ran (``--from FILE``), and
reports: cases per minute, the wall time, per case the medians of Nova's
start-up, the workflow's steps, its settle and recover steps, and what
is left (expectations: the invariants, which run periodics and a
follow-up round trip; teardown), then the case-seconds each action class
and each recovery kind adds up to (the wall time is about their sum
divided by the workers) and the slowest cases; for ``--depth 2``, the
second faults and what pruning saved.  The targets: the whole
live-migration sweep in under 10 minutes on 2 cores, its depth-2 sweep
in under 30 minutes with pruning.

    python benchmarks/sweep.py live-migration [--workers 2] [SWEEP ARGS...]
    python benchmarks/sweep.py --from sweep.json
"""

import collections
import json
import statistics
import subprocess
import sys
import tempfile


def run_sweep(workflow, extra):
    with tempfile.TemporaryDirectory(prefix='faultdriver-bench-') as tmp:
        done = subprocess.run(
            [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
             workflow, '--results', tmp, '-f', 'json'] + extra,
            capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        return None
    return json.loads(done.stdout)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float('nan')


def recovery_kind(case):
    text = '; '.join(case['recovery'])
    if 'stuck' in text:
        return 'a move stuck'
    if 'restarted' in text:
        return 'restarted a compute'
    return 'no restart'


def report(doc):
    cases = [c for c in doc['cases'] if not c['internal_error']]
    wall = doc['wall_seconds']
    per_case = median(c['seconds'] for c in cases)
    setup = median(c['setup_seconds'] for c in cases)
    steps = median(c['steps_seconds'] for c in cases)
    settle = median(c['step_seconds'].get('settle') for c in cases)
    recover = median(c['step_seconds'].get('recover') for c in cases)
    print('sweep %s: %d cases (%d traced steps), %d findings, wall %.0f s '
          '= %.1f cases/min' % (doc['workflow'], len(doc['cases']),
                                len(doc['trace']), len(doc['findings']),
                                wall, len(doc['cases']) / wall * 60))
    print('per case (median): %.1f s = Nova up %.1f + steps %.1f (of which '
          'settle %.1f, recover %.1f) + expectations and teardown %.1f' % (
              per_case, setup, steps, settle, recover,
              per_case - setup - steps))
    total = sum(c['seconds'] for c in cases)
    print('case-seconds: %.0f in all' % total)
    moves = median(c.get('expectation_seconds', {}).get('moves-again')
                   for c in cases)
    print('  of the expectations: moves-again %.1f s (median)' % moves)
    phases = ('setup', 'steps', 'expectations', 'teardown')
    cpu = {p: median(c.get('cpu_seconds', {}).get(p) for c in cases)
           for p in phases}
    print('CPU per case (median, every thread of the runner): %s' % ', '.join(
        '%s %.1f s' % (p, cpu[p]) for p in phases))
    for title, key in (('action', lambda c: c['action']),
                       ('recovery', recovery_kind)):
        groups = collections.defaultdict(list)
        for case in cases:
            groups[key(case)].append(case['seconds'])
        for name, seconds in sorted(groups.items()):
            print('  %-8s %-20s %3d cases  %6.0f s  median %5.1f s' % (
                title, name, len(seconds), sum(seconds),
                statistics.median(seconds)))
    figures = doc.get('recovery')
    if figures:
        # --depth 2: the second faults, and what pruning saved.
        seconds = [c['seconds'] for c in cases if c.get('first')]
        print('depth 2: %d first faults recovered along %d recovery paths; '
              '%d second faults run (%.0f case-seconds, median %.1f s), %d '
              'pruned of %d (about %s case-seconds saved)' % (
                  figures['first_faults_recovered'],
                  figures['recovery_paths'], figures['cases'],
                  sum(seconds), median(seconds), figures['pruned'],
                  figures['cases_without_pruning'],
                  figures.get('pruned_seconds_estimate')))
    print('slowest:')
    for case in sorted(cases, key=lambda c: -c['seconds'])[:5]:
        print('  %5.1f s  %s  (%s)' % (case['seconds'], case['id'],
                                       '; '.join(case['recovery'])))


def main(argv):
    if argv[:1] == ['--from']:
        with open(argv[1], encoding='utf-8') as stream:
            doc = json.load(stream)
    else:
        workflow, *extra = argv or ['live-migration']
        doc = run_sweep(workflow, extra)
        if doc is None:
            return 1
    report(doc)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
