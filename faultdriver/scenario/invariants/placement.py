"""The invariant of placement's allocations: what Nova's servers and
migrations account for, every resource class."""

import typing

from faultdriver.scenario.invariants import base
from faultdriver.scenario import runstate
from faultdriver.scenario import statuses


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
        if m.status not in statuses.TERMINAL:
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
                if m.status not in statuses.TERMINAL and host in (
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


def allocations_consistent(steps: base.Steps,
                           state: base.State) -> base.Checked:
    """Placement's allocations are what Nova's servers and migrations
    account for, every resource class, pinned or not (see
    :func:`misplaced_allocations`); read in the state collected after
    ``recover``'s periodics."""
    allocations = {host: info.allocations
                   for host, info in state.hosts.items()
                   if info.allocations is not None}
    found = misplaced_allocations(state.servers, state.migrations,
                                  allocations)
    return not found, 'placement holds what servers and migrations ' \
        'account for', found or 'all accounted for'


def _export(writer: base.Writer) -> base.NovaForm:
    return base.NovaForm(('misplaced_allocations',),
                         'self._misplaced_allocations(%s)'
                         % writer.server_dict(), '[]')


ALLOCATIONS_CONSISTENT = base.Invariant(
    'allocations-consistent',
    'placement should hold only what the servers and their moves in '
    'progress account for',
    allocations_consistent, _export,
    details="In every resource class, pinned servers or not: a server's "
            "consumer on its host (and on both ends of a move still in "
            "progress), a migration's consumer only while the migration "
            "is in progress, nothing for any other consumer (a deleted "
            "server's), something on the host of every live server.  Read "
            "in the state collected after the steps (recover's periodics "
            "ran).")
