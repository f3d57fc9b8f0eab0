"""The sweep's pieces that need no Nova running: the invariants (each
shown failing on a hand-made broken state), the trace read from a
journal, case generation and sharding, case and finding scenario files
(valid scenarios that replay the case), grouping into findings."""

import pytest

from faultdriver import exception
from faultdriver.scenario import expect
from faultdriver.scenario import invariants
from faultdriver.scenario import model
from faultdriver.scenario import recovery
from faultdriver.scenario import specs
from faultdriver.scenario import tiers
from faultdriver.sweep import cases
from faultdriver.sweep import findings
from faultdriver.sweep import trace
from tests import runstates


def _evaluate(steps, expectations, state):
    """expect.evaluate on expectations written as in a scenario file."""
    return [result.to_json() for result in expect.evaluate(
        steps, [specs.ExpectationSpec.from_json(e) for e in expectations],
        runstates.state(state))]


GOOD = {
    'migrations': [{'server': 's1', 'id': 1, 'status': 'completed'}],
    'servers': {'s1': {'status': 'ACTIVE', 'task_state': None,
                       'host': 'dest', 'pinned_cpus': [0, 1]},
                's2': {'status': 'ACTIVE', 'task_state': None,
                       'host': 'dest', 'pinned_cpus': [2, 3]}},
    'hosts': {}, 'faults': []}


def verdict(kind, state, **args):
    [result] = _evaluate(None, [{kind: args}], state)
    return result


@pytest.mark.parametrize('kind', ['migrations-terminal', 'servers-settled',
                                  'pcpus-not-shared'])
def test_invariants_hold_on_a_good_state(kind):
    assert verdict(kind, GOOD)['met']
    assert not verdict(kind, GOOD, broken=True)['met']


def test_migrations_terminal_fails_on_a_running_migration():
    state = dict(GOOD, migrations=[{'server': 's1', 'id': 1,
                                    'status': 'running'}])
    result = verdict('migrations-terminal', state)
    assert not result['met'] and result['actual'] == ['s1#1 running']
    assert verdict('migrations-terminal', state, broken=True)['met']


@pytest.mark.parametrize('status, task_state', [
    ('MIGRATING', 'migrating'), ('ACTIVE', 'migrating'),
    ('VERIFY_RESIZE', None)])
def test_servers_settled_fails_on_a_stuck_server(status, task_state):
    servers = dict(GOOD['servers'])
    servers['s1'] = dict(servers['s1'], status=status,
                         task_state=task_state)
    assert not verdict('servers-settled', dict(GOOD,
                                               servers=servers))['met']


def test_pcpus_not_shared_fails_on_an_overcommit():
    servers = dict(GOOD['servers'])
    servers['s2'] = dict(servers['s2'], pinned_cpus=[1, 2])
    result = verdict('pcpus-not-shared', dict(GOOD, servers=servers))
    assert not result['met']
    assert result['actual'] == ['dest pCPU 1: s1, s2']


def test_same_pcpu_numbers_on_different_hosts_are_not_shared():
    servers = dict(GOOD['servers'])
    servers['s2'] = dict(servers['s2'], host='src', pinned_cpus=[0, 1])
    assert verdict('pcpus-not-shared', dict(GOOD, servers=servers))['met']


def test_a_server_on_no_host_pins_nothing():
    """A shelved, offloaded server (host None) keeps its pinning in its
    record: checked, it was "could not check" (None sorted with hosts)."""
    servers = dict(GOOD['servers'])
    servers['s3'] = {'status': 'SHELVED_OFFLOADED', 'task_state': None,
                     'host': None, 'pinned_cpus': [0, 1]}
    result = verdict('pcpus-not-shared', dict(GOOD, servers=servers))
    assert result['met'] and result['actual'] == 'none shared'


class _Log:
    """What the scenario runner's Steps read a log from."""

    def __init__(self):
        self.output = ''


def _steps_with_log():
    import types

    from faultdriver.scenario import steps as steps_module
    log = _Log()
    nova = types.SimpleNamespace(log_text=lambda: log.output)
    return steps_module.Steps(nova, model.load('live-migration'), 'stock'), log


PERIODIC_FAILED = (
    'ERROR nova.compute.manager [None req-1] Error updating resources for '
    'node dest.: nova.exception.CPUPinningInvalid: CPU set to pin [0, 1] '
    'must be a subset of free CPU set [2, 3]\n'
    'Traceback (most recent call last):\n  File "x.py", line 1, in y\n'
    'nova.exception.CPUPinningInvalid: CPU set to pin [0, 1] must be a '
    'subset of free CPU set [2, 3]\n')
APPLIED_ERROR = ('DEBUG nova.compute.resource_tracker Applying migration '
                 'context for instance u as it has an incoming, '
                 'in-progress migration m. Migration status is error\n')


def test_periodics_clean_holds_when_no_periodic_failed_after_recovery():
    steps, log = _steps_with_log()
    # A periodic that failed during the fault, before recover, is the
    # case's business, not this invariant's.
    log.output = APPLIED_ERROR + PERIODIC_FAILED
    steps.recovery_marks = steps.log_counts()
    log.output += 'DEBUG nova.compute.resource_tracker all fine\n'
    [result] = _evaluate(steps, [{'periodics-clean': {}}], {})
    assert result['met'] and result['actual'] == 'none failed'


def test_periodics_clean_fails_on_a_periodic_failed_after_recovery():
    steps, log = _steps_with_log()
    steps.recovery_marks = steps.log_counts()
    log.output = APPLIED_ERROR + PERIODIC_FAILED
    [result] = _evaluate(steps, [{'periodics-clean': {}}], {})
    assert not result['met']
    assert result['actual'] == [
        'dest: 1 periodic error(s) (CPUPinningInvalid)',
        "the tracker applied the migration context of a migration in "
        "status 'error'"]
    [shown] = _evaluate(steps, [{'periodics-clean': {'broken': True}}], {})
    assert shown['met']


def test_known_findings_are_named_by_their_finding_number():
    """``known`` names the finding of doc/findings.rst (the recognisers,
    tests/unit/test_sweep_recognisers.py), where the step, the action,
    the move, the invariant and what it saw are that finding's."""
    def finding(invariant, actual, point='pre_live_migration',
                host='dest', action='crash'):
        return {'invariant': invariant, 'actual': actual, 'point': point,
                'host': host, 'phase': 'before', 'action': action,
                'first': None}
    stale = finding('periodics-clean', [
        'dest: 1 periodic error(s) (CPUPinningInvalid)',
        "the tracker applied the migration context of a migration in "
        "status 'error'"])
    other = finding('periodics-clean', [
        'dest: 1 periodic error(s) (KeyError)'])
    elsewhere = dict(stale, host='src')
    found = findings.recognise([stale, other, elsewhere], 'live-migration')
    assert [f['known'] for f in found] == ['F1', None, None]
    assert findings.recognise([dict(stale)], 'resize')[0]['known'] is None


REPORT = {
    'steps_started_at': 1000.0,
    'timeline': [{'kind': 'boot', 'start': 0},
                 {'kind': 'live-migrate', 'start': 4},
                 {'kind': 'settle', 'start': 5},
                 {'kind': 'recover', 'start': 9}],
    'state': {'faults': [
        # Setup (the boot, before the first move): not swept.
        {'time': 1001, 'host': 'src', 'point': 'spawn', 'phase': 'before',
         'action': 'log'},
        {'time': 1001.5, 'host': 'src', 'point': 'get_info',
         'phase': 'before', 'action': 'log'},
        {'time': 1002, 'host': 'src',
         'point': 'tracker.update_available_resource', 'phase': 'before',
         'action': 'log', 'hit': 1},
        {'time': 1006, 'host': 'dest', 'point': 'pre_live_migration',
         'phase': 'before', 'action': 'log', 'hit': 1},
        {'time': 1006.5, 'host': 'dest', 'point': 'pre_live_migration',
         'phase': 'after', 'action': 'log', 'hit': 1},
        {'time': 1007, 'host': 'dest', 'point': 'pre_live_migration',
         'phase': 'before', 'action': 'log', 'hit': 2},
        {'time': 1007.5, 'host': 'src',
         'point': 'tracker.update_available_resource', 'phase': 'before',
         'action': 'log', 'hit': 2, 'in_periodic': True},
        # During recovery: not a step of the workflow.
        {'time': 1010, 'host': 'src', 'point': 'post_live_migration',
         'phase': 'before', 'action': 'log'},
        {'time': 1006, 'host': 'dest', 'kind': 'periodic'},
    ]}}


def test_trace_keeps_the_workflow_steps_in_first_hit_order():
    steps = trace.steps_hit(REPORT, 'live-migration')
    # The periodic ran once during the setup: its case skips that hit.
    # It runs in src's periodic: no periodic case there.
    assert steps == [('pre_live_migration', 'dest', 'before', 0, False, 0),
                     ('pre_live_migration', 'dest', 'after', 0, False, 0),
                     ('tracker.update_available_resource', 'src', 'before',
                      1, True, 0)]
    generated = cases.generate(steps, ('crash', 'periodic'))
    assert [c.id for c in generated] == [
        'pre_live_migration.after@dest:crash',
        'pre_live_migration.after@dest:periodic',
        'pre_live_migration.before@dest:crash',
        'pre_live_migration.before@dest:periodic',
        'tracker.update_available_resource.before@src:crash']


def _logged(time, host, point, hit=1):
    """A trace rule's journal entry: the ``before`` phase of ``point``."""
    return {'time': time, 'host': host, 'point': point, 'phase': 'before',
            'action': 'log', 'hit': hit}


#: An evacuation: src stops, dest rebuilds, src restarts and cleans up.
EVACUATION = {
    'steps_started_at': 2000.0,
    'timeline': [{'kind': 'boot', 'start': 0, 'args': {'server': 's1'}},
                 {'kind': 'stop', 'start': 2, 'args': {'host': 'src'}},
                 {'kind': 'evacuate', 'start': 4, 'args': {'server': 's1'}},
                 {'kind': 'restart', 'start': 6, 'args': {'host': 'src'}},
                 {'kind': 'recover', 'start': 9, 'args': {}}],
    'state': {'faults': [
        # The first src service starts, and boots s1: setup.
        _logged(2000.5, 'src', 'destroy'),
        _logged(2004.5, 'dest', 'spawn'),
        # The restarted src service (its hits count from 1 again).
        _logged(2006.5, 'src', 'destroy'),
    ]}}


def test_a_hit_after_a_restart_belongs_to_the_restarted_service():
    steps = trace.steps_hit(EVACUATION)
    assert steps == [('spawn', 'dest', 'before', 0, False, 0),
                     ('destroy', 'src', 'before', 0, False, 1)]


def test_the_restart_step_installs_the_rule_of_a_restarted_services_hit():
    workflow = model.load('evacuation')
    case = cases.Case('destroy', 'src', 'before', 'crash', restart=1)
    data = cases.case_scenario(workflow, case)
    model.validate(data, 'case.yaml')
    # Not at the scenario's start: the first src service's hits at the
    # boot would take the fault, and the restart would drop the rule.
    assert 'destroy.before: 1*crash' not in data.get('rules', {}).get(
        'src', ())
    [restart] = [step['restart'] for step in data['steps']
                 if 'restart' in step]
    assert restart == {'host': 'src', 'rules': ['destroy.before: 1*crash']}
    # The workflow itself is left as it was.
    assert all('rules' not in step.get('restart', {})
               for step in workflow.data['steps'])


def test_a_case_after_a_restart_the_workflow_lacks_is_refused():
    workflow = model.load('live-migration')
    case = cases.Case('destroy', 'src', 'before', 'crash', restart=1)
    with pytest.raises(ValueError, match='0 restart step'):
        cases.case_scenario(workflow, case)


def test_a_case_lets_the_setup_hits_pass():
    case = cases.Case('tracker.update_available_resource', 'src', 'before',
                      'crash', skip=3)
    assert case.rule() == ('tracker.update_available_resource.before: '
                           '3*off -> 1*crash')
    from faultdriver import actions
    from faultdriver import conf
    from faultdriver import points
    parsed = conf.RuleType(points.catalogue(), actions.load_all())(
        case.rule())
    assert str(parsed).startswith('tracker.update_available_resource')


def test_trace_rules_are_valid_in_a_scenario():
    workflow = model.load('live-migration')
    data = trace.trace_scenario(workflow)
    embedded = tiers.get('embedded')
    catalogue = {name: point for name, point
                 in trace.points_module.catalogue().items()
                 if embedded.fires(name, point.kind)}
    locked = [name for name, point in catalogue.items()
              if point.tracker_lock]
    assert locked       # the tracker's claims and drops take the lock
    # Two phases a point, three where the tracker lock is taken (one
    # before the lock); on the embedded Nova, placement's service-call
    # points but no Neutron or Cinder one (Nova's fixtures make no
    # request there).
    assert len(data['rules']['*']) == 2 * len(catalogue) + len(locked)
    traced = data['rules']['*']
    assert 'placement.move_allocations.before: log(trace)' in traced
    assert not [rule for rule in traced
                if rule.startswith(('network.', 'volume.'))]
    assert 'tracker.drop_move_claim_at_source.unlocked: log(trace)' in \
        traced
    model.validate(data, 'trace.yaml')


def test_the_trace_asks_the_tier_what_it_can_fire():
    """On processes every service-call point is traced; the rules are
    valid there, and refused where the tier cannot fire them."""
    on_processes = trace.trace_rules('process')
    embedded = trace.trace_rules('embedded')
    extra = sorted(set(on_processes) - set(embedded))
    assert extra and all(rule.startswith(('network.', 'volume.'))
                         for rule in extra)
    assert set(embedded) < set(on_processes)
    from faultdriver.harness import injection
    with pytest.raises(exception.ConfigError, match='NeutronFixture'):
        injection.FaultInjection.parse(
            [r for r in extra if r.startswith('network.')][0])


STEPS = [trace.TracedStep('pre_live_migration', 'dest', 'before'),
         trace.TracedStep('live_migration', 'src', 'before'),
         trace.TracedStep('tracker.update_available_resource', 'dest',
                          'before')]


def test_cases_cover_every_step_and_action_with_a_rule():
    generated = cases.generate(STEPS, ('crash', 'raise', 'periodic'))
    ids = [c.id for c in generated]
    assert ids == sorted(ids) and len(ids) == len(set(ids)) == 9
    crash = [c for c in generated if c.action == 'crash'
             and c.point == 'pre_live_migration'][0]
    assert crash.rule() == 'pre_live_migration.before: 1*crash'
    assert crash.slug == 'pre-live-migration-before-dest-crash'


def test_a_hang_case_holds_until_recover_releases_it():
    case = cases.Case('pre_live_migration', 'dest', 'after', 'hang', skip=1)
    assert case.rule() == 'pre_live_migration.after: 1*off -> 1*hang'
    from faultdriver import actions
    from faultdriver import conf
    from faultdriver import points
    parsed = conf.RuleType(points.catalogue(), actions.load_all())(
        case.rule())
    assert str(parsed).startswith('pre_live_migration.after')


def test_shards_split_the_cases_without_overlap():
    generated = cases.generate(STEPS, cases.ACTIONS)
    parts = [cases.shard(generated, k, 3) for k in (1, 2, 3)]
    assert sorted(c.id for part in parts for c in part) == sorted(
        c.id for c in generated)
    assert all(parts)


def test_a_b_sweep_adds_the_steps_only_its_nova_takes():
    """An A/B's B runs A's cases (the same shard of them) and, apart,
    those at the steps its own trace adds: a step both traces have is
    one case, even hit after other setup hits (``skip``) on B."""
    from faultdriver.sweep import sweep
    own = [trace.TracedStep('pre_live_migration', 'dest', 'before',
                            skip=1),
           trace.TracedStep('network.get_instance_nw_info', 'src',
                            'before'),
           trace.TracedStep('network.get_instance_nw_info', 'src', 'after')]
    added = sweep.only_in(own, STEPS)
    assert [(s.point, s.host, s.phase) for s in added] == [
        ('network.get_instance_nw_info', 'src', 'before'),
        ('network.get_instance_nw_info', 'src', 'after')]
    workflow = model.load('live-migration')
    said = []
    actions = ['crash', 'http-error']
    for k in (1, 2):
        alone = sweep._chosen_cases(workflow, STEPS, actions, None, None,
                                    (k, 2), 'process', said.append)
        both = sweep._chosen_cases(workflow, STEPS, actions, None, None,
                                   (k, 2), 'process', said.append, added)
        assert [c.id for c in both[:len(alone)]] == [c.id for c in alone]
        assert [c.point for c in both[len(alone):]] == [
            'network.get_instance_nw_info']
    assert said[-1].endswith('(and 2 steps only the change takes, '
                             '2 cases), shard 2/2 runs 2')
    # --points may name a step only B takes; --hosts narrows both.
    only = sweep._chosen_cases(
        workflow, STEPS, ['http-error'], ['network.get_instance_nw_info'],
        ['src'], (1, 1), 'process', said.append, added)
    assert sorted(c.id for c in only) == [
        'network.get_instance_nw_info.after@src:http-error',
        'network.get_instance_nw_info.before@src:http-error']


def test_cases_run_slowest_action_first_in_their_order_within_one():
    generated = cases.generate(STEPS, cases.ACTIONS)
    ordered = cases.slowest_first(generated)
    assert sorted(c.id for c in ordered) == sorted(c.id for c in generated)
    actions = [c.action for c in ordered]
    assert actions.index('crash') < actions.index('periodic') < \
        actions.index('raise')
    assert actions == sorted(actions, key=cases.SLOWEST_FIRST.index)
    crashes = [c.id for c in ordered if c.action == 'crash']
    assert crashes == sorted(crashes)
    assert set(cases.SLOWEST_FIRST) == set(cases.ACTIONS)


def test_a_case_scenario_is_a_valid_scenario_with_the_invariants():
    workflow = model.load('live-migration')
    case = cases.Case('pre_live_migration', 'dest', 'before', 'crash')
    data = cases.case_scenario(workflow, case, patches=[
        'stale_migration_context'])
    model.validate(data, 'case.yaml')
    assert data['rules']['dest'][-1] == 'pre_live_migration.before: 1*crash'
    # The fault's case: servers-settled takes what its rollback row
    # promises (tests/unit/test_rollback.py).
    fault = {'operation': 'live-migration', 'point': 'pre_live_migration',
             'host': 'dest', 'phase': 'before', 'action': 'crash',
             'origin': {'s1': 'src', 's2': 'dest'}}
    assert data['expectations'] == [
        {kind: {'failure': fault} if kind == 'servers-settled' else {}}
        for kind in invariants.swept()]
    assert data['variants']['case']['patches'] == ['stale_migration_context']
    assert data['steps'][-1] == {'recover': {}}


def test_findings_group_by_invariant_and_step(tmp_path):
    workflow = model.load('live-migration')
    case = cases.Case('pre_live_migration', 'dest', 'before', 'crash')
    path = tmp_path / 'case.yaml'
    import yaml
    path.write_text(yaml.safe_dump(cases.case_scenario(workflow, case)))
    results = [
        {'id': case.id, 'point': case.point, 'host': 'dest',
         'phase': 'before', 'action': 'crash', 'internal_error': False,
         'broken': ['servers-settled', 'moves-again'], 'scenario': str(path),
         'details': [{'kind': 'servers-settled', 'actual': ['s1 x']}]},
        {'id': 'other', 'point': 'spawn', 'host': 'src', 'phase': 'before',
         'action': 'raise', 'internal_error': True, 'broken': ['x'],
         'scenario': None, 'details': []},
    ]
    grouped = findings.group(results)
    assert [(f['invariant'], f['cases']) for f in grouped] == [
        ('moves-again', [case.id]), ('servers-settled', [case.id])]
    findings.write_reproducers(grouped, str(tmp_path / 'findings'))
    for finding in grouped:
        replay = model.load(finding['scenario'])
        assert replay.variants['stock']['expect'] == 'bug'
        # The case's outcome: what it broke broken, the rest holding.
        fault = {'operation': 'live-migration',
                 'point': 'pre_live_migration', 'host': 'dest',
                 'phase': 'before', 'action': 'crash',
                 'origin': {'s1': 'src', 's2': 'dest'}}
        assert [e.to_json() for e in replay.expectations('stock')] == [
            {'migrations-terminal': {}},
            {'servers-settled': {'failure': fault, 'broken': True}},
            {'pcpus-not-shared': {}},
            {'allocations-consistent': {}},
            {'volume-attachments': {}}, {'port-bindings': {}},
            {'tasks-ended': {}}, {'accounting-matches-placement': {}},
            {'moves-again': {'broken': True}}, {'periodics-clean': {}}]


def _shard_dir(folder, meta, results):
    import json
    folder.mkdir()
    (folder / 'sweep.json').write_text(json.dumps(meta))
    (folder / 'results.jsonl').write_text(''.join(
        json.dumps(r) + '\n' for r in results))
    return str(folder)


def test_merge_joins_shards_and_refuses_another_sweep(tmp_path):
    import yaml

    from faultdriver import exception
    from faultdriver.sweep import merge
    workflow = model.load('live-migration')
    case = cases.Case('pre_live_migration', 'dest', 'before', 'crash')
    path = tmp_path / 'case.yaml'
    path.write_text(yaml.safe_dump(cases.case_scenario(workflow, case)))
    meta = {'workflow': 'live-migration', 'backend': 'embedded',
            'mode': 'threading', 'patches': [], 'trace': [], 'shard': '1/2'}

    def result(id_, broken):
        return {'id': id_, 'point': 'pre_live_migration', 'host': 'dest',
                'phase': 'before', 'action': id_, 'internal_error': False,
                'broken': broken, 'scenario': str(path), 'details': [],
                'seconds': 10.0}
    one = _shard_dir(tmp_path / 'a', meta, [result('crash', [])])
    two = _shard_dir(tmp_path / 'b', dict(meta, shard='2/2'),
                     [result('raise', ['servers-settled'])])
    doc = merge.merge([one, two])
    assert [c['id'] for c in doc['cases']] == ['crash', 'raise']
    assert [f['invariant'] for f in doc['findings']] == ['servers-settled']
    assert doc['shard'] == 'merged 1/2, 2/2'
    other = _shard_dir(tmp_path / 'c', dict(meta, patches=['x']), [])
    with pytest.raises(exception.ScenarioError,
                       match=r'patches: \["x"\], not \[\]'):
        merge.merge([one, other])
    with pytest.raises(exception.ScenarioError, match='not the results'):
        merge.merge([one, str(tmp_path)])


def test_ab_compare_names_removed_kept_and_added_findings():
    from faultdriver.sweep import compare

    def finding(invariant, point):
        return {'invariant': invariant, 'point': point, 'host': 'dest',
                'phase': 'before', 'action': 'crash', 'known': None,
                'cases': [point]}

    def case(id_, *broken):
        return {'id': id_, 'broken': list(broken), 'internal_error': False}
    stock = {'patches': [], 'findings': [
        finding('servers-settled', 'a'), finding('pcpus-not-shared', 'b')],
        'cases': [case('a', 'servers-settled'), case('b', 'pcpus-not-shared'),
                  case('c', 'moves-again')]}
    fixed = {'patches': ['fix'], 'findings': [
        finding('servers-settled', 'a'), finding('moves-again', 'c')],
        'cases': [case('a', 'servers-settled'), case('b'),
                  case('c', 'moves-again')]}
    diff = compare.compare(stock, fixed)
    assert [f['invariant'] for f in diff['removed']] == ['pcpus-not-shared']
    assert [f['invariant'] for f in diff['kept']] == ['servers-settled']
    assert [f['invariant'] for f in diff['added']] == ['moves-again']
    assert compare.text(diff).splitlines()[0] == (
        'A/B with fix: 1 findings removed, 1 kept, 1 added')


def test_ab_lists_broken_cases_at_steps_only_the_change_takes():
    """A case of B with no A counterpart (B's own trace added its step)
    is no regression, nor silent: broken there, it is named."""
    from faultdriver.sweep import compare

    def case(id_, *broken, error=False):
        return {'id': id_, 'broken': list(broken), 'internal_error': error}
    stock = {'patches': [], 'findings': [], 'cases': [case('a')]}
    fixed = {'patches': ['fix'], 'findings': [], 'cases': [
        case('a'), case('new-broken', 'allocations-consistent'),
        case('new-ok'), case('new-failed', 'x', error=True)]}
    diff = compare.compare(stock, fixed)
    assert diff['regressions'] == []
    assert diff['new_steps'] == ['new-broken']
    lines = compare.text(diff).splitlines()
    assert lines[0].endswith(', 1 broken at steps only the change takes')
    assert '  NEW STEP   new-broken: broken with the change, at a step ' \
        'stock Nova does not take' in lines


def test_a_clean_run_finding_is_checked_where_b_traced_itself():
    """A's clean-run finding is not checked on a B that ran no clean run
    (an older document); where B traced its own Nova it is removed when
    B's own clean run kept the invariant, kept when it broke it too."""
    from faultdriver.sweep import compare

    def finding(invariant):
        return {'invariant': invariant, 'point': None, 'host': None,
                'phase': None, 'action': 'none', 'known': None,
                'cases': ['clean run']}
    stock = {'patches': [], 'cases': [], 'findings': [
        finding('allocations-consistent'), finding('periodics-clean')],
        'causes': [{'key': 'c', 'label': 'the clean run', 'known': None,
                    'cases': [{'id': 'clean run'}]}]}
    old_b = {'patches': ['fix'], 'cases': [], 'findings': [], 'causes': []}
    assert len(compare.compare(stock, old_b)['unchecked']) == 2
    fixed = dict(old_b, change_steps=[],
                 findings=[finding('periodics-clean')])
    diff = compare.compare(stock, fixed)
    assert diff['unchecked'] == []
    assert [f['invariant'] for f in diff['removed']] == [
        'allocations-consistent']
    assert [f['invariant'] for f in diff['kept']] == ['periodics-clean']
    assert diff['causes']['removed'] == ['the clean run']


def test_b_says_what_its_own_clean_run_broke_beside_a_s():
    """An A/B's B judges its cases by A's clean run, and says what its
    own traced run (the change's Nova, no fault) broke."""
    from faultdriver.sweep import report
    shared = {'broken': ['x'], 'shared': '/r/a'}
    own = {'broken': ['servers-settled']}
    assert report.clean_line({'clean_run': None,
                              'change_clean_run': own}) == (
        "This Nova's own clean run (no fault) broke servers-settled: its "
        'finding, under its cause below\n')
    both = report.clean_line({'clean_run': shared, 'change_clean_run': own})
    assert both.splitlines()[1].startswith('The clean run (of /r/a, ')
    assert report.clean_line({'clean_run': None}) == ''


def test_html_report_escapes_and_links_reproducers(tmp_path):
    from faultdriver.sweep import htmlreport
    scenario = str(tmp_path / 'cases' / 'case-x.yaml')
    case = {'id': 'x', 'point': 'pre_live_migration', 'host': 'dest',
            'phase': 'before', 'action': 'crash', 'internal_error': False,
            'broken': ['servers-settled'], 'scenario': scenario}
    doc = {'workflow': 'live-migration', 'backend': 'embedded',
           'mode': 'threading', 'patches': [], 'shard': '1/1',
           'results': str(tmp_path), 'wall_seconds': 1.0,
           'cases': [case, dict(case, action='raise', broken=[])],
           'findings': [{'invariant': 'servers-settled',
                         'point': 'pre_live_migration', 'host': 'dest',
                         'phase': 'before', 'action': 'crash',
                         'cases': ['x'], 'actual': ['<s1> MIGRATING'],
                         'scenario': scenario}]}
    page = htmlreport.render(doc, str(tmp_path))
    assert '<td class="bad"><a href="cases/case-x.yaml">servers-settled' \
        in page
    assert '<td class="good"><a href="cases/case-x.yaml">ok</a>' in page
    assert '&lt;s1&gt; MIGRATING' in page and '<s1>' not in page


class _Cloud:
    """A backend whose one migration goes through ``statuses`` (one per
    look) and then keeps the last."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.faults = __import__('types').SimpleNamespace(rpc_timeout=0.02)

    def move_state(self, server):
        status = self.statuses.pop(0) if len(self.statuses) > 1 else \
            self.statuses[0]
        return ((status,), 'MIGRATING', 'migrating', 'src')


def _settling(statuses):
    from faultdriver.scenario import steps as steps_module
    steps = steps_module.Steps(_Cloud(statuses),
                               model.load('live-migration'), 'stock')
    steps.servers = {'s1': {'id': 'u1'}}
    steps.moves = {'s1': 1}
    return steps


def test_settle_waits_for_a_move_that_ends():
    steps = _settling(['queued', 'preparing', 'running', 'completed'])
    assert steps._settle(timeout=60) == ''


def test_settle_names_a_move_that_stopped_changing_as_stuck():
    # Long before the deadline: nothing changed for three RPC timeouts.
    steps = _settling(['preparing', 'running'])
    assert steps._settle(timeout=600) == "stuck s1: ['running']"


def test_a_resumed_settle_counts_the_quiet_time_already_seen():
    """recover's wait while a hang holds a step takes up the quiet time
    the workflow's settle saw (a hang case waited out two: issue 41);
    a move that changed since, or a wait not resumed, starts again.  The
    RPC timeout here is far beyond the deadline: only the quiet time
    already seen can name the move stuck."""
    steps = _settling(['running'])
    steps.nova.faults.rpc_timeout = 10000
    steps._settle(timeout=0.1)
    steps._last_quiet['since'] -= 3 * 10000       # seen long ago
    assert steps._settle(timeout=0.1, resume=True) == \
        "stuck s1: ['running']"
    steps._last_quiet['since'] -= 3 * 10000
    assert steps._settle(timeout=0.1) == 'not settled'
    steps._last_quiet['since'] -= 3 * 10000
    steps.nova.statuses = ['completed']
    assert steps._settle(timeout=0.1, resume=True) == ''


def test_a_case_runs_only_the_periodics_its_steps_run():
    # So that a fault at a periodic's hit takes the same hit on processes
    # (which otherwise run the periodic on a timer) as in the embedded
    # Nova: the workflow's topology stays, the timer goes.
    workflow = model.load('live-migration')
    case = cases.Case('get_available_resource', 'src', 'before', 'crash',
                      in_periodic=True)
    data = cases.case_scenario(workflow, case)
    assert data['topology'] == dict(workflow.data['topology'],
                                    **{'periodic-timer': False})
    assert 'periodic-timer' not in workflow.data['topology']


def _ended_state(status='ACTIVE', host='dest', migrations=('confirmed',)):
    return {'servers': {'s1': {'status': status, 'host': host}},
            'migrations': [{'server': 's1', 'status': m}
                           for m in migrations]}


def test_outcome_as_clean_breaks_where_a_move_ended_otherwise():
    clean = expect.moves_ended(runstates.state(_ended_state()))
    assert clean == {'s1': {'status': 'ACTIVE', 'host': 'dest',
                            'migrations': ['confirmed']}}
    [held] = _evaluate(None, [{'outcome-as-clean': {'outcome': clean}}],
                       _ended_state())
    assert held['met'] and held['actual'] == 'as in the clean run'
    # What the pre-fix shape of bug 1879878 does to a confirm.
    [broken] = _evaluate(
        None, [{'outcome-as-clean': {'outcome': clean}}],
        _ended_state('ERROR', migrations=('error',)))
    assert not broken['met']
    assert broken['actual'] == {'s1': {'status': 'ERROR', 'host': 'dest',
                                       'migrations': ['error']}}


def test_only_timing_cases_must_end_as_the_clean_run():
    workflow = model.load('resize-confirm')
    clean = {'s1': {'status': 'ACTIVE', 'host': 'dest',
                    'migrations': ['confirmed']}}
    for action, added in (('periodic', True), ('crash', False),
                          ('raise', False)):
        case = cases.Case('tracker.drop_move_claim_at_source', 'src',
                          'unlocked' if action == 'periodic' else 'before',
                          action)
        data = cases.case_scenario(workflow, case, clean=clean)
        found = [e for e in data['expectations'] if 'outcome-as-clean' in e]
        assert bool(found) is added, action
    model.validate(cases.case_scenario(workflow, cases.Case(
        'tracker.drop_move_claim_at_source', 'src', 'unlocked', 'periodic'),
        clean=clean), 'case.yaml')


def test_an_error_nova_retries_must_end_as_the_clean_run():
    """One 500 (or, after the work, 504) where Nova's own code retries
    it (Cinder's attachment_update) must change nothing; a connection
    failure (retried only as the deployment's http_retries say) and an
    error where Nova does not retry (Neutron's port update) are judged
    by the invariants alone."""
    workflow = model.load('evacuation-bfv')
    clean = {'s1': {'status': 'SHUTOFF', 'host': 'dest',
                    'migrations': ['completed']}}
    for point, phase, action, added in (
            ('volume.attachment_update', 'before', 'http-error', True),
            ('volume.attachment_update', 'after', 'http-error', True),
            ('volume.attachment_update', 'before', 'connfail', False),
            ('network.setup_instance_network_on_host', 'before',
             'http-error', False)):
        case = cases.Case(point, 'dest', phase, action)
        data = cases.case_scenario(workflow, case, 'process', clean=clean)
        found = [e for e in data['expectations'] if 'outcome-as-clean' in e]
        assert bool(found) is added, (point, phase, action)
        # Otherwise a failure of the step: as clean or as Nova's rollback.
        failed = [e for e in data['expectations']
                  if 'outcome-after-failure' in e]
        assert bool(failed) is not added, (point, phase, action)
        # As the sweep writes it for processes (execute.with_backends).
        model.validate(dict(data, backends=['process']), 'case.yaml')


@pytest.mark.parametrize('name, operation', [
    ('live-migration', 'live-migration'), ('evacuation', 'evacuation'),
    ('cold-migration-confirm', 'migration'),
    ('cold-migration-revert', 'migration'),
    ('resize-confirm', 'resize'), ('resize-revert', 'resize')])
def test_workflows_declare_the_move_they_sweep(name, operation):
    """In the workflow's own file, so a user's workflow can say it too
    (the sweep once knew the bundled names only)."""
    assert model.load(name).data['operation'] == operation
    with pytest.raises(Exception, match='operation'):
        model.validate(dict(model.load(name).data, operation='teleport'),
                       'w.yaml')


INJECTED_FAILED = (
    'ERROR nova.compute.manager [None req-2] Error updating resources for '
    'node src.: nova.exception.InternalError: [faultdriver] injected at '
    'node_is_available.after on src (rule 0, hit 3)\n'
    'Traceback (most recent call last):\n  File "x.py", line 1, in y\n'
    'nova.exception.InternalError: [faultdriver] injected at '
    'node_is_available.after on src (rule 0, hit 3)\n')


def test_periodics_clean_does_not_count_the_injected_fault_itself():
    """A raise at a periodic's step that fires after recover began (a
    Nova change reordered the calls: F6's fix in the whole A/B) makes that
    periodic fail with the injected exception: the fault, not a
    consequence.  A periodic failing otherwise beside it still counts."""
    steps, log = _steps_with_log()
    steps.recovery_marks = steps.log_counts()
    log.output = INJECTED_FAILED
    [result] = _evaluate(steps, [{'periodics-clean': {}}], {})
    assert result['met'] and result['actual'] == 'none failed'
    log.output += PERIODIC_FAILED
    [result] = _evaluate(steps, [{'periodics-clean': {}}], {})
    assert result['actual'] == ['dest: 1 periodic error(s) '
                                '(CPUPinningInvalid)']
    log.output += PERIODIC_FAILED.replace('node dest.', 'node src.')
    [result] = _evaluate(steps, [{'periodics-clean': {}}], {})
    assert result['actual'] == [
        'src: 1 periodic error(s) (CPUPinningInvalid)',
        'dest: 1 periodic error(s) (CPUPinningInvalid)']


def test_peer_periodic_cases_run_each_other_hosts_periodic_off_the_lock():
    """One case per other host of the workflow, only where the hit thread
    holds no tracker lock (the embedded Nova's hosts share one) and not
    inside the host's own periodic."""
    steps = STEPS + [
        trace.TracedStep('tracker.drop_move_claim_at_dest', 'dest',
                         'unlocked'),
        trace.TracedStep('tracker.drop_move_claim_at_dest', 'dest', 'after'),
        trace.TracedStep('get_available_resource', 'dest', 'before',
                         in_periodic=True)]
    generated = cases.generate(steps, ('peer-periodic',),
                               hosts=['src', 'dest', 'third'])
    assert [c.id for c in generated] == [
        'live_migration.before@src:peer-periodic(dest)',
        'live_migration.before@src:peer-periodic(third)',
        'pre_live_migration.before@dest:peer-periodic(src)',
        'pre_live_migration.before@dest:peer-periodic(third)',
        'tracker.drop_move_claim_at_dest.unlocked@dest:peer-periodic(src)',
        'tracker.drop_move_claim_at_dest.unlocked@dest:peer-periodic(third)',
        'tracker.update_available_resource.before@dest:peer-periodic(src)',
        'tracker.update_available_resource.before@dest:'
        'peer-periodic(third)']
    case = generated[4]
    assert case.rule() == ('tracker.drop_move_claim_at_dest.unlocked: '
                           '1*periodic(host=src)')
    assert case.label == 'peer-periodic(src)'
    from faultdriver import actions
    from faultdriver import conf
    from faultdriver import points
    conf.RuleType(points.catalogue(), actions.load_all())(case.rule())
    workflow = model.load('resize-revert')
    data = cases.case_scenario(
        workflow, case, clean={'s1': {'status': 'ACTIVE', 'host': 'src',
                                      'migrations': ['reverted']}},
        clean_accounting={'src': True, 'dest': True})
    model.validate(data, 'case.yaml')
    [found] = [e for e in data['expectations'] if 'outcome-as-clean' in e]
    assert found['outcome-as-clean']['accounting'] == {'src': True,
                                                       'dest': True}


def _at_move_end(state, **pinned):
    """``state`` with each host's accounting when the moves ended:
    ``host=(pinned pCPUs, placement PCPU)``."""
    return dict(state, move_end={
        host: {'pinned_cpus': list(range(count)), 'placement_pcpu': pcpus,
               'matches': count == pcpus}
        for host, (count, pcpus) in pinned.items()})


def test_outcome_as_clean_breaks_where_a_host_lost_its_usage_at_move_end():
    """Bug 1879878's revert half: the source's periodic in the window
    frees the reverted server's pCPUs; the move ends as in the clean run
    (ACTIVE on src, reverted) but src's tracker holds 0 of placement's
    2 until recover's periodic repairs it."""
    clean = expect.moves_ended(runstates.state(_ended_state(
        host='src', migrations=('reverted',))))
    args = {'outcome': clean, 'accounting': {'src': True, 'dest': True}}
    ended = _ended_state(host='src', migrations=('reverted',))
    [held] = _evaluate(None, [{'outcome-as-clean': args}],
                       _at_move_end(ended, src=(2, 2), dest=(2, 2)))
    assert held['met'], held
    [broken] = _evaluate(None, [{'outcome-as-clean': args}],
                         _at_move_end(ended, src=(0, 2), dest=(2, 2)))
    assert not broken['met']
    assert broken['actual'] == {
        'src when the moves ended': '0 pinned / 2 PCPU in placement'}
    # A host that did not match in the clean run either is no finding.
    [same] = _evaluate(None, [{'outcome-as-clean': dict(
        args, accounting={'src': False, 'dest': True})}],
        _at_move_end(ended, src=(0, 2), dest=(2, 2)))
    assert same['met'], same


class _Ledger:
    """A backend whose src holds 2 pinned pCPUs and whose placement
    reads go through ``placements`` (one per look, then the last)."""

    def __init__(self, placements):
        self.placements = list(placements)

    def pinned_cpus(self, host):
        return [0, 1] if host == 'src' else []

    def placement_pcpus(self, host):
        if host != 'src':
            return 0
        return self.placements.pop(0) if len(self.placements) > 1 else \
            self.placements[0]


def _accounting_at_rest(placements):
    from faultdriver.scenario import steps as steps_module
    steps = steps_module.Steps(_Ledger(placements),
                               model.load('resize-revert'), 'stock')
    return steps._accounting_at_rest(['src', 'dest'], timeout=60)


def test_the_move_end_accounting_waits_out_a_call_still_under_way(
        monkeypatch):
    """A live migration's source saves 'completed' before it deletes the
    migration's allocation: a read in between is not the move's end."""
    monkeypatch.setattr(recovery, 'ACCOUNTING_QUIET', 0.01)
    assert _accounting_at_rest([4, 2])['src'].matches
    # A mismatch that stays (a periodic freed what placement holds) is
    # what the moves left.
    lasting = _accounting_at_rest([4])['src']
    assert not lasting.matches
    assert (len(lasting.pinned_cpus), lasting.placement_pcpu) == (2, 4)


def _cause(key, *case_ids):
    return {'known': key if key.startswith('F') else None, 'label': key,
            'key': key, 'cases': [{'id': c} for c in case_ids]}


def test_ab_names_the_causes_removed_kept_and_added():
    """``--ab`` by cause: a known finding by its number, the clean run's
    cause (no case B ran) not checked."""
    from faultdriver.sweep import compare

    def case(id_, *broken):
        return {'id': id_, 'broken': list(broken), 'internal_error': False}
    stock = {'patches': [], 'findings': [], 'cases': [
        case('a', 'x'), case('b', 'y')], 'causes': [
        _cause('F1', 'a'), _cause('F5', 'b'),
        _cause('the clean run', 'clean run')]}
    fixed = {'patches': ['fix'], 'findings': [], 'cases': [
        case('a', 'x'), case('b'), case('c', 'z')], 'causes': [
        _cause('F1', 'a'), _cause('new at c', 'c')]}
    diff = compare.compare(stock, fixed)
    assert diff['causes'] == {'removed': ['F5'],
                              'unchecked': ['the clean run'],
                              'kept': ['F1'], 'added': ['new at c']}
    assert compare.text(diff).splitlines()[1] == (
        'Causes: 1 removed (F5); 1 unchecked (the clean run); 1 kept (F1); '
        '1 added (new at c)')


def _sweep_doc(tmp_path, nova):
    return {'workflow': 'live-migration', 'backend': 'embedded',
            'mode': 'threading', 'patches': [], 'shard': '1/1',
            'nova': nova, 'results': str(tmp_path), 'wall_seconds': 1.0,
            'cases': [], 'findings': [], 'causes': [],
            'summary': '0 broken cases: 0 known, 0 unrecognised'}


def test_ab_html_heads_a_and_b_with_the_nova_each_ran(tmp_path):
    from faultdriver.sweep import htmlreport
    stock = {'base': 'nova 34.0.0', 'tree': None, 'patches': []}
    patched = dict(stock, patches=[{'file': 'F5.patch',
                                    'sha256': 'ab' * 32}])
    doc = {'a': _sweep_doc(tmp_path, stock),
           'b': dict(_sweep_doc(tmp_path, patched), patches=['fix_x']),
           'ab': {'patches': ['F5.patch (Nova)'], 'removed': [],
                  'kept': [], 'added': [], 'unchecked': [],
                  'regressions': [], 'causes': None}}
    page = htmlreport.render(doc, str(tmp_path))
    assert '<h2>A: live-migration on embedded (threading mode; Nova under ' \
        'test: nova 34.0.0 (stock))</h2>' in page
    assert '<h2>B: live-migration on embedded (threading mode, tracker ' \
        'fixes: fix_x; Nova under test: nova 34.0.0 + F5.patch (sha256 ' \
        'abababababab))</h2>' in page


def test_the_clean_runs_finding_has_a_reproducer_of_the_workflow(tmp_path):
    """A clean run that broke invariants: one finding per expectation,
    one case (``clean run``), one reproducer: the workflow on the Nova
    under test, ``expect: bug``, the broken invariants expected broken;
    a broken workflow expectation that is no invariant left out."""
    from faultdriver.sweep import causes
    from faultdriver.sweep import clean
    workflow = model.load('live-migration')
    report = {'verdict': 'expectations not met', 'expectations': [
        {'kind': 'migrations', 'met': False, 'actual': ['error']},
        {'kind': 'accounting-matches-placement', 'met': False,
         'actual': {'src': '0 pinned / 2 PCPU'}},
        {'kind': 'moves-again', 'met': True, 'actual': 'all moved'}]}
    run = clean.record(report, 'run.log')
    assert run['broken'] == ['migrations', 'accounting-matches-placement']
    found = clean.findings(workflow, run, str(tmp_path),
                           ['stale_migration_context'],
                           {'nova-patches': ['/abs/change.diff']})
    assert [f['invariant'] for f in found] == run['broken']
    [path] = {f['scenario'] for f in found}
    replay = model.load(path)
    assert replay.variants['stock']['expect'] == 'bug'
    assert replay.variants['stock']['nova-patches'] == ['/abs/change.diff']
    assert replay.variants['stock']['patches'] == [
        'stale_migration_context']
    wanted = [e.to_json() for e in replay.expectations('stock')]
    assert {'accounting-matches-placement': {'broken': True}} in wanted
    assert {'moves-again': {}} in wanted
    assert not any('migrations' in e for e in wanted)
    [cause] = causes.group(found)
    assert cause.label == ('unrecognised: the clean run (no fault): '
                           'accounting-matches-placement, migrations')
    assert [c.id for c in cause.cases] == ['clean run']


def test_merge_refuses_a_sweep_of_a_newer_format(tmp_path):
    from faultdriver import exception
    from faultdriver.sweep import merge
    meta = {'workflow': 'live-migration', 'backend': 'embedded',
            'mode': 'threading', 'patches': [], 'trace': [], 'shard': '1/1',
            'format_version': 99}
    folder = _shard_dir(tmp_path / 'a', meta, [])
    with pytest.raises(exception.ScenarioError,
                       match=r'sweep.json: written by another faultdriver '
                       r'\(sweep format version 99; this one reads 1, 2\)'):
        merge.merge([folder])


def test_service_classes_act_at_service_points_only():
    """``http-error`` and ``connfail`` only where a service answers; the
    compute-side classes never there (their steps are the driver's and
    tracker's around the call)."""
    def rule(point, phase, action):
        return cases.Case(point, 'src', phase, action).rule()
    move = 'placement.move_allocations'
    assert rule(move, 'before', 'http-error') == \
        'placement.move_allocations.before: 1*http(500)'
    # After the work: a proxy's 504, the service's own answer lost.
    assert rule(move, 'after', 'http-error') == \
        'placement.move_allocations.after: 1*http(504)'
    assert rule(move, 'after', 'connfail') == \
        'placement.move_allocations.after: 1*connfail'
    for action in cases.DEFAULT_ACTIONS + ('hang', 'delay', 'shutdown'):
        assert rule(move, 'before', action) is None
    for action in ('http-error', 'connfail'):
        assert rule('live_migration', 'before', action) is None
    steps = [trace.TracedStep(move, 'dest', 'before'),
             trace.TracedStep('live_migration', 'src', 'before')]
    generated = cases.generate(steps, ('crash', 'connfail'))
    assert [(c.point, c.action) for c in generated] == [
        ('live_migration', 'crash'), (move, 'connfail')]
    # Each case's rule is valid in a scenario on the embedded tier.
    from faultdriver.harness import injection
    for case in generated:
        injection.FaultInjection.parse(case.rule())


def test_a_point_family_no_provision_names_fires_everywhere():
    """A new kind of point is one declaration: until a Provision names
    its family, every tier fires it; once one does, only the tiers that
    provide it."""
    assert tiers.point_needs('rpc.prep_resize', 'rpc') == frozenset()
    assert all(tier.fires('rpc.prep_resize', 'rpc')
               for tier in tiers.TIERS.values())
    assert tiers.point_needs('volume.attachment_update', 'service') == {
        tiers.Provision.CINDER_REQUESTS}
    assert not tiers.get('embedded').fires('volume.attachment_update',
                                           'service')
    assert tiers.get('embedded').fires('placement.put_allocations',
                                       'service')
    assert tiers.get('process').fires('network.migrate_instance_start',
                                      'service')


def test_rpc_classes_act_at_rpc_points_only():
    """``drop``, ``lostreply`` and ``twice`` only at ``rpc.*`` points, as
    each can be there; the host's classes never at an ``rpc.*`` point."""
    def rule(point, phase, action, backend='process'):
        return cases.Case(point, 'src', phase, action).rule(backend)
    monitored = 'rpc.check_can_live_migrate_destination'
    plain = 'rpc.check_can_live_migrate_source'
    cast = 'rpc.live_migration'
    assert rule(plain, 'before', 'drop') == \
        'rpc.check_can_live_migrate_source.before: 1*drop'
    assert rule(plain, 'after', 'drop') is None
    assert rule(plain, 'after', 'lostreply') == \
        'rpc.check_can_live_migrate_source.after: 1*lostreply'
    assert rule(cast, 'before', 'lostreply') is None
    assert rule(cast, 'before', 'twice') == \
        'rpc.live_migration.before: 1*twice'
    # A caller with call_monitor_timeout on a transport without
    # heartbeats (the embedded Nova's) would wait long_rpc_timeout.
    assert rule(monitored, 'before', 'drop') is not None
    assert rule(monitored, 'before', 'drop', 'embedded') is None
    assert rule(monitored, 'before', 'twice', 'embedded') is not None
    assert rule(plain, 'before', 'drop', 'embedded') is not None
    for action in cases.DEFAULT_ACTIONS + ('hang', 'delay', 'http-error'):
        assert rule(plain, 'before', action) is None
    for action in ('drop', 'lostreply', 'twice'):
        assert rule('live_migration', 'before', action) is None


@pytest.mark.parametrize('backend, declared', [
    ('process', ['process', 'libvirt', 'cloud']),
    ('cloud', ['process', 'libvirt', 'cloud']),
    ('embedded', None)])
def test_a_written_trace_loads_and_names_the_tiers_that_can_run_it(
        tmp_path, backend, declared):
    """A trace on a tier whose Nova clients send Neutron and Cinder
    requests logs at those points; without ``backends`` the file was
    checked against the embedded tier too and refused, so no sweep on
    processes or a cloud ran past its trace.  Written, it names the
    tiers that can run it and loads."""
    from faultdriver.sweep import execute
    data = trace.trace_scenario(model.load('live-migration'),
                                backend=backend)
    path = execute.write_scenario(str(tmp_path), data)
    assert model.load(path).data.get('backends') == declared
