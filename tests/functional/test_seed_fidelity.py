"""A crash of the destination in pre_live_migration is what the field saw.

Seed report (faultdriver/tracker/patches/stale_migration_context.py): the
destination nova-compute stopped while a pinned-CPU live migration was
``preparing``.  Invariant: with ``pre_live_migration@dest: crash`` the
migration goes ``preparing`` -> ``error`` after the source's RPC timeout,
the server stays MIGRATING until an admin resets it, the destination
service is down until restarted, and none of the destination's error
handlers ran (its action event never finished).
"""

from tests.functional import base


class TestCrashDestInPreLiveMigration(base.FaultTestBase):

    PINNED = True
    RULES = {'dest': ['pre_live_migration: crash']}

    def test_matches_the_seed_report(self):
        server = self.boot()
        self.assertEqual([0, 1], self.pinned_cpus('src'))
        self.live_migrate(server)

        self.faults.wait_for_hit('dest', 'pre_live_migration')
        [migration] = self.migrations(server)
        self.assertEqual('preparing', migration['status'])

        self._wait_for_migration_status(server, ['error'])
        self.wait_service_state('dest', 'down')
        self.assertEqual('up', self.service_state('src'))
        server = self.api.get_server(server['id'])
        self.assertEqual('MIGRATING', server['status'])
        self.assertEqual('migrating', server['OS-EXT-STS:task_state'])
        self.assertEqual('src', server['OS-EXT-SRV-ATTR:host'])

        # No handler ran on the crashed host: its event never finished.
        action = self.api.get_instance_actions(server['id'])[0]
        events = self.api.get_instance_action_details(
            server['id'], action['request_id'])['events']
        [event] = [e for e in events
                   if e['event'] == 'compute_pre_live_migration']
        self.assertIsNone(event['finish_time'])

        [fired] = self.faults.journal('dest')
        self.assertEqual(('pre_live_migration', 'crash', 'dest'),
                         (fired['point'], fired['action'], fired['role']))
        self.assertEqual(server['id'], fired['instance'])

        # The source's rollback called drop_move_claim_at_destination and
        # gave up on it.  (Restart before that, and the new service answers
        # the call: the rollback completes and the migration ends 'failed',
        # as the reporter saw when restarting "too quickly".)
        self.faults.wait_for_queued('dest', 'drop_move_claim_at_destination')
        # Still MIGRATING after restart; the admin reset is what clears it.
        self.faults.restart('dest')
        self.wait_service_state('dest', 'up')
        self.assertEqual('MIGRATING',
                         self.api.get_server(server['id'])['status'])
        self.admin_api.post_server_action(
            server['id'], {'os-resetState': {'state': 'active'}})
        self.assertEqual('ACTIVE',
                         self.api.get_server(server['id'])['status'])
        [migration] = self.migrations(server)
        self.assertEqual('error', migration['status'])


class TestQuickRestartOfTheCrashedDest(base.FaultTestBase):
    """The reporter restarting "too quickly": the new destination service
    answers the rollback's drop_move_claim_at_destination, so the rollback
    completes.  The restart must land within the caller's wait; with the
    harness's usual wait for a dead host (0.5 s) the restart would miss
    it (and the test then sees the slow operator's ``error``), so the
    wait here is long enough for a restart of several seconds."""

    PINNED = True
    RULES = TestCrashDestInPreLiveMigration.RULES
    RPC_TIMEOUT = 10
    DEAD_HOST_WAIT = 10

    def test_quick_restart_lets_the_rollback_finish(self):
        server = self.boot()
        self.live_migrate(server)
        self.wait_for_migration(server, ['error'], timeout=60)
        self.faults.wait_for_queued('dest', 'drop_move_claim_at_destination',
                                    expired=False)
        self.faults.restart('dest')
        self.wait_for_migration(server, ['failed'], timeout=60)
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertIsNone(server['OS-EXT-STS:task_state'])
        self.assertEqual('src', server['OS-EXT-SRV-ATTR:host'])


class TestExceptionIsNotACrash(base.FaultTestBase):
    """The same step raising instead: Nova's handlers run (the migration
    passes ``error`` and the rollback completes it as ``failed``), the
    server returns to ACTIVE on the source and the destination drops its
    claim, its service up."""

    PINNED = True
    RULES = {'dest': ['pre_live_migration: raise(MigrationError)']}

    def test_handlers_run(self):
        server = self.boot()
        self.live_migrate(server)
        self._wait_for_migration_status(server, ['failed'])
        server = self._wait_for_state_change(server, 'ACTIVE')
        self.assertEqual('src', server['OS-EXT-SRV-ATTR:host'])
        self.assertIsNone(server['OS-EXT-STS:task_state'])
        self.assertEqual('up', self.service_state('dest'))
        self.run_periodic('dest')
        self.assertEqual([], self.pinned_cpus('dest'))
        self.assertEqual([0, 1], self.pinned_cpus('src'))
