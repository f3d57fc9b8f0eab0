"""What each control request does to the engine of one host.

Kept apart from the socket plumbing so the mapping of requests onto
:class:`faultdriver.engine.Engine` reads in one place.  Every method
takes the request's arguments and returns a JSON-able result or raises
:class:`~faultdriver.control.protocol.ControlError`; nothing here
changes the engine unless the whole request is valid.
"""

import logging
import os
import threading
import time

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


class Operations:
    """The control operations of one engine.

    ``parse_rule`` turns rule text into a validated rule or raises
    ``ValueError`` with a message naming it (nova.conf's
    :class:`faultdriver.conf.RuleType`); ``stopping`` is an event set
    when the server stops, which ends pending waits.
    """

    ARGS = {'status': (), 'points': (), 'rules': (), 'counters': (),
            'add': ('rule',), 'remove': ('index',), 'clear': (),
            'enable': (), 'disable': (), 'release': ('name',),
            'wait': ('point', 'count', 'phase', 'timeout'),
            'journal': ('last',), 'periodic': ('timeout',), 'tasks': ()}

    def __init__(self, engine, catalogue, parse_rule, stopping,
                 periodic=None, tasks=None):
        self.engine = engine
        self.catalogue = catalogue
        self.parse_rule = parse_rule
        self.stopping = stopping
        #: Runs the host's resource-tracker periodic once (None where
        #: FaultDriver runs outside a compute manager).
        self.periodic = periodic
        #: The tasks the host's compute manager tracks for a graceful
        #: stop (faultdriver.manager_tasks; None as ``periodic``).
        self.tasks = tasks

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
        engine = self.engine
        return {'host': engine.host, 'pid': os.getpid(),
                'enabled': engine.enabled, 'rules': len(engine.rules()),
                'held': engine.held(),
                'journal': (engine.journal.path
                            if engine.journal is not None else None),
                # The last failed journal write: faults fired all the same.
                'journal_error': (engine.journal.error
                                  if engine.journal is not None else None)}

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
        if self.tasks is None:
            raise protocol.RequestRejected(
                'FaultDriver on %s runs outside a compute manager: it has '
                'no tasks to show' % self.engine.host)
        return self.tasks()

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

    def op_periodic(self, request):
        """Run the host's resource-tracker periodic now, in a thread of
        its own, and answer when it ended (Nova logs a failing node's
        error itself and goes on, as its timer run does).  A periodic that
        does not end within ``timeout`` (the tracker lock is held, e.g. by
        a thread a ``hang`` holds) is answered ``timeout`` and left to
        finish when the lock is free."""
        timeout = _arg(request, 'timeout', (int, float), 60.0,
                       lambda t: 0 < t <= 86400)
        if self.periodic is None:
            raise protocol.RequestRejected(
                'FaultDriver on %s runs outside a compute manager: it has '
                'no resource-tracker periodic to run' % self.engine.host)
        outcome = {}

        def run():
            try:
                self.periodic()
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
