"""The ``fake_numa`` inner driver gives real compute services what the
stale-context seed needs: pinned-CPU NUMA accounting, a NUMA-aware live
migration whose destination claims, and guests that outlive a restart.

Invariants, each on two computes running faultdriver over fake_numa with
4 dedicated pCPUs in one NUMA cell and a 2-vCPU dedicated flavor:

* a pinned server uses 2 PCPU in placement and 2 pinned pCPUs in its
  host's NUMA topology, and is a running guest of that host;
* live-migrating it, the destination claims before ``pre_live_migration``
  (the instance's migration context names it and its pCPUs are pinned),
  then the guest and all usage move and the source is freed;
* a restarted compute lists the guest it had, with the same node;
* ``pre_live_migration@dest: crash`` ends the migration ``error`` (not
  ``failed``) with a migration context naming the destination: the first
  half of the seed.
"""

from faultdriver.harness import fake_numa  # first: sets concurrency mode

from nova.compute import power_state  # noqa: I100


def pinning(instance_topology):
    return sorted(cpu for cell in instance_topology.cells
                  for cpu in cell.cpu_pinning.values())


class FakeNumaTestBase(fake_numa.FakeNumaNova):

    PINNED = True


class TestPinnedAccounting(FakeNumaTestBase):

    def test_boot_pinned(self):
        topology = self.computes['src'].driver.get_available_resource(
            'src')['numa_topology']
        self.assertIn('"pcpuset": [0, 1, 2, 3]', topology)
        server = self.boot()
        self.assertEqual(2, self.placement_pcpus('src'))
        self.assertEqual([0, 1], self.pinned_cpus('src'))
        self.assertEqual([0, 1], self.instance_pinning(server))
        self.assertEqual({server['id']: power_state.RUNNING},
                         self.guests('src'))
        self.assertEqual({}, self.guests('dest'))


class TestLiveMigration(FakeNumaTestBase):

    RULES = {'dest': ['pre_live_migration: 1*hang(60, held)']}

    def test_dest_claims_then_guest_moves(self):
        server = self.boot()
        self.live_migrate(server)
        self.faults.wait_for_hit('dest', 'pre_live_migration')
        [migration] = self.migrations(server)
        self.assertEqual('dest', migration['dest_compute'])
        context = self.migration_context(server)
        self.assertEqual(migration['id'], context.migration_id)
        self.assertEqual([0, 1], pinning(context.new_numa_topology))
        self.assertEqual([0, 1], self.pinned_cpus('dest'))

        self.faults.release('dest', 'held')
        self.wait_for_migration(server, ['completed'])
        self.wait_for_server(server, status='ACTIVE', host='dest',
                             task_state=None)
        self.assertEqual({server['id']: power_state.RUNNING},
                         self.guests('dest'))
        self.assertEqual({}, self.guests('src'))
        self.assertIsNone(self.migration_context(server))
        for host in self.HOSTS:
            self.run_periodic(host)
        self.assertEqual({'src': [], 'dest': [0, 1]},
                         {h: self.pinned_cpus(h) for h in self.HOSTS})
        self.assertEqual({'src': 0, 'dest': 2},
                         {h: self.placement_pcpus(h) for h in self.HOSTS})


class TestRestart(FakeNumaTestBase):

    def test_guest_survives_restart(self):
        server = self.boot()
        provider = self.compute_rp_uuids['src']
        self.faults.restart('src')
        self.wait_service_state('src', 'up')
        self.assertEqual({server['id']: power_state.RUNNING},
                         self.guests('src'))
        self.assertEqual(provider, self.compute_rp_uuids['src'])
        self.run_periodic('src')
        self.assertEqual([0, 1], self.pinned_cpus('src'))
        server = self.api.get_server(server['id'])
        self.assertEqual(('ACTIVE', 1),
                         (server['status'],
                          server['OS-EXT-STS:power_state']))


class TestCrashDestInPreLiveMigration(FakeNumaTestBase):
    """The seed's first half: the stale ``error`` migration context."""

    RULES = {'dest': ['pre_live_migration: crash']}

    def test_error_migration_keeps_context(self):
        server = self.boot()
        self.live_migrate(server)
        self.faults.wait_for_hit('dest', 'pre_live_migration')
        migration = self.wait_for_migration(server, ['error', 'failed'])
        self.assertEqual('error', migration['status'])
        self.faults.wait_for_queued('dest', 'drop_move_claim_at_destination')
        self.assertEqual('dest', migration['dest_compute'])
        context = self.migration_context(server)
        self.assertIsNotNone(context)
        self.assertEqual(migration['id'], context.migration_id)
        self.assertEqual([0, 1], pinning(context.new_numa_topology))
        server = self.api.get_server(server['id'])
        self.assertEqual(('MIGRATING', 'src'),
                         (server['status'], server['OS-EXT-SRV-ATTR:host']))
        self.assertEqual({server['id']: power_state.RUNNING},
                         self.guests('src'))

        # The crashed host restarts with no guest: it never received one.
        self.faults.restart('dest')
        self.wait_service_state('dest', 'up')
        self.assertEqual({}, self.guests('dest'))
        self.assertEqual('error', self.migrations(server)[0]['status'])
        self.assertEqual(migration['id'],
                         self.migration_context(server).migration_id)
