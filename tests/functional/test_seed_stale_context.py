"""Seed: a stale ``error`` migration makes the periodic apply the wrong
migration context (the bug faultdriver/tracker/patches/
stale_migration_context.py describes).

The seed's steps, exact: a pinned server's live migration to ``dest``
dies with ``dest`` (``pre_live_migration@dest: crash``), the migration is
left ``error``; ``dest`` restarts after the source gave up, the server is
reset to active and live-migrates to ``dest`` for real.  Then it migrates
away again while the stale ``error`` migration still names ``dest`` as
its destination, and ``dest``'s periodic runs inside that window.

Invariant checked both ways:

* stock tracker: every periodic on ``dest`` applies a migration context for
  the stale ``error`` migration; inside the window that is the new move's
  context, so ``dest`` accounts the server with the other host's pinning:
  ``CPUPinningInvalid`` breaks the periodic when another pinned server
  holds those pCPUs, and without one a new pinned server is given the
  pCPUs the migrating server still uses while placement sees nothing
  wrong;
* ``stale_migration_context`` fix: none of that, and the pinned pCPUs of
  every host match placement's PCPU usage.
"""

import logging

import fixtures

from tests.functional import base

STALE_LINE = 'Migration status is error'
FIX_LINE = 'not applying the migration context'


class StaleContextBase(base.FaultTestBase):

    PINNED = True

    def setUp(self):
        super().setUp()
        self.stub_live_migration()
        self.nova_log = self.useFixture(fixtures.FakeLogger(
            name='nova.compute', level=logging.DEBUG,
            format='%(levelname)s %(name)s %(message)s'))
        self.fix_log = self.useFixture(fixtures.FakeLogger(
            name='faultdriver.tracker', level=logging.INFO))

    # -- helpers ------------------------------------------------------------

    def stale_lines(self):
        return self.nova_log.output.count(STALE_LINE)

    def make_stale_error_migration(self, server):
        """The seed's steps, up to the server living on ``dest`` with the
        crashed migration still ``error``."""
        self.faults.add_rule('dest', 'pre_live_migration: 1*crash')
        self.live_migrate(server, 'dest')
        self._wait_for_migration_status(server, ['error'])
        # Restart only once the source gave up on the destination (the
        # reporter's ten-minute wait); a quicker restart ends 'failed'.
        self.faults.wait_for_queued('dest', 'drop_move_claim_at_destination')
        self.faults.restart('dest')
        self.wait_service_state('dest', 'up')
        self.admin_api.post_server_action(
            server['id'], {'os-resetState': {'state': 'active'}})
        self.live_migrate(server, 'dest')
        self.wait_newest_migration(server, 'completed', 2)
        server = self._wait_for_server_parameter(
            server, {'OS-EXT-SRV-ATTR:host': 'dest', 'status': 'ACTIVE',
                     'OS-EXT-STS:task_state': None})
        statuses = sorted(m['status'] for m in self.migrations(server))
        self.assertEqual(['completed', 'error'], statuses)
        return server

    def hold_move_away(self, server):
        """Live-migrate ``server`` from dest to src, held at src's
        pre_live_migration: the window in which dest's periodic sees the
        new migration's context on the instance."""
        self.faults.add_rule('src', 'pre_live_migration: 1*hang(60, away)')
        self.live_migrate(server, 'src')
        self.faults.wait_for_hit('src', 'pre_live_migration')

    def finish_move_away(self, server):
        self.faults.release('src', 'away')
        self.wait_newest_migration(server, 'completed', 3)
        return self._wait_for_server_parameter(
            server, {'OS-EXT-SRV-ATTR:host': 'src', 'status': 'ACTIVE'})

    def occupy_on_src(self, cpus):
        """A pinned server on src holding exactly ``cpus``, so a move to
        src is pinned to the other two."""
        first = self.boot(host='src')
        if self.instance_pinning(first) == cpus:
            return first
        second = self.boot(host='src')
        self.assertEqual(cpus, self.instance_pinning(second))
        self._delete_server(first)
        return second

    def assert_accounting_matches_placement(self):
        for host in self.HOSTS:
            self.run_periodic(host)
            self.assertEqual(len(self.pinned_cpus(host)),
                             self.placement_pcpus(host), host)

    # -- the scenario, two ways ---------------------------------------------

    def run_with_second_pinned_server(self):
        """Returns what the dest periodic inside the window logged."""
        s1 = self.make_stale_error_migration(self.boot())
        before = self.stale_lines()
        self.run_periodic('dest')
        self.run_periodic('dest')
        periodic_applies = self.stale_lines() - before
        on_dest = self.instance_pinning(s1)
        s2 = self.boot(host='dest')             # the other two of dest
        self.assertEqual([0, 1, 2, 3], self.pinned_cpus('dest'))
        self.occupy_on_src(on_dest)             # s1 will get s2's numbers
        self.hold_move_away(s1)
        errors_before = self.nova_log.output.count('CPUPinningInvalid')
        self.run_periodic('dest')
        window_errors = (self.nova_log.output.count('CPUPinningInvalid')
                         - errors_before)
        self.finish_move_away(s1)
        self.assertEqual(self.instance_pinning(s1),
                         self.instance_pinning(s2))   # numbers, not pCPUs
        return periodic_applies, window_errors

    def run_without_second_pinned_server(self):
        """Returns the pinning of the migrating server and of a server
        booted on dest inside the window, and dest's placement usage."""
        s1 = self.make_stale_error_migration(self.boot())
        self.occupy_on_src(self.instance_pinning(s1))
        self.hold_move_away(s1)                 # s1 will get the other two
        self.run_periodic('dest')
        s4 = self.boot(host='dest')
        overlap = (set(self.instance_pinning(s1)) &
                   set(self.instance_pinning(s4)))
        usage = self.placement_pcpus('dest')
        self.finish_move_away(s1)
        return sorted(overlap), usage


class TestStockTracker(StaleContextBase):
    """Stock Nova 34 tracker: the bug, asserted."""

    def test_cpu_pinning_invalid_in_the_window(self):
        applies, errors = self.run_with_second_pinned_server()
        self.assertEqual(2, applies)    # one per periodic, status error
        self.assertGreaterEqual(errors, 1)
        self.assertIn('Error updating resources for node dest',
                      self.nova_log.output)
        self.assertNotIn(FIX_LINE, self.fix_log.output)

    def test_silent_overcommit_in_the_window(self):
        overlap, usage = self.run_without_second_pinned_server()
        self.assertEqual(2, len(overlap))   # two servers, same pCPUs
        self.assertEqual(4, usage)          # placement: 4 of 4, no alarm
        self.assertNotIn('CPUPinningInvalid', self.nova_log.output)


class TestStaleMigrationContextFix(StaleContextBase):
    """Same steps with the candidate fix on every host: no damage."""

    PATCHES = ('stale_migration_context',)

    def test_no_cpu_pinning_invalid(self):
        applies, errors = self.run_with_second_pinned_server()
        self.assertEqual(0, errors)
        self.assertNotIn('Error updating resources', self.nova_log.output)
        # Nova logs its line before the decision; the fix then skips the
        # application (in these two periodics and in every later one).
        self.assertEqual(2, applies)
        self.assertGreaterEqual(self.fix_log.output.count(FIX_LINE), applies)
        self.assert_accounting_matches_placement()

    def test_no_overcommit(self):
        overlap, usage = self.run_without_second_pinned_server()
        self.assertEqual([], overlap)
        self.assertEqual(4, usage)
        self.assert_accounting_matches_placement()
