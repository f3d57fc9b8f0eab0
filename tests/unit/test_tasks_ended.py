"""The tasks a compute manager tracks for Nova's graceful shutdown, read
(``faultdriver.manager_tasks``, ``faultdriver ctl tasks``) and checked
(the ``tasks-ended`` invariant, F19).

The manager is Nova's own ComputeManager (fake driver); its state is
what Nova's ``pre_live_migration`` leaves on a destination whose source
never calls back: the move's task recorded and kept in
``_pending_dest_live_migrations``.  The invariant is checked on hand-made
end states, one broken, one holding, one whose task ends in its grace.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import os
import shutil
import tempfile
import types

from nova.compute import manager as compute_manager
from nova import test

from faultdriver.control import client as client_module
from faultdriver.control import ops as ops_module
from faultdriver.control import protocol
from faultdriver.control import server as server_module
from faultdriver import engine as engine_module
from faultdriver import manager_tasks
from faultdriver.scenario import expect
from faultdriver.scenario import invariants
from tests import runstates
from tests.unit import fakes

UUID = 'd035e049-9339-4716-9921-55124a7dcd61'


def _dest_manager():
    """Nova's ComputeManager as a destination leaves it once its
    ``pre_live_migration`` returned and the source then died: the move's
    task recorded, pending until a call back that never comes."""
    manager = compute_manager.ComputeManager()
    key = manager._record_task_start('live_migration_at_dest', UUID,
                                     'req-1')
    manager._pending_dest_live_migrations[UUID] = key
    return manager


class TestManagerTasks(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        self.flags(compute_driver='fake.SmallFakeDriver')

    def test_a_destinations_move_task_stays_tracked(self):
        self.assertEqual(
            [{'name': 'live_migration_at_dest', 'instance_uuid': UUID}],
            manager_tasks.in_progress(_dest_manager()))

    def test_ending_pending_moves_leaves_a_running_calls_task(self):
        manager = _dest_manager()
        manager._record_task_start('get_console_output', UUID, 'req-2')
        manager_tasks.end_pending_moves(manager)
        self.assertEqual(
            [{'name': 'get_console_output', 'instance_uuid': UUID}],
            manager_tasks.in_progress(manager))
        self.assertEqual({}, manager._pending_dest_live_migrations)


class TestControlTasks(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        self.flags(compute_driver='fake.SmallFakeDriver')
        self.dir = tempfile.mkdtemp(prefix='fdt', dir='/tmp')
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.engine = engine_module.Engine('dest', fakes.ACTIONS, [],
                                           enabled=True)
        self.addCleanup(self.engine.close)

    def serve(self, name, tasks):
        server = server_module.ControlServer(
            os.path.join(self.dir, name), self.engine, fakes.CATALOGUE,
            fakes.rule,
            compute=ops_module.ComputeHooks(tasks=tasks)).start()
        self.addCleanup(server.stop)
        return client_module.Client(server.path)

    def test_the_socket_answers_what_the_manager_tracks(self):
        manager = _dest_manager()
        client = self.serve('dest.sock',
                            lambda: manager_tasks.in_progress(manager))
        self.assertEqual(
            [{'name': 'live_migration_at_dest', 'instance_uuid': UUID}],
            client.tasks())

    def test_outside_a_compute_manager_it_is_refused_naming_why(self):
        client = self.serve('none.sock', None)
        with self.assertRaises(protocol.ControlError) as caught:
            client.tasks()
        self.assertIn('outside a compute manager', str(caught.exception))


def _steps(answers):
    """Scenario steps whose backend answers ``tasks_in_progress(host)``
    with the next of ``answers[host]`` (the last one repeats)."""
    def tasks_in_progress(host):
        queue = answers[host]
        return queue.pop(0) if len(queue) > 1 else queue[0]
    return types.SimpleNamespace(nova=types.SimpleNamespace(
        tasks_in_progress=tasks_in_progress))


def _state(tasks):
    return {'servers': {'s1': {'id': UUID}},
            'hosts': {host: {'tasks': found}
                      for host, found in tasks.items()}}


LEAKED = [{'name': 'live_migration_at_dest', 'instance_uuid': UUID}]


class TestTasksEndedInvariant(test.NoDBTestCase):

    def check(self, state, answers):
        return expect.KINDS['tasks-ended'](_steps(answers),
                                           runstates.state(state))

    def test_a_task_tracked_for_good_breaks_it_naming_host_and_server(self):
        met, _text, actual = self.check(
            _state({'src': [], 'dest': LEAKED}), {'dest': [LEAKED]})
        self.assertFalse(met)
        self.assertEqual({'dest': ['live_migration_at_dest (s1)']}, actual)

    def test_no_task_tracked_holds(self):
        met, _text, actual = self.check(
            _state({'src': [], 'dest': [], 'down': None}), {})
        self.assertTrue(met)
        self.assertEqual('none tracked', actual)

    def test_a_task_that_ends_in_its_grace_holds(self):
        met, _text, _actual = self.check(
            _state({'dest': LEAKED}), {'dest': [LEAKED, LEAKED, []]})
        self.assertTrue(met)

    def test_it_is_a_sweep_invariant(self):
        self.assertIn('tasks-ended', invariants.swept())
