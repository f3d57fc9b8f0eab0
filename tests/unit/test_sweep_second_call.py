"""The ``second-call`` action class: which cases a workflow gets, the
scenario each case is, and how a call's answer is judged.

Invariant: every traced step of the move (not a periodic's hit, not a
restarted service's) gets one case per call its workflow's move allows;
the case holds the step at barrier ``second-call``, starts the other
user before the move and joins it before ``recover``; a call Nova
refused with a 4xx or accepted is judged by the invariants, a 5xx or no
answer breaks ``second-call``, and a call not made while the step was
held is *not reached*: neither ok nor a finding.  (Imports no Nova's
services; no scenario runs.)
"""

import pytest

from faultdriver.scenario import model
from faultdriver.scenario import secondcall
from faultdriver.sweep import cases
from faultdriver.sweep import execute
from faultdriver.sweep import findings
from faultdriver.sweep import report
from faultdriver.sweep import trace

STEPS = [trace.TracedStep('live_migration', 'src', 'before'),
         trace.TracedStep('pre_live_migration', 'dest', 'after', skip=1),
         trace.TracedStep('update_provider_tree', 'src', 'before',
                          in_periodic=True),
         trace.TracedStep('spawn', 'src', 'before', restart=1)]


def test_a_case_per_step_and_call_of_the_move():
    calls = cases.second_calls(model.load('live-migration').data)
    assert calls == ('live-migrate', 'abort', 'delete', 'stop', 'reboot')
    found = cases.generate(STEPS, ['second-call'], calls=calls)
    # Neither the periodic's hit nor the restarted service's.
    assert {(c.point, c.call) for c in found} == {
        (point, call) for point in ('live_migration', 'pre_live_migration')
        for call in calls}
    case = [c for c in found if c.point == 'pre_live_migration' and
            c.call == 'delete'][0]
    assert case.id == 'pre_live_migration.after@dest:second-call(delete)'
    assert case.rule() == ('pre_live_migration.after: 1*off -> '
                           '1*hang(300, second-call)')


def test_the_resize_workflow_gets_the_users_decisions():
    assert cases.second_calls(model.load('resize-confirm').data) == (
        'resize', 'confirm', 'revert', 'delete', 'stop', 'reboot')


def test_the_shelve_and_rebuild_workflows_get_their_calls(tmp_path):
    # The user's unshelve while the shelve runs (or twice), an admin's
    # offload, besides delete, stop and reboot.
    assert cases.second_calls(model.load('shelve-unshelve').data) == (
        'shelve', 'shelve-offload', 'unshelve', 'delete', 'stop', 'reboot')
    assert cases.second_calls(model.load('rebuild').data) == (
        'rebuild', 'delete', 'stop', 'reboot')
    case = cases.Case('tracker.instance_claim', 'src', 'before',
                      'second-call', skip=1, call='unshelve')
    data = _scenario('shelve-unshelve', case, tmp_path)
    kinds = [next(iter(step)) for step in data['steps']]
    # The other user starts before the shelve, the first operation.
    assert kinds.index('second-call') == kinds.index('shelve') - 1
    assert data['steps'][kinds.index('second-call')]['second-call'] == {
        'server': 's1', 'call': 'unshelve', 'host': 'src',
        'point': 'tracker.instance_claim', 'phase': 'before', 'count': 2}


def test_a_move_after_another_operation_still_gets_the_moves_calls():
    data = {'name': 'x', 'steps': [
        {'boot': {'server': 's1', 'host': 'src'}},
        {'stop-server': {'server': 's1'}},
        {'migrate': {'server': 's1'}}]}
    assert cases.moved(data)[:2] == (2, 'migrate')
    assert cases.second_calls(data) == SECOND_MIGRATE


SECOND_MIGRATE = ('migrate', 'confirm', 'revert', 'delete', 'stop', 'reboot')


def test_no_call_no_case():
    """A workflow without a move step has no call to make: no case (a
    sweep of nothing is refused by the sweep, naming the class)."""
    assert cases.second_calls({'name': 'x', 'steps': [{'settle': {}}]}) \
        == ()
    assert cases.generate(STEPS, ['second-call']) == []


def _scenario(workflow, case, tmp_path):
    data = cases.case_scenario(model.load(workflow), case,
                               clean={'s1': {}})
    # The sweep's scenario is valid input (the schema, its steps).
    path = execute.write_scenario(str(tmp_path), data)
    model.load(path)
    return data


def test_the_other_user_starts_before_the_move_and_ends_before_recover(
        tmp_path):
    case = cases.Case('pre_live_migration', 'dest', 'after', 'second-call',
                      skip=1, call='live-migrate')
    data = _scenario('live-migration', case, tmp_path)
    kinds = [next(iter(step)) for step in data['steps']]
    assert kinds == ['boot', 'boot', 'second-call', 'live-migrate', 'settle',
                     'wait-second-call', 'recover']
    assert data['steps'][2]['second-call'] == {
        'server': 's1', 'call': 'live-migrate', 'host': 'dest',
        'point': 'pre_live_migration', 'phase': 'after', 'count': 2,
        'to': 'dest'}
    assert data['rules']['dest'] == [case.rule()]
    assert {'second-call': {'server': 's1'}} in data['expectations']


def test_a_second_resize_asks_the_same_flavor(tmp_path):
    case = cases.Case('confirm_migration', 'src', 'before', 'second-call',
                      call='resize')
    data = _scenario('resize-confirm', case, tmp_path)
    [call] = [s['second-call'] for s in data['steps'] if 'second-call' in s]
    assert call['flavor'] == 'small' and 'to' not in call
    # Before the confirm it holds: in the steps before decide-resize.
    kinds = [next(iter(step)) for step in data['steps']]
    assert kinds.index('second-call') < kinds.index('resize') < \
        kinds.index('decide-resize') < kinds.index('wait-second-call') < \
        kinds.index('recover')


def made(**fields):
    values = dict(server='s1', call='confirm', host='src',
                  point='confirm_migration', phase='before',
                  barrier='second-call', held_since=10.0, held_before=1,
                  held_after=1, called_at=11.0, answered_at=11.5,
                  answer='accepted')
    values.update(fields)
    return secondcall.Made(**values)


@pytest.mark.parametrize('fields, verdict', [
    ({}, secondcall.ACCEPTED),
    ({'answer': 400}, secondcall.REFUSED),
    ({'answer': 409}, secondcall.REFUSED),
    # A 5xx is no refusal: the client gives no status for it.
    ({'answer': None, 'error': 'ClientError: 500'}, secondcall.UNCLEAN),
    # Never called: the step was not held.
    ({'called_at': None, 'error': 'never held'}, secondcall.NOT_REACHED),
    # Released before the answer came: not made during the step.
    ({'held_after': 0}, secondcall.NOT_REACHED),
    ({'held_before': 0}, secondcall.NOT_REACHED),
    # The journal's hold began after the call.
    ({'held_since': 12.0}, secondcall.NOT_REACHED),
])
def test_the_answer_is_judged(fields, verdict):
    assert secondcall.judge(made(**fields))[0] == verdict


class _Steps:
    def __init__(self, *calls):
        self.second_calls = [(call, None) for call in calls]


def test_the_expectation_takes_a_refusal_or_an_acceptance_only():
    met, _text, actual = secondcall.checked(_Steps(made(answer=400)), None,
                                            's1')
    assert met and actual[0]['verdict'] == 'refused'
    assert not secondcall.checked(_Steps(made(answer=None)), None, 's1')[0]
    # No call made at all is never met.
    assert not secondcall.checked(_Steps(), None, 's1')[0]


def _result(tmp_path, answer, **fields):
    case = cases.Case('confirm_migration', 'src', 'before', 'second-call',
                      call='confirm')
    call = made(answer=answer, **fields)
    met, text, actual = secondcall.checked(_Steps(call), None, 's1')
    run = {'verdict': 'ok' if met else 'expectations not met',
           'expectations': [{'kind': 'second-call', 'met': met,
                             'expectation': text, 'actual': actual}],
           'timeline': []}
    return execute.summarize(case, run, str(tmp_path / 'case.yaml'), 1.0)


def test_a_call_not_made_while_held_is_not_counted(tmp_path):
    result = _result(tmp_path, 'accepted', held_after=0)
    assert result['not_reached'] and result['internal_error']
    assert report.outcome(result) == 'NOT REACHED (not counted)'
    # Neither ok nor a finding.
    assert findings.group([result]) == []


def test_the_answer_is_in_the_case_result(tmp_path):
    result = _result(tmp_path, 400)
    assert not result['internal_error'] and not result['broken']
    assert result['second_call'][0]['answer'] == 400
    assert report.outcome(result) == 'ok (400)'
    unclean = _result(tmp_path, None, error='ClientError: 500')
    assert unclean['broken'] == ['second-call']
    assert report.outcome(unclean) == 'second-call (no answer)'
