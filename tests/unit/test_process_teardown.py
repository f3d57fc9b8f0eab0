"""Every part of a process-tier stack stops at once when its start
failed or never ran: a teardown waits on nothing that never started.

(A stand-in's ``stop`` used to call ``shutdown()`` on a server whose
``serve_forever`` never ran, which waits forever: any start failure
before the stand-ins hung the run.)  The whole stack's failures, part by
part, are tests/process/test_start_failures.py's.
"""

import os
import socket
import subprocess
import threading
import urllib.request

import pytest

from faultdriver.process import backing
from faultdriver.process import image_standin
from faultdriver.process import libvirt_host
from faultdriver.process import procs
from faultdriver.process import stack as stack_module
from faultdriver.process import standins

BOUND = 30      # a hang guard: each stop here takes milliseconds


def ends(func, *args):
    """Run ``func(*args)`` in a thread; fail if it has not returned
    within BOUND seconds."""
    errors = []

    def call():
        try:
            func(*args)
        except BaseException as exc:
            errors.append(exc)
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), '%r still running after %ds' % (func,
                                                                  BOUND)
    if errors:
        raise errors[0]


def taken():
    """A socket bound to a loopback port, not listening: connections
    are refused and other binds fail."""
    sock = socket.socket()
    sock.bind(('127.0.0.1', 0))
    return sock


def test_stand_in_never_started_stops():
    stand_in = standins.StandIn('glance', image_standin.Images().route,
                                procs.free_port())
    ends(stand_in.stop)
    ends(stand_in.stop)


def test_stand_in_whose_port_is_taken_fails_and_stops():
    with taken() as sock:
        stand_in = standins.StandIn('glance', image_standin.Images().route,
                                    sock.getsockname()[1])
        with pytest.raises(OSError):
            stand_in.start()
        ends(stand_in.stop)


def test_stand_in_serves_then_stops_and_frees_its_port():
    port = procs.free_port()
    stand_in = standins.StandIn('glance', image_standin.Images().route,
                                port).start()
    with urllib.request.urlopen(stand_in.url + '/v2/schemas/image',
                                timeout=10) as response:
        assert response.status == 200
    ends(stand_in.stop)
    assert not procs.port_open(port)
    ends(stand_in.stop)


def test_services_never_started_stop(tmp_path):
    for part in (backing.MariaDB(str(tmp_path)),
                 backing.RabbitMQ(str(tmp_path)),
                 procs.Process('nova-conductor', ['true'],
                               str(tmp_path / 'log'))):
        ends(part.stop)
    host = libvirt_host.LibvirtHost(str(tmp_path), 'src', '127.0.9.2',
                                    str(tmp_path / 'instances'))
    ends(host.stop)


def test_process_that_could_not_start_stops(tmp_path):
    process = procs.Process('nova-conductor', [str(tmp_path / 'absent')],
                            str(tmp_path / 'log'))
    with pytest.raises(FileNotFoundError):
        process.start()
    ends(process.stop)


def test_stack_never_started_stops_and_leaves_no_directory():
    stack = stack_module.Stack(hosts=('src',))
    assert os.path.isdir(stack.dir)
    ends(stack.stop)
    assert not os.path.exists(stack.dir)
    ends(stack.stop)


def test_a_process_that_exited_is_named_with_its_log(tmp_path):
    log = tmp_path / 'nova-api.out'
    process = procs.Process('nova-api', [
        'sh', '-c', 'echo starting; echo "Address in use" >&2; exit 3'],
        str(log)).start()
    process.wait(30)
    with pytest.raises(RuntimeError) as failed:
        procs.check_alive([process], 'nova-api on port 1')
    assert str(failed.value) == (
        'nova-api on port 1: nova-api exited with 3 before it was ready; '
        'log: %s ending: starting | Address in use' % log)


def test_a_nova_service_that_exited_is_named_with_its_own_log(tmp_path):
    """oslo.log writes why a Nova service exited to NAME.log, not to its
    output: both endings are in the message."""
    (tmp_path / 'nova-compute-dest.log').write_text(
        'INFO starting\nCRITICAL nova [-] Unhandled error: boom\n')
    log = tmp_path / 'nova-compute-dest.out'
    process = procs.Process('nova-compute-dest', [
        'sh', '-c', 'echo starting; exit 1'], str(log)).start()
    process.wait(30)
    with pytest.raises(RuntimeError) as failed:
        procs.check_alive([process], 'nova-compute on dest up')
    assert str(failed.value).endswith(
        'log: %s ending: starting ending: INFO starting | CRITICAL nova '
        '[-] Unhandled error: boom' % log)


def _sleeper(tmp_path, name, marker):
    """A process in a session of its own, as a stack starts its
    services, carrying ``marker`` as the stack's marker."""
    return procs.Process(name, ['sleep', '300'], str(tmp_path / name),
                         env={procs.MARKER: marker}).start()


def test_a_stop_never_kills_a_group_that_reuses_an_exited_leaders_pid(
        tmp_path):
    """Once an exited leader was waited for, its pid is free: another
    stack's service may lead a group of that number (stacks run side by
    side; pids wrap).  Stopping the exited process kills what carries its
    stack's marker in that group, never the other stack's process."""
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    exited = procs.Process('compute-a', ['true'], str(tmp_path / 'a.out'),
                           env={procs.MARKER: str(tmp_path / 'a')}).start()
    exited.wait(30)
    other = _sleeper(tmp_path, 'compute-b', str(tmp_path / 'b'))
    try:
        # As if the kernel had given the other stack's leader that pid.
        exited.popen.pid = other.pid
        ends(exited.stop, 0)
        assert other.alive()
        # Its own stack's process in the group is killed.
        own = _sleeper(tmp_path, 'compute-a2', str(tmp_path / 'a'))
        exited.popen.pid = own.pid
        exited.marker = str(tmp_path / 'a')
        ends(exited.stop, 0)
        own.wait(30)
        assert other.alive()
    finally:
        other.stop(0)


def test_reap_leaves_another_stacks_process_in_a_recorded_session(
        tmp_path):
    """A session number recorded by stack A (its leader long gone) may
    be another stack's session now: reap(A) kills what carries A's
    marker, and unmarked processes of A's sessions, never B's."""
    a, b = tmp_path / 'a', tmp_path / 'b'
    a.mkdir()
    b.mkdir()
    own = _sleeper(tmp_path, 'conductor-a', str(a))
    other = _sleeper(tmp_path, 'compute-b', str(b))
    try:
        # A's sessions file also names B's session (a reused number).
        with open(a / procs.SESSIONS, 'a') as out:
            out.write('%d\n' % other.pid)
        killed = procs.reap(str(a))
        own.wait(30)
        assert own.pid in killed and other.pid not in killed
        assert other.alive()
    finally:
        other.stop(0)


def test_descendants_finds_children_that_left_the_group():
    # sshd's per-connection processes call setsid: neither a group kill
    # nor the marker reaches them, the parent links do.
    parent = subprocess.Popen(
        ['sh', '-c', 'setsid sleep 600 & sleep 600 & wait'],
        start_new_session=True)

    def sessions():
        return {os.getsid(pid) for pid in procs.descendants(parent.pid)}
    try:
        procs.wait_until(lambda: len(sessions()) == 2, 30,
                         'a child in a session of its own')
        found = procs.descendants(parent.pid)
        assert len(found) == 2
        assert parent.pid in sessions() and len(sessions()) == 2
        assert procs.descendants(found[0]) == []
    finally:
        for pid in procs.descendants(parent.pid):
            os.kill(pid, 9)
        parent.kill()
        parent.wait()
