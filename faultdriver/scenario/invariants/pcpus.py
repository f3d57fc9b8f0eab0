"""Invariants of pinned pCPUs: none pinned twice on a host, and after a
periodic each host pins what placement allocated."""

import re
import typing

from faultdriver.scenario.invariants import base


def pcpus_not_shared(steps: base.Steps, state: base.State) -> base.Checked:
    """No pCPU is pinned to two servers on the same host."""
    owners: typing.Dict[typing.Tuple[typing.Optional[str], int],
                        typing.List[str]] = {}
    for alias, server in state.servers.items():
        if server.host is None:
            # On no host (shelved and offloaded, an unshelve or a build
            # that never reached a host): it pins nothing anywhere,
            # whatever pinning its record kept.
            continue
        for cpu in server.pinned_cpus:
            owners.setdefault((server.host, cpu), []).append(alias)
    actual = ['%s pCPU %s: %s' % (host, cpu, ', '.join(sorted(names)))
              for (host, cpu), names in sorted(owners.items())
              if len(names) > 1]
    return not actual, 'no pCPU pinned to two servers on a host', \
        actual or 'none shared'


def accounting_matches_placement(
        steps: base.Steps, state: base.State,
        hosts: typing.Optional[typing.List[str]] = None
) -> base.Checked:
    """After a periodic on each host, its pinned pCPUs are placement's
    PCPU usage there (runs the periodics: checked after the others)."""
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


def _export_not_shared(writer: base.Writer) -> base.NovaForm:
    return base.NovaForm(('shared_pcpus',), 'self._shared_pcpus(%s)'
                         % writer.server_dict(), '{}')


def _export_accounting(
        writer: base.Writer,
        hosts: typing.Optional[typing.List[str]] = None) -> base.NovaForm:
    hosts = list(hosts or writer.scenario.hosts)
    return base.NovaForm(('accounting',), 'self._unaccounted(%r)' % hosts,
                         '{}')


PCPUS_NOT_SHARED = base.Invariant(
    'pcpus-not-shared',
    'no pCPU of a host should be pinned to two servers',
    pcpus_not_shared, _export_not_shared)


def _exact_accounting(actual: typing.Any) -> typing.Optional[str]:
    """``{host: (pinned, PCPU)}`` of the hosts that do not match, as
    _unaccounted lists them, from the check's ``{host: 'N pinned / M
    PCPU'}``; None for anything else."""
    if not isinstance(actual, dict):
        return None
    found = {}
    for host, text in actual.items():
        parsed = re.fullmatch(r'(\d+) pinned / (\d+) PCPU', str(text))
        if parsed is None:
            return None
        pinned, pcpu = int(parsed.group(1)), int(parsed.group(2))
        if pinned != pcpu:
            found[host] = (pinned, pcpu)
    return repr(found) if found else None


ACCOUNTING_MATCHES_PLACEMENT = base.Invariant(
    'accounting-matches-placement',
    'after a periodic, the pCPUs each host pins should be the PCPUs '
    'placement allocated there',
    accounting_matches_placement, _export_accounting, after=1,
    exact=_exact_accounting,
    details='Checked after the others but moves-again and '
            'periodics-clean: it runs a periodic on each host.',
    args={'hosts': {'type': 'array', 'maxItems': 16,
                    'items': {'type': 'string'},
                    'description': 'Default all.'}})
