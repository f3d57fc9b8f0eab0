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
import time  # noqa: E402
import urllib.parse  # noqa: E402

import fixtures  # noqa: E402
from nova import context  # noqa: E402
from nova import objects  # noqa: E402
from nova.tests.fixtures import libvirt as fakelibvirt  # noqa: E402
from nova.tests.functional import integrated_helpers  # noqa: E402
from nova.tests.functional.libvirt import base  # noqa: E402

from faultdriver import fixture  # noqa: E402

#: The nova wheel installs api-paste.ini under <prefix>/etc/nova.
API_PASTE = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')

#: Pinned topology: dedicated pCPUs, all in one NUMA cell, per host.
PINNED_CPUS = 4


class EmbeddedNova(base.ServersTestBase,
                   integrated_helpers.InstanceHelperMixin):
    """Two hosts, ``src`` and ``dest``; subclasses set RULES and PINNED."""

    ADMIN_API = True
    microversion = 'latest'
    CAST_AS_CALL = False          # a crash needs casts to stay casts
    ADDITIONAL_FILTERS = ['NUMATopologyFilter']
    #: host -> rule texts installed for the test.
    RULES = {}
    #: Candidate tracker fixes for every host (empty: stock tracker).
    PATCHES = ()
    #: 4 dedicated pCPUs in one NUMA cell per host, pinned flavors.
    PINNED = False
    HOSTS = ('src', 'dest')
    #: Every host serves a control socket (``self.faults.control(host)``).
    CONTROL = False

    def setUp(self):
        self.flags(api_paste_config=API_PASTE, group='wsgi')
        control_dir = (self.useFixture(fixtures.TempDir()).path
                       if self.CONTROL else None)
        self.faults = self.useFixture(
            fixture.FaultInjection(self, rules=self.RULES,
                                   patches={'*': self.PATCHES},
                                   control_dir=control_dir))
        super().setUp()
        host_info = None
        if self.PINNED:
            self.flags(cpu_dedicated_set='0-%d' % (PINNED_CPUS - 1),
                       cpu_shared_set=None, group='compute')
            self.flags(vcpu_pin_set=None)
            host_info = fakelibvirt.HostInfo(
                cpu_nodes=1, cpu_sockets=1, cpu_cores=PINNED_CPUS,
                cpu_threads=1)
        for host in self.HOSTS:
            self.start_compute(hostname=host, host_info=host_info)

    # -- actions ------------------------------------------------------------

    def boot(self, host='src', vcpus=2):
        flavor = None
        if self.PINNED:
            flavor = self._create_flavor(
                vcpu=vcpus, extra_spec={'hw:cpu_policy': 'dedicated'})
        return self._create_server(host=host, networks='none',
                                   flavor_id=flavor)

    def live_migrate(self, server, host='dest'):
        self.api.post_server_action(server['id'], {'os-migrateLive': {
            'host': host, 'block_migration': 'auto'}})

    def stub_live_migration(self):
        """Let live migrations in any direction complete in fakelibvirt:
        the guest appears on the destination named by the migration URI
        and the source's job completes."""
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',
            self._migrate_to_uri_stub))

    def _migrate_to_uri_stub(self, domain, destination, params, flags):
        host = urllib.parse.urlparse(destination).hostname
        self.computes[host].driver._host.get_connection().createXML(
            params['destination_xml'], 'fake-createXML-doesnt-care')
        domain.complete_job()

    def run_periodic(self, host):
        self.computes[host].manager.update_available_resource(
            context.get_admin_context())

    # -- waiting ------------------------------------------------------------

    def service_state(self, host):
        return self.admin_api.get_services(
            host=host, binary='nova-compute')[0]['state']

    def wait_service_state(self, host, state, timeout=20):
        deadline = time.monotonic() + timeout
        while self.service_state(host) != state:
            self.assertLess(time.monotonic(), deadline,
                            '%s never became %s' % (host, state))
            time.sleep(0.1)

    def migrations(self, server):
        return self.api.api_get(
            '/os-migrations?instance_uuid=%s' % server['id']
        ).body['migrations']

    def wait_for_migration(self, server, statuses, timeout=20):
        """Wait until the server's (only) migration has one of ``statuses``;
        returns it."""
        deadline = time.monotonic() + timeout
        while True:
            migrations = self.migrations(server)
            if migrations and migrations[0]['status'] in statuses:
                return migrations[0]
            self.assertLess(time.monotonic(), deadline,
                            'migration never became %s: %s'
                            % ('/'.join(statuses), migrations))
            time.sleep(0.1)

    def newest_migration(self, server):
        return max(self.migrations(server), key=lambda m: m['id'])

    def wait_newest_migration(self, server, status, count, timeout=30,
                              fail_on=('error', 'failed')):
        """Wait for the server's ``count``-th migration (oldest first) to
        reach ``status``; fail at once if it reaches one of ``fail_on``."""
        deadline = time.monotonic() + timeout
        while True:
            migrations = sorted(self.migrations(server),
                                key=lambda m: m['id'])
            if len(migrations) >= count:
                newest = migrations[count - 1]
                if newest['status'] == status:
                    return newest
                if status not in fail_on:
                    self.assertNotIn(newest['status'], fail_on, newest)
            if time.monotonic() > deadline:
                self.fail('migration %d of %s did not become %s: %s'
                          % (count, server['id'], status, migrations))
            time.sleep(0.1)

    def wait_for_server(self, server, timeout=20, **expected):
        """Wait until the server's API fields (``status='ACTIVE'``,
        ``host='src'``, ``task_state=None``) match; returns it."""
        fields = {'host': 'OS-EXT-SRV-ATTR:host',
                  'task_state': 'OS-EXT-STS:task_state'}
        deadline = time.monotonic() + timeout
        while True:
            server = self.api.get_server(server['id'])
            actual = {k: server[fields.get(k, k)] for k in expected}
            if actual == expected:
                return server
            self.assertLess(time.monotonic(), deadline,
                            'server never reached %s; it is %s'
                            % (expected, actual))
            time.sleep(0.1)

    # -- state --------------------------------------------------------------

    def allocations(self, consumer):
        """Hosts on which placement holds resources for ``consumer`` (a
        server or migration uuid): ``{host: {resource class: amount}}``."""
        names = {rp['uuid']: rp['name'] for rp in self.placement.get(
            '/resource_providers').body['resource_providers']}
        return {names[rp]: alloc['resources'] for rp, alloc in
                self._get_allocations_by_server_uuid(consumer).items()}

    def migration_context(self, server):
        """The instance's MigrationContext from the database, or None."""
        return objects.MigrationContext.get_by_instance_uuid(
            context.get_admin_context(), server['id'])

    def pinned_cpus(self, host):
        """The pCPUs the host's compute node records as pinned."""
        node = objects.ComputeNode.get_by_nodename(
            context.get_admin_context(), host)
        topology = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        return sorted(cpu for cell in topology.cells
                      for cpu in cell.pinned_cpus)

    def instance_pinning(self, server):
        """The pCPUs the instance's NUMA topology says it is pinned to."""
        topology = objects.InstanceNUMATopology.get_by_instance_uuid(
            context.get_admin_context(), server['id'])
        return sorted(cpu for cell in topology.cells
                      for cpu in cell.cpu_pinning.values())

    def placement_pcpus(self, host):
        """PCPU usage placement records for ``host``'s provider."""
        usages = self._get_provider_usages(self.compute_rp_uuids[host])
        return usages.get('PCPU', 0)
