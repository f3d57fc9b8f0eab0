"""A crash of one host at each live-migration step, then its restart.

One class per (step, host role): the rule ``<step>: crash`` on that host
(each step has one role) kills its nova-compute at the step (no handler
runs, no RPC reply; see faultdriver.harness.crash), and the other host
goes on with what Nova does when its peer stops answering.  Each case
states two outcomes, each read once the surviving services settled:

* ``CRASHED``: the crashed host is down, the other up;
* ``RESTARTED``: after the crashed host restarted (``init_host`` and its
  start-up periodic) and the resource-tracker periodic ran on both hosts.

An outcome is the migration status; the server's status, task state and
host; the hosts placement charges the instance and the migration consumer;
the pCPUs each compute node records as pinned (the crashed host's record is
whatever it last wrote); and whether the instance still has a migration
context.  Before the restart the test also checks which RPC messages still
wait for the crashed host (none in these cases, so no expired-call
subtlety).  Where the outcome is a Nova bug the case's docstring says so;
the test asserts the bug as it is, so a fix in Nova fails it.

``pre_live_migration@dest`` is in test_seed_fidelity.py.
"""

from tests.functional import base

Outcome = base.Outcome


ON_SRC = ('ACTIVE', None, 'src')


class _CrashCase:
    """The scenario; a case sets HOST, POINT, CRASHED and RESTARTED."""

    PINNED = True
    #: The host whose service crashes, and the step where it does.
    HOST = POINT = None
    CRASHED = RESTARTED = None
    #: RPC messages (method, 'call'|'cast', expired) still waiting for the
    #: crashed host when it restarts; an expired call is then dropped.
    QUEUED = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if 'RULES' not in vars(cls):
            cls.RULES = {cls.HOST: ['%s: crash' % cls.POINT]}

    @property
    def peer(self):
        return {'src': 'dest', 'dest': 'src'}[self.HOST]

    def before_crash(self, server):
        """Runs once the step is hit (a case holding it may release it)."""

    def after_restart(self, server):
        """More checks of the restarted state."""

    def test_crash_then_restart(self):
        server = self.boot()
        self.live_migrate(server)
        self.faults.wait_for_hit(self.HOST, self.POINT)
        self.before_crash(server)

        self.wait_service_state(self.HOST, 'down')
        self.assertEqual('up', self.service_state(self.peer))
        self.assertOutcome(self.CRASHED, server, [self.peer])
        fired = [e for e in self.faults.journal(self.HOST)
                 if e['action'] == 'crash']
        self.assertEqual([(self.POINT, server['id'])],
                         [(e['point'], e['instance']) for e in fired])

        self.assertEqual(self.QUEUED, [
            (method, kind, expired) for _topic, method, kind, expired
            in self.faults.queued(self.HOST)])
        self.faults.restart(self.HOST)
        self.wait_service_state(self.HOST, 'up')
        self.assertOutcome(self.RESTARTED, server, self.HOSTS)
        self.after_restart(server)


class TestCrashDestAtCheckDestination(_CrashCase, base.LiveMigrationTestBase):
    """The conductor's check call times out: it gives up on ``dest``
    (MigrationPreCheckError, then NoValidHost), reverts the allocation and
    leaves the server ACTIVE on ``src``.  Nothing was claimed on ``dest``,
    so its restart changes nothing."""

    HOST, POINT = 'dest', 'check_can_live_migrate_destination'
    CRASHED = RESTARTED = Outcome(
        'error', ON_SRC, ['src'], [], {'src': [0, 1], 'dest': []})


class TestCrashSourceAtCheckSource(_CrashCase, base.LiveMigrationTestBase):
    """``dest`` asks ``src`` to check; the conductor's call to ``dest``
    times out first and it gives up as above.  The server is ACTIVE on a
    host that is down until it restarts."""

    HOST, POINT = 'src', 'check_can_live_migrate_source'
    CRASHED = RESTARTED = Outcome(
        'error', ON_SRC, ['src'], [], {'src': [0, 1], 'dest': []})


class TestCrashDestAfterClaim(_CrashCase, base.LiveMigrationTestBase):
    """NUMA: ``dest`` has claimed and pinned pCPUs 0-1 for the incoming
    server and saved its migration context when it dies in
    post_claim_migrate_data.  The conductor gives up as above.  The
    restarted ``dest`` rebuilds its usage without the ``error`` migration,
    so it unpins.

    Nova bug: nothing drops the instance's migration context, which still
    names the ``error`` migration and ``dest``'s pCPUs (the stale context
    of faultdriver/tracker/patches/stale_migration_context.py).
    """

    HOST, POINT = 'dest', 'post_claim_migrate_data'
    CRASHED = Outcome('error', ON_SRC, ['src'], [],
                      {'src': [0, 1], 'dest': [0, 1]}, context=True)
    RESTARTED = CRASHED._replace(pinned={'src': [0, 1], 'dest': []})


class TestCrashSourceAtLiveMigration(_CrashCase, base.LiveMigrationTestBase):
    """``src`` dies as it starts the hypervisor's migration (``running``).
    While it is down ``dest`` keeps the claim for the incoming server.  On
    restart ``init_host`` aborts the ``running`` migration: ``error``, the
    server ACTIVE on ``src`` again, ``dest`` unpins.

    Nova bug: ``init_host`` reverts no allocation, so placement keeps
    charging the instance on ``dest`` (where it is not) and the migration
    consumer on ``src``; ``dest``'s PCPUs leak until someone heals the
    allocations.  The stale migration context stays too.
    """

    HOST, POINT = 'src', 'live_migration'
    CRASHED = Outcome('running', ('MIGRATING', 'migrating', 'src'),
                      ['dest'], ['src'], {'src': [0, 1], 'dest': [0, 1]},
                      context=True)
    RESTARTED = CRASHED._replace(
        migration='error', server=ON_SRC,
        pinned={'src': [0, 1], 'dest': []})


class TestCrashSourceAtLiveMigrationNoNUMA(TestCrashSourceAtLiveMigration):
    """The same without a NUMA topology: no claim, no migration context,
    the same leaked allocations (Nova bug)."""

    PINNED = False
    CRASHED = TestCrashSourceAtLiveMigration.CRASHED._replace(
        pinned=None, context=False)
    RESTARTED = TestCrashSourceAtLiveMigration.RESTARTED._replace(
        pinned=None, context=False)


class TestCrashSourceAtPostLiveMigration(_CrashCase,
                                         base.LiveMigrationTestBase):
    """``src`` dies after the hypervisor finished the migration: the guest
    runs on ``dest``.  The database still says ``src``, ``running``.  On
    restart ``init_host`` errors the migration and makes the server ACTIVE
    on ``src``.

    Nova bug: the server is recorded ACTIVE on ``src`` while its guest
    runs on ``dest``, whose periodic unpins the pCPUs that guest uses;
    placement charges the instance on ``dest`` and the migration consumer
    on ``src``, and the stale migration context stays.  (fakelibvirt keeps
    the source's domain too; real libvirt would have removed it.)
    """

    HOST, POINT = 'src', 'post_live_migration'
    CRASHED = TestCrashSourceAtLiveMigration.CRASHED
    RESTARTED = TestCrashSourceAtLiveMigration.RESTARTED

    def after_restart(self, server):
        # The guest is on dest's hypervisor (lookup raises if it is not).
        self.dest.driver._host.get_connection().lookupByUUIDString(
            server['id'])


class TestCrashDestAtPostLiveMigrationAtDestination(
        _CrashCase, base.LiveMigrationTestBase):
    """``dest`` dies in post_live_migration_at_destination: ``src``'s call
    times out, it records the server on ``dest`` anyway (the guest is
    there), errors the migration and sets the server ERROR.

    Nova bugs: the server is ERROR although its guest runs fine; the
    migration consumer's allocation on ``src`` is never deleted (the
    source skips _delete_allocation_after_move on this path), not even by
    the restart: ``src`` is charged for a server it does not host.
    """

    HOST, POINT = 'dest', 'post_live_migration_at_destination'
    CRASHED = RESTARTED = Outcome(
        'error', ('ERROR', None, 'dest'), ['dest'], ['src'],
        {'src': [], 'dest': [0, 1]})


class TestCrashSourceAtRollback(_CrashCase, base.LiveMigrationTestBase):
    """The hypervisor's migration fails and ``src`` dies in its rollback,
    after it moved the allocation back to the instance.  ``dest`` keeps its
    claim while the migration is ``running``.  On restart ``init_host``
    errors the migration, the server is ACTIVE on ``src`` and ``dest``
    unpins; placement is right.  The migration context (which the rollback
    would have dropped) stays: the stale context again.
    """

    LIBVIRT_JOB = 'fail'
    HOST, POINT = 'src', 'rollback_live_migration_at_source'
    CRASHED = Outcome('running', ('MIGRATING', 'migrating', 'src'),
                      ['src'], [], {'src': [0, 1], 'dest': [0, 1]},
                      context=True)
    RESTARTED = CRASHED._replace(migration='error', server=ON_SRC,
                                 pinned={'src': [0, 1], 'dest': []})


class TestCrashDestAtRollback(_CrashCase, base.LiveMigrationTestBase):
    """The hypervisor's migration fails; ``src`` rolls back, casts
    rollback_live_migration_at_destination and calls
    drop_move_claim_at_destination, which ``dest`` runs concurrently.  The
    step is held until the source finished (``failed``, ACTIVE), then
    ``dest`` dies in it: nothing is left for the restart to do, since the
    claim was already dropped.  (Dying before answering the drop-claim call
    instead is the stuck-MIGRATING outcome of test_seed_fidelity.)
    """

    LIBVIRT_JOB = 'fail'
    HOST, POINT = 'dest', 'rollback_live_migration_at_destination'
    # Both rules fire at the hit, in order: hold, then crash.
    RULES = {HOST: [POINT + ': hang(name=rollback)', POINT + ': crash']}
    CRASHED = RESTARTED = Outcome(
        'failed', ON_SRC, ['src'], [], {'src': [0, 1], 'dest': []})

    def before_crash(self, server):
        self.wait_for_migration(server, ['failed'])
        self.assertEqual(1, self.faults.release('dest', 'rollback'))
