"""``faultdriver ctl`` end to end: the installed console script against
a real control socket served from this process, with exit codes."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import pytest

from faultdriver.control import ops as ops_module
from faultdriver.control import server as server_module
from faultdriver import engine as engine_module
from faultdriver import journal as journal_module
from tests.unit import fakes

#: The console script (faultdriver.cmd.main) pip installed next to this
#: interpreter.
SCRIPT = os.path.join(os.path.dirname(sys.executable), 'faultdriver')
JOIN = 10.0


@pytest.fixture
def served():
    directory = tempfile.mkdtemp(prefix='fdc', dir='/tmp')
    engine = engine_module.Engine('h1', fakes.ACTIONS, [], enabled=True,
                                  journal=journal_module.Journal())
    server = server_module.ControlServer(
        os.path.join(directory, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule).start()
    yield server, engine
    server.stop()
    engine.close()
    shutil.rmtree(directory, ignore_errors=True)


def ctl(server, *args, env=None):
    """Run ``faultdriver ctl ARGS --socket PATH``; (exit code, output)."""
    argv = [SCRIPT, 'ctl'] + list(args)
    if server is not None:
        argv += ['--socket', server.path]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **(env or {})))
    return done.returncode, done.stdout, done.stderr


def ctl_json(server, *args):
    code, out, err = ctl(server, *(args + ('-f', 'json')))
    assert code == 0, err
    return json.loads(out)


def test_add_list_wait_release_journal(served):
    server, engine = served
    assert ctl_json(server, 'add', 'spawn: hang(60, b)') == {
        'index': 0, 'rule': 'spawn: hang(60, b)', 'warnings': ''}
    held = threading.Thread(target=engine.hit,
                            args=('spawn', 'before', {'instance': 'i-1'}),
                            daemon=True)
    held.start()
    assert ctl_json(server, 'wait', 'spawn', '--timeout', '30') == {
        'point': 'spawn', 'phase': 'before', 'hits': 1}
    assert ctl_json(server, 'status')['held'] == 'b=1'
    assert ctl_json(server, 'rules') == [
        {'Index': 0, 'Rule': 'spawn: hang(60, b)', 'Hits': 1, 'Fired': 1,
         'Exhausted': False}]
    assert ctl_json(server, 'counters') == [{'Point': 'spawn.before',
                                             'Hits': 1}]
    assert ctl_json(server, 'points', '--armed') == [
        {'Point': 'spawn', 'Kind': 'driver', 'Roles': 'any',
         'Operations': '-', 'Tracker lock': 'no', 'Armed': 'yes'}]
    assert held.is_alive()
    assert ctl_json(server, 'release', 'b') == {'released': 1}
    held.join(JOIN)
    assert not held.is_alive()
    [entry] = ctl_json(server, 'journal')
    assert (entry['Point'], entry['Action'], entry['Instance'],
            entry['Rule']) == ('spawn', 'hang', 'i-1', 'spawn: hang(60, b)')
    code, out, _err = ctl(server, 'rules', '-f', 'value', '-c', 'Rule')
    assert (code, out) == (0, 'spawn: hang(60, b)\n')


def test_remove_clear_enable_disable(served):
    server, engine = served
    ctl_json(server, 'add', 'spawn: off')
    ctl_json(server, 'add', 'destroy: off')
    assert ctl_json(server, 'remove', '0') == {'index': 0}
    assert ctl_json(server, 'disable') == {'enabled': False}
    assert engine.enabled is False and engine.armed == set()
    assert ctl_json(server, 'enable') == {'enabled': True}
    assert engine.armed == {'destroy'}
    assert ctl_json(server, 'clear') == {'removed': 1}
    assert engine.rules() == []


def test_wait_timeout_exits_1(served):
    server, _engine = served
    code, _out, err = ctl(server, 'wait', 'destroy', '--timeout', '0.2')
    assert code == 1
    assert ('point destroy.before on host h1 was hit 0 times, not 1, '
            'within 0.2s') in err


@pytest.mark.parametrize('command', ['wait destroy', 'periodic'])
@pytest.mark.parametrize('timeout', ['-20', 'nan', 'inf', '1e9', 'soon'])
def test_timeout_out_of_range_exits_2_naming_it(served, command, timeout):
    server, _engine = served
    code, _out, err = ctl(server, *command.split(), '--timeout', timeout)
    assert code == 2
    assert ('argument --timeout: expected seconds from 0 to 86400, not %r'
            % timeout) in err
    assert 'Traceback' not in err


def test_bad_rule_exits_2_and_changes_nothing(served):
    server, engine = served
    code, _out, err = ctl(server, 'add', 'pre_live_migraton@dest: crash')
    assert code == 2
    assert ("rule 'pre_live_migraton@dest: crash' at column 1: unknown "
            "point 'pre_live_migraton'; did you mean 'pre_live_migration'?"
            in err)
    assert engine.rules() == []


def test_unknown_index_exits_2(served):
    server, _engine = served
    code, _out, err = ctl(server, 'remove', '4')
    assert code == 2
    assert 'no rule with index 4 on h1' in err


def test_socket_from_the_environment(served):
    server, _engine = served
    code, out, err = ctl(None, 'status', '-f', 'json',
                         env={'FAULTDRIVER_SOCKET': server.path})
    assert code == 0, err
    assert json.loads(out)['host'] == 'h1'


def test_nothing_listening_exits_2():
    code, _out, err = ctl(None, 'status', '--socket', '/tmp/fd-none.sock')
    assert code == 2
    assert 'no faultdriver control server at /tmp/fd-none.sock' in err


@pytest.fixture
def served_compute():
    """A server whose nova-compute pins CPUs 1 and 3 on node n1 and
    whose timer runs the resource periodic until switched."""
    directory = tempfile.mkdtemp(prefix='fdc', dir='/tmp')
    engine = engine_module.Engine('h1', fakes.ACTIONS, [], enabled=True)
    state = {'on': True, 'interval': 2}

    def pinning(host, nodename):
        if host != 'h1':
            raise LookupError('Compute host %s could not be found.' % host)
        return {'n1': [1, 3]}

    def timer(on):
        if on is not None:
            state['on'] = on
        return dict(state)
    server = server_module.ControlServer(
        os.path.join(directory, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule, compute=ops_module.ComputeHooks(
            pinning=pinning, timer=timer,
            facts=lambda: {'settings': {'debug': True, 'report_interval': 2},
                           'nodenames': ['n1'], 'rpc_started': True})
    ).start()
    yield server, state
    server.stop()
    engine.close()
    shutil.rmtree(directory, ignore_errors=True)


def test_pinning(served_compute):
    server, _state = served_compute
    assert ctl_json(server, 'pinning') == {
        'host': 'h1', 'nodes': 'n1=1, 3', 'pinned_cpus': '1, 3'}
    code, _out, err = ctl(server, 'pinning', '--host', 'h9')
    assert code == 2
    assert ('no compute node record of host h9: Compute host h9 could not '
            'be found.') in err


def test_timer_shows_and_switches(served_compute):
    server, state = served_compute
    assert ctl_json(server, 'timer') == {'host': 'h1', 'on': True,
                                         'interval': 2}
    assert ctl_json(server, 'timer', 'off')['on'] is False
    assert state['on'] is False
    assert ctl_json(server, 'timer', 'on')['on'] is True
    code, _out, err = ctl(server, 'timer', 'maybe')
    assert code == 2
    assert "invalid choice: 'maybe'" in err


def test_status_shows_the_compute_s_facts(served_compute):
    server, _state = served_compute
    status = ctl_json(server, 'status')
    assert (status['nodenames'], status['rpc_started'],
            status['settings']) == ('n1', True,
                                    'debug=True\nreport_interval=2')
