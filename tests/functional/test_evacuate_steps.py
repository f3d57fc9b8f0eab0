"""Faults in the destination's half of an evacuation.

Two libvirt hosts (fakelibvirt), the server with 2 pinned pCPUs on
``src``; ``src`` crashes (from the test's thread) and is reported down
before the evacuation starts, as the API demands.  The steps are those of
Nova 34's ComputeManager.rebuild_instance on the destination
(nova/compute/manager.py).

libvirt has no ``rebuild``: the wrapped ComputeDriver.rebuild raises
NotImplementedError and Nova falls back to ``_rebuild_default_impl``,
which calls ``spawn`` on the destination.  Each test checks that path
(``rebuild`` reached on the destination, its ``after`` phase never) and
injects its fault at ``spawn@dest``.

Outcome rows are as in test_resize_steps (OLD is the only flavor here).
"""

from tests.functional import base
from tests.functional.move_steps import MoveStepsMixin
from tests.functional.move_steps import OLD

#: Logged by the rules that show the driver path.
PATH_RULES = ['rebuild@dest: log("rebuild reached")',
              'rebuild.after@dest: log("rebuild returned")']


class _EvacuateStep(MoveStepsMixin):

    OPERATION = 'migration'      # an evacuation keeps the flavor
    FAULT = None                 # the spawn@dest action

    def setUp(self):
        self.RULES = {'dest': PATH_RULES + ['spawn@dest: ' + self.FAULT]}
        super().setUp()

    def evacuate_from_dead_source(self):
        server = self.boot()
        self.faults.crash_host('src')
        self.wait_service_state('src', 'down')
        self.admin_api.post_server_action(server['id'], {'evacuate': {}})
        self.faults.wait_for_hit('dest', 'spawn')
        path = [(e['point'], e['phase'], e['action'], e['role'],
                 e['operation']) for e in self.faults.journal('dest')]
        self.assertEqual([
            ('rebuild', 'before', 'log', 'dest', 'evacuation'),
            ('spawn', 'before', self.FAULT.split('(')[0], 'dest',
             'evacuation')], path)
        return server


class TestCrashDestInSpawn(_EvacuateStep, base.FaultTestBase):
    """The destination dies in spawn; then both hosts are restarted.

    At the crash: task rebuild_spawning, host still ``src``, migration
    ``pre-migrating``, the instance holding OLD on both hosts and both
    pinning it.  Restarting the destination changes nothing (its
    ``init_host`` skips an instance whose host is another compute) and
    its periodic keeps counting the incoming evacuation.

    **Nova bug** on restarting the source: ``_destroy_evacuated_instances``
    takes the ``pre-migrating`` evacuation for a finished one.  It
    destroys the only guest (on ``src``), deletes the source allocation
    and marks the migration ``completed``; the destination then drops its
    pins.  Left behind: a server stuck in REBUILD whose host ``src`` has
    no guest but still pins its pCPUs, with its allocation on ``dest``,
    where no guest was ever built.
    """

    FAULT = 'crash'

    def test_crash_then_restarts(self):
        server = self.evacuate_from_dead_source()
        self.assertIs(False, self.event_finished(
            server, 'compute_rebuild_instance'))
        at_crash = (('REBUILD', 'rebuild_spawning', 'src'), 'pre-migrating',
                    {'src': OLD, 'dest': OLD}, {}, {'src': OLD, 'dest': OLD})
        self.assert_outcome(server, at_crash)     # no host is alive
        self.assertEqual([server['id']], self.guests('src'))
        self.wait_service_state('dest', 'down')

        self.faults.restart('dest')
        self.wait_service_state('dest', 'up')
        self.assertEqual('down', self.service_state('src'))
        self.assert_outcome(server, at_crash, periodic=['dest'])
        self.assertEqual([], self.guests('dest'))

        self.faults.restart('src')
        self.wait_service_state('src', 'up')
        self.assert_outcome(server, (
            ('REBUILD', 'rebuild_spawning', 'src'), 'completed',
            {'dest': OLD}, {}, {'src': OLD}), periodic=self.HOSTS)
        self.assertEqual([], self.guests('src'))
        self.assertEqual([], self.guests('dest'))


class TestRaiseInSpawn(_EvacuateStep, base.FaultTestBase):
    """spawn raising InternalError: Nova's handlers run on the destination.

    The claim is aborted (the destination unpins at once), the destination
    allocation removed, the migration ``failed`` and the server ERROR on
    ``src``.  Restarting the source leaves the ``failed`` evacuation alone:
    the guest stays on ``src``, which keeps the server's allocation and
    pins, and the server stays in ERROR for an admin to handle.
    """

    FAULT = 'raise(InternalError)'

    def test_handlers_run_then_source_restarts(self):
        server = self.evacuate_from_dead_source()
        self.wait_event(server, 'compute_rebuild_instance')
        failed = (('ERROR', None, 'src'), 'failed', {'src': OLD}, {},
                  {'src': OLD})
        self.assert_outcome(server, failed, periodic=['dest'])
        self.wait_service_state('dest', 'up')

        self.faults.restart('src')
        self.wait_service_state('src', 'up')
        self.assert_outcome(server, failed, periodic=self.HOSTS)
        self.assertEqual([server['id']], self.guests('src'))
        self.assertEqual([], self.guests('dest'))
