"""Step matrices as a sample, for the second concurrency mode in CI.

The step matrices (a crash, raise, hold... at every step of every move)
cost most of the functional suite's time; the mode changes how Nova
waits and switches threads, not which steps exist.  With
``FAULTDRIVER_STEP_SAMPLE=1`` (tox's ``all`` env sets it for eventlet
mode) only the SAMPLE classes of each matrix run: a source and a
destination crash of each flow, and each action kind; and the bundled
scenarios other than the seed (test_bundled_scenarios: a scenario run
each, in threading mode, the CLI's default) are left to the other mode
(the seed's A/B, test_scenario_cli, runs in both).  Every other
functional test runs in both modes; ``tox -e functional`` runs everything.
"""

import os

MATRICES = ('test_live_migration_steps.py', 'test_resize_steps.py',
            'test_evacuate_steps.py', 'test_live_migration_actions.py',
            'test_bundled_scenarios.py')
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


def pytest_collection_modifyitems(config, items):
    if os.environ.get('FAULTDRIVER_STEP_SAMPLE') != '1':
        return
    keep, drop = [], []
    for item in items:
        in_matrix = os.path.basename(str(item.path)) in MATRICES
        sampled = item.cls is not None and item.cls.__name__ in SAMPLE
        (drop if in_matrix and not sampled else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
