"""A scenario's steps and expectations as declared records.

In the file each is a mapping of one key, ``{kind: {args}}`` (the schema
insists); :mod:`faultdriver.scenario.model` turns them into these once,
so no consumer unpacks the mapping itself, and ``to_json`` gives the
file's form back for a scenario a tool writes (a sweep's case, a
finding's reproducer).
"""

import dataclasses
import typing


@dataclasses.dataclass(frozen=True)
class _KindArgs:
    #: What the file calls one (``step``), for the refusal's words.
    WHAT: typing.ClassVar[str]

    kind: str
    args: typing.Dict[str, typing.Any]

    @classmethod
    def from_json(cls, item: typing.Any) -> typing.Self:
        """From the file's ``{kind: args}`` (``args`` may be null)."""
        if not isinstance(item, dict) or len(item) != 1:
            raise ValueError('a %s is a mapping of one kind to its '
                             'arguments, not %r' % (cls.WHAT, item))
        [(kind, args)] = item.items()
        return cls(kind, dict(args or {}))

    def to_json(self) -> typing.Dict[str, typing.Dict[str, typing.Any]]:
        return {self.kind: dict(self.args)}

    def describe(self) -> str:
        """``kind key=value ...``: one line of a listing or a timeline."""
        return '%s %s' % (self.kind, ' '.join(
            '%s=%s' % (k, v) for k, v in self.args.items()))


class StepSpec(_KindArgs):
    """One step: a kind of ``schema.yaml``'s ``step`` and its arguments."""

    WHAT = 'step'


class ExpectationSpec(_KindArgs):
    """One expectation: a kind of ``schema.yaml``'s ``expectation`` (an
    invariant among them) and its arguments."""

    WHAT = 'expectation'


#: ``run(steps, **args)``: carries the step out on the run's
#: ``faultdriver.scenario.steps.Steps``; returns what it did (text) or
#: None.  Declare what it needs of a tier with ``tiers.needs``.
Run = typing.Callable[..., typing.Optional[str]]
#: ``export(writer, where, **args)``: writes the exported test's lines
#: (``writer``: faultdriver.export.writer.Writer).
Export = typing.Callable[..., None]


@dataclasses.dataclass(frozen=True)
class StepKind:
    """One step kind, declared once (:mod:`faultdriver.scenario.stepkinds`
    registers it)."""

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
