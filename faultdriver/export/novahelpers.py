"""The helper methods an exported Nova functional test may need, as real
Python: linted, unit-tested, and copied into the exported module by
:mod:`faultdriver.export.helpers` (which reads each method's source with
:func:`inspect.getsource`).

Each method uses Nova's test means only (its libvirt functional base,
``InstanceHelperMixin``, fixtures and objects) and the names this
module defines at its top, which the exported module defines alike
(``CONF``, ``TERMINAL``, the imports of
``faultdriver.export.module.IMPORTS``), and ``self.faults``, the
proposed Nova fixture (:mod:`faultdriver.export.novafixture`): an
exported test imports nothing of faultdriver.  :class:`NovaHelpers` is
a mixin of such a test class; a test of faultdriver may also use it on
an object that has the attributes a method reads.  Waits are Nova's
``_wait_for_assert`` (``InstanceHelperMixin``), not loops of their own.

The wait helpers' ``timeout=30`` defaults are the scenario contract's
``backend.WAIT_TIMEOUT`` written out, not named: the copied text runs in
Nova's tree alone.  tests/unit/test_scenario_backend.py holds every such
default equal to the contract's constant.
"""

import threading
import time
from unittest import mock
import urllib.parse

import oslo_messaging as messaging

from nova.compute import rpcapi as compute_rpcapi
import nova.conf
from nova import exception
from nova import objects

from faultdriver.scenario import statuses

CONF = nova.conf.CONF
#: Migration statuses Nova never leaves by itself (the exported module
#: writes the tuple out).
TERMINAL = statuses.TERMINAL


class NovaHelpers:
    """The helpers, as methods of the exported test class."""

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

    def _pinning(self, server):
        """The pCPUs the server's NUMA topology pins it to."""
        try:
            numa = objects.InstanceNUMATopology.get_by_instance_uuid(
                self.ctxt, server['id'])
        except exception.NumaTopologyNotFound:
            return []
        if numa is None:
            return []
        return sorted(cpu for cell in numa.cells
                      for cpu in cell.cpu_pinning.values())

    def _boot_pinned_as(self, hostname, flavor_id, other):
        """Boot on ``hostname`` (up to 4 tries) pinned as ``other``."""
        wanted = self._pinning(other)
        misses = []
        server = self._create_server(
            flavor_id=flavor_id, host=hostname, networks='none')
        while self._pinning(server) != wanted:
            self.assertLess(len(misses), 3, 'no server on %s got the '
                            'pCPUs %s' % (hostname, wanted))
            misses.append(server)
            server = self._create_server(
                flavor_id=flavor_id, host=hostname, networks='none')
        for miss in misses:
            self._delete_server(miss)
        return server

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

    def _failed_periodics(self, hostname):
        """How many periodics the test ran on ``hostname`` failed."""
        return len([failed for host, failed in self.faults.periodics
                    if host == hostname and failed])

    def _watch_rpc(self, method):
        """Set ``self.gave_up[method]`` when a call of it times out."""
        real = getattr(compute_rpcapi.ComputeAPI, method)
        gave_up = self.gave_up[method] = threading.Event()

        def watched(*args, **kwargs):
            try:
                return real(*args, **kwargs)
            except messaging.MessagingTimeout:
                gave_up.set()
                raise

        self.stub_out('nova.compute.rpcapi.ComputeAPI.' + method,
                      watched)

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

    def _decide_resizes(self, moves, decision, timeout=30):
        """Confirm or revert each resize waiting for it; wait (bounded,
        never failing) until the computes handled it.
        """
        action, last = {
            'confirm': ('confirmResize', 'compute_confirm_resize'),
            'revert': ('revertResize', 'compute_finish_revert_resize'),
        }[decision]
        for server, _asked in moves:
            if self.admin_api.get_server(server['id'])['status'] != (
                    'VERIFY_RESIZE'):
                continue
            self.api.post_server_action(server['id'], {action: None})
            try:
                self._wait_for_assert(lambda: self.assertTrue(
                    self._decision_handled(server, action, last)),
                    max_retries=max(1, int(timeout * 2)))
            except AssertionError:
                pass    # not handled in time: the assertions say how

    def _decision_handled(self, server, action, last):
        """Its migrations ended and ``action``'s ``last`` event (or one
        that failed) finished; a dead compute's never finishes.
        """
        if not all(migration['status'] in TERMINAL
                   for migration in self._migrations(server)):
            return False
        if self.faults.crashed:
            return True
        newest = [found for found in self.admin_api.get_instance_actions(
            server['id']) if found['action'] == action]
        if not newest:
            return False
        events = self.admin_api.get_instance_action_details(
            server['id'], newest[0]['request_id'])['events']
        return any(event['finish_time'] and (
            event['event'] == last or event['result'] == 'Error')
            for event in events)

    def _periodic_errors_logged(self):
        """Per host, how often a periodic failed so far."""
        return {hostname: self.compute_log.output.count(
            'Error updating resources for node %s' % hostname)
            for hostname in sorted(self.computes)}

    def _periodics_while_held(self):
        """Start every compute's periodic while a hang holds a call, as
        its timer would, each in a thread, and give them together the
        quiet time of _settle (three RPC timeouts) to end: one may wait
        for a lock the held call has, and runs once that is released, as
        in nova-compute.  The threads.
        """
        threads = [threading.Thread(target=self.faults.periodic,
                                    args=(hostname,), daemon=True)
                   for hostname in sorted(self.computes)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 3 * CONF.rpc_response_timeout
        for thread in threads:
            thread.join(max(0, deadline - time.monotonic()))
        return threads

    def _reset_stuck(self, servers):
        """Reset each server whose task state stayed set, as admins do."""
        for server in servers:
            found = self.admin_api.get_server(server['id'])
            if found['OS-EXT-STS:task_state']:
                state = 'error' if found['status'] == 'ERROR' else 'active'
                self.admin_api.post_server_action(
                    server['id'], {'os-resetState': {'state': state}})

    def _unfinished_migrations(self, servers):
        """The migrations of ``servers`` ({name: server}) not ended."""
        return ['%s#%s %s' % (name, migration['id'], migration['status'])
                for name, server in sorted(servers.items())
                for migration in self._migrations(server)
                if migration['status'] not in TERMINAL]

    def _unsettled_servers(self, servers):
        """The servers of ``servers`` ({name: server}) that are not
        ACTIVE, SHUTOFF or ERROR with no task state.
        """
        unsettled = []
        for name, server in sorted(servers.items()):
            found = self.admin_api.get_server(server['id'])
            if (found['status'] not in ('ACTIVE', 'SHUTOFF', 'ERROR') or
                    found['OS-EXT-STS:task_state']):
                unsettled.append('%s %s/%s' % (
                    name, found['status'], found['OS-EXT-STS:task_state']))
        return unsettled

    def _unsettled_servers_but(self, servers, designed):
        """``_unsettled_servers`` but those ``designed`` names as Nova's
        rollback of the test's fault leaves them (a failed unshelve's
        ``'s1 SHELVED_OFFLOADED/None'``).
        """
        return [entry for entry in self._unsettled_servers(servers)
                if entry not in designed]

    def _shared_pcpus(self, servers):
        """The pCPUs of a host pinned to two of ``servers``."""
        owners = {}
        for name, server in sorted(servers.items()):
            hostname = self.admin_api.get_server(
                server['id'])['OS-EXT-SRV-ATTR:host']
            for cpu in self._pinning(server):
                owners.setdefault((hostname, cpu), []).append(name)
        return {key: names for key, names in owners.items()
                if len(names) > 1}

    def _misplaced_allocations(self, servers):
        """What placement holds that the servers ({name: server})
        and their migrations do not account for, every resource class:
        a server's consumer belongs on its host and on both ends of a
        move in progress, a migration's only while it is in progress,
        no other consumer anywhere.
        """
        owner, going, migrations = {}, {}, {}
        for name, server in sorted(servers.items()):
            found = self.admin_api.get_server(server['id'])
            owner[server['id']] = (name, found['OS-EXT-SRV-ATTR:host'])
            for migration in self._migrations(server):
                migrations[migration['uuid']] = (name, migration)
                if migration['status'] not in TERMINAL:
                    going.setdefault(name, set()).update((
                        migration['source_compute'],
                        migration['dest_compute']))
        misplaced = []
        for hostname in sorted(self.computes):
            consumers = self.placement.get(
                '/resource_providers/%s/allocations' %
                self._get_provider_uuid_by_host(hostname)
            ).body['allocations']
            for consumer in sorted(consumers):
                if consumer in owner:
                    name, host = owner[consumer]
                    if hostname == host or hostname in going.get(
                            name, ()):
                        continue
                elif consumer in migrations:
                    _name, migration = migrations[consumer]
                    if (migration['status'] not in TERMINAL and
                            hostname in (migration['source_compute'],
                                         migration['dest_compute'])):
                        continue
                misplaced.append((hostname, consumer))
            for consumer, (name, host) in sorted(owner.items()):
                if host == hostname and consumer not in consumers:
                    misplaced.append((hostname, name))
        return misplaced

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
