"""A sweep result that did not happen never reads as one that did: a
refused case stops the sweep, an internal error is never ``ok``, a torn
results line is dropped and its case runs again, and a results
directory of another sweep is refused (issue: nothing silent)."""

import contextlib
import json
import os

import pytest

from faultdriver.cmd import outputs
from faultdriver import exception
from faultdriver.scenario import model
from faultdriver.sweep import cases
from faultdriver.sweep import compare
from faultdriver.sweep import execute
from faultdriver.sweep import identity
from faultdriver.sweep import report
from faultdriver.sweep import sweep


class _Pool:
    """Stands in for the runner processes: each case's report is what
    ``answer(case scenario path)`` says (the handling of reports is
    under test, not the runners)."""

    def __init__(self, answer):
        self.answer = answer
        self.ran = []

    def warm(self, count):
        pass

    @contextlib.contextmanager
    def runner(self):
        yield self

    def run(self, path, variant, log):
        self.ran.append(os.path.basename(path))
        return self.answer(path)


POINTS = ('check_can_live_migrate_destination', 'live_migration',
          'pre_live_migration', 'post_live_migration_at_destination',
          'rollback_live_migration_at_destination', 'cleanup')


def _cases(count):
    """``count`` cases, in the order the sweep runs them."""
    return [cases.Case(point, 'dest', 'before', 'crash')
            for point in POINTS[:count]]


def _scenario_of(case):
    # What a case's scenario needs to be written (its tiers are named
    # from its steps and variants); the pool never loads it here.
    return {'name': case.slug, 'steps': [], 'variants': {'case': {}}}


def _ok(path):
    return {'verdict': 'ok', 'expectations': [
        {'kind': 'servers-settled', 'met': True, 'actual': []}]}


def test_a_refused_case_stops_the_sweep_naming_it(tmp_path):
    def refuse(path):
        return {'scenario_error': 'variant case: unknown fix'}
    pool = _Pool(refuse)
    with pytest.raises(execute.CaseRefused,
                       match=r'sweep case check_can_live_migrate_'
                             r'destination.before@dest:crash: .*unknown fix'):
        execute.run_cases(_cases(6), _scenario_of, str(tmp_path),
                          workers=1, pool=pool)
    # The one refused case ran; the others were never started, and
    # nothing was recorded as a result.
    assert len(pool.ran) == 1
    assert execute.load_results(str(tmp_path)) == {}


def test_an_internal_error_is_never_ok_and_the_others_still_run(tmp_path):
    def answer(path):
        if os.path.basename(path).startswith('live-migration-before'):
            return {'verdict': 'internal error',
                    'internal_error': 'Traceback...\nRuntimeError: boom'}
        return _ok(path)
    results = execute.run_cases(_cases(3), _scenario_of, str(tmp_path),
                                workers=1, pool=_Pool(answer))
    assert [r['internal_error'] for r in results] == [False, True, False]
    failed = results[1]
    assert failed['verdict'] == 'internal error'
    assert failed['error'].endswith('RuntimeError: boom')
    assert report.outcome(failed) == 'INTERNAL ERROR'
    assert report.outcome(results[0]) == 'ok'
    doc = {'workflow': 'w', 'backend': 'embedded', 'mode': 'threading',
           'patches': [], 'shard': '1/1', 'results': str(tmp_path),
           'wall_seconds': 1, 'cases': results, 'findings': []}
    text = report.text(doc)
    # Listed before the matrix, with the reason.
    assert text.index('INTERNAL ERROR: not checked') < text.index('Step')
    assert 'live_migration.before@dest:crash: RuntimeError: boom' in text


def test_a_report_without_checks_is_an_internal_error(tmp_path):
    """A runner's report with no verdict flag but no expectations (what
    a misspelt fix gave before: verdict 'internal error', flag false)."""
    result = execute.summarize(_cases(1)[0], {'verdict': 'internal error'},
                               'x.yaml', 1.0)
    assert result['internal_error'] is True
    assert report.outcome(result) == 'INTERNAL ERROR'


def test_a_torn_last_line_is_dropped_and_its_case_runs_again(tmp_path):
    first, second = _cases(2)
    good = json.dumps({'id': first.id, 'broken': []})
    path = tmp_path / execute.RESULTS
    path.write_text(good + '\n' + '{"id": "pre_live_mig')
    with pytest.raises(exception.ScenarioError, match='line 2: cut short'):
        execute.load_results(str(tmp_path))
    said = []
    found = execute.load_results(str(tmp_path), repair=True,
                                 progress=said.append)
    assert list(found) == [first.id]
    assert path.read_text() == good + '\n'
    assert 'dropped its last line' in said[0]
    pool = _Pool(_ok)
    results = execute.run_cases([first, second], _scenario_of,
                                str(tmp_path), workers=1, pool=pool)
    assert pool.ran == [second.slug + '.yaml']
    assert [r['id'] for r in results] == [first.id, second.id]
    assert len(path.read_text().splitlines()) == 2


def test_a_broken_line_inside_the_results_is_bad_input(tmp_path):
    (tmp_path / execute.RESULTS).write_text('garbage\n{"id": "x"}\n')
    with pytest.raises(exception.ScenarioError,
                       match=r'results.jsonl line 1: not a sweep case'):
        execute.load_results(str(tmp_path), repair=True)


def _identity(**changes):
    workflow = model.load('live-migration')
    return dict(identity.of(workflow, ['crash'], None, None, [],
                            'embedded', 'threading'), **changes)


def test_the_sweep_identity_is_written_at_start_and_checked(tmp_path):
    this = _identity()
    identity.claim(str(tmp_path), this, execute.RESULTS)
    meta = identity.read(str(tmp_path))
    assert meta['finished'] is False and meta['actions'] == ['crash']
    identity.claim(str(tmp_path), this, execute.RESULTS)   # a resume
    # Other points are the same sweep, narrower (resumable).
    identity.claim(str(tmp_path), _identity(points=['spawn']),
                   execute.RESULTS)
    for changed, said in ((dict(patches=['stale_migration_context']),
                           'patches: [], not ["stale_migration_context"]'),
                          (dict(actions=['raise']), 'actions'),
                          (dict(nova=[{'file': 'f.diff'}]), 'nova'),
                          (dict(mode='eventlet'), 'mode'),
                          (dict(depth=2), 'depth: 1, not 2')):
        with pytest.raises(exception.ScenarioError,
                           match='the results of another sweep') as caught:
            identity.claim(str(tmp_path), _identity(**changed),
                           execute.RESULTS)
        assert said in str(caught.value)
    # A record written before the depth was kept is a depth-1 sweep's.
    meta = identity.read(str(tmp_path))
    del meta['depth']
    identity.write(str(tmp_path), meta)
    identity.claim(str(tmp_path), this, execute.RESULTS)


def test_results_without_a_record_are_refused(tmp_path):
    (tmp_path / execute.RESULTS).write_text('')
    with pytest.raises(exception.ScenarioError, match='no sweep.json'):
        identity.claim(str(tmp_path), _identity(), execute.RESULTS)


def test_ab_never_counts_an_errored_case_as_a_removed_finding():
    def case(id_, broken, internal=False):
        return {'id': id_, 'broken': broken, 'internal_error': internal}

    def finding(invariant, id_):
        return {'invariant': invariant, 'point': id_, 'host': 'dest',
                'phase': 'before', 'action': 'crash', 'known': None,
                'cases': [id_]}
    stock = {'patches': [], 'cases': [
        case('a', ['servers-settled']), case('b', ['moves-again']),
        case('c', [])],
        'findings': [finding('servers-settled', 'a'),
                     finding('moves-again', 'b')]}
    fixed = {'patches': ['fix'], 'cases': [
        case('a', []), case('b', [], internal=True),
        case('c', ['pcpus-not-shared'])],
        'findings': [finding('pcpus-not-shared', 'c')]}
    diff = compare.compare(stock, fixed)
    assert [f['point'] for f in diff['removed']] == ['a']
    assert [f['point'] for f in diff['unchecked']] == ['b']
    assert diff['regressions'] == ['c']
    assert diff['internal_errors'] == ['b']
    lines = compare.text(diff).splitlines()
    assert lines[0].endswith('1 not checked (a side did not run), '
                             '1 REGRESSIONS')
    assert lines[1].startswith('  REGRESSION c:')


@pytest.mark.parametrize('hosts, points, patches, said', [
    (['dst'], None, (), "--hosts dst: not a host of workflow live-migration; "
     "did you mean 'dest'?"),
    (None, ['pre_live_migraton'], (), "--points pre_live_migraton: no such "
     "point; did you mean 'pre_live_migration'?"),
    (None, None, ['no_such_fix'], '--patches/--ab no_such_fix: no such '
     'candidate fix'),
])
def test_names_in_the_arguments_are_checked_first(hosts, points, patches,
                                                  said):
    with pytest.raises(exception.ScenarioError) as caught:
        sweep.check_arguments('live-migration', points, hosts, patches)
    assert str(caught.value).startswith(said)


def test_output_places_are_checked_before_any_work(tmp_path):
    a_file = tmp_path / 'f'
    a_file.write_text('')
    with pytest.raises(exception.ScenarioError,
                       match='--results .*: exists and is not a directory'):
        outputs.check_folder('--results', str(a_file))
    with pytest.raises(exception.ScenarioError,
                       match=r'--html .*x.html: its directory .*missing '
                             r'does not exist'):
        outputs.check_file('--html', str(tmp_path / 'missing' / 'x.html'))
    with pytest.raises(exception.ScenarioError, match='is a directory'):
        outputs.check_file('--html', str(tmp_path))
    outputs.check_folder('--results', str(tmp_path / 'new' / 'deeper'))
    outputs.check_file('--html', str(tmp_path / 'x.html'))


def _faultdriver(*args):
    import subprocess
    import sys
    return subprocess.run(
        [sys.executable, '-m', 'faultdriver.cmd.main'] + list(args),
        capture_output=True, text=True, timeout=300,
        env=dict(os.environ, PYTHONWARNINGS='ignore'))


@pytest.mark.parametrize('args, said', [
    (['--patches', 'no_such_fix'], '--patches/--ab no_such_fix: no such '
     'candidate fix'),
    (['--ab', 'no_such_fix'], '--patches/--ab no_such_fix'),
    (['--hosts', 'dst'], "did you mean 'dest'?"),
    (['--html', '/missing/dir/x.html'], '--html /missing/dir/x.html: its '
     'directory /missing/dir does not exist'),
    (['--results', '/etc/hostname'], '--results /etc/hostname: exists and '
     'is not a directory'),
    (['--depth', '2', '--recovery-points', 'init_hots'],
     "--recovery-points init_hots: no such point; did you mean "
     "'init_host'?"),
    (['--recovery-points', 'init_host'], '--recovery-points: second faults '
     'need --depth 2'),
    (['--depth', '3'], "--depth: invalid choice: 3"),
])
def test_the_sweep_refuses_bad_arguments_before_any_work(tmp_path, args,
                                                         said):
    done = _faultdriver('sweep', 'live-migration', '--points',
                        'pre_live_migration', '--actions', 'raise', *args)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    # Refused before the trace: no sweep started.
    assert 'sweep live-migration on' not in done.stderr


def test_merge_refuses_a_torn_shard(tmp_path):
    identity.write(str(tmp_path), dict(_identity(), trace=[], shard='1/1'))
    (tmp_path / execute.RESULTS).write_text('{"id": "x", "bro')
    done = _faultdriver('sweep', 'merge', str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert 'results.jsonl line 1: cut short' in done.stderr


def test_a_regression_that_breaks_without_the_change_too_is_flaky(
        monkeypatch, tmp_path):
    """A/B regressions are replayed as A ran them: one that breaks there
    too depends on timing, and is not blamed on the change."""
    replayed = {'flaky.yaml': [{'kind': 'periodics-clean', 'met': False}],
                'real.yaml': [{'kind': 'periodics-clean', 'met': True}]}

    def run_scenario(path, variant, mode, backend, log):
        return {'expectations': replayed[os.path.basename(path)]}
    monkeypatch.setattr(execute, 'run_scenario', run_scenario)
    stock = {'cases': [{'id': 'f', 'scenario': str(tmp_path / 'flaky.yaml')},
                       {'id': 'r', 'scenario': str(tmp_path / 'real.yaml')}]}
    diff = sweep.recheck_regressions({'regressions': ['f', 'r']}, stock,
                                     'threading', 'embedded',
                                     progress=lambda text: None)
    assert diff['regressions'] == ['r']
    assert diff['flaky'] == ['f']


def _finding():
    return {'invariant': 'port-bindings', 'point': 'post_live_migration_at_'
            'source', 'host': 'src', 'phase': 'after', 'action': 'raise',
            'scenario': '/r/finding.yaml', 'case_scenario': '/r/case.yaml'}


def _replay(fired_at, met):
    """A replay's report: faults fired at ``fired_at`` on src, and the
    finding's expectation (``broken: true``) ``met`` or not."""
    return {'verdict': 'bug reproduced' if met else 'bug not reproduced',
            'state': {'faults': [
                {'kind': 'fault', 'point': point, 'phase': phase,
                 'host': 'src', 'action': 'raise'}
                for point, phase in fired_at]},
            'expectations': [{'kind': 'port-bindings', 'met': met}]}


@pytest.mark.parametrize('fired_at, met, confirmed', [
    # The fault fired there: the replay decides.
    ([('post_live_migration_at_source', 'after')], True, True),
    ([('post_live_migration_at_source', 'after')], False, False),
    # The tier never made that call (fake_numa does not implement it):
    # nothing was replayed, so neither confirmed nor harness-only.
    ([], False, None),
    ([('post_live_migration_at_source', 'before')], False, None),
])
def test_a_confirm_whose_fault_never_fired_is_not_a_verdict(
        tmp_path, monkeypatch, fired_at, met, confirmed):
    from faultdriver.sweep import findings
    monkeypatch.setattr(execute, 'run_scenario',
                        lambda *args: _replay(fired_at, met))
    [finding] = findings.confirm([_finding()], 'process', 'threading',
                                 str(tmp_path))
    assert finding['confirmed'] is confirmed


def test_a_confirm_says_the_findings_answer_before_the_replays():
    """A replay that broke one more invariant than the embedded case
    says 'bug not reproduced' as a whole; the finding whose invariant
    broke as recorded is still confirmed, and the line says so first."""
    from faultdriver.sweep import findings
    assert findings.confirm_text(True, True, 'bug not reproduced') == (
        'confirmed (the replay: bug not reproduced)')
    assert findings.confirm_text(False, True, 'ok') == (
        'NOT CONFIRMED (the replay: ok)')
    assert findings.confirm_text(None, False, 'ok').startswith(
        'not replayed: the fault never fired')


def test_a_sweep_with_no_case_is_refused_not_reported_clean():
    """peer-periodic has no rule inside the tracker lock: a sweep of such
    steps alone would report no finding, as a clean one does."""
    from faultdriver.scenario import model
    from faultdriver.sweep import trace
    steps = [trace.TracedStep('tracker.drop_move_claim_at_dest', 'dest',
                              'after')]
    with pytest.raises(exception.ScenarioError) as caught:
        sweep._chosen_cases(model.load('resize-revert'), steps,
                            ('peer-periodic',), None, None, (1, 1),
                            'embedded', lambda text: None)
    assert str(caught.value).startswith(
        'workflow resize-revert: no case: none of the 1 chosen steps takes '
        'a rule of --actions peer-periodic')


def test_points_with_a_phase_choose_that_phase_only():
    """``--points pre_live_migration.before``: the cases of that phase
    only (a reduced sweep of crash and raise at two steps is four cases,
    not eight); a phase the point lacks, or one the workflow never hit,
    is refused naming it."""
    from faultdriver.scenario import model
    from faultdriver.sweep import trace
    steps = [trace.TracedStep('pre_live_migration', 'dest', 'before'),
             trace.TracedStep('pre_live_migration', 'dest', 'after'),
             trace.TracedStep('live_migration', 'src', 'before'),
             trace.TracedStep('live_migration', 'src', 'after')]
    points = ['pre_live_migration.before', 'live_migration.before']
    sweep.check_arguments('live-migration', points)
    chosen = sweep._chosen_cases(
        model.load('live-migration'), steps, ('crash', 'raise'), points,
        None, (1, 1), 'embedded', lambda text: None)
    assert [case.id for case in chosen] == [
        'live_migration.before@src:crash', 'live_migration.before@src:raise',
        'pre_live_migration.before@dest:crash',
        'pre_live_migration.before@dest:raise']
    with pytest.raises(exception.ScenarioError) as caught:
        sweep.check_arguments('live-migration', ['live_migration.unlocked'])
    assert str(caught.value) == (
        '--points live_migration.unlocked: point live_migration has no '
        'phase unlocked; expected one of before, after')
    with pytest.raises(exception.ScenarioError) as caught:
        sweep._chosen_cases(
            model.load('live-migration'), steps[2:], ('crash',),
            ['pre_live_migration.after'], None, (1, 1), 'embedded',
            lambda text: None)
    assert str(caught.value).startswith(
        '--points pre_live_migration.after: not hit by workflow '
        'live-migration; its steps: live_migration.after, '
        'live_migration.before')
