"""The host helper run for real (``python3 -`` with the script on
stdin) against recording fakes of systemctl, docker, journalctl, virsh
and rabbitmqctl (:mod:`tests.unit.fakehost`); the service-manager
drivers and the audit log's restore.  Real systemd and docker are not
here: they wait for a devstack run (issue 42)."""

import json
import os
import subprocess

import pytest

from faultdriver.cloud import audit as audit_module
from faultdriver.cloud import errors
from faultdriver.cloud import helper as helper_module
from faultdriver.cloud import services
from tests.unit import fakehost

UNIT = services.DEVSTACK_UNIT
KILL = ['systemctl', 'kill', '--kill-who=all', '--signal=SIGKILL', UNIT]


@pytest.fixture
def host():
    fake = fakehost.FakeHost()
    yield fake
    fake.close()


@pytest.fixture
def audit(tmp_path):
    return audit_module.AuditLog(str(tmp_path / 'audit.jsonl'))


def systemd(host, audit, unit=UNIT):
    return services.Systemd(host.helper(), unit, audit,
                            runtime_dir=host.runtime_dir)


def test_crash_kills_the_unit_alone_and_restore_starts_it(host, audit):
    driver = systemd(host, audit)
    assert driver.crash() == {'killed': UNIT}
    assert host.calls() == [KILL]
    assert [c['change'] for c in audit.open()] == ['crash ' + UNIT]
    undone = audit_module.restore(audit, lambda name: host.helper())
    assert [c['change'] for c in undone] == ['crash ' + UNIT]
    assert host.calls()[1:] == [['systemctl', 'reset-failed', UNIT],
                                ['systemctl', 'start', UNIT]]
    assert audit.open() == []
    # Nothing is left to replay a second time.
    assert audit_module.restore(audit, lambda name: host.helper()) == []


@pytest.mark.skipif(os.geteuid() != 0 and not os.environ.get('CI'),
                    reason='runs the helper as another user: needs root')
def test_a_user_who_is_not_root_changes_units_through_sudo(audit):
    # devstack's SSH user is stack: systemctl kill, start and journald's
    # records need root; reading a unit's state does not.
    fake = fakehost.FakeHost(user='nobody')
    try:
        fake.answer((['systemctl', 'show'], 'LoadState=loaded\n'
                     'ActiveState=failed\nResult=signal\n'),
                    (['journalctl'], '{"__CURSOR": "c1", "MESSAGE": "m"}\n'))
        driver = services.Systemd(fake.helper(), UNIT, audit,
                                  runtime_dir=fake.runtime_dir)
        driver.crash()
        assert driver.state()['state'] == 'crashed'
        fake.helper().journald(UNIT, 'c0')
        assert fake.calls() == [
            ['sudo', '-n'] + KILL, KILL,
            ['systemctl', 'show', '-p', 'LoadState,ActiveState,SubState,'
             'Result,ExecMainCode,ExecMainStatus,MainPID', UNIT],
            ['sudo', '-n', 'journalctl', '-u', UNIT, '-o', 'json',
             '--no-pager', '--after-cursor', 'c0'],
            ['journalctl', '-u', UNIT, '-o', 'json', '--no-pager',
             '--after-cursor', 'c0']]
    finally:
        fake.close()


def test_a_start_settles_the_crash(host, audit):
    driver = systemd(host, audit, services.devstack_unit(2))
    driver.crash()
    driver.start()
    assert audit.open() == []
    assert host.calls()[-1] == ['systemctl', 'start', 'devstack@n-cpu-2']


def test_stop_is_bounded_then_sigkill(host, audit):
    # Stuck stopping until the SIGKILL.
    host.answer((['systemctl', 'is-active'], 'failed\n', 3, '',
                 ['systemctl', 'kill']),
                (['systemctl', 'is-active'], 'deactivating\n', 0))
    assert systemd(host, audit).stop(bound=0.3) == {
        'stopped': True, 'killed': True}
    calls = host.calls()
    assert calls[0] == ['systemctl', 'stop', '--no-block', UNIT]
    assert KILL in calls


def test_a_stop_in_time_kills_nothing(host, audit):
    host.answer((['systemctl', 'is-active'], 'inactive\n', 3))
    assert systemd(host, audit).stop(bound=30) == {
        'stopped': True, 'killed': False}
    assert KILL not in host.calls()


@pytest.mark.parametrize('shown, state', [
    ('ActiveState=active\nResult=success\n', 'running'),
    ('ActiveState=inactive\nResult=success\n', 'stopped'),
    ('ActiveState=failed\nResult=signal\nExecMainStatus=9\n', 'crashed'),
    ('ActiveState=deactivating\nResult=success\n', 'stopping'),
])
def test_crashed_versus_stopped(host, audit, shown, state):
    host.answer((['systemctl', 'show'], 'LoadState=loaded\n' + shown))
    assert systemd(host, audit).state()['state'] == state


def test_an_unknown_unit_is_refused_naming_host_and_unit(host, audit):
    host.answer((['systemctl', 'show'], 'LoadState=not-found\n'))
    with pytest.raises(errors.HostRefused) as caught:
        systemd(host, audit).state()
    assert caught.value.host == 'localhost'
    assert caught.value.fact == 'no unit %s' % UNIT


def test_a_failing_command_is_the_fact(host, audit):
    host.answer((['systemctl', 'start'], '', 1, 'Job failed.\n'))
    with pytest.raises(errors.HostRefused) as caught:
        systemd(host, audit).start()
    assert caught.value.fact == (
        '`systemctl start %s` failed (exit 1): Job failed.' % UNIT)


def test_errors_are_one_json_document_and_exit_2(host):
    done = subprocess.run(
        ['python3', '-', 'journal', '--path', '/nonexistent/journal'],
        input=helper_module.script(), capture_output=True)
    assert done.returncode == 2
    assert json.loads(done.stdout) == {'error': {
        'verb': 'journal', 'fact': 'no journal file /nonexistent/journal'}}


def test_devstack_has_no_restart_to_override(host, audit):
    host.answer((['systemctl', 'show'], 'LoadState=loaded\nRestart=no\n'))
    assert systemd(host, audit).prepare() is False
    assert audit.records() == []
    assert ['systemctl', 'daemon-reload'] not in host.calls()


def test_osa_restart_overridden_by_a_runtime_drop_in(host, audit):
    host.answer((['systemctl', 'show'],
                 'LoadState=loaded\nRestart=on-failure\n'))
    driver = systemd(host, audit, services.OSA_UNIT)
    assert driver.prepare() is True
    drop_in = os.path.join(host.runtime_dir, 'nova-compute.service.d',
                           '50-faultdriver-no-restart.conf')
    with open(drop_in) as f:
        assert '[Service]\nRestart=no\n' in f.read()
    assert host.calls()[-1] == ['systemctl', 'daemon-reload']
    audit_module.restore(audit, lambda name: host.helper())
    assert not os.path.exists(drop_in)
    assert host.calls()[-1] == ['systemctl', 'daemon-reload']
    assert audit.open() == []


def test_kolla_restart_policy_and_restore_in_reverse(host, audit):
    host.answer((['docker', 'inspect', '--format',
                  '{{.HostConfig.RestartPolicy.Name}}'], 'unless-stopped\n'))
    driver = services.Docker(host.helper(), services.KOLLA_CONTAINER, audit)
    assert driver.prepare() is True
    driver.crash()
    assert host.calls()[-2:] == [
        ['docker', 'update', '--restart=no', 'nova_compute'],
        ['docker', 'kill', '--signal', 'KILL', 'nova_compute']]
    before = len(host.calls())
    audit_module.restore(audit, lambda name: host.helper())
    # Last change first: the container started, then its policy back.
    assert host.calls()[before:] == [
        ['docker', 'start', 'nova_compute'],
        ['docker', 'update', '--restart=unless-stopped', 'nova_compute']]


def test_the_audit_is_written_before_the_change(host, audit):
    # A change that fails on the host is still in the log: a restore
    # cannot miss one that half happened.
    host.answer((['systemctl', 'kill'], '', 1, 'Failed to kill.\n'))
    with pytest.raises(errors.HostRefused):
        systemd(host, audit).crash()
    assert [c['change'] for c in audit.open()] == ['crash ' + UNIT]


def test_journal_file_lines_from_a_line(host, tmp_path):
    path = tmp_path / 'journal'
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n{"a": 4')
    assert host.helper().journal(str(path), 1) == {
        'lines': ['{"a": 2}', '{"a": 3}'], 'next': 3}


def test_journald_records_since_a_cursor(host):
    entries = [{'__CURSOR': 's=1', 'MESSAGE': '\x1b[01;31mERROR\x1b[00m x'},
               {'__CURSOR': 's=2', 'MESSAGE': 'plain'}]
    host.answer((['journalctl'], ''.join(json.dumps(e) + '\n'
                                         for e in entries)))
    assert host.helper().journald(UNIT, 's=0') == {
        'records': ['ERROR x', 'plain'], 'cursor': 's=2'}
    assert host.calls()[-1] == ['journalctl', '-u', UNIT, '-o', 'json',
                                '--no-pager', '--after-cursor', 's=0']


def test_log_file_by_byte_offset(host, tmp_path):
    path = tmp_path / 'nova-compute.log'
    path.write_bytes(b'old line\n')
    start = host.helper().log_file(str(path))
    assert start == {'records': [], 'offset': 9}
    with open(path, 'ab') as f:
        f.write(b'new one\nhalf')
    assert host.helper().log_file(str(path), start['offset']) == {
        'records': ['new one'], 'offset': 17}


def test_guests_and_their_disks(host):
    uuid = '5f2c0b2e-0000-4000-8000-000000000001'
    host.answer(
        (['virsh', '-c', 'qemu:///system', 'list'], uuid + '\n\n'),
        (['virsh', '-c', 'qemu:///system', 'domstate'], 'running\n\n'),
        (['virsh', '-c', 'qemu:///system', 'domblklist'],
         ' Type   Device   Target   Source\n'
         '------------------------------------\n'
         ' file   disk     vda      /var/lib/nova/instances/x/disk\n\n'))
    assert host.helper().guests() == [{
        'uuid': uuid, 'state': 'running', 'disks': [{
            'type': 'file', 'device': 'disk', 'target': 'vda',
            'source': '/var/lib/nova/instances/x/disk'}]}]


def test_queued_messages_of_the_broker(host):
    host.answer((['docker', 'exec', 'rabbitmq', 'rabbitmqctl'],
                 'compute.devstack0b\t2\nconductor\t0\n'))
    assert host.helper().queued('/', container='rabbitmq') == {
        'compute.devstack0b': 2, 'conductor': 0}
    assert host.calls()[-1][:7] == ['docker', 'exec', 'rabbitmq',
                                    'rabbitmqctl', '-q', '-p', '/']


def test_the_helper_parses_as_python_3_6():
    # A host's python3 may be older than the runner's: the helper's
    # annotations (strict mypy) must stay in what Python 3.6 parses --
    # no walrus, no positional-only parameters, no match.  (ast's
    # feature_version checks the grammar, not the typing names: those
    # are kept to typing.Dict, List and Optional by review.)
    import ast
    with open(helper_module.SCRIPT_PATH) as f:
        source = f.read()
    tree = ast.parse(source, feature_version=(3, 6))
    # Python 3.6 has no annotations future (3.7 has).
    assert not [node for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and
                node.module == '__future__']
    with pytest.raises(SyntaxError):
        ast.parse('def f(a, /): pass', feature_version=(3, 6))
