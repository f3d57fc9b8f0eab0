"""Step kinds declared in one place: a step kind added by a module (a
test, a plugin) is one :class:`StepKind` record, registered with
:func:`register`, and every user of step kinds sees it -- the schema
(:mod:`faultdriver.scenario.schemacheck`, hence the generated
reference), the interpreter (``Steps.run``), the tier provisions
(:mod:`faultdriver.scenario.provisions`) and the exporter.

The older bundled kinds are still declared as ``Steps.do_<kind>``
methods with their entries in ``schema.yaml`` and their export in
``faultdriver/export/steps.py`` (tests/unit/test_scenario_kinds.py keeps
the three equal); a registered kind may not take one of their names.
Newer bundled kinds are records here from the start
(:mod:`faultdriver.scenario.serverops`), registered on the registry's
first use: their module imports this one.
"""

import dataclasses
import typing

#: ``run(steps, **args)``: carries the step out on the run's
#: ``faultdriver.scenario.steps.Steps``; returns what it did (text) or
#: None.  Declare what it needs of a tier with ``tiers.needs``.
Run = typing.Callable[..., typing.Optional[str]]
#: ``export(writer, where, **args)``: writes the exported test's lines
#: (``writer``: faultdriver.export.writer.Writer).
Export = typing.Callable[..., None]


@dataclasses.dataclass(frozen=True)
class StepKind:
    """One step kind, declared once."""

    #: Its key in a scenario's steps (``power-off``).
    name: str
    run: Run
    #: Its entry in the scenario schema (``description``, ``type:
    #: object``, its ``properties``...).
    schema: typing.Mapping[str, typing.Any]
    #: None: export refuses a scenario that has the step.
    export: typing.Optional[Export] = None
    #: Whether it asks Nova for an operation on a server, as a move step
    #: does (a shelve, a rebuild): a sweep's trace begins at a
    #: workflow's first such step (``model.starts_operation``).
    operates: bool = False


_registered: typing.Dict[str, StepKind] = {}
_version = [0]
_loaded: typing.List[bool] = []


def _bundled() -> None:
    """Register the bundled records once, on the registry's first use
    (not at import: :mod:`~faultdriver.scenario.serverops` imports this
    module for :class:`StepKind`)."""
    if _loaded:
        return
    _loaded.append(True)
    from faultdriver.scenario import serverops
    for kind in serverops.KINDS:
        register(kind)


def register(kind: StepKind) -> StepKind:
    """Add ``kind``; ValueError if its name is taken (a bundled kind's
    is checked when the schema is built)."""
    _bundled()
    if kind.name in _registered:
        raise ValueError('step kind %r is registered already' % kind.name)
    _registered[kind.name] = kind
    _version[0] += 1
    return kind


def unregister(name: str) -> None:
    _bundled()
    del _registered[name]
    _version[0] += 1


def version() -> int:
    """Changes whenever the registry does."""
    _bundled()
    return _version[0]


def get(name: str) -> typing.Optional[StepKind]:
    """The registered kind ``name``, or None (a ``Steps.do_`` kind or
    none)."""
    _bundled()
    return _registered.get(name)


def registered() -> typing.Tuple[StepKind, ...]:
    _bundled()
    return tuple(_registered.values())
