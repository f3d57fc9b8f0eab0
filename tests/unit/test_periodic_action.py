"""The periodic action says whether it had to wait for the tracker lock.

Invariant: ``waited_for_lock`` is true exactly when another thread held
Nova's tracker lock (``COMPUTE_RESOURCE_SEMAPHORE``, taken the way
Nova's ``utils.synchronized(..., fair=True)`` takes it) when the
periodic asked for it; no duration threshold decides it.  The compute
manager is a stand-in that records the periodic; the lock and the action
are the real ones.
"""

import nova.tests.unit  # noqa: F401  (Nova's patching and objects first)

import threading
import types

from nova.compute import resource_tracker
from nova import test
from nova import utils as nova_utils

from faultdriver.actions import periodic
from faultdriver import engine as engine_module
from faultdriver import journal as journal_module
from faultdriver import rules

JOIN = 30


class RecordingManager:
    def __init__(self):
        self.ran = threading.Event()
        # As nova.manager.Manager's (set by set_shutdown_in_progress).
        self._shutdown_in_progress = threading.Event()

    def update_available_resource(self, context):
        self.ran.set()


def hit_at(point, manager, journal, in_periodic=False):
    """A hit of ``point: periodic`` on h1, whose FaultDriver reaches
    ``manager`` and whose engine records in ``journal``."""
    rule = rules.parse('%s: periodic' % point)
    return rule, engine_module.Hit(
        point=point, phase='before', host='h1', rule=rule, rule_index=0,
        hit=1, fired=1, in_periodic=in_periodic,
        target=types.SimpleNamespace(
            virtapi=types.SimpleNamespace(_compute=manager)),
        engine=types.SimpleNamespace(journal=journal))


class TestPeriodicLockReport(test.NoDBTestCase):

    def fire(self, point, hold_lock):
        manager = RecordingManager()
        journal = journal_module.Journal()
        rule, hit = hit_at(point, manager, journal)
        action = periodic.Periodic(rule.terms[0])

        @nova_utils.synchronized(resource_tracker.COMPUTE_RESOURCE_SEMAPHORE,
                                 fair=True)
        def under_the_tracker_lock():
            action(hit)         # a tracker_lock point: does not wait

        if hold_lock:
            under_the_tracker_lock()
        else:
            action(hit)
        self.assertTrue(manager.ran.wait(JOIN))
        for thread in threading.enumerate():
            if thread.name == 'faultdriver-periodic-h1':
                thread.join(JOIN)
        [entry] = journal.entries()
        return entry

    def test_lock_held_by_the_hit_thread(self):
        entry = self.fire('tracker.drop_move_claim_at_source', True)
        self.assertTrue(entry['waited_for_lock'], entry)
        self.assertIsNone(entry['error'])

    def test_lock_free(self):
        entry = self.fire('tracker.drop_move_claim_at_source', False)
        self.assertFalse(entry['waited_for_lock'], entry)
        self.assertIsNone(entry['error'])


class TestInTheHostsOwnPeriodic(test.NoDBTestCase):
    """A hit inside the host's resource periodic starts no second one:
    nova-compute runs one periodic at a time (a nested one would wait for
    the per-node executor the outer one occupies)."""

    def test_hit_in_the_periodic_runs_nothing(self):
        manager = RecordingManager()
        journal = journal_module.Journal()
        rule, hit = hit_at('get_available_nodes', manager, journal,
                           in_periodic=True)
        periodic.Periodic(rule.terms[0])(hit)
        self.assertFalse(manager.ran.is_set())
        [entry] = journal.entries()
        self.assertEqual("the hit is in h1's own resource periodic",
                         entry['skipped'])


class TestDuringAGracefulStop(test.NoDBTestCase):
    """Once the host's graceful shutdown began Nova's timer runs no
    periodic task (Manager.periodic_tasks); the action runs none either,
    and its journal entry says why."""

    def test_a_stopping_host_runs_no_periodic(self):
        manager = RecordingManager()
        manager._shutdown_in_progress.set()
        journal = journal_module.Journal()
        rule, hit = hit_at('live_migration', manager, journal)
        periodic.Periodic(rule.terms[0])(hit)
        self.assertFalse(manager.ran.is_set())
        [entry] = journal.entries()
        self.assertEqual('nova-compute on h1 is shutting down: Nova runs no '
                         'periodic task then', entry['skipped'])
