"""What a scenario needs of the tier it runs on, checked when it loads.

Each step kind, expectation, rule action and topology key that needs
what only some tiers provide declares it where it is defined
(:func:`faultdriver.scenario.tiers.needs` on a step's ``do_`` method,
an expectation's check or the scenario's reader of the key;
``needs(term, rule)`` on an action class).  This module collects those
declarations for one scenario (:func:`demands`) and compares them with
what a tier provides (``Tier.provides``), so a scenario that needs what
a tier lacks is refused before anything starts, naming the step:
``steps[3].wait-guest: needs a real hypervisor; backend embedded lacks
it``.  The exporter asks the same declarations of what Nova's
functional-test means provide (:data:`faultdriver.export.PROVIDES`).

Imports no tier: the tiers are :mod:`faultdriver.scenario.tiers`'s
records.
"""

import dataclasses
import typing

from faultdriver import rules as rules_module
from faultdriver.scenario import expect
from faultdriver.scenario import specs
from faultdriver.scenario import stepkinds
from faultdriver.scenario import steps as steps_module
from faultdriver.scenario import tiers

#: A loaded scenario (faultdriver.scenario.model.Scenario: it reaches
#: this module through its semantic check, so it is not imported here;
#: not annotated yet).
Scenario = typing.Any

#: What needs a provision, or lacks one: a set of them.
Provisions = typing.FrozenSet[tiers.Provision]
#: A key path in a scenario file (``('steps', 3, 'wait-guest')``).
Where = typing.Tuple[typing.Union[str, int], ...]


@dataclasses.dataclass(frozen=True)
class Demand:
    """One part of a scenario that needs provisions of its tier."""

    #: Its key path in the file (``['steps', 3, 'wait-guest']``).
    where: Where
    #: What it is beyond its key (a rule's action term), or ''.
    what: str
    provisions: Provisions


def step_needs(step: specs.StepSpec) -> Provisions:
    """What a StepSpec needs (its ``do_`` method's declaration, or a
    registered kind's ``run``)."""
    registered = stepkinds.get(step.kind)
    method = registered.run if registered is not None else getattr(
        steps_module.Steps, 'do_' + step.kind.replace('-', '_'), None)
    return tiers.needs_of(method, step.args)


def expectation_needs(expectation: specs.ExpectationSpec) -> Provisions:
    """What an ExpectationSpec needs (its check's declaration)."""
    return tiers.needs_of(expect.KINDS.get(expectation.kind),
                          expectation.args)


def rule_needs(text: object) -> typing.List[typing.Tuple[str, Provisions]]:
    """``[(what, provisions)]`` of rule ``text``: its point, if only some
    tiers can fire it (:func:`faultdriver.scenario.tiers.point_needs`),
    then each action term that needs some (its action class's
    ``needs``); ``what`` names the point or the term."""
    from faultdriver import actions as actions_module
    from faultdriver import points as points_module

    try:
        rule = rules_module.parse(text)
    except rules_module.RuleError:
        return []       # model.check says what is wrong with it (a
        # scenario only read, as scenario run reads it, may have one)
    found: typing.List[typing.Tuple[str, Provisions]] = []
    point = points_module.catalogue().get(rule.point)
    if point is not None:   # an unknown point: model.check says so
        needed = tiers.point_needs(point.name, point.kind)
        if needed:
            found.append(('point %s' % point.name, needed))
    actions = actions_module.load_all()
    for term in rule.terms:
        action = actions.get(term.action)
        try:
            needed = action.needs(term, rule) if action else frozenset()
        except ValueError:
            continue    # bad arguments: model.check says which
        if needed:
            found.append((str(term), needed))
    return found


def topology_needs(scenario: Scenario
                   ) -> typing.List[typing.Tuple[str, Provisions]]:
    """``[(key, provisions)]`` of the scenario's topology keys that need
    some (the declaration on the Scenario's reader of the key)."""
    found: typing.List[typing.Tuple[str, Provisions]] = []
    for key, value in scenario.data.get('topology', {}).items():
        reader = getattr(type(scenario), key.replace('-', '_'), None)
        needed = tiers.needs_of(getattr(reader, 'fget', reader)) \
            if value is not None else frozenset()
        if needed:
            found.append((key, needed))
    return found


def _rule_texts(scenario: Scenario
                ) -> typing.Iterator[typing.Tuple[Where, typing.Any]]:
    """``(key path, rule text)`` of every rule the scenario writes: its
    ``rules``, then each step's (``rule``, ``rules``)."""
    for host, texts in scenario.data.get('rules', {}).items():
        for i, text in enumerate(texts):
            yield ('rules', host, i), text
    for i, step in enumerate(scenario.steps):
        where = ('steps', i, step.kind)
        if 'rule' in step.args:
            yield where + ('rule',), step.args['rule']
        written = step.args.get('rules') or ()
        if isinstance(written, dict):           # recover: {host: [...]}
            for host, texts in written.items():
                for j, text in enumerate(texts):
                    yield where + ('rules', host, j), text
        else:
            for j, text in enumerate(written):
                yield where + ('rules', j), text


def demands(scenario: Scenario) -> typing.List[Demand]:
    """Every Demand of ``scenario``, in file order: topology, rules,
    steps, expectations (every variant's, then each variant's own)."""
    found = [Demand(('topology', key), '', needed)
             for key, needed in topology_needs(scenario)]
    standins = [host for host in scenario.data.get('rules', {})
                if host in tiers.STAND_INS and host not in scenario.hosts]
    # A stand-in's rules fire at the stand-in, not beneath a compute's
    # client: they need the stand-in, not what their points need.
    found += [Demand(('rules', host), 'rules for the %s stand-in' % host,
                     frozenset({tiers.Provision.SERVICE_SIDE}))
              for host in standins]
    for where, text in _rule_texts(scenario):
        if where[:1] == ('rules',) and where[1] in standins:
            continue
        found += [Demand(where, what, needed)
                  for what, needed in rule_needs(text)]
    for i, step in enumerate(scenario.steps):
        needed = step_needs(step)
        if needed:
            found.append(Demand(('steps', i, step.kind), '', needed))
    blocks: typing.List[typing.Tuple[Where, typing.Any]] = [
        (('expectations',), scenario.common_expectations())]
    blocks += [(('variants', v, 'expectations'), scenario.own_expectations(v))
               for v in scenario.variants]
    for prefix, block in blocks:
        for i, expectation in enumerate(block):
            needed = expectation_needs(expectation)
            if needed:
                found.append(Demand(prefix + (i, expectation.kind), '',
                                    needed))
    return found


def needed(scenario: Scenario) -> Provisions:
    """Every provision the scenario needs."""
    return frozenset().union(*(d.provisions for d in demands(scenario)))


def describe(provisions: typing.Iterable[tiers.Provision]) -> str:
    """``a real hypervisor and block storage``."""
    texts = sorted(p.text for p in provisions)
    return ' and '.join(texts) if len(texts) < 3 else \
        ', '.join(texts[:-1]) + ' and ' + texts[-1]


def lacking(scenario: Scenario,
            provides: typing.Iterable[tiers.Provision]
            ) -> typing.Optional[typing.Tuple[Demand, Provisions]]:
    """``(Demand, provisions missing)`` of the first part of
    ``scenario`` that needs what ``provides`` (a set of Provision) lacks,
    or None."""
    for demand in demands(scenario):
        missing = demand.provisions - frozenset(provides)
        if missing:
            return demand, missing
    return None


def refusal(scenario: Scenario, tier: tiers.Tier
            ) -> typing.Optional[typing.Tuple[typing.List[typing.Union[
                str, int]], str]]:
    """Why ``scenario`` cannot run on ``tier`` (a tiers.Tier): ``(key
    path, message)`` naming the first part that needs what the tier
    lacks; None if it can."""
    found = lacking(scenario, tier.provides)
    if found is None:
        return None
    demand, missing = found
    return list(demand.where), '%sneeds %s; backend %s lacks it%s' % (
        demand.what + ' ' if demand.what else '', describe(missing),
        tier.name, reasons(missing))


def reasons(provisions: typing.Iterable[tiers.Provision]) -> str:
    """Why a tier lacking ``provisions`` cannot fire a point, `` (WHY)``,
    for those that name point families (``Provision.points``: the
    reason is how the tier fakes a service, not evident from the
    provision's name); '' for the others (their name says it)."""
    whys = [p.why.replace('``', '') for p in sorted(
        provisions, key=lambda p: p.name) if p.points]
    return ' (%s)' % '; '.join(whys) if whys else ''


def advice(scenario: Scenario) -> str:
    """What the scenario's ``backends`` key should say: every tier that
    provides all it needs."""
    providers = tiers.providing(needed(scenario))
    if not providers:
        return 'no backend provides everything it needs'
    return 'write "backends: [%s]"' % ', '.join(providers)
