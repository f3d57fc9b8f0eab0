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

import logging
import time
from unittest import mock
import urllib.parse

import fixtures

import nova.conf
from nova import context as nova_context
from nova import objects
from nova.tests.fixtures import compute_fault
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base

CONF = nova.conf.CONF
#: Migration statuses Nova never leaves by itself.
TERMINAL = (
    'completed', 'confirmed', 'reverted', 'error', 'failed', 'cancelled')


class TestSourceCrashInPostLiveMigrationUpdate(
        base.ServersTestBase, integrated_helpers.InstanceHelperMixin):
    """Regression test for finding F6 of faultdriver (scenario
    source-crash-in-post-live-migration-update).

    F6 (doc/findings.rst): the source nova-compute dies in the resource update
    that _post_live_migration runs once the guest is on dest
    (get_available_resource@src: the first hit is the start-up update, the
    second this one), before it sets the migration 'completed' and deletes the
    source's allocation. Restarted, src ignores the instance (it is on dest
    now): the migration stays 'running' for good, src stays charged for it, and
    dest's periodic treats the running migration as an incoming one, applying
    the instance's next migration context during the follow-up move
    (CPUPinningInvalid next to s2). Found by `faultdriver sweep
    live-migration`; the steps are the sweep's case.

    Variant stock: Nova 34 as it is: the migration stays 'running', src keeps
    the migration's PCPU allocation with nothing pinned, and dest's periodic
    fails during the follow-up move.
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
        self.compute_log = self.useFixture(fixtures.FakeLogger(
            name='nova.compute', level=logging.DEBUG))
        self.ctxt = nova_context.get_admin_context()
        for hostname in ('src', 'dest'):
            self.start_compute(hostname, host_info=fakelibvirt.HostInfo(
                cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1))
        self.flavor_id = self._create_flavor(
            vcpu=2, extra_spec={'hw:cpu_policy': 'dedicated'})
        # Rule 'get_available_resource: 1*off -> 1*crash' on src: nova-compute
        # dies at the first call of its driver's get_available_resource, before
        # it runs.
        self.faults.inject('src', 'get_available_resource', 'crash')

    def test_source_crash_in_post_live_migration_update(self):
        s1 = self._create_server(
            flavor_id=self.flavor_id, host='src', networks='none')
        s2 = self._create_server(
            flavor_id=self.flavor_id, host='dest', networks='none')
        self.api.post_server_action(s1['id'], {
            'os-migrateLive': {'host': 'dest', 'block_migration': 'auto'}})
        self._settle([(s1, 1), (s2, 0)])

        # What an operator does after the fault.
        self.recovery_began = self._periodic_errors_logged()
        self.faults.restart_dead(timeout=60)
        self._settle([(s1, 1), (s2, 0)], timeout=60)
        for _round in range(2):
            self._run_periodics()
        self._reset_stuck([s1, s2])

        self.assertEqual(
            1,
            self.faults.count(
                hostname='src',
                point='get_available_resource',
                action='crash'))
        s1 = self.admin_api.get_server(s1['id'])
        self.assertEqual('ACTIVE', s1['status'])
        self.assertEqual('dest', s1['OS-EXT-SRV-ATTR:host'])

        # FIXME(faultdriver): this is the bug (F6): the migrations should not
        # be left so.
        self.assertEqual(
            ['running'],
            [migration['status'] for migration in self._migrations(s1)])

        self.assertEqual(0, len(self._pinned_cpus('src')))
        self.assertEqual(2, self._placement_pcpus('src'))

        # FIXME(faultdriver): this is the bug (F6): after a periodic, the pCPUs
        # each host pins should be the PCPUs placement allocated there.
        self.assertEqual({'src': (0, 2)}, self._unaccounted(['src', 'dest']))

        # Invariant: every ACTIVE server should live-migrate away and back.
        self.assertEqual([], self._moves_again({'s1': s1}))

        # FIXME(faultdriver): this is the bug (F6): no resource tracker
        # periodic should fail after the recovery began.
        self.assertNotEqual(
            {}, self._failed_periodics_since(self.recovery_began))

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

    def _wait_for_nth_migration(self, server, index, status, timeout=30):
        """Wait for its index-th migration (from 1) to be ``status``."""
        def check():
            found = (self._migrations(server) + [None] * index)[index - 1]
            if found is None or found['status'] not in (
                    status, 'error', 'failed'):
                self.fail('migration %d of %s is not %s: %s'
                          % (index, server['id'], status, found))
            return found

        found = self._wait_for_assert(
            check, max_retries=max(1, int(timeout * 5)), sleep=0.2)
        if found['status'] != status:
            self.fail('migration %d of %s is not %s: %s'
                      % (index, server['id'], status, found['status']))
        return found

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

    def _periodic_errors_logged(self):
        """Per host, how often a periodic failed so far."""
        return {hostname: self.compute_log.output.count(
            'Error updating resources for node %s' % hostname)
            for hostname in sorted(self.computes)}

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

    def _moves_again(self, servers, timeout=60):
        """The moves that failed of live-migrating each ACTIVE server
        away and back, the source running its periodic during each.
        """
        failed = []
        for name, server in sorted(servers.items()):
            found = self.admin_api.get_server(server['id'])
            if found['status'] != 'ACTIVE':
                continue
            home = found['OS-EXT-SRV-ATTR:host']
            for leg, hostname in (('away', None), ('back', home)):
                try:
                    self._live_migrate_with_periodic(
                        server, hostname, timeout)
                except Exception as exc:
                    failed.append('%s (%s): %s' % (name, leg,
                                                   str(exc)[:200]))
                    break
        return failed

    def _live_migrate_with_periodic(self, server, hostname, timeout):
        source = self.admin_api.get_server(
            server['id'])['OS-EXT-SRV-ATTR:host']
        index = len(self._migrations(server)) + 1
        driver = self.computes[source].driver
        real = driver.live_migration

        def periodic_then_migrate(*args, **kwargs):
            self.faults.periodic(source)
            return real(*args, **kwargs)

        with mock.patch.object(driver, 'live_migration', autospec=True,
                               side_effect=periodic_then_migrate):
            self.api.post_server_action(server['id'], {
                'os-migrateLive': {'host': hostname,
                                   'block_migration': 'auto'}})
            self._wait_for_nth_migration(server, index, 'completed',
                                         timeout)
            self._wait_for_server_parameter(
                server, {'status': 'ACTIVE',
                         'OS-EXT-STS:task_state': None},
                max_retries=int(timeout * 2))

    def _failed_periodics_since(self, mark):
        """{host: periodics failed since ``mark``} (where some did)."""
        now = self._periodic_errors_logged()
        return {hostname: now[hostname] - mark.get(hostname, 0)
                for hostname in now
                if now[hostname] > mark.get(hostname, 0)}
