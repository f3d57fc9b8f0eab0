"""Bad input, surface 5: the control protocol (requests on the socket).

Invariant: every request line gets one answer and a failed request never
ends the connection or changes the engine: an ``op`` that is not a
string, JSON nested too deeply, 5000-digit numbers, NaN timeouts or a key
given twice are ``bad-request`` (never ``internal``); a pending ``wait``
is answered ``stopped`` when the server stops; connections beyond the
cap are answered ``busy`` and idle ones are closed; a socket directory
others can write is refused, one reached through a symlink warned about.
"""

import json
import logging
import os
import socket
import threading

import hypothesis
from hypothesis import strategies as st
import pytest

from faultdriver.control import client as client_module
from faultdriver.control import protocol
from faultdriver.control import server as server_module
from faultdriver import exception
from tests.unit import fakes

JOIN = 10.0          # generous upper bound for what should happen at once
STATUS = b'{"op": "status"}\n'


def serve(path, engine, **kwargs):
    return server_module.ControlServer(path, engine, fakes.CATALOGUE,
                                       fakes.rule, **kwargs).start()


@pytest.fixture
def served(sock_dir, engine):
    server = serve(os.path.join(sock_dir, 'c.sock'), engine)
    yield server
    server.stop()


class Connection:
    """One client connection that sends lines and reads answers."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(JOIN)
        self.sock.connect(path)
        self.reader = self.sock.makefile('rb')

    def ask(self, line):
        self.sock.sendall(line)
        answer = self.reader.readline()
        assert answer.endswith(b'\n'), answer
        return json.loads(answer)

    def close(self):
        self.reader.close()
        self.sock.close()


DEEP = b'{"op": ' + b'[' * 20000 + b']' * 20000 + b'}\n'

# (request line, error kind, what the message says)
REFUSED = [
    (b'{"op": ["rules"]}\n', protocol.BAD_REQUEST,
     "unknown op ['rules']; expected a string, one of add, clear"),
    (b'{"op": {"a": 1}}\n', protocol.BAD_REQUEST, "unknown op {'a': 1}"),
    (b'{"op": 3}\n', protocol.BAD_REQUEST, 'unknown op 3'),
    (b'{"op": true}\n', protocol.BAD_REQUEST, 'unknown op True'),
    (b'{"op": null}\n', protocol.BAD_REQUEST, 'unknown op None'),
    (DEEP, protocol.BAD_REQUEST, 'not a JSON line: nested too deeply'),
    (b'{"op": "wait", "point": "spawn", "count": ' + b'9' * 5000 + b'}\n',
     protocol.BAD_REQUEST, 'not a JSON line: Exceeds the limit'),
    (b'{"op": "wait", "point": "spawn", "timeout": NaN}\n',
     protocol.BAD_REQUEST, "argument 'timeout' out of range: nan"),
    (b'{"op": "wait", "point": "spawn", "timeout": Infinity}\n',
     protocol.BAD_REQUEST, "argument 'timeout' out of range: inf"),
    (b'{"op": "wait", "point": "spawn", "timeout": 1e999}\n',
     protocol.BAD_REQUEST, "argument 'timeout' out of range: inf"),
    (b'{"op": "wait", "point": ["spawn"]}\n', protocol.BAD_REQUEST,
     "argument 'point' must be str"),
    (b'{"op": "remove", "index": 1e300}\n', protocol.BAD_REQUEST,
     "argument 'index' must be int"),
    (b'{"op": "add", "rule": "spawn: off", "rule": "spawn: crash"}\n',
     protocol.BAD_REQUEST, "not a JSON line: key 'rule' given twice"),
    (b'{"op": "add", "rule": "spawn: \\u0663*off"}\n', protocol.BAD_RULE,
     "expected an action name, found '\u0663*off'"),
    (b'{"op": "add", "rule": "spawn: delay(nan)"}\n', protocol.BAD_RULE,
     'written as digits'),
    (b'{"op": "add", "rule": "spawn[instance=x]: off"}\n',
     protocol.BAD_RULE, "instance 'x' is not a UUID"),
    (b'\xff\xfe\n', protocol.BAD_REQUEST, 'not a JSON line'),
    (b'"status"\n', protocol.BAD_REQUEST, 'expected a JSON object'),
]


@pytest.mark.parametrize('line, kind, problem', REFUSED,
                         ids=[str(i) for i in range(len(REFUSED))])
def test_refused_answered_and_the_connection_goes_on(served, engine, line,
                                                     kind, problem):
    conn = Connection(served.path)
    try:
        answer = conn.ask(line)
        assert answer['ok'] is False
        assert answer['error']['kind'] == kind
        assert problem in answer['error']['message']
        assert len(answer['error']['message']) < 1000
        assert conn.ask(STATUS)['result']['host'] == 'h1'   # still open
    finally:
        conn.close()
    assert engine.rules() == [] and engine.enabled


def test_pending_wait_is_answered_stopped_when_the_server_stops(
        sock_dir, engine):
    server = serve(os.path.join(sock_dir, 'c.sock'), engine)
    outcome = []

    def wait():
        try:
            client_module.Client(server.path).wait('spawn', timeout=60)
        except protocol.ControlError as exc:
            outcome.append(exc)
    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    # The wait has reached the engine once it arms the point.
    for _ in range(1000):
        if 'spawn' in engine.armed:
            break
        threading.Event().wait(0.01)
    assert 'spawn' in engine.armed
    server.stop()
    waiter.join(JOIN)
    assert not waiter.is_alive()
    [error] = outcome
    assert error.kind == protocol.STOPPED
    assert 'is stopping' in str(error)


def test_connections_beyond_the_cap_are_answered_busy(sock_dir, engine):
    server = serve(os.path.join(sock_dir, 'c.sock'), engine,
                   max_connections=2)
    held = [Connection(server.path) for _ in range(2)]
    try:
        for conn in held:                  # both served by now
            assert conn.ask(STATUS)['ok']
        with pytest.raises(protocol.Unreachable,
                           match='already serves 2 connections'):
            client_module.Client(server.path).status()
        assert all(conn.ask(STATUS)['ok'] for conn in held)
        held.pop().close()
        status = None
        for _ in range(1000):              # until the server saw it close
            try:
                status = client_module.Client(server.path).status()
                break
            except protocol.Unreachable:
                threading.Event().wait(0.01)
        assert status['host'] == 'h1'
    finally:
        for conn in held:
            conn.close()
        server.stop()


def test_idle_connection_is_closed(sock_dir, engine):
    server = serve(os.path.join(sock_dir, 'c.sock'), engine,
                   idle_timeout=0.2)
    conn = Connection(server.path)
    try:
        assert conn.ask(STATUS)['ok']
        assert conn.sock.recv(100) == b''        # closed by the server
    finally:
        conn.close()
        server.stop()


@pytest.mark.parametrize('mode, who', [(0o770, 'its group'),
                                       (0o777, 'everyone')])
def test_socket_directory_others_can_write_is_refused(sock_dir, engine,
                                                      mode, who):
    shared = os.path.join(sock_dir, 'shared')
    os.mkdir(shared)
    os.chmod(shared, mode)
    path = os.path.join(shared, 'c.sock')
    with pytest.raises(exception.ConfigError) as caught:
        serve(path, engine)
    assert str(caught.value) == (
        '[fault_injection] control_socket %s: directory %s is writable by '
        '%s (mode %o): they could replace the socket; use a directory only '
        "nova-compute's user can write" % (path, shared, who, mode))
    assert os.listdir(shared) == []


def test_socket_directory_through_a_symlink_is_warned_about(
        sock_dir, engine, caplog):
    real = os.path.join(sock_dir, 'real')
    os.mkdir(real, 0o700)
    link = os.path.join(sock_dir, 'link')
    os.symlink(real, link)
    with caplog.at_level(logging.WARNING):
        server = serve(os.path.join(link, 'c.sock'), engine)
    try:
        assert ('control_socket %s is reached through a symbolic link (%s '
                'is %s)' % (os.path.join(link, 'c.sock'), link, real)
                in caplog.text)
        assert client_module.Client(server.path).status()['host'] == 'h1'
    finally:
        server.stop()


# -- property: any request gets an answer that is not "internal" ------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10 ** 20, 10 ** 20) |
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
_ops = st.sampled_from(sorted(server_module.ops_module.Operations.ARGS) +
                       ['', 'statu', 'wait ']) | _json
_keys = st.sampled_from(['rule', 'index', 'name', 'point', 'count',
                         'phase', 'timeout', 'last', 'op']) | st.text(
                             max_size=5)
_requests = st.builds(
    lambda op, args: dict(args, op=op), _ops,
    st.dictionaries(_keys, _json | st.sampled_from(
        ['spawn', 'spawn: off', 'spawn: crash(0)', 'before']), max_size=3))


def _line(request):
    if request.get('op') == 'wait':
        request['timeout'] = 0         # a wait must not block the test
    return (json.dumps(request, allow_nan=True) + '\n').encode()


def test_any_request_is_answered_and_never_internal(sock_dir, engine):
    server = serve(os.path.join(sock_dir, 'c.sock'), engine)
    conn = Connection(server.path)

    @hypothesis.settings(max_examples=150, deadline=None, database=None,
                         derandomize=True)
    @hypothesis.given(st.lists(_requests, min_size=1, max_size=4))
    def check(requests):
        for request in requests:
            answer = conn.ask(_line(request))
            if not answer['ok']:
                assert answer['error']['kind'] in (
                    protocol.BAD_REQUEST, protocol.BAD_RULE,
                    protocol.TIMEOUT), answer
        assert conn.ask(STATUS)['ok']
    try:
        check()
    finally:
        conn.close()
        server.stop()
