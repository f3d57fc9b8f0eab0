"""The libvirt tier: real libvirtd + QEMU per host under real
nova-compute processes on FaultDriver.

Invariants: a pinned server boots and live-migrates between the two
hosts through Nova's API, and libvirt itself has the guest where Nova
says, with its vCPU pinned to the pCPU Nova's database records; the
stack's teardown leaves no process, cgroup, mount or directory behind,
and neither does a runner that is killed (its guardian tears down).

One stack for the first test (bring-up ~25 s), another for the killed
runner.  Needs root and the Debian packages of
``tools/install-process-deps.sh libvirt``.
"""

import os
import signal
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree

import libvirt
import pytest

from faultdriver.process import nova as process_nova
from faultdriver.process import procs
from faultdriver.process import stack as stack_module
from tests import stacks
from tests.stacks import leftovers
from tests.stacks import marked

HOSTS = ('src', 'dest')
MODE = stacks.MODE


def cpus():
    found = sorted(os.sched_getaffinity(0))
    return '%d-%d' % (found[0], found[-1])


def faults():
    return {host: {'inner_driver': 'libvirt',
                   'extra': {'compute': {'cpu_dedicated_set': cpus()}}}
            for host in HOSTS}


def vcpu_pins(hypervisor, uuid):
    """``{vcpu: pCPUs}`` of the guest's live domain XML, from libvirt."""
    conn = libvirt.open(hypervisor.uri)
    try:
        xml = conn.lookupByUUIDString(uuid).XMLDesc(0)
    finally:
        conn.close()
    return {int(pin.get('vcpu')): pin.get('cpuset')
            for pin in ElementTree.fromstring(xml).iter('vcpupin')}


def qemu_processes(stack_dir):
    """Pids of the QEMU processes of the stack in ``stack_dir``: their
    command line names its instances directory (the guest's disk), so
    another stack running beside this one (CI runs a libvirt scenario
    beside these tests) is not counted."""
    needle = os.path.join(stack_dir, 'instances').encode()
    found = []
    for entry in os.listdir('/proc'):
        try:
            with open('/proc/%s/cmdline' % entry, 'rb') as f:
                argv = f.read().split(b'\0')
        except OSError:
            continue
        if b'qemu-system' in argv[0] and any(needle in a for a in argv):
            found.append(int(entry))
    return found


def test_pinned_server_live_migrates_between_real_libvirt_hosts():
    stack = stack_module.Stack(hosts=HOSTS, faults=faults(), mode=MODE,
                               hypervisor='libvirt', progress=print)
    with stack:
        nova = process_nova.ProcessNova(stack, pinned=True)
        server = nova.boot(host='src', vcpus=1)
        uuid = server['id']
        assert nova.guests('src') == {uuid: 'running'}
        assert nova.guests('dest') == {}
        assert qemu_processes(stack.dir), 'no QEMU of this stack found'
        pinned = nova.instance_pinning(server)
        assert len(pinned) == 1
        # Nova's pinning is the guest's real pinning.
        assert vcpu_pins(stack.libvirt['src'], uuid) == {0: str(pinned[0])}
        assert nova.pinned_cpus('src') == pinned
        assert nova.placement_pcpus('src') == 1

        nova.api.post_server_action(uuid, {'os-migrateLive': {
            'host': 'dest', 'block_migration': 'auto'}})
        nova.wait_newest_migration(server, 'completed', 1, timeout=120)
        server = nova.wait_for_server(server, 60, status='ACTIVE',
                                      host='dest', task_state=None)
        assert nova.guests('src') == {}
        assert nova.guests('dest') == {uuid: 'running'}
        moved = nova.instance_pinning(server)
        assert vcpu_pins(stack.libvirt['dest'], uuid) == {0: str(moved[0])}
        nova.run_periodic('src')
        nova.run_periodic('dest')
        assert nova.pinned_cpus('src') == []
        assert nova.pinned_cpus('dest') == moved
        assert (nova.placement_pcpus('src'),
                nova.placement_pcpus('dest')) == (0, 1)
        stack_dir = stack.dir
        sessions = procs.sessions_of_stack(stack_dir)
    assert leftovers(stack_dir, sessions) == []
    assert qemu_processes(stack_dir) == []


RUNNER = textwrap.dedent('''
    import sys
    from faultdriver.process import nova, stack
    faults = {'src': {'inner_driver': 'libvirt', 'extra': {'compute': {
        'cpu_dedicated_set': sys.argv[1]}}}}
    s = stack.Stack(hosts=('src',), faults=faults, hypervisor='libvirt',
                    mode=sys.argv[2])
    s.start()
    server = nova.ProcessNova(s).boot(host='src', vcpus=1)
    print(s.dir, flush=True)
    sys.stdin.read()
''')


def test_killed_runner_leaves_nothing(tmp_path):
    errors = tmp_path / 'runner.err'
    with open(errors, 'w') as stderr:
        runner = subprocess.Popen(
            [sys.executable, '-c', RUNNER, cpus(), MODE],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr, text=True, start_new_session=True)
    try:
        stack_dir = runner.stdout.readline().strip()
        # CI saw this once, not since: say why when it happens.
        assert stack_dir, 'the runner did not bring its stack up: %s' % (
            errors.read_text()[-3000:])
        assert qemu_processes(stack_dir), 'no guest was running'
        sessions = procs.sessions_of_stack(stack_dir)
        # nova-conductor's forked worker hides the marker (setproctitle)
        # and outlives its parent: only its session finds it.
        assert set(procs.alive_in_sessions(sessions, stack_dir)) - \
            marked(stack_dir)
    finally:
        os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(30)
    procs.wait_until(lambda: not leftovers(stack_dir, sessions), 60,
                     'the guardian tore down %s' % stack_dir)
    assert qemu_processes(stack_dir) == []


if __name__ == '__main__':
    sys.exit(pytest.main([__file__, '-q']))
