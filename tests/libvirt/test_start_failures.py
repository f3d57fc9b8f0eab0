"""A libvirt-tier stack whose libvirtd (or nova-compute, run inside the
host's namespaces) does not start ends promptly, raises PartFailed
naming that part, and leaves nothing behind: no process, cgroup, mount
or directory.

libvirtd fails for real: its configuration makes it listen on an
address its host's network namespace does not have.  nova-compute fails
through the stack's test hook (``Stack.command``): a command that exits
at once, entered into the host's namespaces as nova-compute would be.
The bound is a hang guard, not a speed target.  The process tier's
parts: tests/process/test_start_failures.py.
"""

import os
import sys

import pytest

from faultdriver.process import libvirt_host
from tests import stacks

MODE = stacks.MODE


@pytest.mark.parametrize('part, how, cause', [
    ('libvirtd src', 'config', 'Cannot assign requested address'),
    ('nova-compute src', 'command', 'nova-compute src made to fail'),
])
def test_a_part_that_does_not_start_is_named_and_nothing_is_left(
        part, how, cause, monkeypatch):
    if how == 'config':
        # TEST-NET-1: on no interface of the host's namespace.
        monkeypatch.setattr(libvirt_host, 'LIBVIRTD_CONF',
                            libvirt_host.LIBVIRTD_CONF.replace(
                                '"%(address)s"', '"192.0.2.1"'))
    cpus = sorted(os.sched_getaffinity(0))
    stack = stacks.FailingStack(
        part, how, hosts=('src',), mode=MODE, hypervisor='libvirt',
        faults={'src': {'inner_driver': 'libvirt', 'extra': {'compute': {
            'cpu_dedicated_set': '%d-%d' % (cpus[0], cpus[-1])}}}},
        progress=print)
    stacks.assert_part_fails(stack, part, cause)


if __name__ == '__main__':
    sys.exit(pytest.main([__file__, '-q']))
