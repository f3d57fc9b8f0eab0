"""``faultdriver ctl relay`` without SSH: the real command carries a
control request between its stdin and stdout and a real control socket,
and refuses an absent socket with exit 2; the cloud commands are
declared where the console script finds them."""

import configparser
import importlib
import json
import os
import subprocess
import sys

import pytest

from faultdriver.control import server as server_module
from tests import sshd
from tests.unit import fakes

ROOT = sshd.ROOT


@pytest.fixture
def served_socket(engine, sock_dir):
    server = server_module.ControlServer(
        os.path.join(sock_dir, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule).start()
    yield server.path
    server.stop()


def relay(socket_path, request):
    return subprocess.run(
        sshd.RELAY + ('--socket', socket_path),
        input=request, capture_output=True, timeout=60)


def test_relay_carries_a_request(served_socket):
    done = relay(served_socket, b'{"op": "add", "rule": "spawn: 1*off"}\n')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        'ok': True, 'result': {'index': 0, 'rule': 'spawn: 1*off',
                               'warnings': []}}


def test_relay_exits_2_naming_an_absent_socket(sock_dir):
    absent = os.path.join(sock_dir, 'nobody.sock')
    done = relay(absent, b'')
    assert done.returncode == 2
    assert absent in done.stderr.decode()


def test_the_commands_are_declared():
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, 'setup.cfg'))
    declared = dict(
        line.split(' = ') for line in
        config['entry_points']['faultdriver.cli'].strip().splitlines())
    for name in ('ctl_relay', 'cloud_reach'):
        module, _, attr = declared[name].partition(':')
        assert getattr(importlib.import_module(module), attr).__doc__


def test_the_relay_module_runs_alone(sock_dir):
    # python3 -m faultdriver.cloud.relay: the same relay, no cliff.
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.cloud.relay', '--socket',
         os.path.join(sock_dir, 'nobody.sock')], cwd=ROOT,
        capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
