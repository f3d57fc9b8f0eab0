"""Sweep cases: a step (point, host, phase) x an action, each written as
a scenario file that replays it (one rule, the workflow's steps, the
invariants as expectations)."""

import copy
import dataclasses
import hashlib
import re
import typing

from faultdriver import actions as actions_module
from faultdriver import conf
from faultdriver import points as points_module
from faultdriver import rules as rules_module
from faultdriver.scenario import invariants
from faultdriver.scenario import model
from faultdriver.scenario import provisions
from faultdriver.scenario import secondcall
from faultdriver.scenario import tiers
from faultdriver.sweep import records
from faultdriver.sweep import trace

#: Action classes: the rule term each becomes at a point.  A case is
#: only where the term's action takes it, as it would take a scenario's
#: rule on the tier (:func:`taken`): the action's point kinds, phases,
#: check and needs decide, not this module.
ACTIONS = ('crash', 'raise', 'raise-generic', 'periodic', 'peer-periodic',
           'delay', 'hang', 'shutdown', 'shutdown-hold', 'second-call',
           'http-error', 'connfail', 'drop', 'lostreply', 'twice')
#: The point kinds the sweep puts an action that acts at any point (its
#: class names no ``kinds``) at: the host's own steps (the compute-side
#: faults around a service call or a message are its driver and tracker
#: steps').  An action that names its kinds (a service's answer at
#: ``network.*``..., a message's fate at ``rpc.*``) goes only there.
HOST_KINDS = ('driver', 'tracker')
DEFAULT_ACTIONS = ('crash', 'raise', 'periodic')
GENERIC_EXCEPTION = 'InternalError'
#: Between a depth-2 case's first fault and its second in its id.
THEN = ' > '


@dataclasses.dataclass(frozen=True)
class Case:
    point: str
    host: str
    phase: str
    action: str
    #: Hits of the point the workflow's setup makes before its move (in
    #: the clean run): the fault lets them pass (``N*off -> 1*action``).
    skip: int = 0
    #: The hit the fault takes runs in the host's resource periodic: no
    #: ``periodic`` case there (nova-compute runs one periodic at a time).
    in_periodic: bool = False
    #: The hit is in the service the workflow's ``restart``-th restart
    #: step of the host started (0: the first one); that step installs
    #: the rule (a restart starts a service with the step's rules only).
    restart: int = 0
    #: A second fault (``sweep --depth 2``): the case whose fault comes
    #: first; this one's rule goes to the services its ``recover``
    #: starts, its point a step of that recovery.
    first: typing.Optional['Case'] = None
    #: ``peer-periodic``: the other host whose periodic runs at the step.
    peer: typing.Optional[str] = None
    #: ``second-call``: the call made while the step is held
    #: (:data:`SECOND_CALLS`).
    call: typing.Optional[str] = None

    @property
    def label(self) -> str:
        """The action class as results and reports name it: with the
        peer host for ``peer-periodic`` (``peer-periodic(src)``), the call
        for ``second-call`` (``second-call(delete)``)."""
        extra = self.peer or self.call
        return '%s(%s)' % (self.action, extra) if extra else self.action

    @property
    def id(self) -> str:
        own = '%s.%s@%s:%s' % (self.point, self.phase, self.host,
                               self.label)
        return '%s%s%s' % (self.first.id, THEN, own) if self.first else own

    @property
    def slug(self) -> str:
        return re.sub('[^a-z0-9]+', '-', self.id.lower()).strip('-')

    def name(self, prefix: str) -> str:
        """A scenario name (at most 64 characters, unique per case)."""
        return scenario_name(prefix, self.id)

    def rule(self, backend: str = tiers.DEFAULT) -> typing.Optional[str]:
        """The rule of this case (``None``: no such fault here)."""
        term = self._term(backend)
        if term is None or not self.skip:
            return term
        where, chain = term.split(': ', 1)
        return '%s: %d*off -> %s' % (where, self.skip, chain)

    def _term(self, backend: str) -> typing.Optional[str]:
        """The case's rule without its skipped hits, if its action takes
        it on ``backend``."""
        term = self._written(points_module.catalogue()[self.point],
                             backend)
        return term if term is not None and taken(term, backend) else None

    def _written(self, point: points_module.Point,
                 backend: str) -> typing.Optional[str]:
        """The rule the action class becomes at the step (None: the
        sweep puts none there, whatever the action would take)."""
        where = '%s.%s' % (self.point, self.phase)
        if self.action in ('drop', 'lostreply', 'twice'):
            # The message's fate at the receiving compute, once.
            return '%s: 1*%s' % (where, self.action)
        if self.action == 'http-error':
            # Once: a transient error, which Nova's retry (where it has
            # one) should absorb.  Before the request: a 500 the service
            # never saw; after it: a proxy's 504 after the work was done.
            return '%s: 1*http(%d)' % (
                where, 504 if self.phase == 'after' else 500)
        if self.action == 'connfail':
            # Once: refused before the request, dropped after the work.
            return '%s: 1*connfail' % where
        if self.action == 'crash':
            return '%s: 1*crash' % where
        if self.action == 'periodic':
            return None if self.in_periodic else '%s: 1*periodic' % where
        if self.action == 'peer-periodic':
            # Only where it needs nothing of the tier (where the hit
            # thread holds no tracker lock: the embedded Nova's hosts
            # share one, so there the other host's periodic could only
            # run after the step), on every tier: the cases are the same
            # on each, so that each replays on another.
            term = '%s: 1*periodic(host=%s)' % (where, self.peer)
            return None if self.in_periodic or needs(term) else term
        if self.action == 'hang':
            # Held until recover released it after the periodics ran.
            return '%s: 1*hang' % where
        if self.action == 'second-call':
            # Held until the other user's call was answered (the
            # ``second-call`` step releases its barrier).  Not a hit in a
            # periodic (no step of the move is held there), nor in a
            # service a restart step started (the other user waits on
            # the service that runs when the move starts).
            if self.in_periodic or self.restart or not self.call:
                return None
            return '%s: 1*hang(%d, %s)' % (where, SECOND_CALL_HOLD,
                                           secondcall.BARRIER)
        if self.action == 'delay':
            # Longer than the tier's RPC timeout: the caller gives up
            # while the step goes on.
            return '%s: 1*delay(%d)' % (where, tiers.get(backend).delay)
        if self.action == 'shutdown':
            # The operator's systemctl stop: the call goes on, Nova's
            # graceful shutdown waits for it.
            return '%s: 1*shutdown' % where
        if self.action == 'shutdown-hold':
            # The call outlives the manager's wait: the timeout path.
            return '%s: 1*shutdown(hold=%d)' % (where, tiers.SHUTDOWN_HOLD)
        if self.action == 'raise':
            return '%s: 1*raise(%s)' % (where, point.raises[0]) \
                if point.raises else None
        if self.action == 'raise-generic':
            # Only where it differs from 'raise' (and, as any raise,
            # where the point can raise it).
            return '%s: 1*raise(%s)' % (where, GENERIC_EXCEPTION) \
                if point.raises[:1] != (GENERIC_EXCEPTION,) else None
        raise ValueError('unknown action class %r' % self.action)


def taken(text: str, backend: str) -> bool:
    """Whether the actions of rule ``text`` take it on tier ``backend``,
    as a scenario's rule there would be taken: each at a point of a kind
    it acts at (the host's own steps for one that acts anywhere:
    :data:`HOST_KINDS`), in a phase it acts at, its ``check`` passing
    (as nova.conf validates a rule), and what it needs provided by
    the tier (``needs``, as the scenario's load asks it).  A term whose
    action is not registered is the sweep's own error: ValueError."""
    rule = rules_module.parse(text)
    point = points_module.catalogue()[rule.point]
    actions = actions_module.load_all()
    for term in rule.terms:
        if term.action not in actions:
            raise ValueError('sweep rule %r: no action %r is registered '
                             '(%s)' % (text, term.action,
                                       ', '.join(sorted(actions))))
        if point.kind not in (actions[term.action].kinds or HOST_KINDS):
            return False
    try:
        conf.RuleType(points_module.catalogue(), actions)(text)
    except rules_module.RuleError:
        return False
    return not tiers.get(backend).lacks(needs(text))


def needs(text: str) -> provisions.Provisions:
    """What rule ``text`` needs of a tier: its point's and its actions'
    declarations, as a scenario's load collects them."""
    return frozenset().union(
        *(needed for _, needed in provisions.rule_needs(text)))


def scenario_name(prefix: str, case_id: str) -> str:
    """A scenario name for the case ``case_id`` (at most 64 characters,
    unique per case)."""
    slug = re.sub('[^a-z0-9]+', '-', case_id.lower()).strip('-')
    name = '%s-%s' % (prefix, slug)
    if len(name) <= 64:
        return name
    digest = hashlib.sha1(case_id.encode()).hexdigest()[:8]
    return '%s-%s' % (name[:55].rstrip('-'), digest)


def generate(steps: typing.Iterable[trace.TracedStep],
             actions: typing.Iterable[str] = DEFAULT_ACTIONS,
             backend: str = tiers.DEFAULT,
             hosts: typing.Iterable[str] = (),
             calls: typing.Iterable[str] = ()) -> typing.List[Case]:
    """Every (step, action) with a rule, sorted by id (a stable order the
    shards and the resume rely on); ``peer-periodic`` once for each of
    the workflow's other ``hosts``, ``second-call`` once for each of the
    workflow's ``calls`` (:func:`second_calls`)."""
    def variants(action: str, step: trace.TracedStep
                 ) -> typing.Iterable[typing.Tuple[typing.Optional[str],
                                                   typing.Optional[str]]]:
        """``(peer, call)`` of each case of ``action`` at ``step``."""
        if action == 'peer-periodic':
            return [(peer, None)
                    for peer in sorted(set(hosts) - {step.host})]
        if action == 'second-call':
            return [(None, call) for call in calls]
        return [(None, None)]
    cases = [Case(step.point, step.host, step.phase, action, step.skip,
                  step.in_periodic, step.restart, peer=peer, call=call)
             for step in steps for action in actions
             for peer, call in variants(action, step)]
    return sorted((c for c in cases if c.rule(backend)), key=lambda c: c.id)


#: Seconds a ``second-call`` case's hang holds at most (the other user
#: releases it once answered; this only bounds a run gone wrong).
SECOND_CALL_HOLD = 300
#: The calls a user or admin could make while an operation of each kind
#: runs (the workflow's first step that starts one): the same operation
#: again, the user's decisions on a resize or cold migration (confirm or
#: revert while one is held, twice or crossed), an admin's abort of a
#: live migration, a shelve's other steps (offload, unshelve: the user
#: unshelving while the shelve still runs, or twice), and delete, stop
#: and soft reboot of the server.  ``start`` needs a stopped server,
#: which no operation here has: none.
SECOND_CALLS = {
    'live-migrate': ('live-migrate', 'abort', 'delete', 'stop', 'reboot'),
    'migrate': ('migrate', 'confirm', 'revert', 'delete', 'stop', 'reboot'),
    'resize': ('resize', 'confirm', 'revert', 'delete', 'stop', 'reboot'),
    'evacuate': ('evacuate', 'delete', 'stop', 'reboot'),
    'shelve': ('shelve', 'shelve-offload', 'unshelve', 'delete', 'stop',
               'reboot'),
    'rebuild': ('rebuild', 'delete', 'stop', 'reboot'),
}


def moved(data: records.ScenarioData
          ) -> typing.Tuple[int, str, records.ScenarioData]:
    """``(index, kind, args)`` of a workflow's first move step, or
    without one its first step that starts another operation
    (``model.starts_operation``: a shelve, a rebuild): where a
    ``second-call`` case's other user starts.  A move is preferred: a
    server stopped before its migration still gets the move's calls.
    ValueError if it has neither."""
    steps = [(index, kind, dict(args or {}))
             for index, step in enumerate(data['steps'])
             for kind, args in step.items()]
    for wanted in (lambda kind: kind in model.MOVES,
                   model.starts_operation):
        for index, kind, args in steps:
            if wanted(kind):
                return index, kind, args
    raise ValueError('workflow %s has no step that starts a move or an '
                     'operation (%s, shelve, rebuild...): no second call '
                     'to make' % (data.get('name'), ', '.join(model.MOVES)))


def second_calls(data: records.ScenarioData) -> typing.Tuple[str, ...]:
    """The calls a ``second-call`` sweep of the workflow makes (by its
    first operation step's kind; none without one)."""
    try:
        return SECOND_CALLS.get(moved(data)[1], ())
    except ValueError:
        return ()


#: Action classes from the longest cases to the shortest (whole
#: live-migration sweep, medians: crash 24 s with a restart and often a
#: stuck move to wait out, periodic 15 s, raise 12 s; a hang waits for
#: every periodic, a delay for an RPC timeout; a dropped message or a
#: lost reply for the caller's timeout, as a delay; not measured yet).
SLOWEST_FIRST = ('hang', 'shutdown-hold', 'crash', 'delay', 'drop',
                 'lostreply', 'second-call', 'periodic', 'peer-periodic',
                 'shutdown', 'twice', 'http-error', 'connfail', 'raise',
                 'raise-generic')


def slowest_first(cases: typing.Iterable[Case]) -> typing.List[Case]:
    """``cases`` in the order to run them: the slowest action classes
    first, so that the last cases left for the workers are short ones
    (the sweep's end waits for the last case: with the sorted order a
    worker ended a crash case ~15 s after the others had run dry)."""
    return sorted(cases, key=lambda case: SLOWEST_FIRST.index(case.action))


def shard(cases: typing.Iterable[Case], index: int,
          count: int) -> typing.List[Case]:
    """Shard ``index`` (1-based) of ``count``: every count-th case."""
    return [case for i, case in enumerate(cases) if i % count == index - 1]


#: Actions that change only when something runs, not whether it works:
#: their cases must end as the clean run did (``outcome-as-clean``).
TIMING_ONLY = ('periodic', 'peer-periodic')


def case_scenario(workflow: records.Workflow, case: Case,
                  backend: str = tiers.DEFAULT,
                  patches: typing.Sequence[str] = (),
                  nova_changes: typing.Optional[records.ScenarioData] = None,
                  clean: records.JSON = None, trace_recovery: bool = False,
                  clean_accounting: records.JSON = None
                  ) -> records.ScenarioData:
    """The scenario data of one case: it replays the fault and checks
    the invariants after the workflow's ``recover``, on the Nova under
    test (``nova_changes``: its variant keys, as
    :func:`faultdriver.novaundertest.variant_keys` gives them; the case's
    file is its reproducer, wherever it is replayed from).  ``clean``: how
    the moves ended in the clean run, ``clean_accounting``: which hosts'
    accounting matched placement then (both checked for timing-only
    actions).

    A second fault's case (``case.first``) is its first case's scenario
    with the rule in ``recover``'s rules of its host.  With
    ``trace_recovery``, a case whose fault needs a restart logs every
    point the services ``recover`` starts on its host hit (the recovery
    trace a depth-2 sweep reads, :func:`needs_restart`)."""
    if case.first:
        data = case_scenario(workflow, case.first, backend, patches,
                             nova_changes)
        _recover_rules(data, case.host).append(case.rule(backend))
        data['name'] = case.name('case')
        data['description'] = (
            'Sweep case %s of workflow %s: the first fault, then the '
            'workflow\'s steps to its recovery with the second fault in '
            'it, then the invariants.' % (case.id, workflow.name))
        return data
    data = copy.deepcopy(workflow.data)
    if case.restart:
        _restart_step(data, case)['rules'].append(case.rule(backend))
    else:
        rules = dict(data.get('rules', {}))
        rules[case.host] = list(rules.get(case.host, ())) + [
            case.rule(backend)]
        data['rules'] = rules
    # Only the periodics the steps run, on every backend (the embedded
    # Nova has no timer): the trace's hit counts hold on processes too,
    # so the rule's N*off takes the same hit there.
    data['topology'] = dict(data.get('topology', {}),
                            **{'periodic-timer': False})
    data['name'] = case.name('case')
    data['description'] = (
        'Sweep case %s of workflow %s: the fault, then the workflow\'s '
        'steps to its recovery, then the invariants.' % (case.id,
                                                         workflow.name))
    variant: records.ScenarioData = {'description': 'the case as swept'}
    if patches:
        variant['patches'] = list(patches)
    variant.update(nova_changes or {})
    data['variants'] = {'case': variant}
    # The cloud's invariants (the registry's swept ones), as scenario
    # expectations.
    data['expectations'] = [{kind: {}} for kind in invariants.swept()]
    if case.action in FAILING:
        # What Nova's rollback of the fault promises, servers-settled
        # takes (a failed unshelve's SHELVED_OFFLOADED), and only that.
        for expectation in data['expectations']:
            if 'servers-settled' in expectation:
                expectation['servers-settled'] = {
                    'failure': failure_args(data, case, backend)}
    if clean is not None and (case.action in TIMING_ONLY or
                              retried_by_nova(case, backend)):
        args: records.ScenarioData = {'outcome': clean}
        if clean_accounting:
            args['accounting'] = clean_accounting
        data['expectations'].append({'outcome-as-clean': args})
    if clean is not None and case.action == 'shutdown':
        data['expectations'].append({'outcome-after-shutdown': {
            'outcome': clean, 'origin': booted_on(data),
            'rollback': data.get('operation') != 'evacuation'}})
    if clean is not None and case.action in FAILING and \
            not retried_by_nova(case, backend):
        data['expectations'].append({'outcome-after-failure': dict(
            failure_args(data, case, backend), outcome=clean)})
    steps = list(data['steps'])
    if not any('recover' in step for step in steps):
        steps.append({'recover': {}})
    data['steps'] = steps
    if case.action == 'second-call':
        _second_call(data, case)
    if trace_recovery and needs_restart(case):
        _recover_rules(data, case.host).extend(trace.trace_rules(backend))
    return data


def retried_by_nova(case: Case, backend: str = tiers.DEFAULT) -> bool:
    """Whether ``case``'s fault is one transient answer Nova's own code
    retries at the step (the point's ``retries`` fact: Cinder's
    ``attachment_update``/``_delete`` retry 500 and 504): its case must
    then end as the clean run did (``outcome-as-clean``), as a timing-only
    action's does.  A connection failure is left out: whether
    keystoneauth retries it is the deployment's ``http_retries``."""
    if case.action != 'http-error':
        return False
    answered = re.search(r'http\((\d+)\)', case.rule(backend) or '')
    point = points_module.catalogue()[case.point]
    return answered is not None and int(answered.group(1)) in point.retries


def _second_call(data: records.ScenarioData, case: Case) -> None:
    """A ``second-call`` case's steps: the other user starts before the
    move (the held step may come in any later step) and is joined before
    ``recover``; the ``second-call`` expectation judges its answer."""
    index, kind, args = moved(data)
    call: records.ScenarioData = {
        'server': args['server'], 'call': case.call, 'host': case.host,
        'point': case.point, 'phase': case.phase, 'count': case.skip + 1}
    if case.call == kind:
        # The same move again, as the user asked it the first time.
        if args.get('host'):
            call['to'] = args['host']
        if args.get('flavor'):
            call['flavor'] = args['flavor']
    steps = data['steps']
    steps.insert(index, {'second-call': call})
    last = max(i for i, step in enumerate(steps) if 'recover' in step)
    steps.insert(last, {'wait-second-call': {}})
    data['expectations'].append({'second-call': {'server': args['server']}})


#: Action classes whose fault makes the step fail: their cases must end
#: as the clean run did or as Nova's rollback for the step promises
#: (``outcome-after-failure``, faultdriver.scenario.rollback).  A
#: service's failure is one where Nova raises it into the step (the
#: table's raise rows at service-call points); one Nova's own code
#: retries must end as the clean run (``retried_by_nova``).
FAILING = ('crash', 'raise', 'raise-generic', 'http-error', 'connfail')


def failure_args(data: records.ScenarioData, case: Case,
                 backend: str = tiers.DEFAULT) -> records.ScenarioData:
    """The ``outcome-after-failure`` arguments of ``case`` (without the
    clean outcome): the fault as the rollback table is keyed, and where
    each server was booted."""
    args: records.ScenarioData = {
        'operation': data.get('operation'), 'point': case.point,
        'host': case.host, 'phase': case.phase, 'action': case.action,
        'origin': booted_on(data)}
    term = case.rule(backend)
    raised = re.search(r'raise\((\w+)\)', term or '')
    if raised:
        args['exception'] = raised.group(1)
    return args


#: Action classes whose fault leaves its host down until ``recover``
#: starts it again: the first faults of a depth-2 sweep.
RESTARTING = ('crash',)


def needs_restart(case: Case) -> bool:
    """Whether ``case``'s fault leaves its host for ``recover`` to start
    again (the only first faults ``--depth 2`` follows)."""
    return case.first is None and case.action in RESTARTING


def _recover_rules(data: records.ScenarioData,
                   host: str) -> typing.List[typing.Optional[str]]:
    """The rules list of ``host`` in the scenario's (last) ``recover``
    step, made present."""
    step = [step for step in data['steps'] if 'recover' in step][-1]
    if step['recover'] is None:             # "- recover:" in YAML
        step['recover'] = {}
    rules = step['recover'].setdefault('rules', {})
    found: typing.List[typing.Optional[str]] = rules.setdefault(host, [])
    return found


def _restart_step(data: records.ScenarioData,
                  case: Case) -> records.ScenarioData:
    """The arguments of the workflow's ``case.restart``-th ``restart``
    step of ``case.host`` (its ``rules`` list made present)."""
    found = [step['restart'] for step in data['steps']
             if 'restart' in step and step['restart']['host'] == case.host]
    if len(found) < case.restart:
        raise ValueError('case %s: the workflow has %d restart step(s) of '
                         '%s, not %d' % (case.id, len(found), case.host,
                                         case.restart))
    args: records.ScenarioData = found[case.restart - 1]
    args['rules'] = list(args.get('rules', ()))
    return args


def booted_on(data: records.ScenarioData) -> typing.Dict[str, str]:
    """``{server alias: host}`` of a scenario's boot steps (a boot without
    a host boots on the first host)."""
    first = data.get('topology', {}).get('hosts', ['src'])[0]
    return {step['boot']['server']: step['boot'].get('host', first)
            for step in data['steps'] if 'boot' in step}
