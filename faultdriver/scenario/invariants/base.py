"""What an invariant is: the one declaration every user of it reads.

An invariant is a property of the cloud that must hold after any fault
once the operator recovered.  Its :class:`Invariant` record says, once,
its name (the expectation's key in a scenario file), what it means in
one sentence (the exported test's ``Invariant:``/``FIXME`` comment and
the scenario reference), its check (what ``scenario run`` and a sweep
evaluate), whether a sweep adds it to every case, where it runs in the
order, the arguments its expectation takes (the schema) and how an
exported Nova test asserts it.  The registry
(:mod:`faultdriver.scenario.invariants`) holds them.
"""

import dataclasses
import typing

from faultdriver.scenario import runstate

#: What a check returns: met, the expectation's text, the actual value.
Checked = typing.Tuple[bool, str, typing.Any]
#: A check: ``check(steps, state, **args)``; ``steps`` is the run's
#: :class:`faultdriver.scenario.steps.Steps` (what the checks that act
#: on the cloud use), ``state`` its :class:`~faultdriver.scenario.
#: runstate.RunState`.
Check = typing.Callable[..., Checked]
#: The run's steps, as a check is given them (faultdriver.scenario.
#: steps.Steps, not annotated yet: what the checks that act on the
#: cloud use of it is read untyped).
Steps = typing.Any
#: The run's collected state, as a check is given it.
State = runstate.RunState
#: The exporter's writer, as an export form is given it (faultdriver.
#: export.writer.Writer: a layer above, not imported here).
Writer = typing.Any


@dataclasses.dataclass(frozen=True)
class NovaForm:
    """How an exported Nova functional test asserts an invariant: the
    helpers of :mod:`faultdriver.export.novahelpers` it uses (their keys),
    the expression that lists what breaks it, and that expression's value
    when nothing does (the test asserts ``empty == actual``; its broken
    form ``!=``)."""

    uses: typing.Tuple[str, ...]
    actual: str
    empty: str


class NotExportable(Exception):
    """An invariant's export form cannot assert it for this scenario
    (the message says why); the exporter refuses the scenario."""


#: ``export(writer, **args)``: the invariant's NovaForm, or
#: NotExportable.  ``writer`` is faultdriver.export.writer.Writer (its
#: ``scenario``, ``servers``, ``moved`` and ``server_dict()``).
Export = typing.Callable[..., NovaForm]


@dataclasses.dataclass(frozen=True)
class Invariant:
    """One invariant, declared once."""

    #: Its key in a scenario's expectations (``migrations-terminal``).
    name: str
    #: What holds, one sentence without its full stop, as an exported
    #: test's comment says it (``Invariant: ...``, ``FIXME: this is the
    #: bug: ...``) and the scenario reference begins.
    description: str
    #: ``check(steps, state, **args) -> (met, text, actual)``.
    check: Check
    #: How an exported test asserts it; None: it cannot (export refuses
    #: a scenario that expects it).
    export: typing.Optional[Export] = None
    #: ``exact(actual)``: the export form's value (a Python literal) a
    #: run that found ``actual`` (the check's third item) shows; None
    #: (or it returns None): no exact form, the export asserts only that
    #: the invariant is broken.
    exact: typing.Optional[typing.Callable[[typing.Any],
                                           typing.Optional[str]]] = None
    #: True: a sweep checks it after every case (with no arguments);
    #: False: only where a sweep adds it with arguments, or a scenario
    #: names it.
    swept: bool = True
    #: 0: checked in the scenario's order; n > 0: after all those, the
    #: n-th (it changes the state: runs periodics, moves servers).
    after: int = 0
    #: More for the scenario reference, after the description.
    details: str = ''
    #: JSON schema of its arguments besides ``broken`` (every invariant
    #: takes ``broken: true``).
    args: typing.Mapping[str, typing.Any] = dataclasses.field(
        default_factory=dict)
    #: Arguments a scenario must give (refused at load without them).
    required: typing.Tuple[str, ...] = ()

    def schema(self) -> typing.Dict[str, typing.Any]:
        """Its expectation's entry in the scenario schema."""
        text = 'Invariant: %s.' % self.description
        if self.details:
            text += ' ' + ' '.join(self.details.split())
        found: typing.Dict[str, typing.Any] = {
            'description': text, 'type': 'object',
            'additionalProperties': False,
            'properties': dict({'broken': {'$ref': '#/$defs/broken'}},
                               **self.args)}
        if self.required:
            found['required'] = list(self.required)
        return found
