"""Invariants of what a server is attached to: its volumes and its
ports, each once, on the host the server is on."""

import typing

from faultdriver.scenario.invariants import base
from faultdriver.scenario import runstate


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


def volume_attachments(steps: base.Steps, state: base.State) -> base.Checked:
    """Every volume of every server is attached once, on the server's
    host, as its block device mapping says."""
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


def port_bindings(steps: base.Steps, state: base.State) -> base.Checked:
    """Every port of every server is bound once, active, on the server's
    host."""
    found = misbound_ports(state.servers)
    return (not found, 'each port bound once, active, on its server\'s '
            'host', found or 'all bound where their servers are')


VOLUME_ATTACHMENTS = base.Invariant(
    'volume-attachments',
    'each volume of a server should be attached once, on the host the '
    'server is on',
    volume_attachments,
    details="For each server booted with `volume: true`: exactly one "
            "attachment, connected to the host the server is on, the one "
            "the server's block device mapping names.")
PORT_BINDINGS = base.Invariant(
    'port-bindings',
    'each port of a server should be bound once, active, on the host the '
    'server is on',
    port_bindings,
    details='For each server booted with `port: true`: no inactive '
            'binding left once the move ended.')
