"""A cloud faultdriver did not build, seen through the scenario contract
(:mod:`faultdriver.scenario.backend`), as the process tier's
``ProcessNova`` sees the stack it starts.

State is read as an operator reads a cloud: the compute and placement
APIs through real Keystone (:mod:`.api`, host names translated at the
boundary), what no API shows through each compute's FaultDriver
(``status``, ``pinning``, ``tasks``, ``periodic``, ``timer``) over its
forwarded control socket, and what must be read while nova-compute is
down -- its journal file, its log, its unit's state -- through the host
helper over SSH.  Crashes, stops and starts go through the host's
service manager (:mod:`.services`), every change in the run's audit log
first.  A restart with rules (or with a variant's fix) writes a
one-shot start-rules file on the host, which FaultDriver reads once at
its driver's init and removes.
"""

import json
import re
import time
import typing
import uuid

from faultdriver.cloud import api as api_module
from faultdriver.cloud import checks
from faultdriver.cloud import computes as computes_module
from faultdriver.cloud import errors
from faultdriver.cloud import helper as helper_module
from faultdriver.cloud import leftovers
from faultdriver.cloud import profile as profile_module
from faultdriver.control import client as control_client
from faultdriver.control import protocol
from faultdriver import exception
from faultdriver.novacompat import texts
from faultdriver.scenario import backend
from faultdriver.scenario import backend_base
from faultdriver.scenario import backend_records as records
from faultdriver.scenario import socket_faults
from faultdriver.scenario import tiers

#: Seconds a start-rules file stays good: a start later than that (an
#: operator's, after a killed run) ignores it.
START_RULES_LIFE = 600
#: Seconds a restarted compute is given to be ready (rpc_started).
START_TIMEOUT = 180
#: The image a profile without ``image`` boots from: faultdriver's
#: boot-sector guest, uploaded under this name.
DEFAULT_IMAGE = 'faultdriver-guest'
#: What ``virsh domstate`` prints, as the libvirt tier names a state
#: (libvirt's VIR_DOMAIN_* name in lower case).
VIRSH_STATES = {'no state': 'nostate', 'running': 'running',
                'idle': 'blocked', 'paused': 'paused',
                'in shutdown': 'shutdown', 'shut off': 'shutoff',
                'crashed': 'crashed', 'pmsuspended': 'pmsuspended'}


def guest_states(found: typing.Iterable[typing.Mapping[str, typing.Any]]
                 ) -> records.Guests:
    """``{uuid: state}`` of the host helper's ``guests`` answer, each
    state as the libvirt tier names it ('?' for a word virsh may add)."""
    return {str(guest['uuid']): VIRSH_STATES.get(str(guest['state']), '?')
            for guest in found}


#: Where a compute's log is read from: a log file's byte offset, or
#: journald's cursor (None: where it ends when asked).
LogPosition = typing.Union[int, str, None]
#: An audit record's undo that is an API call, not a host helper's.
API_UNDO = 'api-delete'
#: A run's volume's size: the smallest Cinder makes.
VOLUME_GB = 1
#: Journal keys that name a host.
_JOURNAL_HOSTS = ('host', 'periodic_host')
_PERIODIC_HOST = re.compile(r'(periodic\([^)]*host\s*=\s*)([\w.-]+)')


class CloudFaults(socket_faults.SocketFaults):
    """FaultControl over the profile's computes: rules and barriers as
    every socket-reached tier sets them (:class:`~faultdriver.scenario.
    socket_faults.SocketFaults`) over each compute's forwarded socket,
    a rule's host aliases made real names; the service's life through
    its host's service manager."""

    def __init__(self, nova: 'CloudNova', rpc_timeout: float) -> None:
        self.nova = nova
        #: Seconds a caller waits for an RPC reply in this cloud (the
        #: computes' own ``rpc_response_timeout``, which all must share).
        self.rpc_timeout = rpc_timeout
        #: alias -> journal lines when the run (or its last start) began.
        self._journal_from: typing.Dict[str, int] = {}
        self._started_at: typing.Dict[str, int] = {}
        self._stopped: typing.Set[str] = set()
        #: Rules and fixes every start of a host takes (a variant's fix).
        self.start_patches: typing.List[str] = []

    @property
    def computes(self) -> computes_module.Computes:
        return self.nova.computes

    def control(self, host: str) -> control_client.Client:
        """The client of ``host``'s FaultDriver, forwarded over SSH."""
        return self.computes.control(host)

    def rule(self, text: str) -> str:
        """``text`` with ``periodic(host=ALIAS)`` naming the real host."""
        return _PERIODIC_HOST.sub(
            lambda m: m.group(1) + self.nova.aliases.host(m.group(2)), text)

    def begin(self) -> None:
        """Where each host's journal ends now: the run reads from there."""
        for alias in self.nova.hosts:
            line = self._journal_end(alias)
            self._journal_from[alias] = self._started_at[alias] = line

    def _journal_end(self, alias: str) -> int:
        try:
            return int(self.computes.helper(alias).journal(
                self.computes.host(alias).journal, 0)['next'])
        except errors.HostRefused as exc:
            if 'no journal file' in str(exc):
                return 0
            raise

    def _journal(self, alias: str, line: int) -> typing.List[
            records.JournalEntry]:
        try:
            lines = self.computes.helper(alias).journal(
                self.computes.host(alias).journal, line)['lines']
        except errors.HostRefused as exc:
            if 'no journal file' in str(exc):
                return []
            raise
        found = []
        for text in lines:
            try:
                entry = json.loads(text)
            except ValueError:
                continue
            if isinstance(entry, dict):
                found.append(entry)
        return found

    # -- a dead host's callers ----------------------------------------------

    def wait_for_queued(self, host: str, method: str, expired: bool = True,
                        timeout: float = backend.WAIT_TIMEOUT) -> object:
        """Until a message waits in ``host``'s compute queues on the
        profile's broker (and, with ``expired``, one RPC timeout more);
        without a broker in the profile, one RPC timeout and a second
        after the host is down, which is what the broker would show."""
        del method          # a broker cannot tell (see the process tier)
        real = self.nova.aliases.host(host)
        names = ('compute.%s' % real, 'compute-alt.%s' % real)
        broker = self.nova.broker_helper()
        if broker is not None:
            profile_broker = self.nova.profile.broker
            assert profile_broker is not None
            self.nova.wait(lambda: sum(
                broker.queued(profile_broker.vhost,
                              profile_broker.container).get(name, 0)
                for name in names) > 0,
                'messages queued for %s' % host, timeout)
        if expired or broker is None:
            time.sleep(self.rpc_timeout + 1)
        return None

    # -- the service --------------------------------------------------------

    def _state(self, host: str) -> str:
        return str(self.computes.service(host).state()['state'])

    def crash_host(self, host: str) -> None:
        """SIGKILL of the unit alone (libvirtd and guests live on)."""
        self.computes.service(host).crash()

    def is_crashed(self, host: str) -> bool:
        return self._state(host) == 'crashed' and not self.is_stopped(host)

    def stop_host(self, host: str) -> None:
        self.computes.service(host).stop(bound=tiers.SHUTDOWN_BOUND)
        self._stopped.add(host)

    def _shutdown_outcomes(self, host: str) -> typing.List[object]:
        return [e.get('outcome') for e in self._journal(
            host, self._started_at.get(host, 0))
            if e.get('kind') == 'shutdown']

    def is_stopped(self, host: str) -> bool:
        """Stopped gracefully (a stop step, or the shutdown action's stop
        that no kill_after cut short) and not started again; a stop under
        way is waited for, bounded."""
        if host in self._stopped:
            return self._state(host) != 'running'
        if not self._shutdown_outcomes(host):
            return False
        deadline = time.monotonic() + tiers.SHUTDOWN_BOUND
        while self._state(host) in ('running', 'stopping'):
            if time.monotonic() > deadline:
                return False
            time.sleep(self.nova.POLL)
        return 'killed' not in self._shutdown_outcomes(host)

    def write_start_rules(self, host: str,
                          rules: typing.Sequence[str]) -> None:
        """The one-shot file the next start of ``host`` reads."""
        profile_host = self.computes.host(host)
        content = {'run_id': self.nova.run_id,
                   'deadline': time.time() + START_RULES_LIFE,
                   'host': profile_host.host,
                   'rules': [self.rule(r) for r in rules],
                   'tracker_patches': list(self.start_patches)}
        self.computes.put_file(host, profile_host.start_rules,
                               json.dumps(content).encode())

    def restart(self, host: str, rules: typing.Sequence[str] = ()) -> None:
        """Start ``host``'s nova-compute again (killing it if it runs)
        with ``rules`` in a one-shot start-rules file; returns once its
        FaultDriver says ``rpc_started`` from this start and the API
        shows its own heartbeat (``wait_own_heartbeat``).  A start a
        fault of these rules ends raises StartFailed."""
        self.is_stopped(host)
        service = self.computes.service(host)
        if self._state(host) in ('running', 'stopping'):
            service.crash()
        self.write_start_rules(host, rules)
        seen = self._journal_end(host)
        self._started_at[host] = seen
        self._stopped.discard(host)
        service.start()
        self.nova.wait(lambda: self._ready(host) or
                       self._state(host) == 'crashed',
                       'start of nova-compute on %s' % host, START_TIMEOUT)
        if self._state(host) == 'crashed':
            failed = exception.StartFailed.by_fault(
                host, self._journal(host, seen))
            if failed is None:
                raise errors.HostRefused(
                    self.computes.host(host).ssh, 'nova-compute exited '
                    'during its start, no fault fired')
            raise failed
        self.nova.wait_own_heartbeat(host, START_TIMEOUT)
        self.nova.after_start(host)

    def _ready(self, host: str) -> bool:
        try:
            status = self.computes.control(host, timeout=5).status()
        except (protocol.ControlError, errors.HostRefused):
            return False
        start = status.get('start_rules') or {}
        return bool(status.get('rpc_started')) and \
            start.get('run_id') == self.nova.run_id and \
            start.get('deadline', 0) > time.time() - START_RULES_LIFE

    def history(self) -> list[records.JournalEntry]:
        """Every host's journal since the run began, hosts as aliases,
        times on this machine's clock (each host's measured offset)."""
        found = []
        for alias in self.nova.hosts:
            offset = self.nova.offsets.get(alias, 0.0)
            for entry in self._journal(alias,
                                       self._journal_from.get(alias, 0)):
                for key in _JOURNAL_HOSTS:
                    if isinstance(entry.get(key), str):
                        entry[key] = self.nova.aliases.alias(
                            typing.cast(str, entry[key]))
                when = entry.get('time')
                if isinstance(when, (int, float)):
                    entry['time'] = when - offset
                found.append(entry)
        return sorted(found, key=lambda e: typing.cast(float,
                                                       e.get('time', 0)))


class _CloudComputeAPI:
    """The contract's compute API calls (backend.ComputeAPI)."""

    def __init__(self, api: api_module.CloudAPI) -> None:
        self.cloud = api
        #: The servers deleted through here and their migrations, read
        #: just before each delete (the API lists a deleted server's
        #: migrations no more): still the run's placement consumers.
        self.deleted_consumers: typing.Set[str] = set()

    def get_server(self, server_id: str) -> records.Server:
        server: records.Server = self.cloud.get(
            '/servers/%s' % server_id)['server']
        return server

    def post_server_action(self, server_id: str,
                           data: records.RequestBody) -> object:
        return self.cloud.post('/servers/%s/action' % server_id, data)

    def delete_server(self, server_id: str) -> object:
        self.deleted_consumers |= leftovers.consumers(self.cloud,
                                                      [server_id])
        return self.cloud.request('DELETE', '/servers/%s' % server_id)

    def delete_migration(self, server_id: str, migration_id: int) -> object:
        return self.cloud.request('DELETE', '/servers/%s/migrations/%s' % (
            server_id, migration_id))

    def get_services(
            self, binary: typing.Optional[str] = 'nova-compute',
            host: typing.Optional[str] = None) -> list[records.Service]:
        path = '/os-services?binary=%s' % (binary or 'nova-compute')
        if host:
            path += '&host=%s' % self.cloud.aliases.host(host)
        services: list[records.Service] = self.cloud.get(path)['services']
        return services

    def put_service_force_down(self, service_id: typing.Union[int, str],
                               forced_down: bool) -> object:
        return self.cloud.request('PUT', '/os-services/%s' % service_id,
                                  {'forced_down': forced_down})

    def get_instance_actions(
            self, server_id: str) -> list[records.InstanceAction]:
        found: list[records.InstanceAction] = self.cloud.get(
            '/servers/%s/os-instance-actions' % server_id)['instanceActions']
        return found

    def get_instance_action_details(
            self, server_id: str, request_id: str) -> records.InstanceAction:
        found: records.InstanceAction = self.cloud.get(
            '/servers/%s/os-instance-actions/%s' % (
                server_id, request_id))['instanceAction']
        return found


class CloudNova(backend_base.BackendBase):
    """What scenario steps and expectations need, on a cloud."""

    #: Each read crosses a network (and Keystone's token).
    POLL = 0.5

    def __init__(self, profile: profile_module.Profile,
                 cloud: api_module.CloudAPI,
                 computes: computes_module.Computes,
                 hosts: typing.Sequence[str], run_id: str,
                 readings: typing.Mapping[str, checks.Reading],
                 pinned: bool = True, default_vcpus: int = 1,
                 periodic_timer: bool = True) -> None:
        self.profile = profile
        self.cloud = cloud
        self.aliases = cloud.aliases
        self.computes = computes
        self.hosts = list(hosts)
        self.run_id = run_id
        self.api = self.admin_api = _CloudComputeAPI(cloud)
        self.offsets = {alias: r.offset for alias, r in readings.items()}
        rpc = checks.same_setting(readings, 'rpc_response_timeout')
        if rpc is None:
            raise errors.HostRefused(
                ', '.join(computes.host(h).ssh for h in hosts),
                'rpc_response_timeout differs between the computes',
                'a scenario times its waits by it; give them one value')
        self.faults = CloudFaults(self, rpc)
        self.PINNED = pinned
        self.default_vcpus = default_vcpus
        self.periodic_timer = periodic_timer
        self._flavors: typing.Dict[typing.Tuple[int, str], str] = {}
        #: Servers this run booted (deleted at its end).
        self.servers: typing.List[str] = []
        #: Volumes this run created (deleted at its end, unless a
        #: server's deletion took them).
        self.volumes: typing.List[str] = []
        self._log_from: typing.Dict[str, LogPosition] = {}
        self._image: typing.Optional[str] = None
        #: What :meth:`begin` found on the hosts (leftovers.present).
        self._present_at_start: typing.Set[leftovers.Present] = set()

    # -- the run's beginning and end ------------------------------------------

    def record_api(self, host: str, kind: str, name: str) -> None:
        """In the audit log before it is made: a server, flavor or volume named
        ``name`` the run creates, which ``cloud restore`` deletes (by
        name: a runner killed before the API answered left no id)."""
        audit = self.computes.audit
        if audit is not None:
            audit.record(self.computes.host(host).ssh, '%s:%s' % (kind, name),
                         'create %s %s' % (kind, name),
                         (API_UNDO, kind, name))

    def broker_helper(self) -> typing.Optional[helper_module.HostHelper]:
        broker = self.profile.broker
        if broker is None:
            return None
        for alias, host in self.profile.hosts.items():
            if host.ssh == broker.ssh:
                return self.computes.helper(alias)
        return None     # a broker host outside the profile is not reached

    def begin(self) -> None:
        """Where journals and logs end now, and each host's timer as the
        scenario wants it."""
        self.faults.begin()
        self._present_at_start = leftovers.present(self.cloud,
                                                   self._host_names())
        for alias in self.hosts:
            self._log_from[alias] = self._log_end(alias)
            self.after_start(alias)

    def _host_names(self) -> typing.Dict[str, typing.Tuple[str, str]]:
        return {alias: (self.aliases.host(alias),
                        self.aliases.nodename(alias))
                for alias in self.hosts}

    def foreign_activity(self) -> typing.List[str]:
        """Servers and allocations on the run's hosts that are neither
        the run's own (its servers, their migrations) nor there when it
        began: someone else used the hosts meanwhile, and the run's
        invariants counted it (the run is "cloud dirty").  Read before
        :meth:`end` deletes the run's servers."""
        return leftovers.foreign(
            leftovers.present(self.cloud, self._host_names()),
            self._present_at_start, self._consumers())

    def after_start(self, host: str) -> None:
        """A host (re)started: its timer's periodic as the scenario
        says (``periodic-timer: false``: off)."""
        if not self.periodic_timer:
            self.computes.control(host).timer(False)

    def end(self) -> typing.List[str]:
        """Put the cloud back: servers and flavors of the run deleted,
        what placement still holds for them afterwards deleted too,
        rules cleared, barriers released, timers on, every host running
        without the run's fixes and without tasks of the run's servers
        tracked.  Returns what it had to clean beyond
        its own servers and flavors, a line each."""
        for server_id in self.servers:
            try:
                self.api.delete_server(server_id)
            except api_module.APIError:
                pass
        # Each delete read its server's migrations just before (the API
        # lists a deleted server's no more): the run's consumers.
        ours = set(self.servers) | self.api.deleted_consumers
        for server_id in self.servers:
            try:
                self.wait(lambda: not self.server_exists({'id': server_id}),
                          'server %s deleted' % server_id,
                          backend.SERVER_TIMEOUT)
            except AssertionError:
                pass
        cleaned = self._drop_leaked(ours)
        cleaned += self._delete_volumes()
        for flavor in self._flavors.values():
            try:
                self.cloud.request('DELETE', '/flavors/%s' % flavor)
            except api_module.APIError:
                pass
        audit = self.computes.audit
        if audit is not None:
            for change in audit.open():
                if change['undo'][:1] == [API_UNDO]:
                    audit.settle(change['host'], change['key'])
        for alias in self.hosts:
            running = self.faults._state(alias) == 'running'
            fixed = False
            tracked = []
            if running:
                status = self.computes.control(alias).status()
                fixed = bool(status.get('tracker_fixes'))
                tracked = ['%s (%s)' % (task['name'], task['instance_uuid'])
                           for task in self.tracked_tasks(alias)
                           if task['instance_uuid'] in ours]
            if tracked:
                # Nova ends such a task only with its process (F19): the
                # next run's tasks-ended and graceful stops would meet it.
                cleaned.append('restarted %s: its nova-compute still '
                               'tracked %s of the run\'s deleted servers' % (
                                   alias, ', '.join(tracked)))
            if not running or fixed or tracked:
                self.faults.start_patches = []
                self.faults.restart(alias)
            control = self.computes.control(alias)
            control.clear()
            control.release(None)
            if not self.periodic_timer:
                control.timer(True)
            self.computes.remove_file(alias,
                                      self.computes.host(alias).start_rules)
        return cleaned

    def _delete_volumes(self) -> typing.List[str]:
        """The run's volumes its servers' deletion did not take (one
        attached after boot, one a fault left attached), deleted; one a
        leftover attachment keeps Cinder from deleting is said, never
        left silently."""
        said = []
        for volume_id in self.volumes:
            refused = leftovers.delete_volume(self.cloud, volume_id)
            if refused is not None:
                said.append('volume %s of the run is left on the cloud: '
                            'Cinder refused its deletion (%d): delete its '
                            'attachments, then the volume' % (
                                volume_id, refused))
        return said

    def _consumers(self) -> typing.Set[str]:
        """The placement consumers of this run (:mod:`leftovers`), its
        servers deleted before the end included."""
        return (leftovers.consumers(self.cloud, self.servers) |
                self.api.deleted_consumers)

    def _drop_leaked(self, ours: typing.Set[str]) -> typing.List[str]:
        """What placement still holds on the run's hosts for its
        consumers once its servers are deleted (:mod:`leftovers`),
        deleted, each said by the host's alias."""
        nodes = {self.aliases.nodename(alias): alias for alias in self.hosts}
        return leftovers.drop(self.cloud, nodes, ours, nodes.__getitem__)

    # -- servers ------------------------------------------------------------

    def create_flavor(
            self, vcpus: int,
            extra_specs: typing.Optional[dict[str, str]] = None) -> str:
        key = (vcpus, json.dumps(extra_specs, sort_keys=True))
        if key not in self._flavors:
            name = 'faultdriver-%s-%d' % (self.run_id, len(self._flavors))
            self.record_api(self.hosts[0], 'flavor', name)
            flavor = self.cloud.post('/flavors', {'flavor': {
                'name': name, 'vcpus': vcpus, 'ram': 512,
                'disk': 1}})['flavor']
            if extra_specs:
                self.cloud.post('/flavors/%s/os-extra_specs' % flavor['id'],
                                {'extra_specs': extra_specs})
            self._flavors[key] = flavor['id']
        return self._flavors[key]

    def create_server(self, host: str, flavor_id: typing.Optional[str] = None,
                      timeout: float = backend.SERVER_TIMEOUT,
                      status: str = 'ACTIVE', volume: bool = False,
                      port: bool = False) -> records.Server:
        """On ``host`` (2.74's ``host``) from the profile's image, or
        with ``volume`` from a new volume of that image (the run's, its
        root disk, deleted with the server: the block device mapping the
        process tiers boot with); no network unless ``port`` (the
        profile's network)."""
        if port and self.profile.network == 'none':
            raise exception.ScenarioError(
                '%s: key network: a server with a port needs a network id'
                % self.profile.path)
        body: dict[str, typing.Any] = {'server': {
            'name': 'faultdriver-%s-%d' % (self.run_id, len(self.servers)),
            'flavorRef': flavor_id or self.create_flavor(
                self.default_vcpus),
            'networks': ([{'uuid': self.profile.network}] if port
                         else 'none'),
            'host': host}}
        if volume:
            body['server']['block_device_mapping_v2'] = [{
                'boot_index': 0, 'source_type': 'volume',
                'destination_type': 'volume',
                'uuid': self._create_volume(host, image=True),
                'delete_on_termination': True}]
        else:
            body['server']['imageRef'] = self.image()
        self.record_api(host, 'server', str(body['server']['name']))
        server_id = self.cloud.post('/servers', body)['server']['id']
        self.servers.append(server_id)
        return self.wait_for_server({'id': server_id}, timeout,
                                    status=status)

    def image(self) -> str:
        """The image id servers boot from: the profile's ``image`` (an id,
        or a name the image API resolves), else DEFAULT_IMAGE's."""
        if self._image is None:
            wanted = self.profile.image or DEFAULT_IMAGE
            try:
                self._image = str(uuid.UUID(wanted))
            except ValueError:
                found = self.cloud.get('/v2/images?name=%s' % wanted,
                                       service='image')['images']
                if len(found) != 1:
                    raise exception.ScenarioError(
                        '%s: key image: %d images named %r on cloud %s; '
                        'expected one (give its id)' % (
                            self.profile.path, len(found), wanted,
                            self.profile.cloud))
                self._image = str(found[0]['id'])
        return self._image

    def _create_volume(self, host: str, image: bool = False) -> str:
        """A new volume of the run (from the profile's image when
        ``image``), in the audit log first (``cloud restore`` deletes it
        by name), waited for until Cinder says it is available."""
        name = 'faultdriver-%s-v%d' % (self.run_id, len(self.volumes))
        self.record_api(host, 'volume', name)
        request: dict[str, typing.Any] = {'size': VOLUME_GB, 'name': name}
        if image:
            request['imageRef'] = self.image()
        volume_id = str(self.cloud.post('/volumes', {'volume': request},
                                        service='block-storage')[
                                            'volume']['id'])
        self.volumes.append(volume_id)
        self.wait(lambda: self._volume(volume_id)['status'] == 'available',
                  'volume %s available' % volume_id, backend.SERVER_TIMEOUT)
        return volume_id

    def _volume(self, volume_id: str) -> api_module.Json:
        return self.cloud.get('/volumes/%s' % volume_id,
                              service='block-storage')['volume']

    def server_volumes(self, server: records.Server) -> records.VolumeViews:
        """From Cinder, as its admin reads them: the server's
        attachments (the list of microversion 3.27 on, filtered by
        instance), each with the host its volume's view names for it
        (``host_name``, shown for a completed attachment only: one Cinder
        has not completed reads as not connected), and the API's block
        device mappings (2.89: the attachment id each names)."""
        try:
            attachments = self.cloud.get(
                '/attachments?all_tenants=1&instance_id=%s' % server['id'],
                service='block-storage')['attachments']
        except api_module.APIError as exc:
            if exc.status == 404:
                attachments = []
            else:
                raise
        found: records.VolumeViews = {}
        hosts: dict[str, typing.Optional[str]] = {}
        for volume_id in sorted({a['volume_id'] for a in attachments}):
            for shown in self._volume(volume_id)['attachments']:
                hosts[shown['attachment_id']] = shown.get('host_name')
            found[volume_id] = {'attachments': [], 'bdm': None}
        for attachment in attachments:
            found[attachment['volume_id']]['attachments'].append(
                {'id': attachment['id'],
                 'host': hosts.get(attachment['id'])})
        for bdm in self._volume_attachments(server):
            found.setdefault(bdm['volumeId'], {'attachments': [],
                                               'bdm': None})[
                'bdm'] = bdm.get('attachment_id')
        return found

    def _volume_attachments(
            self, server: records.Server) -> list[api_module.Json]:
        try:
            found: list[api_module.Json] = self.cloud.get(
                '/servers/%s/os-volume_attachments' % server['id'])[
                    'volumeAttachments']
            return found
        except api_module.APIError as exc:
            if exc.status == 404:       # the server is gone
                return []
            raise

    def request_volume_attach(self, server: records.Server) -> str:
        """A new volume of the run, attached through the API."""
        fields = self.server_fields(server)
        volume_id = self._create_volume(fields['host'] or self.hosts[0])
        self.cloud.post('/servers/%s/os-volume_attachments' % server['id'],
                        {'volumeAttachment': {'volumeId': volume_id}})
        return volume_id

    def request_volume_detach(self, server: records.Server,
                              volume_id: str) -> None:
        self.cloud.request('DELETE', '/servers/%s/os-volume_attachments/%s'
                           % (server['id'], volume_id))

    def mapped_volumes(self, server: records.Server) -> set[str]:
        return {bdm['volumeId'] for bdm in self._volume_attachments(server)}

    def server_ports(self, server: records.Server) -> records.PortBindings:
        """Neutron's ports of the server and their bindings per host
        (binding-extended)."""
        try:
            ports = self.cloud.get('/v2.0/ports?device_id=%s' % server['id'],
                                   service='network')['ports']
        except api_module.APIError as exc:
            if exc.status == 404:
                return {}
            raise
        found: records.PortBindings = {}
        for port in ports:
            bindings = self.cloud.get('/v2.0/ports/%s/bindings' % port['id'],
                                      service='network')['bindings']
            found[port['id']] = {b['host']: b['status'] for b in bindings}
        return found

    def refusal_status(self, error: BaseException) -> typing.Optional[int]:
        if isinstance(error, api_module.APIError) and \
                400 <= error.status < 500:
            return error.status
        return None

    def server_fields(self, server: records.Server) -> records.ServerFields:
        found = self.api.get_server(server['id'])
        return {'status': found['status'],
                'host': found.get('OS-EXT-SRV-ATTR:host'),
                'task_state': found.get('OS-EXT-STS:task_state')}

    def server_exists(self, server: records.Server) -> bool:
        try:
            self.api.get_server(server['id'])
            return True
        except api_module.APIError as exc:
            if exc.status == 404:
                return False
            raise

    def migrations(self, server: records.Server) -> list[records.Migration]:
        found: list[records.Migration] = self.cloud.get(
            '/os-migrations?instance_uuid=%s' % server['id'])['migrations']
        return sorted(found, key=lambda m: m['id'])

    def migration_statuses(
            self, server: records.Server) -> list[records.MigrationStatus]:
        return [(m['id'], m['status']) for m in self.migrations(server)]

    # -- services and periodics -------------------------------------------

    def service_state(self, host: str) -> str:
        return str(self.api.get_services('nova-compute', host)[0]['state'])

    def stop_compute(self, host: str) -> None:
        self.faults.stop_host(host)

    def run_periodic(self, host: str) -> bool:
        try:
            self.computes.control(host, timeout=backend.PERIODIC_TIMEOUT +
                                  15).periodic(
                timeout=backend.PERIODIC_TIMEOUT)
        except protocol.ControlError:
            if self.faults.is_crashed(host):
                return False
            raise
        return True

    # -- accounting -------------------------------------------------------

    def pinned_cpus(self, host: str) -> list[int]:
        """From the compute node record, read by ``host``'s FaultDriver,
        or (``host`` down) another's: any compute reads any node record
        through the conductor."""
        failures = []
        for alias in [host] + [h for h in self.hosts if h != host]:
            try:
                found = self.computes.control(alias).pinning(
                    host=self.aliases.host(host))
            except (protocol.ControlError, errors.HostRefused) as exc:
                failures.append('%s: %s' % (alias, exc))
                continue
            return sorted(int(cpu) for cpu in found['pinned_cpus'])
        raise errors.HostRefused(self.computes.host(host).ssh,
                                 'no compute could read its pinning',
                                 '; '.join(failures))

    def instance_pinning(self, server: records.Server) -> list[int]:
        try:
            topology = self.cloud.get('/servers/%s/topology' % server['id'])
        except api_module.APIError as exc:
            if exc.status == 404:
                return []
            raise
        return sorted(int(cpu) for node in topology.get('nodes') or ()
                      for cpu in (node.get('cpu_pinning') or {}).values())

    def _provider(self, host: str) -> typing.Optional[str]:
        found = self.cloud.get('/resource_providers?name=%s'
                               % self.aliases.nodename(host),
                               service='placement')['resource_providers']
        return found[0]['uuid'] if found else None

    def provider_allocations(self, host: str) -> records.Allocations:
        found = self.cloud.get('/resource_providers/%s/allocations'
                               % self._provider(host),
                               service='placement')['allocations']
        return {consumer: allocation['resources']
                for consumer, allocation in found.items()}

    def placement_pcpus(self, host: str) -> int:
        usages = self.cloud.get('/resource_providers/%s/usages'
                                % self._provider(host),
                                service='placement')['usages']
        return int(usages.get('PCPU', 0))

    # -- the hypervisor's view -------------------------------------------

    def guests(self, host: str) -> typing.Optional[records.Guests]:
        """``{instance uuid: state}`` of the guests ``host``'s libvirt
        has, asked with ``virsh`` on the host (the profile's
        ``hosts.ALIAS.libvirt``), named as the libvirt tier names them;
        None where the profile names no libvirt (a fake driver)."""
        libvirt = self.computes.host(host).libvirt
        if libvirt is None:
            return None
        return guest_states(self.computes.helper(host).guests(
            libvirt.uri, libvirt.container))

    def tracked_tasks(self, host: str) -> list[records.TrackedTask]:
        tasks: list[records.TrackedTask] = self.computes.control(
            host).tasks()
        return tasks

    # -- logs -------------------------------------------------------------

    def _log_end(self, alias: str) -> LogPosition:
        kind, where = self.computes.host(alias).log
        helper = self.computes.helper(alias)
        if kind == 'file':
            return helper.log_file(where)['offset']
        return helper.journald(where)['cursor']

    def log_text(self) -> str:
        """Every compute's log records since the run began."""
        text: typing.List[str] = []
        for alias in self.hosts:
            kind, where = self.computes.host(alias).log
            helper = self.computes.helper(alias)
            start = self._log_from.get(alias)
            # A file's position is its byte offset, journald's a cursor
            # (what _log_end gave for the host's own kind of log).
            records = (
                helper.log_file(where, typing.cast(
                    typing.Optional[int], start))['records']
                if kind == 'file'
                else helper.journald(where, typing.cast(
                    typing.Optional[str], start))['records'])
            text.extend(line + '\n' for line in records)
        return self.aliased_log(''.join(text))

    def aliased_log(self, text: str) -> str:
        """``text`` with Nova's periodic error naming the scenario's host:
        Nova names the node (``Error updating resources for node
        compute1``), which the steps count by the host's alias."""
        for alias in self.hosts:
            node = self.aliases.nodename(alias)
            if node != alias:
                text = text.replace(texts.PERIODIC_ERROR % node,
                                    texts.PERIODIC_ERROR % alias)
        return text

    def pcpu_total(self, host: str) -> int:
        """PCPU placement has on the host's provider (0: none)."""
        found = self.cloud.get('/resource_providers/%s/inventories'
                               % self._provider(host),
                               service='placement')['inventories']
        pcpu = found.get('PCPU') or {}
        return int(pcpu.get('total', 0)) - int(pcpu.get('reserved', 0))
