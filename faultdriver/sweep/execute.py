"""Run sweep cases in parallel, each a scenario run of its own (on the
embedded Nova in a worker's long-lived runner process, see served.py;
on the process tiers a stack per case), with the results appended to a
directory as they finish (an interrupted sweep resumes: finished cases
are not run again)."""

import concurrent.futures
import json
import os
import threading
import time

import yaml

from faultdriver.scenario import launch
from faultdriver.scenario import model
from faultdriver.sweep import cases as cases_module

RESULTS = 'results.jsonl'


def load_results(folder):
    """``{case id: result}`` already in ``folder``."""
    path = os.path.join(folder, RESULTS)
    found = {}
    if os.path.exists(path):
        with open(path, encoding='utf-8') as stream:
            for line in stream:
                if line.strip():
                    result = json.loads(line)
                    found[result['id']] = result
    return found


def write_scenario(folder, data):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, data['name'] + '.yaml')
    with open(path, 'w', encoding='utf-8') as out:
        yaml.safe_dump(data, out, sort_keys=False)
    return path


def run_scenario(path, variant, mode, backend, log):
    """One variant of the scenario file at ``path``; its report."""
    scenario = model.load(path)
    with open(log, 'a', encoding='utf-8') as stream:
        return launch.run(scenario, [variant], mode, parallel=False,
                          backend=backend, stream=stream)[variant]


def summarize(case, report, path, seconds):
    """What the results keep of one case's run."""
    broken = [e['kind'] for e in report.get('expectations', ())
              if not e['met']]
    if report.get('step_failed'):
        broken.append('step-failed')
    return {'id': case.id, 'point': case.point, 'host': case.host,
            'phase': case.phase, 'action': case.action,
            'in_periodic': case.in_periodic,
            'verdict': report.get('verdict'), 'broken': broken,
            'details': [{'kind': e['kind'], 'actual': e['actual']}
                        for e in report.get('expectations', ())
                        if not e['met']],
            'step_failed': report.get('step_failed'),
            'recovery': [e['detail'] for e in report.get('timeline', ())
                         if e['kind'] == 'recover'],
            'internal_error': bool(report.get('internal_error')),
            'scenario': path, 'seconds': round(seconds, 1),
            # Where a case's time goes (benchmarks/sweep.py).
            'setup_seconds': report.get('setup_seconds'),
            'steps_seconds': report.get('steps_seconds'),
            'step_seconds': {e['kind']: e['seconds']
                             for e in report.get('timeline', ())
                             if e['kind'] in ('settle', 'recover')},
            'expectation_seconds': {e['kind']: e.get('seconds')
                                    for e in report.get('expectations', ())},
            'cpu_seconds': report.get('cpu_seconds') or {}}


def run_cases(cases, scenario_of, folder, mode='threading',
              backend='embedded', workers=2, progress=None, pool=None):
    """Run the ``cases`` not yet in ``folder``; returns every result.

    ``scenario_of(case)`` gives a case's scenario data; its file goes to
    ``folder/cases`` and is the case's reproducer.  ``pool``: the served
    runners of the embedded cases (a ``served.Pool`` the caller closes;
    unused on the process tiers).
    """
    os.makedirs(os.path.join(folder, 'logs'), exist_ok=True)
    results = load_results(folder)
    todo = cases_module.slowest_first(
        [case for case in cases if case.id not in results])
    lock = threading.Lock()
    started = time.monotonic()
    counts = {'done': len(cases) - len(todo), 'total': len(cases)}
    if backend == 'embedded' and todo:
        pool.warm(min(workers, len(todo)))

    def run(path, log):
        if backend != 'embedded':       # a stack of processes per case
            return run_scenario(path, 'case', mode, backend, log)
        with pool.runner() as runner:
            return runner.run(path, 'case', log)

    def one(case):
        path = write_scenario(os.path.join(folder, 'cases'),
                              scenario_of(case))
        began = time.monotonic()
        log = os.path.join(folder, 'logs',
                           os.path.basename(path)[:-5] + '.log')
        report = run(path, log)
        compute_log = report.pop('compute_log', None)
        if compute_log:
            # Kept where an invariant broke: why, for whoever looks.
            with open(log[:-4] + '.compute.log', 'w',
                      encoding='utf-8') as out:
                out.write(compute_log)
        result = summarize(case, report, path, time.monotonic() - began)
        with lock:
            with open(os.path.join(folder, RESULTS), 'a',
                      encoding='utf-8') as out:
                out.write(json.dumps(result) + '\n')
            results[case.id] = result
            counts['done'] += 1
            if progress:
                progress(case, result, counts, _eta(
                    started, counts['done'] - (len(cases) - len(todo)),
                    len(todo)))
        return result

    with concurrent.futures.ThreadPoolExecutor(max(1, workers)) as executor:
        for future in [executor.submit(one, case) for case in todo]:
            future.result()
    return [results[case.id] for case in cases]


def _eta(started, done, total):
    if not done:
        return None
    return (time.monotonic() - started) / done * (total - done)
