"""A crash under the tracker lock, in an embedded Nova whose hosts share
one process (and so one ``COMPUTE_RESOURCE_SEMAPHORE``): the crashed
host's lock died with it, as in real nova-computes, which never share it.
Found by the evacuation sweep: a destination crash inside the rebuild
claim left the restarting source waiting for the lock forever."""

import threading

from faultdriver.harness import crash
from tests.functional import base


class TestCrashUnderTheTrackerLock(base.FaultTestBase):

    PINNED = True
    RULES = {'dest': ['tracker.live_migration_claim: 1*crash']}

    def test_the_other_host_runs_its_periodic_while_the_crashed_is_down(
            self):
        server = self.boot()
        self.live_migrate(server)
        self.faults.wait_for_hit('dest', 'tracker.live_migration_claim')
        self.assertTrue(self.faults.is_crashed('dest'))
        # src's periodic takes the tracker lock the crashed thread held.
        # (Joined with a bound only so that a regression fails the test
        # instead of hanging the suite.)
        periodic = threading.Thread(target=self.run_periodic,
                                    args=('src',), daemon=True)
        periodic.start()
        periodic.join(120)
        self.assertFalse(periodic.is_alive(),
                         "src's periodic waits for the tracker lock of a "
                         "crashed host")
        self.assertEqual([0, 1], self.pinned_cpus('src'))
        # The restart (once the conductor gave up on dest, as an operator
        # restarts it later) reaps the crashed thread: it takes the lock
        # back and its unwinding releases it.
        self.wait_for_migration(server, ['error'])
        self.faults.restart('dest')
        self.wait_service_state('dest', 'up')
        self.assertIsNone(crash._tracker_lock().owner)
        self.run_periodic('dest')
        self.assertEqual([], self.pinned_cpus('dest'))
