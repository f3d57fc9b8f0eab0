"""``cloud check``, ``cloud init`` and ``cloud restore``: what they do,
apart from the command line that words it.

The host side is checked before the API (a host that cannot be reached
or is not what the profile says is the likelier mistake, and says the
most), and the first refusal ends the check: exit 2 naming the host and
the fact.
"""

import dataclasses
import glob
import os
import typing

from faultdriver.cloud import audit as audit_module
from faultdriver.cloud import checks
from faultdriver.cloud import computes as computes_module
from faultdriver.cloud import errors
from faultdriver.cloud import helper as helper_module
from faultdriver.cloud import profile as profile_module
from faultdriver.cloud import transport


@dataclasses.dataclass(frozen=True)
class HostReport:
    """One host as ``cloud check`` found it."""

    alias: str
    ssh: str
    host: str
    nodename: str
    nova: str
    faultdriver: str
    reached_by: str
    clock_offset: float
    advice: typing.Tuple[str, ...]

    def row(self) -> typing.Dict[str, object]:
        return dataclasses.asdict(self)


def check_hosts(profile: profile_module.Profile,
                computes: computes_module.Computes,
                aliases: typing.Optional[typing.Sequence[str]] = None
                ) -> typing.List[HostReport]:
    """Each host (``aliases``, default all) reached, refused or
    reported."""
    found = []
    for alias in aliases or list(profile.hosts):
        host = profile.hosts[alias]
        reading = checks.read_status(computes.control(alias))
        refused = checks.refusals(host, reading.status)
        if refused:
            raise refused[0]
        dirty = checks.dirty(host, checks.dirt(
            host, reading.status, computes.exists(alias, host.start_rules)))
        if dirty is not None:
            raise dirty
        status = reading.status
        found.append(HostReport(
            alias=alias, ssh=host.ssh, host=host.host,
            nodename=host.nodename, nova=str(status.get('nova_version')),
            faultdriver=str(status.get('faultdriver_version')),
            reached_by=computes.transport(alias).mode.get(host.socket, '?'),
            clock_offset=round(reading.offset, 3),
            advice=tuple(checks.advice(host, reading))))
    return found


def check(profile: profile_module.Profile,
          aliases: typing.Optional[typing.Sequence[str]] = None,
          api: bool = True) -> typing.List[HostReport]:
    """The whole check: hosts, then (``api``) the APIs' view of them."""
    with computes_module.Computes(profile) as computes:
        found = check_hosts(profile, computes, aliases)
    if api:
        from faultdriver.cloud import api as api_module
        from faultdriver.cloud import runner
        runner.api_refusals(profile, api_module.connect(profile),
                            aliases or list(profile.hosts))
    return found


def audit_logs(profile: profile_module.Profile) -> typing.List[str]:
    from faultdriver.cloud import runner
    return sorted(glob.glob(os.path.join(runner.runs_dir(profile),
                                         '*.jsonl')))


def restore(profile: profile_module.Profile) -> typing.List[str]:
    """Undo what runs on this cloud left: every audit log's open changes
    replayed in reverse (computes started, restart policies put back),
    then on every host rules cleared, barriers released, the timer's
    periodic on and the start-rules file removed.  Returns what it did,
    one line each."""
    said: typing.List[str] = []
    ssh_of = {h.ssh for h in profile.hosts.values()}
    with computes_module.Computes(profile) as computes:
        def helper_for(ssh: str) -> helper_module.HostHelper:
            if ssh not in ssh_of:
                # Never a host outside the profile, whatever a log says.
                raise profile_module.ProfileError(
                    '%s: an audit log names host %s, which the profile '
                    'does not: restore it by hand' % (profile.path, ssh))
            alias = next(a for a, h in profile.hosts.items()
                         if h.ssh == ssh)
            return computes.helper(alias)
        for path in reversed(audit_logs(profile)):
            for change in audit_module.restore(audit_module.AuditLog(path),
                                               helper_for):
                said.append('%s: undid %s' % (change['host'],
                                              change['change']))
        for alias, host in profile.hosts.items():
            if computes.remove_file(alias, host.start_rules):
                said.append('%s: removed %s' % (host.ssh, host.start_rules))
            try:
                control = computes.control(alias)
            except Exception as exc:        # reported, the others go on
                said.append('%s: %s' % (host.ssh, exc))
                continue
            status = control.status()
            if status.get('rules'):
                control.clear()
                said.append('%s: cleared %d rules' % (host.ssh,
                                                      status['rules']))
            if status.get('held'):
                control.release(None)
                said.append('%s: released %s' % (host.ssh, ', '.join(
                    sorted(status['held']))))
            if status.get('timer') is False:
                control.timer(True)
                said.append('%s: timer periodic on' % host.ssh)
            if status.get('tracker_fixes'):
                said.append('%s: runs with fixes %s from a start-rules '
                            'file; restart its nova-compute to drop them'
                            % (host.ssh, ', '.join(status['tracker_fixes'])))
    return said


def init(name: str, cloud: str, targets: typing.Mapping[str, str],
         socket: str, manager: str, unit: str, log: typing.Tuple[str, str],
         start_rules: str, ssh_config: typing.Optional[str] = None,
         clouds_yaml: typing.Optional[str] = None,
         allowed: bool = False, api: bool = True) -> typing.Dict[str, object]:
    """A profile for cloud ``cloud`` from each host's status (``targets``:
    alias -> ssh target), checked (``api``) against the compute API's
    services and hypervisors."""
    hosts = {}
    for alias, ssh in targets.items():
        with transport.Transport(transport.SshTarget(ssh, ssh_config)) \
                as reached:
            from faultdriver.control import client
            status = client.Client(reached.control_socket(socket)).status()
        probe = profile_module.HostProfile(
            alias=alias, ssh=ssh, host=str(status.get('host')),
            nodename=str((status.get('nodenames') or [''])[0]),
            manager=manager, unit=unit, socket=socket,
            journal=str(status.get('journal')), log=log,
            start_rules=start_rules)
        refused = checks.refusals(probe, status)
        if refused:
            raise refused[0]
        if not status.get('journal'):
            raise errors.HostRefused(
                ssh, 'no journal file', 'set [fault_injection] journal_path '
                'on its nova-compute: a crash is read back from it')
        hosts[alias] = probe
    data = profile_module.Profile(
        path=profile_module.path_of(name), cloud=cloud,
        fault_injection_allowed=allowed, hosts=hosts,
        clouds_yaml=clouds_yaml, ssh_config=ssh_config)
    if api:
        from faultdriver.cloud import api as api_module
        from faultdriver.cloud import runner
        runner.api_refusals(data, api_module.connect(data), list(hosts))
    return profile_module.dump(data)
