"""Run-time control of a real compute service through its control socket.

Invariant: a rule added at run time through ``dest``'s control socket
(no rule in the configuration) holds a live migration in
``pre_live_migration``; ``wait`` through the socket returns once it is
hit; the socket keeps answering while the handler is held and the
migration stays ``preparing``; ``release`` through the socket lets the
migration complete on ``dest``.  A restarted ``dest`` serves its socket
again, without the run-time rule.
"""

import logging
import os
import stat

import fixtures

from tests.functional import base


class TestControlSocketHoldsLiveMigration(base.LiveMigrationTestBase):

    CONTROL = True

    def test_hold_and_release_through_the_socket(self):
        path = self.faults.control_socket('dest')
        self.assertEqual(0o600, stat.S_IMODE(os.lstat(path).st_mode))
        dest = self.faults.control('dest')
        self.assertEqual('src', self.faults.control('src').status()['host'])
        self.assertEqual([], dest.rules())

        added = dest.add('pre_live_migration@dest: 1*hang(60, b)')
        self.assertEqual('pre_live_migration@dest: 1*hang(60, b)',
                         added['rule'])
        server = self.boot()
        self.live_migrate(server)
        self.assertEqual(1, dest.wait('pre_live_migration', timeout=30))

        # Held: the migration waits in 'preparing', the server on src, and
        # the socket answers meanwhile.
        self.wait_for_migration(server, ['preparing'])
        self.wait_for_server(server, status='MIGRATING', host='src')
        status = dest.status()
        self.assertEqual(({'b': 1}, 'dest'), (status['held'],
                                              status['host']))
        [entry] = dest.journal()
        self.assertEqual(('pre_live_migration', 'hang', server['id']),
                         (entry['point'], entry['action'],
                          entry['instance']))
        self.assertEqual('preparing',
                         self.migrations(server)[0]['status'])

        self.assertEqual(1, dest.release('b'))
        self.wait_for_migration(server, ['completed'])
        self.wait_for_server(server, status='ACTIVE', host='dest',
                             task_state=None)
        self.assertEqual(1, dest.rules()[0]['fired'])

        # A restart serves the socket again, without the run-time rule.
        self.faults.restart('dest')
        self.assertEqual(0o600, stat.S_IMODE(os.lstat(path).st_mode))
        self.assertEqual(([], 'dest'), (dest.rules(),
                                        dest.status()['host']))

    def test_periodic_through_the_socket_runs_the_real_tracker(self):
        # A rule on the tracker's periodic point shows that the request
        # ran Nova's update_available_resource on dest and on no other
        # host: the rule fires there once, Nova logs the node's error,
        # and src's log has none.
        nova_log = self.useFixture(fixtures.FakeLogger(
            name='nova.compute', level=logging.INFO))
        dest = self.faults.control('dest')
        dest.add('tracker.update_available_resource: 1*raise(InternalError)')
        result = dest.periodic(timeout=30)
        self.assertEqual(('dest', None), (result['host'], result['error']))
        self.assertEqual(1, dest.rules()[0]['fired'])
        self.assertIn('Error updating resources for node dest',
                      nova_log.output)
        self.assertNotIn('Error updating resources for node src',
                         nova_log.output)

        # Once more: the rule is spent, the periodic runs clean.
        dest.periodic(timeout=30)
        self.assertEqual(1, nova_log.output.count(
            'Error updating resources for node dest'))
        self.assertEqual(2, dest.counters()[
            'tracker.update_available_resource.before'])
