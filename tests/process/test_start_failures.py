"""A stack whose start fails at any part ends promptly, raises
PartFailed naming that part, and leaves nothing behind: no process (of
its sessions or carrying its marker), cgroup, mount, directory or
listening port.

Each case makes one part's start fail for real: its port taken by a
socket bound beforehand (MariaDB, RabbitMQ, the glance stand-in,
placement and nova-api under gunicorn), or its command replaced through
the stack's test hook (``Stack.command``) by one that exits at once
(nova-conductor, nova-scheduler, a nova-compute).  The bound is a hang
guard, not a speed target (a case takes ~1-25 s).
"""

import os
import socket

import pytest

from faultdriver.process import procs
from faultdriver.process import stack as stack_module
from tests import stacks

MODE = ('threading' if os.environ.get('OS_NOVA_DISABLE_EVENTLET_PATCHING',
                                      'True').lower() == 'true'
        else 'eventlet')


def port_of(stack, part):
    return {'mariadb': stack.db.port, 'rabbitmq': stack.rabbit.port,
            'glance': stack.glance.port,
            'placement': stack.placement_port,
            'nova-api': stack.api_port}.get(part)


def ports(stack):
    return [stack.db.port, stack.rabbit.port, stack.rabbit.epmd_port,
            stack.rabbit.dist_port, stack.glance.port, stack.neutron.port,
            stack.placement_port, stack.api_port]


@pytest.mark.parametrize('part, how, cause', [
    ('mariadb', 'port', 'Address already in use'),
    ('rabbitmq', 'port', 'eaddrinuse'),
    ('glance', 'port', 'Address already in use'),
    ('placement', 'port', 'Address already in use'),
    ('nova-api', 'port', 'Address already in use'),
    ('nova-conductor', 'command', 'nova-conductor made to fail'),
    ('nova-scheduler', 'command', 'nova-scheduler made to fail'),
    ('nova-compute src', 'command', 'nova-compute src made to fail'),
])
def test_a_part_that_does_not_start_is_named_and_nothing_is_left(part, how,
                                                                 cause):
    stack = stacks.FailingStack(
        part, how, hosts=('src',), mode=MODE, progress=print,
        faults={'src': {'inner_driver': 'fake_numa'}})
    blocker = socket.socket()
    if how == 'port':
        # Bound, not listening: the part's own bind fails, and nothing
        # answers on the port it waits for.
        blocker.bind(('127.0.0.1', port_of(stack, part)))
    with blocker:
        error, seconds = stacks.start_and_stop(stack)
    print('%s failed; start and teardown took %.1fs' % (part, seconds))
    assert isinstance(error, stack_module.PartFailed), repr(error)
    assert error.part == part
    assert str(error).startswith('%s did not start: ' % part)
    assert cause in str(error)
    assert stacks.leftovers(stack.dir, stack.sessions) == []
    assert [p for p in ports(stack) if procs.port_open(p)] == []
