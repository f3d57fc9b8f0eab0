"""Common ground of faultdriver's functional tests: two real compute
services on fakelibvirt, faultdriver wrapping libvirt, faithful crashes.
"""

import os
import sys
import time
import typing

from nova import context
from nova import objects
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base

from faultdriver import fixture

#: The nova wheel installs api-paste.ini under <prefix>/etc/nova.
API_PASTE = os.path.join(sys.prefix, 'etc', 'nova', 'api-paste.ini')


class FaultTestBase(base.ServersTestBase,
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

    def setUp(self):
        self.flags(api_paste_config=API_PASTE, group='wsgi')
        self.faults = self.useFixture(
            fixture.FaultInjection(self, rules=self.RULES,
                                   patches={'*': self.PATCHES}))
        super().setUp()
        host_info = None
        if self.PINNED:
            self.flags(cpu_dedicated_set='0-3', cpu_shared_set=None,
                       group='compute')
            self.flags(vcpu_pin_set=None)
            host_info = fakelibvirt.HostInfo(
                cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1)
        for host in self.HOSTS:
            self.start_compute(hostname=host, host_info=host_info)

    # -- helpers ------------------------------------------------------------

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

    def run_periodic(self, host):
        self.computes[host].manager.update_available_resource(
            context.get_admin_context())


class Outcome(typing.NamedTuple):
    """Where a (live) migration left things; see assertOutcome."""

    migration: str                # migration status
    server: tuple                 # (status, task_state, host)
    server_alloc: tuple           # hosts placement charges the instance
    migration_alloc: tuple        # hosts it charges the migration consumer
    pinned: dict | None = None    # host -> pinned pCPUs (PINNED only)
    context: bool = False         # the instance has a migration_context


class LiveMigrationTestBase(base.LibvirtMigrationMixin, FaultTestBase):
    """FaultTestBase whose live migrations really run in fakelibvirt.

    Nova's own ``LibvirtMigrationMixin`` stubs ``migrateToURI3``: the guest
    appears on ``dest``'s fake hypervisor and the source's job completes.
    With ``LIBVIRT_JOB = 'fail'`` the job fails instead, so the libvirt
    driver takes its recover_method (``_rollback_live_migration``) path.
    """

    #: What the libvirt migration job does: 'complete' or 'fail'.
    LIBVIRT_JOB = 'complete'

    # The services the mixin migrates between, whatever restarts did.
    src = property(lambda self: self.computes['src'])
    dest = property(lambda self: self.computes['dest'])

    def live_migrate(self, server, host='dest'):
        self.server = server        # what the mixin's stub migrates
        super().live_migrate(server, host)

    def _migrate_stub(self, domain, destination, params, flags):
        if self.LIBVIRT_JOB == 'complete':
            return super()._migrate_stub(domain, destination, params, flags)
        self.src.driver._host.get_connection().lookupByUUIDString(
            self.server['id']).fail_job()

    def assertOutcome(self, expected, server, periodic_on=()):
        """Wait for ``expected``'s migration status and server fields, run
        the periodic on ``periodic_on``, then compare everything else."""
        migration = self.wait_for_migration(server, [expected.migration])
        status, task_state, host = expected.server
        self.wait_for_server(server, status=status, task_state=task_state,
                             host=host)
        # The source deletes the migration's allocation after 'completed'.
        allocations = {'server': sorted(expected.server_alloc),
                       'migration': sorted(expected.migration_alloc)}
        deadline = time.monotonic() + 10
        while True:
            actual = {
                'server': sorted(self.allocations(server['id'])),
                'migration': sorted(self.allocations(migration['uuid']))}
            if actual == allocations or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual(allocations, actual)
        for each in periodic_on:
            self.run_periodic(each)
        if self.PINNED:
            self.assertEqual(expected.pinned,
                             {h: self.pinned_cpus(h) for h in self.HOSTS})
        self.assertEqual(expected.context,
                         self.migration_context(server) is not None)
