"""raise, delay, hang and periodic at live-migration steps.

Unlike a crash (test_live_migration_steps.py), these leave every service
up and let Nova's own handlers run.  Each class states the invariant it
checks in its docstring; outcomes are read as in the crash cases
(:class:`tests.functional.base.Outcome`).
"""

from tests.functional import base

Outcome = base.Outcome

ON_SRC = ('ACTIVE', None, 'src')
#: A finished live migration: the server on dest, only dest charged and
#: pinned, the migration context gone.
COMPLETED = Outcome('completed', ('ACTIVE', None, 'dest'), ['dest'], [],
                    {'src': [], 'dest': [0, 1]})


def fired(test, host, action):
    return [(e['point'], e['instance']) for e in test.faults.journal(host)
            if e.get('action') == action]


class TestRaisePreCheckAtCheckDestination(base.LiveMigrationTestBase):
    """MigrationPreCheckError from the destination's check: the conductor
    drops ``dest`` as a candidate, reverts the allocation, errors the
    migration and leaves the server ACTIVE on ``src``; ``dest`` stays up and
    its handlers ran (the action event finished with an error, where a
    crash leaves it unfinished)."""

    PINNED = True
    RULES = {'dest': ['check_can_live_migrate_destination: '
                      'raise(MigrationPreCheckError)']}

    def test_server_stays_on_source(self):
        server = self.boot()
        self.live_migrate(server)
        self.assertOutcome(
            Outcome('error', ON_SRC, ['src'], [], {'src': [0, 1], 'dest': []}),
            server, self.HOSTS)
        self.assertEqual('up', self.service_state('dest'))
        self.assertEqual(
            [('check_can_live_migrate_destination', server['id'])],
            fired(self, 'dest', 'raise'))
        event = self._wait_for_instance_action_event(
            server, 'live-migration',
            'compute_check_can_live_migrate_destination', 'Error')
        self.assertIsNotNone(event['finish_time'])


class TestRaiseAtLiveMigration(base.LiveMigrationTestBase):
    """MigrationError from the source's driver.live_migration:
    _do_live_migration errors the migration and the server (ERROR on
    ``src``) without a rollback ("almost certainly too late to rollback").

    Nova bug: the driver failed before the hypervisor did anything, yet
    placement keeps charging the instance on ``dest`` and the migration
    consumer on ``src``, and the migration context stays; only the pinning
    on ``dest`` goes, when its periodic stops counting the ``error``
    migration.
    """

    PINNED = True
    RULES = {'src': ['live_migration: raise(MigrationError)']}

    def test_server_is_error_and_allocations_leak(self):
        server = self.boot()
        self.live_migrate(server)
        self.assertOutcome(
            Outcome('error', ('ERROR', None, 'src'), ['dest'], ['src'],
                    {'src': [0, 1], 'dest': []}, context=True),
            server, self.HOSTS)
        self.assertEqual([('live_migration', server['id'])],
                         fired(self, 'src', 'raise'))


class TestDelayAtPreLiveMigration(base.LiveMigrationTestBase):
    """A slow pre_live_migration on ``dest`` (delay 1 s) is only slow: the
    migration completes and usage moves to ``dest``.  Without a NUMA
    topology (the pinned path completes in the hold and periodic cases)."""

    RULES = {'dest': ['pre_live_migration: delay(1)']}

    def test_completes(self):
        server = self.boot()
        self.live_migrate(server)
        self.faults.wait_for_hit('dest', 'pre_live_migration', phase='after')
        self.assertOutcome(COMPLETED._replace(pinned=None), server,
                           self.HOSTS)
        self.assertEqual([('pre_live_migration', server['id'])],
                         fired(self, 'dest', 'delay'))


class TestHoldDestAtPreLiveMigration(base.LiveMigrationTestBase):
    """Held in pre_live_migration, ``dest`` has claimed the incoming server
    (migration ``preparing``, server MIGRATING on ``src``): a periodic on
    either host keeps both pinnings.  Released, the migration completes."""

    PINNED = True
    RULES = {'dest': ['pre_live_migration: hang(name=pre)']}

    def test_hold_then_release(self):
        server = self.boot()
        self.live_migrate(server)
        self.faults.wait_for_hit('dest', 'pre_live_migration')

        self.assertOutcome(
            Outcome('preparing', ('MIGRATING', 'migrating', 'src'),
                    ['dest'], ['src'], {'src': [0, 1], 'dest': [0, 1]},
                    context=True),
            server, self.HOSTS)
        self.assertEqual({'pre': 1}, self.faults.engine('dest').held())

        self.assertEqual(1, self.faults.release('dest', 'pre'))
        self.assertOutcome(COMPLETED, server, self.HOSTS)


class TestPeriodicAtPostLiveMigrationAtDestination(
        base.LiveMigrationTestBase):
    """The resource-tracker periodic run on ``dest`` inside
    post_live_migration_at_destination (before the instance is switched to
    ``dest``) gets the tracker lock without waiting, raises nothing and
    leaves usage right: the migration completes with the server pinned on
    ``dest`` only, before and after another periodic."""

    PINNED = True
    RULES = {'dest': ['post_live_migration_at_destination.before@dest: '
                      'periodic']}

    def test_usage_stays_right(self):
        server = self.boot()
        self.live_migrate(server)
        self.assertOutcome(COMPLETED, server)
        self.assertOutcome(COMPLETED, server, self.HOSTS)
        [report] = [e for e in self.faults.journal()
                    if e['kind'] == 'periodic']
        self.assertEqual(
            ('dest', 'post_live_migration_at_destination', 'before', False,
             None),
            (report['host'], report['point'], report['phase'],
             report['waited_for_lock'], report['error']))
