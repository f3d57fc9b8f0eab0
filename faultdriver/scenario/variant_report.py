"""The report of one scenario variant run: the one record every tier's
runner fills, the worker writes, the launcher and the sweep read, and
``scenario report`` validates.

A run builds it with :meth:`VariantReport.begin` (or, when it cannot
run, :meth:`VariantReport.failed`); it crosses processes as
:meth:`to_json`'s dict and comes back through :meth:`from_json`, which
checks every field's type and the journal entries in its state
(:class:`faultdriver.journal.JournalEntry`), so a report that reaches a
renderer has the shape the renderers read.
"""

import dataclasses
import time
import typing

from faultdriver import journal
from faultdriver.scenario import tiers


@dataclasses.dataclass
class VariantReport:
    variant: str
    mode: str
    backend: str
    #: The Nova under test (faultdriver.novaundertest.current()).
    nova: typing.Optional[dict] = None
    scenario: typing.Optional[str] = None
    expect: str = 'ok'
    #: Candidate tracker fixes the variant ran with.
    patches: list = dataclasses.field(default_factory=list)
    topology: typing.Optional[dict] = None
    timeline: list = dataclasses.field(default_factory=list)
    step_failed: typing.Optional[str] = None
    #: What the run ended in (faultdriver.scenario.collect).
    state: typing.Optional[dict] = None
    expectations: typing.Optional[list] = None
    compute_log: typing.Optional[str] = None
    #: The lines a graceful stop logged (collect.shutdown_lines), if any.
    shutdown_log: typing.Optional[list] = None
    #: Features or fixes the changed Nova under test made unavailable.
    unavailable: typing.Optional[dict] = None
    #: The scenario was bad input (exit 2), or faultdriver failed.
    scenario_error: typing.Optional[str] = None
    internal_error: typing.Optional[str] = None
    #: Set by whoever reads the run (launch.verdict).
    verdict: typing.Optional[str] = None
    steps_started_at: typing.Optional[float] = None
    setup_seconds: typing.Optional[float] = None
    steps_seconds: typing.Optional[float] = None
    wall_seconds: typing.Optional[float] = None
    #: CPU seconds per phase (the embedded Nova only, see play.mark_cpu).
    cpu_seconds: typing.Optional[dict] = None
    #: The process tier's start-up timings and kept log directory.
    stack_seconds: typing.Optional[dict] = None
    logs: typing.Optional[str] = None
    #: Monotonic and CPU clocks at the run's start: not reported.
    started: typing.Optional[float] = dataclasses.field(
        default=None, repr=False, compare=False)
    cpu_started: typing.Optional[float] = dataclasses.field(
        default=None, repr=False, compare=False)

    _PRIVATE = ('started', 'cpu_started')

    @classmethod
    def begin(cls, scenario, variant, mode, backend, topology=None,
              cpu=False):
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
    def failed(cls, variant, mode, backend, scenario_error=None,
               internal_error=None):
        """The report of a run that did not play its steps."""
        return cls(variant=variant, mode=mode, backend=backend,
                   scenario_error=scenario_error,
                   internal_error=internal_error)

    def ended(self):
        """Record the wall time since ``begin``."""
        self.wall_seconds = round(time.monotonic() - self.started, 2)

    def to_json(self):
        """The report as JSON data (fields never set are left out)."""
        return {f.name: getattr(self, f.name)
                for f in dataclasses.fields(self)
                if f.name not in self._PRIVATE and (
                    getattr(self, f.name) is not None or f.name in (
                        'step_failed', 'internal_error', 'nova'))}

    @classmethod
    def from_json(cls, data, where='report'):
        """From ``to_json``'s dict; ValueError naming ``where`` and the
        field when a field is unknown or of the wrong kind.  A report
        written before reports named their backend is the embedded
        Nova's (the only runner that left it out)."""
        if not isinstance(data, dict):
            raise ValueError('%s is %s, not a mapping' % (
                where, type(data).__name__))
        fields = {f.name: f for f in dataclasses.fields(cls)
                  if f.name not in cls._PRIVATE}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ValueError('%s has unknown fields %s' % (
                where, ', '.join(unknown)))
        data = dict(data)
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
            data['state'] = _state(data['state'], where + '.state')
        return cls(**data)


def _state(state, where):
    """The state with its journal entries in the one shape."""
    state = dict(state)
    faults = state.get('faults', [])
    if not isinstance(faults, list):
        raise ValueError('%s.faults is %s, not list' % (
            where, type(faults).__name__))
    entries = []
    for i, entry in enumerate(faults):
        try:
            entries.append(journal.JournalEntry.from_json(entry).to_json())
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValueError('%s.faults[%d]: %s' % (where, i, exc))
    state['faults'] = entries
    return state


#: Field -> the JSON kinds it may hold (None always allowed).
_KINDS = {
    'variant': (str,), 'mode': (str,), 'backend': (str,), 'nova': (dict,),
    'scenario': (str,), 'expect': (str,), 'patches': (list,),
    'topology': (dict,), 'timeline': (list,), 'step_failed': (str,),
    'state': (dict,), 'expectations': (list,), 'compute_log': (str,),
    'shutdown_log': (list,),
    'unavailable': (dict,), 'scenario_error': (str,),
    'internal_error': (str,), 'verdict': (str,),
    'steps_started_at': (int, float), 'setup_seconds': (int, float),
    'steps_seconds': (int, float), 'wall_seconds': (int, float),
    'cpu_seconds': (dict,), 'stack_seconds': (dict,), 'logs': (str,),
}
