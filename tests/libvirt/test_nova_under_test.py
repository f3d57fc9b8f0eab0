"""A Nova change reaches every process that imports Nova on the libvirt
tier: nova-compute and the privsep daemons it starts (as root, through
``privsep-helper``), not only the API.

Invariant: each of those processes runs with the Nova under test first
on its Python path (so ``import nova`` is the changed copy), and the
guest boots on the changed Nova.
"""

import os

from faultdriver import novaundertest
from faultdriver.process import nova as process_nova
from faultdriver.process import procs
from faultdriver.process import stack as stack_module
from tests.libvirt import test_tier

DIFF = os.path.join(os.path.dirname(__file__), os.pardir, 'functional',
                    'data', 'revert-stale-error-context.diff')


def environ(pid):
    with open('/proc/%d/environ' % pid, 'rb') as stream:
        return dict(item.split('=', 1) for item in
                    stream.read().decode(errors='replace').split('\0')
                    if '=' in item)


def cmdline(pid):
    with open('/proc/%d/cmdline' % pid, 'rb') as stream:
        return stream.read().decode(errors='replace').replace('\0', ' ')


def test_compute_and_privsep_import_the_nova_under_test(monkeypatch):
    nova = novaundertest.prepare([DIFF])
    for key, value in nova.environ().items():
        monkeypatch.setenv(key, value)
    faults = {'src': test_tier.faults()['src']}
    stack = stack_module.Stack(hosts=('src',), faults=faults,
                               mode=test_tier.MODE, hypervisor='libvirt',
                               progress=print)
    with stack:
        server = process_nova.ProcessNova(stack, pinned=True).boot(
            host='src', vcpus=1)
        assert process_nova.ProcessNova(stack).guests('src') == {
            server['id']: 'running'}
        found = {}
        for pid in procs.alive_in_sessions(
                procs.sessions_of_stack(stack.dir), stack.dir):
            try:
                line, env = cmdline(pid), environ(pid)
            except OSError:
                continue
            for name in ('nova-compute', 'privsep-helper'):
                if name in line:
                    found.setdefault(name, []).append(env)
    assert set(found) == {'nova-compute', 'privsep-helper'}, found.keys()
    for name, envs in found.items():
        for env in envs:
            assert env['PYTHONPATH'].split(os.pathsep)[0] == nova.root, name
            assert novaundertest.ENV in env, name
