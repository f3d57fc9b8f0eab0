"""Play one scenario variant on a running Nova: the steps in order, then
the state, then the expectations, into the variant's report.

The same body runs on every tier (the embedded Nova calls it as its one
test, the process tier on its stack); only the backend differs.
"""

import itertools
import sys
import time
import typing

from faultdriver.scenario import collect
from faultdriver.scenario import conformance
from faultdriver.scenario import expect
from faultdriver.scenario import invariants
from faultdriver.scenario import runstate
from faultdriver.scenario import steps as steps_module
from faultdriver.scenario import variant_report
from faultdriver.scenario import wording


def progress(variant: str, text: str) -> None:
    """One line of a run's progress, on the real stderr (a test runner
    may have replaced sys.stderr)."""
    # None only where Python started without a stderr at all.
    stream = sys.__stderr__ or sys.stderr
    stream.write('[%s] %s\n' % (variant, text))
    stream.flush()


def progress_internal_error(variant: str, text: str) -> None:
    """Say a run ended in an internal error: what went wrong first (the
    last exception's line and its notes), then the traceback.  A log cut
    to a few lines around the marker (CI's summaries are) still says
    why."""
    lines = [line for line in text.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines)
              if line.startswith('Traceback (')]
    tail = lines[starts[-1] + 1:] if starts else lines[-1:]
    what = [line for line in tail if not line.startswith(' ')]
    progress(variant, 'internal error: %s\n%s' % (' '.join(what), text))


def play(nova: typing.Any, scenario: typing.Any, variant: str,
         report: variant_report.VariantReport) -> None:
    """Run ``scenario``'s steps on ``nova``, then check the expectations;
    fills ``report`` (a VariantReport: timeline, state, expectations,
    timings)."""
    conformance.check(nova)
    steps = steps_module.Steps(nova, scenario, variant)
    started = time.monotonic()
    # Wall clock of step 0: places journal times on the timeline.
    report.steps_started_at = time.time()
    assert report.started is not None, 'play() before report.begin()'
    report.setup_seconds = round(started - report.started, 2)
    mark_cpu(report, 'setup')
    progress(variant, 'Nova up in %.1fs (hosts %s)'
             % (report.setup_seconds, ', '.join(scenario.hosts)))
    total = len(scenario.steps)
    for i, step in enumerate(scenario.steps, 1):
        text = step.describe()
        start = round(time.monotonic() - started, 2)
        t = time.monotonic()
        try:
            detail = steps.run(step)
            status = 'ok'
        except Exception as exc:
            detail = '%s: %s' % (type(exc).__name__, exc)
            status = 'failed'
            report.step_failed = text
        entry = runstate.TimelineEntry(
            index=i, step=text, kind=step.kind, args=step.args, start=start,
            status=status, seconds=round(time.monotonic() - t, 2),
            detail=detail or '')
        report.timeline.append(entry)
        progress(variant, '%2d/%d %-60s %5.2fs %s %s'
                 % (i, total, entry.step[:60], entry.seconds,
                    entry.status, entry.detail))
        if entry.status == 'failed':
            break
    report.steps_seconds = round(time.monotonic() - started, 2)
    mark_cpu(report, 'steps')
    report.state = collect.collect_state(steps)
    if report.step_failed:
        disarm(steps, variant)
    report.expectations = expect.evaluate(
        steps, scenario.expectations(variant), report.state)
    mark_cpu(report, 'expectations')
    report.shutdown_log = collect.shutdown_lines(steps.log_text()) or None
    if report.step_failed or not all(e.met for e in report.expectations):
        # What the computes logged, to tell why.
        report.compute_log = steps.log_text()
    symptoms = _own(scenario, variant) if report.expect == 'bug' else ()
    for verdict, symptom in itertools.zip_longest(report.expectations,
                                                  symptoms):
        words = wording.shown(symptom, verdict.kind,
                              verdict.expectation, verdict.met,
                              verdict.actual)
        if symptom and verdict.met:
            progress(variant, words)
        else:
            progress(variant, '%-7s %s (actual: %s)' % (
                words, verdict.expectation, verdict.actual))


def disarm(steps: typing.Any, variant: str) -> None:
    """After a failed step, the scenario's rules off every host (its
    journal already read): the expectations' own moves (moves-again)
    judge Nova, and a rule the steps never reached must not fire inside
    them (seen on a real devstack: a ``1*shutdown`` left armed stopped
    the source during moves-again).  A host that does not answer (a
    crash the steps left) is said and skipped."""
    for host in steps.scenario.hosts:
        try:
            steps.do_clear_rules(host)
        except Exception as exc:
            progress(variant, 'rules on %s not cleared after the failed '
                     'step: %s' % (host, str(exc)[:200]))


def _own(scenario: typing.Any, variant: str) -> typing.List[bool]:
    """Per verdict of :func:`expect.evaluate`, in its order (its
    state-changing invariants last, the others as written): whether it
    checks one of the variant's own expectations, what shows its bug,
    rather than one every variant checks."""
    specs = scenario.expectations(variant)
    common = len(scenario.common_expectations())
    rank = [invariants.rank(s.kind) for s in specs]
    return [i >= common for i in sorted(range(len(specs)),
                                        key=rank.__getitem__)]


def mark_cpu(report: variant_report.VariantReport, phase: str) -> None:
    """Record the CPU seconds ``phase`` took in this whole process
    (every thread: the embedded Nova's services too): where a case's time
    goes when the sweep's workers share the cores and wall times stretch.
    Only on the embedded Nova (the process tier's services are other
    processes)."""
    if report.cpu_started is not None:
        cpu = report.cpu_seconds
        assert cpu is not None, 'begin(cpu=True) sets both'
        spent = time.process_time() - report.cpu_started
        cpu[phase] = round(spent - sum(cpu.values()), 2)
