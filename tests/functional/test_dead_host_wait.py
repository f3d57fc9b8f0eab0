"""Callers give up on a dead host sooner than on a live one.

The embedded Nova compresses a cloud's 60-s waits for an RPC reply into
DEAD_HOST_WAIT for a crashed host (nothing of it will ever answer) and
RPC_TIMEOUT for a live one (which under load may answer late).  Here
RPC_TIMEOUT is a cloud's 60 s and every wait is bounded well below it, so
each test passes only through the dead-host wait, or only if a live host's
slow answer is waited for.
"""

from tests.functional import base


class _LongRpcTimeout(base.FaultTestBase):
    PINNED = True
    RPC_TIMEOUT = 60
    DEAD_HOST_WAIT = 0.5
    #: Far below RPC_TIMEOUT: reached only if the callers gave up early.
    BOUND = 20

    def migrate_until(self, migration, **server_fields):
        """Boot, live-migrate to dest, wait (within BOUND) until the
        migration is ``migration`` and the server has ``server_fields``;
        returns the server."""
        server = self.boot()
        self.live_migrate(server)
        self.wait_for_migration(server, [migration], timeout=self.BOUND)
        return self.wait_for_server(server, timeout=self.BOUND,
                                    **server_fields)


class TestCallInFlightWhenItsHostCrashed(_LongRpcTimeout):
    """The conductor's plain call to dest is being handled when dest
    dies: the conductor gives up, the server stays ACTIVE on src."""

    RULES = {'dest': ['check_can_live_migrate_destination: crash']}

    def test_the_caller_gives_up(self):
        self.migrate_until('error', status='ACTIVE', task_state=None,
                           host='src')


class TestCallSentToACrashedHost(_LongRpcTimeout):
    """dest died in pre_live_migration (a long call, in flight); the
    source's rollback then calls dest again, already dead: that call
    expires too, and is dropped at dest's restart."""

    RULES = {'dest': ['pre_live_migration: crash']}

    def test_the_caller_gives_up(self):
        server = self.migrate_until('error', status='MIGRATING', host='src')
        self.faults.wait_for_queued('dest', 'drop_move_claim_at_destination',
                                    timeout=self.BOUND)
        # As in the seed report: the rollback died with that call.
        self.assertEqual('migrating', self.api.get_server(
            server['id'])['OS-EXT-STS:task_state'])
        self.faults.restart('dest')
        self.assertEqual([], self.faults.queued('dest'))


class TestSlowLiveHostIsWaitedFor(_LongRpcTimeout):
    """dest answers the conductor's check later than a dead host would be
    waited for, but alive: the live migration completes."""

    RULES = {'dest': ['check_can_live_migrate_destination: 1*delay(2)']}

    def setUp(self):
        super().setUp()
        self.stub_live_migration()

    def test_the_caller_waits(self):
        self.migrate_until('completed', status='ACTIVE', task_state=None,
                           host='dest')
