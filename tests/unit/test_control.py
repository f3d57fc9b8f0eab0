"""The control socket: a real server and client over a real AF_UNIX
socket, on a real Engine (fake catalogue and actions, no Nova)."""

import json
import logging
import os
import select
import socket
import stat
import threading
import time

import pytest

from faultdriver.control import client as client_module
from faultdriver.control import listen
from faultdriver.control import ops as ops_module
from faultdriver.control import protocol
from faultdriver.control import server as server_module
from faultdriver import engine as engine_module
from faultdriver import exception
from tests.unit import fakes

JOIN = 10.0          # generous upper bound for a thread that should finish


def serve(path, engine):
    return server_module.ControlServer(path, engine, fakes.CATALOGUE,
                                       fakes.rule).start()


@pytest.fixture
def served(sock_dir, engine):
    """(server, client) for ``engine`` at ``<sock_dir>/c.sock``."""
    server = serve(os.path.join(sock_dir, 'c.sock'), engine)
    yield server, client_module.Client(server.path)
    server.stop()


def start(target, *args):
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def hit(engine, point='spawn'):
    return start(engine.hit, point, 'before', {})


# -- the socket file ------------------------------------------------------

def test_socket_is_0600_and_removed_on_stop(sock_dir, engine):
    path = os.path.join(sock_dir, 'c.sock')
    server = serve(path, engine)
    mode = os.lstat(path).st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600
    assert os.listdir(sock_dir) == ['c.sock']     # no temporary left
    server.stop()
    assert not os.path.exists(path)
    server.stop()                                 # idempotent


def test_stale_socket_is_replaced(sock_dir, engine, caplog):
    path = os.path.join(sock_dir, 'c.sock')
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(path)                               # as a crashed process
    dead.close()                                  # leaves it behind
    with caplog.at_level(logging.WARNING):
        server = serve(path, engine)
    try:
        assert 'removing stale control socket %s' % path in caplog.text
        assert client_module.Client(path).status()['host'] == 'h1'
    finally:
        server.stop()


def test_live_socket_is_refused_naming_its_owner(served, engine):
    server, client = served
    other = engine_module.Engine('h2', fakes.ACTIONS, [])
    with pytest.raises(listen.SocketInUse) as caught:
        serve(server.path, other)
    assert isinstance(caught.value, exception.ConfigError)
    assert ('control socket %s is in use by the faultdriver of host h1 '
            '(pid %d)' % (server.path, os.getpid())) in str(caught.value)
    assert client.status()['host'] == 'h1'        # the first one serves on


def test_socket_of_another_program_is_refused(sock_dir, engine):
    path = os.path.join(sock_dir, 'c.sock')
    other = socket.socket(socket.AF_UNIX)
    other.bind(path)
    other.listen()
    answer = start(lambda: other.accept()[0].close())
    try:
        with pytest.raises(listen.SocketInUse,
                           match='in use by another running process'):
            serve(path, engine)
    finally:
        answer.join(JOIN)
        other.close()
    assert stat.S_ISSOCK(os.lstat(path).st_mode)  # left alone


def test_regular_file_is_never_replaced(sock_dir, engine):
    path = os.path.join(sock_dir, 'c.sock')
    with open(path, 'w') as stream:
        stream.write('keep me')
    with pytest.raises(listen.SocketInUse, match='is not a socket'):
        serve(path, engine)
    with open(path) as stream:
        assert stream.read() == 'keep me'


def test_too_long_path_is_a_config_error(sock_dir, engine):
    path = os.path.join(sock_dir, 'x' * 120)
    with pytest.raises(exception.ConfigError, match='too long'):
        serve(path, engine)
    assert os.listdir(sock_dir) == []


def test_stop_leaves_a_socket_another_server_now_owns(sock_dir, engine):
    path = os.path.join(sock_dir, 'c.sock')
    first = serve(path, engine)
    os.unlink(path)                 # someone removed it; a new one started
    second = serve(path, engine_module.Engine('h2', fakes.ACTIONS, []))
    try:
        first.stop()
        assert client_module.Client(path).status()['host'] == 'h2'
    finally:
        second.stop()


# -- operations -----------------------------------------------------------

def test_status(served, engine):
    _server, client = served
    before = time.time()
    status = client.status()
    # The server's clock: a runner elsewhere measures its offset by it.
    assert before <= status.pop('time') <= time.time()
    assert status == {'host': 'h1', 'pid': os.getpid(), 'enabled': True,
                      'rules': 0, 'held': {}, 'journal': None,
                      'journal_error': None}


def test_status_carries_what_the_compute_adds(sock_dir, engine):
    facts = {'nodenames': ['n1'], 'rpc_started': True}
    server = server_module.ControlServer(
        os.path.join(sock_dir, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule, compute=ops_module.ComputeHooks(
            facts=lambda: dict(facts))).start()
    try:
        status = client_module.Client(server.path).status()
        facts['rpc_started'] = False
        later = client_module.Client(server.path).status()
    finally:
        server.stop()
    assert (status['host'], status['nodenames'], status['rpc_started'],
            later['rpc_started']) == ('h1', ['n1'], True, False)


def test_points_show_the_catalogue_and_what_is_armed(served, engine):
    _server, client = served
    client.add('destroy: off')
    points = {p['name']: p for p in client.points()}
    assert set(points) == set(fakes.CATALOGUE)
    assert points['destroy']['armed'] is True
    assert points['spawn']['armed'] is False
    assert points['pre_live_migration']['roles'] == ['dest']
    assert points['tracker.instance_claim']['tracker_lock'] is True


def test_add_rules_counters_remove_clear(served, engine):
    _server, client = served
    added = client.add('spawn:   2*record(a)')
    assert added == {'index': 0, 'rule': 'spawn: 2*record(a)',
                     'warnings': []}
    assert client.add('destroy.after: off')['index'] == 1
    seen = []
    for _ in range(3):
        engine.hit('spawn', 'before', {}, target=seen)
    assert seen == [('a', 0, 1, 1), ('a', 0, 2, 2)]     # the rule fires
    assert client.rules() == [
        {'index': 0, 'rule': 'spawn: 2*record(a)', 'hits': 3, 'fired': 2,
         'exhausted': True},
        {'index': 1, 'rule': 'destroy.after: off', 'hits': 0, 'fired': 0,
         'exhausted': False}]
    assert client.counters() == {'spawn.before': 3}
    assert client.remove(0) == {'index': 0}
    assert [r['index'] for r in client.rules()] == [1]
    assert engine.armed == {'destroy'}
    assert client.clear() == {'removed': 1}
    assert client.rules() == [] and engine.armed == set()


def test_add_warns_of_stalls_under_the_tracker_lock_and_when_disabled(
        served, engine):
    _server, client = served
    engine.set_enabled(False)
    warnings = client.add('tracker.instance_claim: hang(5)')['warnings']
    assert len(warnings) == 2
    assert 'resource tracker lock' in warnings[0]
    assert 'injection is disabled on h1' in warnings[1]


def test_bad_rule_is_refused_by_name_and_changes_nothing(served, engine):
    _server, client = served
    client.add('spawn: off')
    before = client.rules()
    for text, problem in [
            ('spwan: off', "unknown point 'spwan'; did you mean 'spawn'?"),
            ('spawn: hang(soon)', "action 'hang': argument timeout='soon'"),
            ('spawn: off ->', 'expected an action name'),
            ('live_migration@dest: off', 'runs only on the source host')]:
        with pytest.raises(protocol.RequestRejected) as caught:
            client.add(text)
        assert caught.value.kind == protocol.BAD_RULE
        assert 'rule ' in str(caught.value) and problem in str(caught.value)
    assert client.rules() == before
    assert engine.armed == {'spawn'}


def test_enable_and_disable(served, engine):
    _server, client = served
    client.add('spawn: record(x)')
    assert client.disable() == {'enabled': False}
    seen = []
    engine.hit('spawn', 'before', {}, target=seen)
    assert seen == [] and client.status()['enabled'] is False
    assert client.enable() == {'enabled': True}
    engine.hit('spawn', 'before', {}, target=seen)
    assert seen == [('x', 0, 1, 1)]


def test_journal_all_and_last(served, engine):
    _server, client = served
    client.add('spawn: log(one)')
    client.add('destroy: log(two)')
    engine.hit('spawn', 'before', {'instance': 'i-1'})
    engine.hit('destroy', 'before', {})
    entries = client.journal()
    assert [(e['point'], e['action'], e['instance']) for e in entries] == [
        ('spawn', 'log', 'i-1'), ('destroy', 'log', None)]
    assert client.journal(last=1) == entries[1:]
    assert client.journal(last=0) == []
    # More than the journal holds: all of it, whatever the excess.
    for last in (2, 3, 4, 100):
        assert client.journal(last=last) == entries, last


# -- holding, releasing, waiting ------------------------------------------

def test_control_answers_while_a_thread_is_held(served, engine):
    _server, client = served
    client.add('spawn: hang(60, b)')
    held = hit(engine)
    assert client.wait('spawn', timeout=JOIN) == 1
    # Every operation answers while the thread stays held.
    assert client.status()['held'] == {'b': 1}
    assert client.rules()[0]['fired'] == 1
    assert client.counters() == {'spawn.before': 1}
    assert client.journal()[0]['action'] == 'hang'
    assert client.add('destroy: off')['index'] == 1
    assert held.is_alive()
    assert client.release('other') == 0
    assert held.is_alive()
    assert client.release('b') == 1
    held.join(JOIN)
    assert not held.is_alive()
    assert client.status()['held'] == {}


def test_release_all(served, engine):
    _server, client = served
    client.add('spawn: hang(60, a)')
    client.add('destroy: hang(60, b)')
    threads = [hit(engine, 'spawn'), hit(engine, 'destroy')]
    client.wait('spawn', timeout=JOIN)
    client.wait('destroy', timeout=JOIN)
    assert client.status()['held'] == {'a': 1, 'b': 1}
    assert client.release() == 2
    for thread in threads:
        thread.join(JOIN)
        assert not thread.is_alive()


def test_wait_returns_on_a_hit_from_another_thread(served, engine):
    _server, client = served
    result = []
    waiter = start(lambda: result.append(
        client.wait('destroy', count=2, timeout=30)))
    # The wait arms the point; hits before that would not count.
    deadline = time.monotonic() + JOIN
    while 'destroy' not in engine.armed:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    engine.hit('destroy', 'before', {})
    assert waiter.is_alive()
    engine.hit('destroy', 'before', {})
    waiter.join(JOIN)
    assert result == [2]


def test_wait_times_out_cleanly(served, engine):
    _server, client = served
    begin = time.monotonic()
    with pytest.raises(protocol.WaitTimeout) as caught:
        client.wait('spawn', phase='after', timeout=0.3)
    assert time.monotonic() - begin < JOIN
    assert caught.value.kind == protocol.TIMEOUT
    assert str(caught.value) == ('point spawn.after on host h1 was hit 0 '
                                 'times, not 1, within 0.3s')
    assert client.status()['host'] == 'h1'        # serves on


def test_stop_ends_a_pending_wait(sock_dir, engine):
    server = serve(os.path.join(sock_dir, 'c.sock'), engine)
    client = client_module.Client(server.path)
    errors = []

    def wait():
        try:
            client.wait('spawn', timeout=60)
        except protocol.ControlError as exc:
            errors.append(exc)
    waiter = start(wait)
    # The wait arms the point once the server handles it.
    deadline = time.monotonic() + JOIN
    while 'spawn' not in engine.armed:
        assert time.monotonic() < deadline, 'the wait never reached the server'
        time.sleep(0.01)
    server.stop()
    waiter.join(JOIN)
    assert not waiter.is_alive()
    [error] = errors
    # 'stopped', never an internal error: stopping is not a failure.
    assert error.kind == protocol.STOPPED, error


# -- bad requests and the wire --------------------------------------------

@pytest.mark.parametrize('request_, message', [
    ({'op': 'rule'}, "unknown op 'rule'; did you mean 'rules'?"),
    ({}, 'unknown op None'),
    ({'op': 'add'}, "missing argument 'rule'"),
    ({'op': 'add', 'rule': 3}, "argument 'rule' must be str, not 3"),
    ({'op': 'remove', 'index': True}, "argument 'index' must be int"),
    ({'op': 'remove', 'index': 7}, 'no rule with index 7 on h1'),
    ({'op': 'wait', 'point': 'spwan'},
     "unknown point 'spwan'; did you mean 'spawn'?"),
    ({'op': 'wait', 'point': 'spawn', 'count': 0},
     "argument 'count' out of range: 0"),
    ({'op': 'wait', 'point': 'spawn', 'phase': 'during'},
     "argument 'phase' out of range: 'during'"),
    ({'op': 'journal', 'last': -1}, "argument 'last' out of range: -1"),
    ({'op': 'status', 'host': 'x'},
     "op 'status' takes no argument 'host'; it takes none"),
])
def test_bad_requests_are_structured_errors(served, request_, message):
    _server, client = served
    op = request_.pop('op', None)
    with pytest.raises(protocol.RequestRejected) as caught:
        client.request(op, **request_)
    assert caught.value.kind == protocol.BAD_REQUEST
    assert message in str(caught.value)
    assert client.status()['host'] == 'h1'


def talk(path, data):
    """Send raw bytes, half-close, read every answer line."""
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(JOIN)
    sock.connect(path)
    sock.sendall(data)
    sock.shutdown(socket.SHUT_WR)
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    sock.close()
    return [json.loads(line) for line in b''.join(chunks).splitlines()]


def test_several_requests_per_connection_in_order(served):
    server, _client = served
    answers = talk(server.path, b'{"op": "add", "rule": "spawn: off"}\n'
                                b'not json\n'
                                b'[1, 2]\n'
                                b'{"op": "rules"}\n')
    assert answers[0] == {'ok': True, 'result': {
        'index': 0, 'rule': 'spawn: off', 'warnings': []}}
    assert answers[1]['error']['kind'] == protocol.BAD_REQUEST
    assert 'not a JSON line' in answers[1]['error']['message']
    assert answers[2]['error']['message'] == ('expected a JSON object, '
                                              'got list')
    assert answers[3]['result'][0]['rule'] == 'spawn: off'


def test_oversized_request_is_refused(served):
    server, client = served
    big = b'{"op": "add", "rule": "' + b'x' * protocol.MAX_REQUEST + b'"}\n'
    [answer] = talk(server.path, big)
    assert answer['error']['kind'] == protocol.BAD_REQUEST
    assert 'longer than' in answer['error']['message']
    assert client.rules() == []


def test_internal_error_is_reported_and_the_server_goes_on(served, engine):
    server, client = served

    def broken():
        raise RuntimeError('boom')
    engine.counters = broken
    with pytest.raises(protocol.ControlError) as caught:
        client.counters()
    assert caught.value.kind == protocol.INTERNAL
    assert str(caught.value) == 'RuntimeError: boom'
    assert client.status()['host'] == 'h1'


def test_unreachable_socket(sock_dir):
    path = os.path.join(sock_dir, 'none.sock')
    with pytest.raises(protocol.Unreachable,
                       match='no faultdriver control server at %s' % path):
        client_module.Client(path).status()


def test_periodic_runs_once_per_request_and_answers_when_it_ended(
        sock_dir, engine):
    runs = []
    server = server_module.ControlServer(
        os.path.join(sock_dir, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule, compute=ops_module.ComputeHooks(
            periodic=lambda: runs.append(1))).start()
    try:
        result = client_module.Client(server.path).periodic(timeout=5)
    finally:
        server.stop()
    assert (runs, result['host'], result['error']) == ([1], 'h1', None)


def test_periodic_that_does_not_end_is_answered_timeout(sock_dir, engine):
    free = threading.Event()
    server = server_module.ControlServer(
        os.path.join(sock_dir, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule, compute=ops_module.ComputeHooks(
            periodic=lambda: free.wait(JOIN))).start()
    client = client_module.Client(server.path)
    try:
        with pytest.raises(protocol.WaitTimeout) as caught:
            client.periodic(timeout=0.2)
        assert client.status()['host'] == 'h1'        # serves on
    finally:
        free.set()
        server.stop()
    assert caught.value.kind == protocol.TIMEOUT
    assert str(caught.value) == (
        'the resource-tracker periodic on h1 did not end within 0.2s (is '
        'the tracker lock held, e.g. by a held thread?); it runs on and '
        'ends when it can')


def test_periodic_error_is_answered_and_logged(sock_dir, engine, caplog):
    def broken():
        raise RuntimeError('no node')
    server = server_module.ControlServer(
        os.path.join(sock_dir, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule,
        compute=ops_module.ComputeHooks(periodic=broken)).start()
    try:
        result = client_module.Client(server.path).periodic(timeout=5)
    finally:
        server.stop()
    assert result['error'] == 'RuntimeError: no node'
    assert 'faultdriver periodic on h1 (control request) failed' in \
        caplog.text


def test_periodic_without_a_compute_manager_is_refused(served):
    _server, client = served
    with pytest.raises(protocol.RequestRejected) as caught:
        client.periodic()
    assert 'runs outside a compute manager' in str(caught.value)


def test_a_server_that_dies_while_answering_is_a_control_error(sock_dir):
    """A nova-compute that crashes with a request in flight resets the
    connection: the client says so as a ControlError (``faultdriver ctl``
    exits 1 with a message), not a ConnectionResetError traceback."""
    path = os.path.join(sock_dir, 'dying.sock')
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def die_on_request():
        conn, _ = listener.accept()
        # Closed with the request unread, as the kernel closes a killed
        # process's sockets: the client's read gets a reset.
        select.select([conn], [], [], JOIN)
        conn.close()
    thread = start(die_on_request)
    try:
        with pytest.raises(protocol.ControlError,
                           match='closed the connection without answering'):
            client_module.Client(path).status()
    finally:
        thread.join(JOIN)
        listener.close()


# -- pinning and timer ------------------------------------------------------

def serve_compute(sock_dir, engine, **hooks):
    return server_module.ControlServer(
        os.path.join(sock_dir, 'c.sock'), engine, fakes.CATALOGUE,
        fakes.rule, compute=ops_module.ComputeHooks(**hooks)).start()


def test_pinning_reads_this_host_or_another(sock_dir, engine):
    records = {('h1', 'n1'): [3, 1], ('h1', 'n2'): [0], ('h2', 'h2'): []}
    asked = []

    def read(host, nodename):
        asked.append((host, nodename))
        found = {node: sorted(cpus) for (h, node), cpus in records.items()
                 if h == host and nodename in (None, node)}
        if not found:
            raise LookupError('Compute host %s could not be found.' % host)
        return found
    server = serve_compute(sock_dir, engine, pinning=read)
    client = client_module.Client(server.path)
    try:
        mine = client.pinning()
        other = client.pinning(host='h2')
        one = client.pinning(nodename='n2')
        with pytest.raises(protocol.RequestRejected) as caught:
            client.pinning(host='gone')
    finally:
        server.stop()
    assert mine == {'host': 'h1', 'nodes': {'n1': [1, 3], 'n2': [0]},
                    'pinned_cpus': [0, 1, 3]}
    assert other == {'host': 'h2', 'nodes': {'h2': []}, 'pinned_cpus': []}
    assert one['pinned_cpus'] == [0]
    assert str(caught.value) == ('no compute node record of host gone: '
                                 'Compute host gone could not be found.')
    assert asked == [('h1', None), ('h2', None), ('h1', 'n2'),
                     ('gone', None)]


@pytest.mark.parametrize('request_, message', [
    ({'host': 3}, "argument 'host' must be str, not 3"),
    ({'host': ''}, "argument 'host' out of range: ''"),
    ({'node': 'n1'}, "op 'pinning' takes no argument 'node'"),
])
def test_pinning_bad_arguments_are_refused(sock_dir, engine, request_,
                                           message):
    server = serve_compute(sock_dir, engine,
                           pinning=lambda host, nodename: {})
    try:
        with pytest.raises(protocol.RequestRejected) as caught:
            client_module.Client(server.path).request('pinning', **request_)
    finally:
        server.stop()
    assert str(caught.value).startswith(message)


def test_timer_is_shown_and_switched_and_the_switch_is_logged(
        sock_dir, engine, caplog):
    state = {'on': True, 'interval': 2}

    def switch(on):
        if on is not None:
            state['on'] = on
        return dict(state)
    server = serve_compute(sock_dir, engine, timer=switch)
    client = client_module.Client(server.path)
    try:
        with caplog.at_level(logging.WARNING):
            shown = client.timer()
            assert 'faultdriver control of h1' not in caplog.text
            off = client.timer(False)
            assert "'op': 'timer'" in caplog.text     # a change: logged
            shown_off = client.timer()
            on = client.timer(True)
    finally:
        server.stop()
    assert [shown, off, shown_off, on] == [
        {'host': 'h1', 'on': True, 'interval': 2},
        {'host': 'h1', 'on': False, 'interval': 2},
        {'host': 'h1', 'on': False, 'interval': 2},
        {'host': 'h1', 'on': True, 'interval': 2}]


def test_timer_that_cannot_go_on_is_refused(sock_dir, engine):
    def switch(on):
        raise ValueError('update_resources_interval was negative')
    server = serve_compute(sock_dir, engine, timer=switch)
    try:
        with pytest.raises(protocol.RequestRejected) as caught:
            client_module.Client(server.path).timer(True)
        with pytest.raises(protocol.RequestRejected) as wrong:
            client_module.Client(server.path).request('timer', on='yes')
    finally:
        server.stop()
    assert str(caught.value) == (
        'the resource periodic of h1 cannot go on its timer: '
        'update_resources_interval was negative')
    assert str(wrong.value) == "argument 'on' must be bool, not 'yes'"


@pytest.mark.parametrize('op, what', [
    ('timer', 'timer to switch'),
    ('pinning', 'compute node records to read')])
def test_compute_ops_without_a_compute_manager_are_refused(served, op,
                                                           what):
    _server, client = served
    with pytest.raises(protocol.RequestRejected) as caught:
        client.request(op)
    assert str(caught.value) == ('FaultDriver on h1 runs outside a compute '
                                 'manager: it has no %s' % what)
