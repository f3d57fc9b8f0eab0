"""The invariants: one registry, read by every user of them.

Expectations (:mod:`faultdriver.scenario.expect`), the sweep (which
invariants a case gets), the scenario schema (:func:`faultdriver.
scenario.model.schema`), the generated reference and the exporter all
read an invariant's one declaration (:class:`base.Invariant`) here.

Adding an invariant: write a module in this package with its check and
its ``base.Invariant(...)`` record, and add the record to ``BUILTIN``
below (its place there is its place in a sweep case's expectations).
Code that adds one at run time (a test, a plugin) calls
:func:`register` and, when done, :func:`unregister`.
"""

import typing

from faultdriver.scenario.invariants import attachments
from faultdriver.scenario.invariants import base
from faultdriver.scenario.invariants import ended
from faultdriver.scenario.invariants import failure
from faultdriver.scenario.invariants import outcome
from faultdriver.scenario.invariants import pcpus
from faultdriver.scenario.invariants import periodics
from faultdriver.scenario.invariants import placement
from faultdriver.scenario.invariants import tasks
from faultdriver.scenario.invariants import usable

Invariant = base.Invariant
NovaForm = base.NovaForm
NotExportable = base.NotExportable

#: The bundled invariants, in the order a sweep case lists them.
BUILTIN = (
    ended.MIGRATIONS_TERMINAL,
    ended.SERVERS_SETTLED,
    pcpus.PCPUS_NOT_SHARED,
    placement.ALLOCATIONS_CONSISTENT,
    attachments.VOLUME_ATTACHMENTS,
    attachments.PORT_BINDINGS,
    tasks.TASKS_ENDED,
    pcpus.ACCOUNTING_MATCHES_PLACEMENT,
    usable.MOVES_AGAIN,
    periodics.PERIODICS_CLEAN,
    outcome.OUTCOME_AS_CLEAN,
    outcome.OUTCOME_AFTER_SHUTDOWN,
    failure.OUTCOME_AFTER_FAILURE,
)

_registered: typing.Dict[str, Invariant] = {i.name: i for i in BUILTIN}
#: Bumped by every change, so that what is derived from the registry
#: (the scenario schema) is derived again.
_version = [0]


def register(invariant: Invariant) -> Invariant:
    """Add ``invariant`` (after the others); ValueError if its name is
    taken."""
    if invariant.name in _registered:
        raise ValueError('invariant %r is registered already'
                         % invariant.name)
    _registered[invariant.name] = invariant
    _version[0] += 1
    return invariant


def unregister(name: str) -> None:
    """Remove the invariant ``name`` (KeyError if there is none)."""
    del _registered[name]
    _version[0] += 1


def version() -> int:
    """Changes whenever the registry does."""
    return _version[0]


def registered() -> typing.Tuple[Invariant, ...]:
    """Every invariant, in registration order."""
    return tuple(_registered.values())


def get(name: str) -> typing.Optional[Invariant]:
    """The invariant ``name``, or None (not an invariant)."""
    return _registered.get(name)


def names() -> typing.Tuple[str, ...]:
    return tuple(_registered)


def swept() -> typing.Tuple[str, ...]:
    """The invariants a sweep checks after every case, in order."""
    return tuple(i.name for i in _registered.values() if i.swept)


def last() -> typing.Tuple[str, ...]:
    """The invariants checked after the others, in their order."""
    return tuple(i.name for i in sorted(
        (i for i in _registered.values() if i.after),
        key=lambda i: i.after))


def rank(kind: str) -> int:
    """Where an expectation of ``kind`` is checked: 0 in the scenario's
    order, n > 0 after those, the n-th (a stable sort key)."""
    found = _registered.get(kind)
    return found.after if found else 0
