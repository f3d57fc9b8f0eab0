"""The timer's resource periodic, off and on at run time, and the
``rpc_started`` hook, on real oslo.service and Nova manager code.

Invariants: with the switch off, the timer's run (oslo.service's
``run_periodic_tasks``, what the service's timer calls) does not run the
periodic while its other tasks run on, and a call of the periodic still
runs it; switched on again, the timer runs it, marked as the tracker's
hooks mark it; closing the switch gives the timer its periodic back and
leaves the manager as the hooks left it; a periodic never on the timer
(``update_resources_interval = -1``) cannot go on.  ``rpc_started`` is
set by the manager's ``post_start_hook`` and no sooner, on that manager
only.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

from nova import manager as nova_manager
from nova import test
from oslo_service import periodic_task

from faultdriver import rpcstarted
from faultdriver.tracker import periodic_mark
from faultdriver.tracker import timer
from tests.unit import test_periodic_hooks as hooks


class TimedManager(hooks.StandInManager):
    """The stand-in with another task on the timer, as Nova's has many."""

    @periodic_task.periodic_task(spacing=1, run_immediately=True)
    def _other(self, context):
        self.seen.append(('other', None, None))


class TestTimerSwitch(test.NoDBTestCase):

    def manager(self, cls=TimedManager):
        manager = cls()
        self.addCleanup(periodic_mark.install(manager))
        switch = timer.TimerSwitch(manager)
        self.addCleanup(switch.close)
        return manager, switch

    @staticmethod
    def tick(manager):
        """One timer run with every task due (what the service's timer
        calls); what it ran."""
        for name in manager._periodic_last_run:
            manager._periodic_last_run[name] = None
        del manager.seen[:]
        manager.run_periodic_tasks(None, raise_on_error=True)
        return sorted({point for point, _mark, _thread in manager.seen})

    def test_off_and_on_while_it_runs(self):
        manager, switch = self.manager()
        self.assertEqual((True, 60), (switch.on, switch.interval))
        self.assertEqual(['get_available_nodes', 'other',
                          'tracker.update_available_resource'],
                         self.tick(manager))
        self.assertFalse(switch.switch(False))
        self.assertFalse(switch.switch(False))        # idempotent
        self.assertEqual(['other'], self.tick(manager))
        # A call of the periodic (ctl periodic, the action) still runs.
        del manager.seen[:]
        manager.update_available_resource(None)
        self.assertIn(('tracker.update_available_resource', True),
                      [(p, m) for p, m, _t in manager.seen])
        self.assertTrue(switch.switch(True))
        self.assertEqual(['get_available_nodes', 'other',
                          'tracker.update_available_resource'],
                         self.tick(manager))
        # Marked as the tracker's hooks mark the timer's run.
        self.assertTrue(all(mark for point, mark, _t in manager.seen
                            if point != 'other'))

    def test_close_gives_the_timer_its_periodic_back(self):
        manager = TimedManager()
        undo_mark = periodic_mark.install(manager)
        marked = manager._periodic_tasks
        switch = timer.TimerSwitch(manager)
        switch.switch(False)
        switch.close()
        self.assertIs(marked, manager._periodic_tasks)
        self.assertTrue(switch.on)
        undo_mark()
        self.assertNotIn('_periodic_tasks', vars(manager))

    def test_a_periodic_never_on_the_timer_cannot_go_on(self):
        manager, switch = self.manager(hooks.TimerlessManager)
        self.assertEqual((False, None), (switch.on, switch.interval))
        self.assertFalse(switch.switch(False))
        error = self.assertRaises(timer.TimerOff, switch.switch, True)
        self.assertIsInstance(error, ValueError)
        self.assertIn('update_resources_interval was negative when '
                      'nova-compute started', str(error))


class TestRpcStarted(test.NoDBTestCase):

    def test_set_by_post_start_hook_on_that_manager_only(self):
        manager = nova_manager.Manager(host='h1')
        other = nova_manager.Manager(host='h2')
        watch = rpcstarted.RpcStarted(manager)
        self.addCleanup(watch.close)
        self.assertFalse(watch.started)
        other.post_start_hook()
        self.assertFalse(watch.started)
        manager.post_start_hook()
        self.assertTrue(watch.started)
        watch.close()
        self.assertNotIn('post_start_hook', vars(manager))
        watch.close()                                # idempotent
