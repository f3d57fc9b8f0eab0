"""The report of one scenario variant run: the one record every tier's
runner fills, the worker writes, the launcher and the sweep read, and
``scenario report`` validates.

A run builds it with :meth:`VariantReport.begin` (or, when it cannot
run, :meth:`VariantReport.failed`); it crosses processes and files as
:meth:`to_json`'s dict and comes back through :meth:`from_json`, which
checks every field's type and reads the run's records
(:mod:`faultdriver.scenario.runstate`), so a report that reaches a
renderer has the shape the renderers read.  Everywhere else it is this
object, with its own :attr:`~VariantReport.verdict`.
"""

import dataclasses
import time
import typing

from faultdriver.scenario import runstate
from faultdriver.scenario import tiers

JSON = typing.Dict[str, typing.Any]

#: The verdicts a run can have (:attr:`VariantReport.verdict`).
OK = 'ok'
BUG_REPRODUCED = 'bug reproduced'
BUG_NOT_REPRODUCED = 'bug not reproduced'
NOT_MET = 'expectations not met'
STEP_FAILED = 'step failed'
INTERNAL_ERROR = 'internal error'
#: The verdicts of a run that did what its scenario says (exit 0).
PASSING = (OK, BUG_REPRODUCED)


@dataclasses.dataclass
class VariantReport:
    """Filled as the run goes (:mod:`faultdriver.scenario.play`), then
    read-only: the launcher, the renderers and the sweep take it as it
    is, its :attr:`verdict` included."""

    variant: str
    mode: str
    backend: str
    #: The Nova under test (faultdriver.novaundertest.current()).
    nova: typing.Optional[JSON] = None
    scenario: typing.Optional[str] = None
    expect: str = 'ok'
    #: Candidate tracker fixes the variant ran with.
    patches: typing.List[str] = dataclasses.field(default_factory=list)
    topology: typing.Optional[JSON] = None
    timeline: typing.List[runstate.TimelineEntry] = dataclasses.field(
        default_factory=list)
    step_failed: typing.Optional[str] = None
    #: What the run ended in (faultdriver.scenario.collect).
    state: typing.Optional[runstate.RunState] = None
    expectations: typing.Optional[
        typing.List[runstate.ExpectationResult]] = None
    compute_log: typing.Optional[str] = None
    #: The lines a graceful stop logged (collect.shutdown_lines), if any.
    shutdown_log: typing.Optional[typing.List[str]] = None
    #: Features or fixes the changed Nova under test made unavailable.
    unavailable: typing.Optional[typing.Dict[str, str]] = None
    #: The scenario was bad input (exit 2), or faultdriver failed.
    scenario_error: typing.Optional[str] = None
    internal_error: typing.Optional[str] = None
    steps_started_at: typing.Optional[float] = None
    setup_seconds: typing.Optional[float] = None
    steps_seconds: typing.Optional[float] = None
    wall_seconds: typing.Optional[float] = None
    #: CPU seconds per phase (the embedded Nova only, see play.mark_cpu).
    cpu_seconds: typing.Optional[typing.Dict[str, float]] = None
    #: The process tier's start-up timings and kept log directory.
    stack_seconds: typing.Optional[JSON] = None
    logs: typing.Optional[str] = None
    #: Monotonic and CPU clocks at the run's start: not reported.
    started: typing.Optional[float] = dataclasses.field(
        default=None, repr=False, compare=False)
    cpu_started: typing.Optional[float] = dataclasses.field(
        default=None, repr=False, compare=False)

    _PRIVATE = ('started', 'cpu_started')
    #: Written even when None.
    _ALWAYS = ('step_failed', 'internal_error', 'nova')

    @classmethod
    def begin(cls, scenario: typing.Any, variant: str, mode: str,
              backend: str, topology: typing.Optional[JSON] = None,
              cpu: bool = False) -> 'VariantReport':
        """The report of a run of ``scenario``'s ``variant`` starting
        now (``cpu``: also count this process's CPU seconds)."""
        return cls(variant=variant, mode=mode, backend=backend,
                   scenario=scenario.name,
                   expect=scenario.variants[variant].get('expect', 'ok'),
                   patches=scenario.patches(variant), topology=topology,
                   started=time.monotonic(),
                   cpu_started=time.process_time() if cpu else None,
                   cpu_seconds={} if cpu else None)

    @classmethod
    def failed(cls, variant: str, mode: str, backend: str,
               scenario_error: typing.Optional[str] = None,
               internal_error: typing.Optional[str] = None
               ) -> 'VariantReport':
        """The report of a run that did not play its steps."""
        return cls(variant=variant, mode=mode, backend=backend,
                   scenario_error=scenario_error,
                   internal_error=internal_error)

    def ended(self) -> None:
        """Record the wall time since ``begin``."""
        assert self.started is not None, 'ended() before begin()'
        self.wall_seconds = round(time.monotonic() - self.started, 2)

    @property
    def ran(self) -> bool:
        """Whether the variant got as far as a state to report."""
        return self.state is not None and self.expectations is not None

    @property
    def verdict(self) -> str:
        """One of: ok, bug reproduced, bug not reproduced, expectations
        not met, step failed, internal error.

        Any internal error is one, also after the expectations were
        checked (a failing cleanup, an error collecting state): a run
        that cannot be trusted to the end is not ok.
        """
        if self.expectations is None or self.internal_error:
            return INTERNAL_ERROR
        if self.step_failed:
            return STEP_FAILED
        met = all(e.met for e in self.expectations)
        if self.expect == 'bug':
            return BUG_REPRODUCED if met else BUG_NOT_REPRODUCED
        return OK if met else NOT_MET

    def to_json(self) -> JSON:
        """The report as JSON data (fields never set are left out), its
        verdict last (a report refused as bad input has none)."""
        data: JSON = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in self._PRIVATE or (
                    value is None and f.name not in self._ALWAYS):
                continue
            if f.name == 'state':
                value = value.to_json()
            elif f.name in ('timeline', 'expectations'):
                value = [item.to_json() for item in value]
            data[f.name] = value
        if self.scenario_error is None:
            data['verdict'] = self.verdict
        return data

    @classmethod
    def from_json(cls, data: typing.Any,
                  where: str = 'report') -> 'VariantReport':
        """From ``to_json``'s dict; ValueError naming ``where`` and the
        field when a field is unknown or of the wrong kind.  A report
        written before reports named their backend is the embedded
        Nova's (the only runner that left it out).  Its ``verdict`` is
        the record's own: a saved one is not read."""
        if not isinstance(data, dict):
            raise ValueError('%s is %s, not a mapping' % (
                where, type(data).__name__))
        fields = {f.name: f for f in dataclasses.fields(cls)
                  if f.name not in cls._PRIVATE}
        unknown = sorted(set(data) - set(fields) - {'verdict'})
        if unknown:
            raise ValueError('%s has unknown fields %s' % (
                where, ', '.join(unknown)))
        data = dict(data)
        data.pop('verdict', None)
        data.setdefault('backend', tiers.DEFAULT)
        for name in ('variant', 'mode', 'backend'):
            if name not in data:
                raise ValueError('%s has no %r' % (where, name))
        for name, value in data.items():
            kinds = _KINDS.get(name, ())
            if value is not None and kinds and (
                    not isinstance(value, kinds) or
                    isinstance(value, bool) and bool not in kinds):
                raise ValueError('%s.%s is %s, not %s' % (
                    where, name, type(value).__name__,
                    ' or '.join(k.__name__ for k in kinds)))
        if data['backend'] not in tiers.NAMES:
            raise ValueError('%s.backend %r; expected one of %s' % (
                where, data['backend'], ', '.join(tiers.NAMES)))
        if data.get('state') is not None:
            data['state'] = runstate.RunState.from_json(
                data['state'], where + '.state')
        data['timeline'] = [
            runstate.TimelineEntry.from_json(
                entry, '%s.timeline[%d]' % (where, i))
            for i, entry in enumerate(data.get('timeline') or ())]
        if data.get('expectations') is not None:
            data['expectations'] = [
                runstate.ExpectationResult.from_json(
                    e, '%s.expectations[%d]' % (where, i))
                for i, e in enumerate(data['expectations'])]
        return cls(**data)


#: Field -> the JSON kinds it may hold (None always allowed).
_KINDS: typing.Dict[str, typing.Tuple[type, ...]] = {
    'variant': (str,), 'mode': (str,), 'backend': (str,), 'nova': (dict,),
    'scenario': (str,), 'expect': (str,), 'patches': (list,),
    'topology': (dict,), 'timeline': (list,), 'step_failed': (str,),
    'state': (dict,), 'expectations': (list,), 'compute_log': (str,),
    'shutdown_log': (list,),
    'unavailable': (dict,), 'scenario_error': (str,),
    'internal_error': (str,),
    'steps_started_at': (int, float), 'setup_seconds': (int, float),
    'steps_seconds': (int, float), 'wall_seconds': (int, float),
    'cpu_seconds': (dict,), 'stack_seconds': (dict,), 'logs': (str,),
}
