"""A fault rule of a host becomes a fault installed with Nova's test
means on that host's service: ``fixtures.MockPatchObject`` on its
driver or resource tracker for a ``raise`` at the first call, the
proposed fixture (``ComputeFaultFixture.inject``, :mod:`.novafixture`)
for ``crash``, ``periodic`` and a counted or later ``raise``, Nova's
``InterceptMethodFixture`` for ``hang``.

Rules of the scenario's ``rules:`` are in force from the service's
start, but an exported fault is installed on the running service: the
hits the start itself makes (``STARTUP_HITS``) are taken off the rule's
``N*off``.
"""

import inspect

from faultdriver.actions import error as error_action
from faultdriver.actions import timing
from faultdriver import export
from faultdriver.export import Unsupported
from faultdriver import rules as rules_module
from faultdriver.scenario import provisions

#: How often nova-compute's start (Nova 34: init_host, then its first
#: update_available_resource) calls a point; a point not named here is
#: taken as not called by the start.
STARTUP_HITS = {
    'get_available_resource': 1,
    'tracker.update_available_resource': 1,
}


def parse(text, where):
    try:
        rule = rules_module.parse(text)
    except rules_module.RuleError as exc:
        raise Unsupported(where, str(exc))
    if rule.role or rule.filters:
        raise Unsupported(where, 'rule %r: a role or filter has no Nova '
                          'test means here; write the rule for one host '
                          'without them' % text)
    for term, needed in provisions.rule_needs(text):
        why = export.lacking(needed)
        if why:
            raise Unsupported(where, 'rule %r: %s %s' % (text, term, why))
    return rule


def _chain(rule, text, where):
    """``(skip, term)``: the ``N*off`` before the one fault, and it."""
    terms = list(rule.terms)
    skip = 0
    if len(terms) == 2 and terms[0].action == 'off' and \
            terms[0].count is not None and terms[0].percent is None:
        skip = terms.pop(0).count
    if len(terms) != 1 or terms[0].percent is not None:
        raise Unsupported(where, 'rule %r: only "[N*off ->] 1*ACTION" '
                          'chains can be exported' % text)
    term = terms[0]
    if term.action in ('shutdown',):
        raise Unsupported(where, 'rule %r: a graceful stop of one '
                          'nova-compute while the others run has no Nova '
                          'test means: its services share one process and '
                          'its executors (the embedded tier refuses them to '
                          'the stopped host\'s threads), and '
                          'Service.stop() of a test\'s compute waits for '
                          'no operation in progress' % text)
    if term.action not in ('crash', 'raise', 'hang', 'periodic', 'delay'):
        raise Unsupported(where, 'rule %r: action %s has no Nova test '
                          'means here (crash, raise, hang, delay and '
                          'periodic do)' % (text, term.action))
    if term.count not in (None, 1) and term.action != 'crash':
        raise Unsupported(where, 'rule %r: only the first hit (1*%s) can '
                          'be exported' % (text, term.action))
    return skip, term


def install(writer, host, text, where, at_start=False):
    """Write the lines that install rule ``text`` on ``host``."""
    rule = parse(text, where)
    skip, term = _chain(rule, text, where)
    if at_start:
        skip = max(0, skip - STARTUP_HITS.get(rule.point, 0))
    kind = 'tracker' if rule.point.startswith('tracker.') else 'driver'
    writer.comment('Rule %r on %s: %s.' % (text, host, _describe(
        rule, term, skip, kind)))
    if term.action == 'hang':
        _hang(writer, host, rule, term, skip, text, where, at_start)
        return
    if term.action == 'periodic':
        _periodic(writer, host, rule, term, skip, text, where)
        return
    if term.action == 'delay':
        _delay(writer, host, rule, term, skip, text, where)
        return
    if term.action == 'raise' and not skip and rule.phase != 'after' and \
            not _counted(writer, host, rule.point):
        # Nova's own form: the call raises, nothing to count.
        target = 'self.computes[%r].%s' % (host, 'manager.rt' if kind ==
                                           'tracker' else 'driver')
        from faultdriver.export.writer import call
        writer.line(call('self.useFixture', [call(
            'fixtures.MockPatchObject', [
                target, repr(rule.point.rpartition('.')[2]),
                'autospec=True', 'side_effect=%s' % _error(
                    writer, term, text, where)], ' ' * 12)]))
        return
    args = [repr(host), repr(rule.point), repr(term.action)]
    if skip:
        args.append('skip=%d' % skip)
    if rule.phase == 'after':
        args.append('after=True')
    if term.action == 'raise':
        args.append('error=%s' % _error(writer, term, text, where))
    else:
        writer.crashes = True
    if not skip:
        # Its first hit is the fault's (a wait-point on it waits for it).
        writer.faulted[(host, rule.point)] = rule.phase
    writer.use('faults')
    from faultdriver.export.writer import call
    writer.line(call('self.faults.inject', args))


def _counted(writer, host, point):
    """Whether the test counts or waits for the fault's hits (a
    ``faults`` expectation, a ``wait-point`` on it): then the fixture
    records them."""
    if 'faults' in writer.asserts:
        return True
    return any(step.kind == 'wait-point' and
               dict(step.args).get('host') == host and
               dict(step.args).get('point') == point
               for step in writer.scenario.steps)


def _describe(rule, term, skip, kind):
    which = 'the first call' if not skip else 'call %d' % (skip + 1)
    owner = ("its resource tracker's %s" % rule.point.split('.', 1)[1]
             if kind == 'tracker' else "its driver's %s" % rule.point)
    when = 'once it returned' if rule.phase == 'after' else \
        'before it runs'
    if term.action == 'crash':
        return 'nova-compute dies at %s of %s, %s' % (which, owner, when)
    if term.action == 'delay':
        return '%s of %s waits %ss, %s' % (which, owner, term.args[0], when)
    if term.action == 'raise':
        return '%s of %s raises %s, %s' % (which, owner, term.args[0], when)
    return '%s of %s is held until released' % (which, owner)


def _error(writer, term, text, where):
    """The exception a ``raise`` term raises, as Nova code."""
    try:
        args = error_action.Raise.bind(term)
    except ValueError as exc:
        raise Unsupported(where, 'rule %r: %s' % (text, exc))
    from nova import exception as nova_exception
    name = args['exception']
    cls = getattr(nova_exception, name, None)
    if cls is None:
        raise Unsupported(where, 'rule %r: nova.exception has no %s'
                          % (text, name))
    writer.need('nova.exception')
    message = repr('injected by the test' + (
        ': ' + args['message'] if 'message' in args else ''))
    if 'inner_exception' in inspect.signature(cls.__init__).parameters:
        return ('exception.%s(inner_exception=exception.InternalError('
                'message=%s))' % (name, message))
    return 'exception.%s(message=%s)' % (name, message)


def _periodic(writer, host, rule, term, skip, text, where):
    """A periodic at a hit: the fixture's ``inject(..., 'periodic')``.
    The hit thread waits for it but where it holds the tracker lock (a
    point that runs under it, but in its ``unlocked`` phase), as the
    action does; a
    tracker method's own ``before``/``after`` is inside the lock the
    patched method takes, which a patch of the method cannot reach."""
    from faultdriver.actions import periodic as periodic_action
    from faultdriver.export.writer import call
    from faultdriver import points
    try:
        args = periodic_action.Periodic.bind(term)
    except ValueError as exc:
        raise Unsupported(where, 'rule %r: %s' % (text, exc))
    point = points.catalogue()[rule.point]
    locked = point.holds_lock(rule.phase)
    if locked and rule.point.startswith('tracker.'):
        raise Unsupported(where, 'rule %r: a periodic inside the tracker '
                          'lock a patch of %s runs outside of; write it '
                          'at %s.unlocked' % (text, rule.point, rule.point))
    peer = args.get('host')
    if locked and peer:
        raise Unsupported(where, 'rule %r: another host\'s periodic '
                          'waits for the tracker lock this call holds '
                          '(one lock in one process)' % text)
    writer.use('faults')
    items = [repr(host), repr(rule.point), repr('periodic')]
    if peer:
        items.append('peer=%r' % peer)
    if skip:
        items.append('skip=%d' % skip)
    if rule.phase == 'after':
        items.append('after=True')
    wait = 0 if locked else args.get('timeout', 60)
    if wait != 60:
        items.append('wait=%s' % _number(wait))
    writer.line(call('self.faults.inject', items))


def _delay(writer, host, rule, term, skip, text, where):
    """A delay at a hit: the fixture's ``inject(..., 'delay')``, which
    sleeps in the hit's thread, as the action does, and lets the call go
    on.  A delay that outlasts the embedded tier's RPC timeout (a sweep's
    is one second longer, so the caller gives up) outlasts the exported
    test's, which is longer, too."""
    from faultdriver.export.novafixture import compute_fault
    from faultdriver.export.writer import call
    from faultdriver.scenario import tiers
    try:
        args = timing.Delay.bind(term)
    except ValueError as exc:
        raise Unsupported(where, 'rule %r: %s' % (text, exc))
    seconds = args['seconds']
    exported = compute_fault.ComputeFaultFixture.RPC_TIMEOUT
    if tiers.get(tiers.DEFAULT).rpc_timeout < seconds <= exported:
        writer.comment('%ss outlasted the embedded tier\'s RPC timeout; '
                       'this test\'s is %ss.' % (_number(seconds), exported))
        seconds = exported + 1
    args['seconds'] = seconds
    writer.use('faults')
    items = [repr(host), repr(rule.point), repr('delay')]
    if skip:
        items.append('skip=%d' % skip)
    if rule.phase == 'after':
        items.append('after=True')
    items.append('wait=%s' % _number(args['seconds']))
    writer.line(call('self.faults.inject', items))


def _hang(writer, host, rule, term, skip, text, where, at_start=False):
    if skip or rule.phase != 'before':
        raise Unsupported(where, 'rule %r: InterceptMethodFixture holds '
                          'the first call, before it runs' % text)
    try:
        args = timing.Hang.bind(term)
    except ValueError as exc:
        raise Unsupported(where, 'rule %r: %s' % (text, exc))
    barrier = args.get('name', rule.point)
    name = 'held_%s' % len(writer.holds) if len(writer.holds) else 'held'
    if at_start:
        # Installed in setUp, held in the test method.
        name = 'self.' + name
    writer.holds[(host, barrier)] = name
    writer.hits[(host, rule.point)] = name
    writer.need('nova.tests.fixtures')
    manager = 'self.computes[%r].manager' % host
    target = ('%s.rt' % manager if rule.point.startswith('tracker.')
              else '%s.driver' % manager)
    method = rule.point.rpartition('.')[2]
    timeout = args.get('timeout', 300.0)
    writer.line('%s = self.useFixture(nova_fixtures.InterceptMethodFixture(\n'
                '    %s, %r,\n'
                '    timeout=%s))' % (name, target, method, _number(timeout)))


def _number(value):
    return str(int(value)) if float(value).is_integer() else repr(value)
