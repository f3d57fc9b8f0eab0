"""Expectations: each kind checks the state a variant ended in and says
what it found, met or not (see schema.yaml for the kinds)."""

import re
import time
import typing

from faultdriver.actions import error as error_action
from faultdriver.novacompat import texts
from faultdriver.scenario import runstate
from faultdriver.scenario import tiers
from faultdriver import waiting

#: What a check returns: met, the expectation's text, the actual value.
Checked = typing.Tuple[bool, str, typing.Any]
State = runstate.RunState
#: The run's steps (faultdriver.scenario.steps.Steps: what the checks
#: that act on the cloud use).
Steps = typing.Any

PERIODIC_ERROR = texts.PERIODIC_ERROR
#: The last line of a logged traceback, ``nova.exception.Name: message``
#: (oslo.log prefixes each traceback line with time, pid and logger).
EXCEPTION_LINE = re.compile(
    r'(?:^|\s)(?:[a-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Invalid|'
    r'NotFound|Failed|Timeout|Conflict)): ', re.M)


def _counted(args: typing.Mapping[str, int],
            actual: int) -> typing.Tuple[bool, str]:
    """(met, expected text) of a count/min/max expectation."""
    parts, met = [], True
    if 'count' in args:
        parts.append('== %d' % args['count'])
        met &= actual == args['count']
    if 'min' in args:
        parts.append('>= %d' % args['min'])
        met &= actual >= args['min']
    if 'max' in args:
        parts.append('<= %d' % args['max'])
        met &= actual <= args['max']
    if not parts:
        parts.append('>= 1')
        met = actual >= 1
    return met, ' and '.join(parts)


def _migrations(steps: Steps, state: State, server: str,
                statuses: typing.List[str]) -> Checked:
    actual = [m.status for m in state.migrations if m.server == server]
    return actual == statuses, '%s migrations %s' % (server, statuses), actual


def _server(steps: Steps, state: State, server: str,
            **fields: typing.Any) -> Checked:
    found = state.servers.get(server)
    actual = {k: getattr(found, k, None) for k in fields}
    return actual == fields, '%s %s' % (server, fields), actual


def _log(steps: Steps, state: State, text: str, **count: int) -> Checked:
    actual = steps.log_text().count(text)
    met, wanted = _counted(count, actual)
    return met, 'log %r count %s' % (text, wanted), actual


def _decisions(steps: Steps, state: State, server: str,
               outcomes: typing.List[typing.Union[str, int]]) -> Checked:
    """What the API answered the server's ``confirm``/``revert`` steps,
    in order: ``accepted`` or the refusal's HTTP status (a concurrent
    second call that Nova must refuse or serialise)."""
    actual = [outcome for alias, _action, outcome in steps.decisions
              if alias == server]
    return (actual == outcomes,
            '%s confirms/reverts answered %s' % (server, outcomes), actual)


def _periodic_errors(steps: Steps, state: State, host: str,
                     **count: int) -> Checked:
    actual = sum(1 for h, error in steps.periodics if h == host and error)
    met, wanted = _counted(count, actual)
    return met, 'periodic errors on %s %s' % (host, wanted), actual


def _faults(steps: Steps, state: State, count: typing.Optional[int] = None,
            min: typing.Optional[int] = None,
            max: typing.Optional[int] = None,
            **filters: typing.Any) -> Checked:
    actual = sum(1 for f in state.faults if f.action and all(
        getattr(f, k, None) == v for k, v in filters.items()))
    bounds = {k: v for k, v in (('count', count), ('min', min),
                                ('max', max)) if v is not None}
    met, wanted = _counted(bounds, actual)
    return met, 'faults %s %s' % (filters, wanted), actual


def _pinned(steps: Steps, state: State, host: str,
            cpus: typing.List[int]) -> Checked:
    actual = state.hosts[host].pinned_cpus
    return actual == cpus, 'pinned pCPUs on %s %s' % (host, cpus), actual


def _share(steps: Steps, state: State, servers: typing.List[str],
           count: typing.Union[int, str]) -> Checked:
    """``count: all``: every pCPU number of the first server (tiers give
    servers different vCPU counts: real libvirt here has 2 pCPUs)."""
    a, b = (set(state.servers[s].pinned_cpus) for s in servers)
    actual = len(a & b)
    if count == 'all':
        return (bool(a) and a <= b,
                'every pCPU number of %s is one of %s\'s' % tuple(servers),
                '%s of %s' % (sorted(a & b), sorted(a)))
    return (actual == count,
            '%s and %s share %d pCPU numbers' % (servers[0], servers[1],
                                                 int(count)), actual)


def _usage(steps: Steps, state: State, host: str,
           **wanted: int) -> Checked:
    found = state.hosts[host]
    actual = {'pinned': len(found.pinned_cpus),
              'placement': found.placement_pcpu}
    actual = {key: actual[key] for key in wanted}
    return actual == wanted, 'usage on %s %s' % (host, wanted), actual


@tiers.needs(tiers.Provision.REAL_HYPERVISOR)
def _guest(steps: Steps, seen: State, server: str, host: str,
           state: str) -> Checked:
    """The hypervisor's view (libvirt, not Nova's database); ``seen``
    is the collected state (its ``state`` is the guest's).  A tier
    without a real hypervisor is refused when the scenario loads."""
    found = seen.servers.get(server)
    if found is None or found.guests is None:
        # Never met without the hypervisor's answer, even for 'absent'.
        raise RuntimeError('the run state has no guests of %s: no real '
                           'hypervisor was asked' % server)
    actual = found.guests.get(host, 'absent')
    return (actual == state,
            'guest of %s on %s %s' % (server, host, state), actual)


#: Migration statuses Nova never leaves by itself.
TERMINAL = ('completed', 'confirmed', 'reverted', 'error', 'failed',
            'cancelled')
#: Where a move waits for someone else: the user's confirm or revert
#: (finished), the evacuated source's return (done).
WAITING = ('finished', 'done')
SETTLED_SERVER = ('ACTIVE', 'SHUTOFF', 'ERROR')


def _terminal(steps: Steps, state: State) -> Checked:
    """Invariant: every migration ended (none left running, preparing or
    post-migrating after the cloud settled)."""
    actual = ['%s#%s %s' % (m.server, m.id, m.status)
              for m in state.migrations if m.status not in TERMINAL]
    return not actual, 'every migration in a terminal status', \
        actual or 'all terminal'


def _settled(steps: Steps, state: State) -> Checked:
    """Invariant: every server ACTIVE, SHUTOFF or ERROR with no task in
    progress (a task state left set needs an operator)."""
    actual = ['%s %s/%s' % (alias, s.status, s.task_state)
              for alias, s in state.servers.items()
              if s.status not in SETTLED_SERVER or s.task_state]
    return not actual, 'every server ACTIVE, SHUTOFF or ERROR, no task ' \
        'state', actual or 'all settled'


def _not_shared(steps: Steps, state: State) -> Checked:
    """Invariant: no pCPU is pinned to two servers on the same host."""
    owners: typing.Dict[typing.Tuple[typing.Optional[str], int],
                        typing.List[str]] = {}
    for alias, server in state.servers.items():
        for cpu in server.pinned_cpus:
            owners.setdefault((server.host, cpu), []).append(alias)
    actual = ['%s pCPU %s: %s' % (host, cpu, ', '.join(sorted(names)))
              for (host, cpu), names in sorted(owners.items())
              if len(names) > 1]
    return not actual, 'no pCPU pinned to two servers on a host', \
        actual or 'none shared'


#: Where a live migration's source runs its periodic during a follow-up
#: move: the source's driver call, after the destination's claim gave
#: the server its new migration context (the window of the stale
#: migration-context class, findings F1).
WINDOW_RULE = 'live_migration.before: 1*periodic'


def _moves_again(steps: Steps, state: State, timeout: float = 60
                 ) -> Checked:
    """Invariant: the cloud is usable, not only consistent: every ACTIVE
    server the scenario moved (every ACTIVE server if it moved none)
    live-migrates away (the scheduler picks the host) and back, and each
    move's source runs its periodic while the move is under way (what
    periodics-clean then checks)."""
    failed = []
    moved = [alias for alias in steps.servers if steps.moves.get(alias)]
    for alias, server in steps.servers.items():
        home = state.servers.get(alias)
        if home is None or home.status != 'ACTIVE' or (
                moved and alias not in moved):
            continue
        for leg, target in (('away', None), ('back', home.host)):
            try:
                _live_migrate(steps, server, target, timeout)
            except Exception as exc:
                failed.append('%s (%s): %s' % (alias, leg, str(exc)[:200]))
                break
    return not failed, 'every ACTIVE server live-migrates away and back', \
        failed or 'all moved'


def _live_migrate(steps: Steps, server: typing.Mapping[str, typing.Any],
                  host: typing.Optional[str], timeout: float) -> None:
    nova = steps.nova
    source = nova.api.get_server(server['id'])['OS-EXT-SRV-ATTR:host']
    count = len(nova.migrations(server)) + 1
    index = nova.faults.add_rule(source, WINDOW_RULE)
    try:
        nova.api.post_server_action(server['id'], {
            'os-migrateLive': {'host': host, 'block_migration': 'auto'}})
        nova.wait_newest_migration(server, 'completed', count,
                                   timeout=timeout)
        nova.wait_for_server(server, timeout=timeout, status='ACTIVE',
                             task_state=None)
    finally:
        # Not hit when the move failed early: it must not fire later.
        nova.faults.remove_rule(source, index)


def _periodics_clean(steps: Steps, state: State) -> Checked:
    """Invariant: no periodic failed since ``recover`` began (its own
    periodics, the accounting check's and those moves-again runs inside
    each follow-up move).  The actual value names the exceptions and, as
    evidence, the context of a migration in a terminal status the
    tracker applied (Nova's line ``Migration status is error``)."""
    marks = steps.recovery_marks or {}
    now = steps.log_counts()
    text = steps.log_text()
    actual = []
    for host in steps.scenario.hosts:
        new = now[('error', host)] - marks.get(('error', host), 0)
        if not new:
            continue
        # A periodic that failed with the injected exception is the fault
        # itself (a raise at a periodic's step that fired after recover
        # began, as when a change reorders the calls), not a consequence.
        caused = [name for name, injected in _logged_periodic_errors(
            text, PERIODIC_ERROR % host, new) if not injected]
        if caused:
            names = list(dict.fromkeys(filter(None, caused)))
            actual.append('%s: %d periodic error(s) (%s)' % (
                host, len(caused), ', '.join(names) or
                'exception not logged'))
    if actual:
        actual += ["the tracker applied the migration context of a "
                   "migration in status '%s'" % status
                   for status in TERMINAL
                   if now[('applied', status)] >
                   marks.get(('applied', status), 0)]
    return not actual, 'no periodic failed after recovery began', \
        actual or 'none failed'


def _logged_periodic_errors(
        text: str, marker: str, last: int
) -> typing.List[typing.Tuple[typing.Optional[str], bool]]:
    """``(exception class name or None, injected)`` for each of the
    ``last`` occurrences of ``marker`` (a periodic's error line): the
    exception its traceback ends in, and whether that is faultdriver's
    injected one (its message starts with the raise action's prefix)."""
    starts = [m.start() for m in re.finditer(re.escape(marker), text)]
    errors: typing.List[typing.Tuple[typing.Optional[str], bool]] = []
    for start in starts[-last:]:
        found = EXCEPTION_LINE.search(text, start, start + 20000)
        if not found:
            errors.append((None, False))
            continue
        line = text[found.end():text.find('\n', found.end())]
        errors.append((found.group(1),
                       line.startswith(error_action.INJECTED_PREFIX)))
    return errors


def _accounting(steps: Steps, state: State,
                hosts: typing.Optional[typing.List[str]] = None
                ) -> Checked:
    hosts = hosts or steps.scenario.hosts
    actual = {}
    for host in hosts:
        steps.nova.run_periodic(host)
        actual[host] = '%d pinned / %d PCPU' % (
            len(steps.nova.pinned_cpus(host)),
            steps.nova.placement_pcpus(host))
    met = all(len(steps.nova.pinned_cpus(h)) ==
              steps.nova.placement_pcpus(h) for h in hosts)
    return met, 'pinned pCPUs match placement on %s' % ', '.join(hosts), \
        actual


def misplaced_allocations(
        servers: typing.Mapping[str, runstate.RunServer],
        migrations: typing.Sequence[runstate.RunMigration],
        allocations: typing.Mapping[str, typing.Mapping[
            str, typing.Mapping[str, int]]]) -> typing.List[str]:
    """What placement holds that Nova's records do not account for, every
    resource class: ``servers`` by alias (the live ones), ``migrations``,
    ``allocations`` ``{host: {consumer: {class: amount}}}``.

    A server's consumer belongs on its host, and on both ends of a move
    still in progress (an evacuation's source keeps it until it is back,
    a resize's until it is confirmed); a migration's consumer only while
    its migration is in progress (``TERMINAL`` ones hold nothing); any
    other consumer (a deleted server's) holds nothing.  A live server
    with a host holds something there."""
    by_uuid = {server.id: alias for alias, server in servers.items()}
    by_migration = {m.uuid: m for m in migrations}
    going: typing.Dict[str, typing.Set[typing.Optional[str]]] = {}
    for m in migrations:
        if m.status not in TERMINAL:
            going.setdefault(m.server, set()).update(
                (m.source_compute, m.dest_compute))
    found = []
    for host, consumers in sorted(allocations.items()):
        for consumer, resources in sorted(consumers.items()):
            what = ', '.join('%s %s' % (amount, name) for name, amount in
                             sorted(resources.items()))
            if consumer in by_uuid:
                alias = by_uuid[consumer]
                if host == servers[alias].host or \
                        host in going.get(alias, ()):
                    continue
                found.append('%s holds %s for %s, which is on %s' % (
                    host, what, alias, servers[alias].host))
            elif consumer in by_migration:
                m = by_migration[consumer]
                if m.status not in TERMINAL and host in (
                        m.source_compute, m.dest_compute):
                    continue
                found.append('%s holds %s for migration %s#%s (%s)' % (
                    host, what, m.server, m.id, m.status))
            else:
                found.append('%s holds %s for %s, no server or migration '
                             'of the scenario' % (host, what, consumer))
    for alias, server in sorted(servers.items()):
        if server.host and server.host in allocations and \
                server.id not in allocations[server.host]:
            found.append('%s holds nothing for %s, which is on it' % (
                server.host, alias))
    return found


def _allocations_consistent(steps: Steps, state: State) -> Checked:
    """Invariant: placement's allocations are what Nova's servers and
    migrations account for, every resource class, pinned or not (see
    :func:`misplaced_allocations`); read in the state collected after
    ``recover``'s periodics."""
    allocations = {host: info.allocations
                   for host, info in state.hosts.items()
                   if info.allocations is not None}
    found = misplaced_allocations(state.servers, state.migrations,
                                  allocations)
    return not found, 'placement holds what servers and migrations ' \
        'account for', found or 'all accounted for'


#: How one server's moves ended (:func:`moves_ended`): JSON, as the
#: sweep saves the clean run's and a case's scenario names it.
MoveEnd = typing.Dict[str, typing.Any]


def moves_ended(state: State) -> typing.Dict[str, MoveEnd]:
    """How the moves ended: per server, its status, host and migration
    statuses (oldest first)."""
    return {alias: {'status': server.status, 'host': server.host,
                    'migrations': [m.status for m in state.migrations
                                   if m.server == alias]}
            for alias, server in state.servers.items()}


def move_end_matches(state: State) -> typing.Dict[str, bool]:
    """``{host: bool}``: whether each host's pinned pCPUs matched
    placement when the moves ended, before recover's periodics (the
    state's ``move_end``; {} where it was not taken)."""
    return {host: counted.matches
            for host, counted in (state.move_end or {}).items()}


def _as_clean(steps: Steps, state: State,
              outcome: typing.Optional[typing.Dict[str, MoveEnd]] = None,
              accounting: typing.Optional[typing.Dict[str, bool]] = None
              ) -> Checked:
    """Invariant of the cases whose event changes timing only (a
    periodic at a step, this host's or another's): the moves end as in
    the workflow's clean run (``outcome``, what :func:`moves_ended` said
    of it), and every host whose pinned pCPUs matched placement when the
    clean run's moves ended (``accounting``, :func:`move_end_matches`)
    matches when this run's ended, before any periodic of recover's
    repairs it (a periodic in bug 1879878's window frees a usage that
    nothing claims back until the next one).  When the periodic runs is
    no fault: an outcome it changes is a race in Nova."""
    actual = moves_ended(state)
    differ: typing.Dict[str, typing.Any] = {
        alias: actual.get(alias) for alias, wanted in
        (outcome or {}).items() if actual.get(alias) != wanted}
    move_end = state.move_end or {}
    for host, matched in sorted((accounting or {}).items()):
        counted = move_end.get(host)
        if matched and counted and not counted.matches:
            differ['%s when the moves ended' % host] = (
                '%d pinned / %d PCPU in placement' % (
                    len(counted.pinned_cpus), counted.placement_pcpu))
    return (not differ, 'moves end as in the clean run',
            differ or 'as in the clean run')


def misattached_volumes(servers: typing.Mapping[str, runstate.RunServer]
                        ) -> typing.List[str]:
    """What breaks ``volume-attachments`` in the state's servers: each
    volume of a server has exactly one attachment, connected to the host
    the server is on, and it is the one its block device mapping names;
    where real guests are asked, the guest on the server's host has the
    volume's device as a disk."""
    found = []
    for alias, server in sorted(servers.items()):
        for volume, info in sorted((server.volumes or {}).items()):
            attachments = info['attachments']
            hosts = [a['host'] for a in attachments]
            if len(attachments) != 1:
                found.append('volume %s of %s has %d attachments (%s)' % (
                    volume[:8], alias, len(attachments),
                    ', '.join(h or 'not connected' for h in hosts) or
                    'none'))
            elif hosts[0] != server.host:
                found.append('volume %s of %s is connected to %s, the '
                             'server is on %s' % (volume[:8], alias,
                                                  hosts[0] or 'no host',
                                                  server.host))
            if attachments and info.get('bdm') not in [
                    a['id'] for a in attachments]:
                found.append('the block device mapping of %s names '
                             'attachment %s, not one of volume %s' % (
                                 alias, info.get('bdm'), volume[:8]))
            # Real guests (libvirt tier): ``guest_disk`` {host: whether
            # that host's guest of the server has the volume's device}.
            if (info.get('guest_disk') or {}).get(server.host) is False:
                found.append('the guest of %s on %s does not have volume '
                             '%s as a disk' % (alias, server.host,
                                               volume[:8]))
    return found


def _volume_attachments(steps: Steps, state: State) -> Checked:
    """Invariant: every volume of every server is attached once, on the
    server's host, as its block device mapping says."""
    found = misattached_volumes(state.servers)
    return (not found, 'each volume attached once, on its server\'s host',
            found or 'all attached where their servers are')


def misbound_ports(servers: typing.Mapping[str, runstate.RunServer]
                   ) -> typing.List[str]:
    """What breaks ``port-bindings``: each port of a server has one
    binding, ACTIVE, on the host the server is on (no inactive binding
    left once the move ended)."""
    found = []
    for alias, server in sorted(servers.items()):
        for port, bindings in sorted((server.ports or {}).items()):
            wanted = {server.host: 'ACTIVE'}
            if bindings != wanted:
                found.append('port %s of %s (on %s) has bindings %s' % (
                    port[:8], alias, server.host, ', '.join(
                        '%s %s' % item for item in sorted(
                            bindings.items())) or 'none'))
    return found


def _port_bindings(steps: Steps, state: State) -> Checked:
    """Invariant: every port of every server is bound once, active, on
    the server's host."""
    found = misbound_ports(state.servers)
    return (not found, 'each port bound once, active, on its server\'s '
            'host', found or 'all bound where their servers are')


#: Seconds a task the state shows tracked may take to end before
#: tasks-ended counts it: a call that was still answering when the state
#: was read (settle waits for quiet, not for every cast's last line).
TASK_GRACE = 5


def _tasks_ended(steps: Steps, state: State) -> Checked:
    """Invariant: once the steps ended, no running nova-compute tracks a
    task for Nova's graceful shutdown (faultdriver.manager_tasks).  A
    task tracked for good makes every later graceful stop of that host
    wait out the manager's whole wait for it (F19).  A task the state
    shows is given ``TASK_GRACE`` seconds to end; the actual names those
    left, per host, with the server each is for."""
    alias_of = {server.id: alias
                for alias, server in state.servers.items()}
    hosts = [host for host, info in sorted(state.hosts.items())
             if info.tasks]

    def left() -> typing.Dict[str, typing.List[str]]:
        found = {}
        for host in hosts:
            tasks = steps.nova.tasks_in_progress(host)
            if tasks:
                found[host] = ['%s (%s)' % (
                    task['name'], alias_of.get(task['instance_uuid'],
                                               task['instance_uuid']))
                    for task in tasks]
        return found
    found: typing.Dict[str, typing.List[str]] = {}

    def ended() -> bool:
        found.clear()
        found.update(left())
        return not found
    if hosts:
        waiting.until(ended, TASK_GRACE, 'tasks ending', fail=False)
    return (not found, 'no nova-compute tracks a task once the steps '
            'ended', found or 'none tracked')


#: How a move that Nova gave up cleanly ends: never ``error``.
ROLLED_BACK = ('failed', 'cancelled', 'reverted')


def _after_shutdown(steps: Steps, state: State,
                    outcome: typing.Optional[typing.Dict[str, MoveEnd]] = None,
                    origin: typing.Optional[typing.Dict[str, str]] = None,
                    rollback: bool = True) -> Checked:
    """Invariant of the cases that stop a compute gracefully (no hold)
    and start it again: what Nova's graceful shutdown promises.  Each
    server ends as in the workflow's clean run (``outcome``,
    :func:`moves_ended`), or, where the move may be given up
    (``rollback``: not an evacuation, whose source is down already),
    rolled back cleanly: ACTIVE on the host it was booted on
    (``origin``), its newest migration %s, never ``error``.  The actual
    says which, per server.""" % '/'.join(ROLLED_BACK)
    actual = moves_ended(state)
    ended, wrong = {}, {}
    for alias, wanted in (outcome or {}).items():
        got = actual.get(alias)
        if got == wanted:
            ended[alias] = 'as in the clean run'
        elif (rollback and got and got['migrations'] and
              got['migrations'][-1] in ROLLED_BACK and
              got['status'] == 'ACTIVE' and
              got['host'] == (origin or {}).get(alias)):
            ended[alias] = 'rolled back (%s)' % got['migrations'][-1]
        else:
            wrong[alias] = got
    return (not wrong, 'after a graceful stop and a start, moves end as '
            'in the clean run%s' % (' or roll back cleanly' if rollback
                                   else ''),
            wrong or ended)


KINDS: typing.Dict[str, typing.Callable[..., Checked]] = {
    'migrations': _migrations,
    'server': _server,
    'log': _log,
    'periodic-errors': _periodic_errors,
    'faults': _faults,
    'allocations-consistent': _allocations_consistent,
    'decisions': _decisions,
    'pinned': _pinned,
    'servers-share-pcpus': _share,
    'guest': _guest,
    'host-usage': _usage,
    'migrations-terminal': _terminal,
    'servers-settled': _settled,
    'pcpus-not-shared': _not_shared,
    'moves-again': _moves_again,
    'periodics-clean': _periodics_clean,
    'accounting-matches-placement': _accounting,
    'outcome-as-clean': _as_clean,
    'outcome-after-shutdown': _after_shutdown,
    'volume-attachments': _volume_attachments,
    'port-bindings': _port_bindings,
    'tasks-ended': _tasks_ended,
}
#: The cloud's invariants (the sweep checks them after every case); each
#: also takes ``broken: true``.
INVARIANTS = ('migrations-terminal', 'servers-settled', 'pcpus-not-shared',
              'allocations-consistent', 'volume-attachments',
              'port-bindings', 'tasks-ended',
              'accounting-matches-placement', 'moves-again',
              'periodics-clean')
#: Invariants of some cases only: the sweep adds them where they apply
#: (``outcome-as-clean`` to timing-only cases, with the clean outcome;
#: ``outcome-after-shutdown`` to graceful stops without a hold).
CASE_INVARIANTS = ('outcome-as-clean', 'outcome-after-shutdown')
#: Checked after the others, in this order: they change the state (run
#: periodics, move servers), and periodics-clean looks at what they ran.
LAST = ('accounting-matches-placement', 'moves-again', 'periodics-clean')


def evaluate(steps: Steps, expectations: typing.Iterable[typing.Any],
             state: State) -> typing.List[runstate.ExpectationResult]:
    """Check each ExpectationSpec on the run's ``state``: verdicts, the
    state-changing ones (``LAST``) last."""
    ordered = sorted(expectations, key=lambda e: LAST.index(e.kind) + 1
                     if e.kind in LAST else 0)
    verdicts = []
    for expectation in ordered:
        kind, args = expectation.kind, dict(expectation.args)
        # An invariant written ``broken: true``: the scenario shows it
        # broken (a sweep finding's reproducer).
        broken = kind in INVARIANTS + CASE_INVARIANTS and \
            args.pop('broken', False)
        began = time.monotonic()
        try:
            met, text, actual = KINDS[kind](steps, state, **args)
            if broken:
                met, text = not met, 'BROKEN: ' + text
        except Exception as exc:
            met, text, actual = False, '%s %s' % (kind, args), \
                'could not check: %s: %s' % (type(exc).__name__, exc)
        verdicts.append(runstate.ExpectationResult(
            kind=kind, expectation=text, met=met, actual=actual,
            seconds=round(time.monotonic() - began, 2)))
    return verdicts
