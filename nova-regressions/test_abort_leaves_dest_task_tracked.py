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

import urllib.parse

import fixtures

from nova.tests import fixtures as nova_fixtures
from nova.tests.fixtures import compute_fault
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base


class TestAbortLeavesDestTaskTracked(
        base.ServersTestBase, integrated_helpers.InstanceHelperMixin):
    """Regression test for finding F19 of faultdriver (scenario
    abort-leaves-dest-task-tracked).

    F19 (doc/findings.rst) with no crash: an admin aborts a live migration of
    an unpinned server while dest prepares (pre_live_migration held). The
    source rolls back once dest returns, but with a shared instance path and
    nothing NUMA-related to undo on dest (_live_migration_cleanup_flags) it
    never calls dest's rollback_live_migration_at_destination, the only call
    that would end the 'live_migration_at_dest' task dest recorded for its
    graceful shutdown. The migration ends cancelled, s1 ACTIVE on src; dest
    still tracks the task after its periodic: every later graceful stop of dest
    waits out the manager's whole wait for it.

    Variant stock: Nova 34 as it is: dest tracks the aborted live migration's
    task for good.
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
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',
            self._migrate_stub))
        for hostname in ('src', 'dest'):
            self.start_compute(hostname, host_info=fakelibvirt.HostInfo(
                cpu_nodes=2, cpu_sockets=1, cpu_cores=2, cpu_threads=2))
        self.flavor_id = self.api.get_flavors()[0]['id']

    def test_abort_leaves_dest_task_tracked(self):
        s1 = self._create_server(
            flavor_id=self.flavor_id, host='src', networks='none')

        # Rule 'pre_live_migration: 1*hang(60, held)' on dest: the first call
        # of its driver's pre_live_migration is held until released.
        held = self.useFixture(nova_fixtures.InterceptMethodFixture(
            self.computes['dest'].manager.driver, 'pre_live_migration',
            timeout=60))
        self.api.post_server_action(s1['id'], {
            'os-migrateLive': {'host': 'dest', 'block_migration': 'auto'}})
        self.assertTrue(held.started.wait(30))
        self._wait_for_nth_migration(s1, 1, 'preparing')
        self.admin_api.delete_migration(
            s1['id'], self._migrations(s1)[0]['id'])
        # The API casts the abort to the source: wait until it was handled
        # (exported as a wait for its success).
        self._wait_for_instance_action_event(
            s1, 'live_migration_cancel', 'compute_live_migration_abort',
            'Success')
        held.proceed.set()
        self._wait_for_nth_migration(s1, 1, 'cancelled')
        s1 = self._wait_for_server_parameter(
            s1, {
                'status': 'ACTIVE',
                'OS-EXT-SRV-ATTR:host': 'src',
                'OS-EXT-STS:task_state': None,
            },
            max_retries=60)
        self.faults.periodic('dest')

        self.assertEqual(
            ['cancelled'],
            [migration['status'] for migration in self._migrations(s1)])
        s1 = self.admin_api.get_server(s1['id'])
        self.assertEqual('ACTIVE', s1['status'])
        self.assertEqual('src', s1['OS-EXT-SRV-ATTR:host'])
        self.assertIsNone(s1['OS-EXT-STS:task_state'])

        # FIXME(faultdriver): this is the bug (F19): no running nova-compute
        # should track a task for its graceful shutdown once the steps ended.
        self.assertNotEqual({}, self._tracked_tasks(5))

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

    def _tracked_tasks(self, grace):
        """The tasks each running nova-compute still tracks for its
        graceful shutdown ({hostname: ['name (instance uuid)']}), once
        the ones ending now had ``grace`` seconds to end: a task
        tracked for good makes every later graceful stop of its host
        wait out the whole timeout.
        """
        tracked = {}

        def check():
            tracked.clear()
            for hostname, compute in self.computes.items():
                tasks = compute.manager._in_progress_tasks.values()
                if hostname not in self.faults.crashed and tasks:
                    tracked[hostname] = sorted(
                        '%s (%s)' % (task['name'], task['instance_uuid'])
                        for task in tasks)
            self.assertEqual({}, tracked)

        try:
            self._wait_for_assert(
                check, max_retries=max(1, int(grace * 2)))
        except AssertionError:
            pass    # tracked for good
        return tracked
