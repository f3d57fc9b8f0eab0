"""How long a scenario run takes, against Nova's own comparable
functional test, measured in one run.

Four commands, each a fresh process tree timed end to end (wall clock,
and CPU: user + system of the command and every process it waited for):

* ``seed``: ``faultdriver scenario run stale-error-migration-context``,
  the README's main command: both variants (stock tracker and the fix);
* ``step``: ``faultdriver scenario run crash-dest-pre-live-migration``,
  a bundled one-variant step scenario;
* ``nova``: Nova's ``NUMALiveMigrationPositiveTests.test_numa_live_migration``
  (two pinned hosts, boot, live migration, checks), one test run by pytest
  ``--pyargs`` as ``tests/transparency/run.sh`` runs Nova's tests, stock
  (``--transparency-stock``: no faultdriver);
* ``unittest``: the same Nova test the leanest way, ``python -m unittest``
  in a fresh process (no pytest, no plugin): the baseline issue #24 holds
  the main command to (at most 1.0x, wall medians).

Rounds interleave the four so that each sees the same load; medians and
ratios to both baselines are reported.  Target: the seed A/B under 60 s of wall
clock on two cores.  Exit status 1 if a command fails or the seed median
misses the target.  Whether the seed A/B took at most the wall time of
Nova's test run by unittest (issue #24's target for the main command)
is reported too, and the same against pytest's run (issue #11's).

Run: ``tox -e bench-scenario`` or, from the repository root,
``python benchmarks/scenario_vs_nova.py [--mode threading] [--rounds 3]
[--json]``.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_SECONDS = 60.0
NOVA_MODULE = 'nova.tests.functional.libvirt.test_numa_live_migration'
NOVA_TEST = NOVA_MODULE + ('::NUMALiveMigrationPositiveTests::'
                           'test_numa_live_migration')
NOVA_UNITTEST = NOVA_MODULE + ('.NUMALiveMigrationPositiveTests.'
                               'test_numa_live_migration')
BASELINES = ('nova', 'unittest')
MODES = {'eventlet': 'False', 'threading': 'True'}


def commands(mode):
    scenario = [sys.executable, '-m', 'faultdriver.cmd.main', 'scenario',
                'run', '--mode', mode, '-f', 'json']
    return {
        'seed': scenario + ['stale-error-migration-context'],
        'step': scenario + ['crash-dest-pre-live-migration'],
        'nova': [sys.executable, '-m', 'pytest', '-q', '-p',
                 'no:cacheprovider', '-o', 'addopts=', '-p',
                 'tests.transparency.plugin', '--transparency-stock',
                 '--pyargs', NOVA_TEST],
        'unittest': [sys.executable, '-m', 'unittest', NOVA_UNITTEST],
    }


def timed(argv, mode):
    """``{'wall', 'cpu', 'ok', 'load'}`` of one run of ``argv``."""
    # Nova's test looks for api-paste.ini beside its package; the wheel
    # installs it under <prefix>/etc/nova: oslo.config's environment
    # source tells it (faultdriver's runs set the same option).
    env = dict(os.environ, PYTHONWARNINGS='ignore',
               OS_NOVA_DISABLE_EVENTLET_PATCHING=MODES[mode],
               OS_WSGI__API_PASTE_CONFIG=os.path.join(
                   sys.prefix, 'etc', 'nova', 'api-paste.ini'))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True,
                          text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) +
           (after.ru_stime - before.ru_stime))
    if done.returncode:
        sys.stderr.write('%s exited %d:\n%s\n' % (
            ' '.join(argv[-3:]), done.returncode, done.stderr[-3000:]))
    return {'wall': round(wall, 1), 'cpu': round(cpu, 1),
            'ok': done.returncode == 0, 'load': round(load, 1)}


def summary(runs):
    result = {}
    for name, each in runs.items():
        result[name] = {
            'wall_median': statistics.median(r['wall'] for r in each),
            'cpu_median': statistics.median(r['cpu'] for r in each),
            'runs': each}
    for name in ('seed', 'step'):
        for baseline in BASELINES:
            base = result[baseline]
            result[name]['wall_ratio_to_%s' % baseline] = round(
                result[name]['wall_median'] / base['wall_median'], 2)
            result[name]['cpu_ratio_to_%s' % baseline] = round(
                result[name]['cpu_median'] / base['cpu_median'], 2)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--mode', choices=MODES, default='threading')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args(argv)
    runs = {name: [] for name in commands(args.mode)}
    for round_ in range(1, args.rounds + 1):
        for name, command in commands(args.mode).items():
            runs[name].append(timed(command, args.mode))
            if not args.json:
                r = runs[name][-1]
                print('round %d %-8s wall %6.1f s  cpu %6.1f s  load %4.1f%s'
                      % (round_, name, r['wall'], r['cpu'], r['load'],
                         '' if r['ok'] else '  FAILED'), flush=True)
    result = summary(runs)
    result['mode'] = args.mode
    result['cores'] = os.cpu_count()
    failed = [n for n, each in runs.items() if not all(r['ok'] for r in each)]
    met = result['seed']['wall_median'] < TARGET_SECONDS
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print('\n%s mode, %d cores, medians of %d rounds:'
              % (args.mode, os.cpu_count(), args.rounds))
        for name in ('seed', 'step') + BASELINES:
            r = result[name]
            ratios = ''.join(
                '  = %4.2fx / %4.2fx %s' % (
                    r['wall_ratio_to_%s' % base], r['cpu_ratio_to_%s' % base],
                    base) for base in BASELINES if name not in BASELINES)
            print('  %-8s wall %6.1f s  cpu %6.1f s%s'
                  % (name, r['wall_median'], r['cpu_median'], ratios))
        print('seed A/B under %d s: %s' % (TARGET_SECONDS,
                                           'yes' if met else 'NO'))
        # Issue #11's target, reported only: two runs this close in wall
        # time swap places with the machine's noise.
        for base in BASELINES:
            print('seed A/B at most Nova\'s test run by %s (wall medians): '
                  '%s' % ('pytest' if base == 'nova' else base,
                          'yes' if result['seed']['wall_ratio_to_%s' % base]
                          <= 1 else 'no'))
        if failed:
            print('FAILED: %s' % ', '.join(failed))
    return 1 if failed or not met else 0


if __name__ == '__main__':
    sys.exit(main())
