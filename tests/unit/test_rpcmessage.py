"""RPC points: faults where a compute's own RPC server hands a message
to its manager.

Each test runs oslo.messaging's real RPC server, dispatcher and client
over its fake transport, the server built as Nova's ``Service.start``
builds a compute's (its first endpoint Nova's ``_TrackingEndpointWrapper``
of the manager); the manager is a small stand-in with the manager's
task-tracking methods and one RPC method, since no compute service runs
here.  What is asserted is the outcome: what the caller got (a reply, a
``MessagingTimeout``), whether and how often the method ran, and the
journal.  The call-monitor heartbeats need a real broker
(tests/process/test_rpc_messages.py).
"""

import threading
import unittest

from nova import service as nova_service
from oslo_config import cfg
import oslo_messaging

from faultdriver import actions
from faultdriver import engine as engine_module
from faultdriver import journal as journal_module
from faultdriver import points
from faultdriver import rpcmessage
from faultdriver import rules
from faultdriver.scenario import provisions
from faultdriver.scenario import tiers

POINT = 'rpc.check_can_live_migrate_source'


class Manager:
    """What the dispatcher and Nova's tracking wrapper use of a compute
    manager, and one RPC method that counts its runs."""

    def __init__(self):
        self.runs = 0
        self.tasks = []
        self.lock = threading.Lock()

    def _record_task_start(self, name, instance_uuid, request_id):
        self.tasks.append(('start', name))
        return name

    def _record_task_end(self, key, failed=False):
        self.tasks.append(('end', key))

    def check_can_live_migrate_source(self, ctxt, dest_check_data):
        with self.lock:
            self.runs += 1
            return {'run': self.runs}


def rule(text):
    return rules.validate(rules.parse(text), points.catalogue(),
                          actions.load_all())


class TestRpcMessages(unittest.TestCase):

    def setUp(self):
        super().setUp()
        self.transport = oslo_messaging.get_rpc_transport(
            cfg.CONF, url='fake:/')
        self.addCleanup(self.transport.cleanup)
        self.topic = 'compute-%s' % self.id().rpartition('.')[2]

    def start(self, texts, manager=None, owner=None):
        """A server for ``manager`` (default: a new one, this compute's)
        with ``texts`` armed on its engine; returns the manager, engine
        and a client."""
        manager = manager or Manager()
        engine = engine_module.Engine(
            'src', actions.load_all(), [rule(t) for t in texts],
            enabled=True, journal=journal_module.Journal(None))
        messages = rpcmessage.RpcMessages(owner or manager, engine)
        self.addCleanup(messages.close)
        target = oslo_messaging.Target(topic=self.topic, server='src')
        server = oslo_messaging.get_rpc_server(
            self.transport, target,
            [nova_service._TrackingEndpointWrapper(manager)])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        client = oslo_messaging.get_rpc_client(self.transport, target)
        return manager, engine, client.prepare(timeout=1)

    def call(self, client):
        return client.call({}, 'check_can_live_migrate_source',
                           dest_check_data=None)

    def fired(self, engine):
        return [(e['point'], e['action']) for e in engine.journal.entries()]

    def test_drop_times_the_caller_out_and_never_runs_the_method(self):
        manager, engine, client = self.start([POINT + ': 1*drop'])
        self.assertRaises(oslo_messaging.MessagingTimeout, self.call, client)
        self.assertEqual((0, []), (manager.runs, manager.tasks))
        # Only the first: the next message is handled.
        self.assertEqual({'run': 1}, self.call(client))
        self.assertEqual([(POINT, 'drop')], self.fired(engine))

    def test_lost_reply_runs_the_method_and_times_the_caller_out(self):
        manager, engine, client = self.start([POINT + ': 1*lostreply'])
        self.assertRaises(oslo_messaging.MessagingTimeout, self.call, client)
        self.assertEqual(1, manager.runs)
        self.assertEqual([('start', 'check_can_live_migrate_source'),
                          ('end', 'check_can_live_migrate_source')],
                         manager.tasks)
        self.assertEqual({'run': 2}, self.call(client))

    def test_lost_reply_after_the_method(self):
        manager, _engine, client = self.start(
            [POINT + '.after: 1*lostreply'])
        self.assertRaises(oslo_messaging.MessagingTimeout, self.call, client)
        self.assertEqual(1, manager.runs)

    def test_twice_answers_the_first_and_handles_again(self):
        manager, engine, client = self.start([POINT + ': 1*twice'])
        self.assertEqual({'run': 1}, self.call(client))
        # The second handling follows the reply in the server's thread.
        deadline = threading.Event()
        for _ in range(50):
            if manager.runs == 2:
                break
            deadline.wait(0.1)
        self.assertEqual(2, manager.runs)
        self.assertEqual(4, len(manager.tasks))
        self.assertEqual([(POINT, 'twice')], self.fired(engine))

    def test_another_service_s_server_is_untouched(self):
        # The engine belongs to another manager: this server is not its.
        manager, engine, client = self.start([POINT + ': drop'],
                                             owner=Manager())
        self.assertEqual({'run': 1}, self.call(client))
        self.assertEqual([], self.fired(engine))

    def test_hooks_come_off_with_close(self):
        manager = Manager()
        engine = engine_module.Engine('src', actions.load_all(),
                                      [rule(POINT + ': drop')], enabled=True)
        messages = rpcmessage.RpcMessages(manager, engine)
        server = oslo_messaging.get_rpc_server(
            self.transport, oslo_messaging.Target(topic=self.topic,
                                                  server='src'),
            [nova_service._TrackingEndpointWrapper(manager)])
        self.assertIn('_process_incoming', vars(server))
        messages.close()
        self.assertNotIn('_process_incoming', vars(server))
        self.assertNotIn('_do_dispatch', vars(server.dispatcher))
        self.assertFalse(hasattr(oslo_messaging.get_rpc_server,
                                 '__faultdriver_layer__'))


class TestRpcRules(unittest.TestCase):

    def refused(self, text, expected):
        with self.assertRaisesRegex(rules.RuleError, expected):
            rule(text)

    def test_catalogue_facts_from_compute_rpcapi(self):
        catalogue = points.catalogue()
        source = catalogue[POINT]
        self.assertEqual(('rpc', 'call', False, ('source',)),
                         (source.kind, source.rpc, source.monitored,
                          source.roles))
        pre = catalogue['rpc.pre_live_migration']
        self.assertEqual(('call', True), (pre.rpc, pre.monitored))
        self.assertEqual('cast', catalogue['rpc.live_migration'].rpc)

    def test_refusals(self):
        self.refused(POINT + '.after: drop', 'phase before only')
        self.refused(POINT + '.after: twice', 'phase before only')
        self.refused('rpc.live_migration: lostreply', 'is a cast')
        self.refused('pre_live_migration: drop', 'only at RPC points')
        self.refused(POINT + ': raise(InternalError)', 'cannot be raised')
        self.refused('rpc.pre_live_migration@source: drop',
                     'only on the dest host')
        self.refused(POINT + ': http(500)', 'only at service-call points')

    def test_unanswered_monitored_calls_need_heartbeats(self):
        heartbeats = frozenset({tiers.Provision.CALL_HEARTBEATS})
        for text, needed in (
                ('rpc.pre_live_migration: drop', heartbeats),
                ('rpc.check_can_live_migrate_destination: lostreply',
                 heartbeats),
                ('rpc.pre_live_migration: delay(5)', frozenset()),
                ('rpc.pre_live_migration: twice', frozenset()),
                (POINT + ': drop', frozenset())):
            self.assertEqual(
                needed, frozenset().union(
                    *(n for _t, n in provisions.rule_needs(text))), text)
        self.assertIn(tiers.Provision.CALL_HEARTBEATS,
                      tiers.get('embedded').lacks(heartbeats))
        self.assertEqual(frozenset(), tiers.get('process').lacks(heartbeats))
