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
Newer bundled kinds are records from the start (:data:`BUILTIN`, from
:mod:`faultdriver.scenario.serverops`,
:mod:`faultdriver.scenario.tasksteps` and
:mod:`faultdriver.scenario.controlsteps`).
"""

import typing

from faultdriver.scenario import controlsteps
from faultdriver.scenario import serverops
from faultdriver.scenario import specs
from faultdriver.scenario import tasksteps

Run = specs.Run
Export = specs.Export
StepKind = specs.StepKind

#: The bundled records (their module declares them with
#: ``specs.StepKind``, so it does not import this one).
BUILTIN = serverops.KINDS + tasksteps.KINDS + controlsteps.KINDS
_registered: typing.Dict[str, StepKind] = {k.name: k for k in BUILTIN}
_version = [0]


def register(kind: StepKind) -> StepKind:
    """Add ``kind``; ValueError if its name is taken (a bundled kind's
    is checked when the schema is built)."""
    if kind.name in _registered:
        raise ValueError('step kind %r is registered already' % kind.name)
    _registered[kind.name] = kind
    _version[0] += 1
    return kind


def unregister(name: str) -> None:
    del _registered[name]
    _version[0] += 1


def version() -> int:
    """Changes whenever the registry does."""
    return _version[0]


def get(name: str) -> typing.Optional[StepKind]:
    """The registered kind ``name``, or None (a ``Steps.do_`` kind or
    none)."""
    return _registered.get(name)


def registered() -> typing.Tuple[StepKind, ...]:
    return tuple(_registered.values())
