"""``faultdriver stack up`` / ``stack down``: a standing cloud with real
Keystone, two computes and a key-only sshd per compute, under a detached
supervisor; through its ssh_config and the host helper (the cloud
tier's ``stack`` service driver), a compute crashes (every other
service keeps its pid), starts, stops; ``stack down`` leaves nothing
(checked when the module's stack goes down).

One standing stack for the module (bring-up ~50 s); the user the files
are given to (``--owner``) reads them but not the stack's directory.
"""

import os
import pwd
import stat

import openstack
import pytest
import yaml

from faultdriver.cloud import audit
from faultdriver.cloud import errors
from faultdriver.cloud import helper
from faultdriver.cloud import services
from faultdriver.cloud import transport
from faultdriver.cmd import main
from faultdriver.cmd import stack as stack_cmd
from faultdriver.process import procs
from faultdriver.process import supervisor
from tests import sshd

pytestmark = pytest.mark.skipif(
    not sshd.available() and not os.environ.get('CI'), reason=sshd.MISSING)

#: A user other than the one running the stack, where there is one.
OWNER = 'nobody'


def cli(*argv):
    app = main.FaultDriverApp()
    app.command_manager.add_command('stack up', stack_cmd.StackUp)
    app.command_manager.add_command('stack down', stack_cmd.StackDown)
    return app.run(list(argv))


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('standing'))
    owner = OWNER if os.geteuid() == 0 else None
    args = ['stack', 'up', '--out', out, '--name', 'ci']
    if owner:
        args += ['--owner', owner]
    if supervisor.running_pid():
        pytest.fail('a standing stack already runs (supervisor pid %d): '
                    'not ours to end' % supervisor.running_pid())
    # Refused or failed: nothing of ours to end (never another's stack).
    assert cli(*args) == 0
    state = supervisor.read_state()
    try:
        yield out, state, owner
        sessions = procs.sessions_of_stack(state['stack_dir'])
    finally:
        down = cli('stack', 'down')
    # `stack down` leaves nothing (a failure here fails the module).
    assert down == 0
    assert not all_pids(state['stack_dir'])
    assert not procs.alive_in_sessions(sessions, state['stack_dir'])
    assert not os.path.exists(state['stack_dir'])
    assert supervisor.running_pid() is None
    assert supervisor.read_state()['state'] == 'down'


def profile(out):
    with open(os.path.join(out, 'profile.yaml')) as f:
        return yaml.safe_load(f)


def driver(out, alias, log):
    entry = profile(out)['hosts'][alias]
    target = transport.SshTarget(entry['ssh'], os.path.join(out,
                                                            'ssh_config'))
    return target, entry, log


def all_pids(stack_dir):
    return {pid for pid, _fields, marker in procs._live_processes()
            if marker == stack_dir}


def started(stack_dir):
    """The live processes the stack started (each leads its session:
    MariaDB, RabbitMQ, each API, service, compute and sshd), not what
    comes and goes (an ssh session's sshd child)."""
    sessions = procs.sessions_of_stack(stack_dir)
    return sessions & set(procs.alive_in_sessions(sessions, stack_dir))


def test_the_client_files_are_the_owners_and_the_stack_is_not(cloud):
    out, state, owner = cloud
    names = sorted(os.listdir(out))
    assert names == ['clouds.yaml', 'id_ed25519', 'id_ed25519.pub',
                     'known_hosts', 'profile.yaml', 'ssh_config']
    if owner:
        uid = pwd.getpwnam(owner).pw_uid
        assert {os.stat(os.path.join(out, n)).st_uid for n in names} == {uid}
    assert stat.S_IMODE(os.stat(os.path.join(out, 'clouds.yaml')).st_mode) \
        == 0o600
    assert stat.S_IMODE(os.stat(state['stack_dir']).st_mode) == 0o700


def test_the_profile_maps_the_aliases_to_the_computes(cloud):
    out, state, _owner = cloud
    loaded = profile(out)
    assert loaded['format'] == 1 and loaded['cloud'] == 'ci-admin'
    assert loaded['fault_injection_allowed'] is True
    assert {alias: (h['host'], h['manager'], h['ssh'])
            for alias, h in loaded['hosts'].items()} == {
        'src': ('compute1', 'stack', 'ci-compute1'),
        'dest': ('compute2', 'stack', 'ci-compute2')}
    for entry in loaded['hosts'].values():
        assert os.path.exists(entry['socket'])


def test_clouds_yaml_reaches_nova_through_keystone(cloud, monkeypatch):
    out, _state, _owner = cloud
    monkeypatch.setenv('OS_CLIENT_CONFIG_FILE',
                       os.path.join(out, 'clouds.yaml'))
    conn = openstack.connect(cloud='ci-admin')
    # Their names, not their states: a loaded machine may show a
    # compute down between two of its reports.
    assert sorted(s.host for s in conn.compute.services()
                  if s.binary == 'nova-compute') == ['compute1', 'compute2']
    assert sorted(h.name for h in conn.compute.hypervisors()) == [
        'compute1', 'compute2']


def test_a_crash_over_ssh_leaves_every_other_pid(cloud, tmp_path):
    out, state, _owner = cloud
    log = audit.AuditLog(str(tmp_path / 'audit.jsonl'))
    target, entry, _ = driver(out, 'src', log)
    with transport.Transport(target) as reached:
        stack_driver = services.Stack(helper.HostHelper(reached),
                                      entry['unit'], log)
        running = stack_driver.state()
        assert running['state'] == 'running'
        others = started(state['stack_dir']) - {running['pid']}
        assert len(others) >= 8
        stack_driver.crash()
        assert stack_driver.state()['state'] == 'crashed'
        assert started(state['stack_dir']) == others
        stack_driver.start()
        assert stack_driver.state()['state'] == 'running'
        stack_driver.stop(bound=30)
        assert stack_driver.state()['state'] == 'stopped'
        stack_driver.start()
        assert stack_driver.state()['state'] == 'running'


def test_an_unknown_compute_is_refused_naming_it(cloud, tmp_path):
    out, _state, _owner = cloud
    log = audit.AuditLog(str(tmp_path / 'audit.jsonl'))
    target, _entry, _ = driver(out, 'src', log)
    with transport.Transport(target) as reached:
        with pytest.raises(errors.HostRefused) as caught:
            services.Stack(helper.HostHelper(reached), 'compute9',
                           log).state()
    assert "no compute 'compute9'" in str(caught.value)


def test_a_second_stack_up_is_refused(cloud, capfd):
    out, state, _owner = cloud
    assert cli('stack', 'up', '--out', out + '-2') == 2
    assert 'already runs (supervisor pid %d' % state['pid'] in \
        capfd.readouterr().err
