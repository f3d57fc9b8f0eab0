"""RPC message faults at the receiving compute, on the embedded Nova.

LP 2044235: the destination's pre-check calls the source
(``check_can_live_migrate_source``, a plain call: no
``call_monitor_timeout``, so the embedded Nova's fake transport waits
``rpc_response_timeout`` as a broker would).  Before Nova's fix
(dc51a4271b) a ``MessagingTimeout`` there put the instance in ERROR;
Nova 34's ``check_can_live_migrate_destination`` turns any error of the
source's check into ``MigrationPreCheckError``, so the conductor fails
the migration cleanly: migration ``error``, the server ACTIVE on ``src``
with its allocation there only.  That is asserted for both ways a call
goes unanswered, which differ in what ran on ``src``: a dropped message
never runs the method (no ``compute_check_can_live_migrate_source``
action event), a lost reply runs it (the event finished).
"""

from faultdriver.actions import rpc as rpc_actions
from faultdriver import exception
from faultdriver import rpcmessage
from tests.functional import base

Outcome = base.Outcome
POINT = rpcmessage.PREFIX + 'check_can_live_migrate_source'
#: The pre-check timed out: nothing moved.
FAILED_CLEANLY = Outcome('error', ('ACTIVE', None, 'src'), ['src'], [])


def source_check_events(test, server):
    """The ``compute_check_can_live_migrate_source`` events of the
    server's live migration: what ran on the source."""
    api = test.admin_api
    [action] = [a for a in api.get_instance_actions(server['id'])
                if a['action'] == 'live-migration']
    return [(event['host'], event['result']) for event in
            api.get_instance_action_details(
                server['id'], action['request_id'])['events']
            if event['event'] == 'compute_check_can_live_migrate_source']


class TestDroppedSourceCheck(base.LiveMigrationTestBase):
    """The source's pre-check message is dropped: the destination's call
    times out, the migration fails cleanly, the check never ran."""

    RULES = {'src': [POINT + ': 1*' + rpc_actions.DROP]}

    def test_migration_fails_and_server_stays_active(self):
        server = self.boot()
        self.live_migrate(server)
        self.assertOutcome(FAILED_CLEANLY, server, self.HOSTS)
        self.assertEqual([], source_check_events(self, server))
        [fired] = self.faults.journal('src')
        self.assertEqual((POINT, 'drop', 'source', server['id']),
                         (fired['point'], fired['action'], fired['role'],
                          fired['instance']))


class TestLostSourceCheckReply(base.LiveMigrationTestBase):
    """The source's pre-check runs but its reply is lost: the same clean
    failure; the check ran (its action event finished)."""

    RULES = {'src': [POINT + ': 1*' + rpc_actions.LOST_REPLY]}

    def test_migration_fails_and_server_stays_active(self):
        server = self.boot()
        self.live_migrate(server)
        self.assertOutcome(FAILED_CLEANLY, server, self.HOSTS)
        self.assertEqual([('src', 'Success')],
                         source_check_events(self, server))

    def test_unanswered_monitored_call_refused_here(self):
        """A call with call_monitor_timeout would wait long_rpc_timeout
        on the fake transport, not call_monitor_timeout: refused."""
        with self.assertRaisesRegex(exception.ConfigError,
                                    'call-monitor heartbeats'):
            self.faults.add_rule('dest', 'rpc.pre_live_migration: drop')
