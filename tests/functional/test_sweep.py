"""Reduced sweeps, as a user runs them (``faultdriver sweep
live-migration --points ... --hosts ... --actions ...``).

Invariant: the sweep traces the workflow, runs one case per traced phase
of the step, and reports what breaks an invariant with a reproducer that
``scenario run`` replays.  What they find are Nova bugs: F4
(``live_migration`` raising MigrationError on the source before the
transfer leaves the move's PCPU allocation on dest) and the seed, F1,
recognised by its finding number and removed by its candidate fix
(``--ab``).
"""

import json
import os
import subprocess
import sys

import yaml

from faultdriver import scenarios as bundled
from tests import golden
from tests import novatree

#: The A/B sweep's document (4 cases), modulo ids, times and its
#: results directory (tests/golden.py says how to take it again).
GOLDEN_AB = os.path.join(os.path.dirname(__file__), 'data',
                         'sweep-ab.golden.json')


def faultdriver(*args, timeout=900):
    return subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main'] + list(args),
        capture_output=True, text=True, timeout=timeout,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))


def reduced_sweep(results, point, host, action, *more):
    """``faultdriver sweep live-migration`` of one step's two phases
    with one action; its JSON document."""
    done = faultdriver('sweep', 'live-migration', '--points', point,
                       '--hosts', host, '--actions', action, '--results',
                       str(results), '-f', 'json', *more)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_reduced_sweep_finds_the_leaked_allocation(tmp_path):
    # One worker: its runner process runs both cases, one after the
    # other, each on a fresh embedded Nova (sweep/served.py).
    doc = reduced_sweep(tmp_path, 'live_migration', 'src', 'raise',
                        '--workers', '1')
    assert {(c['point'], c['host'], c['phase'], c['action'])
            for c in doc['cases']} == {
        ('live_migration', 'src', 'before', 'raise'),
        ('live_migration', 'src', 'after', 'raise')}
    assert not any(c['internal_error'] for c in doc['cases'])
    found = {(f['invariant'], f['phase']): f for f in doc['findings']}
    finding = found[('accounting-matches-placement', 'before')]
    assert finding['actual']['dest'] == '2 pinned / 4 PCPU'
    # The computes' log of a case that broke an invariant is kept.
    with open(tmp_path / 'logs' /
              'case-live-migration-before-src-raise.compute.log') as log:
        assert 'FAULTDRIVER-INJECT point=live_migration.before host=src' \
            in log.read()

    # Resuming the same results directory runs nothing again.
    again = reduced_sweep(tmp_path, 'live_migration', 'src', 'raise')
    assert again['cases'] == doc['cases']

    replay = faultdriver('scenario', 'run', finding['scenario'], '-f',
                         'json')
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert json.loads(replay.stdout)['verdicts'] == {
        'stock': 'bug reproduced'}


def test_reduced_sweep_finds_the_seed_and_the_fix_removes_it(tmp_path):
    """The issue's done-when: a crash of dest at ``pre_live_migration``
    leaves an ``error`` migration; after recovery the follow-up round
    trip (moves-again) has dest's periodic apply the next move's context
    for it and fail (CPUPinningInvalid): the stale migration-context bug
    (doc/findings.rst F1), named by its bundled scenario.  With the
    candidate fix the same cases keep every invariant but the one F3
    breaks (a dest crash in pre_live_migration leaves the server
    MIGRATING: ``outcome-after-failure``), which the fix does not touch.
    Its document is the golden one (data/sweep-ab.golden.json)."""
    doc = reduced_sweep(tmp_path, 'pre_live_migration', 'dest', 'crash',
                        '--ab', 'stale_migration_context')
    # Every case's verdict, breaks and details, the findings, causes and
    # the A/B's comparison are what they were (issue 39 item 7).
    with open(GOLDEN_AB, encoding='utf-8') as saved:
        diff = golden.differences(saved.read(), doc, tmp_path)
    assert not diff, '\n'.join(diff[:200])
    stock = {(f['invariant'], f['phase']): f for f in doc['a']['findings']}
    seed = stock[('periodics-clean', 'before')]
    assert seed['known'] == 'F1'
    assert seed['actual'][0] == 'dest: 1 periodic error(s) (CPUPinningInvalid)'
    assert doc['b']['patches'] == ['stale_migration_context']
    assert [c['id'] for c in doc['b']['cases']] == \
        [c['id'] for c in doc['a']['cases']]
    # Only F3 is left, in both phases, exactly as on stock.
    assert sorted((f['invariant'], f['phase'], f['known'])
                  for f in doc['b']['findings']) == [
        ('outcome-after-failure', 'after', 'F3'),
        ('outcome-after-failure', 'before', 'F3')]
    assert {(f['invariant'], f['phase'], f['known'])
            for f in doc['a']['findings']} >= {
        ('outcome-after-failure', 'after', 'F3'),
        ('outcome-after-failure', 'before', 'F3')}
    assert {(f['invariant'], f['phase'], f['known'])
            for f in doc['ab']['removed']} >= {
        ('periodics-clean', 'before', 'F1')}
    assert doc['ab']['added'] == []

    replay = faultdriver('scenario', 'run', seed['scenario'], '-f', 'json')
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert json.loads(replay.stdout)['verdicts'] == {
        'stock': 'bug reproduced'}


def test_a_hang_is_released_after_every_hosts_periodic(tmp_path):
    """``hang`` cases: recover lets the held move stop changing, runs
    every host's periodic while the thread is held, then releases it and
    goes on as for any case; the sweep records what it did."""
    doc = reduced_sweep(tmp_path, 'pre_live_migration', 'dest', 'hang',
                        '--workers', '1')
    assert [c['id'] for c in doc['cases']] == [
        'pre_live_migration.after@dest:hang',
        'pre_live_migration.before@dest:hang']
    for case in doc['cases']:
        assert not case['internal_error'], case
        [recovery] = case['recovery']
        assert recovery.startswith('periodics while held: src '), recovery
        assert 'released 1 on dest' in recovery, recovery


def test_a_second_call_is_made_while_the_step_is_held(tmp_path):
    """``second-call`` cases (shard 1/5 of the step's ten: the admin's
    abort at both phases of the source's ``live_migration``): each call is
    made while the hang holds the step (the journal's hold before the
    call, the barrier holding before and after it) and its answer is
    recorded: the abort of a migration still running is accepted, the
    one after the driver's migration ended is refused with 409."""
    doc = reduced_sweep(tmp_path, 'live_migration', 'src', 'second-call',
                        '--workers', '1', '--shard', '1/5')
    answers = {}
    for case in doc['cases']:
        assert not case['internal_error'], case
        [call] = case['second_call']
        assert call['held_before'] >= 1 and call['held_after'] >= 1, call
        assert call['held_since'] <= call['called_at'] <= \
            call['answered_at'], call
        answers[case['id']] = call['answer']
    assert answers == {
        'live_migration.after@src:second-call(abort)': 409,
        'live_migration.before@src:second-call(abort)': 'accepted'}


DIFF = os.path.join(os.path.dirname(__file__), 'data',
                    'revert-stale-error-context.diff')


def test_ab_nova_tree_sweep_removes_the_seed_finding(tmp_path):
    """A/B against a Nova source tree (a Gerrit change checked out): the
    test's change, made in a copy of Nova laid out as a clone, removes
    F1's finding; every record and reproducer names the tree.  (A/B with
    a diff file: tests/functional/test_sweep_recall.py.)"""
    source = novatree.make(str(tmp_path / 'nova-src'), DIFF)
    results = tmp_path / 'results'
    done = faultdriver('sweep', 'live-migration', '--points',
                       'pre_live_migration', '--hosts', 'dest', '--actions',
                       'crash', '--ab-nova-tree', source,
                       '--results', str(results), '-f', 'json')
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert doc['a']['nova']['tree'] is None
    assert doc['b']['nova']['tree']['path'] == source
    assert [c['id'] for c in doc['b']['cases']] == \
        [c['id'] for c in doc['a']['cases']]
    removed = {(f['invariant'], f['phase'], f['known'])
               for f in doc['ab']['removed']}
    assert ('periodics-clean', 'before', 'F1') in removed
    assert doc['ab']['added'] == [] and doc['ab']['regressions'] == []
    assert doc['ab']['patches'] == ['Nova tree %s' % source]
    # Each case's reproducer names the tree: it replays on that Nova.
    [case] = [c for c in doc['b']['cases'] if c['phase'] == 'before']
    variant = yaml.safe_load(open(case['scenario']))['variants']['case']
    assert variant['nova-tree'] == source
    # The record says which Nova: a resume of B with stock is refused.
    again = faultdriver('sweep', 'live-migration', '--points',
                        'pre_live_migration', '--hosts', 'dest',
                        '--actions', 'crash',
                        '--results', str(results / 'b'))
    assert again.returncode == 2, again.stderr[-3000:]
    assert 'the results of another sweep (nova:' in again.stderr


def test_reduced_shutdown_sweep_ends_moves_as_clean(tmp_path):
    """The graceful stop at the source's live_migration: the stop waits
    for the migration, which completes; the source starts again at once
    and the case checks how the move ended (``outcome-after-shutdown``).
    (``shutdown-hold`` there is F11: test_graceful_shutdown.py and the
    bundled scenario show it, in both modes.)"""
    doc = reduced_sweep(tmp_path, 'live_migration', 'src', 'shutdown')
    by_phase = {c['phase']: c for c in doc['cases']}
    assert set(by_phase) == {'before', 'after'}
    assert not any(c['internal_error'] for c in doc['cases'])
    for case in by_phase.values():
        assert case['broken'] == [], case
        assert 'started src again (it was stopped)' in case['recovery']
    scenario = yaml.safe_load(open(by_phase['before']['scenario']))
    assert scenario['rules']['src'][-1] == 'live_migration.before: ' \
        '1*shutdown'
    [after] = [e['outcome-after-shutdown'] for e in scenario['expectations']
               if 'outcome-after-shutdown' in e]
    assert after['origin'] == {'s1': 'src', 's2': 'dest'}


#: Rules of src that hold F16's window open whatever the machine's load
#: (see the test below).
F16_WINDOW = ['cleanup_host: 1*delay(5)', 'rpc.live_migration: 1*delay(10)']


def f16_workflow(folder):
    """The bundled live-migration workflow with :data:`F16_WINDOW` on src,
    as a workflow file in ``folder``."""
    with open(os.path.join(os.path.dirname(bundled.__file__),
                           'live-migration.yaml')) as saved:
        data = yaml.safe_load(saved)
    data['name'] = 'live-migration-f16-window'
    rules = dict(data.get('rules') or {})
    rules['src'] = list(rules.get('src', ())) + F16_WINDOW
    data['rules'] = rules
    path = os.path.join(str(folder), 'live-migration-f16-window.yaml')
    with open(path, 'w') as out:
        yaml.safe_dump(data, out)
    return path


def test_reduced_shutdown_sweep_finds_the_step_begun_after_the_wait(
        tmp_path):
    """F16: src stops while it answers its pre-check; the manager's wait
    ends with it, the conductor's live_migration cast arrives on the
    alternative topic and is refused its executor (every thread working
    for the stopping host is): the migration error, the server on src,
    the allocations left swapped (F4's leak).

    The window is held by rules, not left to the machine's speed.  On
    the embedded Nova the stop is quick, and F16's outcome needs the
    cast handled after src's executors shut (its drain) and before
    src's alternative topic stops, right after: a race the stop thread
    and the cast's path (the pre-check's reply, dest, the conductor)
    run from the pre-check's end.  CI once saw the cast win (the
    migration started and failed half-way: s1 ERROR on dest); a cast
    later than the topic's stop would be handled by the restarted src.
    No rule can fire on src once its ``cleanup_host`` closed the fault
    engine (before the drain), so two delays order it:
    ``cleanup_host`` holds the stop 5 s (the cast arrives meanwhile and
    the engine still fires), the cast waits 10 s in src's dispatch of
    it (the alternative topic's stop waits for a message being
    dispatched): the stop drains at 5 s, the cast is handled at 10 s.
    A machine would have to stall 5 s for another outcome (on real
    libvirt ``cleanup_host`` itself holds the stop, F14).  The clean
    run has the rules too: its migration starts 10 s later."""
    workflow = f16_workflow(tmp_path)
    done = faultdriver('sweep', workflow, '--points',
                       'check_can_live_migrate_source', '--hosts', 'src',
                       '--actions', 'shutdown', '--results',
                       str(tmp_path / 'results'), '-f', 'json')
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    assert {c['phase'] for c in doc['cases']} == {'before', 'after'}
    assert not any(c['internal_error'] for c in doc['cases'])
    for case in doc['cases']:
        details = {d['kind']: d['actual'] for d in case['details']}
        assert details['outcome-after-shutdown'] == {'s1': {
            'status': 'ACTIVE', 'host': 'src', 'migrations': ['error']}}, \
            case['id']
        assert 'src holds 20 DISK_GB, 2048 MEMORY_MB, 2 PCPU for ' \
            'migration s1#1 (error)' in details['allocations-consistent']
        log = (tmp_path / 'results' / 'logs' / (
            'case-check-can-live-migrate-source-%s-src-shutdown.compute.log'
            % case['phase'])).read_text()
        # The cast was held in src's dispatch of it (the window held).
        assert 'FAULTDRIVER-INJECT point=rpc.live_migration.before ' \
            'host=src' in log
        assert 'new task started after shutdown initiated: ' \
            'live_migration' in log
        assert 'task failed: live_migration' in log


def test_reduced_bfv_sweep_finds_the_volume_and_port_left_behind(tmp_path):
    """The seed's server (boot from volume, one port): a source failure
    in live_migration (F4) leaves the volume attached to both hosts and
    the port's inactive binding on dest; the new invariants name them."""
    done = faultdriver('sweep', 'live-migration-bfv', '--points',
                       'live_migration', '--hosts', 'src', '--actions',
                       'raise', '--results', str(tmp_path), '-f', 'json')
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(done.stdout)
    [case] = [c for c in doc['cases'] if c['phase'] == 'before']
    assert {'volume-attachments', 'port-bindings'} <= set(case['broken'])
    details = {d['kind']: d['actual'] for d in case['details']}
    assert details['volume-attachments'][0].endswith(
        'has 2 attachments (src, dest)')
    assert 'dest INACTIVE, src ACTIVE' in details['port-bindings'][0]


def test_reduced_depth_2_sweep_faults_the_recovery(tmp_path):
    """``--depth 2``: dest crashes at pre_live_migration (both phases);
    the recovery that restarts it is traced, and a second fault (crash,
    raise) goes to init_host in that recovery.  Both first faults recover
    along the same path, so the second faults run once (pruned for the
    other).  Each second fault really ends the restarted service's start
    (recover starts it once more without rules) and its case runs to its
    invariants."""
    doc = reduced_sweep(tmp_path, 'pre_live_migration', 'dest', 'crash',
                        '--depth', '2', '--recovery-points', 'init_host')
    assert not any(c['internal_error'] for c in doc['cases'])
    firsts = [c for c in doc['cases'] if not c['first']]
    seconds = [c for c in doc['cases'] if c['first']]
    assert {c['phase'] for c in firsts} == {'before', 'after'}
    for case in firsts:
        traced = {(s['point'], s['phase']) for s in case['recovery_trace']}
        assert {('init_host', 'before'), ('init_host', 'after')} <= traced
    assert doc['recovery']['first_faults_recovered'] == 2
    assert doc['recovery']['recovery_paths'] == 1
    assert doc['recovery']['pruned'] == len(seconds) == 4
    assert {(c['phase'], c['action']) for c in seconds} == {
        ('before', 'crash'), ('before', 'raise'), ('after', 'crash'),
        ('after', 'raise')}
    for case in seconds:
        assert case['point'] == 'init_host' and case['host'] == 'dest'
        assert any('restarted dest (' in done and
                   'started again without rules' in done
                   for done in case['recovery']), case['recovery']
    scenario = yaml.safe_load(open(seconds[0]['scenario']))
    [recover] = [s['recover'] for s in scenario['steps'] if 'recover' in s]
    assert recover['rules']['dest'] == [
        'init_host.%s: 1*%s' % (seconds[0]['phase'], seconds[0]['action'])]


def test_a_host_that_dies_again_during_recovery_is_restarted_again():
    """A depth-2 case (data/crash-in-recovery-call.yaml) whose second
    crash comes in a call dest takes while recover runs the periodics:
    the periodic of the dead dest no longer waits for good (the case
    stuck 600 s); recover restarts dest once more and the case runs to
    its invariants."""
    done = faultdriver('scenario', 'run', os.path.join(
        os.path.dirname(__file__), 'data', 'crash-in-recovery-call.yaml'),
        '-f', 'json', timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result['verdicts'] == {'case': 'ok'}
    [recover] = [e['detail'] for e in result['variants']['case']['timeline']
                 if e['kind'] == 'recover']
    assert recover.startswith('restarted dest; restarted dest'), recover


LEAK_ON_EVERY_MOVE = os.path.join(
    os.path.dirname(__file__), '..', '..', 'benchmarks', 'recall', 'shapes',
    'bug-1712045-live-migration-keeps-source-allocation.diff')


def test_a_clean_run_that_breaks_an_invariant_is_the_workflows_finding(
        tmp_path):
    """A Nova change that breaks the ordinary path (every completed live
    migration leaves its source allocation: bug 1712045's shape): the
    sweep reports the clean run's breaks once, as the workflow's own
    finding with a reproducer that replays it, exits 0 as for any
    finding, and no case repeats them."""
    doc = reduced_sweep(tmp_path, 'pre_live_migration', 'dest', 'raise',
                        '--workers', '1', '--nova-patch',
                        os.path.abspath(LEAK_ON_EVERY_MOVE))
    assert 'accounting-matches-placement' in doc['clean_run']['broken']
    clean = [f for f in doc['findings'] if f['cases'] == ['clean run']]
    assert {f['invariant'] for f in clean} == set(doc['clean_run']['broken'])
    assert all(f['point'] is None for f in clean)
    cases = [f for f in doc['findings'] if f['cases'] != ['clean run']]
    assert not {f['invariant'] for f in cases} & set(
        doc['clean_run']['broken']), cases
    [cause] = [c for c in doc['causes']
               if c['cases'][0]['id'] == 'clean run']
    assert cause['known'] is None and doc['summary'].startswith(
        '%d broken case' % len({c['id'] for cause in doc['causes']
                                for c in cause['cases']}))
    [reproducer] = {f['scenario'] for f in clean}
    replay = faultdriver('scenario', 'run', reproducer, '-f', 'json')
    assert replay.returncode == 0, replay.stderr[-3000:]
    assert json.loads(replay.stdout)['verdicts'] == {
        'stock': 'bug reproduced'}
