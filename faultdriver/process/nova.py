"""A running process-tier stack seen through the interface scenario steps
use (the one :class:`faultdriver.harness.embedded.EmbeddedNova` offers
in-process), so the same scenario file runs on both tiers.

State is read the way an operator would: the compute API, placement's
API, the cell database (pinned CPUs are only there), the computes' log
files and their fault journals on disk (which a crash does not lose).
Faults are set and observed through each compute's control socket.
"""

import json
import os
import subprocess
import time
import typing

from faultdriver.control import client as control_client
from faultdriver.control import protocol
from faultdriver import exception
from faultdriver import journal as journal_module
from faultdriver.process import client as client_module
from faultdriver.process import config
from faultdriver.process import network_standin
from faultdriver.process import procs
from faultdriver.process import stack as stack_module
from faultdriver.process import standins
from faultdriver.scenario import backend
from faultdriver.scenario import backend_base
from faultdriver.scenario import backend_records as records
from faultdriver.scenario import prereqs
from faultdriver.scenario import socket_faults
from faultdriver.scenario import tiers

#: A serialized Nova object as the database holds it (JSON).
NovaJson = typing.Any


def _data(obj: NovaJson) -> NovaJson:
    """The fields of a serialized Nova object."""
    return obj.get('nova_object.data', obj) if obj else {}


def host_pinned_cpus(numa_json: typing.Optional[str]) -> list[int]:
    """pCPUs pinned on a host, from compute_nodes.numa_topology."""
    if not numa_json:
        return []
    cells = _data(json.loads(numa_json)).get('cells', [])
    return sorted(cpu for cell in cells
                  for cpu in _data(cell).get('pinned_cpus', []))


def instance_pinned_cpus(numa_json: typing.Optional[str]) -> list[int]:
    """pCPUs an instance is pinned to, from instance_extra.numa_topology."""
    if not numa_json:
        return []
    cells = _data(json.loads(numa_json)).get('cells', [])
    return sorted(cpu for cell in cells
                  for cpu in (_data(cell).get('cpu_pinning_raw') or {})
                  .values())


class Faults(socket_faults.SocketFaults):
    """The fixture-like face of the computes' control sockets: rules and
    barriers as every socket-reached tier sets them
    (:class:`~faultdriver.scenario.socket_faults.SocketFaults`), the
    service's life through the stack's processes."""

    def __init__(self, nova: 'ProcessNova') -> None:
        self.nova = nova
        #: host -> entries its journal had when its nova-compute last
        #: started (what a later shutdown entry is counted from).
        self._started_at: dict[str, int] = {}
        #: Hosts a stop step stopped, until they start again.
        self._stopped: set[str] = set()

    def control(self, host: str) -> control_client.Client:
        """The client of ``host``'s control socket, on this machine."""
        return control_client.Client(self.nova.stack.control_socket(host))

    def wait_for_queued(self, host: str, method: str, expired: bool = True,
                        timeout: float = backend.WAIT_TIMEOUT) -> object:
        """Wait until an RPC message waits in ``host``'s queues (its
        service is down) and, with ``expired``, until a call sent then has
        outlived its timeout (the caller gave up).

        The broker cannot be asked for that: a call's TTL only drops it at
        the head of the queue, and a cast (no TTL) sent before it, such as
        ``rollback_live_migration_at_destination``, keeps it there until
        the host is back; nor can it tell which method a message calls,
        so ``method`` is only documentation.
        """
        del method
        self.nova.wait(lambda: self.nova.queued(host) > 0,
                       'messages queued for %s' % host, timeout)
        if expired:
            time.sleep(self.rpc_timeout + 1)
        return None

    #: Seconds a caller waits for an RPC reply in this Nova.
    rpc_timeout: float = config.TIMINGS['rpc_response_timeout']

    def _exited(self, host: str) -> bool:
        process = self.nova.stack.computes.get(host)
        return process is not None and not process.alive()

    def is_crashed(self, host: str) -> bool:
        """Whether the host's nova-compute process has exited other than
        by a graceful stop (a crash, a failed start, a kill_after)."""
        return self._exited(host) and not self.is_stopped(host)

    def is_stopped(self, host: str) -> bool:
        """Whether the host's nova-compute exited after a graceful stop
        (a stop step, or the shutdown action's SIGTERM that no
        kill_after cut short) and was not started again.  A stop the
        action began and that still runs is waited for (up to
        ``tiers.SHUTDOWN_BOUND``): the process ends with it, and an
        operator starts the service again once it did."""
        if host in self._stopped:
            return self._exited(host)
        if not self._shutdown_outcomes(host):
            return False
        process = self.nova.stack.computes[host]
        if process.alive():
            try:
                process.wait(tiers.SHUTDOWN_BOUND)
            except subprocess.TimeoutExpired:
                return False
        # Read again: a kill_after may have ended the stop meanwhile.
        return 'killed' not in self._shutdown_outcomes(host)

    def _shutdown_outcomes(self, host: str) -> list[object]:
        """Outcomes of the ``shutdown`` journal entries ``host`` wrote
        since its nova-compute last started."""
        path = self.nova.stack.journal_path(host)
        if not os.path.exists(path):
            return []
        return [e.get('outcome') for e in journal_module.read(path)[
            self._started_at.get(host, 0):]
            if e.get('kind') == journal_module.SHUTDOWN]

    def stop_host(self, host: str) -> None:
        """SIGTERM the host's nova-compute, as ``systemctl stop`` does
        (Nova's graceful shutdown); returns once it exited, SIGKILLing it
        if it outlived ``tiers.SHUTDOWN_BOUND``."""
        self.nova.stack.computes[host].stop(grace=tiers.SHUTDOWN_BOUND)
        self._stopped.add(host)

    def crash_host(self, host: str) -> None:
        """Kill the host's nova-compute now (SIGKILL)."""
        process = self.nova.stack.computes[host]
        process.stop(grace=0)

    def restart(self, host: str, rules: typing.Sequence[str] = ()) -> None:
        """Start ``host``'s nova-compute again (killing it if it runs)
        with ``rules``; returns once it started: its control socket
        answers, its RPC server consumes its queue (Nova starts that
        after ``init_host`` and the start's resource update) and the API
        shows its own heartbeat, not the killed process's (see
        ``wait_own_heartbeat``).

        A start that a fault of these rules ends (the process exits
        first, its journal showing the crash or raise) raises
        StartFailed, as the embedded Nova's restart does; the host stays
        down until the next restart.
        """
        stack = self.nova.stack
        # A graceful stop under way ends first (is_stopped waits for it),
        # as a service manager starts a unit again once its stop is over.
        self.is_stopped(host)
        process = stack.computes.get(host)
        if process is not None and process.alive():
            process.stop(grace=0)
        faults = stack.faults.get(host, {}).copy()
        faults['rules'] = list(rules)
        stack.write_compute_conf(host, faults)
        journal = stack.journal_path(host)
        seen = len(journal_module.read(journal)) \
            if os.path.exists(journal) else 0
        self._started_at[host] = seen
        self._stopped.discard(host)
        process = stack.start_compute(host)
        self.nova.wait(lambda: not process.alive() or (
            os.path.exists(stack.control_socket(host)) and
            self._answers(host) and self.nova.consumers(host)),
            'start of nova-compute on %s' % host, 90)
        if not process.alive():
            failed = exception.StartFailed.by_fault(
                host, journal_module.read(journal)[seen:])
            if failed is None:
                # Its exit status and the end of its logs: the stack's
                # teardown removes them.
                procs.check_alive([process], 'nova-compute on %s exited '
                                  'during its start, no fault fired' % host)
            # check_alive raised: the process exited.
            assert failed is not None
            raise failed
        self.nova.wait_own_heartbeat(host, 90)

    def _answers(self, host: str) -> bool:
        try:
            self.control(host).status()
            return True
        except protocol.ControlError:
            return False

    def history(self) -> list[records.JournalEntry]:
        """Every host's journal, in time order (read from disk)."""
        entries: list[dict[str, typing.Any]] = []     # as journals hold them
        # The computes', then the stand-ins' (their pseudo-hosts' rules).
        for host in (list(self.nova.stack.hosts) +
                     list(self.nova.stack.service_sides)):
            path = self.nova.stack.journal_path(host)
            if os.path.exists(path):
                entries.extend(journal_module.read(path))
        return sorted(entries, key=lambda e: e.get('time', 0))


class _AdminAPI:
    """The compute API calls of the contract (backend.ComputeAPI), with
    the names and arguments of Nova's functional API client."""

    def __init__(self, client: client_module.Client) -> None:
        self.client = client

    def post_server_action(self, server_id: str,
                           data: records.RequestBody) -> object:
        # confirmResize answers 204 No Content, the other actions 202 (a
        # few 200).
        return self.client.post('/servers/%s/action' % server_id, data,
                                ok=(200, 202, 204))

    def get_server(self, server_id: str) -> records.Server:
        server: records.Server = self.client.server(server_id)
        return server

    def delete_server(self, server_id: str) -> object:
        return self.client.request('DELETE', '/servers/%s' % server_id,
                                   ok=(204,))

    def delete_migration(self, server_id: str, migration_id: int) -> object:
        return self.client.request(
            'DELETE', '/servers/%s/migrations/%s' % (server_id, migration_id),
            ok=(202,))

    def get_services(
            self, binary: typing.Optional[str] = 'nova-compute',
            host: typing.Optional[str] = None) -> list[records.Service]:
        services: list[records.Service] = self.client.services(binary, host)
        return services

    def put_service_force_down(self, service_id: typing.Union[int, str],
                               forced_down: bool) -> object:
        return self.client.request('PUT', '/os-services/%s' % service_id,
                                   {'forced_down': forced_down})

    def get_instance_actions(self,
                             server_id: str) -> list[records.InstanceAction]:
        actions: list[records.InstanceAction] = self.client.get(
            '/servers/%s/os-instance-actions' % server_id)['instanceActions']
        return actions

    def get_instance_action_details(self, server_id: str,
                                    request_id: str) -> records.InstanceAction:
        action: records.InstanceAction = self.client.get(
            '/servers/%s/os-instance-actions/%s' % (
                server_id, request_id))['instanceAction']
        return action


class ProcessNova(backend_base.BackendBase):
    """What scenario steps and expectations need, on real processes."""

    #: An API request is dearer than the embedded Nova's database read.
    POLL = 0.25

    def __init__(self, stack: stack_module.Stack, pinned: bool = True) -> None:
        api = stack.api
        assert api is not None, 'a started stack'
        self.stack = stack
        self.client = api
        self.api = self.admin_api = _AdminAPI(api)
        self.faults = Faults(self)
        self.PINNED = pinned
        self._flavors: dict[tuple[int, str], str] = {}
        #: vCPUs of a server booted without a flavor: real libvirt has
        #: this machine's CPUs (2 here), so two pinned servers fit a host.
        self.default_vcpus = 1 if stack.libvirt else 2

    # -- polling ----------------------------------------------------------

    def consumers(self, host: str) -> int:
        """Consumers of ``host``'s compute queue: 1 once its nova-compute
        started its RPC server (the last step of its start)."""
        return self._queue_column('consumers', ('compute.%s' % host,))

    def queued(self, host: str) -> int:
        """Messages ready in ``host``'s compute queues (Nova 34 sends some
        calls and casts on the ``compute-alt`` topic)."""
        return self._queue_column('messages_ready', (
            'compute.%s' % host, 'compute-alt.%s' % host))

    def _queue_column(self, column: str,
                      names: typing.Container[str]) -> int:
        """The sum of ``column`` (``rabbitmqctl list_queues``) over the
        queues ``names``."""
        rabbit = self.stack.rabbit
        out = subprocess.run(
            [prereqs.program('rabbitmqctl'), '-n',
             rabbit.node, 'list_queues', 'name', column, '-q'],
            capture_output=True, text=True, env=dict(
                os.environ, **rabbit.ctl_env()), timeout=60).stdout
        return sum(int(parts[1]) for parts in map(str.split,
                                                  out.splitlines())
                   if len(parts) == 2 and parts[0] in names)

    # -- the control plane (tiers.Provision.CONTROL_PLANE) ---------------

    def stop_service(self, name: str) -> None:
        """Stop control-plane service ``name`` (``stack.CONTROL_SERVICES``)
        as its service manager would."""
        self.stack.stop_control(name)

    def start_service(self, name: str) -> None:
        """Start control-plane service ``name`` again; returns once it
        serves: the broker once every Nova service that runs consumes its
        queue again and the API shows a heartbeat of each newer than its
        last before the broker stopped (Nova's services reconnect by
        themselves: this waits, it does not help them; one that never
        does fails the step), nova-conductor and nova-scheduler once the
        API shows a heartbeat newer than the stopped process's last (as a
        compute's restart waits, ``wait_own_heartbeat``), placement once
        it listens."""
        binary = name if name.startswith('nova-') else None
        seen: typing.Dict[typing.Tuple[str, typing.Optional[str]],
                          object] = {}
        if name == 'rabbitmq':
            # Their heartbeats go through the conductor over the broker:
            # the last ones before it stopped.
            seen = self._heartbeats()
        elif binary:
            seen = {(binary, None): self._heartbeat(binary)}
        self.stack.start_control(name)
        if name == 'rabbitmq':
            self.wait(self._queues_consumed, 'every running service '
                      'consuming its queue again after the broker started',
                      90)
        if seen:
            # Until then the API takes them for down once
            # service_down_time passed (a move: "Compute service of src is
            # unavailable at this time").
            def beating() -> bool:
                return all(self._heartbeat(*service) != last
                           for service, last in seen.items())
            self.wait(beating, lambda: 'a new heartbeat of %s (the API '
                      'still shows %s)' % (', '.join(
                          b if h is None else '%s on %s' % (b, h)
                          for b, h in seen), seen), 90)

    def _heartbeat(self, binary: str,
                   host: typing.Optional[str] = None) -> object:
        return self.admin_api.get_services(binary, host)[0].get('updated_at')

    def _heartbeats(self) -> typing.Dict[
            typing.Tuple[str, typing.Optional[str]], object]:
        """The last heartbeat of the conductor, the scheduler and each
        running compute, by ``(binary, host)``."""
        found: typing.Dict[typing.Tuple[str, typing.Optional[str]],
                           object] = {
            (binary, None): self._heartbeat(binary)
            for binary in ('nova-conductor', 'nova-scheduler')}
        for host, process in self.stack.computes.items():
            if process.alive():
                found[('nova-compute', host)] = self._heartbeat(
                    'nova-compute', host)
        return found

    def _queues_consumed(self) -> bool:
        """Whether the conductor's, the scheduler's and each running
        compute's queue has a consumer."""
        queues = ['conductor', 'scheduler'] + [
            'compute.%s' % host for host, process in
            self.stack.computes.items() if process.alive()]
        return all(self._queue_column('consumers', (queue,))
                   for queue in queues)

    # -- servers ----------------------------------------------------------

    def create_flavor(
            self, vcpus: int = 2,
            extra_specs: typing.Optional[dict[str, str]] = None) -> str:
        key = (vcpus, json.dumps(extra_specs, sort_keys=True))
        if key not in self._flavors:
            self._flavors[key] = self.client.create_flavor(
                'flavor-%d' % len(self._flavors), vcpus,
                extra_specs=extra_specs)
        return self._flavors[key]

    def create_server(self, host: str, flavor_id: typing.Optional[str] = None,
                      timeout: float = backend.SERVER_TIMEOUT,
                      status: str = 'ACTIVE', volume: bool = False,
                      port: bool = False) -> records.Server:
        """``volume``: from a new volume of the block-storage stand-in;
        ``port``: on the network stand-in's network (Nova creates the
        port); neither: no network, the image."""
        server_id = self.client.boot(
            'server-%d' % time.monotonic_ns(), flavor_id or
            self.create_flavor(), standins.IMAGE_ID, host=host,
            networks=([{'uuid': network_standin.NETWORK_ID}] if port
                      else 'none'),
            volume=self.stack.block_storage.create_volume(
                image=standins.image_bytes()) if volume else None)
        return self.wait_for_server({'id': server_id}, timeout,
                                    status=status)

    def server_volumes(self, server: records.Server) -> records.VolumeViews:
        """From the block-storage stand-in (the server's attachments, each
        with its connector's host) and the API's block device mappings
        (the attachment id each names)."""
        found: records.VolumeViews = {volume_id: {'attachments': [
            {'id': a['id'], 'host': a['host']} for a in attachments],
            'bdm': None} for volume_id, attachments in
            self.stack.block_storage.attachments(server['id']).items()}
        for bdm in self._volume_attachments(server):
            found.setdefault(bdm['volumeId'], {'attachments': [],
                                               'bdm': None})[
                'bdm'] = bdm['attachment_id']
        if not found or not self.stack.libvirt:
            return found
        # Real guests: whether each host's guest of the server has the
        # volume's device as a disk (volume-attachments checks the
        # server's host's).
        disks = {host: hypervisor.guest_disks().get(server['id'])
                 for host, hypervisor in self.stack.libvirt.items()}
        for volume_id, info in found.items():
            path = self.stack.block_storage.device_path(volume_id)
            info['guest_disk'] = {host: path in paths for host, paths in
                                  disks.items() if paths is not None}
        return found

    def _volume_attachments(
            self, server: records.Server) -> list[client_module.Json]:
        try:
            found: list[client_module.Json] = self.client.volume_attachments(
                server['id'])
            return found
        except client_module.APIError as exc:
            if exc.status == 404:       # the server is gone
                return []
            raise

    def refusal_status(self, error: BaseException) -> typing.Optional[int]:
        """The process client raises APIError with the status."""
        if isinstance(error, client_module.APIError) and \
                400 <= error.status < 500:
            return error.status
        return None

    def server_ports(self, server: records.Server) -> records.PortBindings:
        """From the network stand-in: the server's ports and the bindings
        it holds for each, per host."""
        return self.stack.network.bindings(server['id'])

    def request_volume_attach(self, server: records.Server) -> str:
        """A new volume of the block-storage stand-in, attached through
        the API."""
        volume_id = self.stack.block_storage.create_volume()
        self.client.attach_volume(server['id'], volume_id)
        return volume_id

    def request_volume_detach(self, server: records.Server,
                              volume_id: str) -> None:
        self.client.detach_volume(server['id'], volume_id)

    def mapped_volumes(self, server: records.Server) -> set[str]:
        return {bdm['volumeId'] for bdm in self._volume_attachments(server)}

    # -- primitive reads (the API's, as an operator's) ----------------------

    def server_fields(self, server: records.Server) -> records.ServerFields:
        found = self.client.server(server['id'])
        return {'status': found['status'],
                'host': found['OS-EXT-SRV-ATTR:host'],
                'task_state': found['OS-EXT-STS:task_state']}

    def server_exists(self, server: records.Server) -> bool:
        try:
            self.client.server(server['id'])
            return True
        except client_module.APIError as exc:
            if exc.status == 404:
                return False
            raise

    def migrations(self, server: records.Server) -> list[records.Migration]:
        found: list[records.Migration] = self.client.migrations(server['id'])
        return found

    def migration_statuses(
            self, server: records.Server) -> list[records.MigrationStatus]:
        return [(m['id'], m['status']) for m in self.migrations(server)]

    # -- services and periodics -------------------------------------------

    def service_state(self, host: str) -> str:
        state: str = self.client.services('nova-compute', host)[0]['state']
        return state

    def stop_compute(self, host: str) -> None:
        """Stop ``host``'s nova-compute as ``systemctl stop`` does
        (SIGTERM: Nova's graceful shutdown)."""
        self.faults.stop_host(host)

    def run_periodic(self, host: str) -> bool:
        """Run one whole resource-tracker periodic on ``host`` now, as the
        embedded Nova does: the compute runs it when its control socket
        asks (``faultdriver ctl periodic``), beside the timer's runs
        (none with the scenario's ``periodic-timer: false``)."""
        try:
            self.faults.control(host).periodic(
                timeout=backend.PERIODIC_TIMEOUT)
        except protocol.ControlError:
            if self.faults.is_crashed(host):
                return False        # it died during the periodic
            raise
        return True

    # -- accounting -------------------------------------------------------

    def pinned_cpus(self, host: str) -> list[int]:
        rows = self.stack.db.query(
            'nova_cell1', 'SELECT numa_topology FROM compute_nodes WHERE '
            'host = %s AND deleted = 0', host)
        return host_pinned_cpus(rows[0]['numa_topology'] if rows else None)

    def instance_pinning(self, server: records.Server) -> list[int]:
        rows = self.stack.db.query(
            'nova_cell1', 'SELECT numa_topology FROM instance_extra WHERE '
            'instance_uuid = %s', server['id'])
        return instance_pinned_cpus(rows[0]['numa_topology'] if rows
                                    else None)

    def provider_allocations(self, host: str) -> records.Allocations:
        found = self.client.get('/resource_providers/%s/allocations'
                                % self.client.provider(host),
                                placement=True)['allocations']
        return {consumer: allocation['resources']
                for consumer, allocation in found.items()}

    def placement_pcpus(self, host: str) -> int:
        pcpus: int = self.client.usages(host).get('PCPU', 0)
        return pcpus

    # -- the hypervisor's view -------------------------------------------

    def guests(self, host: str) -> typing.Optional[records.Guests]:
        """``{instance uuid: state}`` of the guests ``host``'s hypervisor
        has (running, paused, shutoff, ...), asked of libvirt itself, not
        of Nova; None where the hypervisor is faultdriver's fake."""
        hypervisor = self.stack.libvirt.get(host)
        return hypervisor.guests() if hypervisor else None

    def tracked_tasks(self, host: str) -> list[records.TrackedTask]:
        tasks: list[records.TrackedTask] = self.faults.control(host).tasks()
        return tasks

    # -- logs -------------------------------------------------------------

    def log_text(self, host: typing.Optional[str] = None) -> str:
        """``host``'s compute log, or every compute's (restarts append to
        the same file)."""
        text = []
        for each in [host] if host else self.stack.hosts:
            path = self.stack.compute_log(each)
            if os.path.exists(path):
                with open(path, encoding='utf-8', errors='replace') as f:
                    text.append(f.read())
        return ''.join(text)
