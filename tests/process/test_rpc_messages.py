"""RPC message faults through RabbitMQ, with call-monitor heartbeats.

The conductor calls the destination's ``check_can_live_migrate_destination``
with ``call_monitor_timeout=rpc_response_timeout`` (8 s here) and
``timeout=long_rpc_timeout`` (60 s here).  oslo.messaging's dispatcher
sends heartbeats while the compute works on the call, so:

* a delay inside the handler longer than ``call_monitor_timeout``
  (``delay(14)``) keeps the conductor waiting: the migration completes;
* a dropped message sends no heartbeat: the conductor times out after
  ``call_monitor_timeout``, the migration fails cleanly
  (``MigrationPreCheckError``: migration ``error``, the server ACTIVE
  where it was), and the check never ran on the compute;
* a lost reply: the check ran (its action event finished), the
  heartbeats stopped with it, and the conductor times out as for a drop.

A caller that waited out ``long_rpc_timeout`` could not fail either
migration within ``GAVE_UP``: the waits below are bounded by it (a
hang guard far from the 8 s the conductor takes), which is what tells
a lost heartbeat from a slow handler on this transport.

In the process tier's tests line.
"""

from faultdriver.process import config
from faultdriver.process import nova as process_nova
from faultdriver import rpcmessage
from tests import stacks

POINT = rpcmessage.PREFIX + 'check_can_live_migrate_destination'
CALL_MONITOR = config.TIMINGS['rpc_response_timeout']
#: Seconds within which a caller that lost its heartbeats gave up: well
#: above call_monitor_timeout, well below long_rpc_timeout.
GAVE_UP = (CALL_MONITOR + config.TIMINGS['long_rpc_timeout']) / 2
EVENT = 'compute_check_can_live_migrate_destination'


def check_events(nova, server, request_id):
    return [(event['host'], event['result']) for event in
            nova.api.get_instance_action_details(
                server['id'], request_id)['events']
            if event['event'] == EVENT]


def live_migrate(nova, server, host):
    nova.api.post_server_action(server['id'], {'os-migrateLive': {
        'host': host, 'block_migration': 'auto'}})
    actions = [a for a in nova.api.get_instance_actions(server['id'])
               if a['action'] == 'live-migration']
    return actions[0]['request_id']       # the newest first


def test_drop_and_lost_reply_stop_heartbeats_a_slow_handler_does_not():
    assert CALL_MONITOR + 6 < GAVE_UP < config.TIMINGS['long_rpc_timeout']
    # Unpinned: a NUMA claim in the destination's check would add a
    # step to what a lost reply leaves, beside the point here.
    with stacks.unpinned_stack() as stack:
        stack.wait_schedulable()
        nova = process_nova.ProcessNova(stack, pinned=False)
        server = nova.boot('src')

        # Slow, heartbeats going: the conductor waits, the move goes on.
        nova.faults.add_rule('dest', '%s: 1*delay(%d)'
                             % (POINT, CALL_MONITOR + 6))
        live_migrate(nova, server, 'dest')
        nova.wait_newest_migration(server, 'completed', 1, timeout=90)
        nova.wait_for_server(server, status='ACTIVE', host='dest',
                             task_state=None)

        # Dropped: no heartbeat, the conductor gives up; nothing ran.
        nova.faults.add_rule('src', POINT + ': 1*drop')
        request = live_migrate(nova, server, 'src')
        nova.wait_newest_migration(server, 'error', 2, timeout=GAVE_UP,
                                   fail_on=())
        nova.wait_for_server(server, status='ACTIVE', host='dest',
                             task_state=None)
        assert check_events(nova, server, request) == []

        # Reply lost: the check ran on src, then the heartbeats stopped.
        nova.faults.add_rule('src', POINT + ': 1*lostreply')
        request = live_migrate(nova, server, 'src')
        nova.wait_newest_migration(server, 'error', 3, timeout=GAVE_UP,
                                   fail_on=())
        nova.wait_for_server(server, status='ACTIVE', host='dest',
                             task_state=None)
        assert check_events(nova, server, request) == [('src', 'Success')]

        fired = [(e['host'], e['point'], e['action'])
                 for e in nova.faults.history() if e.get('kind') == 'fault']
        assert fired == [('dest', POINT, 'delay'), ('src', POINT, 'drop'),
                         ('src', POINT, 'lostreply')]
