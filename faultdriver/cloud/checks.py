"""Whether a profile's computes may be used, from what each says of
itself (``ctl status`` through its forwarded socket) and what the APIs
say of it.

Refusals (:class:`~faultdriver.cloud.errors.HostRefused`, exit 2 naming
the host and the fact) end a run before its first step: FaultDriver not
the compute_driver, Nova not 34.x, a host or nodename that is not the
profile's, a dirty host.  Advice (timings that make scenarios slow, no
DEBUG records, a clock apart) is said, not refused: a run works, slower
or with fewer log expectations met.
"""

import dataclasses
import time
import typing

from faultdriver.cloud import errors
from faultdriver.cloud import profile as profile_module
from faultdriver.control import client as control_client

Status = typing.Mapping[str, typing.Any]

#: The Nova series faultdriver is written for (setup.cfg:
#: ``nova>=34.0.0,<35``).
NOVA_SERIES = '34.'
NOT_FAULTDRIVER = 'FaultDriver is not the compute_driver'
NOT_NOVA_34 = 'Nova is not 34.x'
HOST_MISMATCH = 'host mismatch'
NODENAME_MISMATCH = 'nodename mismatch'
DIRTY = 'dirty host'
POINTS_DIFFER = 'points catalogue differs'
#: Seconds of ``report_interval`` beyond which a crash scenario waits
#: long for the API to show the compute down (``service_down_time`` is
#: set from it: devstack's 120 s gives 720 s).
SLOW_REPORT = 10
#: Seconds of clock difference said as advice (journal times are
#: corrected by the measured offset; a large one still confuses logs).
SKEW = 2.0


@dataclasses.dataclass(frozen=True)
class Reading:
    """One host's status, with the clock offset measured around it."""

    status: Status
    #: Seconds the host's clock is ahead of this machine's.
    offset: float


def read_status(control: control_client.Client) -> Reading:
    """``status`` of a control client, and the host's clock offset
    (its ``time`` against the middle of the request)."""
    before = time.time()
    status = control.status()
    after = time.time()
    return Reading(status, float(status.get('time', after)) -
                   (before + after) / 2)


def refusals(host: profile_module.HostProfile,
             status: Status) -> typing.List[errors.HostRefused]:
    """What makes ``host`` unusable, from its own status."""
    found: typing.List[errors.HostRefused] = []
    refuse = found.append
    if status.get('rpc_started') is None or status.get('nodenames') is None:
        refuse(errors.HostRefused(
            host.ssh, NOT_FAULTDRIVER, 'the socket %s answers, but not from '
            'a compute manager: set [DEFAULT] compute_driver = '
            'faultdriver.FaultDriver in nova-compute\'s nova.conf'
            % host.socket))
        return found
    version = str(status.get('nova_version') or '')
    if not version.startswith(NOVA_SERIES):
        refuse(errors.HostRefused(
            host.ssh, NOT_NOVA_34, 'it runs Nova %s; faultdriver needs '
            'nova>=34.0.0,<35' % (version or '(unknown)')))
    if status.get('host') != host.host:
        refuse(errors.HostRefused(
            host.ssh, HOST_MISMATCH, 'nova-compute at %s is host %r; the '
            'profile %s says %r' % (host.socket, status.get('host'),
                                    'hosts.%s.host' % host.alias,
                                    host.host)))
    if host.nodename not in (status.get('nodenames') or ()):
        refuse(errors.HostRefused(
            host.ssh, NODENAME_MISMATCH, 'nova-compute %s has nodes %s; the '
            'profile hosts.%s.nodename says %r' % (
                status.get('host'), status.get('nodenames'), host.alias,
                host.nodename)))
    return found


def catalogue_refusal(host: profile_module.HostProfile, status: Status,
                      remote: typing.Sequence[typing.Mapping[str, object]],
                      local: typing.Mapping[str, typing.Any]
                      ) -> typing.Optional[errors.HostRefused]:
    """Refused when ``host``'s FaultDriver (its ``points`` op:
    ``remote``) does not know a point of this runner's catalogue
    (``local``) as this runner does: scenarios and sweeps name points
    from the runner's catalogue (a sweep's trace puts a rule on each),
    and the host would refuse a rule on a point it lacks mid-run, or
    fire a point under the tracker lock where the runner plans a phase
    before it.  Points only the host has are not the runner's to use,
    and not refused."""
    theirs = {str(p.get('name')): p for p in remote}
    missing = sorted(name for name in local if name not in theirs)
    changed = sorted(
        name for name, point in local.items() if name in theirs and (
            theirs[name].get('kind') != point.kind or
            bool(theirs[name].get('tracker_lock')) != point.tracker_lock))
    if not missing and not changed:
        return None
    said = []
    if missing:
        said.append('it lacks %d of this runner\'s points (%s%s)' % (
            len(missing), ', '.join(missing[:5]),
            ', ...' if len(missing) > 5 else ''))
    if changed:
        said.append('it knows %s with another kind or tracker lock' %
                    ', '.join(changed))
    return errors.HostRefused(
        host.ssh, POINTS_DIFFER, '%s: its FaultDriver is faultdriver %s, '
        'this runner\'s %s; install the same faultdriver on the computes '
        'and the runner' % ('; '.join(said),
                            status.get('faultdriver_version') or '(unknown)',
                            _own_version()))


def _own_version() -> str:
    # Imported here: hostfacts reads Nova's options (only a refusal
    # needs this runner's version).
    from faultdriver import hostfacts
    return hostfacts.faultdriver_version() or '(not installed)'


def dirt(host: profile_module.HostProfile, status: Status,
         start_rules_left: bool = False) -> typing.List[str]:
    """What a run (maybe a killed one) left on ``host``: rules, held
    barriers, the timer's periodic off, a variant's fixes from a run's
    start-rules file (a run ends by starting the compute without them),
    a start-rules file not consumed yet -- each what ``cloud restore``
    undoes."""
    found = []
    if status.get('rules'):
        found.append('%d rules armed' % status['rules'])
    if status.get('held'):
        found.append('barriers held: %s' % ', '.join(
            '%s=%s' % item for item in sorted(status['held'].items())))
    if status.get('timer') is False:
        found.append('timer periodic off')
    start = status.get('start_rules')
    if isinstance(start, dict) and start.get('tracker_patches'):
        found.append('fixes %s from run %s\'s start rules' % (
            ', '.join(start['tracker_patches']), start.get('run_id')))
    if start_rules_left:
        found.append('start rules file %s waits' % host.start_rules)
    return found


def dirty(host: profile_module.HostProfile, what: typing.Sequence[str]
          ) -> typing.Optional[errors.HostRefused]:
    if not what:
        return None
    return errors.HostRefused(host.ssh, DIRTY, '%s; `faultdriver cloud '
                              'restore` clears what a run left' %
                              '; '.join(what))


def advice(host: profile_module.HostProfile,
           reading: Reading) -> typing.List[str]:
    """What slows or weakens a run on ``host``, and how to change it."""
    settings = reading.status.get('settings') or {}
    said = []
    report = settings.get('report_interval')
    if isinstance(report, (int, float)) and report > SLOW_REPORT:
        said.append(
            'report_interval is %ss: the API shows a crashed compute down '
            'only after service_down_time (devstack sets it to 6 times '
            'that, %ss), which a crash scenario waits for; set [DEFAULT] '
            'report_interval = 2 and service_down_time = 12 on every Nova '
            'node' % (report, 6 * report))
    if settings.get('debug') is False:
        said.append('debug is off: expectations that count DEBUG records '
                    '(Migration status is error) cannot be met; set '
                    '[DEFAULT] debug = True on the computes')
    if abs(reading.offset) > SKEW:
        said.append('its clock is %+.1fs from this machine\'s (journal '
                    'times are corrected by it; use NTP)' % reading.offset)
    return said


def same_setting(readings: typing.Mapping[str, Reading],
                 name: str) -> typing.Optional[float]:
    """The value of setting ``name`` all hosts agree on; None if they
    do not (or do not say)."""
    values = {(r.status.get('settings') or {}).get(name)
              for r in readings.values()}
    if len(values) != 1:
        return None
    [value] = values
    return float(value) if isinstance(value, (int, float)) else None
