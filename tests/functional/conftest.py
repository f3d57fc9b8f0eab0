"""How CI shares the functional tests between the two concurrency modes.

The step matrices (a crash, raise, hold... at every step of every move)
and the bundled scenarios (a ``scenario run`` each) cost most of the
suite's time; the mode changes how Nova waits and switches threads, not
which steps exist.  ``FAULTDRIVER_CI_SHARE`` (set by tox's ``all`` env,
see tests/functional/both-modes.sh) picks a mode's share:

* ``eventlet``: the SAMPLE classes of each matrix (a source and a
  destination crash of each flow, each action kind) and every bundled
  scenario;
* ``threading``: every matrix test and the reduced sweeps (their cases
  run in threading mode whatever the test's mode) but those of
  ``EVENTLET_SWEEPS``, which the eventlet share runs to even out the two
  (they cost the same in either process).

``THREADING_ONLY`` tests (classes or functions) run in the threading
share alone: a bundled scenario shows the same in eventlet mode, or what
they check is the step interpreter's own, the same in either mode.

The seed's A/B (test_scenario_cli) runs in both.

Every other functional test runs in both modes.  Unset (``tox -e
functional`` / ``functional-threading``), everything runs.
"""

import os

MATRICES = ('test_live_migration_steps.py', 'test_resize_steps.py',
            'test_evacuate_steps.py', 'test_live_migration_actions.py')
BUNDLED = 'test_bundled_scenarios.py'
#: Run their cases as subprocesses in threading mode whatever the test's
#: mode: once is enough.
SWEEPS = ('test_sweep.py', 'test_sweep_recall.py')
#: Reduced sweeps the eventlet share runs instead (see above).
EVENTLET_SWEEPS = {
    'test_reduced_shutdown_sweep_ends_moves_as_clean',
    'test_reduced_shutdown_sweep_finds_the_step_begun_after_the_wait',
    'test_reduced_bfv_sweep_finds_the_volume_and_port_left_behind',
    'test_reduced_depth_2_sweep_faults_the_recovery',
}
#: Tests the threading share runs alone: what they show in eventlet mode
#: a bundled scenario shows too (the eventlet share runs the bundled
#: scenarios, in eventlet mode).
THREADING_ONLY = {
    # graceful-shutdown-outlived-live-migration
    'TestShutdownOutlivedBySourceLiveMigration',
    # The step interpreter's waits and refusals (faultdriver's code, the
    # same in either mode).
    'test_decide_resize_waits_for_the_confirm_to_end',
    'test_recover_rules_for_a_host_it_does_not_start_fail_the_run',
}
SAMPLE = {
    # live migration: a crash on each side, one NUMA-claim window
    'TestCrashDestAfterClaim', 'TestCrashSourceAtLiveMigration',
    # cold migration / resize: each side, and a held window
    'TestCrashSourceInMigrateDiskAndPowerOff',
    'TestCrashDestInFinishMigration', 'TestHoldFinishMigration',
    # evacuation
    'TestCrashDestInSpawn',
    # actions: raise, hold, periodic
    'TestRaiseAtLiveMigration', 'TestHoldDestAtPreLiveMigration',
    'TestPeriodicAtPostLiveMigrationAtDestination',
}


def _dropped(share, item):
    name = os.path.basename(str(item.path))
    moved = name in SWEEPS and item.originalname in EVENTLET_SWEEPS
    if share == 'threading':
        return name == BUNDLED or moved
    if share == 'eventlet':
        if item.originalname in THREADING_ONLY or (
                item.cls is not None and item.cls.__name__ in THREADING_ONLY):
            return True
        return (name in SWEEPS and not moved) or (
            name in MATRICES and (item.cls is None or
                                  item.cls.__name__ not in SAMPLE))
    raise ValueError('FAULTDRIVER_CI_SHARE=%r: expected eventlet or '
                     'threading' % share)


def pytest_collection_modifyitems(config, items):
    share = os.environ.get('FAULTDRIVER_CI_SHARE')
    if not share:
        return
    drop = [item for item in items if _dropped(share, item)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if item not in drop]
