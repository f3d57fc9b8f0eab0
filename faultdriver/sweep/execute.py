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
import typing

import yaml

from faultdriver import exception
from faultdriver.scenario import launch
from faultdriver.scenario import model
from faultdriver.scenario import provisions
from faultdriver.scenario import secondcall
from faultdriver.scenario import tiers
from faultdriver.sweep import cases as cases_module
from faultdriver.sweep import records
from faultdriver.sweep import served
from faultdriver.sweep import trace

RESULTS = 'results.jsonl'
#: Told what a resume repaired (a line of text).
Notice = typing.Callable[[str], None]
#: Told of each finished case: the case, its result, ``{'done',
#: 'total'}`` and the seconds left (None before any case finished).
Progress = typing.Callable[
    [cases_module.Case, records.CaseResult, typing.Dict[str, int],
     typing.Optional[float]], None]


class CaseRefused(exception.FaultDriverError):
    """A runner refused a scenario the sweep wrote for a case: a bug in
    the sweep (exit 3), never a case to count as run."""


def load_results(folder: str, repair: bool = False,
                 progress: typing.Optional[Notice] = None
                 ) -> typing.Dict[str, records.CaseResult]:
    """``{case id: result}`` already in ``folder``.

    A last line without its newline is what a kill during the append
    leaves: with ``repair`` (a resume) it is cut off the file, so that
    its case runs again, and ``progress`` is told; without, it is bad
    input.  Any other line that is not a result is bad input naming the
    file and line.
    """
    path = os.path.join(folder, RESULTS)
    found: typing.Dict[str, records.CaseResult] = {}
    if not os.path.exists(path):
        return found
    with open(path, 'rb') as stream:
        data = stream.read()
    complete = data.rfind(b'\n') + 1
    lines = data[:complete].decode('utf-8', 'replace').splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            result: records.CaseResult = json.loads(line)
            found[result['id']] = result
        except (ValueError, TypeError, KeyError) as exc:
            raise exception.ScenarioError(
                '%s line %d: not a sweep case result (%s)' % (path, number,
                                                             exc))
    if complete < len(data):
        if not repair:
            raise exception.ScenarioError(
                '%s line %d: cut short (the sweep was killed while writing '
                'it); resume the sweep to run that case again' % (
                    path, len(lines) + 1))
        with open(path, 'r+b') as stream:
            stream.truncate(complete)
        if progress:
            progress('%s: dropped its last line, cut short by a kill (%d '
                     'bytes); that case runs again' % (path,
                                                       len(data) - complete))
    return found


def write_scenario(folder: str, data: records.ScenarioData) -> str:
    """``data`` as a scenario file in ``folder`` (its ``name``.yaml),
    declaring the tiers it can run on (:func:`with_backends`)."""
    data = with_backends(data)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, data['name'] + '.yaml')
    with open(path, 'w', encoding='utf-8') as out:
        yaml.safe_dump(data, out, sort_keys=False)
    return path


def with_backends(data: records.ScenarioData) -> records.ScenarioData:
    """``data`` with ``backends`` naming the tiers that provide all its
    parts need, where some tier does not: a trace on the process tier
    puts log rules at the network.* and volume.* points its Nova's
    clients fire, a case a service fault there, and a scenario without
    ``backends`` is checked against every local tier, the embedded one
    too, which lacks those (the file is refused as a user's would be).
    A workflow's own ``backends`` are narrowed, never widened."""
    wanted = provisions.needed(model.Scenario('<sweep>', data))
    able = tiers.providing(wanted)
    if 'backends' in data:
        narrowed = [name for name in data['backends'] if name in able]
        if narrowed == list(data['backends']):
            return data
    elif set(tiers.LOCAL) <= set(able):
        return data
    else:
        narrowed = list(able)
    data = dict(data)
    data['backends'] = narrowed
    return data


def run_scenario(path: str, variant: str, mode: str, backend: str,
                 log: str) -> records.Report:
    """One variant of the scenario file at ``path``; its report."""
    scenario = model.load(path)
    with open(log, 'a', encoding='utf-8') as stream:
        # The sweep reads reports as JSON data (its own format).
        return launch.run(scenario, [variant], mode, parallel=False,
                          backend=backend, stream=stream)[variant].to_json()


def summarize(case: cases_module.Case, report: records.Report, path: str,
              seconds: float) -> records.CaseResult:
    """What the results keep of one case's run."""
    broken = [e['kind'] for e in report.get('expectations', ())
              if not e['met']]
    internal = report.get('verdict') == 'internal error'
    calls = second_calls(report)
    # A second call not made while its step was held is not this class:
    # the case did not run to its checks (never ok, never a finding).
    not_reached = '; '.join(
        '%s: %s' % (call['call'], call['why']) for call in calls
        if call['verdict'] == secondcall.NOT_REACHED) or None
    if case.action == 'second-call' and not calls and not internal:
        not_reached = 'no second call was made'
    if report.get('step_failed'):
        broken.append('step-failed')
    return {'id': case.id, 'point': case.point, 'host': case.host,
            'phase': case.phase, 'action': case.label,
            'in_periodic': case.in_periodic,
            # A second fault's first case (``sweep --depth 2``).
            'first': case.first.id if case.first else None,
            # Where the second faults of a depth-2 sweep go: the steps
            # the services its recover started hit (traced only there).
            'recovery_trace': [
                step.to_json() for step in trace.recovery_steps_hit(
                    report, case.host)]
            if cases_module.needs_restart(case) and 'state' in report
            else [],
            'verdict': report.get('verdict'), 'broken': broken,
            'details': [{'kind': e['kind'], 'actual': e['actual']}
                        for e in report.get('expectations', ())
                        if not e['met']],
            'step_failed': report.get('step_failed'),
            # Why it failed (what step-failed saw, for the recognisers).
            'step_error': next((e.get('detail') for e in report.get(
                'timeline', ()) if e.get('status') == 'failed'), None),
            'recovery': [e['detail'] for e in report.get('timeline', ())
                         if e['kind'] == 'recover'],
            # The verdict's own word: a case that did not run to its
            # checks is never ok, whatever ``broken`` holds.
            'internal_error': internal or bool(not_reached),
            'error': _first_lines(report.get('internal_error') or (
                'no expectations were checked' if internal else None) or (
                'not reached: %s' % not_reached if not_reached else None)),
            # ``second-call``: each call, its answer and the hold around
            # it (faultdriver.scenario.secondcall.Made), and why a case
            # was not reached.
            'second_call': [{key: call.get(key) for key in (
                'call', 'answer', 'verdict', 'why', 'held_since',
                'called_at', 'answered_at', 'held_before', 'held_after')}
                for call in calls],
            'not_reached': not_reached,
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


def second_calls(report: records.Report) -> typing.List[records.JSON]:
    """What the ``second-call`` expectation saw of each call (``[]``
    where the case made none)."""
    for found in report.get('expectations', ()):
        if found['kind'] == 'second-call' and \
                isinstance(found['actual'], list):
            return found['actual']
    return []


def _first_lines(text: records.JSON,
                 count: int = 3) -> typing.Optional[str]:
    """The head of an internal error's text, for the results (its log
    has the whole traceback)."""
    if not text:
        return None
    lines = str(text).strip().splitlines()
    return '\n'.join(lines[-count:])


def run_cases(cases: typing.Sequence[cases_module.Case],
              scenario_of: typing.Callable[[cases_module.Case],
                                           records.ScenarioData],
              folder: str, mode: str = 'threading',
              backend: str = 'embedded', workers: int = 2,
              progress: typing.Optional[Progress] = None,
              pool: typing.Optional[served.Pool] = None,
              notice: typing.Optional[Notice] = None
              ) -> typing.List[records.CaseResult]:
    """Run the ``cases`` not yet in ``folder``; returns every result.

    ``scenario_of(case)`` gives a case's scenario data; its file goes to
    ``folder/cases`` and is the case's reproducer.  ``pool``: the served
    runners of the embedded cases (a ``served.Pool`` the caller closes;
    unused on the process tiers).  ``notice``: told what the resume
    repaired.  A case whose scenario a runner refuses stops the sweep
    (CaseRefused); cases already started finish and are kept.
    """
    os.makedirs(os.path.join(folder, 'logs'), exist_ok=True)
    results = load_results(folder, repair=True, progress=notice)
    todo = cases_module.slowest_first(
        [case for case in cases if case.id not in results])
    lock = threading.Lock()
    started = time.monotonic()
    counts = {'done': len(cases) - len(todo), 'total': len(cases)}
    serves = tiers.get(backend).serves
    if serves and todo:
        assert pool is not None, 'embedded cases need served runners'
        pool.warm(min(workers, len(todo)))

    refused = threading.Event()

    def run(case: cases_module.Case, path: str,
            log: str) -> records.Report:
        if not serves:       # a stack of processes per case
            try:
                return run_scenario(path, 'case', mode, backend, log)
            except exception.ScenarioError as exc:
                report = {'scenario_error': str(exc)}
        else:
            assert pool is not None, 'embedded cases need served runners'
            with pool.runner() as runner:
                report = runner.run(path, 'case', log)
        if report.get('scenario_error'):
            refused.set()
            raise CaseRefused(
                'sweep case %s: the runner refused the scenario the sweep '
                'wrote for it (%s): %s' % (case.id, path,
                                           report['scenario_error']))
        return report

    def one(case: cases_module.Case) -> typing.Optional[records.CaseResult]:
        if refused.is_set():
            return None         # the sweep stops: start no other case
        path = write_scenario(os.path.join(folder, 'cases'),
                              scenario_of(case))
        began = time.monotonic()
        log = os.path.join(folder, 'logs',
                           os.path.basename(path)[:-5] + '.log')
        report = run(case, path, log)
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

    executor = concurrent.futures.ThreadPoolExecutor(max(1, workers))
    futures = []
    try:
        futures = [executor.submit(one, case) for case in todo]
        concurrent.futures.wait(
            futures, return_when=concurrent.futures.FIRST_EXCEPTION)
    finally:
        # A refused case ends the sweep: the cases not started never do.
        executor.shutdown(wait=True, cancel_futures=True)
    for future in futures:
        if not future.cancelled():
            future.result()
    return [results[case.id] for case in cases]


def _eta(started: float, done: int,
         total: int) -> typing.Optional[float]:
    if not done:
        return None
    return (time.monotonic() - started) / done * (total - done)
