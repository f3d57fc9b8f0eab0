"""Each expectation kind of a scenario (schema.yaml ``expectation``) as
assertions of the exported test.

An expectation of the bug (one of an ``expect: bug`` variant's own, or
an invariant written ``broken: true``) is asserted as Nova asserts a
known bug: the current behaviour, under a ``FIXME`` comment that says
what is correct.  The fixed form (``--fixed``) asserts the correct state
instead: the invariant holds, the symptom is absent; a bug expectation
with no single correct value is left out with a ``NOTE`` saying so, and
so is a fact the invariants it asserts contradict (a migration left
``running`` when every migration must end).

The invariants, their order (those with ``after`` last: they run
periodics and move servers), their wording and their export form are
the registry's (:mod:`faultdriver.scenario.invariants`).
"""

from faultdriver import export
from faultdriver.export import Unsupported
from faultdriver.novacompat import logtexts
from faultdriver.scenario import invariants
from faultdriver.scenario import provisions
from faultdriver.scenario import statuses


class Assertion:
    """One expectation's lines: as written, and its fixed form (None: no
    single correct value) with what is correct."""

    def __init__(self, lines, fixed=None, correct=None, setup=()):
        self.lines = lines
        self.fixed = fixed
        self.correct = correct
        self.setup = list(setup)    # lines both forms share, first


def ordered(expectations):
    """As :func:`faultdriver.scenario.expect.evaluate` checks them."""
    return sorted(expectations, key=lambda item: invariants.rank(
        item[0].kind))


def write(writer, common, own):
    """Write the assertions of ``common`` (every variant's) and ``own``
    (the variant's) expectations."""
    items = asserted_items(writer, common, own)
    asserted = {e.kind for e, _ in items
                if invariants.get(e.kind) is not None}
    if not writer.fixed:
        items = _exact_first([(e, of_bug) for e, of_bug in items
                              if not _faultdrivers_absent(e, of_bug)])
    if items:
        writer.line()
    commented = False
    for expectation, of_bug in ordered(items):
        start = len(writer.lines)
        _write_one(writer, expectation, of_bug, asserted)
        # A plain assertion after a commented one is not under its
        # comment: a paragraph of its own.
        writer.paragraph(start, always=commented)
        commented = any(line.lstrip().startswith('#')
                        for line in writer.lines[start:])


def _write_one(writer, expectation, of_bug, asserted):
    """The lines of one expectation (see :func:`write`)."""
    kind, args = expectation.kind, dict(expectation.args)
    where = 'expectation `%s` %s' % (kind, _short(args))
    why = export.lacking(provisions.expectation_needs(expectation))
    if why:
        raise Unsupported(where, why)
    invariant = invariants.get(kind)
    broken = invariant is not None and args.pop('broken', False)
    if invariant is not None:
        result = _invariant_form(writer, where, invariant, args)
    else:
        method = globals().get('_' + kind.replace('-', '_'))
        if method is None:
            raise Unsupported(where, 'no Nova test means for it')
        result = method(writer, where, **{k.replace('-', '_'): v
                                          for k, v in args.items()})
    of_bug = of_bug or broken
    _emit(writer, result.setup)
    if invariant is not None:
        _invariant(writer, invariant, result, broken)
    elif not of_bug:
        if writer.fixed and _contradicts(kind, args, asserted):
            writer.comment(
                'NOTE(faultdriver): the stock form asserts %s here, '
                'the state the bug leaves; the invariants below say '
                'what is correct.' % _short_kind(kind, args))
            return
        _emit(writer, result.lines)
    elif writer.fixed:
        if result.fixed is None:
            writer.comment(
                'NOTE(faultdriver): the stock form asserts %s here, '
                'the state the bug leaves; the correct state has no '
                'single value.' % _short_kind(kind, args))
        else:
            _emit(writer, result.fixed)
    else:
        writer.comment('FIXME(faultdriver): this is the bug%s: %s' % (
            _bug_ref(writer), result.correct or
            'the correct state differs.'))
        _emit(writer, result.lines)


def _faultdrivers_absent(expectation, of_bug):
    """Whether it is a bug variant's ``log`` expectation that a line
    faultdriver logs (a tracker fix's) is absent: Nova never logs it,
    so in the exported test it shows nothing of the bug.  Left out of
    the stock form (the fixed form says so in a NOTE)."""
    args = expectation.args
    return (of_bug and expectation.kind == 'log' and
            0 in (args.get('count'), args.get('max')) and
            logtexts.origin(args['text'])[1] == 'faultdriver')


def _exact_first(items):
    """``items`` for the stock form, a broken ``migrations-terminal``
    (its assertion: some migration did not end) left out where a
    ``migrations`` expectation states the status the bug leaves a
    migration in: that one shows the bug exactly, and is marked as the
    bug's.  The fixed form keeps the invariant: it states what is
    correct there."""
    def stuck(expectation):
        return expectation.kind == 'migrations' and any(
            status not in statuses.TERMINAL
            for status in expectation.args['statuses'])

    if not any(stuck(e) for e, _ in items):
        return items
    return [(e, of_bug or stuck(e)) for e, of_bug in items
            if not (e.kind == 'migrations-terminal' and
                    e.args.get('broken'))]


def asserted_items(writer, common, own):
    """``[(expectation, of the bug)]`` the test asserts."""
    bug_variant = writer.scenario.expects_bug(writer.variant)
    return only_the_bug([(e, False) for e in common] +
                        [(e, bug_variant) for e in own])


def only_the_bug(items):
    """``items`` (expectation, of the bug) without the invariants that
    hold, when something shows the bug: Nova's reproducer asserts what
    shows the bug and nothing else (a sweep reproducer carries every
    invariant, most of them holding, some vacuous: no volume to check
    attachments of).  The scenario's facts (non-invariant expectations
    of every variant) stay: they say where the bug leaves the servers.
    So does an invariant run after the others (``after``) before a
    broken one: it changes the state that one sees (what breaks
    ``periodics-clean`` is the periodics ``moves-again`` runs)."""
    def broken(expectation):
        return invariants.get(expectation.kind) is not None and bool(
            expectation.args.get('broken'))

    shows = [e for e, of_bug in items if of_bug or broken(e)]
    if not shows:
        return items
    last = max(invariants.rank(e.kind) for e in shows)
    return [(e, of_bug) for e, of_bug in items
            if of_bug or broken(e) or invariants.get(e.kind) is None or
            0 < invariants.rank(e.kind) < last]


def _invariant_form(writer, where, invariant, args):
    """The invariant's assertions from its export form: ``lines`` hold
    it, ``fixed`` (here: its broken form) says it is broken."""
    if invariant.export is None:
        raise Unsupported(where, 'no Nova test means for it')
    try:
        form = invariant.export(writer, **{k.replace('-', '_'): v
                                           for k, v in args.items()})
    except invariants.NotExportable as exc:
        raise Unsupported(where, str(exc))
    writer.use(*form.uses)
    exact = None
    if invariant.exact is not None and invariant.name in writer.found:
        exact = invariant.exact(writer.found[invariant.name])
    return Assertion(
        ['self.assertEqual(%s, %s)' % (form.empty, form.actual)],
        ['self.assertEqual(%s, %s)' % (exact, form.actual)] if exact else
        ['self.assertNotEqual(%s, %s)' % (form.empty, form.actual)])


def _invariant(writer, invariant, result, broken):
    if broken and not writer.fixed:
        writer.comment('FIXME(faultdriver): this is the bug%s: %s.' % (
            _bug_ref(writer), invariant.description))
        _emit(writer, result.fixed)     # the invariant's broken form
    else:
        writer.comment('Invariant: %s.' % invariant.description)
        _emit(writer, result.lines)


def _bug_ref(writer):
    finding = writer.finding
    return ' (%s)' % finding if finding else ''


def _emit(writer, lines):
    for line in lines:
        writer.line(line)


def _short(args):
    return '{%s}' % ', '.join('%s: %s' % item for item in args.items())


def _short_kind(kind, args):
    return '%s %s' % (kind, _short(args))


def _contradicts(kind, args, asserted):
    """Whether a fact of every variant contradicts an invariant the
    fixed form asserts (so it is the bug's, not the scenario's)."""
    if kind == 'migrations' and 'migrations-terminal' in asserted:
        return any(s not in statuses.TERMINAL for s in args['statuses'])
    if kind == 'host-usage' and 'accounting-matches-placement' in asserted:
        return ('pinned' in args and 'placement' in args and
                args['pinned'] != args['placement'])
    if kind == 'server' and 'servers-settled' in asserted:
        return bool(args.get('task_state')) or args.get(
            'status', 'ACTIVE') not in statuses.SETTLED_SERVER
    return False


# -- counts ------------------------------------------------------------------

def _count_lines(actual, count=None, min=None, max=None, text=None):
    """Assertions that ``actual`` (an expression) is within the bounds."""
    lines = []
    if count is not None:
        if text is not None and count == 0:
            lines.append('self.assertNotIn(%r, %s)' % text)
        else:
            lines.append('self.assertEqual(%d, %s)' % (count, actual))
    if min is not None:
        if text is not None and min == 1:
            lines.append('self.assertIn(%r, %s)' % text)
        else:
            lines.append('self.assertGreaterEqual(%s, %d)' % (actual, min))
    if max is not None:
        if text is not None and max == 0:
            lines.append('self.assertNotIn(%r, %s)' % text)
        else:
            lines.append('self.assertLessEqual(%s, %d)' % (actual, max))
    if not lines:
        lines.append('self.assertGreaterEqual(%s, 1)' % actual)
    return lines


def _symptom(lines_as_written, absent, count, min, max, what):
    """A counted symptom: the fixed form is its absence when the bug
    form says it happens (min >= 1); else no single correct value."""
    happens = (min or 0) >= 1 or (count or 0) >= 1
    return Assertion(lines_as_written, [absent] if happens else None,
                     '%s should not happen.' % what if happens else None)


def _log(writer, where, text, count=None, min=None, max=None,
         **elsewhere):
    # ``logged-elsewhere`` says who logs the text; the test counts it
    # alike.
    output = 'self.compute_log.output'
    actual = '%s.count(%r)' % (output, text)
    lines = _count_lines(actual, count, min, max, (text, output))
    return _symptom(lines, 'self.assertNotIn(%r, %s)' % (text, output),
                    count, min, max, 'logging %r' % text)


def _periodic_errors(writer, where, host, count=None, min=None, max=None):
    writer.use('failed_periodics')
    actual = 'self._failed_periodics(%r)' % host
    return _symptom(_count_lines(actual, count, min, max),
                    'self.assertEqual(0, %s)' % actual, count, min, max,
                    'a failing periodic on %s' % host)


def _faults(writer, where, host=None, point=None, action=None, count=None,
            min=None, max=None):
    if action not in (None, 'crash', 'raise'):
        raise Unsupported(where, 'only crash and raise faults are counted '
                          'by the exported test')
    writer.use('faults')
    args = ', '.join('%s=%r' % (k, v) for k, v in (
        ('hostname', host), ('point', point), ('action', action)) if v)
    actual = 'self.faults.count(%s)' % args
    return Assertion(_count_lines(actual, count, min, max))


# -- state -------------------------------------------------------------------

def _migrations(writer, where, server, statuses):
    name = writer.server(server, where)
    writer.use('migrations')
    return Assertion(['self.assertEqual(', '    %r,' % list(statuses),
                      '    [migration[\'status\'] for migration in '
                      'self._migrations(%s)])' % name],
                     correct='the migrations should not be left so.')


def _server(writer, where, server, **fields):
    name = writer.server(server, where)
    keys = {'status': 'status', 'host': 'OS-EXT-SRV-ATTR:host',
            'task_state': 'OS-EXT-STS:task_state'}
    setup = ['%s = self.admin_api.get_server(%s[\'id\'])' % (name, name)]
    lines = []
    for key, value in fields.items():
        if value is None:
            lines.append('self.assertIsNone(%s[%r])' % (name, keys[key]))
        else:
            lines.append('self.assertEqual(%r, %s[%r])'
                         % (value, name, keys[key]))
    return Assertion(lines, setup=setup)


def _pinned(writer, where, host, cpus):
    writer.use('pinned_cpus')
    return Assertion(['self.assertEqual(%r, self._pinned_cpus(%r))'
                      % (list(cpus), host)])


def _host_usage(writer, where, host, pinned=None, placement=None):
    lines = []
    if pinned is not None:
        writer.use('pinned_cpus')
        lines.append('self.assertEqual(%d, len(self._pinned_cpus(%r)))'
                     % (pinned, host))
    if placement is not None:
        writer.use('placement_pcpus')
        lines.append('self.assertEqual(%d, self._placement_pcpus(%r))'
                     % (placement, host))
    fixed = None
    if pinned is not None and placement is not None and pinned != placement:
        writer.use('pinned_cpus', 'placement_pcpus')
        fixed = ['self.assertEqual(len(self._pinned_cpus(%r)),' % host,
                 '                 self._placement_pcpus(%r))' % host]
    return Assertion(lines, fixed, 'the pCPUs %s pins should be the PCPUs '
                     'placement allocated there.' % host)


def _servers_share_pcpus(writer, where, servers, count):
    first, second = (writer.server(s, where) for s in servers)
    writer.use('pinning')
    if count == 'all':
        return Assertion([
            'self.assertTrue(self._pinning(%s))' % first,
            'self.assertLessEqual(set(self._pinning(%s)),' % first,
            '                     set(self._pinning(%s)))' % second])
    return Assertion([
        'self.assertEqual(%d, len(set(self._pinning(%s)) &' % (count, first),
        '                     set(self._pinning(%s))))' % second])
