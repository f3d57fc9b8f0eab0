"""What a cloud provides beyond what every cloud does, from its profile.

The cloud tier's own provisions (``tiers.TIERS['cloud']``) are what any
cloud faultdriver did not build gives: a nova-compute process per host,
Nova's Neutron and Cinder clients over HTTP.  A profile whose computes
name their libvirt (``hosts.ALIAS.libvirt``) gives a real hypervisor
too: the guests are asked of libvirt itself (``virsh`` over SSH), so
the scenarios written for the libvirt tier's guests run there.  A
profile that names a network (``network``) gives servers a port on it,
whose bindings Neutron's binding-extended API shows.  Nothing
else is widened: a guest's transfer is not limited on a cloud
(``live-migration-bandwidth`` is Nova's option there, the cloud's own).
"""

import dataclasses
import typing

from faultdriver.cloud import profile as profile_module
from faultdriver.scenario import tiers


def of(profile: profile_module.Profile,
       aliases: typing.Optional[typing.Iterable[str]] = None
       ) -> typing.FrozenSet[tiers.Provision]:
    """What the profile's hosts (``aliases``, default all) give beyond
    the cloud tier: a real hypervisor when every one names its
    libvirt; a network (ports and their bindings, read from Neutron)
    when the profile names one."""
    hosts = [profile.hosts[a] for a in (aliases or profile.hosts)
             if a in profile.hosts]
    found = set()
    if hosts and all(host.libvirt is not None for host in hosts):
        found.add(tiers.Provision.REAL_HYPERVISOR)
    if profile.network != 'none':
        found.add(tiers.Provision.NETWORK)
    return frozenset(found)


def use(profile: profile_module.Profile,
        aliases: typing.Optional[typing.Iterable[str]] = None) -> None:
    """The cloud tier, in this process, as this cloud: its provisions
    widened by :func:`of` (before a scenario is checked against it)."""
    tier = tiers.TIERS[tiers.CLOUD]
    tiers.TIERS[tiers.CLOUD] = dataclasses.replace(
        tier, provides=tier.provides | of(profile, aliases))
