"""The server operations (shelve, shelve-offload, unshelve, rebuild,
stop-server, start-server, reboot-server) are step kinds of the one
registry: the schema takes them and refuses bad arguments, the
interpreter asks the API for each as Nova's API defines the action, the
exporter writes the request and the wait, a sweep's trace begins at
them, and the ``shelved-offload-time`` they depend on is refused where
the tier cannot set it.

Imports no Nova: the API is a recorder of the requests made (the
request is the step's whole outcome at this layer; the functional test
runs them on Nova).
"""

import pytest

from faultdriver import exception
from faultdriver import export
from faultdriver.scenario import model
from faultdriver.scenario import serverops
from faultdriver.scenario import specs
from faultdriver.scenario import stepkinds
from faultdriver.scenario import steps as steps_module

KINDS = ('shelve', 'shelve-offload', 'unshelve', 'rebuild', 'stop-server',
         'start-server', 'reboot-server')

SCENARIO = '''\
name: t
description: a scenario with server operations.
topology: {hosts: [src, dest]%s}
variants:
  stock: {description: stock}
steps:
  - boot: {server: s1, host: src}
%s
expectations:
  - servers-settled: {}
'''


def _write(tmp_path, steps, topology=''):
    path = tmp_path / 't.yaml'
    path.write_text(SCENARIO % (topology, '\n'.join(
        '  - %s' % step for step in steps)))
    return str(path)


def test_every_kind_is_registered_and_operates():
    assert [k.name for k in serverops.KINDS] == list(KINDS)
    for name in KINDS:
        kind = stepkinds.get(name)
        assert kind is not None and kind.operates and kind.export
        assert model.starts_operation(name)
    assert model.starts_operation('live-migrate')
    assert not model.starts_operation('settle')


def test_the_schema_takes_them(tmp_path):
    scenario = model.load(_write(tmp_path, [
        '%s: {server: s1}' % kind for kind in KINDS] + [
        'reboot-server: {server: s1, type: HARD}', 'settle: {}']))
    assert [s.kind for s in scenario.steps][1:-2] == list(KINDS)


@pytest.mark.parametrize('step, message', [
    ('shelve: {}', "'server' is a required property"),
    ('unshelve: {server: s1, host: dest}', 'unknown key'),
    ('reboot-server: {server: s1, type: WARM}', 'WARM'),
])
def test_the_schema_refuses_bad_arguments(tmp_path, step, message):
    with pytest.raises(exception.ScenarioError, match=message):
        model.load(_write(tmp_path, [step]))


def test_the_offload_time_is_checked(tmp_path):
    loaded = model.load(_write(tmp_path, ['shelve: {server: s1}'],
                               ', shelved-offload-time: -1'))
    assert loaded.shelved_offload_time == -1
    with pytest.raises(exception.ScenarioError, match='shelved-offload'):
        model.load(_write(tmp_path, ['shelve: {server: s1}'],
                          ', shelved-offload-time: -2'))


def test_a_cloud_refuses_the_offload_time(tmp_path):
    """A cloud keeps its own nova.conf: the workflow's choice could not
    be made there, so the scenario is refused, naming the key."""
    scenario = model.read(_write(tmp_path, ['shelve: {server: s1}'],
                                 ', shelved-offload-time: -1'))
    model.check_tier(scenario, 'embedded')
    model.check_tier(scenario, 'process')
    with pytest.raises(exception.ScenarioError) as raised:
        model.check_tier(scenario, 'cloud')
    assert 'shelved-offload-time' in str(raised.value)


class _API:
    def __init__(self):
        self.requests = []

    def post_server_action(self, server_id, body):
        self.requests.append((self, server_id, body))


class _Nova:
    def __init__(self):
        self.api, self.admin_api = _API(), _API()


@pytest.mark.parametrize('kind, args, admin, body', [
    ('shelve', {}, False, {'shelve': None}),
    ('shelve-offload', {}, True, {'shelveOffload': None}),
    ('unshelve', {}, False, {'unshelve': None}),
    ('rebuild', {}, False, {'rebuild': {'imageRef': 'img-1'}}),
    ('stop-server', {}, False, {'os-stop': None}),
    ('start-server', {}, False, {'os-start': None}),
    ('reboot-server', {}, False, {'reboot': {'type': 'SOFT'}}),
    ('reboot-server', {'type': 'HARD'}, False, {'reboot': {'type': 'HARD'}}),
])
def test_the_interpreter_asks_the_api(kind, args, admin, body):
    nova = _Nova()
    steps = steps_module.Steps(nova, None, 'stock')
    steps.servers['s1'] = {'id': 'uuid-1', 'image': {'id': 'img-1'}}
    assert steps.run(specs.StepSpec(kind, dict(args, server='s1'))) is None
    api = nova.admin_api if admin else nova.api
    assert api.requests == [(api, 'uuid-1', body)]
    assert steps.operated == {'s1'}


class _Refusing(_API):
    def post_server_action(self, server_id, body):
        raise _Refusal(409)


class _Refusal(Exception):
    def __init__(self, status):
        super().__init__('refused %d' % status)
        self.status = status


@pytest.mark.parametrize('kind', KINDS)
def test_a_refusal_is_the_outcome_only_where_it_may_be(kind):
    nova = _Nova()
    nova.api = nova.admin_api = _Refusing()
    nova.refusal_status = lambda exc: getattr(exc, 'status', None)
    steps = steps_module.Steps(nova, None, 'stock')
    steps.servers['s1'] = {'id': 'uuid-1', 'image': {'id': 'img-1'}}
    done = steps.run(specs.StepSpec(kind, {'server': 's1',
                                           'may-be-refused': True}))
    assert done == 'refused (409): refused 409'
    assert steps.operated == set()      # nothing for settle to wait for
    with pytest.raises(_Refusal):
        steps.run(specs.StepSpec(kind, {'server': 's1'}))


def test_a_rebuild_of_a_volume_backed_server_says_why():
    steps = steps_module.Steps(_Nova(), None, 'stock')
    steps.servers['s1'] = {'id': 'uuid-1', 'image': ''}
    with pytest.raises(AssertionError, match='booted from a volume'):
        steps.run(specs.StepSpec('rebuild', {'server': 's1'}))


def test_the_exporter_writes_the_request_and_the_wait(tmp_path):
    text = export.export(_write(tmp_path, [
        'shelve: {server: s1}', 'shelve-offload: {server: s1}',
        'rebuild: {server: s1}', 'reboot-server: {server: s1, type: HARD}']))
    assert "self.api.post_server_action(s1['id'], {'shelve': None})" in text
    assert "self.admin_api.post_server_action(s1['id'], " \
        "{'shelveOffload': None})" in text
    # Split after the comma, no trailing space (pycodestyle W291).
    assert "self.api.post_server_action(s1['id'],\n" \
        "            {'rebuild': {'imageRef': s1['image']['id']}})" in text
    assert "{'reboot': {'type': 'HARD'}}" in text
    assert text.count("{'OS-EXT-STS:task_state': None}") == 4


def test_an_exported_refusal_is_asserted_a_4xx(tmp_path):
    text = export.export(_write(tmp_path, [
        'unshelve: {server: s1, may-be-refused: true}']))
    lines = [line.strip() for line in text.splitlines()]
    at = lines.index('try:')
    assert lines[at:at + 6] == [
        'try:',
        "self.api.post_server_action(s1['id'], {'unshelve': None})",
        'except client.OpenStackApiException as exc:',
        'self.assertLess(exc.response.status_code, 500)',
        'else:',
        's1 = self._wait_for_server_parameter(']
    assert 'from nova.tests.functional.api import client' in text


def test_the_exported_test_sets_the_offload_time(tmp_path):
    text = export.export(_write(tmp_path, ['shelve: {server: s1}'],
                                ', shelved-offload-time: -1'))
    assert 'self.flags(shelved_offload_time=-1)' in text
