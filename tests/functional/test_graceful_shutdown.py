"""The shutdown action at live-migration steps on the embedded Nova: the
host's real ``Service.stop()`` (Nova 34's graceful shutdown) runs while
the call that hit the rule goes on; what it waited for is in the journal
and the log, the host is down until it starts again.

Tiers' shutdown timeouts (faultdriver.scenario.tiers.SHUTDOWN_TIMEOUTS):
the manager waits up to 10 s for its tasks.
"""

import logging

from faultdriver import exception
from faultdriver.harness import injection
from tests.functional import base

Outcome = base.Outcome
#: What a graceful stop logs (nova.service, nova.manager).
STOP_LOGS = (('nova.service', logging.INFO), ('nova.manager', logging.INFO))


def shutdowns(test, host):
    return [(e['point'], e['outcome']) for e in test.faults.journal(host)
            if e['kind'] == 'shutdown']


class TestShutdownSourceInLiveMigration(base.LiveMigrationTestBase):
    """systemctl stop of the source while it runs ``live_migration``: the
    manager waits for the migration, which completes; then the service is
    stopped (down) and starts again as it was."""

    PINNED = True
    RULES = {'src': ['live_migration: shutdown']}
    CAPTURED_LOGS = STOP_LOGS

    def test_the_migration_completes_and_the_source_stops(self):
        server = self.boot()
        self.live_migrate(server)
        self.assertOutcome(
            Outcome('completed', ('ACTIVE', None, 'dest'), ['dest'], [],
                    {'src': [], 'dest': [0, 1]}), server, ('dest',))
        self.faults.wait_for_journal(
            'src', lambda e: e['kind'] == 'shutdown', timeout=60)
        self.assertTrue(self.faults.is_stopped('src'))
        self.assertFalse(self.faults.is_crashed('src'))
        self.assertEqual([('live_migration', 'finished')],
                         shutdowns(self, 'src'))
        log = self.log_text()
        self.assertIn('Graceful shutdown: all in-progress tasks finished. '
                      'completed tasks: 1, failed tasks: 0', log)
        self.assertIn('nova-compute service graceful shutdown finished', log)
        self.wait_service_state('src', 'down')
        self.faults.restart('src')
        self.wait_service_state('src', 'up')
        self.assertFalse(self.faults.is_stopped('src'))


class TestShutdownOutlivedBySourceLiveMigration(base.LiveMigrationTestBase):
    """The same stop, the source's ``live_migration`` held 15 s: past the
    manager's 10 s wait, so the stop gives up on it ("timed out with 1
    tasks still in progress") and runs cleanup_host, whose
    shutdown_all_executors shuts the executors down and waits for them:
    the held call goes on and the libvirt driver's first executor request
    (to start the transfer) is refused.

    Nova bug (doc/findings.rst): the migration fails half-way: error, the
    server ERROR on ``src``, placement charging it on ``dest`` and the
    migration consumer on ``src``; the restart repairs none of it.
    """

    PINNED = True
    RULES = {'src': ['live_migration: shutdown(hold=15)']}
    CAPTURED_LOGS = STOP_LOGS

    def test_the_move_fails_half_way(self):
        server = self.boot()
        self.live_migrate(server)
        self.faults.wait_for_journal(
            'src', lambda e: e['kind'] == 'shutdown', timeout=60)
        self.assertIn('Graceful shutdown timed out with 1 tasks still in '
                      'progress: live_migration', self.log_text())
        self.faults.restart('src')
        self.wait_service_state('src', 'up')
        self.assertOutcome(
            Outcome('error', ('ERROR', None, 'src'), ['dest'], ['src'],
                    {'src': [0, 1], 'dest': []}, context=True),
            server, ('src', 'dest'))


class TestKillAfterIsRefusedEmbedded(base.LiveMigrationTestBase):
    """One process runs every host here: a rule that would kill one is
    refused, naming it and where it runs."""

    def test_kill_after_is_refused(self):
        with self.assertRaisesRegex(
                exception.ConfigError, r'kill_after=5\) needs a nova-compute '
                'process per host, which the embedded Nova lacks.*--backend '
                'process or libvirt'):
            injection.FaultInjection.parse(
                'live_migration: shutdown(kill_after=5)')
