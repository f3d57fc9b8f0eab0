"""What the step tests of cold migration, resize and evacuation observe.

One mixin reads the outcome of a move the way an operator would see it:
the server (status, task state, host), its newest migration, placement
allocations of the instance and of the migration consumer per host, the
pCPUs each compute node records as pinned, and the guests on each fake
hypervisor.  Expected values are written with :data:`OLD` and :data:`NEW`
(the flavor before and after the move) so one table row reads the same
for a cold migration (2 pCPUs to 2) and a resize (2 pCPUs to 3).
"""

from nova.tests.fixtures import libvirt as fakelibvirt

from faultdriver import waiting

#: The flavor before the move, and after it.
OLD, NEW = 'old', 'new'
_VCPUS = {'migration': {OLD: 2, NEW: 2}, 'resize': {OLD: 2, NEW: 3}}


class MoveStepsMixin:
    """Mix in before ``base.FaultTestBase``; set OPERATION."""

    PINNED = True
    #: 'migration' (cold migration) or 'resize' (2 to 3 pinned pCPUs).
    OPERATION = 'migration'

    def setUp(self):
        super().setUp()
        self.stub_disk_copy()

    # -- expected values ------------------------------------------------

    def resources(self, flavor):
        return {'DISK_GB': 20, 'MEMORY_MB': 2048,
                'PCPU': _VCPUS[self.OPERATION][flavor]}

    def cpus(self, flavor):
        """The pCPUs a 1-cell host pins for ``flavor`` (None: none)."""
        if flavor is None:
            return []
        return list(range(_VCPUS[self.OPERATION][flavor]))

    # -- driving ----------------------------------------------------------

    def boot(self, host='src', vcpus=_VCPUS['resize'][OLD]):
        """A server with ``vcpus`` pinned pCPUs on ``host`` (polls faster
        than Nova's helper, which sleeps half a second between looks)."""
        flavor = self._create_flavor(
            vcpu=vcpus, extra_spec={'hw:cpu_policy': 'dedicated'})
        server = self.admin_api.post_server({'server': self._build_server(
            flavor_id=flavor, networks='none', host=host)})
        self.wait_server(server, ('ACTIVE', None, host))
        return server

    def start_move(self, server):
        if self.OPERATION == 'resize':
            flavor = self._create_flavor(
                vcpu=_VCPUS['resize'][NEW],
                extra_spec={'hw:cpu_policy': 'dedicated'})
            body = {'resize': {'flavorRef': flavor}}
        else:
            body = {'migrate': None}
        self.api.post_server_action(server['id'], body)

    def finish_move(self, server, how):
        """``how``: 'confirm' or 'revert'."""
        self.api.post_server_action(
            server['id'], {how + 'Resize': None})

    def poll(self, read, expected, timeout=20.0, what='value'):
        """Wait until ``read()`` returns ``expected``; fail the test
        showing what it returned last."""
        last = []

        def matches():
            last[:] = [read()]
            return last[0] == expected
        waiting.until(matches, timeout, lambda: '%s is %r, not %r' % (
            what, last[0], expected), interval=0.1, error=AssertionError)
        return last[0]

    # -- reading ----------------------------------------------------------

    def server_state(self, server):
        found = self.api.get_server(server['id'])
        return (found['status'], found['OS-EXT-STS:task_state'],
                found['OS-EXT-SRV-ATTR:host'])

    def migration(self, server):
        """The server's newest migration, None before there is one."""
        return max(self.migrations(server), key=lambda m: m['id'],
                   default=None)

    def wait_server(self, server, state, timeout=20.0):
        return self.poll(lambda: self.server_state(server), state, timeout,
                         'server (status, task, host)')

    def wait_migration(self, server, status, timeout=20.0):
        return self.poll(lambda: (self.migration(server) or {}).get('status'),
                         status, timeout, 'migration status')

    def held_by(self, consumer):
        """Resources held by ``consumer`` per host name."""
        hosts = {uuid: host for host, uuid in self.compute_rp_uuids.items()}
        found = self.placement.get(
            '/allocations/%s' % consumer).body['allocations']
        return {hosts.get(rp, rp): alloc['resources']
                for rp, alloc in found.items()}

    def guests(self, host):
        """Instance UUIDs defined on ``host``'s fake hypervisor."""
        connection = self.computes[host].driver._host.get_connection()
        return sorted(domain.UUIDString() for domain in
                      connection.listAllDomains(
                          fakelibvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE |
                          fakelibvirt.VIR_CONNECT_LIST_DOMAINS_INACTIVE))

    def event_finished(self, server, event_name):
        """Whether the newest action's ``event_name`` event finished (None
        if it has not started)."""
        action = self.api.get_instance_actions(server['id'])[0]
        events = self.api.get_instance_action_details(
            server['id'], action['request_id'])['events']
        for event in events:
            if event['event'] == event_name:
                return event['finish_time'] is not None
        return None

    def wait_event(self, server, event_name, timeout=20.0):
        """Wait until the step's handlers, ``finally:`` included, ran."""
        self.poll(lambda: self.event_finished(server, event_name), True,
                  timeout, '%s finished' % event_name)

    # -- asserting --------------------------------------------------------

    def outcome(self, server):
        """Everything an outcome is made of, in the shape it is expected."""
        migration = self.migration(server)
        return {
            'server': self.server_state(server),
            'migration': migration['status'],
            'instance allocations': self.held_by(server['id']),
            'migration allocations': self.held_by(migration['uuid']),
            'pinned': {h: self.pinned_cpus(h) for h in self.HOSTS},
        }

    def expect(self, state, migration, instance_allocs, migration_allocs,
               pinned):
        """The observation an outcome stands for, OLD/NEW resolved."""
        return {
            'server': state,
            'migration': migration,
            'instance allocations': {h: self.resources(f)
                                     for h, f in instance_allocs.items()},
            'migration allocations': {h: self.resources(f)
                                      for h, f in migration_allocs.items()},
            'pinned': {h: self.cpus(pinned.get(h)) for h in self.HOSTS},
        }

    def assert_outcome(self, server, outcome, periodic=()):
        """Run the periodic on the live ``periodic`` hosts, then compare
        everything at once (one diff shows the whole state).

        ``outcome``: (server (status, task, host), migration status,
        {host: flavor} of the instance, {host: flavor} of the migration
        consumer, {host: flavor pinned}).
        """
        for host in periodic:
            self.run_periodic(host)
        self.assertEqual(self.expect(*outcome), self.outcome(server))
