"""The cloud transport against a REAL key-only sshd on 127.0.0.1
(:mod:`tests.sshd`, started by hand, never as a service): a
faultdriver control server's socket forwarded over OpenSSH and the
unchanged control client talking through it; the relay fallback where
sshd forbids forwarding, through the real ``ctl relay`` command; and
each refusal exiting 2 naming the host and the fact.

In the process tier's line (tools/install-process-deps.sh installs
OpenSSH there); skipped only where no OpenSSH server is installed, and
never in CI, where a missing sshd fails the tests instead.
"""

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from faultdriver.cloud import errors
from faultdriver.cloud import helper
from faultdriver.cloud import transport
from faultdriver.cmd import cloud as cloud_cmd
from faultdriver.cmd import main
from faultdriver.control import client
from faultdriver.control import server as server_module
from faultdriver.process import procs
from tests import sshd

pytestmark = pytest.mark.skipif(
    not sshd.available() and not os.environ.get('CI'), reason=sshd.MISSING)

ROOT = sshd.ROOT
RELAY = sshd.RELAY


@pytest.fixture(scope='module')
def server_sshd():
    running = sshd.Sshd().start()
    yield running
    running.stop()


@pytest.fixture
def served(engine):
    directory = tempfile.mkdtemp(prefix='fdc', dir='/tmp')
    from tests.unit import fakes
    server = server_module.ControlServer(
        os.path.join(directory, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule).start()
    yield server
    server.stop()
    shutil.rmtree(directory, ignore_errors=True)


def target(running, alias):
    return transport.SshTarget(alias, running.path('ssh_config'),
                               relay_command=RELAY)


def test_forwarded_socket_serves_the_unchanged_client(
        server_sshd, served, engine):
    with transport.Transport(target(server_sshd, 'fd-a')) as reached:
        local = reached.control_socket(served.path)
        assert reached.mode == {served.path: 'forward'}
        assert stat.S_IMODE(os.stat(local).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(reached.directory).st_mode) == 0o700
        control = client.Client(local)
        assert control.status()['host'] == 'h1'
        control.add('spawn: 1*off')
        assert [r['rule'] for r in engine.rules()] == ['spawn: 1*off']
        directory = reached.directory
    # Closing ends the master and removes the forwarded socket.
    assert not os.path.exists(directory)


def test_the_helper_runs_on_the_host_over_ssh(server_sshd, tmp_path):
    # `ssh HOST python3 - ARGS` with the script on stdin.
    path = tmp_path / 'journal'
    path.write_text('{"a": 1}\n{"a": 2}\n')
    with transport.Transport(target(server_sshd, 'fd-a')) as reached:
        assert helper.HostHelper(reached).journal(str(path), 1) == {
            'lines': ['{"a": 2}'], 'next': 2}
        with pytest.raises(errors.HostRefused) as caught:
            helper.HostHelper(reached).journal(str(tmp_path / 'none'))
    assert str(caught.value) == 'fd-a: no journal file %s' % (
        tmp_path / 'none')


def test_commands_run_on_the_host_through_the_alias(server_sshd):
    with transport.Transport(target(server_sshd, 'fd-a')) as reached:
        done = reached.run(['printf', '%s|', 'two words', "it's"])
    assert done.returncode == 0
    assert done.stdout == b"two words|it's|"


def test_relay_where_forwarding_is_forbidden(server_sshd, served, engine):
    with transport.Transport(target(server_sshd, 'fd-noforward')) as reached:
        local = reached.control_socket(served.path)
        assert reached.mode == {served.path: 'relay'}
        assert stat.S_IMODE(os.stat(local).st_mode) == 0o600
        control = client.Client(local)
        control.add('spawn: 1*off')
        assert control.rules()[0]['rule'] == 'spawn: 1*off'
    assert [r['rule'] for r in engine.rules()] == ['spawn: 1*off']


def test_a_stale_socket_is_not_answering(server_sshd, sock_dir):
    # What a crashed nova-compute leaves: the file, nobody listening.
    # Neither the forward nor the relay reaches a server; the relay's
    # own words are the detail.
    stale = os.path.join(sock_dir, 'stale.sock')
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(stale)
    listener.close()
    with transport.Transport(target(server_sshd, 'fd-a')) as reached:
        with pytest.raises(errors.HostRefused) as caught:
            reached.control_socket(stale)
    assert caught.value.fact == 'control socket not answering'
    assert 'no faultdriver control server at %s' % stale in str(caught.value)


def reach(capfd, running, alias, socket_path):
    app = main.FaultDriverApp()
    app.command_manager.add_command('cloud reach', cloud_cmd.CloudReach)
    code = app.run(['cloud', 'reach', alias, '--socket', socket_path,
                    '--ssh-config', running.path('ssh_config')])
    return code, capfd.readouterr().err


@pytest.mark.parametrize('alias, fact', [
    ('fd-down', errors.HOST_DOWN),
    ('fd-badkey', errors.KEY_REFUSED),
])
def test_refusals_name_the_host_and_the_fact(capfd, monkeypatch,
                                             server_sshd, served,
                                             alias, fact):
    # A temporary directory of this test's own: CI runs other cloud
    # runs beside this one, whose transports come and go in /tmp.
    # Short, as ssh's control socket lives in it.
    own = tempfile.mkdtemp(prefix='fdt', dir='/tmp')
    try:
        with monkeypatch.context() as patched:
            patched.setattr(tempfile, 'tempdir', own)
            code, err = reach(capfd, server_sshd, alias, served.path)
        assert code == 2
        assert '%s: %s' % (alias, fact) in err
        # Nothing of the refused transport is left behind.
        assert os.listdir(own) == []
    finally:
        shutil.rmtree(own, ignore_errors=True)


def test_absent_socket_is_refused(capfd, server_sshd, sock_dir):
    absent = os.path.join(sock_dir, 'nobody.sock')
    code, err = reach(capfd, server_sshd, 'fd-a', absent)
    assert code == 2
    assert 'fd-a: %s' % errors.SOCKET_ABSENT in err
    assert absent in err


def test_reach_shows_the_status(capfd, server_sshd, served):
    code, _ = reach(capfd, server_sshd, 'fd-a', served.path)
    assert code == 0


def _gone(pid):
    """Exited (a zombie not yet reaped counts as gone)."""
    try:
        return procs._stat_fields(pid)[0] == b'Z'
    except OSError:
        return True


def test_the_master_ends_with_a_killed_runner(server_sshd):
    # A runner killed with kill -9 (alone, or with its process group)
    # leaves no master connection behind: the master is its child, in
    # its group, and dies with it.
    script = (
        'import sys, time\n'
        'from faultdriver.cloud import transport\n'
        'reached = transport.Transport(transport.SshTarget(\n'
        '    "fd-a", sys.argv[1])).open()\n'
        'print("open", flush=True)\n'
        'time.sleep(600)\n')
    runner = subprocess.Popen(
        [sys.executable, '-c', script, server_sshd.path('ssh_config')],
        stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert runner.stdout.readline().strip() == 'open'
        masters = procs.descendants(runner.pid)
        assert len(masters) == 1
        master = masters[0]
        assert os.getpgid(master) == runner.pid
    finally:
        runner.kill()
        runner.wait()
    deadline = time.monotonic() + 60
    while not _gone(master) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _gone(master), 'ssh master %d outlived its runner' % master
