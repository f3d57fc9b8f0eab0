"""What placement still holds for a run's servers once they are deleted.

A case that leaked an allocation (a Nova bug its invariants judged)
leaves it on a cloud: no new stack wipes placement between a sweep's
cases there, and a runner killed mid-run leaves its servers to ``cloud
restore``.  Both end the same way, here: read the run's consumers (its
servers and their migrations, while the API still lists them), delete
the servers, then delete what placement holds for exactly those
consumers on the profile's hosts -- never another consumer's.
"""

import typing

from faultdriver.cloud import api as api_module

#: The placement resource providers to look on: the profile's
#: nodenames (a host outside the profile is never touched).
Nodenames = typing.Iterable[str]


def consumers(cloud: typing.Any,
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


def drop(cloud: typing.Any, nodenames: Nodenames,
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
