# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

import time
import urllib.parse

import fixtures

import nova.conf
from nova import context as nova_context
from nova import exception
from nova import objects
from nova.tests.fixtures import compute_fault
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base

CONF = nova.conf.CONF
#: Migration statuses Nova never leaves by itself.
TERMINAL = (
    'completed', 'confirmed', 'reverted', 'error', 'failed', 'cancelled')


class TestPostLiveMigrationAtDestinationRaiseBfv(
        base.ServersTestBase, integrated_helpers.InstanceHelperMixin):
    """Regression test for finding F5 of faultdriver (scenario
    post-live-migration-at-destination-raise-bfv).

    F5 (doc/findings.rst): the destination's driver
    post_live_migration_at_destination raises MigrationError (rule
    post_live_migration_at_destination.before: 1*raise(MigrationError) on
    dest). The source records the server on dest but skips deleting the
    migration's allocation on src: after recovery src is charged for pCPUs
    nothing pins there. Found by faultdriver sweep live-migration-bfv (--points
    post_live_migration_at_destination --actions raise): the server boots from
    a volume and has a port.
    """

    ADMIN_API = True
    microversion = 'latest'
    ADDITIONAL_FILTERS = ['NUMATopologyFilter']
    # Casts stay casts, as in a cloud: nothing waits for one.
    CAST_AS_CALL = False

    def setUp(self):
        super().setUp()
        self.faults = self.useFixture(
            compute_fault.ComputeFaultFixture(self))
        self.flags(
            cpu_dedicated_set='0-3', cpu_shared_set=None,
            group='compute')
        self.flags(vcpu_pin_set=None)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',
            self._migrate_stub))
        self.ctxt = nova_context.get_admin_context()
        for hostname in ('src', 'dest'):
            self.start_compute(hostname, host_info=fakelibvirt.HostInfo(
                cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1))
        self.flavor_id = self._create_flavor(
            vcpu=2, extra_spec={'hw:cpu_policy': 'dedicated'})
        # Rule 'post_live_migration_at_destination.before:
        # 1*raise(MigrationError)' on dest: the first call of its driver's
        # post_live_migration_at_destination raises MigrationError, before it
        # runs.
        self.useFixture(
            fixtures.MockPatchObject(
                self.computes['dest'].driver,
                'post_live_migration_at_destination',
                autospec=True,
                side_effect=exception.MigrationError(
                    message='injected by the test')))

    def test_post_live_migration_at_destination_raise_bfv(self):
        s1 = self._boot_with('src', self.flavor_id, volume=True, port=True)
        s2 = self._create_server(
            flavor_id=self.flavor_id, host='dest', networks='none')
        self.api.post_server_action(s1['id'], {
            'os-migrateLive': {'host': 'dest', 'block_migration': 'auto'}})
        self._settle([(s1, 1), (s2, 0)])

        # What an operator does after the fault.
        for _round in range(2):
            self._run_periodics()
        self._reset_stuck([s1, s2])

        # FIXME(faultdriver): this is the bug (F5): after a periodic, the pCPUs
        # each host pins should be the PCPUs placement allocated there.
        self.assertEqual({'src': (0, 2)}, self._unaccounted(['src', 'dest']))

    def _migrate_stub(self, domain, destination, params, flags):
        """Complete a live migration in fakelibvirt, either way."""
        hostname = urllib.parse.urlparse(destination).hostname
        self.computes[hostname].driver._host.get_connection().createXML(
            params['destination_xml'],
            'fake-createXML-doesnt-care-about-flags')
        domain.complete_job()

    def _migrations(self, server):
        """The server's migrations, oldest first."""
        return sorted(self.admin_api.api_get(
            '/os-migrations?instance_uuid=%s' % server['id']
        ).body['migrations'], key=lambda migration: migration['id'])

    def _boot_with(self, hostname, flavor_id, volume=False, port=False):
        """Boot on ``hostname`` from a volume (a flavor with no local
        disk: fakelibvirt has no disk file) and/or with a port.
        """
        if volume:
            flavor = self.admin_api.api_get(
                '/flavors/%s' % flavor_id).body['flavor']
            specs = self.admin_api.api_get(
                '/flavors/%s/os-extra_specs' % flavor_id).body['extra_specs']
            flavor_id = self._create_flavor(
                memory_mb=flavor['ram'], vcpu=flavor['vcpus'], disk=0,
                ephemeral=0, extra_spec=specs or None)
        body = self._build_server(
            flavor_id=flavor_id, host=hostname,
            networks=([{'uuid': self.neutron.network_1['id']}] if port
                      else 'none'))
        if volume:
            body['imageRef'] = ''
            body['block_device_mapping_v2'] = [{
                'boot_index': 0, 'uuid': self.cinder.IMAGE_BACKED_VOL,
                'source_type': 'volume', 'destination_type': 'volume'}]
        return self._wait_for_state_change(
            self.admin_api.post_server({'server': body}), 'ACTIVE')

    def _pinned_cpus(self, hostname):
        """The pCPUs the compute node of ``hostname`` has pinned."""
        node = objects.ComputeNode.get_by_nodename(self.ctxt, hostname)
        numa = objects.NUMATopology.obj_from_db_obj(node.numa_topology)
        return sorted(cpu for cell in numa.cells
                      for cpu in cell.pinned_cpus)

    def _placement_pcpus(self, hostname):
        """The PCPUs placement has allocated on ``hostname``."""
        return self._get_provider_usages(
            self.compute_rp_uuids[hostname]).get('PCPU', 0)

    def _settle(self, moves, timeout=30):
        """Wait (never failing) until each move asked ([(server, moves)])
        ended or waits for someone, or nothing changed for 3 RPC timeouts.
        """
        over = TERMINAL + ('finished', 'done')
        last = {'state': None, 'since': time.monotonic()}

        def check():
            state = []
            for server, _asked in moves:
                found = self.admin_api.get_server(server['id'])
                state.append(([m['status'] for m in self._migrations(server)],
                              found['status'], found['OS-EXT-STS:task_state'],
                              found['OS-EXT-SRV-ATTR:host']))
            if state != last['state']:
                last.update(state=state, since=time.monotonic())
            elif (time.monotonic() - last['since'] >=
                    3 * CONF.rpc_response_timeout):
                return
            if not all(len(found[0]) >= asked and
                       all(status in over for status in found[0])
                       for found, (_server, asked) in zip(state, moves)):
                self.fail('moves not settled: %s' % state)

        try:
            self._wait_for_assert(
                check, max_retries=max(1, int(timeout * 2)))
        except AssertionError:
            pass    # not settled in time: the assertions say where

    def _reset_stuck(self, servers):
        """Reset each server whose task state stayed set, as admins do."""
        for server in servers:
            found = self.admin_api.get_server(server['id'])
            if found['OS-EXT-STS:task_state']:
                state = 'error' if found['status'] == 'ERROR' else 'active'
                self.admin_api.post_server_action(
                    server['id'], {'os-resetState': {'state': state}})

    def _unaccounted(self, hostnames):
        """{host: (pinned, placement PCPU)} where, after a periodic,
        they differ.
        """
        usage = {}
        for hostname in hostnames:
            self.faults.periodic(hostname)
            usage[hostname] = (len(self._pinned_cpus(hostname)),
                               self._placement_pcpus(hostname))
        return {hostname: found for hostname, found in usage.items()
                if found[0] != found[1]}
