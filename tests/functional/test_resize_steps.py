"""Faults at each step of a cold migration or resize, confirm and revert.

Two libvirt hosts (fakelibvirt) with 4 dedicated pCPUs in one NUMA cell;
the server has 2 pinned pCPUs (OLD) and a resize gives it 3 (NEW).  The
steps are those of Nova 34's ComputeManager.prep_resize, resize_instance,
finish_resize, confirm_resize and revert_resize (nova/compute/manager.py).

Invariant of the crash rows: a crash runs none of Nova's handlers (the
crashed step's action event never finishes), the host is reported down
and the peer stays up; every row states what the database, placement and
the compute nodes' NUMA topologies then hold, and what a restart of the
crashed host (``init_host``, §5.3) changes.  Where that is a Nova bug (a
leaked allocation, a status nothing will ever move on) the row asserts it
and its docstring says so.

Outcome rows are (server (status, task state, host), migration status,
{host: flavor} held by the instance, {host: flavor} held by the migration
consumer, {host: flavor whose pCPUs the node pins}).
"""

import threading
import time

import fixtures
from nova.tests.functional.api import client as api_client

from faultdriver.harness import crash
from tests.functional import base
from tests.functional.move_steps import MoveStepsMixin
from tests.functional.move_steps import NEW
from tests.functional.move_steps import OLD

ROLE = {'src': 'source', 'dest': 'dest'}
PEER = {'src': 'dest', 'dest': 'src'}


class _CrashAtStep(MoveStepsMixin):
    """One row: HOST crashes at POINT of the move (of the confirm or revert
    if FINISH is set); outcomes at the crash and after HOST restarts."""

    HOST = POINT = EVENT = None
    #: None, 'confirm' or 'revert': the crash is armed once VERIFY_RESIZE.
    FINISH = None
    AT_CRASH = AFTER_RESTART = None

    def rule(self):
        return '%s@%s: crash' % (self.POINT, ROLE[self.HOST])

    def setUp(self):
        if self.FINISH is None:
            self.RULES = {self.HOST: [self.rule()]}
        super().setUp()

    def crash_during_move(self):
        server = self.boot()
        self.start_move(server)
        if self.FINISH:
            self.wait_server(server, ('VERIFY_RESIZE', None, 'dest'))
            self.faults.set_rules(self.HOST, [self.rule()])
            self.finish_move(server, self.FINISH)
        self.faults.wait_for_hit(self.HOST, self.POINT)
        [fired] = self.faults.journal(self.HOST)
        self.assertEqual((self.POINT, 'crash', ROLE[self.HOST]),
                         (fired['point'], fired['action'], fired['role']))
        self.assertIs(False, self.event_finished(server, self.EVENT))
        return server

    def test_crash(self):
        server = self.crash_during_move()
        peer = PEER[self.HOST]
        self.assert_outcome(server, self.AT_CRASH, periodic=[peer])
        self.wait_service_state(self.HOST, 'down')
        self.wait_service_state(peer, 'up')

        self.faults.restart(self.HOST)
        self.wait_service_state(self.HOST, 'up')
        self.assert_outcome(server, self.AFTER_RESTART, periodic=self.HOSTS)
        self.check_after_restart(server)

    def check_after_restart(self, server):
        """What else a row asserts once the crashed host is back."""


class TestCrashSourceInMigrateDiskAndPowerOff(_CrashAtStep,
                                              base.FaultTestBase):
    """Source dies while powering off and copying disks.

    The destination keeps its claim (NEW pinned) while the instance is in
    RESIZE_MIGRATING.  On restart ``init_host`` reverts the guest and
    clears the task, so the server is ACTIVE on the source again, but
    **Nova bug**: the migration stays ``migrating`` forever and placement
    is not reverted -- the instance's allocation (NEW) sits on the
    destination, where nothing runs, while the migration consumer holds
    the source, where the guest runs.  The pins are right once the
    periodics ran (OLD on the source, none on the destination).
    """

    OPERATION = 'resize'
    HOST, POINT, EVENT = 'src', 'migrate_disk_and_power_off', \
        'compute_resize_instance'
    AT_CRASH = (('RESIZE', 'resize_migrating', 'src'), 'migrating',
                {'dest': NEW}, {'src': OLD}, {'src': OLD, 'dest': NEW})
    AFTER_RESTART = (('ACTIVE', None, 'src'), 'migrating',
                     {'dest': NEW}, {'src': OLD}, {'src': OLD})


class TestCrashDestInFinishMigration(_CrashAtStep, base.FaultTestBase):
    """Destination dies in finish_migration (cold migration).

    The source already handed the instance over (host dest, context
    applied and saved with task RESIZE_FINISH).  **Nova bug**: a restart
    of the destination does not handle RESIZE_FINISH, so the server stays
    RESIZE/resize_finish, the migration ``post-migrating`` and both hosts
    keep their pins and allocations, until an admin intervenes; no guest
    was started on the destination.
    """

    OPERATION = 'migration'
    HOST, POINT, EVENT = 'dest', 'finish_migration', 'compute_finish_resize'
    AT_CRASH = (('RESIZE', 'resize_finish', 'dest'), 'post-migrating',
                {'dest': NEW}, {'src': OLD}, {'src': OLD, 'dest': NEW})
    AFTER_RESTART = AT_CRASH

    def check_after_restart(self, server):
        self.assertNotIn(server['id'], self.guests('dest'))


class TestCrashSourceInConfirmMigration(_CrashAtStep, base.FaultTestBase):
    """Source dies in confirm_migration (resize, confirm).

    The migration is ``confirming``, the server VERIFY_RESIZE on the
    destination.  **Nova bug**: nothing ever retries the confirmation:
    after the restart the source still pins OLD and the migration
    consumer still holds OLD on the source (the ``finally:`` that deletes
    it never ran), and the API refuses a second confirmation because the
    migration is no longer ``finished``.
    """

    OPERATION = 'resize'
    FINISH = 'confirm'
    HOST, POINT, EVENT = 'src', 'confirm_migration', 'compute_confirm_resize'
    AT_CRASH = (('VERIFY_RESIZE', None, 'dest'), 'confirming',
                {'dest': NEW}, {'src': OLD}, {'src': OLD, 'dest': NEW})
    AFTER_RESTART = AT_CRASH

    def check_after_restart(self, server):
        error = self.assertRaises(api_client.OpenStackApiException,
                                  self.finish_move, server, 'confirm')
        self.assertEqual(400, error.response.status_code)


class TestRestartRightAfterTheCrash(TestCrashSourceInConfirmMigration):
    """The same crash, the source restarted as soon as the journal shows
    the hit.  The journal records a fault before the crash takes hold
    (the host marked crashed, the thread blocked); the restart waits for
    that.  Before it did, a restart in between reaped the host first and
    the thread unwound as a live one, running the confirm's ``finally:``
    (the migration consumer's allocation on the source and the stashed
    flavors deleted): the window is widened here so that it would.
    """

    def test_crash(self):
        real = crash.InProcessCrash.crash

        def slow_to_block(crashes, host, block_current_thread=True):
            found = real(crashes, host, block_current_thread)
            if not block_current_thread:
                time.sleep(1)       # marked crashed, not blocked yet
            return found
        self.useFixture(fixtures.MonkeyPatch(
            'faultdriver.harness.crash.InProcessCrash.crash', slow_to_block))
        server = self.crash_during_move()
        self.faults.restart(self.HOST)
        self.wait_service_state(self.HOST, 'up')
        self.assert_outcome(server, self.AFTER_RESTART, periodic=self.HOSTS)
        self.check_after_restart(server)


class TestCrashDestInDestroyDuringRevert(_CrashAtStep, base.FaultTestBase):
    """Destination dies in destroy during revert_resize (resize, revert).

    ``destroy`` has no fixed role: the rule ``destroy@dest`` fires because
    faultdriver finds the instance's ``reverting`` migration.  **Nova
    bug**: ``init_host`` does not handle RESIZE_REVERTING, so after the
    restart the server stays REVERT_RESIZE on the destination, the
    migration ``reverting``, both allocations and both pins stay, and the
    new guest was never destroyed.
    """

    OPERATION = 'resize'
    FINISH = 'revert'
    HOST, POINT, EVENT = 'dest', 'destroy', 'compute_revert_resize'
    AT_CRASH = (('REVERT_RESIZE', 'resize_reverting', 'dest'), 'reverting',
                {'dest': NEW}, {'src': OLD}, {'src': OLD, 'dest': NEW})
    AFTER_RESTART = AT_CRASH

    def check_after_restart(self, server):
        self.assertIn(server['id'], self.guests('dest'))


class TestCrashSourceInFinishRevertMigration(_CrashAtStep,
                                             base.FaultTestBase):
    """Source dies in finish_revert_migration (cold migration, revert).

    The destination finished its half (migration ``reverted``, its pins
    dropped) and the source already moved host and allocation back.
    **Nova bug**: ``init_host`` does not handle RESIZE_REVERTING, so the
    server stays REVERT_RESIZE/resize_reverting on the source for good,
    although placement and the pins are consistent.
    """

    OPERATION = 'migration'
    FINISH = 'revert'
    HOST, POINT, EVENT = 'src', 'finish_revert_migration', \
        'compute_finish_revert_resize'
    AT_CRASH = (('REVERT_RESIZE', 'resize_reverting', 'src'), 'reverted',
                {'src': OLD}, {}, {'src': OLD})
    AFTER_RESTART = AT_CRASH


class TestCrashDestInGetHostIpAddrUnderTrackerLock(_CrashAtStep,
                                                   base.FaultTestBase):
    """Destination dies in get_host_ip_addr, inside resize_claim, holding
    the resource tracker lock.

    The claim stopped before the migration context was set: nothing is
    pinned on the destination, but the instance already holds NEW there
    and the migration consumer OLD on the source.

    What the in-process harness does with the lock: ``compute_resources``
    is one lock per *process*, and here both hosts share the process; a
    real source, in its own process, never waits for a dead
    destination's lock.  The crashed thread lets go of it while it waits
    (faultdriver.harness.crash), so the source's periodic runs while the
    destination is down, as it would for real; restarted, the thread
    takes the lock back and its unwinding releases it.

    **Nova bug**: nothing times out a RESIZE_PREP.  Restarting the
    destination changes nothing (the instance's host is the source);
    restarting the source clears the task (``init_host``) but leaves the
    migration ``pre-migrating`` and both allocations: the instance's NEW
    allocation on the destination leaks.
    """

    OPERATION = 'resize'
    HOST, POINT, EVENT = 'dest', 'get_host_ip_addr', 'compute_prep_resize'
    AT_CRASH = (('RESIZE', 'resize_prep', 'src'), 'pre-migrating',
                {'dest': NEW}, {'src': OLD}, {'src': OLD})
    AFTER_RESTART = AT_CRASH
    AFTER_SOURCE_RESTART = (('ACTIVE', None, 'src'), 'pre-migrating',
                            {'dest': NEW}, {'src': OLD}, {'src': OLD})

    def test_crash(self):
        server = self.crash_during_move()
        self.assert_outcome(server, self.AT_CRASH)

        # (Joined with a bound only so that a stall fails the test
        # instead of hanging the suite.)
        periodic = threading.Thread(target=self.run_periodic, args=('src',),
                                    daemon=True)
        periodic.start()
        periodic.join(120)
        self.assertFalse(periodic.is_alive(),
                         "the source's periodic waits for the dead "
                         "destination's tracker lock")
        self.wait_service_state('dest', 'down')
        self.wait_service_state('src', 'up')

        self.faults.restart('dest')
        self.wait_service_state('dest', 'up')
        self.assertIsNone(crash._tracker_lock().owner)
        self.assert_outcome(server, self.AFTER_RESTART, periodic=self.HOSTS)

        self.faults.restart('src')
        self.assert_outcome(server, self.AFTER_SOURCE_RESTART,
                            periodic=self.HOSTS)


class TestRollbackAtMigrateDiskAndPowerOff(MoveStepsMixin,
                                           base.FaultTestBase):
    """InstanceFaultRollback from the source driver (cold migration):
    Nova's handlers put the server back to ACTIVE on the source, the
    migration to ``error`` and the allocation back to the instance on the
    source; the destination's pins go with its next periodic.
    """

    OPERATION = 'migration'
    RULES = {'src': ['migrate_disk_and_power_off@source: '
                     'raise(InstanceFaultRollback)']}

    def test_rolls_back_to_the_source(self):
        server = self.boot()
        self.start_move(server)
        self.wait_migration(server, 'error')
        self.wait_event(server, 'compute_resize_instance')
        self.assert_outcome(server, (
            ('ACTIVE', None, 'src'), 'error', {'src': OLD}, {},
            {'src': OLD}), periodic=self.HOSTS)
        for host in self.HOSTS:
            self.wait_service_state(host, 'up')


class TestResizeErrorAtFinishMigration(MoveStepsMixin, base.FaultTestBase):
    """ResizeError from the destination driver (resize): the server goes
    to ERROR on the destination with the NEW flavor's allocation and pins
    there, the migration to ``error``; finish_resize's handler deletes the
    migration consumer's allocation and the source unpins OLD with its
    next periodic (an ERROR instance is not resizing any more).
    """

    OPERATION = 'resize'
    RULES = {'dest': ['finish_migration@dest: raise(ResizeError)']}

    def test_errors_out_on_the_destination(self):
        server = self.boot()
        self.start_move(server)
        self.wait_migration(server, 'error')
        self.wait_event(server, 'compute_finish_resize')
        self.assert_outcome(server, (
            ('ERROR', None, 'dest'), 'error', {'dest': NEW}, {},
            {'dest': NEW}), periodic=self.HOSTS)


class TestHoldFinishMigration(MoveStepsMixin, base.FaultTestBase):
    """A hang in finish_migration shows the step's window (resize): the
    host is already the destination, the task resize_finish, the
    migration ``post-migrating``, both hosts pin; released, the resize
    reaches VERIFY_RESIZE and a confirm leaves only NEW on the
    destination.
    """

    OPERATION = 'resize'
    RULES = {'dest': ['finish_migration@dest: hang(30)']}

    def test_window_then_confirm(self):
        server = self.boot()
        self.start_move(server)
        self.faults.wait_for_hit('dest', 'finish_migration')
        self.assert_outcome(server, (
            ('RESIZE', 'resize_finish', 'dest'), 'post-migrating',
            {'dest': NEW}, {'src': OLD}, {'src': OLD, 'dest': NEW}),
            periodic=self.HOSTS)

        self.assertEqual(1, self.faults.release('dest', 'finish_migration'))
        self.wait_server(server, ('VERIFY_RESIZE', None, 'dest'))
        self.assertEqual('finished', self.migration(server)['status'])
        self.finish_move(server, 'confirm')
        self.wait_event(server, 'compute_confirm_resize')
        self.assert_outcome(server, (
            ('ACTIVE', None, 'dest'), 'confirmed', {'dest': NEW}, {},
            {'dest': NEW}), periodic=self.HOSTS)


class TestDelayMigrateDiskAndPowerOff(MoveStepsMixin, base.FaultTestBase):
    """A delay in migrate_disk_and_power_off only stretches the step (cold
    migration): the step returns at least the delay after it was entered,
    then the migration finishes and a confirm leaves the server, its
    allocation and its pins on the destination only.
    """

    OPERATION = 'migration'
    DELAY = 2
    RULES = {'src': [
        'migrate_disk_and_power_off@source: delay(%d)' % DELAY,
        'migrate_disk_and_power_off.after@source: log(returned)']}

    def test_stretches_then_confirm(self):
        server = self.boot()
        self.start_move(server)
        self.wait_server(server, ('VERIFY_RESIZE', None, 'dest'))
        entered, returned = self.faults.journal('src')
        self.assertEqual([('before', 'delay'), ('after', 'log')],
                         [(entered['phase'], entered['action']),
                          (returned['phase'], returned['action'])])
        self.assertGreaterEqual(returned['time'] - entered['time'],
                                self.DELAY)

        self.finish_move(server, 'confirm')
        self.wait_event(server, 'compute_confirm_resize')
        self.assert_outcome(server, (
            ('ACTIVE', None, 'dest'), 'confirmed', {'dest': NEW}, {},
            {'dest': NEW}), periodic=self.HOSTS)
