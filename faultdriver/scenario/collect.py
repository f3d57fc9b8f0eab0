"""The state a scenario run ends in, as records for its report
(:mod:`faultdriver.scenario.runstate`):
migrations, each host's accounting, fired faults, servers and (where a
real hypervisor can be asked) their guests.  Read through the backend
contract only, so every tier reports the same shape.
"""

import re
import typing

from faultdriver import journal
from faultdriver.scenario import runstate


def collect_state(steps: typing.Any) -> runstate.RunState:
    """Migrations, per-host accounting, fired faults and servers."""
    nova = steps.nova
    migrations = []
    for alias, server in steps.servers.items():
        for m in sorted(nova.migrations(server), key=lambda m: m['id']):
            migrations.append(runstate.RunMigration(
                server=alias, id=m['id'], uuid=m['uuid'],
                type=m.get('migration_type'), status=m['status'],
                source_compute=m['source_compute'],
                dest_compute=m['dest_compute'],
                created_at=_text(m.get('created_at')),
                updated_at=_text(m.get('updated_at'))))
    hosts = {}
    for host, counted in accounting(steps, steps.scenario.hosts).items():
        hosts[host] = runstate.RunHost(
            pinned_cpus=counted.pinned_cpus,
            placement_pcpu=counted.placement_pcpu, matches=counted.matches,
            service=nova.service_state(host),
            allocations=nova.provider_allocations(host),
            tasks=nova.tasks_in_progress(host))
    keys = ('kind', 'time', 'host', 'point', 'phase', 'rule_index', 'hit',
            'action',
            'rule', 'error', 'waited_for_lock', 'in_periodic', 'skipped',
            'outcome', 'periodic_host', 'duration_seconds', 'hold_seconds',
            'kill_after_seconds')
    faults = [journal.JournalEntry.from_json({k: e[k] for k in keys
                                              if k in e})
              for e in nova.faults.history()]
    servers = {}
    guests = hypervisor_guests(steps)
    for alias, server in steps.servers.items():
        server = nova.api.get_server(server['id'])
        servers[alias] = runstate.RunServer(
            id=server['id'], status=server['status'],
            host=server['OS-EXT-SRV-ATTR:host'],
            task_state=server['OS-EXT-STS:task_state'],
            pinned_cpus=(nova.instance_pinning(server)
                         if steps.scenario.dedicated_cpus else []),
            volumes=nova.server_volumes(server),
            ports=nova.server_ports(server),
            guests=None if guests is None else {
                host: found[server['id']] for host, found in guests.items()
                if server['id'] in found})
    return runstate.RunState(
        migrations=migrations, hosts=hosts, faults=faults, servers=servers,
        # Each host's accounting when the moves ended, before any
        # periodic of recover's repaired it (None: not taken, a host
        # was held then).
        move_end=steps.move_end)


def _text(stamp: typing.Any) -> typing.Optional[str]:
    """An API timestamp as the report writes it (str, as JSON's
    ``default=str`` wrote a datetime before the state was a record)."""
    return None if stamp is None else str(stamp)


def accounting(steps: typing.Any,
               hosts: typing.Iterable[str]
               ) -> typing.Dict[str, runstate.HostCount]:
    """The pCPUs each host's compute node records as pinned against
    placement's PCPU usage there, as they are now (no periodic is
    run)."""
    nova = steps.nova
    found = {}
    for host in hosts:
        pinned = (nova.pinned_cpus(host) if steps.scenario.dedicated_cpus
                  else [])
        pcpus = nova.placement_pcpus(host)
        found[host] = runstate.HostCount(
            pinned_cpus=pinned, placement_pcpu=pcpus,
            matches=len(pinned) == pcpus)
    return found


def hypervisor_guests(steps: typing.Any
                      ) -> typing.Optional[typing.Dict[str, typing.Any]]:
    """``{host: {uuid: state}}`` as the hypervisors see it, where the
    backend can ask a real one (``guests``); else None."""
    found = {host: steps.nova.guests(host) for host in steps.scenario.hosts}
    return None if None in found.values() else found


#: What a graceful stop logs (Nova's nova.service, nova.manager and
#: nova.compute.manager lines, faultdriver's own), case-insensitive.
SHUTDOWN_LINE = re.compile(
    r'graceful|in-progress tasks|cancel(?:led)? (?:queued )?live migration',
    re.IGNORECASE)


def shutdown_lines(text: str) -> typing.List[str]:
    """The lines of ``text`` (the computes' log) a graceful stop wrote:
    what it waited for, whether it timed out, what it cancelled."""
    return [line for line in text.splitlines()
            if SHUTDOWN_LINE.search(line) and 'log_opt_values' not in line]
