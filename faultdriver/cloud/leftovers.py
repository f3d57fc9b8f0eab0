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


def delete_volume(cloud: api_module.CloudAPI,
                  volume_id: str) -> typing.Optional[int]:
    """Delete one of a run's volumes unless it is gone or going (its
    server's deletion took it).  Returns the status of Cinder's refusal
    (a leftover attachment keeps the volume), for the caller to say;
    None once it is deleted or gone."""
    try:
        if cloud.get('/volumes/%s' % volume_id, service='block-storage')[
                'volume']['status'] == 'deleting':
            return None
        cloud.request('DELETE', '/volumes/%s' % volume_id,
                      service='block-storage', ok=(202, 204, 404))
    except api_module.APIError as exc:
        return None if exc.status == 404 else exc.status
    return None


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
        for consumer, resources in held(cloud, nodename):
            if consumer not in ours:
                continue
            cloud.request('DELETE', '/allocations/%s' % consumer,
                          service='placement', ok=(204, 404))
            said.append('deleted %s left in placement on %s for %s after '
                        'its server was deleted' % (
                            ', '.join('%s %s' % (n, r) for r, n in
                                      sorted(resources.items())),
                            name_of(nodename), consumer))
    return said


def held(cloud: api_module.CloudAPI, nodename: str
         ) -> typing.List[typing.Tuple[str, typing.Dict[str, int]]]:
    """``(consumer, {resource class: amount})`` of every allocation on
    the provider(s) placement names ``nodename``, by consumer."""
    found = []
    for provider in cloud.get('/resource_providers?name=%s' % nodename,
                              service='placement',
                              translate=False)['resource_providers']:
        allocations = cloud.get('/resource_providers/%s/allocations'
                                % provider['uuid'], service='placement',
                                translate=False)['allocations']
        found += [(consumer, dict(allocation['resources']))
                  for consumer, allocation in allocations.items()]
    return sorted(found)


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
        found.update(('allocation', consumer, alias)
                     for consumer, _resources in held(cloud, nodename))
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
