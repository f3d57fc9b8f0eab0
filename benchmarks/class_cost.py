"""What the action classes beyond the host cost against a workflow's
default sweep (issue 43 item 4: a whole-workflow sweep with the service
and RPC classes costs at most 2x its ``crash,raise,periodic`` sweep).

Each round runs the workflow's whole sweep twice, one after the other on
the same machine: the default classes, then the new ones (``faultdriver
sweep WORKFLOW --actions ...``); the ratio of their wall times is taken
within the round (both share its load), and the result is the median
ratio over the rounds, with each sweep's cases, findings and wall time.
Never a timed test: a benchmark, read by a person.

    python benchmarks/class_cost.py [--rounds 1] \
        [--workflow live-migration-bfv]
    python benchmarks/class_cost.py --from base.json --from new.json
        [--from base2.json --from new2.json ...]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import typing

Doc = typing.Dict[str, typing.Any]

BASE = 'crash,raise,periodic'
BEYOND = 'http-error,connfail,drop,lostreply,twice'


def run_sweep(workflow: str, actions: str) -> typing.Optional[Doc]:
    with tempfile.TemporaryDirectory(prefix='faultdriver-classes-') as tmp:
        done = subprocess.run(
            [sys.executable, '-m', 'faultdriver.cmd.main', 'sweep',
             workflow, '--actions', actions, '--results', tmp, '-f',
             'json'], capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        return None
    found: Doc = json.loads(done.stdout)
    return found


def figures(doc: Doc) -> str:
    failed = sum(bool(c['internal_error']) for c in doc['cases'])
    return '%d cases%s, %d findings, %.0f s' % (
        len(doc['cases']), ' (%d internal errors)' % failed if failed
        else '', len(doc['findings']), doc['wall_seconds'])


def main(argv: typing.Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=1)
    parser.add_argument('--workflow', default='live-migration-bfv')
    parser.add_argument('--actions', default=BEYOND,
                        help='the classes measured (default: %s)' % BEYOND)
    parser.add_argument('--from', dest='files', action='append',
                        help='read sweeps\' JSON instead of running them, '
                        'in pairs: the default classes\', then the '
                        'others\'')
    args = parser.parse_args(argv)
    pairs: typing.List[typing.Tuple[Doc, Doc]] = []
    if args.files:
        if len(args.files) % 2:
            parser.error('--from: give the sweeps in pairs')
        docs = []
        for path in args.files:
            with open(path, encoding='utf-8') as stream:
                docs.append(json.load(stream))
        pairs = list(zip(docs[::2], docs[1::2]))
    else:
        for _ in range(args.rounds):
            base = run_sweep(args.workflow, BASE)
            beyond = run_sweep(args.workflow, args.actions)
            if base is None or beyond is None:
                return 1
            pairs.append((base, beyond))
    ratios = []
    for index, (base, beyond) in enumerate(pairs, 1):
        ratio = beyond['wall_seconds'] / base['wall_seconds']
        ratios.append(ratio)
        print('round %d, %s: %.2f of the default sweep; %s: %s; %s: %s' % (
            index, base['workflow'], ratio, BASE, figures(base),
            args.actions, figures(beyond)))
    print('median over %d round(s): %.2f (target <= 2)' % (
        len(ratios), statistics.median(ratios)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
