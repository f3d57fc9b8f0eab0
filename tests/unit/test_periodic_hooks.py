"""The hooks that see the resource periodic, without walking the stack.

Invariants: a hit made while a hooked manager runs its resource periodic
(Nova's own code: the entry on the calling thread, the per-node update on
the thread Nova's executor gives it) is ``in_periodic``, whether the
periodic is called or run by the service's timer; a hit outside it is
not; the marks are that manager's only and go with its undo.  The
migration-context wrappers of several trackers stack, each acts for its
own tracker's periodic only, and any order of undo gives Nova its
methods back.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import threading
import types

import fixtures
from nova.compute import manager as compute_manager
from nova import conf as nova_conf
from nova import objects
from nova import test
from oslo_service import periodic_task
from oslo_utils.fixture import uuidsentinel as uuids

from faultdriver import hitcontext
from faultdriver import points
from faultdriver.tracker import periodic_mark
from faultdriver.tracker import periodic_scope

NOVA = compute_manager.ComputeManager


class StandInBase(periodic_task.PeriodicTasks):
    """A manager whose driver and tracker record the ``in_periodic`` a hit
    there gets, and on which thread, running Nova's per-node update."""

    _update_available_resource_for_node = \
        NOVA._update_available_resource_for_node

    def __init__(self):
        super().__init__(nova_conf.CONF)
        self.seen = []
        self.driver = types.SimpleNamespace(
            get_available_nodes=self._get_available_nodes)
        self.rt = types.SimpleNamespace(
            clean_compute_node_cache=lambda nodes: None,
            update_available_resource=self._node_update)

    def _record(self, point):
        context = hitcontext.describe(points.catalogue()[point], 'h1')
        self.seen.append((point, context['in_periodic'],
                          threading.get_ident()))

    def _get_available_nodes(self):
        self._record('get_available_nodes')
        return {'n1'}

    def _node_update(self, context, nodename, startup=False):
        self._record('tracker.update_available_resource')

    def _get_compute_nodes_in_db(self, context, nodenames, use_slave=False,
                                 startup=False):
        return []


class StandInManager(StandInBase):
    """Nova's periodic entry and its timer registration (oslo.service
    registers what the class itself defines)."""

    update_available_resource = NOVA.update_available_resource


class TimerlessManager(StandInBase):
    """The stand-in with ``update_resources_interval = -1`` (every sweep
    case's ``periodic-timer: false``): oslo.service leaves the task out of
    ``_periodic_tasks`` at class creation."""

    @periodic_task.periodic_task(spacing=-1)
    def update_available_resource(self, context, startup=False):
        return NOVA.update_available_resource(self, context, startup)


class TestPeriodicMark(test.NoDBTestCase):

    def hooked(self):
        manager = StandInManager()
        self.addCleanup(periodic_mark.install(manager))
        return manager

    def assertMarked(self, manager, marked):
        [(outer, outer_mark, outer_thread),
         (node, node_mark, node_thread)] = manager.seen
        self.assertEqual(('get_available_nodes', marked), (outer, outer_mark))
        self.assertEqual(('tracker.update_available_resource', marked),
                         (node, node_mark))
        # Nova 34 runs the per-node update on its executor's thread: the
        # mark must reach that thread, not only the caller's.
        self.assertEqual(threading.get_ident(), outer_thread)
        self.assertNotEqual(threading.get_ident(), node_thread)

    def test_called_periodic_is_marked_on_both_threads(self):
        manager = self.hooked()
        manager.update_available_resource(None)
        self.assertMarked(manager, True)
        self.assertFalse(hitcontext.in_periodic())

    def test_timer_periodic_is_marked(self):
        manager = self.hooked()
        # Due now (the timer's first run waits one spacing).
        manager._periodic_last_run['update_available_resource'] = None
        manager.run_periodic_tasks(None, raise_on_error=True)
        self.assertMarked(manager, True)

    def test_disabled_timer_still_marks_the_called_periodic(self):
        manager = TimerlessManager()
        self.assertNotIn('update_available_resource',
                         [name for name, _task in manager._periodic_tasks])
        self.addCleanup(periodic_mark.install(manager))
        manager.update_available_resource(None)
        self.assertMarked(manager, True)

    def test_hit_outside_the_periodic_is_not_marked(self):
        manager = self.hooked()
        manager.driver.get_available_nodes()
        [(point, marked, _thread)] = manager.seen
        self.assertEqual(('get_available_nodes', False), (point, marked))

    def test_unhooked_manager_is_not_marked(self):
        self.hooked()                 # another host of the process
        manager = StandInManager()
        manager.update_available_resource(None)
        self.assertMarked(manager, False)

    def test_undo_gives_the_manager_back(self):
        manager = StandInManager()
        periodic_mark.install(manager)()
        for name in periodic_mark.MARKED + ('_periodic_tasks',):
            self.assertNotIn(name, vars(manager))
        manager.update_available_resource(None)
        self.assertMarked(manager, False)


class TestPeriodicScopeLayers(test.NoDBTestCase):

    def setUp(self):
        super().setUp()
        self.migration = objects.Migration(
            id=7, uuid=uuids.m1, instance_uuid=uuids.i1,
            dest_compute='dest', dest_node='dest', status='error')

        def get_in_progress_and_error(cls, context, host, node):
            return [self.migration]
        self.useFixture(fixtures.MonkeyPatch(
            'nova.objects.MigrationList.get_in_progress_and_error',
            classmethod(get_in_progress_and_error)))
        self.originals = self.pristine()

    @staticmethod
    def pristine():
        return (objects.Instance.__dict__['apply_migration_context'],
                objects.MigrationList.__dict__[
                    'get_in_progress_and_error'].__func__)

    def instance(self):
        instance = objects.Instance(
            uuid=uuids.i1, numa_topology=objects.InstanceNUMATopology(
                cells=[]),
            migration_context=objects.MigrationContext(migration_id=3))
        return instance

    def periodic(self, tracker, decide):
        """The loop's two calls, as Nova makes them in tracker's periodic;
        whether the context was applied."""
        instance = self.instance()
        with periodic_scope.scope(tracker, 'dest', decide):
            objects.MigrationList.get_in_progress_and_error(
                None, 'dest', 'dest')
            instance.apply_migration_context()
        return instance.numa_topology is None

    def test_each_tracker_decides_its_own_periodic_once(self):
        first = types.SimpleNamespace(host='dest')
        second = types.SimpleNamespace(host='dest')
        self.addCleanup(periodic_scope.install(first))
        self.addCleanup(periodic_scope.install(second))
        for tracker in (first, second):
            asked = []

            def decide(instance, migration):
                asked.append((instance.uuid, migration.uuid))
                return False
            self.assertFalse(self.periodic(tracker, decide))
            self.assertEqual([(uuids.i1, uuids.m1)], asked)
        self.assertTrue(self.periodic(first, lambda i, m: True))

    def test_outside_a_scope_nova_applies(self):
        self.addCleanup(periodic_scope.install(
            types.SimpleNamespace(host='dest')))
        instance = self.instance()
        instance.apply_migration_context()
        self.assertIsNone(instance.numa_topology)

    def test_undo_in_any_order_gives_nova_its_methods(self):
        for order in ((0, 1, 2), (2, 0, 1), (1, 2, 0)):
            undo = [periodic_scope.install(types.SimpleNamespace(host=h))
                    for h in ('a', 'b', 'c')]
            self.assertNotEqual(self.originals, self.pristine())
            for index in order:
                undo[index]()
            self.assertEqual(self.originals, self.pristine(), order)
