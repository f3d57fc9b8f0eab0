"""``sweep --depth 2`` without Nova running: the recovery trace read
from a journal, the second faults generated and pruned, their scenario
files (valid, the rule in ``recover``), and findings that count only
what the second fault adds."""

import pytest

from faultdriver import exception
from faultdriver.scenario import model
from faultdriver.sweep import cases
from faultdriver.sweep import casetext
from faultdriver.sweep import findings
from faultdriver.sweep import recovery
from faultdriver.sweep import trace

FIRST = cases.Case('pre_live_migration', 'dest', 'before', 'crash')


def _logged(time, host, point, hit=1, phase='before', in_periodic=None):
    return {'time': time, 'host': host, 'point': point, 'phase': phase,
            'action': 'log', 'hit': hit, 'in_periodic': in_periodic}


#: A crash case's report with its recovery traced: dest's restarted
#: service hits init_host, then the start-up resource update twice (once
#: more in recover's periodic); src's hits are not dest's recovery.
RECOVERED = {
    'steps_started_at': 1000.0,
    'timeline': [{'kind': 'boot', 'start': 0},
                 {'kind': 'live-migrate', 'start': 2},
                 {'kind': 'recover', 'start': 10}],
    'state': {'faults': [
        # The move, before recover: not the recovery.
        _logged(1003, 'dest', 'get_available_resource'),
        _logged(1011, 'dest', 'init_host'),
        _logged(1011.5, 'dest', 'get_available_resource'),
        _logged(1012, 'src', 'get_available_resource', hit=4),
        _logged(1013, 'dest', 'get_available_resource', hit=2,
                in_periodic=True),
        _logged(1013.5, 'dest', 'init_host', phase='after'),
        {'time': 1014, 'host': 'dest', 'point': 'tracker.x',
         'kind': 'periodic'},
    ]}}


def test_the_recovery_trace_is_the_restarted_hosts_hits_after_recover():
    steps = trace.recovery_steps_hit(RECOVERED, 'dest')
    assert steps == [('init_host', 'dest', 'before', 0, False, 0),
                     ('get_available_resource', 'dest', 'before', 0, False,
                      0),
                     ('init_host', 'dest', 'after', 0, False, 0)]
    assert trace.recovery_steps_hit(dict(RECOVERED, timeline=[]),
                                    'dest') == []


def _result(case, broken=(), recovery_trace=(), internal=False):
    return {'id': case.id, 'point': case.point, 'host': case.host,
            'phase': case.phase, 'action': case.action,
            'first': case.first.id if case.first else None,
            'broken': list(broken), 'internal_error': internal,
            'details': [{'kind': b, 'actual': 'seen'} for b in broken],
            'recovery_trace': [s.to_json() for s in recovery_trace],
            'scenario': '/nowhere/%s.yaml' % case.slug, 'seconds': 10.0}


def test_second_faults_follow_each_distinct_recovery_path_once():
    path = trace.recovery_steps_hit(RECOVERED, 'dest')
    other = [trace.TracedStep('init_host', 'dest', 'before')]
    firsts = [FIRST,
              cases.Case('pre_live_migration', 'dest', 'after', 'crash'),
              cases.Case('live_migration', 'src', 'before', 'crash'),
              cases.Case('pre_live_migration', 'dest', 'before', 'raise'),
              cases.Case('rollback_live_migration_at_destination', 'dest',
                         'before', 'crash')]
    results = {
        # The same recovery path: the second one's second faults pruned.
        firsts[0].id: _result(firsts[0], recovery_trace=path),
        firsts[1].id: _result(firsts[1], recovery_trace=path),
        firsts[2].id: _result(firsts[2], recovery_trace=other),
        # A raise restarts nothing; an internal error has no trace worth
        # following.
        firsts[3].id: _result(firsts[3]),
        firsts[4].id: _result(firsts[4], recovery_trace=other,
                              internal=True)}
    second, figures = recovery.second_faults(firsts, results)
    assert sorted(c.id for c in second) == sorted(
        [FIRST.id + ' > %s@dest:%s' % (step, action)
         for step in ('get_available_resource.before', 'init_host.after',
                      'init_host.before')
         for action in ('crash', 'raise')] +
        [firsts[2].id + ' > init_host.before@dest:%s' % action
         for action in ('crash', 'raise')])
    assert all(c.first in (FIRST, firsts[2]) for c in second)
    assert figures == {'first_faults_recovered': 3, 'recovery_paths': 2,
                       'cases': 8, 'cases_without_pruning': 14,
                       'pruned': 6}
    narrowed, figures = recovery.second_faults(firsts, results,
                                               points=['init_host'])
    assert figures['cases'] == 6 and figures['pruned'] == 4
    seconds = [_result(c) for c in second]
    assert recovery.cost_without_pruning({'pruned': 3}, seconds) == 30.0
    assert recovery.cost_without_pruning({'pruned': 3}, []) is None


def test_a_second_faults_scenario_puts_its_rule_in_recover():
    workflow = model.load('live-migration')
    second = cases.Case('init_host', 'dest', 'before', 'crash', skip=0,
                        first=FIRST)
    data = cases.case_scenario(workflow, second)
    model.validate(data, 'case.yaml')
    assert data['rules']['dest'][-1] == 'pre_live_migration.before: 1*crash'
    [recover] = [s['recover'] for s in data['steps'] if 'recover' in s]
    assert recover['rules'] == {'dest': ['init_host.before: 1*crash']}
    assert data['name'] == second.name('case') != FIRST.name('case')
    # The workflow is left as it was.
    assert not any('rules' in (s.get('recover') or {})
                   for s in workflow.data['steps'])


def test_a_first_fault_that_needs_a_restart_traces_its_recovery():
    workflow = model.load('live-migration')
    data = cases.case_scenario(workflow, FIRST, trace_recovery=True)
    model.validate(data, 'case.yaml')
    [recover] = [s['recover'] for s in data['steps'] if 'recover' in s]
    assert recover['rules']['dest'] == trace.trace_rules()
    raised = cases.Case('pre_live_migration', 'dest', 'before', 'raise')
    data = cases.case_scenario(workflow, raised, trace_recovery=True)
    assert not any((s.get('recover') or {}).get('rules')
                   for s in data['steps'])


def test_recover_rules_name_hosts_and_rules_that_exist():
    workflow = model.load('live-migration')
    data = cases.case_scenario(workflow, cases.Case(
        'init_host', 'nowhere', 'before', 'crash', first=FIRST))
    with pytest.raises(exception.ScenarioError,
                       match=r'recover\.rules\.nowhere'):
        model.validate(data, 'case.yaml')
    data = cases.case_scenario(workflow, cases.Case(
        'init_host', 'dest', 'before', 'crash', first=FIRST))
    [recover] = [s['recover'] for s in data['steps'] if 'recover' in s]
    recover['rules']['dest'] = ['no_such_point.before: 1*crash']
    with pytest.raises(exception.ScenarioError,
                       match=r'recover\.rules\.dest\[0\]'):
        model.validate(data, 'case.yaml')


def test_a_second_fault_is_a_finding_only_for_what_it_adds():
    second = cases.Case('init_host', 'dest', 'before', 'crash', first=FIRST)
    results = [
        _result(FIRST, broken=['allocations-consistent']),
        # The first fault's leak again, and a migration left running.
        _result(second, broken=['allocations-consistent',
                                'migrations-terminal'])]
    found = findings.group(results)
    assert [(f['invariant'], f['first'], f['cases']) for f in found] == [
        ('allocations-consistent', None, [FIRST.id]),
        ('migrations-terminal', FIRST.id, [second.id])]
    assert casetext.step_label(found[1]) == (
        FIRST.id + ' then init_host.before@dest')
    name = findings._finding_name(found[1])
    assert name != findings._finding_name(dict(found[1], first=None))
    assert len(name) <= 64
