"""The sweep's cases follow what each action class declares.

A sweep case is a rule that its action takes: at a point of a kind it
acts at (``kinds``; an action that acts anywhere at the host's own
steps), in a phase it acts at (``phases``), passing its ``check``, with
what it ``needs`` provided by the tier.  These tests change those
declarations, registered where the sweep and the rule loader find
actions (``faultdriver.actions.load_all``), and show the cases moving
with them; and they hold the cases against what a scenario's rule
loader takes, for every point a tier fires.
"""

import typing

import pytest

from faultdriver import actions as actions_module
from faultdriver.actions import crash as crash_action
from faultdriver.actions import periodic as periodic_action
from faultdriver.actions import rpc as rpc_action
from faultdriver import conf
from faultdriver import points
from faultdriver import rules
from faultdriver.scenario import provisions
from faultdriver.scenario import tiers
from faultdriver.sweep import cases
from faultdriver.sweep import trace

CALL = 'rpc.check_can_live_migrate_source'      # a call, no call monitor
MONITORED = 'rpc.check_can_live_migrate_destination'
CAST = 'rpc.live_migration'
DRIVER = 'live_migration'
LOCKED = 'tracker.instance_claim'               # under the tracker lock
POINTS = (CALL, MONITORED, CAST, DRIVER, LOCKED)
HYPERVISOR = frozenset({tiers.Provision.REAL_HYPERVISOR})


def built(action: str, backend: str) -> typing.Set[typing.Tuple[str, str]]:
    """``(point, phase)`` of the cases of sweep class ``action`` at
    every phase of :data:`POINTS` on ``backend``."""
    catalogue = points.catalogue()
    steps = [trace.TracedStep(name, 'src', phase) for name in POINTS
             for phase in trace.phases(catalogue[name])]
    return {(case.point, case.phase) for case in cases.generate(
        steps, (action,), backend, hosts=('src', 'dest'))}


def every_phase(*names: str) -> typing.Set[typing.Tuple[str, str]]:
    catalogue = points.catalogue()
    return {(name, phase) for name in names
            for phase in trace.phases(catalogue[name])}


class LateDrop(rpc_action.Drop):
    phases = ('after',)


class HypervisorDrop(rpc_action.Drop):
    @classmethod
    def needs(cls, term, rule):
        return HYPERVISOR


class CallTwice(rpc_action.Twice):
    @classmethod
    def check(cls, term, point):
        super().check(term, point)
        if point.rpc != 'call':
            raise ValueError('calls only')


class AnyPhaseLostReply(rpc_action.LostReply):
    phases = None

    @classmethod
    def needs(cls, term, rule):
        return frozenset()


class RpcCrash(crash_action.Crash):
    kinds = ('rpc',)


class BeforeCrash(crash_action.Crash):
    phases = ('before',)


class FreePeriodic(periodic_action.Periodic):
    @classmethod
    def needs(cls, term, rule):
        return frozenset()


class HypervisorPeriodic(periodic_action.Periodic):
    @classmethod
    def needs(cls, term, rule):
        return HYPERVISOR


@pytest.fixture
def register(monkeypatch):
    """Register action classes under names, in place of the installed
    ones, where the sweep and the rule loader look them up."""
    installed = actions_module.load_all()

    def register(**classes: type) -> None:
        mapping = dict(installed, **classes)
        monkeypatch.setattr(actions_module, 'load_all', lambda: mapping)
    return register


@pytest.mark.parametrize('action, backend, expected', [
    ('drop', 'process',
     {(CALL, 'before'), (MONITORED, 'before'), (CAST, 'before')}),
    # The embedded Nova's transport sends no call-monitor heartbeats.
    ('drop', 'embedded', {(CALL, 'before'), (CAST, 'before')}),
    ('lostreply', 'process', {(CALL, 'before'), (CALL, 'after'),
                              (MONITORED, 'before'), (MONITORED, 'after')}),
    ('twice', 'embedded', {(CALL, 'before'), (MONITORED, 'before'),
                           (CAST, 'before')}),
    ('crash', 'embedded', every_phase(DRIVER, LOCKED)),
    ('peer-periodic', 'process', every_phase(DRIVER) | {
        (LOCKED, rules.UNLOCKED)}),
])
def test_the_installed_declarations_place_the_cases(action, backend,
                                                    expected):
    """The cases the installed action classes give at a call, a
    monitored call, a cast, a driver step and a tracker step (what the
    changed declarations below are compared with)."""
    assert built(action, backend) == expected


@pytest.mark.parametrize('action, name, declared, backend, expected', [
    ('drop', 'drop', LateDrop, 'process',
     {(CALL, 'after'), (MONITORED, 'after'), (CAST, 'after')}),
    ('drop', 'drop', HypervisorDrop, 'process', set()),
    ('drop', 'drop', HypervisorDrop, 'libvirt',
     {(CALL, 'before'), (MONITORED, 'before'), (CAST, 'before')}),
    ('twice', 'twice', CallTwice, 'embedded',
     {(CALL, 'before'), (MONITORED, 'before')}),
    ('lostreply', 'lostreply', AnyPhaseLostReply, 'embedded',
     {(CALL, 'before'), (CALL, 'after'), (MONITORED, 'before'),
      (MONITORED, 'after')}),
    ('crash', 'crash', RpcCrash, 'embedded',
     every_phase(CALL, MONITORED, CAST)),
    ('crash', 'crash', BeforeCrash, 'embedded',
     {(DRIVER, 'before'), (LOCKED, 'before')}),
    # peer-periodic's cases are the same on every tier: where it needs
    # nothing of any.
    ('peer-periodic', 'periodic', FreePeriodic, 'embedded',
     every_phase(DRIVER, LOCKED)),
    ('peer-periodic', 'periodic', HypervisorPeriodic, 'libvirt', set()),
], ids=lambda value: getattr(value, '__name__', None))
def test_a_changed_declaration_moves_the_cases(register, action, name,
                                               declared, backend, expected):
    """An action class whose kinds, phases, check or needs change moves
    the sweep's cases with it: the sweep keeps no copy of them."""
    register(**{name: declared})
    assert built(action, backend) == expected


def loads(text: str, backend: str) -> bool:
    """Whether a scenario's rule ``text`` loads on ``backend``: as
    nova.conf validates it, with what it needs provided there."""
    try:
        conf.RuleType()(text)
    except rules.RuleError:
        return False
    return not any(tiers.get(backend).lacks(needed)
                   for _, needed in provisions.rule_needs(text))


@pytest.mark.parametrize('backend', sorted(tiers.TIERS))
def test_each_case_is_a_rule_its_tier_loads(backend):
    """Every case of every class at every point the tier fires is a rule
    that loads there; the classes written as the action alone (a
    message's fate, a lost connection, a crash...) have a case wherever
    that rule loads at a point of a kind the action acts at."""
    tier = tiers.get(backend)
    installed = actions_module.load_all()
    plain = ('crash', 'periodic', 'hang', 'shutdown', 'connfail', 'drop',
             'lostreply', 'twice')
    for name, point in sorted(points.catalogue().items()):
        if not tier.fires(name, point.kind):
            continue
        kinds = {action: installed[action].kinds or cases.HOST_KINDS
                 for action in plain}
        for phase in trace.phases(point):
            for action in cases.ACTIONS:
                case = cases.Case(name, 'src', phase, action, peer='dest',
                                  call='delete')
                rule = case.rule(backend)
                if rule is not None:
                    assert loads(rule, backend), (case.id, rule)
                if action in plain:
                    written = '%s.%s: 1*%s' % (name, phase, action)
                    taken = point.kind in kinds[action] and \
                        loads(written, backend)
                    assert rule == (written if taken else None), case.id


def test_an_action_the_sweep_writes_must_be_registered(monkeypatch):
    """A sweep class whose action is not installed is an error naming
    it, not a sweep without its cases."""
    installed = dict(actions_module.load_all())
    del installed['drop']
    monkeypatch.setattr(actions_module, 'load_all', lambda: installed)
    with pytest.raises(ValueError, match="no action 'drop' is registered"):
        built('drop', 'process')
