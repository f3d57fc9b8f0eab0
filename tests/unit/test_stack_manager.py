"""The host helper's ``stack`` service manager against a recording
supervisor socket (the real supervisor: tests/process/test_stack_up.py):
what it asks for each verb, what it answers, and a refusal naming the
supervisor's fact or the absent socket."""

import json
import os
import socket
import tempfile
import threading

import pytest

from faultdriver.cloud import hosthelper
from faultdriver.process import supervisor


class Recorder:
    """A unix socket answering each JSON line with ``answer(request)``."""

    def __init__(self, answer):
        self.dir = tempfile.mkdtemp(prefix='fdsup', dir='/tmp')
        self.path = os.path.join(self.dir, 's.sock')
        self.answer = answer
        self.requests = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b''
                while not data.endswith(b'\n'):
                    data += conn.recv(4096)
                request = json.loads(data)
                self.requests.append(request)
                conn.sendall(json.dumps(self.answer(request)).encode()
                             + b'\n')

    def close(self):
        self.sock.close()
        os.unlink(self.path)
        os.rmdir(self.dir)


@pytest.fixture
def recorder():
    running = Recorder(lambda r: {'ok': True, 'state': 'crashed',
                                  'returncode': -9, 'killed': False})
    yield running
    running.close()


def run(capsys, *argv):
    code = hosthelper.main(list(argv))
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize('verb, extra, request_, answer', [
    ('state', (), {'op': 'state', 'compute': 'c1'},
     {'state': 'crashed', 'returncode': -9, 'killed': False}),
    ('stop', ('--timeout', '7'), {'op': 'stop', 'compute': 'c1',
                                  'timeout': 7.0},
     {'stopped': True, 'killed': False}),
    ('crash', (), {'op': 'crash', 'compute': 'c1'}, {'killed': 'c1'}),
    ('start', (), {'op': 'start', 'compute': 'c1'}, {'started': 'c1'}),
])
def test_each_verb_asks_the_supervisor(capsys, recorder, verb, extra,
                                       request_, answer):
    code, said = run(capsys, verb, '--manager', 'stack', '--unit', 'c1',
                     '--supervisor', recorder.path, *extra)
    assert (code, said) == (0, answer)
    assert recorder.requests == [request_]


def test_no_restart_policy_to_change(capsys, recorder):
    assert run(capsys, 'restart-policy', '--manager', 'stack', '--unit',
               'c1', '--supervisor', recorder.path) == (0, {'policy': 'no'})
    assert run(capsys, 'disable-restart', '--manager', 'stack', '--unit',
               'c1', '--supervisor', recorder.path) == (
        0, {'changed': False})
    assert recorder.requests == []


def test_the_supervisors_refusal_is_the_fact(capsys):
    refusing = Recorder(lambda r: {'ok': False, 'error': 'no compute c9'})
    try:
        code, said = run(capsys, 'state', '--manager', 'stack', '--unit',
                         'c9', '--supervisor', refusing.path)
    finally:
        refusing.close()
    assert code == 2
    assert said['error']['fact'] == 'stack supervisor: no compute c9'


def test_an_absent_supervisor_is_named(capsys, tmp_path):
    code, said = run(capsys, 'state', '--manager', 'stack', '--unit', 'c1',
                     '--supervisor', str(tmp_path / 'none.sock'))
    assert code == 2
    assert said['error']['fact'].startswith(
        'no stack supervisor at %s' % (tmp_path / 'none.sock'))


def test_both_sides_find_the_same_socket():
    assert hosthelper.stack_socket() == os.path.join(
        supervisor.state_dir(), supervisor.SOCKET)
