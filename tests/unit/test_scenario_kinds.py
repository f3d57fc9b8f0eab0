"""The scenario schema, the step interpreter and the expectations name
the same kinds.

A step kind in ``schema.yaml`` without a ``Steps.do_*`` method passes
validation and then fails the run at that step; a method or an
expectation check the schema lacks can never be reached.  Nothing but
this test ties the three together.  Imports no Nova (the interpreter
and ``expect`` import it only when a run starts).
"""

from faultdriver.scenario import expect
from faultdriver.scenario import invariants
from faultdriver.scenario import model
from faultdriver.scenario import stepkinds
from faultdriver.scenario import steps


def schema_kinds(definition):
    """The kinds ``$defs.<definition>`` allows: one key per item."""
    spec = model.schema()['$defs'][definition]
    assert (spec['minProperties'], spec['maxProperties']) == (1, 1)
    assert spec['additionalProperties'] is False
    return set(spec['properties'])


def interpreter_kinds(steps_class):
    """Step kinds a ``Steps`` class runs: ``do_wait_server`` runs
    ``wait-server`` (how ``Steps.run`` finds the method), and the
    registered kinds (``Steps.run`` asks the registry first)."""
    return {name[len('do_'):].replace('_', '-')
            for name in dir(steps_class) if name.startswith('do_')} | {
                kind.name for kind in stepkinds.registered()}


def difference(declared, implemented):
    return {'only in schema.yaml': sorted(declared - implemented),
            'only in the code': sorted(implemented - declared)}


def test_schema_step_kinds_are_the_interpreters():
    declared = schema_kinds('step')
    implemented = interpreter_kinds(steps.Steps)
    assert declared == implemented, difference(declared, implemented)


def test_schema_expectation_kinds_are_expects():
    declared = schema_kinds('expectation')
    implemented = set(expect.KINDS)
    assert declared == implemented, difference(declared, implemented)


def test_invariants_are_expectation_kinds():
    """What the sweep adds to every case can be checked."""
    groups = invariants.names() + invariants.swept() + invariants.last()
    assert set(groups) <= set(expect.KINDS)


def test_the_comparison_sees_a_missing_kind():
    """The helper reads kinds as ``Steps.run`` does: a method more is a
    kind more (so the equality above can fail)."""
    class MoreSteps(steps.Steps):
        def do_power_off(self, server):
            """A step the schema does not have."""

    assert interpreter_kinds(MoreSteps) - schema_kinds('step') == \
        {'power-off'}
