"""What a run leaves on a cloud, and what others put there meanwhile.

A case that leaked an allocation (a Nova bug its invariants judged)
leaves it on a cloud: no new stack wipes placement between a sweep's
cases there, and a runner killed mid-run leaves its servers to ``cloud
restore``.  Both end the same way, here: read the run's consumers (its
servers and their migrations, while the API still lists them), delete
the servers, then delete what placement holds for exactly those
consumers on the profile's hosts -- never another consumer's.

The same reading tells a run whether anyone else used its hosts while
it ran (:func:`present`): a server booted there, or an allocation made
there, by someone else changes what the run's invariants count, so such
a run is "cloud dirty" -- never a finding.
"""

import typing

from faultdriver.cloud import api as api_module

#: The placement resource providers to look on: the profile's
#: nodenames (a host outside the profile is never touched).
Nodenames = typing.Iterable[str]


def consumers(cloud: api_module.CloudAPI,
              server_ids: typing.Iterable[str]) -> typing.Set[str]:
    """The servers' ids and their migrations' uuids, read before the
    servers are deleted (the API lists a deleted server's migrations no
    more).  A server the API no longer knows adds only its id."""
    found = set(server_ids)
    for server_id in sorted(found):
        try:
            migrations = cloud.get('/os-migrations?instance_uuid=%s'
                                   % server_id)['migrations']
        except api_module.APIError:
            continue
        found.update(m['uuid'] for m in migrations if m.get('uuid'))
    return found


def drop(cloud: api_module.CloudAPI, nodenames: Nodenames,
         ours: typing.Collection[str],
         name_of: typing.Callable[[str], str] = str) -> typing.List[str]:
    """Delete the allocations of consumers ``ours`` left on the
    providers of ``nodenames`` (``name_of(nodename)`` says where, in
    what is said); a line each."""
    said = []
    for nodename in nodenames:
        providers = cloud.get('/resource_providers?name=%s' % nodename,
                              service='placement',
                              translate=False)['resource_providers']
        for provider in providers:
            held = cloud.get('/resource_providers/%s/allocations'
                             % provider['uuid'], service='placement',
                             translate=False)['allocations']
            for consumer, allocation in sorted(held.items()):
                if consumer not in ours:
                    continue
                cloud.request('DELETE', '/allocations/%s' % consumer,
                              service='placement', ok=(204, 404))
                said.append('deleted %s left in placement on %s for %s '
                            'after its server was deleted' % (
                                ', '.join('%s %s' % (n, r) for r, n in
                                          sorted(allocation[
                                              'resources'].items())),
                                name_of(nodename), consumer))
    return said


#: One thing on a host: ``(kind, id, alias)``, kind ``server`` or
#: ``allocation`` (its id the consumer's).
Present = typing.Tuple[str, str, str]


def present(cloud: api_module.CloudAPI,
            hosts: typing.Mapping[str, typing.Tuple[str, str]]
            ) -> typing.Set[Present]:
    """What is on the hosts now: every server (any project's) and every
    placement consumer with an allocation on their providers.
    ``hosts``: ``{alias: (service host, nodename)}``."""
    found = set()
    for alias, (host, nodename) in sorted(hosts.items()):
        for server in cloud.get('/servers/detail?all_tenants=1&host=%s'
                                % host, translate=False)['servers']:
            found.add(('server', server['id'], alias))
        providers = cloud.get('/resource_providers?name=%s' % nodename,
                              service='placement',
                              translate=False)['resource_providers']
        for provider in providers:
            held = cloud.get('/resource_providers/%s/allocations'
                             % provider['uuid'], service='placement',
                             translate=False)['allocations']
            found.update(('allocation', consumer, alias)
                         for consumer in held)
    return found


def foreign(now: typing.Set[Present], before: typing.Set[Present],
            ours: typing.Collection[str]) -> typing.List[str]:
    """What ``present`` found now that was not there ``before`` and is
    none of ``ours`` (the run's servers and migrations), a description
    each ("server ID on src", "allocation of ID on dest")."""
    return ['%s %s on %s' % (kind if kind == 'server' else 'allocation of',
                             ident, alias)
            for kind, ident, alias in sorted(now - before)
            if ident not in ours]
