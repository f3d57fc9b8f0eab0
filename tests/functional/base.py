"""Common ground of faultdriver's functional tests: two real compute
services on fakelibvirt, faultdriver wrapping libvirt, faithful crashes.
"""

import os
import sys
import time

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
    #: 4 dedicated pCPUs in one NUMA cell per host, pinned flavors.
    PINNED = False
    HOSTS = ('src', 'dest')

    def setUp(self):
        self.flags(api_paste_config=API_PASTE, group='wsgi')
        self.faults = self.useFixture(
            fixture.FaultInjection(self, rules=self.RULES))
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

    def pinned_cpus(self, host):
        """The pCPUs the host's compute node records as pinned."""
        from nova import context
        from nova import objects
        node = objects.ComputeNode.get_by_nodename(
            context.get_admin_context(), host)
        topology = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        return sorted(cpu for cell in topology.cells
                      for cpu in cell.pinned_cpus)

    def run_periodic(self, host):
        from nova import context
        self.computes[host].manager.update_available_resource(
            context.get_admin_context())
