"""The engine: decides, per hit of a point, which rule fires and records it.

One engine belongs to one compute service (one host).  Rules are indexed
by point name so that a call at a point nobody cares about costs one set
membership test (:attr:`Engine.armed`).  Counters and the choice of the
term that handles a hit are made under one lock, so "the third hit" means
exactly one hit even when many threads arrive at once; the action itself
runs outside the lock, so a hanging action never blocks the others.

No Nova imports here: the driver and the tracker hand in a context dict.
"""

import collections
import dataclasses
import logging
import random
import threading
import time
import typing

from faultdriver import journal as journal_module

if typing.TYPE_CHECKING:
    from faultdriver import rules as rules_module

LOG = logging.getLogger(__name__)

#: Every injected fault logs one WARNING line that starts with this.
MARKER = 'FAULTDRIVER-INJECT'


@dataclasses.dataclass
class Hit:
    """What an action is told about the hit it handles."""

    point: str
    phase: str
    host: str
    rule: object
    rule_index: int
    hit: int              # the rule's matching hits so far, this one included
    fired: int            # how often this term has fired, this one included
    role: str | None = None
    instance: str | None = None
    migration: str | None = None
    operation: str | None = None
    in_periodic: bool = False  # the hit runs in its host's resource periodic
    target: object = None  # the driver or tracker the point belongs to
    engine: 'Engine | None' = None
    token: object = None   # what the action's prepare() kept for this hit

    def describe(self) -> str:
        return '%s.%s' % (self.point, self.phase)


class _RuleState:
    """A rule installed in an engine: its counters, RNG and actions."""

    def __init__(self, index, rule, actions, seed):
        self.index = index
        self.rule = rule
        self.actions = [actions[t.action](t) for t in rule.terms]
        self.fired = [0] * len(rule.terms)
        self.hits = 0
        self.term = 0
        own_seed = rule.filter('seed')
        if own_seed is not None:
            seed = int(own_seed)
        elif seed is not None:
            seed = seed + index
        self.rng = random.Random(seed)

    def matches(self, host, context):
        for key, value in self.rule.filters:
            if key == 'seed':
                continue
            actual = host if key == 'host' else context.get(key)
            if actual != value:
                return False
        return self.rule.role is None or context.get('role') == self.rule.role

    def choose(self):
        """Pick the term for this hit; None if nothing fires.

        Terms whose count is used up are skipped for good; a term that
        loses its probability roll lets this hit fall through to the next
        term (fail(9) and fail-rs do the same).
        """
        self.hits += 1
        terms = self.rule.terms
        while self.term < len(terms) and self._used_up(self.term):
            self.term += 1
        for index in range(self.term, len(terms)):
            term = terms[index]
            if self._used_up(index):
                continue
            if term.percent is not None and (
                    self.rng.random() * 100 >= term.percent):
                continue
            self.fired[index] += 1
            return index
        return None

    def _used_up(self, index):
        count = self.rule.terms[index].count
        return count is not None and self.fired[index] >= count

    def snapshot(self):
        return {'index': self.index, 'rule': str(self.rule),
                'hits': self.hits, 'fired': sum(self.fired),
                'exhausted': all(self._used_up(i)
                                 for i in range(len(self.rule.terms)))}


class Engine:
    """Rules, counters, barriers and the journal of one compute host."""

    def __init__(self, host, actions, rules=(), enabled=False, seed=None,
                 journal=None, crash_handler=None, shutdown_handler=None,
                 peer_periodic=None):
        self.host = host
        self.enabled = enabled
        self.journal = journal
        self._crash_handler = crash_handler
        self._shutdown_handler = shutdown_handler
        self._peer_periodic = peer_periodic
        self.armed = set()            # read without the lock: keep identity
        self._actions = actions
        self._seed = seed
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._rules = {}              # point -> [_RuleState]
        self._next_index = 0
        self._watched = set()
        self._counts = collections.Counter()   # (point, phase) -> hits
        self._held = collections.defaultdict(list)
        self._closed = False
        self._dead = None             # after a crash: where every hit goes
        self._dead_points = frozenset()
        self.set_rules(rules)

    @property
    def crash_handler(self):
        """What the ``crash`` action calls with the hit instead of ending
        the process: given by whoever owns the process at construction
        (the embedded harness simulates a crash); None in a real
        nova-compute, where the crash kills it."""
        return self._crash_handler

    @property
    def shutdown_handler(self):
        """What the ``shutdown`` action calls with the hit, ``hold`` and
        ``kill_after`` instead of sending SIGTERM to its own process (the
        embedded harness stops that host's service object); None in a
        real nova-compute."""
        return self._shutdown_handler

    @property
    def peer_periodic(self):
        """What ``periodic(host=...)`` calls with the other host's name
        to run that host's resource periodic to its end (its error
        raised): given by whoever knows where the other hosts run (the
        embedded harness runs the host's manager in this process; a real
        nova-compute asks the other host's control socket, see
        :mod:`faultdriver.actions.periodic`); None: no other host is
        reachable, the action fails loudly."""
        return self._peer_periodic

    # -- rules ------------------------------------------------------------

    def set_rules(self, rules: typing.Iterable['rules_module.Rule']) -> None:
        """Replace every rule; counters of the old rules are dropped."""
        with self._lock:
            self._rules.clear()
            self._next_index = 0
            for rule in rules:
                self._install(rule)
            self._rearm()

    def add_rule(self, rule: 'rules_module.Rule') -> int:
        """Install one more rule; returns its index."""
        with self._lock:
            state = self._install(rule)
            self._rearm()
            return state.index

    def remove_rule(self, index: int) -> bool:
        with self._lock:
            for states in self._rules.values():
                for state in list(states):
                    if state.index == index:
                        states.remove(state)
                        self._rearm()
                        return True
            return False

    def _install(self, rule):
        state = _RuleState(self._next_index, rule, self._actions, self._seed)
        self._next_index += 1
        self._rules.setdefault(rule.point, []).append(state)
        return state

    def _rearm(self):
        points = set(self._watched) | self._dead_points
        if self.enabled and not self._closed:
            points.update(p for p, states in self._rules.items() if states)
        # Readers test membership without the lock: add before removing,
        # so a point that stays armed is never missing, not even briefly.
        self.armed.update(points)
        self.armed.intersection_update(points)

    def set_enabled(self, enabled: bool) -> None:
        with self._lock:
            self.enabled = enabled
            self._rearm()

    def rules(self):
        """Installed rules with their counters, in installation order."""
        with self._lock:
            states = [s for ss in self._rules.values() for s in ss]
            return [s.snapshot()
                    for s in sorted(states, key=lambda s: s.index)]

    def counters(self):
        """Hits per ``point.phase`` since the point was armed."""
        with self._lock:
            return {'%s.%s' % key: n for key, n in self._counts.items()}

    # -- hits -------------------------------------------------------------

    def mark_crashed(self, handler: typing.Callable[..., typing.Any],
                     points: typing.Iterable[str]) -> None:
        """The host crashed: every later hit at ``points`` calls
        ``handler(point, phase)`` (which does not return), because a dead
        service runs no more code.
        """
        with self._lock:
            self._dead = handler
            self._dead_points = frozenset(points)
            self._rearm()

    def end_if_dead(self, point, phase):
        """A thread of a host that died (see :meth:`mark_crashed`) ends
        here, not running on: at every hit, and where an action returns
        after its host died under it (``shutdown(hold=...)`` outliving
        the graceful stop it began)."""
        dead = self._dead
        if dead is not None:
            dead(point, phase)

    def hit(self, point, phase, context, target=None):
        """Handle one hit of an armed point: count, choose, then act."""
        self.end_if_dead(point, phase)
        fired = []
        with self._lock:
            if self.enabled and not self._closed:
                for state in self._rules.get(point, ()):
                    if state.rule.phase != phase:
                        continue
                    if not state.matches(self.host, context):
                        continue
                    term = state.choose()
                    if term is None:
                        continue
                    hit = Hit(point=point, phase=phase, host=self.host,
                              rule=state.rule, rule_index=state.index,
                              hit=state.hits, fired=state.fired[term],
                              role=context.get('role'),
                              instance=context.get('instance'),
                              migration=context.get('migration'),
                              operation=context.get('operation'),
                              in_periodic=bool(context.get('in_periodic')),
                              target=target, engine=self)
                    action = state.actions[term]
                    action.prepare(hit)
                    fired.append((hit, action))
        if fired:
            # Journaled before the hit counts: whoever waits for the hit
            # (wait_for_hit) then finds what fired in the journal.
            self._record(*fired[0])
        with self._lock:
            self._counts[(point, phase)] += 1
            self._changed.notify_all()
        for position, (hit, action) in enumerate(fired):
            if position:
                self._record(hit, action)
            try:
                action(hit)
            except BaseException:
                # An earlier action ended the call (raise, crash): the
                # later ones never run, and say so.
                for later_hit, later in fired[position + 1:]:
                    later.cancel(later_hit)
                    LOG.warning('%s point=%s host=%s rule=%d [%s] not run: '
                                'an earlier rule ended the call', MARKER,
                                later_hit.describe(), later_hit.host,
                                later_hit.rule_index, later_hit.rule)
                raise

    def _record(self, hit, action):
        LOG.warning('%s point=%s host=%s rule=%d [%s] hit=%d action=%s '
                    'role=%s instance=%s migration=%s operation=%s', MARKER,
                    hit.describe(), hit.host, hit.rule_index, hit.rule,
                    hit.hit, action.name, hit.role, hit.instance,
                    hit.migration, hit.operation)
        if self.journal is not None:
            self.journal.record(journal_module.JournalEntry(
                kind=journal_module.FAULT, time=time.time(), host=hit.host,
                point=hit.point, phase=hit.phase, rule=str(hit.rule),
                rule_index=hit.rule_index, hit=hit.hit, action=action.name,
                role=hit.role, instance=hit.instance,
                migration=hit.migration, operation=hit.operation,
                in_periodic=hit.in_periodic))

    def wait_for_hit(self, point: str, count: int = 1, timeout: float = 60.0,
                     phase: str = 'before') -> int:
        """Block until ``point.phase`` was hit ``count`` times.

        Counting starts when the point is first armed (by a rule or by this
        call).  Returns the count; raises ``TimeoutError`` naming the point.
        """
        deadline = time.monotonic() + timeout
        with self._lock:
            if point not in self._watched:
                self._watched.add(point)
                self._rearm()
            while self._counts[(point, phase)] < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        'point %s.%s on host %s was hit %d times, not %d, '
                        'within %ss' % (point, phase, self.host,
                                        self._counts[(point, phase)], count,
                                        timeout))
                self._changed.wait(min(left, 0.1))
            return self._counts[(point, phase)]

    # -- barriers ---------------------------------------------------------

    def hold(self, name):
        """Register a hold on barrier ``name``; call under :meth:`hit`."""
        event = threading.Event()
        if self._closed:
            event.set()
        else:
            self._held[name].append(event)
        return event

    def held(self) -> typing.Dict[str, int]:
        """Barrier names with the number of threads held at each."""
        with self._lock:
            counts = {n: sum(not e.is_set() for e in es)
                      for n, es in self._held.items()}
        return {n: c for n, c in counts.items() if c}

    def release(self, name: typing.Optional[str] = None) -> int:
        """Release the threads held at barrier ``name`` (all if None)."""
        with self._lock:
            names = list(self._held) if name is None else [name]
            released = 0
            for each in names:
                for event in self._held.pop(each, ()):
                    if not event.is_set():
                        released += 1
                    event.set()
            return released

    def close(self) -> None:
        """Stop firing and release every held thread (service teardown)."""
        with self._lock:
            self._closed = True
            self._rearm()
        self.release()
        if self.journal is not None:
            self.journal.flush(sync=True)
