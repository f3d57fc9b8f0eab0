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

Also: a missing prerequisite is refused by the variant's runner itself
(exit 2's report) before its stack starts anything.
"""

import json
import os
import subprocess
import sys

import pytest

from faultdriver.process import procs
from tests import stacks

MODE = stacks.MODE


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
    stacks.assert_part_fails(stack, part, cause, blocked=(
        '127.0.0.1', port_of(stack, part)) if how == 'port' else None)
    assert [p for p in ports(stack) if procs.port_open(p)] == []


def test_the_runner_refuses_a_missing_prerequisite_before_its_stack(
        tmp_path):
    """The launcher checks too (tests/unit/test_prereqs.py); here the
    variant's own runner, as run by hand, refuses before starting
    anything: a report with the one line, no stack directory."""
    blocked = tmp_path / 'blocked'
    blocked.mkdir()
    (blocked / 'pymysql.py').write_text(
        'raise ImportError("pymysql blocked by the test")\n')
    scratch = tmp_path / 'tmp'
    scratch.mkdir()
    out = tmp_path / 'report.json'
    done = subprocess.run(
        [sys.executable, '-m', 'faultdriver.process.runner',
         'stale-error-migration-context', 'stock', MODE, str(out)],
        capture_output=True, text=True, timeout=stacks.BOUND,
        env=dict(os.environ, PYTHONPATH=str(blocked), TMPDIR=str(scratch)))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report['internal_error'] is None, report['internal_error']
    assert 'Python module pymysql (PyMySQL; ImportError: pymysql blocked ' \
        'by the test)' in report['scenario_error']
    assert "pip install 'faultdriver[process]'" in report['scenario_error']
    assert list(scratch.iterdir()) == []
