"""A user's concurrent second confirm or revert, as a scenario sees it:
what the API answered each (the ``decisions`` expectation) and when the
computes handled every one it took (the ``wait-decisions`` step).

Invariants: the answers are recorded in step order, a refusal as its
HTTP status; the expectation fails on other answers; the wait ends only
once each taken confirm's compute event finished (or failed), and fails
at its timeout while one is still running.  The cloud is a stand-in for
the API (the steps' own logic is what is under test).
"""

import pytest

from faultdriver.scenario import backend_base
from faultdriver.scenario import expect
from faultdriver.scenario import model
from faultdriver.scenario import steps as steps_module


class Refused(Exception):
    """The API's 4xx, as the functional client raises it."""

    def __init__(self, status):
        super().__init__('Unexpected status code: %d' % status)
        self.status = status


class _API:
    """``POST /servers/{id}/action`` answered from a list, and the
    server's instance actions, whose compute events finish after
    ``polls`` looks (the compute still handling a confirm)."""

    def __init__(self, answers, actions=(), polls=0):
        self.answers = list(answers)
        self.actions = list(actions)
        self.polls = polls

    def post_server_action(self, server_id, body):
        answer = self.answers.pop(0)
        if answer != 'accepted':
            raise Refused(answer)

    def get_instance_actions(self, server_id):
        return [{'action': action, 'request_id': 'req-%d' % i}
                for i, (action, _event) in enumerate(self.actions)]

    def get_instance_action_details(self, server_id, request_id):
        self.polls -= 1
        action, event = self.actions[int(request_id.split('-')[1])]
        return {'events': [{'event': event, 'result': 'Success',
                            'finish_time': None if self.polls > 0
                            else 'now'}]}


class _Nova:
    POLL = 0
    wait = backend_base.BackendBase.wait

    def __init__(self, api):
        self.api = self.admin_api = api

    def refusal_status(self, error):
        return getattr(error, 'status', None)


def _steps(api):
    steps = steps_module.Steps(_Nova(api), model.load('resize-confirm'),
                               'stock')
    steps.servers = {'s1': {'id': 'u1'}}
    return steps


def _decisions(steps, outcomes):
    return expect.KINDS['decisions'](steps, None, server='s1',
                                     outcomes=outcomes)


def test_a_refused_second_confirm_is_recorded_with_its_status():
    steps = _steps(_API(['accepted', 400]))
    assert steps.do_confirm('s1') is None
    assert steps.do_confirm('s1', may_be_refused=True).startswith(
        'refused (400)')
    assert _decisions(steps, ['accepted', 400])[0]
    met, _text, actual = _decisions(steps, ['accepted', 'accepted'])
    assert not met and actual == ['accepted', 400]


def test_a_refusal_without_may_be_refused_fails_the_step():
    steps = _steps(_API([409]))
    with pytest.raises(Refused):
        steps.do_revert('s1')
    assert steps.decisions == []


def test_wait_decisions_waits_for_every_taken_confirm():
    api = _API([], [('confirmResize', 'compute_confirm_resize'),
                    ('resize', 'compute_resize'),
                    ('confirmResize', 'compute_confirm_resize')], polls=6)
    assert _steps(api).do_wait_decisions('s1', timeout=10) == '2 handled'
    assert api.polls <= 0


def test_wait_decisions_fails_while_a_confirm_is_still_handled():
    api = _API([], [('confirmResize', 'compute_confirm_resize')],
               polls=10 ** 9)
    with pytest.raises(AssertionError, match='confirms and reverts of s1'):
        _steps(api).do_wait_decisions('s1', timeout=0.2)
