"""The facts a scenario expects of one run (not invariants): a server's
state, its migrations, log lines, faults fired, pinned pCPUs, a guest on
a hypervisor.  Each check says what it found, met or not (schema.yaml
lists the kinds and their arguments)."""

import typing

from faultdriver.scenario.invariants import base
from faultdriver.scenario import runstate
from faultdriver.scenario import secondcall
from faultdriver.scenario import tiers

Checked = base.Checked
State = runstate.RunState
#: The run's steps (faultdriver.scenario.steps.Steps: what the checks
#: that act on the cloud use).
Steps = typing.Any


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


#: The facts' checks by expectation kind.
KINDS: typing.Dict[str, typing.Callable[..., Checked]] = {
    'migrations': _migrations,
    'server': _server,
    'log': _log,
    'periodic-errors': _periodic_errors,
    'faults': _faults,
    'decisions': _decisions,
    'second-call': secondcall.checked,
    'pinned': _pinned,
    'servers-share-pcpus': _share,
    'guest': _guest,
    'host-usage': _usage,
}
