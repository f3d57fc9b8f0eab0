"""CPU an embedded Nova burns while a case waits.

A sweep runner's embedded Nova burns CPU even while its case only waits
(services' heartbeats, RPC listeners, pool threads), and four runners
share two cores, so that burn is taken from the other cases.  This runs
one served scenario runner (as the sweep does) on two scenarios that
boot a server and then sleep 1 s and 31 s, alternately for ``--rounds``
rounds, and prints the steps' CPU seconds (every thread of the runner)
of each and the difference per second of sleep: the idle burn, as a
share of one core.

    python benchmarks/idle_burn.py [--rounds 2] [--mode threading]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import yaml

from faultdriver.scenario import worker

SHORT, LONG = 1, 31


def scenario(seconds):
    return {'name': 'idle-%d' % seconds,
            'description': 'boot, then wait %d s' % seconds,
            'topology': {'hosts': ['src', 'dest'], 'pinned': True},
            'variants': {'stock': {'description': 'Nova as it is.'}},
            'expectations': [],
            'steps': [{'boot': {'server': 's1', 'host': 'src'}},
                      {'sleep': {'seconds': seconds}}]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--mode', choices=('eventlet', 'threading'),
                        default='threading')
    args = parser.parse_args()
    cpu = {SHORT: [], LONG: []}
    with tempfile.TemporaryDirectory(prefix='faultdriver-idle-') as tmp:
        paths = {}
        for seconds in cpu:
            paths[seconds] = os.path.join(tmp, 'idle-%d.yaml' % seconds)
            with open(paths[seconds], 'w', encoding='utf-8') as out:
                yaml.safe_dump(scenario(seconds), out)
        env = dict(os.environ, PYTHONWARNINGS='ignore',
                   OS_NOVA_DISABLE_EVENTLET_PATCHING=worker.MODES[
                       args.mode])
        served = subprocess.Popen(
            [sys.executable, '-m', 'faultdriver.harness.runner', '--serve',
             args.mode], env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        try:
            for _ in range(args.rounds):
                for seconds in cpu:
                    out = os.path.join(tmp, 'report.json')
                    served.stdin.write(json.dumps({
                        'path': paths[seconds], 'variant': 'stock',
                        'out': out, 'log': os.path.join(tmp, 'run.log')})
                        + '\n')
                    served.stdin.flush()
                    if served.stdout.readline() != 'done\n':
                        sys.exit('the runner died; see its log')
                    with open(out, encoding='utf-8') as stream:
                        report = json.load(stream)
                    if report.get('internal_error'):
                        sys.exit(report['internal_error'])
                    cpu[seconds].append(report['cpu_seconds']['steps'])
        finally:
            served.stdin.close()
            served.wait()
    for seconds, values in cpu.items():
        print('boot + sleep %2d s: steps CPU %s s' % (
            seconds, ' '.join('%.2f' % v for v in values)))
    burn = (statistics.median(cpu[LONG]) - statistics.median(cpu[SHORT])) \
        / (LONG - SHORT)
    print('idle burn: %.1f%% of a core (median difference over %d s)'
          % (100 * burn, LONG - SHORT))


if __name__ == '__main__':
    main()
