"""What a ``hang`` case costs against a ``crash`` case (issue 41 item 3:
at most 2x, the hold's wait being the cost, not work).

Each round runs one reduced sweep with both action classes on the same
steps (``faultdriver sweep WORKFLOW --actions hang,crash --points ...
--workers 1``): the two classes share the run's load, so the ratio of
their median case wall times is taken within one run; the result is
the median ratio over the rounds, with each round's medians and where a
hang case's time goes (its settle and recover steps).  Never a timed
test: a benchmark, read by a person.

    python benchmarks/hang_cost.py [--rounds 3] [--workflow live-migration]
        [--points pre_live_migration,live_migration]
    python benchmarks/hang_cost.py --from sweep.json [--from other.json]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import typing

Doc = typing.Dict[str, typing.Any]


def run_sweep(workflow: str, points: str) -> typing.Optional[Doc]:
    with tempfile.TemporaryDirectory(prefix='faultdriver-hang-') as tmp:
        done = subprocess.run(
            [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
             workflow, '--actions', 'hang,crash', '--points', points,
             '--workers', '1', '--results', tmp, '-f', 'json'],
            capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        return None
    found: Doc = json.loads(done.stdout)
    return found


def medians(doc: Doc) -> typing.Dict[str, typing.Dict[str, float]]:
    """``{action: {'case', 'settle', 'recover', 'count'}}``: medians of
    the cases that ran to their checks."""
    out: typing.Dict[str, typing.Dict[str, float]] = {}
    for action in ('hang', 'crash'):
        cases = [c for c in doc['cases']
                 if c['action'] == action and not c['internal_error']]
        if not cases:
            continue
        out[action] = {
            'count': len(cases),
            'case': statistics.median(c['seconds'] for c in cases),
            'settle': statistics.median(
                c['step_seconds'].get('settle', 0.0) for c in cases),
            'recover': statistics.median(
                c['step_seconds'].get('recover', 0.0) for c in cases)}
    return out


def main(argv: typing.Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--workflow', default='live-migration')
    parser.add_argument('--points',
                        default='pre_live_migration,live_migration')
    parser.add_argument('--from', dest='files', action='append',
                        help='read a sweep\'s JSON instead of running one')
    args = parser.parse_args(argv)
    docs: typing.List[Doc] = []
    if args.files:
        for path in args.files:
            with open(path, encoding='utf-8') as stream:
                docs.append(json.load(stream))
    else:
        for _ in range(args.rounds):
            doc = run_sweep(args.workflow, args.points)
            if doc is None:
                return 1
            docs.append(doc)
    ratios = []
    for index, doc in enumerate(docs, 1):
        found = medians(doc)
        if 'hang' not in found or 'crash' not in found:
            print('round %d: no hang or no crash case ran' % index)
            continue
        ratio = found['hang']['case'] / found['crash']['case']
        ratios.append(ratio)
        print('round %d: hang/crash %.2f; ' % (index, ratio) + '; '.join(
            '%s: %d cases, median %.1fs (settle %.1fs, recover %.1fs)' % (
                action, figures['count'], figures['case'],
                figures['settle'], figures['recover'])
            for action, figures in sorted(found.items())))
    if not ratios:
        return 1
    print('median hang/crash over %d round(s): %.2f (target <= 2)' % (
        len(ratios), statistics.median(ratios)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
