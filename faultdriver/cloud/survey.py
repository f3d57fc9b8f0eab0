"""``cloud check``, ``cloud init`` and ``cloud restore``: what they do,
apart from the command line that words it.

The host side is checked before the API (a host that cannot be reached
or is not what the profile says is the likelier mistake, and says the
most), and the first refusal ends the check: exit 2 naming the host and
the fact.
"""

import dataclasses
import glob
import math
import os
import time
import typing

from faultdriver.cloud import api as api_module
from faultdriver.cloud import audit as audit_module
from faultdriver.cloud import checks
from faultdriver.cloud import computes as computes_module
from faultdriver.cloud import errors
from faultdriver.cloud import helper as helper_module
from faultdriver.cloud import leftovers
from faultdriver.cloud import profile as profile_module
from faultdriver.cloud import transport
from faultdriver.control import client as control_client
from faultdriver.control import protocol


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
    #: Its ``rpc_response_timeout`` (None: its status does not say).
    rpc_timeout: typing.Optional[float] = None

    def row(self) -> typing.Dict[str, object]:
        return dataclasses.asdict(self)


def check_hosts(profile: profile_module.Profile,
                computes: computes_module.Computes,
                aliases: typing.Optional[typing.Sequence[str]] = None
                ) -> typing.List[HostReport]:
    """Each host (``aliases``, default all) reached, refused or
    reported: the checks every run's preflight makes."""
    from faultdriver.cloud import runner
    found = []
    readings = runner.preflight(profile, computes,
                                aliases or list(profile.hosts))
    for alias, reading in readings.items():
        host = profile.hosts[alias]
        status = reading.status
        found.append(HostReport(
            alias=alias, ssh=host.ssh, host=host.host,
            nodename=host.nodename, nova=str(status.get('nova_version')),
            faultdriver=str(status.get('faultdriver_version')),
            reached_by=computes.transport(alias).mode.get(host.socket, '?'),
            clock_offset=round(reading.offset, 3),
            advice=tuple(checks.advice(host, reading)),
            rpc_timeout=checks.same_setting({alias: reading},
                                            'rpc_response_timeout')))
    return found


def rpc_timeout(found: typing.Sequence[HostReport]) -> typing.Optional[int]:
    """The computes' one ``rpc_response_timeout`` in whole seconds
    (rounded up), which a sweep's ``delay`` must outlast; None when a
    host does not say; HostRefused naming the hosts when they differ
    (a caller's wait would depend on the host called)."""
    values = {r.rpc_timeout for r in found}
    if None in values or not values:
        return None
    if len(values) > 1:
        raise errors.HostRefused(
            ', '.join(r.ssh for r in found), 'rpc_response_timeout differs '
            'between the computes', ', '.join(
                '%s: %ss' % (r.host, r.rpc_timeout) for r in found))
    return int(math.ceil(typing.cast(float, values.pop())))


def check(profile: profile_module.Profile,
          aliases: typing.Optional[typing.Sequence[str]] = None,
          api: bool = True) -> typing.List[HostReport]:
    """The whole check: hosts, then (``api``) the APIs' view of them."""
    with computes_module.Computes(profile) as computes:
        found = check_hosts(profile, computes, aliases)
    if api:
        from faultdriver.cloud import runner
        runner.api_refusals(profile, api_module.connect(profile),
                            aliases or list(profile.hosts))
    return found


def audit_logs(profile: profile_module.Profile) -> typing.List[str]:
    from faultdriver.cloud import runner
    return sorted(glob.glob(os.path.join(runner.runs_dir(profile),
                                         '*.jsonl')))


#: Seconds a compute restore started is given to answer again.
START_TIMEOUT = 180.0
#: The order ``cloud restore`` deletes what runs created in, by kind.
RESTORE_ORDER = ('server', 'volume', 'flavor')


def _answering(computes: computes_module.Computes, alias: str,
               timeout: float) -> typing.Optional[control_client.Client]:
    """``alias``'s control client once its FaultDriver answers with
    ``rpc_started`` (within ``timeout``), else None."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            control = computes.control(alias, timeout=5)
            if control.status().get('rpc_started'):
                return control
        except (errors.HostRefused, protocol.ControlError):
            pass
        if time.monotonic() > deadline:
            return None
        time.sleep(1.0)


def delete_created(profile: profile_module.Profile,
                   logs: typing.Sequence[audit_module.AuditLog],
                   cloud: typing.Optional[api_module.CloudAPI] = None
                   ) -> typing.List[str]:
    """Delete the servers, volumes and flavors the logs' runs created and did
    not delete (found by the run's names), then what placement still
    holds for those servers and their migrations on the profile's hosts
    (:mod:`leftovers`: a leak the killed run never got to clean).
    ``cloud``: the APIs (default: through the profile's clouds.yaml
    entry, connected only when a log has something to delete)."""
    from faultdriver.cloud import backend
    said: typing.List[str] = []
    created = [(log, change) for log in logs for change in log.open()
               if change['undo'][:1] == [backend.API_UNDO]]
    if not created:
        return said
    cloud = cloud or api_module.connect(profile)
    ours: typing.Set[str] = set()
    # Servers first: a volume is deleted with its server, or can be
    # once the server is gone; a flavor once no server uses it.
    created.sort(key=lambda found: RESTORE_ORDER.index(found[1]['undo'][1]))
    for log, change in created:
        _undo, kind, name = change['undo']
        kept = False        # left open for the next restore
        if kind == 'server':
            found = cloud.get('/servers?all_tenants=1&name=^%s$' % name,
                              translate=False)['servers']
            ours |= leftovers.consumers(cloud, [s['id'] for s in found])
            for server in found:
                cloud.request('DELETE', '/servers/%s' % server['id'],
                              ok=(204, 404))
            deadline = time.monotonic() + 120
            while found and time.monotonic() < deadline and cloud.get(
                    '/servers?all_tenants=1&name=^%s$' % name,
                    translate=False)['servers']:
                time.sleep(1.0)
        elif kind == 'volume':
            # After the servers: a volume attached to one is deleted
            # with it or once it is gone.
            found = [v for v in cloud.get(
                '/volumes/detail?all_tenants=1&name=%s' % name,
                service='block-storage', translate=False)['volumes']
                if v.get('name') == name and v.get('status') != 'deleting']
            for volume in found:
                refused = leftovers.delete_volume(cloud, volume['id'])
                if refused is not None:
                    said.append('%s: volume %s (%s) not deleted: Cinder '
                                'refused (%d), delete its attachments, then '
                                'the volume' % (change['host'], name,
                                                volume['id'], refused))
                    kept = True
        else:
            found = [f for f in cloud.get('/flavors/detail?is_public=None',
                                          translate=False)['flavors']
                     if f['name'] == name]
            for flavor in found:
                cloud.request('DELETE', '/flavors/%s' % flavor['id'],
                              ok=(202, 204, 404))
        if kept:
            continue
        log.mark_restored(change['seq'])
        if found:
            said.append('%s: deleted %s %s' % (change['host'], kind, name))
    for host in profile.hosts.values() if ours else ():
        said += ['%s: %s' % (host.ssh, line)
                 for line in leftovers.drop(cloud, [host.nodename], ours)]
    return said


def restore(profile: profile_module.Profile) -> typing.List[str]:
    """Undo what runs on this cloud left: every audit log's open changes
    replayed in reverse (computes started, restart policies put back);
    then on every host: its nova-compute started if a run left it down,
    started again without the fixes a run's start-rules file gave it,
    its rules cleared, its barriers released, the timer's periodic on
    and the start-rules file removed.  Returns what it did, one line
    each."""
    from faultdriver.cloud import runner
    said: typing.List[str] = []
    ssh_of = {h.ssh for h in profile.hosts.values()}
    audit = runner.audit_log(profile, 'restore-' + runner.new_run_id())
    with computes_module.Computes(profile, audit) as computes:
        def helper_for(ssh: str) -> helper_module.HostHelper:
            if ssh not in ssh_of:
                # Never a host outside the profile, whatever a log says.
                raise profile_module.ProfileError(
                    '%s: an audit log names host %s, which the profile '
                    'does not: restore it by hand' % (profile.path, ssh))
            alias = next(a for a, h in profile.hosts.items()
                         if h.ssh == ssh)
            return computes.helper(alias)
        logs = [audit_module.AuditLog(p) for p in audit_logs(profile)]
        said += delete_created(profile, logs)
        for log in reversed(logs):
            for change in audit_module.restore(log, helper_for):
                said.append('%s: undid %s' % (change['host'],
                                              change['change']))
        for alias, host in profile.hosts.items():
            if computes.remove_file(alias, host.start_rules):
                said.append('%s: removed %s' % (host.ssh, host.start_rules))
            service = computes.service(alias)
            try:
                state = service.state()['state']
            except errors.HostRefused as exc:
                # Said, and the socket still asked: what is left there
                # is cleared all the same.
                said.append('%s: its service manager cannot be asked: %s'
                            % (host.ssh, exc))
                state = 'running'
            if state not in ('running', 'stopping'):
                service.start()
                said.append('%s: started %s (it was %s)' % (
                    host.ssh, host.unit, state))
            control = _answering(computes, alias, START_TIMEOUT)
            if control is None:
                said.append('%s: its FaultDriver does not answer; see '
                            '`faultdriver cloud check`' % host.ssh)
                continue
            status = control.status()
            if status.get('tracker_fixes') and status.get('start_rules'):
                # Fixes a run's start-rules file gave: a plain start
                # drops them (nova.conf's own stay).
                service.crash()
                service.start()
                said.append('%s: started again without the run\'s fixes '
                            '%s' % (host.ssh,
                                    ', '.join(status['tracker_fixes'])))
                control = _answering(computes, alias, START_TIMEOUT)
                if control is None:
                    said.append('%s: its FaultDriver does not answer after '
                                'the start' % host.ssh)
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
    return said


#: The scenarios' host names, given in order to the computes ``cloud
#: init`` finds (every bundled scenario has these two).
ALIASES = ('src', 'dest')
#: What a ``cloud init`` template may name.
HOST_FIELD = '{host}'


def listed_computes(cloud: api_module.CloudAPI,
                    wanted: typing.Sequence[str] = ()
                    ) -> typing.List[typing.Tuple[str, str]]:
    """``(host, nodename)`` of the computes the compute API lists: its
    enabled nova-compute services that are up, each with its one
    hypervisor; ``wanted`` (service hosts) picks them and their order,
    else all, sorted by host.  HostRefused naming a wanted host the API
    does not list as such."""
    services = {s['host']: s for s in cloud.get(
        '/os-services?binary=nova-compute', translate=False)['services']}
    nodes: typing.Dict[str, typing.List[str]] = {}
    for node in cloud.get('/os-hypervisors/detail',
                          translate=False)['hypervisors']:
        host = (node.get('service') or {}).get('host')
        nodes.setdefault(str(host), []).append(
            str(node['hypervisor_hostname']))
    usable = {host: nodes[host] for host, service in services.items()
              if service.get('status') == 'enabled' and
              service.get('state') == 'up' and len(nodes.get(host, ())) == 1}
    for host in wanted:
        if host not in usable:
            raise errors.HostRefused(
                host, checks.HOST_MISMATCH, 'the compute API lists no '
                'enabled nova-compute that is up with one hypervisor on '
                'host %r (it lists %s)' % (host, ', '.join(sorted(usable))
                                           or 'none'))
    return [(host, usable[host][0]) for host in (wanted or sorted(usable))]


def _filled(template: str, host: typing.Optional[str], what: str) -> str:
    if HOST_FIELD not in template:
        return template
    if host is None:
        raise profile_module.ProfileError(
            '%s %s: %s names the host the compute API lists; with --host '
            'ALIAS=SSH give each value itself' % (what, template,
                                                  HOST_FIELD))
    return template.replace(HOST_FIELD, host)


#: The class path of Nova's libvirt driver (a FaultDriver's
#: ``inner_driver`` in its status).
LIBVIRT_DRIVER = 'nova.virt.libvirt.driver.LibvirtDriver'


def libvirt_of(status: typing.Mapping[str, typing.Any]
               ) -> typing.Optional[profile_module.Libvirt]:
    """How the compute whose status this is has its libvirt asked,
    where FaultDriver wraps Nova's libvirt driver: ``virsh -c`` its
    ``[libvirt] connection_uri`` (libvirt's default where unset)."""
    if status.get('inner_driver') != LIBVIRT_DRIVER:
        return None
    uri = (status.get('settings') or {}).get('libvirt.connection_uri')
    return profile_module.Libvirt(uri=uri or profile_module.LIBVIRT_URI)


def init(name: str, cloud: str, targets: typing.Mapping[str, str],
         socket: str, manager: str, unit: str, log: typing.Tuple[str, str],
         start_rules: str, ssh_config: typing.Optional[str] = None,
         clouds_yaml: typing.Optional[str] = None,
         allowed: bool = False, api: bool = True,
         ssh: str = HOST_FIELD, computes: typing.Sequence[str] = (),
         said: typing.Optional[typing.List[str]] = None
         ) -> typing.Dict[str, object]:
    """A profile for cloud ``cloud`` from each host's status, checked
    (``api``) against the compute API's services and hypervisors.

    ``targets`` (alias -> ssh target) names the hosts; without them the
    compute API lists them (:func:`listed_computes`, ``computes``
    picking), the first two becoming ALIASES, each reached at ``ssh``
    with ``{host}`` its service host; ``socket``, ``unit``,
    ``start_rules`` and a log file may name ``{host}`` too.  What is
    left out is said in ``said``."""
    said = [] if said is None else said
    draft = profile_module.Profile(
        path=profile_module.path_of(name), cloud=cloud,
        fault_injection_allowed=allowed, hosts={},
        clouds_yaml=clouds_yaml, ssh_config=ssh_config)
    known: typing.Dict[str, typing.Optional[str]] = {
        alias: None for alias in targets}
    targets = dict(targets)
    if not targets:
        listed = listed_computes(api_module.connect(draft), computes)
        if len(listed) < len(ALIASES):
            raise errors.HostRefused(
                ', '.join(h for h, _n in listed) or cloud, 'too few computes',
                'the compute API lists %d enabled nova-compute services '
                'that are up; the scenarios need %d' % (len(listed),
                                                        len(ALIASES)))
        for (listed_host, _node), alias in zip(listed, ALIASES):
            targets[alias] = _filled(ssh, listed_host, '--ssh')
            known[alias] = listed_host
        said.extend('left out %s (name the computes with --compute)'
                    % left for left, _node in listed[len(ALIASES):])
    hosts = {}
    for alias, target in targets.items():
        host = known[alias]
        where = _filled(socket, host, '--socket')
        with transport.Transport(transport.SshTarget(target, ssh_config)) \
                as reached:
            from faultdriver.control import client
            status = client.Client(reached.control_socket(where)).status()
        probe = profile_module.HostProfile(
            alias=alias, ssh=target, host=str(status.get('host')),
            nodename=str((status.get('nodenames') or [''])[0]),
            manager=manager, unit=_filled(unit, host, '--unit'),
            socket=where, journal=str(status.get('journal')),
            log=(log[0], _filled(log[1], host, '--log-file')),
            start_rules=_filled(start_rules, host, '--start-rules'),
            libvirt=libvirt_of(status))
        refused = checks.refusals(probe, status)
        if host is not None and probe.host != host:
            refused.insert(0, errors.HostRefused(
                target, checks.HOST_MISMATCH, 'the compute API lists host '
                '%r; its FaultDriver at %s says %r' % (host, where,
                                                       probe.host)))
        if refused:
            raise refused[0]
        if not status.get('journal'):
            raise errors.HostRefused(
                target, 'no journal file', 'set [fault_injection] '
                'journal_path on its nova-compute: a crash is read back '
                'from it')
        hosts[alias] = probe
    data = dataclasses.replace(draft, hosts=hosts)
    if api:
        from faultdriver.cloud import runner
        runner.api_refusals(data, api_module.connect(data), list(hosts))
    return profile_module.dump(data)
