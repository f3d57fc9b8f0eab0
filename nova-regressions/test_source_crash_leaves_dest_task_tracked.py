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

"""Regression test for finding F19 of faultdriver (scenario
source-crash-leaves-dest-task-tracked).

F19 (doc/findings.rst): the source nova-compute dies in its driver's
live_migration, after dest's pre_live_migration returned. Restarted, src errors
the migration and leaves s1 ACTIVE on src, but nothing calls dest, whose
manager still tracks the move's 'live_migration_at_dest' task after its
periodic: every later graceful stop of dest waits out the manager's whole wait
for it.

Variant stock: Nova 34 as it is: dest tracks the live migration's task for
good.

The assertions marked FIXME show the bug; faultdriver export --fixed writes the
form that asserts the correct state.

A crash of nova-compute cannot be expressed faithfully with Nova's test
fixtures (its services share one process): the dying service stops its RPC
servers and heartbeat and unwinds with ComputeDied, a BaseException none of
Nova's handlers catches; callers time out after rpc_response_timeout.
"""

import logging
import time
import urllib.parse

import fixtures

from nova import context as nova_context
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional import integrated_helpers
from nova.tests.functional.libvirt import base


class ComputeDied(BaseException):
    """Unwinds the thread in which a compute service died.

    A BaseException, not an Exception: Nova's error handlers catch
    Exception, and none of them runs in a killed process.
    """


class TestSourceCrashLeavesDestTaskTracked(
        base.ServersTestBase, integrated_helpers.InstanceHelperMixin):
    """F19 (doc/findings.rst): the source nova-compute dies in its driver's
    live_migration, after dest's pre_live_migration returned. Hosts src, dest,
    pinned flavors.
    """

    ADMIN_API = True
    microversion = 'latest'
    ADDITIONAL_FILTERS = ['NUMATopologyFilter']
    # Casts stay casts: a compute that dies must not turn them into
    # calls its caller waits for.
    CAST_AS_CALL = False

    def setUp(self):
        super().setUp()
        # Calls to a dead compute time out in seconds.
        self.flags(rpc_response_timeout=3, long_rpc_timeout=6)
        # A dead compute shows down within seconds, as it would once
        # service_down_time passed.
        self.flags(report_interval=1, service_down_time=3)
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
        self.periodics = []
        self.fired = []
        self.crashed = {}
        for hostname in ('src', 'dest'):
            self.start_compute(hostname, host_info=fakelibvirt.HostInfo(
                cpu_nodes=1, cpu_sockets=1, cpu_cores=4, cpu_threads=1))
        self.flavor_id = self._create_flavor(
            vcpu=2, extra_spec={'hw:cpu_policy': 'dedicated'})
        # Rule 'live_migration: 1*crash' on src: nova-compute dies at the first
        # call of its driver's live_migration, before it runs.
        self._fault('src', 'live_migration', 'crash')

    def test_source_crash_leaves_dest_task_tracked(self):
        s1 = self._create_server(
            flavor_id=self.flavor_id, host='src', networks='none')

        self.api.post_server_action(s1['id'], {
            'os-migrateLive': {'host': 'dest', 'block_migration': 'auto'}})

        self._wait_for_fault('src', 'live_migration')

        self._restart_compute('src')

        self._wait_for_service('src', 'up')

        self._wait_for_nth_migration(s1, 1, 'error')

        s1 = self._wait_for_server_parameter(
            s1, {
                'status': 'ACTIVE',
                'OS-EXT-SRV-ATTR:host': 'src',
                'OS-EXT-STS:task_state': None,
            },
            max_retries=60)

        self._periodic('dest')

        self.assertEqual(
            ['error'],
            [migration['status'] for migration in self._migrations(s1)])

        s1 = self.admin_api.get_server(s1['id'])
        self.assertEqual('ACTIVE', s1['status'])
        self.assertEqual('src', s1['OS-EXT-SRV-ATTR:host'])
        self.assertIsNone(s1['OS-EXT-STS:task_state'])

        # FIXME(faultdriver): this is the bug (F19): no running nova-compute
        # should track a task for its graceful shutdown once the steps ended.
        self.assertNotEqual({}, self._tracked_tasks(5))

    def _migrate_stub(self, domain, destination, params, flags):
        """Complete a live migration in fakelibvirt in either direction
        (LibvirtMigrationMixin's stub knows one): the guest appears on
        the host the migration URI names and the source's job ends.
        """
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
        """Wait until the server's index-th migration (1: the oldest) is
        in ``status``; fail at once if it ends error or failed instead.
        """
        deadline = time.monotonic() + timeout
        statuses = []
        while time.monotonic() < deadline:
            migrations = self._migrations(server)
            statuses = [migration['status'] for migration in migrations]
            if len(migrations) >= index:
                if statuses[index - 1] == status:
                    return migrations[index - 1]
                if (statuses[index - 1] in ('error', 'failed') and
                        status not in ('error', 'failed')):
                    break
            time.sleep(0.2)
        self.fail('migration %d of %s is not %s: %s'
                  % (index, server['id'], status, statuses))

    def _wait_for_service(self, hostname, state, timeout=30):
        """Wait until the compute service of ``hostname`` is up or
        down.
        """
        self._wait_for_service_parameter(
            hostname, 'nova-compute', {'state': state},
            max_retries=int(timeout * 2))

    def _periodic(self, hostname):
        """Run the resource tracker periodic of ``hostname`` now, as its
        timer would; whether it logged an error.
        """
        marker = 'Error updating resources for node %s' % hostname
        before = self.compute_log.output.count(marker)
        self.computes[hostname].manager.update_available_resource(
            self.ctxt)
        failed = self.compute_log.output.count(marker) > before
        self.periodics.append((hostname, failed))
        return failed

    def _die(self, hostname):
        """nova-compute on ``hostname`` dies in the calling thread, as a
        killed process would: its RPC servers take no more messages and
        never reply (callers time out), its timers (the heartbeat) stop,
        and the thread unwinds with ComputeDied, which none of Nova's
        error handlers catches.
        """
        compute = self.computes[hostname]
        self.crashed[hostname] = time.monotonic()
        for server in (compute.rpcserver, compute.rpcserver_alt):
            if server is not None:
                server.stop()
        compute.tg.stop_timers()
        raise ComputeDied(hostname)

    def _fault(self, hostname, point, action, skip=0, after=False,
               error=None):
        """Make the (skip + 1)-th call of ``point`` on ``hostname`` fail:
        a method of its driver or, ``tracker.<method>``, of its resource
        tracker.  ``action`` crash: the compute dies (_die); raise: the
        call raises ``error``.  Before the real call runs or, ``after``,
        once it returned.
        """
        manager = self.computes[hostname].manager
        target = manager.rt if point.startswith('tracker.') else (
            manager.driver)
        method = point.rpartition('.')[2]
        real = getattr(target, method)
        calls = []

        def failing(*args, **kwargs):
            calls.append(args)
            if len(calls) != skip + 1:
                return real(*args, **kwargs)
            if after:
                real(*args, **kwargs)
            self.fired.append((hostname, point, action))
            if action == 'raise':
                raise error
            self._die(hostname)

        self.useFixture(fixtures.MockPatchObject(
            target, method, autospec=True, side_effect=failing))

    def _fired(self, hostname=None, point=None, action=None):
        """How many of the test's faults fired, of those that match."""
        return len([fired for fired in self.fired
                    if hostname in (None, fired[0]) and
                    point in (None, fired[1]) and
                    action in (None, fired[2])])

    def _wait_for_fault(self, hostname, point, timeout=30):
        """Wait until the test's fault at ``point`` on ``hostname``
        fired.
        """
        deadline = time.monotonic() + timeout
        while not self._fired(hostname, point):
            if time.monotonic() > deadline:
                self.fail('no fault fired at %s on %s' % (point, hostname))
            time.sleep(0.2)

    def _restart_compute(self, hostname):
        """Start nova-compute on ``hostname`` again on the same
        hypervisor.  A dead one is not stopped first (its thread never
        returned: a graceful stop would wait for it); the rest is what
        restart_compute_service does after its stop().
        """
        if hostname not in self.crashed:
            return self.restart_compute_service(hostname)
        compute = self.computes.pop(hostname)
        self.compute_rp_uuids.pop(hostname)
        del self.crashed[hostname]
        cell_name = self.host_mappings[hostname].cell_mapping.name
        self.start_compute(hostname, cell_name=cell_name,
                           connection=compute.driver._get_connection())
        return self.computes[hostname]

    def _tracked_tasks(self, grace):
        """The tasks each running nova-compute still tracks for its
        graceful shutdown ({hostname: ['name (instance uuid)']}), once
        the ones ending now had ``grace`` seconds to end: a task
        tracked for good makes every later graceful stop of its host
        wait out the whole timeout.
        """
        deadline = time.monotonic() + grace
        while True:
            tracked = {}
            for hostname, compute in self.computes.items():
                tasks = compute.manager._in_progress_tasks.values()
                if hostname not in self.crashed and tasks:
                    tracked[hostname] = sorted(
                        '%s (%s)' % (task['name'], task['instance_uuid'])
                        for task in tasks)
            if not tracked or time.monotonic() > deadline:
                return tracked
            time.sleep(0.5)
