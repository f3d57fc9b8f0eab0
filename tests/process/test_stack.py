"""faultdriver in real nova-compute processes: loaded from nova.conf,
controlled through its socket, crashing for real (also in its start),
refusing bad rules at start, and nothing left behind.

One stack for the module (bring-up costs ~25 s), and one of its own for
the teardown test, so no test depends on the order they run in; the
concurrency mode is ``OS_NOVA_DISABLE_EVENTLET_PATCHING`` (tox runs this
module in eventlet mode, the seed scenario on processes in threading
mode).
"""

import datetime
import json
import os
import stat
import subprocess
import sys

import pytest

from faultdriver.control import client as control_client
from faultdriver import exception
from faultdriver.process import nova as process_nova
from faultdriver.process import procs
from faultdriver.process import stack as stack_module
from faultdriver import waiting
from tests import stacks

MODE = stacks.MODE
PERIODIC = 'tracker.update_available_resource'


@pytest.fixture(scope='module')
def stack():
    faults = {host: {'inner_driver': 'fake_numa'} for host in ('src', 'dest')}
    stack = stack_module.Stack(faults=faults, mode=MODE, progress=print)
    with stack:
        yield stack


def ctl(stack, host, *args):
    """``faultdriver ctl`` as an operator runs it."""
    return subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'faultdriver'),
         'ctl'] + list(args) + ['--socket', stack.control_socket(host),
                                '-f', 'json'],
        capture_output=True, text=True, timeout=120)


def test_computes_run_faultdriver_from_nova_conf(stack):
    for host in stack.hosts:
        process = stack.computes[host]
        assert process.alive()
        with open(stack.compute_conf(host)) as conf:
            assert 'compute_driver = faultdriver.FaultDriver' in conf.read()
        # As a deployed compute: no database connection of its own (with
        # [api_database] one, Nova's start races itself, findings F13).
        with open(stack.compute_log(host)) as log:
            assert 'configured for access to the API database' \
                not in log.read()
        mode = stat.S_IMODE(os.stat(stack.control_socket(host)).st_mode)
        assert mode == 0o600
        status = control_client.Client(stack.control_socket(host)).status()
        assert status['host'] == host
        assert status['pid'] == process.pid
    hypervisors = stack.api.get('/os-hypervisors')['hypervisors']
    assert sorted(h['hypervisor_hostname'] for h in hypervisors) == \
        ['dest', 'src']


def test_ctl_sets_rules_and_waits_on_a_real_process(stack):
    added = ctl(stack, 'src', 'add', PERIODIC + '.after: log')
    assert added.returncode == 0, added.stderr
    waited = ctl(stack, 'src', 'wait', PERIODIC, '--phase', 'after',
                 '--count', '2', '--timeout', '60')
    assert waited.returncode == 0, waited.stderr
    journal = json.loads(ctl(stack, 'src', 'journal').stdout)
    assert any(e['Point'] == PERIODIC and e['Action'] == 'log'
               for e in journal)
    bad = ctl(stack, 'src', 'add', 'no_such_point: crash')
    assert bad.returncode == 2
    assert 'no_such_point' in bad.stderr
    cleared = ctl(stack, 'src', 'clear')
    assert cleared.returncode == 0, cleared.stderr
    assert json.loads(ctl(stack, 'src', 'rules').stdout) == []


def test_crash_kills_the_process_after_the_journal_line(stack):
    process = stack.computes['dest']
    control_client.Client(stack.control_socket('dest')).add(
        PERIODIC + ': 1*crash')
    process.wait(60)
    # The crash action's own exit status (os._exit after the journal),
    # not whatever else could end the process.
    assert process.returncode == 137
    with open(stack.journal_path('dest')) as journal:
        entries = [json.loads(line) for line in journal]
    assert entries[-1]['point'] == PERIODIC
    assert entries[-1]['action'] == 'crash'
    stack.api.wait_for_service('nova-compute', 'dest', 'down', timeout=60)
    with open(stack.compute_log('dest')) as log:
        assert 'FAULTDRIVER-INJECT point=%s' % PERIODIC in log.read()
    # The rule came from the socket, not nova.conf: a restart runs clean.
    stack.start_compute('dest')
    stack.api.wait_for_service('nova-compute', 'dest', 'up', timeout=90)
    assert stack.computes['dest'].alive()


def test_a_restart_returns_once_the_api_shows_the_new_heartbeat(stack):
    """The killed process's last heartbeat keeps the service "up" for
    service_down_time, the new one's first comes 5 s after it joined:
    a restart that returned before then would leave a gap in which the
    scheduler takes the host for dead (a move or boot right after it
    ends NoValidHost).  The heartbeat the API shows once restart returns
    is the new process's: newer than the moment it was started."""
    nova = process_nova.ProcessNova(stack)
    started = datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None)
    nova.faults.restart('dest')
    shown = stack.api.services('nova-compute', 'dest')[0]['updated_at']
    assert datetime.datetime.fromisoformat(shown) > started


@pytest.mark.parametrize('rule, action', [
    ('init_host.before: 1*crash', 'crash'),
    ('init_host.after: 1*raise(InternalError)', 'raise')])
def test_a_start_its_rules_end_fails_and_the_next_start_runs(stack, rule,
                                                             action):
    """A restart whose rules end nova-compute's start (the process exits
    in init_host) raises StartFailed naming the fault, as on the embedded
    Nova; a restart without rules then starts it for good."""
    nova = process_nova.ProcessNova(stack)
    with pytest.raises(exception.StartFailed) as failed:
        nova.faults.restart('dest', rules=[rule])
    assert str(failed.value) == 'dest failed to start: %s at init_host' \
        % action
    assert not stack.computes['dest'].alive()
    nova.faults.restart('dest')
    assert stack.computes['dest'].alive()
    assert nova.consumers('dest') == 1      # its RPC server runs
    stack.api.wait_for_service('nova-compute', 'dest', 'up', timeout=90)


def test_bad_rule_in_nova_conf_stops_nova_compute_at_start(stack):
    stack.hosts.append('bad')
    stack.write_compute_conf('bad', {'inner_driver': 'fake_numa',
                                     'rules': ['pre_live_migration: crahs']})
    process = stack.start_compute('bad')
    try:
        code = process.wait(120)
    finally:
        stack.hosts.remove('bad')
    assert code != 0
    with open(process.log) as out, open(stack.compute_log('bad')) as log:
        text = out.read() + log.read()
    assert 'crahs' in text
    assert 'crash' in text          # what was expected (did you mean)


def test_teardown_leaves_nothing():
    """A stack of its own (one compute), so that no other test depends
    on running before this one."""
    stack = stack_module.Stack(
        hosts=('src',), faults={'src': {'inner_driver': 'fake_numa'}},
        mode=MODE, progress=print)
    with stack:
        ports = [stack.api_port, stack.placement_port, stack.db.port,
                 stack.rabbit.port, stack.rabbit.epmd_port,
                 stack.rabbit.dist_port]
        workdir = stack.dir
        sessions = procs.sessions_of_stack(workdir)
        assert procs.port_open(stack.api_port)      # something to tear down
    assert not os.path.exists(workdir)
    assert procs.reap(workdir) == []
    assert procs.alive_in_sessions(sessions, workdir) == []
    waiting.until(lambda: not any(procs.port_open(p) for p in ports), 10,
                  lambda: 'ports closed: %s still open' % [
                      p for p in ports if procs.port_open(p)])
