"""The steps a workflow really runs: a clean run with a ``log`` rule on
every point, read back from the journal.

The points come from the run, never from a hand list, so a step a newer
Nova adds is swept too; the catalogue's facts only narrow them to the
workflow's move (its ``operations``) and drop what happens after the
workflow hands over to ``recover``.  The clean run hands over only once
the move's threads are done (a ``wait-tasks`` step before ``recover``,
:mod:`faultdriver.scenario.tasksteps`): a migration is saved
``completed`` before its source's thread ends (the source's
``live_migration`` 'after' hit comes later), so without it that hit
was traced in some runs and not in others.  Only points the tier can
fire are traced (``Tier.fires``, from what it provides): on the
embedded Nova, no ``network.*`` or ``volume.*`` service-call point
(Nova's fixtures make no request there), every one on processes.
"""

import copy
import typing

from faultdriver import points as points_module
from faultdriver import rules as rules_module
from faultdriver.scenario import model
from faultdriver.scenario import tasksteps
from faultdriver.scenario import tiers
from faultdriver.sweep import records

TRACE_MESSAGE = 'trace'


def trace_rules(backend: str = tiers.DEFAULT) -> typing.List[str]:
    """A ``log`` rule per point and phase, for every host ('*'): every
    point tier ``backend`` can fire."""
    tier = tiers.get(backend)
    return ['%s.%s: log(%s)' % (name, phase, TRACE_MESSAGE)
            for name, point in sorted(points_module.catalogue().items())
            if tier.fires(name, point.kind)
            for phase in phases(point)]


def phases(point: points_module.Point) -> typing.Tuple[str, ...]:
    """The phases a point has: tracker points under the tracker lock
    have one before the lock too."""
    if getattr(point, 'tracker_lock', False):
        return (rules_module.UNLOCKED, 'before', 'after')
    return ('before', 'after')


def trace_scenario(workflow: records.Workflow,
                   nova_changes: typing.Optional[records.ScenarioData] = None,
                   backend: str = tiers.DEFAULT) -> records.ScenarioData:
    """The workflow's data with the trace rules and no expectations of
    its own but the invariants (the clean run must keep them), run on
    the Nova under test (``nova_changes``, the variant keys
    :func:`faultdriver.novaundertest.variant_keys` gives: its steps may
    differ), on tier ``backend``; a ``wait-tasks`` step before its
    ``recover`` (the trace's end waits for the move's threads)."""
    data = copy.deepcopy(workflow.data)
    rules = dict(data.get('rules', {}))
    rules['*'] = list(rules.get('*', ())) + trace_rules(backend)
    data['rules'] = rules
    steps = list(data.get('steps', ()))
    recover = next((i for i, step in enumerate(steps) if 'recover' in step),
                   None)
    if recover is not None:
        steps.insert(recover, {tasksteps.NAME: {}})
    data['steps'] = steps
    data['name'] = 'trace-' + workflow.name
    data['variants'] = {'trace': {'description': 'clean run, traced'}}
    data['variants']['trace'].update(nova_changes or {})
    return data


class TracedStep(typing.NamedTuple):
    """One step a workflow's clean run hit: where a case's fault goes.

    ``skip``: hits of the point the host's service made first (a case's
    fault lets them pass); ``in_periodic``: the hit a case's fault takes
    runs in its host's resource periodic; ``restart``: after how many of
    the workflow's ``restart`` steps of that host it came (0: in the
    service the scenario started)."""

    point: str
    host: str
    phase: str
    skip: int = 0
    in_periodic: bool = False
    restart: int = 0

    @classmethod
    def from_json(cls, data: typing.Union[records.StepJSON,
                                          typing.Sequence[records.JSON]]
                  ) -> 'TracedStep':
        """From ``to_json``'s dict, or the list a saved trace holds."""
        return cls(**data) if isinstance(data, dict) else cls(*data)

    def to_json(self) -> records.StepJSON:
        return self._asdict()


def steps_hit(report: records.Report,
              operation: typing.Optional[str] = None
              ) -> typing.List[TracedStep]:
    """The TracedSteps in the order first hit, from the workflow's first
    move up to its ``recover`` step (what happens before is its setup,
    after is the operator's); with ``operation``, only points whose
    catalogue facts say that move reaches them (or that do not say:
    tracker points and points on every path)."""
    start, end = _window(report)
    return _hits(report, start, end, operation)


def recovery_steps_hit(report: records.Report,
                       host: str) -> typing.List[TracedStep]:
    """The TracedSteps the services ``recover`` started on ``host`` hit
    (a case's recovery trace, ``case_scenario(trace_recovery=True)``), in
    the order first hit: where a depth-2 sweep's second faults go.  The
    counts (``skip``) are of the restarted service, whose rules
    ``recover`` installs; empty where ``recover`` started nothing there.
    """
    began = _window(report)[1]
    if began is None:
        return []
    return [step._replace(restart=0) for step in _hits(report, began, None)
            if step.host == host]


def _hits(report: records.Report, start: typing.Optional[float],
          end: typing.Optional[float],
          operation: typing.Optional[str] = None) -> typing.List[TracedStep]:
    catalogue = points_module.catalogue()
    restarts = _restarts(report)
    seen: typing.List[TracedStep] = []
    for entry in report['state']['faults']:
        if entry.get('action') != 'log' or entry.get('point') is None:
            continue
        if (start is not None and entry['time'] < start) or \
                (end is not None and entry['time'] >= end):
            continue
        point = catalogue.get(entry['point'])
        if point is None:
            continue
        if operation and point.operations and \
                operation not in point.operations:
            continue
        key = (entry['point'], entry['host'], entry.get('phase', 'before'))
        if key not in [step[:3] for step in seen]:
            seen.append(TracedStep(
                *key, skip=entry.get('hit', 1) - 1,
                in_periodic=bool(entry.get('in_periodic')),
                restart=sum(1 for when in restarts.get(key[1], ())
                            if when <= entry['time'])))
    return seen


def _restarts(report: records.Report
              ) -> typing.Dict[str, typing.List[float]]:
    """``{host: [wall-clock start of each of its restart steps]}``."""
    origin = report.get('steps_started_at')
    found: typing.Dict[str, typing.List[float]] = {}
    for entry in report.get('timeline', ()):
        if origin is not None and entry['kind'] == 'restart':
            found.setdefault(entry['args']['host'], []).append(
                origin + entry['start'])
    return found


def _window(report: records.Report
            ) -> typing.Tuple[typing.Optional[float],
                              typing.Optional[float]]:
    """Wall-clock times of the first move step (or other operation on a
    server: ``model.starts_operation``) and of ``recover``."""
    origin = report.get('steps_started_at')
    if origin is None:
        return None, None
    starts: typing.Dict[str, float] = {}
    for entry in report.get('timeline', ()):
        kind = 'move' if model.starts_operation(entry['kind']) \
            else entry['kind']
        starts.setdefault(kind, origin + entry['start'])
    return starts.get('move'), starts.get('recover')
