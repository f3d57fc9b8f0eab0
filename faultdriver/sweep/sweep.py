"""One sweep from end to end: trace the workflow, generate the cases,
run them, group the findings; the document ``faultdriver sweep`` prints.
"""

import json
import os
import shutil
import sys
import tempfile
import time
import typing

from faultdriver import exception
from faultdriver import novaundertest
from faultdriver import points as points_module
from faultdriver import rules
from faultdriver.scenario import expect
from faultdriver.scenario import model
from faultdriver.scenario import runstate
from faultdriver.scenario import tiers
from faultdriver.sweep import cases as cases_module
from faultdriver.sweep import causes
from faultdriver.sweep import clean
from faultdriver.sweep import compare
from faultdriver.sweep import execute
from faultdriver.sweep import findings as findings_module
from faultdriver.sweep import identity
from faultdriver.sweep import records
from faultdriver.sweep import recovery
from faultdriver.sweep import report as text_report
from faultdriver.sweep import served
from faultdriver.sweep import trace

#: How many faults a case may have: one, or a second in the recovery
#: from the first (``--depth 2``).
DEPTHS = (1, 2)
#: Told what the sweep does, a line at a time.
Say = typing.Callable[[str], None]


def check_arguments(workflow_name: str,
                    points: typing.Optional[typing.Iterable[str]] = None,
                    hosts: typing.Optional[typing.Iterable[str]] = None,
                    patches: typing.Iterable[str] = (),
                    recovery_points: typing.Optional[
                        typing.Iterable[str]] = None) -> records.Workflow:
    """The workflow, once every argument that names something was found
    (ScenarioError naming the argument and the choices): checked before
    any work, so that a typo never runs a sweep of nothing, or of stock
    Nova where a fix was asked for."""
    from faultdriver.tracker import patches as patches_module
    workflow: records.Workflow = model.load(workflow_name)
    _known('--hosts', hosts, workflow.hosts,
           'not a host of workflow %s' % workflow.name)
    # A point (every phase of it) or POINT.PHASE (that phase only: a
    # reduced sweep of crash and raise at pre_live_migration.before is
    # two cases, not four), read as a rule's target is.
    _known('--points', [rules.split_phase(name)[0] for name in points or ()],
           points_module.catalogue(), 'no such point')
    for name in points or ():
        point, phase = rules.split_phase(name)
        have = trace.phases(points_module.catalogue()[point])
        if phase is not None and phase not in have:
            raise exception.ScenarioError(
                '--points %s: point %s has no phase %s; expected one of %s'
                % (name, point, phase, ', '.join(have)))
    _known('--recovery-points', recovery_points, points_module.catalogue(),
           'no such point')
    _known('--patches/--ab', patches, patches_module.registered(),
           'no such candidate fix')
    return workflow


def _known(option: str, given: typing.Optional[typing.Iterable[str]],
           choices: typing.Collection[str], what: str) -> None:
    for name in given or ():
        if name not in choices:
            raise exception.ScenarioError(
                '%s %s: %s%s; expected one of %s' % (
                    option, name, what, rules.suggest(name, choices),
                    ', '.join(sorted(choices)) or 'none'))


def run(workflow_name: str,
        actions: typing.Sequence[str] = cases_module.DEFAULT_ACTIONS,
        points: typing.Optional[typing.Collection[str]] = None,
        hosts: typing.Optional[typing.Collection[str]] = None,
        patches: typing.Sequence[str] = (),
        shard: typing.Tuple[int, int] = (1, 1),
        folder: typing.Optional[str] = None, mode: str = 'threading',
        backend: str = 'embedded', workers: int = 2,
        progress: typing.Optional[Say] = None,
        confirm: typing.Optional[str] = None,
        nova_patches: typing.Sequence[str] = (), depth: int = 1,
        recovery_points: typing.Optional[typing.Collection[str]] = None,
        nova_tree: typing.Optional[str] = None,
        trace_change: bool = False) -> records.Document:
    """Run the sweep; returns ``{'workflow', 'trace', 'cases',
    'findings', ...}``.  ``points``/``hosts`` narrow the traced steps (a
    reduced sweep), ``shard`` = (K, N) runs every N-th case from the K-th.
    ``nova_patches`` (diff files) on ``nova_tree`` (a Nova source tree;
    default the installed Nova): the Nova under test of every case.
    ``depth`` 2: then a second fault in the recovery of each first fault
    that needs one (:mod:`faultdriver.sweep.recovery`), its points
    narrowed to ``recovery_points`` if given.

    ``trace_change``: an A/B's B, which runs the cases of A's trace
    (:func:`share_trace`), traces its own Nova too and adds the cases at
    the steps only that Nova takes (``change_steps``): a change that
    adds a call (a Neutron read the fix had taken out) is swept where it
    adds it, not only where stock Nova already had a step.
    """
    progress = progress or _stderr
    if depth not in DEPTHS:
        raise exception.ScenarioError('--depth %s: expected one of %s' % (
            depth, ', '.join(map(str, DEPTHS))))
    workflow = check_arguments(workflow_name, points, hosts, patches,
                               recovery_points)
    nova_changes = novaundertest.variant_keys(nova_patches, nova_tree)
    nova = novaundertest.prepare(nova_patches, nova_tree)
    folder = folder or tempfile.mkdtemp(prefix='faultdriver-sweep-')
    os.makedirs(folder, exist_ok=True)
    this = identity.of(workflow, actions, points, hosts, patches, backend,
                       mode, nova.record, depth, recovery_points)
    identity.claim(folder, this, execute.RESULTS)
    began = time.monotonic()
    progress('sweep %s on %s (%s mode, Nova under test: %s), results in '
             '%s' % (workflow.name, backend, mode,
                     novaundertest.describe(nova.record), folder))
    # Embedded cases (and the trace) run in served runner processes.
    pool = served.Pool(mode, workers, nova.environ()) \
        if tiers.get(backend).serves else None
    pruning: typing.Optional[records.Pruning] = None
    try:
        steps = traced_steps(workflow, folder, mode, backend, pool,
                             1 if points else workers, nova_changes)
        added: typing.List[trace.TracedStep] = []
        if trace_change:
            added = only_in(traced_steps(
                workflow, os.path.join(folder, CHANGE), mode, backend, pool,
                1, nova_changes), steps)
        chosen = _chosen_cases(workflow, steps, actions, points, hosts,
                               shard, backend, progress, added)

        clean_moves = clean_outcome(folder)
        clean_accounting = clean_outcome(folder, MOVE_END)

        def scenario_of(case: cases_module.Case) -> records.ScenarioData:
            return cases_module.case_scenario(
                workflow, case, backend, patches, nova_changes, clean_moves,
                trace_recovery=depth == 2, clean_accounting=clean_accounting)

        results = execute.run_cases(chosen, scenario_of, folder, mode,
                                    backend, workers,
                                    _case_progress(progress), pool,
                                    notice=progress)
        if depth == 2:
            second, pruning = recovery.second_faults(
                chosen, {r['id']: r for r in results}, recovery_points,
                backend)
            progress('depth 2: %(first_faults_recovered)d first faults '
                     'recovered along %(recovery_paths)d recovery paths; '
                     '%(cases)d second faults (%(pruned)d pruned of '
                     '%(cases_without_pruning)d)' % pruning)
            seconds = execute.run_cases(second, scenario_of, folder, mode,
                                        backend, workers,
                                        _case_progress(progress), pool,
                                        notice=progress)
            pruning['pruned_seconds_estimate'] = \
                recovery.cost_without_pruning(pruning, seconds)
            results += seconds
    finally:
        if pool:
            pool.close()
    clean_run: typing.Optional[records.CleanRun] = clean_outcome(
        folder, CLEAN)
    baseline = clean_run['broken'] if clean_run else ()
    findings = findings_module.findings_of(
        results, os.path.join(folder, 'findings'),
        workflow.data.get('operation'), baseline)
    # Its own clean run's finding; an A/B's B judges its cases by A's
    # (shared) but reports what its own traced run broke, if it traced.
    own_clean = clean_outcome(os.path.join(folder, CHANGE), CLEAN) \
        if trace_change else None
    for broken_clean in (clean_run, own_clean):
        if broken_clean and not broken_clean.get('shared'):
            findings = clean.findings(
                workflow, broken_clean, os.path.join(folder, 'findings'),
                patches, nova_changes) + findings
    if confirm:
        findings_module.confirm(findings, confirm, mode, os.path.join(
            folder, 'findings'), progress)
    found = causes.group(findings)
    doc = {'format_version': findings_module.FORMAT_VERSION,
           'workflow': workflow.name, 'backend': backend, 'mode': mode,
           'operation': workflow.data.get('operation'),
           'patches': list(patches), 'nova': nova.record,
           'shard': '%d/%d' % shard,
           'results': folder,
           'trace': [step.to_json() for step in steps],
           # An A/B's B: the steps its own trace adds to A's (their
           # cases have no stock counterpart); None: not traced.
           'change_steps': [step.to_json() for step in added]
           if trace_change else None,
           'cases': results, 'findings': findings,
           'causes': [cause.to_json() for cause in found],
           'summary': causes.summary(found),
           # What the clean run broke (its finding is in ``findings``);
           # ``shared``: an A/B's B judged against A's clean run.
           'clean_run': clean_run,
           # An A/B's B: what its own traced run broke (None: nothing,
           # or not traced); its finding is in ``findings``.
           'change_clean_run': own_clean,
           'internal_errors': [c['id'] for c in results
                               if c['internal_error']],
           'depth': depth, 'recovery': pruning,
           'wall_seconds': round(time.monotonic() - began, 1)}
    identity.finish(folder, this, doc)
    return doc


def _chosen_cases(workflow: records.Workflow,
                  steps: typing.List[trace.TracedStep],
                  actions: typing.Sequence[str],
                  points: typing.Optional[typing.Collection[str]],
                  hosts: typing.Optional[typing.Collection[str]],
                  shard: typing.Tuple[int, int], backend: str,
                  progress: Say,
                  added: typing.Sequence[trace.TracedStep] = ()
                  ) -> typing.List[cases_module.Case]:
    """This shard's cases of the traced ``steps`` narrowed to ``points``
    and ``hosts``; then those of the ``added`` steps (an A/B's B: steps
    only its Nova takes), sharded apart so that B's shard K runs A's
    shard K's cases."""
    steps, added = list(steps), list(added)
    if points:
        wanted = [rules.split_phase(name) for name in points]

        def matches(step: trace.TracedStep,
                   point: str, phase: typing.Optional[str]) -> bool:
            return step.point == point and phase in (None, step.phase)
        unknown = sorted(name for name, (point, phase) in zip(points, wanted)
                         if not any(matches(s, point, phase)
                                    for s in steps + added))
        if unknown:
            raise exception.ScenarioError(
                '--points %s: not hit by workflow %s; its steps: %s' % (
                    ', '.join(unknown), workflow.name,
                    ', '.join(sorted({'%s.%s' % (s.point, s.phase)
                                      for s in steps}))))
        steps, added = ([s for s in some if any(
            matches(s, point, phase) for point, phase in wanted)]
            for some in (steps, added))
    if hosts:
        steps, added = ([s for s in some if s.host in hosts]
                        for some in (steps, added))
    calls = cases_module.second_calls(workflow.data)
    every = cases_module.generate(steps, actions, backend, workflow.hosts,
                                  calls)
    common = {case.id for case in every}
    more = [case for case in cases_module.generate(
        added, actions, backend, workflow.hosts, calls)
        if case.id not in common]
    if not every and not more:
        # A sweep of nothing would report no finding, as a clean one does.
        raise exception.ScenarioError(
            'workflow %s: no case: none of the %d chosen steps takes a '
            'rule of --actions %s (raise: points that can raise; periodic: '
            'outside the host\'s own periodic; peer-periodic: outside the '
            'tracker lock, with another host in the topology; second-call: '
            'outside a periodic and a restarted service, in a workflow with '
            'a move step)' % (
                workflow.name, len(steps), ','.join(actions)))
    chosen = cases_module.shard(every, *shard) + \
        cases_module.shard(more, *shard)
    progress('%d steps traced, %d cases%s, shard %d/%d runs %d' % (
        len(steps), len(every), ' (and %d steps only the change takes, '
        '%d cases)' % (len(added), len(more)) if added else '',
        shard[0], shard[1], len(chosen)))
    return chosen


def only_in(own: typing.Iterable[trace.TracedStep],
            shared: typing.Iterable[trace.TracedStep]
            ) -> typing.List[trace.TracedStep]:
    """The steps of ``own`` (B's trace) at no point, phase and host of
    ``shared`` (A's): a case's id names those three, so a step both take
    is one case, run as A's trace has it."""
    have = {(step.point, step.phase, step.host) for step in shared}
    return [step for step in own
            if (step.point, step.phase, step.host) not in have]


def share_trace(folder: str, other: str) -> None:
    """Let the sweep in ``other`` run the cases of the one in ``folder``
    (an A/B compares the same cases; a second trace could differ)."""
    os.makedirs(os.path.join(other, 'trace'), exist_ok=True)
    for name in (STEPS, OUTCOME, MOVE_END):
        if os.path.exists(os.path.join(folder, 'trace', name)):
            shutil.copyfile(os.path.join(folder, 'trace', name),
                            os.path.join(other, 'trace', name))
    # B runs no clean run of its own: its cases are judged against A's
    # (the same cases, the same baseline); its report does not repeat
    # A's clean-run finding, which the A/B lists as not checked.
    broken = clean_outcome(folder, CLEAN)
    if broken:
        with open(os.path.join(other, 'trace', CLEAN), 'w',
                  encoding='utf-8') as out:
            json.dump(dict(broken, shared=folder), out)


def recheck_regressions(diff: compare.Diff, stock: records.Document,
                        mode: str, backend: str,
                        progress: typing.Optional[Say] = None
                        ) -> compare.Diff:
    """Replay each regression's case as A ran it: a case that breaks
    there too is flaky on A (an outcome that depends on timing), not a
    regression of B's change; it moves to ``diff['flaky']``."""
    progress = progress or _stderr
    cases: typing.Dict[str, records.CaseResult] = {
        case['id']: case for case in stock['cases']}
    kept: typing.List[str] = []
    flaky: typing.List[str] = []
    for case_id in diff['regressions']:
        case = cases[case_id]
        log = os.path.splitext(case['scenario'])[0] + '.recheck.log'
        report = execute.run_scenario(case['scenario'], 'case', mode,
                                      backend, log)
        broken = sorted(e['kind'] for e in report.get('expectations', ())
                        if not e['met'])
        (flaky if broken else kept).append(case_id)
        progress('regression %s replayed without the change: %s' % (
            case_id, ', '.join(broken) or 'ok (a regression)'))
    return dict(diff, regressions=kept, flaky=flaky)


#: What the clean, traced run keeps in ``trace/``: its steps
#: (:class:`trace.TracedStep`), how its moves ended
#: (:func:`faultdriver.scenario.expect.moves_ended`), and each host's
#: ``{host: matched}`` accounting then
#: (:func:`faultdriver.scenario.expect.move_end_matches`).
STEPS = 'steps.json'
OUTCOME = 'outcome.json'
MOVE_END = 'move-end.json'
#: Where an A/B's B keeps its own trace (``CHANGE/trace/``): the steps
#: its Nova takes, of which those A's trace lacks get cases too.
CHANGE = 'change'
#: What the clean run broke, where it broke something
#: (:func:`faultdriver.sweep.clean.record`): the workflow's own finding.
CLEAN = 'clean.json'


def clean_outcome(folder: str, name: str = OUTCOME) -> records.JSON:
    """How the moves ended in the clean, traced run (None for a trace
    written before this was kept); with ``name`` MOVE_END, each host's
    accounting then."""
    path = os.path.join(folder, 'trace', name)
    if not os.path.exists(path):
        return None
    with open(path, encoding='utf-8') as stream:
        return json.load(stream)


def traced_steps(workflow: records.Workflow, folder: str, mode: str,
                 backend: str, pool: typing.Optional[served.Pool] = None,
                 warm: int = 1,
                 nova_changes: typing.Optional[records.ScenarioData] = None
                 ) -> typing.List[trace.TracedStep]:
    """The workflow's steps from a clean, traced run (kept in the
    results directory as ``trace/steps.json``: a resumed sweep does not
    trace again, and an interrupted one tells how many cases it has).

    With a ``pool`` (the embedded Nova), one of its runners runs the
    trace while ``warm`` of them start (the cases' runners import Nova
    on the core the trace leaves idle)."""
    saved = os.path.join(folder, 'trace', STEPS)
    if os.path.exists(saved):
        with open(saved, encoding='utf-8') as stream:
            return [trace.TracedStep.from_json(step)
                    for step in json.load(stream)]
    path = execute.write_scenario(os.path.join(folder, 'trace'),
                                  trace.trace_scenario(workflow,
                                                       nova_changes,
                                                       backend))
    log = os.path.join(folder, 'trace', 'run.log')
    if pool:
        pool.warm(warm)
        with pool.runner() as runner:
            report = runner.run(path, 'trace', log)
    else:
        report = execute.run_scenario(path, 'trace', mode, backend, log)
    if report.get('scenario_error'):
        # The trace is the user's workflow as written: bad input.
        raise exception.ScenarioError('workflow %s: %s' % (
            workflow.name, report['scenario_error']))
    if report.get('verdict') not in clean.CHECKED:
        raise RuntimeError(
            'the clean run of workflow %s did not run to its checks '
            '(verdict %s); see %s' % (workflow.name, report.get('verdict'),
                                      os.path.join(folder, 'trace',
                                                   'run.log')))
    if report['verdict'] != 'ok':
        # A bug with no fault: the workflow's own finding.
        with open(os.path.join(folder, 'trace', CLEAN), 'w',
                  encoding='utf-8') as out:
            json.dump(clean.record(report, log), out)
    steps = trace.steps_hit(report, workflow.data.get('operation'))
    state = runstate.RunState.from_json(report['state'])
    with open(os.path.join(folder, 'trace', OUTCOME), 'w',
              encoding='utf-8') as out:
        json.dump(expect.moves_ended(state), out)
    with open(os.path.join(folder, 'trace', MOVE_END), 'w',
              encoding='utf-8') as out:
        json.dump(expect.move_end_matches(state), out)
    with open(saved, 'w', encoding='utf-8') as out:
        json.dump(steps, out)
    return steps


def _case_progress(progress: Say) -> execute.Progress:
    def show(case: cases_module.Case, result: records.CaseResult,
             counts: typing.Dict[str, int],
             eta: typing.Optional[float]) -> None:
        progress('[%d/%d] %-55s %s (%.0fs)%s' % (
            counts['done'], counts['total'], case.id,
            text_report.outcome(result),
            result['seconds'],
            '  ETA %dm%02ds' % divmod(int(eta), 60) if eta else ''))
    return show


def _stderr(text: str) -> None:
    sys.stderr.write(text + '\n')
    sys.stderr.flush()
