"""What each control request does to the engine of one host.

Kept apart from the socket plumbing so the mapping of requests onto
:class:`faultdriver.engine.Engine` reads in one place.  Every method
takes the request's arguments and returns a JSON-able result or raises
:class:`~faultdriver.control.protocol.ControlError`; nothing here
changes the engine unless the whole request is valid.
"""

import dataclasses
import logging
import os
import threading
import time
import typing

from faultdriver.control import protocol
from faultdriver import rules as rules_module

LOG = logging.getLogger(__name__)

_REQUIRED = object()
#: How long one engine wait lasts before the server checks it is not
#: stopping; bounds how long a stop waits for a pending ``wait``.
_WAIT_SLICE = 0.5


def _arg(request, name, kinds, default=_REQUIRED, check=None):
    """Argument ``name`` of ``request``: present (unless defaulted), of
    one of ``kinds`` (bool is not a number here), and ``check``-ed."""
    if name not in request or request[name] is None:
        if default is _REQUIRED:
            raise protocol.RequestRejected('missing argument %r' % name)
        return default
    value = request[name]
    if not isinstance(value, kinds) or (
            isinstance(value, bool) and bool not in kinds):
        raise protocol.RequestRejected(
            'argument %r must be %s, not %r' % (
                name, ' or '.join(k.__name__ for k in kinds), value))
    if check is not None and not check(value):
        raise protocol.RequestRejected('argument %r out of range: %r'
                                       % (name, value))
    return value


@dataclasses.dataclass(frozen=True)
class ComputeHooks:
    """What the nova-compute FaultDriver runs in answers, beyond the
    engine: the driver fills it in (a field is None where FaultDriver
    runs outside a compute manager, and its op is refused saying so)."""

    #: Runs the host's resource-tracker periodic once (``periodic``).
    periodic: typing.Callable[[], None] | None = None
    #: The tasks the compute manager tracks for a graceful stop
    #: (faultdriver.manager_tasks; ``tasks``).
    tasks: typing.Callable[[], list] | None = None
    #: ``(host, nodename or None) -> {nodename: [pCPU]}`` from the compute
    #: node records (faultdriver.pinning; ``pinning``); LookupError when
    #: there is none.
    pinning: typing.Callable[[str, str | None], dict] | None = None
    #: ``(on or None) -> {on, interval}``: the resource periodic on the
    #: service's timer, switched (faultdriver.tracker.timer; ``timer``);
    #: ValueError when it cannot go on.
    timer: typing.Callable[[bool | None], dict] | None = None
    #: The status fields only the nova-compute knows (identity,
    #: settings, versions, ``rpc_started``; faultdriver.hostfacts).
    facts: typing.Callable[[], dict] | None = None


#: The hooks of a FaultDriver outside a compute manager, or of a test.
NO_COMPUTE = ComputeHooks()


class Operations:
    """The control operations of one engine.

    ``parse_rule`` turns rule text into a validated rule or raises
    ``ValueError`` with a message naming it (nova.conf's
    :class:`faultdriver.conf.RuleType`); ``stopping`` is an event set
    when the server stops, which ends pending waits; ``compute``: the
    :class:`ComputeHooks` of the nova-compute around the engine.
    """

    ARGS = {'status': (), 'points': (), 'rules': (), 'counters': (),
            'add': ('rule',), 'remove': ('index',), 'clear': (),
            'enable': (), 'disable': (), 'release': ('name',),
            'wait': ('point', 'count', 'phase', 'timeout'),
            'journal': ('last',), 'periodic': ('timeout',), 'tasks': (),
            'pinning': ('host', 'nodename'), 'timer': ('on',)}

    def __init__(self, engine, catalogue, parse_rule, stopping,
                 compute=NO_COMPUTE):
        self.engine = engine
        self.catalogue = catalogue
        self.parse_rule = parse_rule
        self.stopping = stopping
        self.compute = compute

    def _needs(self, hook, what):
        """``compute``'s ``hook``, or the refusal naming ``what`` is
        missing where FaultDriver runs outside a compute manager."""
        found = getattr(self.compute, hook)
        if found is None:
            raise protocol.RequestRejected(
                'FaultDriver on %s runs outside a compute manager: it has '
                'no %s' % (self.engine.host, what))
        return found

    def handle(self, request):
        """The result of one decoded request."""
        op = request.get('op')
        if not isinstance(op, str) or op not in self.ARGS:
            shown = repr(op) if len(repr(op)) <= 60 else repr(op)[:60] + '...'
            raise protocol.RequestRejected(
                'unknown op %s%s; expected a string, one of %s' % (
                    shown, rules_module.suggest(op, self.ARGS)
                    if isinstance(op, str) else '',
                    ', '.join(sorted(self.ARGS))))
        extra = sorted(set(request) - {'op'} - set(self.ARGS[op]))
        if extra:
            raise protocol.RequestRejected(
                'op %r takes no argument %s; it takes %s' % (
                    op, ', '.join(map(repr, extra)),
                    ', '.join(self.ARGS[op]) or 'none'))
        return getattr(self, 'op_' + op)(request)

    # -- reading ------------------------------------------------------------

    def op_status(self, request):
        """The engine's state, the server's clock (``time``, Unix
        seconds: a runner elsewhere measures its offset) and what only
        the nova-compute knows (ComputeHooks.facts)."""
        engine = self.engine
        status = {'host': engine.host, 'pid': os.getpid(),
                  'enabled': engine.enabled, 'rules': len(engine.rules()),
                  'held': engine.held(),
                  'journal': (engine.journal.path
                              if engine.journal is not None else None),
                  # The last failed journal write: faults fired all the
                  # same.
                  'journal_error': (engine.journal.error
                                    if engine.journal is not None else None)}
        if self.compute.facts is not None:
            status.update(self.compute.facts())
        status['time'] = time.time()
        return status

    def op_points(self, request):
        armed = self.engine.armed
        return [{'name': p.name, 'kind': p.kind, 'roles': list(p.roles),
                 'operations': list(p.operations),
                 'tracker_lock': p.tracker_lock, 'armed': p.name in armed}
                for p in self.catalogue.values()]

    def op_rules(self, request):
        return self.engine.rules()

    def op_counters(self, request):
        return self.engine.counters()

    def op_journal(self, request):
        last = _arg(request, 'last', (int,), None, lambda n: n >= 0)
        journal = self.engine.journal
        entries = journal.entries() if journal is not None else []
        if last is None:
            return entries
        # Not entries[-last:]: -0 is 0 (all), and a start below
        # -len(entries) would count from the end twice.
        return entries[max(len(entries) - last, 0):]

    def op_tasks(self, request):
        """The tasks the host's compute manager tracks for Nova's
        graceful shutdown (``[{name, instance_uuid}]``, oldest first)."""
        return self._needs('tasks', 'tasks to show')()

    def op_pinning(self, request):
        """The pCPUs the compute node records of ``host`` (this one's by
        default) hold as pinned: ``{host, nodes: {nodename: [pCPU]},
        pinned_cpus}`` (``pinned_cpus``: every node's, sorted)."""
        host = _arg(request, 'host', (str,), self.engine.host,
                    lambda h: 0 < len(h) <= 255)
        nodename = _arg(request, 'nodename', (str,), None,
                        lambda n: 0 < len(n) <= 255)
        read = self._needs('pinning', 'compute node records to read')
        try:
            nodes = read(host, nodename)
        except LookupError as exc:
            raise protocol.RequestRejected(
                'no compute node record of host %s%s: %s' % (
                    host, ' node %s' % nodename if nodename else '', exc))
        return {'host': host, 'nodes': nodes,
                'pinned_cpus': sorted(cpu for cpus in nodes.values()
                                      for cpu in cpus)}

    # -- changing -----------------------------------------------------------

    def op_add(self, request):
        text = _arg(request, 'rule', (str,))
        try:
            rule = self.parse_rule(text)
        except ValueError as exc:
            raise protocol.RequestRejected(str(exc), protocol.BAD_RULE)
        index = self.engine.add_rule(rule)
        return {'index': index, 'rule': str(rule),
                'warnings': self._warnings(rule)}

    def _warnings(self, rule):
        warnings = []
        stalls = {'hang', 'delay'} & {t.action for t in rule.terms}
        if stalls and self.catalogue[rule.point].tracker_lock:
            warnings.append('%s at %s runs while the resource tracker lock '
                            'is held: every claim and the periodic on %s '
                            'stall meanwhile' % ('/'.join(sorted(stalls)),
                                                 rule.point,
                                                 self.engine.host))
        if not self.engine.enabled:
            warnings.append('injection is disabled on %s: no rule fires '
                            'until it is enabled' % self.engine.host)
        return warnings

    def op_remove(self, request):
        index = _arg(request, 'index', (int,))
        if not self.engine.remove_rule(index):
            raise protocol.RequestRejected(
                'no rule with index %d on %s (the rules op lists them)'
                % (index, self.engine.host))
        return {'index': index}

    def op_clear(self, request):
        removed = len(self.engine.rules())
        self.engine.set_rules([])
        return {'removed': removed}

    def op_enable(self, request):
        self.engine.set_enabled(True)
        return {'enabled': True}

    def op_disable(self, request):
        self.engine.set_enabled(False)
        return {'enabled': False}

    def op_release(self, request):
        name = _arg(request, 'name', (str,), None)
        return {'released': self.engine.release(name)}

    # -- waiting ------------------------------------------------------------

    def op_wait(self, request):
        point = _arg(request, 'point', (str,))
        if point not in self.catalogue:
            raise protocol.RequestRejected('unknown point %r%s' % (
                point, rules_module.suggest(point, self.catalogue)))
        phase = _arg(request, 'phase', (str,), 'before',
                     lambda p: p in rules_module.PHASES)
        count = _arg(request, 'count', (int,), 1, lambda n: n >= 1)
        timeout = _arg(request, 'timeout', (int, float), 60.0,
                       lambda t: 0 <= t <= 86400)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                hits = self.engine.wait_for_hit(
                    point, count, max(0, min(left, _WAIT_SLICE)), phase)
                return {'point': '%s.%s' % (point, phase), 'hits': hits}
            except TimeoutError:
                pass
            if self.stopping.is_set():
                raise protocol.ControlError(
                    'the control server of %s is stopping'
                    % self.engine.host, protocol.STOPPED)
            if time.monotonic() >= deadline:
                seen = self.engine.counters().get('%s.%s' % (point, phase),
                                                  0)
                raise protocol.WaitTimeout(
                    'point %s.%s on host %s was hit %d times, not %d, '
                    'within %ss' % (point, phase, self.engine.host, seen,
                                    count, timeout))

    # -- running ------------------------------------------------------------

    def op_timer(self, request):
        """Whether the service's timer runs the resource periodic, after
        switching it ``on`` (true or false) if given: ``{host, on,
        interval}`` (``interval``: the timer's spacing for it, None if it
        was never on the timer)."""
        on = _arg(request, 'on', (bool,), None)
        switch = self._needs('timer', 'timer to switch')
        try:
            state = switch(on)
        except ValueError as exc:
            raise protocol.RequestRejected(
                'the resource periodic of %s cannot go on its timer: %s'
                % (self.engine.host, exc))
        return dict(state, host=self.engine.host)

    def op_periodic(self, request):
        """Run the host's resource-tracker periodic now, in a thread of
        its own, and answer when it ended (Nova logs a failing node's
        error itself and goes on, as its timer run does).  A periodic that
        does not end within ``timeout`` (the tracker lock is held, e.g. by
        a thread a ``hang`` holds) is answered ``timeout`` and left to
        finish when the lock is free."""
        timeout = _arg(request, 'timeout', (int, float), 60.0,
                       lambda t: 0 < t <= 86400)
        periodic = self._needs('periodic', 'resource-tracker periodic to run')
        outcome = {}

        def run():
            try:
                periodic()
            except Exception as exc:
                outcome['error'] = '%s: %s' % (type(exc).__name__, exc)
                LOG.exception('faultdriver periodic on %s (control request) '
                              'failed', self.engine.host)
        started = time.monotonic()
        thread = threading.Thread(
            target=run, daemon=True,
            name='faultdriver-ctl-periodic-%s' % self.engine.host)
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            raise protocol.WaitTimeout(
                'the resource-tracker periodic on %s did not end within %ss '
                '(is the tracker lock held, e.g. by a held thread?); it '
                'runs on and ends when it can' % (self.engine.host, timeout))
        return {'host': self.engine.host,
                'seconds': round(time.monotonic() - started, 3),
                'error': outcome.get('error')}
