"""The recognisers of doc/findings.rst's findings (sweep/recognisers.py)
against the cases each finding was recorded at: each takes its own and
rejects every other finding's (labelling a new bug known hides it), and
the groups the findings leave unnumbered stay unrecognised.

The recorded values: from the reduced sweep of live-migration-bfv of
2026-12-06 (tests/unit/data/sweep-live-migration-bfv.jsonl, as a sweep
wrote them) and the functional tests' recorded actuals; the others
written as the invariants word them, with the values doc/findings.rst
gives for the finding (``src: 0 pinned / 2 PCPU`` ...).
"""

import json
import os

import pytest

from faultdriver.scenario import model
from faultdriver.sweep import causes
from faultdriver.sweep import findings
from faultdriver.sweep import recognisers

DATA = os.path.join(os.path.dirname(__file__), 'data')

STALE = ['dest: 1 periodic error(s) (CPUPinningInvalid)',
         "the tracker applied the migration context of a migration in "
         "status 'error'"]
PINNING = ['dest: 1 periodic error(s) (CPUPinningInvalid)']
SRC_LEAK = {'src': '0 pinned / 2 PCPU', 'dest': '4 pinned / 4 PCPU'}
DEST_LEAK = {'src': '2 pinned / 2 PCPU', 'dest': '2 pinned / 4 PCPU'}
MIGRATION_ON_SRC = ['src holds 20 DISK_GB, 2048 MEMORY_MB, 2 PCPU for '
                    'migration s1#1 (error)']
SRC_BINDING = ['port 88dae9fa of s1 (on dest) has bindings dest ACTIVE, '
               'src INACTIVE']
AWAY = ["s1 (away): migration of s1 ended 'error', not 'completed'"]

#: (finding, operation, point, host, phase, action, invariant, actual)
RECORDED = [
    # F1: the seed, dest's pre-checks, the claim's resource update; a
    # resize's source raising in migrate_disk_and_power_off.
    ('F1', 'live-migration', 'pre_live_migration', 'dest', 'before',
     'crash', 'periodics-clean', STALE),
    ('F1', 'live-migration', 'check_source_migrate_data_at_dest', 'dest',
     'after', 'raise', 'periodics-clean', STALE),
    ('F1', 'live-migration', 'update_provider_tree', 'dest', 'before',
     'crash', 'periodics-clean', STALE),
    ('F1', 'resize', 'migrate_disk_and_power_off', 'src', 'after', 'raise',
     'periodics-clean', STALE),
    # F3: the rollback of a destination crash in pre_live_migration stops
    # before it resets the task state (recover's reset-state shows it).
    ('F3', 'live-migration', 'pre_live_migration', 'dest', 'before',
     'crash', 'outcome-after-failure',
     {'s1': 'task state migrating (recover reset it), migration error '
      'where Nova promises rolled back: ACTIVE on src, no task state, '
      'migration failed (compute/manager.py:ComputeManager.'
      '_do_pre_live_migration_from_source)'}),
    # F4: the source's live_migration fails before the transfer.
    ('F4', 'live-migration', 'live_migration', 'src', 'before', 'raise',
     'accounting-matches-placement', DEST_LEAK),
    ('F4', 'live-migration', 'live_migration', 'src', 'before', 'crash',
     'moves-again', AWAY),
    ('F4', 'live-migration', 'live_migration', 'src', 'before', 'raise',
     'allocations-consistent',
     ['dest holds 2048 MEMORY_MB, 2 PCPU for s1, which is on src']),
    ('F4', 'live-migration', 'live_migration', 'src', 'before', 'crash',
     'volume-attachments',
     ['volume 5e1f0c2a of s1 has 2 attachments (src, dest)']),
    ('F4', 'live-migration', 'live_migration', 'src', 'before', 'raise',
     'port-bindings',
     ['port 88dae9fa of s1 (on src) has bindings dest INACTIVE, '
      'src ACTIVE']),
    # F5: dest's post_live_migration_at_destination (and get_info's
    # crash), the source's driver steps after the guest moved.
    ('F5', 'live-migration', 'post_live_migration_at_destination', 'dest',
     'after', 'raise', 'accounting-matches-placement', SRC_LEAK),
    ('F5', 'live-migration', 'post_live_migration_at_destination', 'dest',
     'before', 'crash', 'allocations-consistent',
     ['src holds 2048 MEMORY_MB, 2 PCPU for migration s1#1 (error)']),
    ('F5', 'live-migration', 'get_info', 'dest', 'after', 'crash',
     'accounting-matches-placement', SRC_LEAK),
    ('F5', 'live-migration', 'post_live_migration_at_source', 'src',
     'before', 'raise', 'accounting-matches-placement', SRC_LEAK),
    ('F5', 'live-migration', 'cleanup', 'src', 'after', 'crash',
     'moves-again', AWAY),
    # F6: the source's resource update in _post_live_migration.
    ('F6', 'live-migration', 'get_available_resource', 'src', 'before',
     'crash', 'migrations-terminal', ['s1#1 running']),
    ('F6', 'live-migration', 'get_available_resource', 'src', 'after',
     'crash', 'accounting-matches-placement', SRC_LEAK),
    ('F6', 'live-migration', 'update_provider_tree', 'src', 'before',
     'crash', 'periodics-clean', PINNING),
    ('F6', 'live-migration', 'update_provider_tree', 'src', 'after',
     'raise', 'accounting-matches-placement', SRC_LEAK),
    # F8: dest's finish_resize.
    ('F8', 'resize', 'finish_migration', 'dest', 'before', 'crash',
     'migrations-terminal', ['s1#1 post-migrating']),
    ('F8', 'migration', 'finish_migration', 'dest', 'after', 'crash',
     'accounting-matches-placement', SRC_LEAK),
    ('F8', 'resize', 'finish_migration', 'dest', 'after', 'crash',
     'periodics-clean', PINNING),
    ('F8', 'resize', 'finish_migration', 'dest', 'before', 'crash',
     'moves-again', AWAY),
    # F9: dest's prep_resize claim and its resource update.
    ('F9', 'resize', 'tracker.resize_claim', 'dest', 'after', 'crash',
     'migrations-terminal', ['s1#1 pre-migrating']),
    ('F9', 'resize', 'capabilities_as_traits', 'dest', 'before', 'crash',
     'accounting-matches-placement',
     {'src': '2 pinned / 2 PCPU', 'dest': '2 pinned / 3 PCPU'}),
    ('F9', 'resize', 'update_provider_tree', 'dest', 'after', 'crash',
     'periodics-clean', PINNING),
    # F10: dest's rebuild of an evacuation.
    ('F10', 'evacuation', 'spawn', 'dest', 'before', 'crash',
     'accounting-matches-placement',
     {'src': '2 pinned / 0 PCPU', 'dest': '2 pinned / 4 PCPU'}),
    ('F10', 'evacuation', 'tracker.rebuild_claim', 'dest', 'after',
     'crash', 'moves-again', AWAY),
    # F22: the revert's move of the allocations back fails to connect.
    ('F22', 'resize', 'placement.move_allocations', 'src', 'before',
     'connfail', 'allocations-consistent',
     ['dest holds 20 DISK_GB, 2048 MEMORY_MB, 1 PCPU for s1, which is on '
      'src', 'src holds 20 DISK_GB, 2048 MEMORY_MB, 2 PCPU for migration '
      's1#1 (reverted)', 'src holds nothing for s1, which is on it']),
    ('F22', 'resize', 'placement.move_allocations', 'src', 'after',
     'connfail', 'accounting-matches-placement',
     {'src': '2 pinned / 2 PCPU', 'dest': '2 pinned / 3 PCPU'}),
    # F26: the migration's allocation delete at the end of a live
    # migration fails to connect (live-migration-bfv's sweep).
    ('F26', 'live-migration', 'placement.delete_allocation_for_instance',
     'src', 'before', 'connfail', 'allocations-consistent',
     ['src holds 2048 MEMORY_MB, 2 PCPU for migration s1#1 (completed)']),
    ('F26', 'live-migration', 'placement.delete_allocation_for_instance',
     'src', 'after', 'connfail', 'accounting-matches-placement',
     {'src': '0 pinned / 2 PCPU', 'dest': '4 pinned / 4 PCPU'}),
    # F26 at a resize's confirm (resize-confirm's sweep).
    ('F26', 'resize', 'placement.delete_allocation_for_instance', 'src',
     'before', 'connfail', 'allocations-consistent',
     ['src holds 20 DISK_GB, 2048 MEMORY_MB, 2 PCPU for migration s1#1 '
      '(confirmed)']),
    ('F26', 'resize', 'placement.delete_allocation_for_instance', 'src',
     'after', 'connfail', 'accounting-matches-placement',
     {'src': '0 pinned / 2 PCPU', 'dest': '3 pinned / 3 PCPU'}),
    # F11: a graceful stop's hold on the source.
    ('F11', 'live-migration', 'live_migration', 'src', 'before',
     'shutdown-hold', 'allocations-consistent', MIGRATION_ON_SRC),
    ('F11', 'live-migration', 'post_live_migration_at_source', 'src',
     'after', 'shutdown-hold', 'accounting-matches-placement', SRC_LEAK),
    # F15: the source's binding left after the port moved.
    ('F15', 'live-migration', 'post_live_migration_at_destination', 'dest',
     'before', 'raise', 'port-bindings', SRC_BINDING),
    ('F15', 'live-migration', 'post_live_migration_at_source', 'src',
     'before', 'raise', 'port-bindings', SRC_BINDING),
    ('F15', 'live-migration', 'get_info', 'dest', 'after', 'crash',
     'port-bindings', SRC_BINDING),
    ('F15', 'live-migration', 'cleanup', 'src', 'after', 'raise',
     'moves-again', ['s1 (away): Binding failed for port 88dae9fa']),
    # F16: a graceful stop at a pre-check (functional test's values).
    ('F16', 'live-migration', 'check_can_live_migrate_source', 'src',
     'before', 'shutdown', 'outcome-after-shutdown',
     {'s1': {'status': 'ACTIVE', 'host': 'src', 'migrations': ['error']}}),
    ('F16', 'live-migration', 'check_can_live_migrate_source', 'src',
     'after', 'shutdown', 'allocations-consistent', MIGRATION_ON_SRC),
    ('F16', 'live-migration', 'get_host_ip_addr', 'dest', 'before',
     'shutdown', 'port-bindings', SRC_BINDING),
    # F17: the source's crash in a resize's confirm.
    ('F17', 'resize', 'confirm_migration', 'src', 'before', 'crash',
     'migrations-terminal', ['s1#1 confirming']),
    ('F17', 'migration', 'confirm_migration', 'src', 'after', 'crash',
     'servers-settled', ['s1 VERIFY_RESIZE/None']),
    ('F17', 'resize', 'tracker.drop_move_claim_at_source', 'src', 'before',
     'crash', 'step-failed', 'confirm: Instance has not been resized. '
     '(HTTP 400)'),
    ('F17', 'resize', 'tracker.drop_move_claim_at_source', 'src', 'after',
     'crash', 'allocations-consistent',
     ['src holds 2048 MEMORY_MB, 2 PCPU for migration s1#1 (confirmed)']),
    # F19: dest still tracks the move.
    ('F19', 'live-migration', 'live_migration', 'src', 'before', 'crash',
     'tasks-ended', {'dest': ['live_migration_at_dest (s1)']}),
    ('F19', 'live-migration', 'cleanup', 'src', 'after', 'raise',
     'tasks-ended', {'dest': ['live_migration_at_dest (s1)']}),
    ('F19', 'migration', 'migrate_disk_and_power_off', 'src', 'before',
     'crash', 'tasks-ended', {'dest': ['prep_resize_at_dest (s1)']}),
    # ... and the user's delete while dest's resize claim is held (the
    # second-call sweep of F9's fix, stock and patched, 2026-12-07).
    ('F19', 'resize', 'tracker.resize_claim', 'dest', 'after',
     'second-call(delete)', 'tasks-ended',
     {'dest': ['prep_resize_at_dest (25abfd80-c598-46e8-aa5b-'
               '454e92215add)']}),
    # F20: the user's delete while the live migration is held.
    ('F20', 'live-migration', 'live_migration', 'src', 'before',
     'second-call(delete)', 'allocations-consistent',
     ['src holds 20 DISK_GB, 2048 MEMORY_MB, 2 PCPU for 42d5de6b-3aaa-4f4c-'
      '9afb-3cedebf592fd, no server or migration of the scenario']),
    ('F20', 'live-migration', 'live_migration', 'src', 'before',
     'second-call(delete)', 'accounting-matches-placement',
     {'src': '0 pinned / 2 PCPU', 'dest': '2 pinned / 2 PCPU'}),
    # ... and while src's post_live_migration is held (F6's second-call
    # sweep, 2026-12-07).
    ('F20', 'live-migration', 'post_live_migration', 'src', 'after',
     'second-call(delete)', 'allocations-consistent',
     ['src holds 20 DISK_GB, 2048 MEMORY_MB, 2 PCPU for 69593b03-1cb0-4128-'
      'b4da-e10117202f6a, no server or migration of the scenario']),
    # ... and while its driver step is held, on real processes (F15's
    # second-call A/B sweep of live-migration-bfv, 2026-12-07).
    ('F20', 'live-migration', 'post_live_migration_at_source', 'src',
     'before', 'second-call(delete)', 'allocations-consistent',
     ['src holds 512 MEMORY_MB, 2 PCPU for 84fd3757-3314-4721-95ef-'
      '1b71d5293571, no server or migration of the scenario']),
    ('F20', 'live-migration', 'capabilities_as_traits', 'dest', 'after',
     'second-call(delete)', 'tasks-ended',
     {'dest': ['live_migration_at_dest (fd29aa68)']}),
    # F23: src's crash in the shelve's snapshot; the sweep's recover
    # reset the task state (reduced shelve-unshelve sweep, 2026-12-07),
    # the scenario without it shows servers-settled broken.
    ('F23', 'shelve', 'snapshot', 'src', 'before', 'crash',
     'outcome-after-failure',
     {'s1': 'task state shelving (recover reset it) where Nova promises '
      'rolled back: ACTIVE on src, no task state, migration none '
      '(compute/manager.py:ComputeManager._init_instance)'}),
    ('F23', 'shelve', 'snapshot', 'src', 'after', 'crash',
     'outcome-after-failure',
     {'s1': 'task state shelving_image_uploading (recover reset it) where '
      'Nova promises rolled back: ACTIVE on src, no task state, migration '
      'none (compute/manager.py:ComputeManager._init_instance)'}),
    ('F23', 'shelve', 'snapshot', 'src', 'before', 'crash',
     'servers-settled', ['s1 ACTIVE/shelving']),
    # F24: the crash cases before the unshelve's claim (reduced
    # shelve-unshelve sweep --points tracker.instance_claim,spawn,
    # 2026-12-07; recover reset the task state), and its scenario.
    ('F24', 'shelve', 'tracker.instance_claim', 'src', 'before', 'crash',
     'allocations-consistent',
     ['src holds 20 DISK_GB, 2048 MEMORY_MB, 2 PCPU for s1, which is on '
      'None']),
    ('F24', 'shelve', 'tracker.instance_claim', 'src', 'unlocked', 'crash',
     'accounting-matches-placement',
     {'src': '0 pinned / 2 PCPU', 'dest': '2 pinned / 2 PCPU'}),
    ('F24', 'shelve', 'tracker.instance_claim', 'src', 'before', 'crash',
     'servers-settled', ['s1 SHELVED_OFFLOADED/spawning']),
    ('F24', 'shelve', 'tracker.instance_claim', 'src', 'unlocked', 'crash',
     'outcome-after-failure',
     {'s1': 'status ACTIVE, task state spawning (recover reset it) where '
      'Nova promises rolled back: SHELVED_OFFLOADED on no host, no task '
      'state, migration none (compute/manager.py:ComputeManager.'
      '_error_out_instances_whose_build_was_interrupted)'}),
    # F21: the user's delete while the confirm is held.
    ('F21', 'resize', 'confirm_migration', 'src', 'after',
     'second-call(delete)', 'second-call',
     [{'server': 's1', 'call': 'delete', 'host': 'src',
       'point': 'confirm_migration', 'phase': 'after', 'answer': None,
       'error': 'OpenStackApiException: Unexpected status code: '
       '{"computeFault": {"code": 500, "message": "Unexpected API Error. '
       "<class 'oslo_messaging.exceptions.MessagingTimeout'>\"}}",
       'verdict': 'unclean'}]),
]

#: What doc/findings.rst names without a finding number, and a known
#: finding's symptom where it was not recorded: never labelled known.
UNRECOGNISED = [
    # A delete the API refused or took cleanly, or another call.
    ('resize', 'confirm_migration', 'src', 'after', 'second-call(revert)',
     'second-call', [{'call': 'revert', 'answer': None,
                      'error': 'code": 500'}]),
    ('live-migration', 'live_migration', 'src', 'before',
     'second-call(stop)', 'accounting-matches-placement',
     {'src': '0 pinned / 2 PCPU', 'dest': '2 pinned / 2 PCPU'}),
    # Bug 1836369: the resize's source crash in migrate_disk_and_power_off.
    ('resize', 'migrate_disk_and_power_off', 'src', 'before', 'crash',
     'migrations-terminal', ['s1#1 migrating']),
    ('resize', 'migrate_disk_and_power_off', 'src', 'before', 'crash',
     'periodics-clean', PINNING),
    # The get_info power-state window.
    ('live-migration', 'get_info', 'dest', 'before', 'raise',
     'moves-again', AWAY),
    # InstanceFaultRollback at an evacuation's rebuild.
    ('evacuation', 'rebuild', 'dest', 'before', 'raise', 'moves-again',
     AWAY),
    # The evacuation left done by a hold of dest's rebuild.
    ('evacuation', 'spawn', 'dest', 'before', 'shutdown-hold',
     'migrations-terminal', ['s1#2 done']),
    # F1's invariant where F1 is not recorded: src's pre-check.
    ('live-migration', 'check_can_live_migrate_source', 'src', 'before',
     'crash', 'periodics-clean', STALE),
    # F5's step, an invariant F5 does not break.
    ('live-migration', 'post_live_migration_at_destination', 'dest',
     'before', 'crash', 'pcpus-not-shared', ['dest pCPU 0: s1, s2']),
    # F9's step and invariant on a live migration (F1's there).
    ('live-migration', 'update_provider_tree', 'dest', 'before', 'crash',
     'migrations-terminal', ['s1#1 pre-migrating']),
    # F5's step, the accounting the other way round.
    ('live-migration', 'post_live_migration_at_destination', 'dest',
     'before', 'raise', 'accounting-matches-placement', DEST_LEAK),
    # A shelve's task state where F23 is not recorded: the shelve's
    # power_off, and a raise at its snapshot.
    ('shelve', 'power_off', 'src', 'before', 'crash', 'servers-settled',
     ['s1 ACTIVE/shelving']),
    ('shelve', 'snapshot', 'src', 'before', 'raise',
     'outcome-after-failure', {'s1': 'task state shelving'}),
    # An unshelve left spawning (no finding records it).
    ('shelve', 'spawn', 'src', 'before', 'crash', 'servers-settled',
     ['s1 SHELVED_OFFLOADED/spawning']),
    # A periodic at F5's step (timing only).
    ('live-migration', 'post_live_migration_at_destination', 'dest',
     'before', 'periodic', 'accounting-matches-placement', SRC_LEAK),
]


def _seen(row):
    return recognisers.Seen(*row)


@pytest.mark.parametrize('row', RECORDED,
                         ids=['%s-%s-%s' % (r[0], r[2], r[6])
                              for r in RECORDED])
def test_each_recorded_case_is_its_finding_alone(row):
    """Its finding's recogniser takes it, every other one rejects it."""
    finding, seen = row[0], _seen(row[1:])
    takers = [r.finding for r in recognisers.RECOGNISERS
              if r.recognises(seen)]
    assert takers == [finding]


@pytest.mark.parametrize('row', UNRECOGNISED,
                         ids=['%s-%s-%s' % (r[1], r[3], r[5])
                              for r in UNRECOGNISED])
def test_what_no_finding_records_stays_unrecognised(row):
    assert recognisers.recognise(_seen(row)) == []


def test_every_recogniser_has_recorded_cases():
    recorded = {row[0] for row in RECORDED}
    assert {r.finding for r in recognisers.RECOGNISERS} == recorded
    # Each Where of each recogniser is reached by a recorded case.
    for recogniser in recognisers.RECOGNISERS:
        for where in recogniser.where:
            assert any(where.holds(_seen(row[1:])) for row in RECORDED
                       if row[0] == recogniser.finding), (
                recogniser.finding, where)


def test_bundled_scenarios_recognises_agree_with_the_recognisers():
    """A bundled scenario's ``recognises`` (what its file says it
    describes) is a sign of some recogniser: one table of what is
    known, the scenario's key its documentation."""
    signs = [s for r in recognisers.RECOGNISERS for s in r.signs]
    for name in model.bundled():
        for sign in model.load(name).data.get('recognises', ()):
            seen = recognisers.Seen('', '', '', '', '', sign['invariant'],
                                    sign['evidence'])
            assert any(s.shown_by(seen) for s in signs), (name, sign)


def _recorded_sweep():
    with open(os.path.join(DATA, 'sweep-live-migration-bfv.jsonl')) as f:
        return [json.loads(line) for line in f]


def test_the_reduced_bfv_sweep_reads_as_its_known_causes():
    """The issue's reduced sweep (``live-migration-bfv --points
    pre_live_migration,post_live_migration_at_destination --actions
    crash,raise``, its recorded results): 6 broken cases, F1's 2 and
    F5's 4 (whose port binding is F15's), each case's invariants under
    it."""
    found = findings.recognise(findings.group(_recorded_sweep()),
                               'live-migration')
    grouped = causes.group(found)
    assert causes.summary(grouped) == (
        '6 broken cases: 3 known (F1: 2, F5: 4, F15: 4), 0 unrecognised')
    assert [c.label for c in grouped] == ['F1', 'F5', 'F15']
    [one] = [case for case in grouped[1].cases
             if case.id == 'post_live_migration_at_destination.before@dest'
             ':raise']
    assert [(i.invariant, i.known) for i in one.invariants] == [
        ('accounting-matches-placement', 'F5'),
        ('allocations-consistent', 'F5'), ('port-bindings', 'F15')]


def test_unrecognised_causes_come_first_and_are_counted():
    results = _recorded_sweep()
    for result in results:
        if result['id'] == 'pre_live_migration.before@dest:raise':
            result['broken'] = ['pcpus-not-shared']
            result['details'] = [{'kind': 'pcpus-not-shared',
                                  'actual': ['dest pCPU 0: s1, s2']}]
    grouped = causes.group(findings.recognise(findings.group(results),
                                              'live-migration'))
    assert grouped[0].known is None
    assert grouped[0].label == ('unrecognised: pre_live_migration.*@dest '
                                '(raise): pcpus-not-shared')
    assert causes.summary(grouped) == (
        '7 broken cases: 3 known (F1: 2, F5: 4, F15: 4), 1 unrecognised '
        '(1 case)')


def test_a_second_fault_and_the_clean_runs_breaks_are_not_recognised():
    results = _recorded_sweep()
    first = 'pre_live_migration.before@dest:raise'
    second = dict(results[0], id=first + ' > x', first=first)
    found = findings.recognise(findings.group(results + [second],
                                              ('port-bindings',)),
                               'live-migration')
    assert {f['known'] for f in found if f['first']} == {None}
    assert 'port-bindings' not in {f['invariant'] for f in found}


def test_a_failed_step_is_recognised_by_its_error():
    """``step-failed`` saw the failed step and its error (F17: recover's
    confirm refused), as the sweep's results keep them."""
    from faultdriver.sweep import cases
    from faultdriver.sweep import execute
    case = cases.Case('confirm_migration', 'src', 'before', 'crash')
    result = execute.summarize(case, {
        'verdict': 'step failed', 'step_failed': 'recover',
        'expectations': [], 'timeline': [
            {'kind': 'recover', 'status': 'failed', 'seconds': 1.0,
             'detail': 'ClientError: Instance has not been resized. '
                       '(HTTP 400)'}]}, 'x.yaml', 1.0)
    assert result['broken'] == ['step-failed']
    [finding] = findings.recognise(findings.group([result]), 'resize')
    assert finding['actual'] == ('recover: ClientError: Instance has not '
                                 'been resized. (HTTP 400)')
    assert finding['known'] == 'F17'
