"""Embedded Nova: real compute services in-process, on fakelibvirt.

One implementation for the functional tests (``tests/functional/base.py``
subclasses it) and for the scenario runner (``faultdriver.scenario``),
which runs a dynamically built subclass through unittest outside any
test discovery.

``nova.tests.functional`` decides eventlet patching from
``OS_NOVA_DISABLE_EVENTLET_PATCHING`` when first imported, so it is
imported here before any other Nova module; set the variable before
importing this module.
"""

import nova.tests.functional  # noqa: F401  (must precede eventlet)

import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import typing  # noqa: E402
import urllib.parse  # noqa: E402

import fixtures  # noqa: E402
from futurist import _thread as futurist_thread  # noqa: E402
from nova import context  # noqa: E402
from nova import exception  # noqa: E402
from nova import objects  # noqa: E402
from nova.tests.functional import integrated_helpers  # noqa: E402
from nova.tests.functional.libvirt import base  # noqa: E402
from oslo_utils import uuidutils  # noqa: E402

from faultdriver import exception as faultdriver_exception  # noqa: E402
from faultdriver.harness import dbpool  # noqa: E402
from faultdriver.harness import injection  # noqa: E402
from faultdriver.harness import migrationjob  # noqa: E402
from faultdriver.harness import observe  # noqa: E402
from faultdriver.harness import rpcwake  # noqa: E402
from faultdriver.harness import topology  # noqa: E402
from faultdriver import manager_tasks  # noqa: E402
from faultdriver import novacompat  # noqa: E402
from faultdriver.novacompat import patchfixtures  # noqa: E402
from faultdriver.scenario import backend  # noqa: E402
from faultdriver.scenario import backend_base  # noqa: E402
from faultdriver.scenario import backend_records as records  # noqa: E402
from faultdriver.scenario import runstate  # noqa: E402
from faultdriver.scenario import tiers  # noqa: E402
from faultdriver import waiting  # noqa: E402

#: The nova wheel installs api-paste.ini under <prefix>/etc/nova.
API_PASTE = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')

#: Pinned topology: dedicated pCPUs, all in one NUMA cell, per host.
PINNED_CPUS = topology.PINNED.cpus


#: Nova's functional-test bases (Any to mypy: Nova has no stubs).
_NovaServersBase: typing.Any = base.ServersTestBase
_NovaHelpers: typing.Any = integrated_helpers.InstanceHelperMixin


class EmbeddedNova(backend_base.BackendBase,
                   _NovaServersBase, _NovaHelpers):  # type: ignore[misc]
    """Two hosts, ``src`` and ``dest``; subclasses set RULES and PINNED."""

    #: Nova's functional API client (its TestOpenStackClient: the
    #: contract's ComputeAPI and more; Nova has no stubs).
    api: typing.Any
    admin_api: typing.Any

    ADMIN_API = True
    microversion = 'latest'
    CAST_AS_CALL = False          # a crash needs casts to stay casts
    ADDITIONAL_FILTERS = ['NUMATopologyFilter']
    #: host -> rule texts installed for the test.
    RULES: typing.Mapping[str, typing.Sequence[str]] = {}
    #: Candidate tracker fixes for every host (empty: stock tracker).
    PATCHES: typing.Tuple[str, ...] = ()
    #: 4 dedicated pCPUs in one NUMA cell per host, pinned flavors.
    PINNED = False
    HOSTS: typing.Tuple[str, ...] = ('src', 'dest')
    #: host -> topology.HostShape: each host's CPUs, NUMA cells, memory and
    #: CPU sets (overrides PINNED's shape; None: PINNED or Nova's default).
    TOPOLOGY: typing.Optional[typing.Mapping[str, topology.HostShape]] = None
    #: Seconds an idle pool thread sleeps between checks for shutdown.
    #: Nova's test base makes it 0.01 (quick teardown, futurist bug
    #: 2160159): idle threads then burn ~8% of a core per embedded Nova.
    #: None keeps Nova's value.
    IDLE_WAKEUP: typing.Optional[float] = None
    #: Every host serves a control socket (``self.faults.control(host)``).
    CONTROL = False
    #: Every compute in this process takes the one named tracker lock.
    SHARED_TRACKER_LOCK = True
    #: Seconds an RPC caller waits for a reply.  Short, so a crash's
    #: timeouts pass quickly; a test whose point is a restart *within* a
    #: caller's wait sets more (in a cloud the wait is 60 s and a restart
    #: takes seconds; 2 s compresses the wait, not the restart).
    RPC_TIMEOUT = tiers.get(tiers.DEFAULT).rpc_timeout
    #: Seconds an RPC caller waits for a crashed host (at most
    #: RPC_TIMEOUT): less, as nothing of it answers however long one
    #: waits, and only live hosts under load need the longer wait.  A
    #: test restarting a host within its callers' wait sets more.
    DEAD_HOST_WAIT = 0.5
    #: vCPUs of a pinned server booted without a flavor.
    default_vcpus = 2
    #: ``(logger name, level)`` whose records ``log_text`` returns (the
    #: scenario runner's; none for a plain test).
    CAPTURED_LOGS: typing.Tuple[typing.Tuple[str, int], ...] = ()

    def setUp(self) -> None:
        # Scenario steps and expectations count Nova's log lines too.
        novacompat.verify(novacompat.SCENARIO_GROUPS)
        self.flags(api_paste_config=API_PASTE, group='wsgi')
        # fakelibvirt sends no device-removed event: the libvirt driver
        # waits this long before it reads the guest's XML and finds the
        # volume's disk gone (Nova's default, 20 s, per detach).
        self.flags(device_detach_timeout=1, group='libvirt')
        # Before Nova's database fixtures create their engines.
        self.useFixture(dbpool.PooledSqliteConnections())
        # Before Nova's services start their RPC servers.
        self.useFixture(rpcwake.PromptDelivery())
        control_dir = (self.useFixture(fixtures.TempDir()).path
                       if self.CONTROL else None)
        self.faults = self.useFixture(
            injection.FaultInjection(self, rules=self.RULES,
                                   patches={'*': self.PATCHES},
                                   control_dir=control_dir,
                                   rpc_timeout=self.RPC_TIMEOUT,
                                   dead_host_wait=self.DEAD_HOST_WAIT))
        super().setUp()
        self._own_host_connectors()
        self._bind_as_neutron()
        self.observe = observe.Observer()
        shapes = self.TOPOLOGY
        if shapes:
            self.useFixture(topology.PerHostShapes(self, shapes))
        elif self.PINNED:
            self.flags(cpu_dedicated_set=topology.PINNED.cpu_dedicated_set,
                       cpu_shared_set=None, group='compute')
            self.flags(vcpu_pin_set=None)
            shapes = dict.fromkeys(self.HOSTS, topology.PINNED)
        for host in self.HOSTS:
            self.start_compute(hostname=host, host_info=(
                topology.host_info(shapes[host]) if shapes else None))
        # After the starts: what scenarios count is what the steps caused.
        self._captured_logs = [self.useFixture(fixtures.FakeLogger(
            name=name, level=level,
            format='%(levelname)s %(name)s %(message)s'))
            for name, level in self.CAPTURED_LOGS]

    def _setup_services(self) -> None:
        # Nova's test setUp has set its value; the services start now.
        if self.IDLE_WAKEUP is not None:
            self._nova_idle_wakeup = futurist_thread.ThreadWorker.MAX_IDLE_FOR
            self.useFixture(patchfixtures.Patch(
                'futurist._thread.ThreadWorker.MAX_IDLE_FOR',
                self.IDLE_WAKEUP))
        super()._setup_services()

    def tearDown(self) -> None:
        # Before the cleanups stop the services: stopping one waits for
        # its idle pool threads, each of which looks for the stop only
        # every MAX_IDLE_FOR seconds, one service after the other; with
        # Nova's short value back they wait for one IDLE_WAKEUP in all
        # (a scenario's teardown 1.2 s -> ~0.3 s).  The Patch fixture's
        # cleanup restores the same value.
        if self.IDLE_WAKEUP is not None:
            futurist_thread.ThreadWorker.MAX_IDLE_FOR = self._nova_idle_wakeup
        super().tearDown()

    # -- actions ------------------------------------------------------------

    def create_flavor(
            self, vcpus: int,
            extra_specs: typing.Optional[dict[str, str]] = None) -> str:
        flavor_id: str = self._create_flavor(vcpu=vcpus,
                                             extra_spec=extra_specs)
        return flavor_id

    def guests(self, host: str) -> typing.Optional[records.Guests]:
        """None: fakelibvirt is not a hypervisor to ask (the scenario
        backend contract; real guests are the libvirt tier's)."""
        return None

    def tracked_tasks(self, host: str) -> list[records.TrackedTask]:
        return [records.TrackedTask(name=task['name'],
                                    instance_uuid=task['instance_uuid'])
                for task in manager_tasks.in_progress(
                    self.computes[host].manager)]

    def end_pending_moves(self) -> None:
        """Once a case's report is written: end the per-move tasks each
        running compute still tracks (faultdriver.manager_tasks), so the
        teardown's stops do not wait for them."""
        for host in self.computes:
            if self.compute_running(host):
                manager_tasks.end_pending_moves(self.computes[host].manager)

    def create_server(self, host: str, flavor_id: typing.Optional[str] = None,
                      timeout: float = backend.SERVER_TIMEOUT,
                      status: str = 'ACTIVE', volume: bool = False,
                      port: bool = False) -> records.Server:
        """Boot a server on ``host`` and wait for ``status``; waiting for
        ACTIVE fails at once, with the fault, on ERROR.  ``volume``: from
        a volume of its own (Nova's CinderFixture fakes any volume id it
        is asked for); ``port``: on the NeutronFixture's network, which
        gives it one port; neither: no network, an image."""
        if volume:
            flavor_id = self._volume_backed(
                flavor_id or self.api.get_flavors()[0]['id'])
        request = self._build_server(
            flavor_id=flavor_id, host=host,
            networks=([{'uuid': self.neutron.network_1['id']}] if port
                      else 'none'))
        if volume:
            request['imageRef'] = ''
            request['block_device_mapping_v2'] = [{
                'boot_index': 0, 'uuid': uuidutils.generate_uuid(),
                'source_type': 'volume', 'destination_type': 'volume'}]
        server = self.admin_api.post_server({'server': request})
        return self.wait_for_server(server, timeout=timeout, status=status)

    def _own_host_connectors(self) -> None:
        """A compute's volume connector names its own host, as in a
        cloud.  LibvirtDriver.get_volume_connector reads CONF.host, which
        Nova's test base sets to the host started last (one process runs
        every host), so every attachment would name that one."""
        from nova.virt.libvirt import driver as libvirt_driver
        real = libvirt_driver.LibvirtDriver.get_volume_connector

        def get_volume_connector(driver: typing.Any,
                                 instance: typing.Any) -> runstate.JSON:
            connector = dict(real(driver, instance))
            connector['host'] = driver.virtapi._compute.host
            return connector
        self.useFixture(patchfixtures.Patch(
            'nova.virt.libvirt.driver.LibvirtDriver.get_volume_connector',
            get_volume_connector))

    def _bind_as_neutron(self) -> None:
        """Port bindings as Neutron's ML2 plugin keeps them, where Nova's
        NeutronFixture does not (a binding's host is part of its key):

        * a port update naming another ``binding:host_id`` moves the
          port's active binding to that host (the old host's is gone; the
          fixture keeps it, inactive).  Resizes and evacuations rebind by
          port update, so the ``port-bindings`` invariant would report
          each of them;
        * a second binding for a host that has one is refused with 409
          (``PortBindingAlreadyExists``; the fixture overwrites it): what
          an inactive binding a failed move left behind does to the next
          move to that host.
        """
        from neutronclient.common import exceptions as neutron_errors
        from nova.tests.fixtures import neutron
        update_port = neutron.NeutronFixture.update_port
        create_port_binding = neutron.NeutronFixture.create_port_binding

        def rebind(fixture: typing.Any, port_id: str,
                   body: runstate.JSON = None) -> runstate.JSON:
            host = ((body or {}).get('port') or {}).get('binding:host_id')
            before = (fixture._get_active_binding(port_id)[0]
                      if port_id in fixture._port_bindings else None)
            updated = update_port(fixture, port_id, body)
            if host and before and before != host:
                fixture._port_bindings[port_id].pop(before, None)
            return updated

        def bind_once(fixture: typing.Any, port_id: str,
                      body: runstate.JSON) -> runstate.JSON:
            if body['binding']['host'] in fixture._port_bindings.get(
                    port_id, {}):
                raise neutron_errors.Conflict(
                    'Binding for port %s on host %s already exists.' % (
                        port_id, body['binding']['host']))
            return create_port_binding(fixture, port_id, body)
        self.useFixture(patchfixtures.Patch(
            'nova.tests.fixtures.neutron.NeutronFixture.update_port', rebind))
        self.useFixture(patchfixtures.Patch(
            'nova.tests.fixtures.neutron.NeutronFixture.create_port_binding',
            bind_once))

    def _volume_backed(self, flavor_id: str) -> str:
        """The flavor ``flavor_id`` without local disks (as clouds give
        volume-backed servers), its own copy, made once: Nova's test
        flavors have a 10 GB ephemeral disk, whose file fakelibvirt never
        creates, and a volume-backed server's live-migration check reads
        it (an image-backed one's does not)."""
        cache: typing.Dict[str, str] = self.__dict__.setdefault(
            '_volume_flavors', {})
        if flavor_id not in cache:
            flavor = self.admin_api.api_get(
                '/flavors/%s' % flavor_id).body['flavor']
            specs = self.admin_api.api_get(
                '/flavors/%s/os-extra_specs' % flavor_id).body['extra_specs']
            cache[flavor_id] = self._create_flavor(
                memory_mb=flavor['ram'], vcpu=flavor['vcpus'], disk=0,
                ephemeral=0, extra_spec=specs or None)
        return cache[flavor_id]

    def server_volumes(self, server: records.Server) -> records.VolumeViews:
        """From Nova's CinderFixture (attachments per volume, each with
        its connector) and the API's volume attachments (2.89: the
        attachment id each block device mapping names)."""
        found: records.VolumeViews = {}
        for volume_id, attachments in list(
                self.cinder.volume_to_attachment.items()):
            mine: typing.List[records.VolumeAttachment] = [
                    {'id': a['id'],
                     'host': (a['connector'] or {}).get('host')}
                    for a in list(attachments.values())
                    if a['instance_uuid'] == server['id']]
            if mine:
                found[volume_id] = {'attachments': mine, 'bdm': None}
        for bdm in self._api_volume_attachments(server):
            view = found.setdefault(bdm['volumeId'],
                                    {'attachments': [], 'bdm': None})
            view['bdm'] = bdm['attachment_id']
        return found

    def request_volume_attach(self, server: records.Server) -> str:
        """A new volume (Nova's CinderFixture fakes any id it is asked
        for), attached through the API."""
        volume_id = uuidutils.generate_uuid()
        self.api.post_server_volume(server['id'], {
            'volumeAttachment': {'volumeId': volume_id}})
        return volume_id

    def request_volume_detach(self, server: records.Server,
                              volume_id: str) -> None:
        self.api.delete_server_volume(server['id'], volume_id)

    def mapped_volumes(self, server: records.Server) -> set[str]:
        return {bdm['volumeId']
                for bdm in self._api_volume_attachments(server)}

    def _api_volume_attachments(
            self, server: records.Server) -> typing.List[runstate.JSON]:
        """The server's block device mappings of volumes; none once the
        server is gone (the backend contract: ``server_volumes`` of a
        deleted server is ``{}``)."""
        from nova.tests.functional.api import client as api_client
        api = self.admin_api
        previous, api.microversion = api.microversion, '2.89'
        try:
            found: typing.List[runstate.JSON] = api.api_get(
                '/servers/%s/os-volume_attachments' %
                server['id']).body['volumeAttachments']
            return found
        except api_client.OpenStackApiNotFoundException:
            return []
        finally:
            api.microversion = previous

    def refusal_status(self, error: BaseException) -> typing.Optional[int]:
        """Nova's functional API client raises OpenStackApiException
        with the response."""
        from nova.tests.functional.api import client as api_client
        if isinstance(error, api_client.OpenStackApiException):
            status: int = error.response.status_code
            if 400 <= status < 500:
                return status
        return None

    def server_ports(self, server: records.Server) -> records.PortBindings:
        """From Nova's NeutronFixture: its ports of the server and the
        bindings it holds for each, per host."""
        return {port['id']: {
            host: binding.get('status', 'ACTIVE') for host, binding in
            list(self.neutron._port_bindings.get(port['id'], {}).items())}
            for port in list(self.neutron._ports.values())
            if port.get('device_id') == server['id']}

    def live_migrate(self, server: records.Server, host: str = 'dest') -> None:
        self.api.post_server_action(server['id'], {'os-migrateLive': {
            'host': host, 'block_migration': 'auto'}})

    def stub_live_migration(self) -> None:
        """Let live migrations in any direction complete in fakelibvirt:
        the guest appears on the destination named by the migration URI
        and the source's job completes."""
        self.useFixture(patchfixtures.Patch(
            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',
            self._migrate_to_uri_stub))
        self.useFixture(migrationjob.PromptMigrationJobs())

    def stub_disk_copy(self) -> None:
        """Let cold migrations and resizes run in fakelibvirt, which cannot
        copy disks over ssh (Nova's own libvirt functional tests stub the
        copy too): LibvirtDriver's ``migrate_disk_and_power_off`` returns
        no disk info.  Rules still fire: FaultDriver calls this inner
        method after them."""
        self.useFixture(patchfixtures.Patch(
            'nova.virt.libvirt.driver.LibvirtDriver.'
            'migrate_disk_and_power_off', _no_disk_copy))

    def _migrate_to_uri_stub(self, domain: typing.Any, destination: str,
                             params: runstate.JSON, flags: int) -> None:
        host = urllib.parse.urlparse(destination).hostname
        guest = self.computes[host].driver._host.get_connection().createXML(
            params['destination_xml'], 'fake-createXML-doesnt-care')
        # Persistent, as Nova's VIR_MIGRATE_PERSIST_DEST makes it on real
        # libvirt: fakelibvirt forgets a transient domain once stopped, so
        # a migrated server's stop lost its guest (a second-call sweep's
        # stop after the move; not Nova's doing).
        guest._transient = False
        domain.complete_job()

    def stop_compute(self, host: str) -> None:
        """Stop ``host``'s nova-compute as ``systemctl stop`` does: Nova's
        graceful shutdown, which waits for operations in progress."""
        self.faults.stop_host(host)

    def run_periodic(self, host: str) -> bool:
        """The periodic runs in a thread of its own: a crash of ``host``
        during it (a call the host took meanwhile hit a crash rule) blocks
        that thread as a dead process's, and the step goes on."""
        manager = self.computes[host].manager
        ended: typing.List[typing.Optional[Exception]] = []

        def periodic() -> None:
            try:
                manager.update_available_resource(context.get_admin_context())
                ended.append(None)
            except faultdriver_exception.SimulatedCrash:
                pass                # its host died: nobody waits for it
            except Exception as exc:
                ended.append(exc)
        threading.Thread(target=periodic, daemon=True,
                         name='faultdriver-periodic-%s' % host).start()
        waiting.until(lambda: ended or self.faults.is_crashed(host),
                      backend.PERIODIC_TIMEOUT, 'the periodic of %s' % host,
                      error=AssertionError)
        if ended and ended[0] is not None:
            raise ended[0]
        return bool(ended)

    # -- primitive reads ----------------------------------------------------
    # They read the database (faultdriver.harness.observe: an API request
    # costs as much CPU as the work waited for) with the API's derivations;
    # the shared waits (backend_base) poll them and return the API's view.

    def server_fields(self, server: records.Server) -> records.ServerFields:
        return self.observe.server_fields(server['id'])

    def server_exists(self, server: records.Server) -> bool:
        return not self.observe.server_gone(server['id'])

    def migration_statuses(
            self, server: records.Server) -> list[records.MigrationStatus]:
        return self.observe.migration_statuses(server['id'])

    def service_state(self, host: str) -> str:
        return self.observe.service_state(host)

    def migrations(self, server: records.Server) -> list[records.Migration]:
        found: list[records.Migration] = self.api.api_get(
            '/os-migrations?instance_uuid=%s' % server['id']
        ).body['migrations']
        return found

    def log_text(self) -> str:
        """What the loggers of ``CAPTURED_LOGS`` recorded."""
        return ''.join(capture.output for capture in self._captured_logs)

    def migration(self, server: records.Server,
                  migration_id: int) -> records.Migration:
        """The API's view of one of the server's migrations."""
        return self._migration(server, migration_id)

    def wait_for_migration(self, server: records.Server,
                           statuses: typing.Collection[str],
                           timeout: float = 20) -> records.Migration:
        """Wait until the server's newest migration has one of
        ``statuses``; returns it."""
        def newest() -> typing.Optional[records.Migration]:
            migrations = self.observe.migration_statuses(server['id'])
            if migrations and migrations[-1][1] in statuses:
                return self.migration(server, migrations[-1][0])
            return None
        return self.wait(newest, lambda: 'migration %s: %s' % (
            '/'.join(statuses), self.observe.migration_statuses(
                server['id'])), timeout)

    # -- state --------------------------------------------------------------

    def allocations(self, consumer: str) -> records.Allocations:
        """Hosts on which placement holds resources for ``consumer`` (a
        server or migration uuid): ``{host: {resource class: amount}}``."""
        names = {rp['uuid']: rp['name'] for rp in self.placement.get(
            '/resource_providers').body['resource_providers']}
        return {names[rp]: alloc['resources'] for rp, alloc in
                self._get_allocations_by_server_uuid(consumer).items()}

    def migration_context(self, server: records.Server) -> typing.Any:
        """The instance's MigrationContext from the database, or None."""
        return objects.MigrationContext.get_by_instance_uuid(
            context.get_admin_context(), server['id'])

    def pinned_cpus(self, host: str) -> list[int]:
        """The pCPUs the host's compute node records as pinned."""
        node = objects.ComputeNode.get_by_nodename(
            context.get_admin_context(), host)
        numa = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        return sorted(cpu for cell in numa.cells for cpu in cell.pinned_cpus)

    def instance_pinning(self, server: records.Server) -> list[int]:
        """The pCPUs the instance's NUMA topology says it is pinned to."""
        try:
            numa = objects.InstanceNUMATopology.get_by_instance_uuid(
                context.get_admin_context(), server['id'])
        except exception.NumaTopologyNotFound:     # e.g. never scheduled
            return []
        if numa is None:                # not a NUMA (pinned) instance
            return []
        return sorted(cpu for cell in numa.cells
                      for cpu in cell.cpu_pinning.values())

    def provider_allocations(self, host: str) -> records.Allocations:
        found = self.placement.get(
            '/resource_providers/%s/allocations' %
            self.compute_rp_uuids[host]).body['allocations']
        return {consumer: allocation['resources']
                for consumer, allocation in found.items()}

    def placement_pcpus(self, host: str) -> int:
        """PCPU usage placement records for ``host``'s provider."""
        usages = self._get_provider_usages(self.compute_rp_uuids[host])
        pcpus: int = usages.get('PCPU', 0)
        return pcpus


def _no_disk_copy(self: typing.Any, context: typing.Any, instance: typing.Any,
                  dest: str, flavor: typing.Any, network_info: typing.Any,
                  block_device_info: typing.Any = None, timeout: int = 0,
                  retry_interval: int = 0) -> str:
    return '{}'
